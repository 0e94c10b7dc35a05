"""A stored calibration: the fitted coefficients per data layout, their covariance, and the provenance.

The file is versioned JSON (``SCHEMA_VERSION``) holding: when and from which git revision it was made, the
hardware spec, the emulator settings and seeds, every design point with its dataset statistics, the
fitted coefficients with standard errors and covariance, and the fit residuals (per phase, before and
after). ``load_calibration(None)`` is the calibration shipped in the package; ``"defaults"`` means the
documented ``COEFFICIENT_DEFAULTS`` with no fit at all.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..costmodel.coefficients import COEFFICIENT_DEFAULTS
from ..errors import SpecError
from ..resources import data_dir
from ..specs import Workload

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
                "bootstrap_std_errors": (None if self.bootstrap_std_errors is None
                                         else dict(zip(self.names, self.bootstrap_std_errors, strict=True)))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LayoutFit:
        names = tuple(data["names"])
        boot = data.get("bootstrap_std_errors")
        return cls(names=names, values=tuple(float(data["coefficients"][n]) for n in names),
                   std_errors=tuple(float(data["std_errors"][n]) for n in names),
                   covariance=tuple(tuple(float(v) for v in row) for row in data["covariance"]),
                   bounds=tuple((float(lo), float(hi)) for lo, hi in data.get("bounds", [])),
                   observations=int(data.get("observations", 0)), residuals=int(data.get("residuals", 0)),
                   bootstrap_std_errors=None if boot is None else tuple(float(boot[n]) for n in names),
                   ties=tuple(sorted(data.get("ties", {}).items())))


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
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_json(), indent=1, sort_keys=False) + "\n", encoding="utf-8")
        return target

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str) -> CalibrationResult:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SpecError(f"calibration file {origin!r} has schema_version {version!r}; this pimmodel reads "
                            f"{SCHEMA_VERSION}: re-run `pimmodel calibrate`")
        try:
            fits = {k: LayoutFit.from_json(v) for k, v in data.get("fits", {}).items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError(f"calibration file {origin!r} is malformed ({exc}); re-run `pimmodel calibrate`") from None
        return cls(label=str(data.get("label", origin)), fits=fits, provenance=data.get("provenance", {}),
                   design=data.get("design", []), errors=data.get("errors", {}))


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
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read calibration file {str(p)!r}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise SpecError(f"calibration file {str(p)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SpecError(f"calibration file {str(p)!r} must hold a JSON object")
    return CalibrationResult.from_json(data, str(p))


@lru_cache(maxsize=16)
def _cached(path: str, mtime: float) -> CalibrationResult:
    return read_calibration(path)


def load_calibration(name_or_path: CalibrationResult | str | Path | None = None) -> CalibrationResult:
    """``None`` or ``"default"``: the shipped calibration; ``"defaults"``: unfitted defaults; else a file."""
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
