"""Reference observations (per-epoch phase seconds of known configurations) and the cost model's raw phases
for the same configurations, vectorized; what the fit minimizes and the validation compares. No scipy here: the
validation and the CLI import this without paying for the optimizer."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..costmodel import COEFFICIENT_DEFAULTS, HardwareInputs, evaluate, workload_inputs
from ..phases import PHASES
from ..specs import Workload
from .result import coefficients_for

MIN_SHARE = 0.01
"""Phases below this share of a point's epoch are neither fitted nor compared (their error says nothing about
the epoch)."""
@dataclass(frozen=True)
class Observation:
    """A reference measurement of one configuration: per-epoch seconds per phase (breakdown phases, launch
    from the wall view), e.g. from the emulator's trace."""

    workload: Workload
    reference_s: Mapping[str, float]
    tag: str = ""
    stats: Mapping[str, float] = field(default_factory=dict)
    """Dataset/run statistics kept for provenance (density, measured mean operand bytes, ...)."""


def model_phases(observations: Sequence[Observation], hw_values: Mapping[str, float],
                 coefficients: Mapping[str, float] | Callable[[Workload], Mapping[str, float]],
                 outputs: Sequence[str] = PHASES) -> list[dict[str, float]]:
    """The cost model's raw per-epoch phases (compute and DMA summed, as the breakdown view) for each
    observation, one vectorized call per optimizer x model x layout. ``coefficients`` are at full density
    (a mapping, or a function of the workload); each observation's density is applied here. ``outputs``: which
    raw outputs (``EquationSet.phase_expressions`` keys, e.g. also ``mram_wram_dma_exposed``)."""
    coef_of = coefficients if callable(coefficients) else (lambda _w: coefficients)
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, ob in enumerate(observations):
        w = ob.workload
        groups[(w.optimizer, w.model, w.dataset.layout)].append(i)
    out: list[dict[str, float]] = [{} for _ in observations]
    hw = HardwareInputs(hw_values)
    for idx in groups.values():
        ws = [observations[i].workload for i in idx]
        per_point = [{**workload_inputs(w), **coefficients_for(w, coef_of(w))} for w in ws]
        inputs = {k: np.array([pp[k] for pp in per_point], dtype=float) for k in per_point[0]}
        coefficients_in = {k: inputs.pop(k) for k in COEFFICIENT_DEFAULTS}
        raw = evaluate(ws[0], hw, coefficients_in, workload=inputs)
        for j, i in enumerate(idx):
            out[i] = {p: float(np.asarray(raw[p])[j]) for p in outputs}
    return out


def relative_errors(observations: Sequence[Observation], predicted: Sequence[Mapping[str, float]],
                    phases: Sequence[str] = PHASES, min_share: float = 0.0) -> dict[str, np.ndarray]:
    """Per phase: signed relative errors over the observations whose reference phase is at least
    ``min_share`` of that observation's epoch total (others are left out)."""
    out: dict[str, list[float]] = {p: [] for p in phases}
    for ob, pred in zip(observations, predicted, strict=True):
        total = sum(ob.reference_s[p] for p in PHASES)
        for p in phases:
            ref = ob.reference_s[p]
            if ref > 0 and ref >= min_share * total:
                out[p].append(pred[p] / ref - 1.0)
    return {p: np.asarray(v) for p, v in out.items()}
