"""Least-squares fit of the cost model's free, data-dependent coefficients to reference phase times.

Only ``COEFFICIENT_DEFAULTS`` names are ever free; hardware constants come from the spec and are held
fixed. Residuals are relative per phase, ``(model - reference) / reference``, over the phases that
depend on the coefficients (``FIT_PHASES``) and that are at least ``min_share`` of the point's epoch.
Standard errors come from the Jacobian at the optimum, ``cov = s^2 (J^T J)^-1`` with
``s^2 = SSR / (n - p)``; ``bootstrap`` refits on resampled observations for a second opinion.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from ..costmodel import COEFFICIENT_DEFAULTS
from ..errors import PimModelError
from .observations import MIN_SHARE, Observation, model_phases, relative_errors
from .result import LayoutFit, fit_key

FIT_PHASES = ("dpu_compute", "mram_wram_dma")
"""Phases whose expressions contain the coefficients (the host side and launches never do)."""
BOUNDS: dict[str, tuple[float, float]] = {
    "svm_hit_fraction": (0.0, 1.0),
    "sparse_write_fraction": (0.0, 1.0),
}


class CalibrationError(PimModelError):
    """A fit cannot be made (too few observations, unidentifiable coefficients)."""


@dataclass(frozen=True)
class _Problem:
    observations: Sequence[Observation]
    hw_values: Mapping[str, float]
    names: tuple[str, ...]
    base: Mapping[str, float]
    min_share: float
    ties: Mapping[str, str] = field(default_factory=dict)

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        coefficients = {**self.base, **dict(zip(self.names, theta, strict=True))}
        coefficients.update({tied: coefficients[twin] for tied, twin in self.ties.items()})
        predicted = model_phases(self.observations, self.hw_values, coefficients)
        errs = relative_errors(self.observations, predicted, FIT_PHASES, self.min_share)
        return np.concatenate([errs[p] for p in FIT_PHASES])


def _free_names(problem: _Problem, candidates: Sequence[str], start: np.ndarray
                ) -> tuple[tuple[str, ...], dict[str, str]]:
    """The candidates the residuals depend on (nonzero finite-difference Jacobian column), and the ties:
    a candidate whose column is parallel to a kept one (e.g. the dot and gradient multiply bytes of LR,
    which enter the time only as a sum) is fitted as one value with it."""
    r0 = problem.residuals(start)
    keep: list[str] = []
    columns: list[np.ndarray] = []
    ties: dict[str, str] = {}
    for k, name in enumerate(candidates):
        theta = start.copy()
        step = max(1e-3, 1e-3 * abs(theta[k]))
        theta[k] += step
        col = (problem.residuals(theta) - r0) / step
        norm = float(np.linalg.norm(col))
        if norm <= 1e-12:
            continue
        twin = next((keep[j] for j, c in enumerate(columns)
                     if abs(float(col @ c)) / (norm * float(np.linalg.norm(c))) > 1 - 1e-9), None)
        if twin is not None:
            ties[name] = twin
            continue
        keep.append(name)
        columns.append(col)
    return tuple(keep), ties


def _solve(problem: _Problem, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo = np.array([BOUNDS[n][0] for n in problem.names])
    hi = np.array([BOUNDS[n][1] for n in problem.names])
    res = least_squares(problem.residuals, np.clip(start, lo, hi), bounds=(lo, hi), method="trf",
                        x_scale="jac", xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return res.x, res.fun, res.jac


def fit_layout(observations: Sequence[Observation], hw_values: Mapping[str, float],
               free: Sequence[str] | None = None, start: Mapping[str, float] | None = None,
               min_share: float = MIN_SHARE, bootstrap: int = 0, rng: np.random.Generator | None = None) -> LayoutFit:
    """Fit the free coefficients to observations of ONE group (same layout, model and optimizer, or at
    least one layout); see the module docstring."""
    if not observations:
        raise CalibrationError("no observations to fit; the calibration design is empty")
    layouts = {ob.workload.dataset.layout for ob in observations}
    if len(layouts) != 1:
        raise CalibrationError(f"fit_layout needs observations of one layout, got {sorted(layouts)}")
    base = {**COEFFICIENT_DEFAULTS, **(start or {})}
    candidates = tuple(free) if free is not None else tuple(COEFFICIENT_DEFAULTS)
    probe = _Problem(observations, hw_values, candidates, base, min_share)
    names, ties = _free_names(probe, candidates, np.array([base[n] for n in candidates], dtype=float))
    if not names:
        # Nothing data-dependent in this group on this hardware (e.g. dense LR on UPMEM, whose 64-bit
        # multiply is straight-line code): the model's counts are exact, there is nothing to fit.
        return LayoutFit(names=(), values=(), std_errors=(), covariance=(), observations=len(observations))
    problem = _Problem(observations, hw_values, names, base, min_share, ties)
    x, resid, jac = _solve(problem, np.array([base[n] for n in names], dtype=float))
    n, p = resid.size, len(names)
    if n <= p:
        raise CalibrationError(f"{n} residuals cannot determine {p} coefficients; add design points")
    s2 = float(resid @ resid) / (n - p)
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    boot = _bootstrap(problem, x, bootstrap, rng) if bootstrap else None
    return LayoutFit(names=names, values=tuple(float(v) for v in x),
                     std_errors=tuple(float(np.sqrt(max(cov[i, i], 0.0))) for i in range(p)),
                     covariance=tuple(tuple(float(v) for v in row) for row in cov),
                     bounds=tuple(BOUNDS[nm] for nm in names), observations=len(observations), residuals=n,
                     bootstrap_std_errors=boot, ties=tuple(sorted(ties.items())))


def _bootstrap(problem: _Problem, x: np.ndarray, draws: int, rng: np.random.Generator | None
               ) -> tuple[float, ...]:
    """Std of the estimates over ``draws`` refits on observations resampled with replacement."""
    gen = rng if rng is not None else np.random.default_rng(0)
    obs = list(problem.observations)
    estimates = []
    for _ in range(draws):
        pick = gen.integers(0, len(obs), len(obs))
        sub = _Problem([obs[i] for i in pick], problem.hw_values, problem.names, problem.base, problem.min_share,
                       problem.ties)
        try:
            estimates.append(_solve(sub, x)[0])
        except ValueError:
            continue
    if len(estimates) < 2:
        return tuple(float("nan") for _ in x)
    return tuple(float(v) for v in np.std(np.asarray(estimates), axis=0, ddof=1))


def fit(observations: Sequence[Observation], hw_values: Mapping[str, float], bootstrap: int = 0,
        rng: np.random.Generator | None = None, min_share: float = MIN_SHARE,
        on_group: Callable[[str], None] | None = None) -> dict[str, LayoutFit]:
    """Fit each layout x model x optimizer group (``fit_key``) separately: key -> fit."""
    groups: dict[str, list[Observation]] = defaultdict(list)
    for ob in observations:
        groups[fit_key(ob.workload)].append(ob)
    fits = {}
    for key, obs in sorted(groups.items()):
        if on_group is not None:
            on_group(key)
        fits[key] = fit_layout(obs, hw_values, bootstrap=bootstrap, rng=rng, min_share=min_share)
    return fits
