"""Predictions: one workload on one hardware spec, in one of the two views (``pimmodel.phases``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..phases import BYTE_KEYS, PHASES, bottleneck, check_view, in_view
from ..report.records import dataframe
from ..specs import HardwareSpec, Workload
from ..specs.architectures import architecture_of, resolve
from ..version import environment
from .evaluate import evaluate_point, family_pricing


@dataclass(frozen=True, slots=True)
class Prediction:
    """Per-epoch phase times of one workload on one hardware spec."""

    hardware: str
    workload: Workload
    view: str
    per_epoch_s: Mapping[str, float]
    per_epoch_bytes: Mapping[str, float]
    rounds_per_epoch: int
    calibration: str = "explicit coefficients"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def per_epoch_total_s(self) -> float:
        return float(sum(self.per_epoch_s[p] for p in PHASES))

    @property
    def total_s(self) -> float:
        return self.per_epoch_total_s * self.workload.epochs

    @property
    def bottleneck(self) -> str:
        return bottleneck(self.per_epoch_s)

    def to_record(self) -> dict[str, Any]:
        w = self.workload
        return {
            "hardware": self.hardware, "dataset": w.dataset.name, "model": w.model, "optimizer": w.optimizer,
            "dpus": w.dpus, "tasklets": w.tasklets, "scaling": w.scaling, "epochs": w.epochs, "view": self.view,
            "batch_size": w.local_batch if w.info.batch == "local" else w.hp.global_batch_size,
            "sync_every": w.sync_every,
            "rows_per_dpu": w.rows_per_dpu, "rounds_per_epoch": self.rounds_per_epoch,
            "per_epoch_s": {**{p: float(self.per_epoch_s[p]) for p in PHASES}, "total": self.per_epoch_total_s},
            "per_epoch_bytes": {k: float(self.per_epoch_bytes[k]) for k in BYTE_KEYS},
            "total_s": self.total_s, "bottleneck": self.bottleneck, "calibration": self.calibration,
            "kernels": w.kernels, "chosen": list(w.notes),
            **dict(self.extra),
        }

    def to_dataframe(self) -> Any:
        """This prediction as a one-row pandas DataFrame: the record's columns, nested ones dotted
        (``per_epoch_s.dpu_compute``). pandas is optional: without it, a one-line error says what to install."""
        return to_dataframe([self])


def to_dataframe(predictions: Iterable[Prediction | Mapping[str, Any]]) -> Any:
    """Several predictions (or their records, e.g. the ``points`` of ``pimmodel predict --json``) as a pandas
    DataFrame, one row each, with the columns of ``Prediction.to_dataframe``; its ``attrs["provenance"]`` names
    the version (git commit, dirty flag), the libraries, the command line and the records' hardware and
    calibration (``pimmodel.provenance`` adds their hashes)."""
    records = [p.to_record() if isinstance(p, Prediction) else p for p in predictions]
    used = {key: sorted({str(r.get(key)) for r in records}) for key in ("hardware", "calibration")}
    return dataframe(records, attrs={"provenance": {**environment(), **{k: v[0] if len(v) == 1 else v
                                                                         for k, v in used.items()}}})


def predict(w: Workload, hw: HardwareSpec, coefficients: Mapping[str, float], view: str = "wall",
            calibration: str = "explicit coefficients", check_capacity: bool = True) -> Prediction:
    """Predict one workload on one hardware spec (capacity-checked) with the given coefficients;
    ``calibration`` names where they came from in the record."""
    check_view(view)
    seen = _CHECKED.get((id(w), id(hw)))
    if check_capacity and (seen is None or seen[0] is not w or seen[1] is not hw):
        capacity_check(hw)(w, hw)  # a refusal raises every time: only a passed check is remembered
        if len(_CHECKED) > 256:
            _CHECKED.clear()
        _CHECKED[(id(w), id(hw))] = (w, hw)
    raw = evaluate_point(w, hw, coefficients)
    phases = in_view(raw, view)
    pricing = family_pricing(hw)
    return Prediction(
        hardware=hw.name, workload=w, view=view,
        per_epoch_s={p: float(v) for p, v in phases.items()},
        per_epoch_bytes={k: float(raw[f"bytes_{k}"]) for k in BYTE_KEYS},
        rounds_per_epoch=int(round(raw["rounds"])), calibration=calibration,
        extra={} if pricing is None else pricing.record_extra(w, hw),
    )



_CHECKED: dict[tuple[int, int], tuple[Workload, HardwareSpec]] = {}
"""(workload, hardware) pairs that passed ``capacity.check``, by identity (the objects are kept, so an id is not
reused while its entry holds it)."""


def capacity_check(hw: Any) -> Any:
    """The capacity check of ``hw``'s architecture family (``specs.architectures``)."""
    return resolve(architecture_of(hw).capacity)
