"""A training run as a timeline: the metric after each epoch (``accuracy.Curve``) at the predicted time per epoch,
so "reaches X at T s". Time is per-epoch time x epochs, as the study's time-to-accuracy figures count it (data
loading and evaluation left out on every platform)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..baselines.workload import optimizer_label
from .accuracy import Curve, TrainingJob

PLATFORM_LABELS = {"pim": "PIM", "cpu": "CPU", "gpu": "GPU"}


@dataclass(frozen=True)
class Run:
    """One platform's training job: its predicted time per epoch and its metric per epoch."""

    platform: str
    optimizer: str
    epoch_s: float
    curve: Curve
    job: TrainingJob
    time_model: Mapping[str, Any] = field(default_factory=dict)
    """what the time rests on: the prediction record's essentials (spec, bottleneck, validated or not)."""

    @property
    def label(self) -> str:
        name = optimizer_label("sgd" if self.platform == "gpu" else self.optimizer)
        return f"{PLATFORM_LABELS[self.platform]} {name}"

    @property
    def epochs(self) -> int:
        return len(self.curve.per_epoch)

    @property
    def total_s(self) -> float:
        return self.epoch_s * self.epochs

    def times_s(self) -> list[float]:
        """Elapsed time at the end of each epoch."""
        return [self.epoch_s * (k + 1) for k in range(self.epochs)]

    def time_to(self, target: float) -> float | None:
        """Seconds until the metric first reaches ``target`` (at an epoch's end), or None within the epochs run."""
        k = self.curve.epochs_to(target)
        return None if k is None else k * self.epoch_s

    def reaches(self, target: float) -> str:
        t, k = self.time_to(target), self.curve.epochs_to(target)
        name = self.curve.metric.replace("auc", "AUC")
        if t is None:
            return f"{self.label}: does not reach {name} {target:.3f} in {self.epochs} epochs " \
                   f"(best {max(self.curve.per_epoch):.3f})"
        return f"{self.label}: reaches {name} {target:.3f} at {t:,.3g} s (epoch {k})"

    def to_record(self, target: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "platform": self.platform, "optimizer": self.optimizer, "label": self.label, "epoch_s": self.epoch_s,
            "epochs": self.epochs, "total_s": self.total_s, "metric": self.curve.metric,
            "per_epoch_metric": list(self.curve.per_epoch), "final_metric": self.curve.final,
            "per_epoch_metric_low": list(self.curve.low), "per_epoch_metric_high": list(self.curve.high),
            "final_metric_spread": self.curve.spread[-1], "seeds": list(self.curve.seeds),
            "times_s": self.times_s(), "accuracy_source": self.curve.source, "time_model": dict(self.time_model),
        }
        interval = self.time_model.get("interval")
        if interval:
            out["total_s_range"] = [e * self.epochs for e in interval["epoch_s"]]
            out["time_range_decided_by"] = interval["decided_by"]
        if target is not None:
            out |= {"epochs_to_target": self.curve.epochs_to(target), "time_to_target_s": self.time_to(target),
                    "reaches": self.reaches(target)}
        return out


def default_target(runs: list[Run]) -> float:
    """The highest metric every run reaches (the lowest final metric, rounded down to 0.001), so each run has a
    time to it."""
    lowest = min(max(r.curve.per_epoch) for r in runs)
    return int(lowest * 1000) / 1000
