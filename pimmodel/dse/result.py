"""The record of a stored study: trial counts, the feasible Pareto front (or best designs), the baseline,
and parameter importances. Plain data: the CLI renders it as tables, JSON or plots.

Importances are PED-ANOVA (Optuna's ``PedAnovaImportanceEvaluator``): how much each parameter's
distribution differs between the best 10% of feasible designs and all of them, per objective. (fANOVA
takes about a minute per thousand trials here; PED-ANOVA a fraction of a second.)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.trial import FrozenTrial, TrialState

from .objective import Evaluator
from .space import StudySpec
from .study import constraints_of, is_feasible, stored_trials

BEST_SINGLE = 10
"""Designs listed for a single-objective study."""


def pareto_mask(values: np.ndarray, directions: Sequence[str]) -> np.ndarray:
    """True for the rows of ``values`` (n, k) that no other row dominates."""
    signs = np.array([1.0 if d == "minimize" else -1.0 for d in directions])
    v = values * signs
    keep = np.ones(len(v), dtype=bool)
    for i in range(len(v)):
        if not keep[i]:
            continue
        dominated = np.all(v <= v[i], axis=1) & np.any(v < v[i], axis=1)
        if dominated.any():
            keep[i] = False
        else:
            worse = np.all(v >= v[i], axis=1) & np.any(v > v[i], axis=1)
            keep &= ~worse
    return keep


def improvement(value: float, baseline: float, direction: str) -> float:
    """How many times better than the baseline (> 1 is better)."""
    if value <= 0 or baseline <= 0:
        return math.nan
    return baseline / value if direction == "minimize" else value / baseline


def front(spec: StudySpec, trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
    """Feasible, complete trials on the Pareto front (multi-objective) or the best ones (single)."""
    ok = [t for t in trials if t.state == TrialState.COMPLETE and t.values and is_feasible(t)]
    if not ok:
        return []
    values = np.array([t.values for t in ok], dtype=float)
    if len(spec.objectives) == 1:
        order = np.argsort(values[:, 0] * (1 if spec.directions[0] == "minimize" else -1))
        return [ok[i] for i in order[:BEST_SINGLE]]
    mask = pareto_mask(values, spec.directions)
    chosen = [t for t, m in zip(ok, mask, strict=True) if m]
    return sorted(chosen, key=lambda t: t.values[0] * (1 if spec.directions[0] == "minimize" else -1))


def importances(spec: StudySpec, trials: Sequence[FrozenTrial]) -> dict[str, dict[str, float]]:
    """Per objective: parameter -> importance (sums to 1), from the feasible complete trials."""
    ok = [t for t in trials if t.state == TrialState.COMPLETE and t.values and is_feasible(t)]
    if len(ok) < 10:
        return {}
    study = optuna.create_study(directions=spec.directions)
    study.add_trials(ok)
    out: dict[str, dict[str, float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, obj in enumerate(spec.objectives):
            if obj.kind == "cost" and len(spec.objectives) > 1:
                continue
            try:
                imp = optuna.importance.get_param_importances(
                    study, evaluator=optuna.importance.PedAnovaImportanceEvaluator(),
                    target=_target(k, obj.direction))
            except (RuntimeError, ValueError):
                continue
            out[obj.name] = {p: round(float(v), 4) for p, v in imp.items()}
    return out


def _target(k: int, direction: str) -> Callable[[FrozenTrial], float]:
    """Objective k as a lower-is-better value (PED-ANOVA rates reaching low targets)."""
    sign = 1.0 if direction == "minimize" else -1.0

    def target(t: FrozenTrial) -> float:
        return sign * t.values[k]

    return target


def summarize(spec: StudySpec, storage_url: str, evaluator: Evaluator | None = None,
              trials: Sequence[FrozenTrial] | None = None) -> dict[str, Any]:
    """The study record (what ``pimmodel explore --json`` prints)."""
    trials = stored_trials(spec, storage_url) if trials is None else trials
    evaluator = evaluator or Evaluator(spec)
    base = evaluator.evaluate([{}])
    names = [o.name for o in spec.objectives]
    baseline = dict(zip(names, (float(v) for v in base.values[0]), strict=True))
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    best = front(spec, trials)
    return {
        "study": spec.name, "storage": storage_url, "description": spec.description,
        "trials": len(trials), "complete": len(complete), "feasible": sum(1 for t in complete if is_feasible(t)),
        "objectives": [{"name": o.name, "direction": o.direction, "dpus": o.dpus} for o in spec.objectives],
        "workloads": [c.label for c in spec.workloads],
        "front": [_design(t, spec, baseline) for t in best],
        "baseline": {"hardware": spec.baseline, "objectives": baseline,
                     "epoch_s": dict(zip([c.label for c in spec.workloads], (float(x) for x in base.epoch_s[0]),
                                         strict=True))},
        "importances": importances(spec, trials),
    }


def _design(t: FrozenTrial, spec: StudySpec, baseline: dict[str, float]) -> dict[str, Any]:
    objectives = dict(zip([o.name for o in spec.objectives], (float(v) for v in t.values), strict=True))
    return {
        "number": t.number, "params": dict(t.params), "objectives": objectives,
        "improvement": {o.name: improvement(objectives[o.name], baseline[o.name], o.direction)
                        for o in spec.objectives},
        "constraints": constraints_of(t), "epoch_s": t.user_attrs.get("epoch_s", {}),
    }
