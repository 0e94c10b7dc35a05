"""A stored calibration: the fitted coefficients per data layout, their covariance, and the provenance.

The file is versioned JSON (``SCHEMA_VERSION``) holding: when and from which git revision it was made, the
hardware spec, the emulator settings and seeds, every design point with its dataset statistics, the
fitted coefficients with standard errors and covariance, and the fit residuals (per phase, before and
after). ``load_calibration(None)`` is the calibration shipped in the package; ``"defaults"`` means the
documented ``COEFFICIENT_DEFAULTS`` with no fit at all.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import write_text
from ..costmodel.coefficients import COEFFICIENT_DEFAULTS
from ..errors import SpecError, check_type, suggest
from ..resources import data_dir
from ..specs import MODELS, OPTIMIZERS, Workload
from ..specs._toml import read_text_file
from ..specs.workload import LAYOUTS

SCHEMA_VERSION = 1
DENSITY_SCALED: tuple[str, ...] = ()
"""Coefficients stored at full density that scale with a dense dataset's fraction of nonzero features (none
today: the only such quantity was the operand size of a data-dependent multiply, which UPMEM's __muldi3 is not)."""
SHIPPED_PATH = data_dir("calibration") / "default.json"
"""The calibration shipped inside the package (``load_calibration(None)``)."""
DEFAULTS_NAME = "defaults"


@dataclass(frozen=True)
class LayoutFit:
    """The fitted coefficients of one data layout (dense or sparse)."""

    names: tuple[str, ...]
    values: tuple[float, ...]
    std_errors: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    bounds: tuple[tuple[float, float], ...] = ()
    observations: int = 0
    residuals: int = 0
    bootstrap_std_errors: tuple[float, ...] | None = None
    ties: tuple[tuple[str, str], ...] = ()
    """(tied, twin): coefficients that only enter the model together with ``twin`` and share its value."""

    def as_dict(self) -> dict[str, float]:
        out = dict(zip(self.names, self.values, strict=True))
        out.update({tied: out[twin] for tied, twin in self.ties})
        return out

    def covariance_matrix(self) -> np.ndarray:
        return np.asarray(self.covariance, dtype=float).reshape(len(self.names), len(self.names))

    def to_json(self) -> dict[str, Any]:
        return {"coefficients": dict(zip(self.names, self.values, strict=True)), "ties": dict(self.ties),
                "std_errors": dict(zip(self.names, self.std_errors, strict=True)),
                "names": list(self.names), "covariance": [list(r) for r in self.covariance],
                "bounds": [list(b) for b in self.bounds], "observations": self.observations,
                "residuals": self.residuals,
                "bootstrap_std_errors": (None if self.bootstrap_std_errors is None else
                                         {n: (v if math.isfinite(v) else None)  # too few refits: unknown
                                          for n, v in zip(self.names, self.bootstrap_std_errors, strict=True)})}

    @classmethod
    def from_json(cls, data: Any, origin: str = "<memory>", key: str = "fit") -> LayoutFit:
        """A fit from its JSON, every field checked: a missing field, a non-finite or out-of-bounds coefficient,
        a negative standard error or a covariance that is not a symmetric positive semi-definite matrix of the
        right size is a one-line error naming the file and the field."""
        where = f"fits.{key}"
        table = _mapping(data, origin, where)
        names = _names(_field(table, "names", origin, where), origin, f"{where}.names")
        values = _per_name(_field(table, "coefficients", origin, where), names, origin, f"{where}.coefficients")
        std_errors = _per_name(_field(table, "std_errors", origin, where), names, origin, f"{where}.std_errors",
                               nonnegative=True)
        covariance = _covariance(_field(table, "covariance", origin, where), std_errors, origin,
                                 f"{where}.covariance")
        bounds = _bounds(table.get("bounds", []), names, values, origin, where)
        boot = table.get("bootstrap_std_errors")
        return cls(names=names, values=values, std_errors=std_errors, covariance=covariance, bounds=bounds,
                   observations=_count(table.get("observations", 0), origin, f"{where}.observations"),
                   residuals=_count(table.get("residuals", 0), origin, f"{where}.residuals"),
                   bootstrap_std_errors=None if boot is None else _per_name(
                       boot, names, origin, f"{where}.bootstrap_std_errors", nonnegative=True, missing_ok=True),
                   ties=_ties(table.get("ties", {}), names, origin, f"{where}.ties"))


# ---------------------------------------------------------------- checking a calibration file's fields
def _bad(origin: str, field: str, problem: str) -> SpecError:
    return SpecError(f"calibration file {origin!r}: {field} {problem}; re-run `pimmodel calibrate` to write a "
                     "good one")


def _field(table: Mapping[str, Any], name: str, origin: str, where: str) -> Any:
    if name not in table:
        raise _bad(origin, f"{where}.{name}" if where else name, "is missing")
    return table[name]


