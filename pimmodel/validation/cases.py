"""A validation case (one comparison of the model with a reference), an aggregate target, and the report of a run.

The groups, in the order a run reports them (``GROUPS``), and what each is evidence of (``GROUP_INFO``):

- ``hardware``: real UPMEM measurements of the PrIM kernels. Evidence about hardware: the test kernels' points
  were never fitted; leave-one-kernel-out cross-validation for the others.
- ``published``: PrIM's microbenchmark measurements of the real UPMEM system. Evidence about hardware only where a
  case is a genuine prediction; a case that restates a spec input (the constant was read off that very
  measurement) is marked ``restates`` and not counted as evidence.
- ``emulator``, shown as ``consistency (model vs emulator)``: the equations against the functional emulator, which
  prices the same events with the same primitives. Consistency, NOT evidence about hardware. ``consistency`` is
  accepted as an alias of the group id on the command line.
- ``finding``: the PIM-Opt study's qualitative findings, as comparisons between model outputs. A failed finding
  case is a disagreement of the model with the study (``verdict``: ``disagrees``), counted in the group summary.

A case has an honest, stated tolerance and must pass: ``ok`` of the report (the exit code of ``pimmodel
validate``) is whether every case passes. An aggregate *target* (a MAPE over many points that the issue sets) is
reported in ``targets`` with ``met`` true or false; a missed target is shown, never hidden, and does not fail the
run: it is a goal of the project, not a per-case tolerance.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import check_known, unknown
from ..resources import data_dir

GROUPS = ("hardware", "published", "emulator", "finding", "training", "whatif", "bank-pim")
"""Group ids, in the order a run reports them (the hardware group first)."""
DEFAULT_GROUPS = ("hardware", "published", "emulator", "finding")
"""What a run without ``--group`` checks; ``training`` (real end-to-end training runs) and ``whatif`` (measured
changes of the host path) are asked for by name."""
GROUP_ALIASES = {"consistency": "emulator"}
"""Other names a user may give ``--group``: the model-vs-emulator group is a consistency check."""
KINDS = ("within", "below", "above")


@dataclass(frozen=True, slots=True)
class GroupInfo:
    title: str
    evidence: str
    measured_on: str = ""
    """The hardware spec that describes the machine(s) the group's references were measured on: on any other spec
    its cases are shown as context and not scored (another machine's times are no reference for a spec's
    constants). Empty: the references hold on every spec (the emulator prices the spec it is given)."""


MEASURED_ON = "upmem-2556"
"""The spec of the real UPMEM machines behind the measured references: its constants were read off PrIM's
2,556-DPU system, fitted on the uPIMulator sheet's kernels and set for the study's server."""

GROUP_INFO: dict[str, GroupInfo] = {
    "hardware": GroupInfo(
        "hardware: real UPMEM measurements of the PrIM kernels (test kernels VA, GEMV, RED never fitted)",
        "about real hardware: out-of-sample kernel times of the test kernels' points, and leave-one-kernel-out "
        "cross-validation of the fit; uPIMulator's error on the same points beside ours", MEASURED_ON),
    "published": GroupInfo(
        "published: PrIM microbenchmark measurements of the real UPMEM system",
        "about real hardware where a case is a genuine prediction; a case that restates a spec input (read off "
        "that very measurement) is marked and not counted as evidence", MEASURED_ON),
    "emulator": GroupInfo(
        "consistency (model vs emulator): NOT evidence about hardware",
        "none about hardware: the equations against the functional emulator, which prices the same events with "
        "the same primitives; it shows the equations count what the kernels do"),
    "finding": GroupInfo(
        "finding: the PIM-Opt study's qualitative findings",
        "about agreement with the study's reported findings (orderings and ratios of model outputs)", MEASURED_ON),
    "training": GroupInfo(
        "training: real end-to-end training runs on UPMEM (test rows, never fitted)",
        "about real hardware: whole training runs of other programs (dpu_kmeans) priced with the same primitives; "
        "rows no family expresses yet are listed with the reason", MEASURED_ON),
    "whatif": GroupInfo(
        "whatif: measured changes of the host path on real UPMEM (ratio changed / baseline; test rows never fitted)",
        "about real hardware: whether a predicted difference between two machines (the SDK's transfers vs a direct "
        "host path) has the size the silicon shows; rows no term expresses yet are listed with the reason",
        MEASURED_ON),
    "bank-pim": GroupInfo(
        "bank-pim: Samsung HBM-PIM's published silicon numbers (test rows never fitted)",
        "about real hardware of the second family: speed-ups of memory-bound kernels on HBM-PIM over its hosts, "
        "from device constants with one fitted host share; rows no term expresses are listed with the reason",
        "hbm-pim-aquabolt"),
}


def canonical_group(name: str) -> str:
    """The group id of ``name`` (an id or an alias)."""
    group = GROUP_ALIASES.get(name, name)
    if group not in GROUPS:
        raise unknown("validation group", name, (*GROUPS, *GROUP_ALIASES))
    return group


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
    restates: str = ""
    """``published`` cases: the spec constant(s) read off this very measurement, so the case restates an input
    (a consistency check of the workload description, not evidence); empty for a genuine prediction."""

    def __post_init__(self) -> None:
        check_known("validation group", self.group, GROUPS)
        check_known("case kind", self.kind, KINDS)

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

    @property
    def evidence(self) -> bool:
        """Counted as evidence of its group (not a restated input)."""
        return not self.restates

    def to_record(self) -> dict[str, Any]:
        record = {"group": self.group, "name": self.name, "phase": self.phase, "reference": self.reference,
                  "predicted": self.predicted, "rel_error": self.rel_error, "tolerance": self.tolerance,
                  "ok": self.ok, "kind": self.kind, "unit": self.unit, "source": self.source}
        if self.note:
            record["note"] = self.note
        if self.group == "hardware":
            record.update(kernel=self.kernel, dpus=self.dpus, size=self.size)
        if self.group == "published":
            record.update(restates_input=bool(self.restates), restates=self.restates)
        if self.group == "finding":
            record["verdict"] = self.verdict
        return record

    @property
    def verdict(self) -> str:
        """``finding`` cases: whether the model ``agrees`` with the study's finding or ``disagrees`` (failed)."""
        return "agrees" if self.ok else "disagrees"


