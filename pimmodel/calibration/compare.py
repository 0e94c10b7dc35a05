"""Emulator runs as reference observations, and the model-vs-emulator comparison on hold-out points.

A run's reference is its mean epoch: ``Trace.seconds(hw, "breakdown")`` (compute and DMA summed, each the
busiest DPU's) with ``launch`` from the wall view, exactly the cost model's raw phases. The hold-out
comparison also checks the wall view's ``mram_wram_dma`` (the DMA not hidden behind compute within a parallel
section) as the phase ``mram_wram_dma_exposed``, against the model's output of that name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..costmodel.predict import PHASES
from ..specs import HardwareSpec
from .design import DesignPoint, EmulatorSettings, shards
from .fit import Observation, model_phases

Progress = Callable[[DesignPoint], None]
HOLDOUT_SHARE = 0.01
"""Phases below this share of the epoch are not compared (their error says nothing about the total)."""
HOLDOUT_TOLERANCE = 0.05
EXPOSED_DMA = "mram_wram_dma_exposed"
"""The wall view's ``mram_wram_dma`` (``EquationSet.phase_expressions`` output of this name)."""


def _trace_stats(trace: Any, point: DesignPoint) -> dict[str, float]:
    """Measured data-dependent quantities (what the coefficients stand for), for provenance."""
    ops, events = trace.ops, trace.events
    stats: dict[str, float] = {}
    mul = float(np.max(ops["mul64"])) if "mul64" in ops else 0.0
    if mul:
        stats["mean_mul64_bytes"] = float(np.max(ops.get("mul64_bytes", 0.0))) / mul
    samples = float(np.max(events.get("samples", 0.0)))
    if samples and "margin_hits" in events and point.model == "svm":
        stats["svm_hit_fraction"] = float(np.mean(events["margin_hits"])) / (samples / 1.0)
    if "acc_writes" in events:
        total = float(np.sum(events["acc_writes"]) + np.sum(events.get("acc_skipped", 0.0)))
        if total:
            stats["acc_write_fraction"] = float(np.sum(events["acc_writes"])) / total
    return stats


def emulate(point: DesignPoint, hw: HardwareSpec, settings: EmulatorSettings = EmulatorSettings()) -> Observation:
    """Run the emulator on one design point; its mean epoch is the reference."""
    return _emulate(point, hw, settings)[0]


def _emulate(point: DesignPoint, hw: HardwareSpec, settings: EmulatorSettings) -> tuple[Observation, dict[str, float]]:
    """The observation and the mean epoch's wall-view phase seconds (with ``total``)."""
    from ..emulator.trace import merge
    from ..emulator.trainers import TrainConfig, train

    hp = point.hyper()
    cfg = TrainConfig(model=point.model, optimizer=point.optimizer, batch_size=hp.batch_size,
                      global_batch_size=hp.global_batch_size, learning_rate_shift=hp.learning_rate_shift,
                      reg_shift=hp.reg_shift, alpha_shift=hp.admm_alpha_shift, epochs=settings.epochs,
                      arithmetic=settings.arithmetic, tasklets=settings.tasklets)
    data = shards(point)
    run = train(data, cfg)
    trace = merge(run.traces)
    e = settings.epochs
    breakdown = trace.seconds(hw, "breakdown")
    wall = {p: s / e for p, s in trace.seconds(hw, "wall").items()}
    reference = {p: breakdown[p] / e for p in PHASES}
    reference["launch"] = wall["launch"]
    stats = {**_trace_stats(trace, point), "density": point.density if point.layout == "dense"
             else 39 / point.features}
    return Observation(point.workload(), reference, point.name, stats), wall


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
                        min_share: float = HOLDOUT_SHARE) -> dict[str, dict[str, float]]:
    """Per phase: mean |relative error|, max |relative error|, root-mean-square error and count over the observations
    (``coefficients``: at full density, or a function of the workload)."""
    from .fit import relative_errors

    pred = model_phases(observations, hw.numeric(), coefficients)
    errs = {p: list(np.abs(v)) for p, v in relative_errors(observations, pred, PHASES, min_share).items()}
    return {p: {"mean_abs": float(np.mean(v)) if v else 0.0, "max_abs": float(np.max(v)) if v else 0.0,
                "rms": float(np.sqrt(np.mean(np.square(v)))) if v else 0.0, "count": len(v)}
            for p, v in errs.items()}


def holdout_points() -> list[DesignPoint]:
    from ..validation import _data

    return [DesignPoint.from_mapping(p) for p in _data("emulator.toml").get("point", [])]


def holdout_cases(hw: HardwareSpec, calibration: str | None = None) -> list[Any]:
    """Validation cases: cost model vs emulator, per phase >= 1 % of the epoch, 5 % tolerance; the raw
    (breakdown) phases with launch, and the wall view's exposed DMA (a share of the wall-view epoch)."""
    from ..validation import Case
    from .result import load_calibration

    cal = load_calibration(calibration)
    cases = []
    for point in holdout_points():
        ob, wall = _emulate(point, hw, EmulatorSettings())
        pred = model_phases([ob], hw.numeric(), cal.fitted_for, outputs=(*PHASES, EXPOSED_DMA))[0]
        total = sum(ob.reference_s[p] for p in PHASES)
        compared = [(p, ob.reference_s[p], total) for p in PHASES]
        compared.append((EXPOSED_DMA, wall["mram_wram_dma"], wall["total"]))
        for p, ref, epoch in compared:
            if ref <= 0 or ref < HOLDOUT_SHARE * epoch:
                continue
            cases.append(Case("emulator", point.name, p, ref, pred[p], HOLDOUT_TOLERANCE, unit="s",
                              source="pimmodel emulator (mean of 2 epochs)"))
    return cases
