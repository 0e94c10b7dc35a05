"""Validation: how far is the model from its references? A table of cases in three groups.

- ``emulator``: the cost model vs the functional emulator on configurations not used for calibration
  (``validation/emulator.toml``), per phase; 5 % for every phase that is at least 1 % of the epoch total. The
  phases are the raw (breakdown) ones with launch, plus ``mram_wram_dma_exposed``: the wall view's DMA not
  hidden behind compute within a parallel section (its share taken of the wall-view epoch).
- ``published``: PrIM's measurements of the real UPMEM system (``validation/prim.toml``), each evaluated as a
  microbenchmark workload through the cost primitives (``pimmodel.microbenchmarks``).
- ``finding``: the PIM-Opt study's qualitative findings (``validation/findings.toml``) as comparisons between
  model outputs at the study's configurations.

``validate()`` returns a frozen ``ValidationReport``; ``to_record()`` is exactly what ``pimmodel validate
--json`` prints. The same data drives the parametrized tests in ``tests/validation``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import SpecError, unknown
from .specs import DATASETS, DEFAULT_HARDWARE, HardwareSpec, Workload, load_hardware, study_hyperparams
from .specs._toml import read_toml

GROUPS = ("emulator", "published", "finding")
KINDS = ("within", "below", "above")
COMM_PHASES = ("host_to_pim", "pim_to_host", "host_aggregate")


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

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise unknown("validation group", self.group, GROUPS)
        if self.kind not in KINDS:
            raise unknown("case kind", self.kind, KINDS)

    @property
    def rel_error(self) -> float:
        """Relative error (signed for the one-sided kinds)."""
        if self.reference == 0:
            return 0.0 if self.predicted == 0 else float("inf")
        signed = (self.predicted - self.reference) / abs(self.reference)
        return abs(signed) if self.kind == "within" else signed

    @property
    def ok(self) -> bool:
        err = self.rel_error
        if self.kind == "within":
            return err <= self.tolerance
        if self.kind == "below":
            return err < self.tolerance
        return err > -self.tolerance

    def to_record(self) -> dict[str, Any]:
        return {"group": self.group, "name": self.name, "phase": self.phase, "reference": self.reference,
                "predicted": self.predicted, "rel_error": self.rel_error, "tolerance": self.tolerance,
                "ok": self.ok, "kind": self.kind, "unit": self.unit, "source": self.source}


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


# ---------------------------------------------------------------- data files
def validation_dir() -> Path:
    """Where the validation data live (``PIMMODEL_VALIDATION_DIR`` overrides)."""
    env = os.environ.get("PIMMODEL_VALIDATION_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "validation"


@lru_cache(maxsize=8)
def _data(name: str) -> dict[str, Any]:
    return read_toml(validation_dir() / name, "validation data")


# ---------------------------------------------------------------- published group
def published_cases(hw: HardwareSpec) -> list[Case]:
    """PrIM measurements vs the primitives' cost of the same microbenchmark workload."""
    from .microbenchmarks import run

    cases = []
    for entry in _data("prim.toml").get("case", []):
        try:
            predicted = run(entry["benchmark"], entry["quantity"], entry.get("params", {}), hw)
            cases.append(Case("published", entry["name"], entry["phase"], float(entry["reference"]), predicted,
                              float(entry.get("tolerance", 0.10)), unit=entry.get("unit", ""),
                              source=entry.get("source", ""), note=entry.get("note", "")))
        except KeyError as exc:
            raise SpecError(f"validation/prim.toml: case {entry.get('name', '?')!r} lacks {exc.args[0]!r}") from None
    return cases


# ---------------------------------------------------------------- finding group
def _workload(dataset: str, model: str, optimizer: str, dpus: int, scaling: str, batch: int,
              global_batch: int) -> Workload:
    ds = DATASETS[dataset]
    hp = replace(study_hyperparams(ds, model, optimizer), batch_size=batch, global_batch_size=global_batch)
    return Workload(ds, model, optimizer, dpus, scaling=scaling, epochs=1, hyper=hp)


class _Model:
    """Per-epoch phase seconds of the cost model, with the calibration in use."""

    def __init__(self, hw: HardwareSpec, calibration: str | None) -> None:
        self.hw, self.calibration = hw, calibration

    def phases(self, w: Workload, view: str) -> dict[str, float]:
        from .costmodel.predict import predict

        record = predict(w, self.hw, view, calibration=self.calibration, check_capacity=False).to_record()
        return dict(record["per_epoch_s"])

    def comm(self, w: Workload, view: str) -> float:
        p = self.phases(w, view)
        return sum(p[k] for k in COMM_PHASES)


