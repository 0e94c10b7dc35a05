"""A validation case (one comparison of the model with a reference) and the report of a run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import unknown

GROUPS = ("emulator", "published", "finding", "hardware")
KINDS = ("within", "below", "above")


@dataclass(frozen=True, slots=True)
class Case:
    """One comparison. ``within``: |p/r - 1| <= tol; ``below``: p/r - 1 < tol; ``above``: p/r - 1 > -tol."""

    group: str
    name: str
    phase: str
    reference: float
    predicted: float
    tolerance: float
    kind: str = "within"
    unit: str = ""
    source: str = ""
    note: str = ""
    kernel: str = ""
    """``hardware`` cases: the PrIM kernel (or ``all``), and the point's DPUs and size (None for a summary)."""
    dpus: int | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise unknown("validation group", self.group, GROUPS)
        if self.kind not in KINDS:
            raise unknown("case kind", self.kind, KINDS)

    @property
    def rel_error(self) -> float:
        """Relative error, signed: (predicted - reference) / |reference|."""
        if self.reference == 0:
            return 0.0 if self.predicted == 0 else float("inf")
        return (self.predicted - self.reference) / abs(self.reference)

    @property
    def ok(self) -> bool:
        err = self.rel_error
        if self.kind == "within":
            return abs(err) <= self.tolerance
        if self.kind == "below":
            return err < self.tolerance
        return err > -self.tolerance

    def to_record(self) -> dict[str, Any]:
        record = {"group": self.group, "name": self.name, "phase": self.phase, "reference": self.reference,
                  "predicted": self.predicted, "rel_error": self.rel_error, "tolerance": self.tolerance,
                  "ok": self.ok, "kind": self.kind, "unit": self.unit, "source": self.source}
        if self.group == "hardware":
            record.update(kernel=self.kernel, dpus=self.dpus, size=self.size)
        return record


@dataclass(frozen=True, slots=True)
class ValidationReport:
    cases: tuple[Case, ...]
    hardware: str
    calibration: str

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases)

    @property
    def failures(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if not c.ok)

    def to_record(self) -> dict[str, Any]:
        return {"ok": self.ok, "hardware": self.hardware, "calibration": self.calibration,
                "cases": [c.to_record() for c in self.cases]}
