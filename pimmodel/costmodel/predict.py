"""Predictions: evaluate the compiled equations for a workload on a hardware spec, in one of two views.

- ``wall``: kernel wall time as production runs see it: DMA overlaps compute across tasklets (only the
  DMA time not hidden behind compute is charged to ``mram_wram_dma``), launches included.
- ``breakdown``: the study's instrumented accounting (its Figs. 2/4/9): compute and DMA summed, launch
  overhead excluded (``launch`` = 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import unknown
from ..specs import HardwareSpec, Workload
from ..specs.capacity import check
from .coefficients import COEFFICIENT_DEFAULTS
from .compile import compiled

PHASES = ("dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host", "host_aggregate", "launch")
BYTE_KEYS = ("host_to_pim", "pim_to_host", "mram_to_wram", "wram_to_mram")
VIEWS = ("wall", "breakdown")


@dataclass(frozen=True, slots=True)
class Prediction:
    """Per-epoch phase times of one workload on one hardware spec."""

    hardware: str
    workload: Workload
    view: str
    per_epoch_s: Mapping[str, float]
    per_epoch_bytes: Mapping[str, float]
    rounds_per_epoch: int
    calibration: str = "defaults"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def per_epoch_total_s(self) -> float:
        return float(sum(self.per_epoch_s[p] for p in PHASES))

    @property
    def total_s(self) -> float:
        return self.per_epoch_total_s * self.workload.epochs

    @property
    def bottleneck(self) -> str:
        return max(PHASES, key=lambda p: self.per_epoch_s[p])

    def to_record(self) -> dict[str, Any]:
        w = self.workload
        return {
            "hardware": self.hardware, "dataset": w.dataset.name, "model": w.model, "optimizer": w.optimizer,
            "dpus": w.dpus, "tasklets": w.tasklets, "scaling": w.scaling, "epochs": w.epochs, "view": self.view,
            "batch_size": w.local_batch if w.optimizer != "ga-sgd" else w.hp.global_batch_size,
            "rows_per_dpu": w.rows_per_dpu, "rounds_per_epoch": self.rounds_per_epoch,
            "per_epoch_s": {**{p: float(self.per_epoch_s[p]) for p in PHASES}, "total": self.per_epoch_total_s},
            "per_epoch_bytes": {k: float(self.per_epoch_bytes[k]) for k in BYTE_KEYS},
            "total_s": self.total_s, "bottleneck": self.bottleneck, "calibration": self.calibration,
            **dict(self.extra),
        }


def workload_inputs(w: Workload) -> dict[str, float]:
    """The workload symbols' values."""
    return {"dpus": w.dpus, "tasklets": w.tasklets, "rows_per_dpu": w.rows_per_dpu,
            "local_batch": w.local_batch, "features": w.dataset.features,
            "nonzeros": w.dataset.nonzeros_per_row, "bytes_per_value": w.dataset.bytes_per_value,
            "bias_slot": w.dataset.bias_slot}


def evaluate(w: Workload, hw_values: Mapping[str, Any], coefficients: Mapping[str, Any] | None = None,
             overrides: Mapping[str, Any] | None = None, topology: str = "none") -> dict[str, np.ndarray]:
    """Raw compiled outputs for ``w`` (averaging over ``topology`` links); any input may be an array."""
    model = compiled(w.optimizer, w.model, w.dataset.layout, topology)
    values = {**hw_values, **COEFFICIENT_DEFAULTS, **(coefficients or {}), **workload_inputs(w),
              **(overrides or {})}
    return model(values)


def phases_for_view(raw: Mapping[str, np.ndarray], view: str) -> dict[str, np.ndarray]:
    """Per-epoch phase seconds in ``view`` from the raw compiled outputs."""
    if view not in VIEWS:
        raise unknown("view", view, VIEWS)
    out = {p: raw[p] for p in PHASES}
    if view == "wall":
        out["mram_wram_dma"] = raw["mram_wram_dma_exposed"]
    else:
        out["launch"] = np.zeros_like(raw["launch"])
    return out


def predict(w: Workload, hw: HardwareSpec, view: str = "wall", coefficients: Mapping[str, float] | None = None,
            calibration: str | None = None, check_capacity: bool = True) -> Prediction:
    """Predict one workload on one hardware spec (capacity-checked).

    Coefficients come from ``calibration``: None = the calibration shipped in the package, ``"defaults"`` =
    the unfitted ``COEFFICIENT_DEFAULTS``, else a file written by ``pimmodel calibrate``. Explicit
    ``coefficients`` override it (the record then names ``calibration`` or "explicit coefficients")."""
    if view not in VIEWS:
        raise unknown("view", view, VIEWS)
    if check_capacity:
        check(w, hw)
    if coefficients is None:
        from ..calibration.result import load_calibration

        cal = load_calibration(calibration)
        coefficients, calibration = cal.coefficients_for(w), cal.label
    elif calibration is None:
        calibration = "explicit coefficients"
    raw = evaluate(w, hw.numeric(), coefficients, topology=hw.link_topology)
    phases = phases_for_view(raw, view)
    return Prediction(
        hardware=hw.name, workload=w, view=view,
        per_epoch_s={p: float(v) for p, v in phases.items()},
        per_epoch_bytes={k: float(raw[f"bytes_{k}"]) for k in BYTE_KEYS},
        rounds_per_epoch=int(round(float(raw["rounds"]))), calibration=calibration,
    )


def predict_many(workloads: Sequence[Workload], hw: HardwareSpec, view: str = "wall",
                 coefficients: Mapping[str, float] | None = None, calibration: str | None = None) -> list[Prediction]:
    return [predict(w, hw, view, coefficients, calibration) for w in workloads]
