"""Prediction intervals from the calibration's coefficient covariance (Monte Carlo through the compiled model).

Coefficient vectors are drawn from N(fit, covariance) of the workload's fit group, clipped to their bounds,
and the compiled model is evaluated once on all draws (vectorized); the interval of each phase and of the
total is the central ``level`` quantile range. It covers the coefficients' uncertainty only: hardware
constants are taken as exact, and the model's structural error is what ``pimmodel validate`` measures.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..costmodel import evaluate
from ..phases import PHASES, in_view, total
from ..specs import HardwareSpec, Workload
from ..specs.architectures import architecture_of
from .result import CalibrationResult, coefficients_for, fit_key


def interval(w: Workload, hw: HardwareSpec, cal: CalibrationResult, view: str = "wall", level: float = 0.95,
             draws: int = 2000, seed: int = 0) -> dict[str, Any]:
    """``{"level", "method", "per_epoch_s": {phase: [low, high], "total": [low, high]}}`` (the link topology
    and every other input of ``hw`` included: the same evaluation as the point prediction)."""
    base = cal.fitted_for(w)
    fit = cal.fits.get(fit_key(w))
    samples: dict[str, Any] = dict(base)
    method = "no fitted covariance for this workload's group: zero-width interval"
    family = architecture_of(hw)
    if not family.calibrated:  # its pricing reads no fitted coefficient: the covariance has nothing to move
        fit = None
        method = (f"none: the {family.name} family's pricing reads no fitted coefficient, so the calibration's "
                  f"covariance gives a zero-width interval; its error against silicon is `pimmodel validate "
                  f"--group {','.join(family.validation_groups) or 'hardware'}`")
    if fit is not None and fit.names:
        rng = np.random.default_rng(seed)
        theta = rng.multivariate_normal(np.asarray(fit.values), fit.covariance_matrix(), size=draws,
                                        check_valid="ignore")
        for k, name in enumerate(fit.names):
            lo, hi = fit.bounds[k] if fit.bounds else (-np.inf, np.inf)
            samples[name] = np.clip(theta[:, k], lo, hi)
        for tied, twin in fit.ties:
            samples[tied] = samples[twin]
        method = f"Monte Carlo over the fit covariance ({draws} draws, seed {seed})"
    phases = in_view(evaluate(w, hw, coefficients_for(w, samples)), view)
    phases = {p: np.asarray(v, dtype=float) for p, v in phases.items()}
    phases["total"] = total(phases)
    q = [(1 - level) / 2, (1 + level) / 2]
    out = {p: [float(v) for v in np.quantile(np.atleast_1d(phases[p]), q)] for p in (*PHASES, "total")}
    return {"level": level, "method": method, "calibration": cal.label, "per_epoch_s": out}