@dataclass(frozen=True, slots=True)
class Target:
    """An aggregate goal (a MAPE over many points, in %): ``met`` when ``value`` <= ``target`` (and below
    ``reference`` where one is given, e.g. uPIMulator's MAPE on the same points)."""

    group: str
    name: str
    kernel: str
    quantity: str
    value: float
    target: float
    reference: float | None = None
    reference_name: str = ""
    note: str = ""

    @property
    def met(self) -> bool:
        return self.value <= self.target and (self.reference is None or self.value < self.reference)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"group": self.group, "name": self.name, "kernel": self.kernel,
                                  "quantity": self.quantity, "value": self.value, "target": self.target,
                                  "met": self.met, "unit": "%"}
        if self.reference is not None:
            record.update(reference=self.reference, reference_name=self.reference_name)
        if self.note:
            record["note"] = self.note
        return record


KNOWN_FILE = "known-discrepancies.toml"
"""validation/known-discrepancies.toml: the misses documented with their reason (matched by group, name, phase)."""


@functools.cache
def known_discrepancies() -> dict[tuple[str, str, str], str]:
    """(group, name, phase) -> the reason and where it is documented, of every documented miss."""
    from ..specs._toml import read_toml

    data = read_toml(data_dir("validation") / KNOWN_FILE, "known discrepancies")
    return {(m["group"], m["name"], m["phase"]): f"{m['reason']} (documented in {m['documented']})"
            for m in data.get("miss", [])}


