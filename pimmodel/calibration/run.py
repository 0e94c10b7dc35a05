"""``calibrate()``: emulate a design, fit every group's free coefficients, keep the provenance."""

from __future__ import annotations

import platform
from collections.abc import Callable, Sequence
from dataclasses import asdict

import numpy as np

from ..costmodel.coefficients import COEFFICIENT_DEFAULTS
from ..specs import DEFAULT_HARDWARE, HardwareSpec, load_hardware
from .compare import observe, phase_error_summary
from .design import DesignPoint, EmulatorSettings, default_design
from .fit import FIT_PHASES, fit
from .result import CalibrationResult, fit_key, git_revision, now_utc


def calibrate(design: Sequence[DesignPoint] | None = None, hardware: HardwareSpec | str | None = None,
              settings: EmulatorSettings = EmulatorSettings(), bootstrap: int = 0, seed: int = 0,
              label: str | None = None, progress: Callable[[DesignPoint], None] | None = None) -> CalibrationResult:
    """Emulate ``design`` (default: ``default_design(seed)``), fit, and return the calibration."""
    hw = hardware if isinstance(hardware, HardwareSpec) else load_hardware(hardware or DEFAULT_HARDWARE)
    points = list(design) if design is not None else default_design(seed)
    observations = observe(points, hw, settings, progress)
    fits = fit(observations, hw.numeric(), bootstrap=bootstrap, rng=np.random.default_rng(seed))
    before = phase_error_summary(observations, hw, dict(COEFFICIENT_DEFAULTS))
    after = phase_error_summary(observations, hw, lambda w: {**COEFFICIENT_DEFAULTS, **fits[fit_key(w)].as_dict()})
    created = now_utc()
    revision = git_revision()
    provenance = {
        "created_utc": created, "git_revision": revision, "hardware": hw.name,
        "emulator_settings": asdict(settings), "seeds": sorted({p.seed for p in points}),
        "design_points": len(points), "bootstrap_draws": bootstrap, "fit_phases": list(FIT_PHASES),
        "python": platform.python_version(), "numpy": np.__version__,
        "method": "scipy.optimize.least_squares (trf, bounded) on relative per-phase residuals; "
                  "std errors from s^2 (J^T J)^-1",
    }
    design_records = [{**p.to_record(), "name": ob.tag, "stats": dict(ob.stats),
                       "reference_s": dict(ob.reference_s)} for p, ob in zip(points, observations, strict=True)]
    return CalibrationResult(label=label or f"calibration {created[:10]} (git {revision})", fits=fits,
                             provenance=provenance, design=design_records, errors={"before": before, "after": after})
