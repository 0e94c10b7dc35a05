"""Emulator runs as reference observations for the fit, and the model-vs-emulator error summary.

A run's reference is its mean epoch's raw phases (``emulator.timing.raw_seconds``: compute and DMA summed,
each the busiest DPU's, launches included), exactly the cost model's raw outputs; the DMA not hidden behind
compute (``mram_wram_dma_exposed``) is kept too, for the hold-out comparison of the wall view.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from functools import lru_cache
from typing import Any

import numpy as np

from ..atomic import WriteError, write_text
from ..emulator.config import Options, train_config
from ..emulator.timing import raw_seconds
from ..emulator.trace import merge
from ..emulator.trainers import train
from ..phases import EXPOSED_DMA, PHASES
from ..resources import cache_dir, source_digest
from ..specs import HardwareSpec
from .design import DesignPoint, EmulatorSettings, shards
from .observations import MIN_SHARE, Observation, model_phases, relative_errors

Progress = Callable[[DesignPoint], None]


def _trace_stats(trace: Any, point: DesignPoint) -> dict[str, float]:
    """Measured data-dependent quantities (what the coefficients stand for), for provenance."""
    events = trace.events
    stats: dict[str, float] = {}
    samples = float(np.max(events.get("samples", 0.0)))
    if samples and "margin_hits" in events and point.model == "svm":
        stats["svm_hit_fraction"] = float(np.mean(events["margin_hits"])) / (samples / 1.0)
    if "acc_writes" in events:
        total = float(np.sum(events["acc_writes"]) + np.sum(events.get("acc_skipped", 0.0)))
        if total:
            stats["acc_write_fraction"] = float(np.sum(events["acc_writes"])) / total
    return stats


def emulate(point: DesignPoint, hw: HardwareSpec, settings: EmulatorSettings = EmulatorSettings()) -> Observation:
    """Run the emulator on one design point; its mean epoch's raw phases are the reference."""
    workload = replace(point.workload(settings.epochs), tasklets=settings.tasklets)
    cfg = train_config(workload, Options(arithmetic=settings.arithmetic), hw)
    trace = merge(train(shards(point), cfg).traces)
    raw = raw_seconds(trace, hw)
    reference = {p: raw[p] / settings.epochs for p in (*PHASES, EXPOSED_DMA)}
    stats = {**_trace_stats(trace, point), "density": point.density if point.layout == "dense"
             else 39 / point.features}
    return Observation(point.workload(), reference, point.name, stats)


_EMULATOR_SOURCES = ("emulator/*.py", "kernels/*.py", "primitives.py", "phases.py", "specs/*.py",
                     "calibration/design.py", "calibration/compare.py")
"""Every source file whose change can change an emulation's phases (globs relative to the package)."""


@lru_cache(maxsize=1)
def emulator_source_key() -> str:
    return source_digest(_EMULATOR_SOURCES)


def emulate_cached(point: DesignPoint, hw: HardwareSpec, settings: EmulatorSettings = EmulatorSettings()
                   ) -> Observation:
    """``emulate``, its result kept on disk (``cache_dir("emulations")``) under a key of the emulator's source
    files, the point, the hardware's numbers and the settings: an unchanged emulator is never re-run on the same
    point (``pimmodel validate``'s consistency group), a changed one always is. Deleting the cache costs time."""
    key = json.dumps([emulator_source_key(), asdict(point), hw.name, sorted(hw.numeric().items()),
                      asdict(settings)], sort_keys=True, default=str)
    path = cache_dir("emulations") / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        return Observation(point.workload(), stored["reference_s"], point.name, stored["stats"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    ob = emulate(point, hw, settings)
    with contextlib.suppress(OSError, WriteError):  # a read-only cache only costs time
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps({"reference_s": dict(ob.reference_s), "stats": dict(ob.stats)}))
    return ob


def observe(points: Sequence[DesignPoint], hw: HardwareSpec, settings: EmulatorSettings = EmulatorSettings(),
            progress: Progress | None = None) -> list[Observation]:
    out = []
    for p in points:
        out.append(emulate(p, hw, settings))
        if progress is not None:
            progress(p)
    return out


def phase_error_summary(observations: Sequence[Observation], hw: HardwareSpec,
                        coefficients: Callable[[Any], dict[str, float]] | dict[str, float],
                        min_share: float = MIN_SHARE) -> dict[str, dict[str, float]]:
    """Per phase: mean |relative error|, max |relative error|, root-mean-square error and count over the observations
    (``coefficients``: at full density, or a function of the workload)."""
    pred = model_phases(observations, hw.numeric(), coefficients)
    errs = {p: list(np.abs(v)) for p, v in relative_errors(observations, pred, PHASES, min_share).items()}
    return {p: {"mean_abs": float(np.mean(v)) if v else 0.0, "max_abs": float(np.max(v)) if v else 0.0,
                "rms": float(np.sqrt(np.mean(np.square(v)))) if v else 0.0, "count": len(v)}
            for p, v in errs.items()}