def _mapping(value: Any, origin: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(origin, field, f"must be a JSON object, got {type(value).__name__}")
    return value


def _number(value: Any, origin: str, field: str, nonnegative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(origin, field, f"must be a number, got {str(value)[:40]!r}")
    if not math.isfinite(value):
        raise _bad(origin, field, f"is {value} (not a finite number)")
    if nonnegative and value < 0:
        raise _bad(origin, field, f"is negative ({value:g}); a standard error is >= 0")
    return float(value)


def _count(value: Any, origin: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(origin, field, f"must be a whole number >= 0, got {str(value)[:40]!r}")
    return value


def _names(value: Any, origin: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise _bad(origin, field, "must be a list of coefficient names")
    for name in value:
        if name not in COEFFICIENT_DEFAULTS:
            raise _bad(origin, field, f"names an unknown coefficient {name!r}{suggest(name, COEFFICIENT_DEFAULTS)}")
    if len(set(value)) != len(value):
        raise _bad(origin, field, "repeats a coefficient")
    return tuple(value)


def _per_name(value: Any, names: Sequence[str], origin: str, field: str, nonnegative: bool = False,
              missing_ok: bool = False) -> tuple[float, ...]:
    """One number per name (``missing_ok``: null stands for an unknown value, NaN)."""
    table = _mapping(value, origin, field)
    for name in table:
        if name not in names:
            raise _bad(origin, f"{field}.{name}", "is not one of the fit's names")
    out = []
    for name in names:
        got = _field(table, name, origin, field)
        out.append(float("nan") if got is None and missing_ok else
                   _number(got, origin, f"{field}.{name}", nonnegative))
    return tuple(out)


def _covariance(value: Any, std_errors: Sequence[float], origin: str, field: str) -> tuple[tuple[float, ...], ...]:
    """A symmetric positive semi-definite n x n matrix whose diagonal is the squared standard errors (the
    intervals draw from it)."""
    n = len(std_errors)
    if not isinstance(value, list) or len(value) != n or any(not isinstance(r, list) or len(r) != n for r in value):
        raise _bad(origin, field, f"must be a {n} x {n} matrix (a list of {n} rows of {n} numbers, one per name)")
    rows = tuple(tuple(_number(v, origin, f"{field}[{i}][{j}]") for j, v in enumerate(r)) for i, r in enumerate(value))
    if n == 0:
        return rows
    c = np.asarray(rows, dtype=float)
    scale = max(float(np.abs(c).max()), 1e-300)
    if not np.allclose(c, c.T, rtol=0.0, atol=1e-9 * scale):
        raise _bad(origin, field, "is not symmetric")
    lowest = float(np.linalg.eigvalsh(c).min())
    if lowest < -1e-9 * scale:
        raise _bad(origin, field, f"is not positive semi-definite (eigenvalue {lowest:.3g})")
    se2 = np.square(np.asarray(std_errors))
    if not np.allclose(np.diag(c), se2, rtol=1e-6, atol=1e-12 * scale):
        raise _bad(origin, field, "diagonal does not match the squared std_errors")
    return rows


def _bounds(value: Any, names: Sequence[str], values: Sequence[float], origin: str, where: str
            ) -> tuple[tuple[float, float], ...]:
    """[low, high] per name; every coefficient lies within its bounds (the fit is bounded)."""
    field = f"{where}.bounds"
    if value == []:
        return ()
    if not isinstance(value, list) or len(value) != len(names) or any(
            not isinstance(b, list) or len(b) != 2 for b in value):
        raise _bad(origin, field, f"must be a list of {len(names)} [low, high] pairs, one per name")
    out = []
    for name, v, (lo, hi) in zip(names, values, value, strict=True):
        low, high = _number(lo, origin, f"{field}.{name}"), _number(hi, origin, f"{field}.{name}")
        if not low <= v <= high:
            raise _bad(origin, f"{where}.coefficients.{name}", f"= {v:g} lies outside its bounds [{low:g}, {high:g}]")
        out.append((low, high))
    return tuple(out)


def _ties(value: Any, names: Sequence[str], origin: str, field: str) -> tuple[tuple[str, str], ...]:
    table = _mapping(value, origin, field)
    for tied, twin in table.items():
        if tied not in COEFFICIENT_DEFAULTS or tied in names or twin not in names:
            raise _bad(origin, f"{field}.{tied}", "must tie a coefficient outside the fit to one of its names")
    return tuple(sorted(table.items()))


def _fit_key_ok(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 3 and parts[0] in LAYOUTS and parts[1] in MODELS and parts[2] in OPTIMIZERS


def _json_safe(value: Any) -> Any:
    """Non-finite floats (an error summary over no case) as null: the file stays standard JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


@dataclass(frozen=True)
class CalibrationResult:
    """Fitted coefficients per layout plus provenance; ``label`` names it in every prediction record."""

    label: str
    fits: Mapping[str, LayoutFit] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    design: Sequence[Mapping[str, Any]] = ()
    errors: Mapping[str, Any] = field(default_factory=dict)
    """Per phase relative-error summaries over the design: {"before": {...}, "after": {...}}."""
    schema_version: int = SCHEMA_VERSION

    def fitted_for(self, w: Workload) -> dict[str, float]:
        """The fitted coefficients of ``w``'s group (``fit_key``), at full density (may be empty)."""
        fit = self.fits.get(fit_key(w))
        return fit.as_dict() if fit is not None else {}

    def coefficients_for(self, w: Workload) -> dict[str, float]:
        """The cost-model coefficients for ``w`` (``coefficients_for``)."""
        return coefficients_for(w, self.fitted_for(w))

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "label": self.label, "provenance": dict(self.provenance),
                "fits": {k: v.to_json() for k, v in self.fits.items()}, "errors": dict(self.errors),
                "design": [dict(d) for d in self.design]}

    def write(self, path: str | Path) -> Path:
        """Write the file whole or not at all (``atomic``): a full disk or Ctrl-C leaves the previous file. The
        record is checked as ``read_calibration`` checks it first, so no file is written that could not be
        read back."""
        record = self.to_json()
        CalibrationResult.from_json(record, str(path))
        return write_text(path, json.dumps(_json_safe(record), indent=1, sort_keys=False, allow_nan=False) + "\n")

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str) -> CalibrationResult:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SpecError(f"calibration file {origin!r} has schema_version {version!r}; this pimmodel reads "
                            f"{SCHEMA_VERSION}: re-run `pimmodel calibrate`")
        fits_table = _mapping(_field(data, "fits", origin, ""), origin, "fits")
        for key in fits_table:
            if not _fit_key_ok(key):
                raise _bad(origin, f"fits.{key}", "is not a LAYOUT/MODEL/OPTIMIZER group such as dense/lr/ma-sgd")
        fits = {k: LayoutFit.from_json(v, origin, k) for k, v in fits_table.items()}
        label = data.get("label", origin)
        if not isinstance(label, str):
            raise _bad(origin, "label", "must be a string")
        design = data.get("design", [])
        if not isinstance(design, list) or not all(isinstance(d, Mapping) for d in design):
            raise _bad(origin, "design", "must be a list of objects")
        return cls(label=label, fits=fits, provenance=_mapping(data.get("provenance", {}), origin, "provenance"),
                   design=design, errors=_mapping(data.get("errors", {}), origin, "errors"))


def fit_key(w: Workload) -> str:
    """Coefficients are fitted per layout x model x optimizer (operand sizes and margin hits depend on all); an
    optimizer outside the study takes those of the study optimizer whose local-step kernels it runs
    (``OptimizerInfo.study_like``)."""
    return f"{w.dataset.layout}/{w.model}/{w.info.study_name}"


def coefficients_for(w: Workload, fitted: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """THE resolution of the cost model's coefficients for a workload: the documented defaults
    (``COEFFICIENT_DEFAULTS``), overridden by ``fitted`` values (at full density; numbers, or arrays of
    draws), with the dense dataset's density applied (``DENSITY_SCALED``)."""
    ds = w.dataset
    fraction = ds.nonzeros_per_row / ds.features if ds.layout == "dense" else 1.0
    merged = {**COEFFICIENT_DEFAULTS, **(fitted or {})}
    return {k: (v * fraction if k in DENSITY_SCALED else v) for k, v in merged.items()}


def defaults() -> CalibrationResult:
    return CalibrationResult(label=DEFAULTS_NAME, provenance={"note": "documented COEFFICIENT_DEFAULTS, not fitted"})


def read_calibration(path: str | Path) -> CalibrationResult:
    """Read and check a calibration file (one-line ``SpecError`` naming the file and the field)."""
    p = Path(path)
    text = read_text_file(p, "calibration")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"calibration file {str(p)!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise SpecError(f"calibration file {str(p)!r} nests too deeply to be a calibration") from None
    if not isinstance(data, dict):
        raise SpecError(f"calibration file {str(p)!r} must hold a JSON object")
    return CalibrationResult.from_json(data, str(p))


@lru_cache(maxsize=16)
def _cached(path: str, mtime: float) -> CalibrationResult:
    return read_calibration(path)


def load_calibration(name_or_path: CalibrationResult | str | Path | None = None) -> CalibrationResult:
    """``None`` or ``"default"``: the shipped calibration; ``"defaults"``: unfitted defaults; else a file."""
    if name_or_path is not None:
        check_type("load_calibration", "name_or_path", name_or_path, (CalibrationResult, str, Path),
                   "a CalibrationResult, a calibration file path, 'default', 'defaults' or None")
    if isinstance(name_or_path, CalibrationResult):
        return name_or_path
    if isinstance(name_or_path, Path):
        name_or_path = str(name_or_path)
    if name_or_path == DEFAULTS_NAME:
        return defaults()
    path = SHIPPED_PATH if name_or_path in (None, "default") else Path(name_or_path)
    if not path.exists():
        if name_or_path in (None, "default"):
            return defaults()
        raise SpecError(f"calibration file {str(path)!r} does not exist; give a file written by `pimmodel calibrate`")
    return _cached(str(path.resolve()), path.stat().st_mtime)


def git_revision() -> str:
    """The work tree's commit (with ``-dirty``), or ``unknown`` outside a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        rev = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty", "--abbrev=12"],
                             capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return rev or "unknown"


def now_utc() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
