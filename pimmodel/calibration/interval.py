"""Prediction intervals from the calibration's coefficient covariance (Monte Carlo through the compiled model).

Coefficient vectors are drawn from N(fit, covariance) of the workload's fit group, clipped to their bounds,
and the compiled model is evaluated once on all draws (vectorized); the interval of each phase and of the
total is the central ``level`` quantile range. It covers the coefficients' uncertainty only: hardware
constants are taken as exact, and the model's structural error is what ``pimmodel validate`` measures.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..costmodel.predict import PHASES, evaluate, phases_for_view
from ..specs import HardwareSpec, Workload
from .result import apply_density, density, fit_key, load_calibration


def interval(w: Workload, hw: HardwareSpec, view: str = "wall", calibration: str | None = None,
             level: float = 0.95, draws: int = 2000, seed: int = 0) -> dict[str, Any]:
    """``{"level", "method", "per_epoch_s": {phase: [low, high], "total": [low, high]}}``."""
    cal = load_calibration(calibration)
    base = cal.fitted_for(w)
    fit = cal.fits.get(fit_key(w))
    samples: dict[str, Any] = dict(base)
    method = "no fitted covariance for this workload's group: zero-width interval"
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
    raw = evaluate(w, hw.numeric(), apply_density(samples, density(w)))
    phases = phases_for_view(raw, view)
    total = sum(np.asarray(phases[p], dtype=float) for p in PHASES)
    q = [(1 - level) / 2, (1 + level) / 2]
    out = {p: [float(v) for v in np.quantile(np.asarray(phases[p], dtype=float), q)] for p in PHASES}
    out["total"] = [float(v) for v in np.quantile(np.asarray(total, dtype=float), q)]
    return {"level": level, "method": method, "calibration": cal.label, "per_epoch_s": out}
