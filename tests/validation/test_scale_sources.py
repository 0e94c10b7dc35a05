"""The hardware group's upmem-scale test sources (memclave-prim.csv, vpim-prim-native.csv): which rows the kernel
model can express, the kernel-time error and the interval's coverage on them, recomputed here from the rows."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np
import pytest

from pimmodel.calibration.kernel_interval import read_residuals
from pimmodel.calibration.measurements import predict_point
from pimmodel.specs import load_hardware
from pimmodel.validation.hardware import scale_test_section
from pimmodel.validation.prim_scale import load_prim_runs, shape_of


@cache
def _section() -> tuple[list[Any], dict[str, Any]]:
    return scale_test_section(load_hardware("upmem-2556"))


def test_every_row_is_priced_or_says_why_not() -> None:
    runs = load_prim_runs()
    assert len(runs) == 96 + 37  # every row of both files, none dropped
    assert all(r.expressible == (r.why_not == "") for r in runs)
    assert sum(r.expressible for r in runs) == 73
    why = {r.why_not for r in runs if not r.expressible}
    assert any("BFS has no description" in w for w in why)
    assert any("not printed" in w for w in why)
    assert any("-O0 with BL = 8" in w for w in why)


def test_shapes_read_off_the_logs() -> None:
    assert shape_of("TRNS", "", "M_=12288, m=16, N_=64, n=8") == (12288, {"rows": 16, "blocks": 64, "cols": 8}, "")
    assert shape_of("GEMV", "", "m=8192 rows x n=1024 cols uint32") == (8192, {"cols": 1024}, "")
    assert shape_of("TS", "", "n=524,288, query m=256 (PrIM default)") == (524288, {"query_length": 256}, "")
    assert shape_of("BS", "", "2,048,576-element int64 array, 262,144 queries") == (2048576, {"queries": 262144}, "")
    assert shape_of("TRNS", "3221225472", "total elements")[2].startswith("only TRNS's total")


def test_errors_and_coverage_recomputed_from_the_rows() -> None:
    hw = load_hardware("upmem-2556")
    res = read_residuals()
    r = np.sort(np.abs(res.log_residuals))
    h = float(r[math.ceil((r.size + 1) * 0.95) - 1])
    _, detail = _section()
    priced = [p for p in detail["points"] if p["expressible"] and p["source"] != "upimulator-test"]
    inside = 0
    for p in priced:
        predicted = predict_point(p["kernel"], p["dpus"], p["size"], hw, **p["shape"])["kernel_ms"]
        assert p["error_pct"] == pytest.approx(100 * (predicted / p["measured_kernel_ms"] - 1))
        widen = h * (1 + res.growth_per_doubling * p["outside_doublings"])
        inside += predicted * math.exp(-widen) <= p["measured_kernel_ms"] <= predicted * math.exp(widen)
    summary = detail["sources"]["upmem-scale"]
    assert summary["inside"] == inside and summary["expressible"] == len(priced) == 73
    assert summary["kernel_mape"] == pytest.approx(np.mean([abs(p["error_pct"]) for p in priced]))


def test_targets_as_measured() -> None:
    """The issue's goals on the shipped spec (values recorded in notes and validation/README.md): kernel time
    within 8 % at every DPU count is missed (worst DPU count 19.6 % MAPE, from MLP with m != n and BS with more
    queries than elements); the intervals cover 69 of 73 points (94.5 %) with a median half-width of 24.6 %."""
    targets, detail = _section()
    kernel_time, coverage, width = [t for t in targets if t.kernel == "upmem-scale"]
    assert not kernel_time.met and kernel_time.value == pytest.approx(19.6, abs=0.1)
    assert coverage.met and coverage.value == pytest.approx(100 * 4 / 73)
    assert width.met
    held_cover, held_width = [t for t in targets if t.kernel == "held-out"]
    # with uPIMulator's test kernels (45 of 51 inside: VA's smallest points miss): 114 of 124
    assert held_cover.met and held_cover.value == pytest.approx(100 * 10 / 124) and held_width.met
    assert detail["sources"]["upmem-scale"]["inside"] == 69
    assert detail["sources"]["upmem-scale"]["median_half_width"] == pytest.approx(24.6, abs=0.1)
