"""The library's entry points, composing the layers below (what the CLI calls, and what users import as
``pimmodel.predict`` etc.): a prediction resolves its coefficients from a calibration here, an emulation is put
beside the cost model's prediction of the same configuration here (the emulator itself never imports the cost
model), and the provenance every record carries is made here.

    >>> import pimmodel
    >>> w = pimmodel.Workload(pimmodel.load_dataset("criteo-1tb"), "svm", "admm", dpus=1024)
    >>> p = pimmodel.predict(w, "upmem-2556", view="breakdown")       # a Prediction
    >>> p.per_epoch_s["dpu_compute"], p.total_s, p.bottleneck
    >>> p.to_dataframe()                                             # one row (pandas, optional)
    >>> pimmodel.predict_interval(w)["per_epoch_s"]["total"]         # [low, high] seconds
    >>> r = pimmodel.emulate("synthetic-yfcc", 16, "lr", "ma-sgd")    # an EmulationReport
    >>> pimmodel.provenance("upmem-2556", calibration=None).to_record()

Every function takes a hardware spec as a ``HardwareSpec``, a shipped name or a TOML path, and a calibration as
a ``CalibrationResult``, a file written by ``pimmodel calibrate``, ``"defaults"`` (the unfitted defaults) or
None (the calibration shipped with pimmodel). Errors are ``pimmodel.errors.PimModelError``: one line each.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .calibration.result import DEFAULTS_NAME, SHIPPED_PATH, CalibrationResult, load_calibration
from .costmodel import Prediction
from .costmodel import predict as _predict
from .errors import ArgumentError, check_type
from .specs import DEFAULT_HARDWARE, SPEC_TYPES, HardwareSpec, HyperParams, Workload, load_hardware, to_toml
from .specs.architectures import architecture_of
from .version import environment

HardwareLike = HardwareSpec | str | Path
CalibrationLike = CalibrationResult | str | Path | None
HASH_DIGITS = 12
"""Hex digits kept of a sha256 in provenance records: enough to tell specs and calibrations apart."""


def hardware_of(hardware: HardwareLike) -> HardwareSpec:
    """A hardware spec from a spec, a shipped name or a TOML file."""
    check_type("hardware", "hardware", hardware, (*SPEC_TYPES, str, Path),
               "a HardwareSpec, a shipped hardware name or a TOML file path")
    return load_hardware(str(hardware)) if isinstance(hardware, str | Path) else hardware


def predict(workload: Workload, hardware: HardwareLike = DEFAULT_HARDWARE, view: str = "wall",
            calibration: CalibrationLike = None, check_capacity: bool = True) -> Prediction:
    """Per-epoch phase times of ``workload`` on ``hardware`` with the coefficients of ``calibration``, in one of
    the two views (``"wall"``: kernel wall time; ``"breakdown"``: the study's instrumented accounting).
    ``check_capacity``: refuse a workload that does not fit the DPUs' MRAM/WRAM (``CapacityError``)."""
    check_type("predict", "workload", workload, Workload, "a pimmodel.Workload")
    check_type("predict", "view", view, str, "'wall' or 'breakdown'")
    cal = load_calibration(calibration)
    hw = hardware_of(hardware)
    p = _predict(workload, hw, _coefficients(cal, workload), view, cal.label, check_capacity)
    note = calibration_note(cal, hw)
    return p if note is None else dataclasses.replace(p, extra={**dict(p.extra), "calibration_note": note})


def calibration_note(cal: CalibrationResult, hw: HardwareSpec) -> str | None:
    """A sentence when ``cal`` was fitted on emulations of another hardware spec than ``hw`` (its coefficients
    are kernel counts fitted there; used here without a word they would pass for this machine's)."""
    made_for = cal.provenance.get("hardware")
    if not made_for or made_for == hw.name or not architecture_of(hw).calibrated:
        return None
    return (f"calibration {cal.label} was fitted on {made_for}, used here for {hw.name}; run `pimmodel calibrate "
            f"--hardware {hw.name}` for coefficients of this machine")


_COEFFICIENTS: dict[tuple[int, Workload], tuple[CalibrationResult, dict[str, float]]] = {}


def _coefficients(cal: CalibrationResult, workload: Workload) -> dict[str, float]:
    """``cal.coefficients_for(workload)`` once per (calibration, workload): one design point asked again (a loop
    over hardware, a sweep) resolves its calibration once."""
    entry = _COEFFICIENTS.get((id(cal), workload))
    if entry is None or entry[0] is not cal:
        if len(_COEFFICIENTS) > 1024:
            _COEFFICIENTS.clear()
        entry = _COEFFICIENTS[(id(cal), workload)] = (cal, cal.coefficients_for(workload))
    return entry[1]  # shared, read only: the scalar path recognises it (costmodel.evaluate._POINTS)


def predict_interval(workload: Workload, hardware: HardwareLike = DEFAULT_HARDWARE, view: str = "wall",
                     calibration: CalibrationLike = None, level: float = 0.95) -> dict[str, Any]:
    """The central ``level`` interval of every phase from the calibration's coefficient covariance:
    ``{"level", "method", "calibration", "per_epoch_s": {phase: [low, high], "total": [low, high]}}``."""
    from .calibration.interval import interval  # numpy random sampling only when an interval is asked for

    check_type("predict_interval", "workload", workload, Workload, "a pimmodel.Workload")
    check_type("predict_interval", "level", level, (int, float), "a number in (0, 1)")
    if not 0 < level < 1:
        raise ArgumentError("level", f"predict_interval: level must be in (0, 1), not {level!r}")

    return interval(workload, hardware_of(hardware), load_calibration(calibration), view, level)


# ---------------------------------------------------------------- provenance
@dataclass(frozen=True)
class Provenance:
    """What a record was computed with, so that a number can be traced and reproduced: the package version with
    its git commit and dirty flag (``version.full_version``), the hardware spec and the calibration (each by name
    and the first ``HASH_DIGITS`` hex digits of a sha256: a spec's of its canonical TOML, a calibration's of its
    file, or of its canonical JSON when it is not a file), the seed, the versions of the libraries the numbers
    depend on (numpy, scipy, sympy, optuna, Python) and the command line. Fields that do not apply to a record
    are None."""

    version: str
    hardware: str | None = None
    hardware_sha256: str | None = None
    calibration: str | None = None
    calibration_sha256: str | None = None
    seed: int | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
    libraries: Mapping[str, str | None] = field(default_factory=dict)
    command: str | None = None

    def to_record(self) -> dict[str, Any]:
        return {"version": self.version, "git_commit": self.git_commit, "git_dirty": self.git_dirty,
                "hardware": self.hardware, "hardware_sha256": self.hardware_sha256, "calibration": self.calibration,
                "calibration_sha256": self.calibration_sha256, "seed": self.seed, "libraries": dict(self.libraries),
                "command": self.command}


_NO_CALIBRATION: Any = object()


def provenance(hardware: HardwareLike | None = None, calibration: CalibrationLike = _NO_CALIBRATION,
               seed: int | None = None) -> Provenance:
    """The provenance of a record made with ``hardware`` and ``calibration`` (omit either when the record used
    none; ``calibration=None`` is the shipped calibration, as everywhere) and ``seed``."""
    hw = None if hardware is None else hardware_of(hardware)
    cal_name = cal_hash = None
    if calibration is not _NO_CALIBRATION:
        cal_name, cal_hash = load_calibration(calibration).label, calibration_hash(calibration)
    env = environment()
    return Provenance(env["version"], None if hw is None else hw.name, None if hw is None else spec_hash(hw),
                      cal_name, cal_hash, seed, env["git_commit"], env["git_dirty"], env["libraries"], env["command"])


def spec_hash(hardware: HardwareLike) -> str:
    """The first ``HASH_DIGITS`` hex digits of the sha256 of the spec's canonical TOML (``specs.to_toml``):
    equal for equal specs, whatever file or formatting they came from."""
    return _digest(to_toml(hardware_of(hardware)).encode("utf-8"))


def calibration_hash(calibration: CalibrationLike) -> str:
    """The first ``HASH_DIGITS`` hex digits of the sha256 of the calibration's file (the shipped one for None),
    or of its canonical JSON (sorted keys, no spaces) for an in-memory result or the unfitted defaults."""
    file = _calibration_file(calibration)
    if file is not None:
        return _digest(file.read_bytes())
    canonical = json.dumps(load_calibration(calibration).to_json(), sort_keys=True, separators=(",", ":"))
    return _digest(canonical.encode("utf-8"))


def _calibration_file(calibration: CalibrationLike) -> Path | None:
    """The file ``load_calibration`` reads for ``calibration``, None when it reads none."""
    if isinstance(calibration, CalibrationResult) or str(calibration) == DEFAULTS_NAME:
        return None
    path = SHIPPED_PATH if calibration in (None, "default") else Path(str(calibration))
    return path if path.is_file() else None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_DIGITS]