@dataclass(frozen=True, slots=True)
class ValidationReport:
    cases: tuple[Case, ...]
    hardware: str
    calibration: str
    groups: tuple[str, ...] = GROUPS
    """The groups that were run (ids, in ``GROUPS`` order)."""
    targets: tuple[Target, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    """Per group, tables beside its cases (``hardware``: ``kernels``, the MAPE per kernel next to uPIMulator's)."""

    @property
    def ok(self) -> bool:
        """Every scored case passes (targets are reported, not counted: see the module docstring)."""
        return not self.failures

    def scored(self, case: Case) -> bool:
        """Whether ``case`` is scored on this report's spec (else it is context: ``GroupInfo.measured_on``)."""
        return scored_on(case.group, self.hardware)

    @property
    def failures(self) -> tuple[Case, ...]:
        """The scored cases that fail (a context case is shown and never counted)."""
        return tuple(c for c in self.cases if self.scored(c) and not c.ok)

    @property
    def undocumented(self) -> tuple[Case, ...]:
        """The failures no entry of ``known-discrepancies.toml`` documents: these always fail the exit code."""
        known = known_discrepancies()
        return tuple(c for c in self.failures if (c.group, c.name, c.phase) not in known)

    def exit_code(self, strict: bool = False) -> int:
        """0 when every case passes or every miss is a documented known discrepancy (``strict``: every case
        passes); else 1."""
        return int(bool(self.failures if strict else self.undocumented))

    def group_summary(self) -> dict[str, dict[str, Any]]:
        """Per group run: its title, what it is evidence of, and how many cases (evidence ones) pass."""
        out: dict[str, dict[str, Any]] = {}
        for g in self.groups:
            mine = [c for c in self.cases if c.group == g]
            evidence = [c for c in mine if c.evidence]
            info = GROUP_INFO[g]
            scored = scored_on(g, self.hardware)
            out[g] = {"title": info.title, "evidence": info.evidence, "cases": len(mine), "scored": scored,
                      **({} if scored else {"not_scored": not_scored_reason(g, self.hardware)}),
                      "passed": sum(c.ok for c in mine), "evidence_cases": len(evidence),
                      "evidence_passed": sum(c.ok for c in evidence),
                      "targets": len([t for t in self.targets if t.group == g]),
                      "targets_met": sum(t.met for t in self.targets if t.group == g),
                      **({"agrees": sum(c.ok for c in mine), "disagrees": sum(not c.ok for c in mine)}
                         if g == "finding" else {}),
                      **self.details.get(g, {})}
        return out

    def to_record(self) -> dict[str, Any]:
        known = known_discrepancies()
        cases = [c.to_record() for c in self.cases]
        for c, r in zip(self.cases, cases, strict=True):
            if not c.ok and (c.group, c.name, c.phase) in known:
                r["known_discrepancy"] = known[(c.group, c.name, c.phase)]
            if not self.scored(c):
                r["scored"] = False
        return {"ok": self.ok, "undocumented_failures": len(self.undocumented),
                "known_failures": len(self.failures) - len(self.undocumented),
                "hardware": self.hardware, "calibration": self.calibration,
                "groups": self.group_summary(), "targets": [t.to_record() for t in self.targets],
                "cases": cases}


def scored_on(group: str, spec: str) -> bool:
    """Whether ``group``'s references are references for the spec named ``spec``."""
    measured_on = GROUP_INFO[group].measured_on
    return not measured_on or measured_on == spec


def not_scored_reason(group: str, spec: str) -> str:
    return (f"its references were measured on the machine {GROUP_INFO[group].measured_on} describes, not on {spec}: "
            f"shown as context (they validate no constant of {spec})")


def ordered(groups: Sequence[str]) -> tuple[str, ...]:
    """Group ids (aliases resolved, duplicates dropped) in ``GROUPS`` order."""
    wanted = {canonical_group(g) for g in groups}
    return tuple(g for g in GROUPS if g in wanted)