def _comm_ordering(m: _Model, spec: Mapping[str, Any]) -> list[Case]:
    cases = []
    for cfg in spec["configs"]:
        comm = {opt: m.comm(_workload(cfg["dataset"], cfg["model"], opt, spec["dpus"], "weak", cfg["batch_size"],
                                      cfg["global_batch_size"]), spec["view"])
                for opt in ("admm", "ma-sgd", "ga-sgd")}
        tag = f"{cfg['dataset']} {cfg['model']} {spec['dpus']} DPUs ({cfg['figure']})"
        factor = float(spec["far_below_factor"])
        cases.append(Case("finding", f"comm+sync admm <= {factor:g} x ma-sgd, {tag}", "comm_sync",
                          factor * comm["ma-sgd"], comm["admm"], 0.0, "below", "s",
                          note="ADMM communicates far less than MA-SGD"))
        cases.append(Case("finding", f"comm+sync ma-sgd < ga-sgd, {tag}", "comm_sync", comm["ga-sgd"],
                          comm["ma-sgd"], 0.0, "below", "s"))
    return cases


def _compute_vs_dma(m: _Model, spec: Mapping[str, Any]) -> list[Case]:
    cases = []
    for opt in ("ma-sgd", "ga-sgd", "admm"):
        for model in ("lr", "svm"):
            w = _workload(spec["dataset"], model, opt, spec["dpus"], "weak", spec["batch_size"],
                          spec["global_batch_size"])
            p = m.phases(w, spec["view"])
            cases.append(Case("finding", f"mram_wram_dma < dpu_compute, {spec['dataset']} {model} {opt} (Fig. 4)",
                              "mram_wram_dma", p["dpu_compute"], p["mram_wram_dma"], 0.0, "below", "s"))
    return cases


def _scaling(m: _Model, spec: Mapping[str, Any], scaling: str) -> list[Case]:
    small, large = spec["dpus"]
    cases = []
    for cfg in spec["configs"]:
        for opt in ("ma-sgd", "ga-sgd", "admm"):
            for model in ("lr", "svm"):
                t = [m.phases(_workload(cfg["dataset"], model, opt, n, scaling, cfg["batch_size"],
                                        cfg["global_batch_size"]), spec["view"])["total"] for n in (small, large)]
                tag = f"{cfg['dataset']} {model} {opt} {small}->{large} ({cfg['figure']})"
                if scaling == "strong":
                    linear = large / small
                    cases.append(Case("finding", f"strong scaling sub-linear, {tag}", "total", linear,
                                      t[0] / t[1], 0.0, "below", "x", note="speed-up vs linear"))
                elif opt == "admm":
                    cases.append(Case("finding", f"weak scaling flat within {spec['admm_within']:.0%}, {tag}",
                                      "total", t[0], t[1], float(spec["admm_within"]), "within", "s"))
                else:
                    cases.append(Case("finding", f"weak scaling epoch time grows, {tag}", "total", t[0], t[1],
                                      0.0, "above", "s"))
    return cases


def finding_cases(hw: HardwareSpec, calibration: str | None = None) -> list[Case]:
    """The study's qualitative findings as checks on the model at the study's configurations."""
    data = _data("findings.toml")
    m = _Model(hw, calibration)
    return [*_comm_ordering(m, data["comm_ordering"]), *_compute_vs_dma(m, data["compute_vs_dma"]),
            *_scaling(m, data["weak_scaling"], "weak"), *_scaling(m, data["strong_scaling"], "strong")]


# ---------------------------------------------------------------- emulator group
def emulator_cases(hw: HardwareSpec, calibration: str | None = None) -> list[Case]:
    """Cost model vs emulator on held-out configurations (runs the emulator)."""
    from .calibration.compare import holdout_cases

    return holdout_cases(hw, calibration)


# ---------------------------------------------------------------- entry point
def validate(hardware: HardwareSpec | str | None = None, groups: Iterable[str] = GROUPS,
             calibration: str | None = None) -> ValidationReport:
    """Run the selected groups; ``calibration`` is a calibration file path (None: the shipped one)."""
    hw = hardware if isinstance(hardware, HardwareSpec) else load_hardware(hardware or DEFAULT_HARDWARE)
    selected: Sequence[str] = list(groups)
    for g in selected:
        if g not in GROUPS:
            raise unknown("validation group", g, GROUPS)
    cases: list[Case] = []
    if "emulator" in selected:
        cases += emulator_cases(hw, calibration)
    if "published" in selected:
        cases += published_cases(hw)
    if "finding" in selected:
        cases += finding_cases(hw, calibration)
    from .calibration.result import load_calibration

    return ValidationReport(tuple(cases), hw.name, load_calibration(calibration).label)