# ---------------------------------------------------------------- emulation
@dataclass(frozen=True)
class EmulationReport:
    """An emulation beside the cost model's prediction of the same configuration."""

    history: list[dict[str, float]]
    """metrics after each epoch (accuracy on the training and test rows, majority baseline, loss, AUC, time)."""
    trace: dict[str, Any]
    """the merged trace of every epoch (``emulator.record.trace_record``)."""
    predicted: dict[str, Any]
    """the cost model's prediction record (per epoch) of the configuration that ran."""
    workload: Workload
    warnings: list[str]
    provenance: Provenance = field(default_factory=lambda: provenance())
    """the version, hardware, calibration (of ``predicted``) and seed of the run."""
    run: dict[str, Any] = field(default_factory=dict)
    """how it ran: the engine and the memory pre-check (estimate and available bytes)."""


def emulate(dataset: str, dpus: int, model: str, optimizer: str, hyper: HyperParams | Mapping[str, int] | None = None,
            options: Any = None, progress: Any = None, calibration: CalibrationLike = None) -> EmulationReport:
    """Train on emulated PIM hardware (``pimmodel.emulator.emulate``; ``options``: an ``emulator.api.Options``)
    and predict the same configuration with the cost model."""
    # the emulator (and its data generators) load only when an emulation is asked for: the CLI's cold start
    from .emulator.api import emulate as run
    from .emulator.config import Options
    from .emulator.record import trace_record

    check_type("emulate", "dataset", dataset, (str, Path), "a dataset name or a data file path")
    check_type("emulate", "dpus", dpus, int, "a positive int")
    check_type("emulate", "model", model, str, "'lr' or 'svm'")
    check_type("emulate", "optimizer", optimizer, str, "an optimizer name")
    if options is not None:
        check_type("emulate", "options", options, Options, "a pimmodel.emulator.api.Options")
    opts = options or Options()
    em = run(dataset, dpus, model, optimizer, hyper, opts, progress)
    predicted = predict(em.workload, em.hardware, calibration=calibration).to_record()
    run_record = {"engine": em.engine, **({"memory": em.memory.to_record()} if em.memory is not None else {})}
    return EmulationReport(em.history, trace_record(em.trace, em.hardware), predicted, em.workload, em.warnings,
                           provenance(em.hardware, calibration, opts.seed), run_record)
