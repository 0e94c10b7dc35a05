"""``validate``'s consistency group reads an emulation from disk only when the emulator's sources, the point, the
hardware's numbers and the settings are the ones it was run with: the cached cases equal freshly emulated ones,
and a change of any of those re-runs the emulator."""

from __future__ import annotations

import pytest

import pimmodel.calibration.compare as compare
from pimmodel.calibration.result import load_calibration
from pimmodel.specs import load_hardware
from pimmodel.validation.consistency import consistency_cases, holdout_points


def test_cached_cases_equal_fresh_ones_and_any_change_reruns(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path))
    hw, cal, points = load_hardware("upmem-2556"), load_calibration(None), holdout_points()[:1]
    runs = []
    real = compare.emulate
    monkeypatch.setattr(compare, "emulate", lambda *a, **k: runs.append(1) or real(*a, **k))
    fresh = consistency_cases(hw, cal, points)
    first = consistency_cases(hw, cal, points, cached=True)
    again = consistency_cases(hw, cal, points, cached=True)
    assert len(runs) == 1  # the cache's first fill (the uncached call emulates directly); the third read the file
    assert [(c.name, c.phase, c.reference, c.predicted) for c in again] == \
        [(c.name, c.phase, c.reference, c.predicted) for c in fresh] == \
        [(c.name, c.phase, c.reference, c.predicted) for c in first]
    consistency_cases(hw.replace(dpu_clock_hz=hw.dpu_clock_hz * 0.5), cal, points, cached=True)
    assert len(runs) == 2  # other hardware numbers: emulated again
    compare.emulator_source_key.cache_clear()
    monkeypatch.setattr(compare, "_EMULATOR_SOURCES", (*compare._EMULATOR_SOURCES, "costmodel/*.py"))
    consistency_cases(hw, cal, points, cached=True)
    compare.emulator_source_key.cache_clear()
    assert len(runs) == 3  # other sources (another key): emulated again
