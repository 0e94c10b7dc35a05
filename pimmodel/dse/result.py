"""The record of a stored study: trial counts, the feasible Pareto front (or best designs), the baseline,
and parameter importances. Plain data: the CLI renders it as tables, JSON or plots.

The front is Optuna's own ``study.best_trials`` (non-dominated among the feasible complete trials, as
optuna-dashboard shows it), with designs that reach the same objective values merged: trials that differ
only in parameters that do not matter (a link bandwidth without links) or that repeat a design would
otherwise fill the front with identical rows. Each design lists the trials it stands for.

Importances are PED-ANOVA (Optuna's ``PedAnovaImportanceEvaluator``): how much each parameter's
distribution differs between the best 10% of feasible designs and all of them, per objective. (fANOVA
takes about a minute per thousand trials here; PED-ANOVA a fraction of a second.)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial, TrialState

from .objective import Evaluator
from .space import OBJECTIVE_UNITS, Parameter, StudySpec, objective_label
from .storage import locate
from .study import CONSTRAINTS_KEY, constraints_of, is_feasible, lean_trial, quiet_optuna, stored_trials

BEST_SINGLE = 10
"""Designs listed for a single-objective study."""
SAME_DIGITS = 9
"""Objective values equal to this many significant digits are the same design."""
def parameter_label(p: Parameter) -> str:
    """'dpu_clock [MHz]': the study's parameter name with the unit its values are in."""
    return f"{p.name} [{p.unit}]" if p.unit and p.unit not in ("1", "") else p.name


def improvement(value: float, baseline: float, direction: str) -> float:
    """How many times better than the baseline (> 1 is better)."""
    if value <= 0 or baseline <= 0:
        return math.nan
    return baseline / value if direction == "minimize" else value / baseline


def front(spec: StudySpec, trials: Sequence[FrozenTrial]) -> list[list[FrozenTrial]]:
    """The feasible designs on the Pareto front (multi-objective; ``study.best_trials``) or the best ones
    (single objective), each as the trials that reach its objective values (first: the lowest number),
    ordered by the first objective."""
    complete = [t for t in trials if t.state == TrialState.COMPLETE and t.values]
    if not complete:
        return []
    sign = 1.0 if spec.directions[0] == "minimize" else -1.0
    if len(spec.objectives) == 1:
        chosen = sorted((t for t in complete if is_feasible(t)), key=lambda t: (sign * t.values[0], t.number))
    else:  # Optuna's front of lean copies (values and constraints: what it reads), mapped back to the trials
        study = optuna.create_study(directions=spec.directions)
        study.add_trials([_lean(t, params=False) for t in complete])
        chosen = sorted((complete[t.number] for t in study.best_trials), key=lambda t: (sign * t.values[0], t.number))
    groups: dict[tuple[float, ...], list[FrozenTrial]] = {}
    for t in chosen:
        groups.setdefault(tuple(float(f"{v:.{SAME_DIGITS}g}") for v in t.values), []).append(t)
    designs = [sorted(g, key=lambda t: t.number) for g in groups.values()]
    return designs[:BEST_SINGLE] if len(spec.objectives) == 1 else designs


def _lean(trial: FrozenTrial, params: bool) -> FrozenTrial:
    """A copy with only what Optuna's front (values, the constraints list) or importances (also params and
    distributions) read, cheap to deep-copy (``study.lean_trial``): ``add_trials`` deep-copies each trial, and
    the rest made up most of a report's time."""
    return lean_trial(trial, params=params, system=(CONSTRAINTS_KEY,))


def importances(spec: StudySpec, trials: Sequence[FrozenTrial]) -> dict[str, dict[str, float]]:
    """Per objective: parameter -> importance (sums to 1), from the feasible complete trials."""
    ok = [t for t in trials if t.state == TrialState.COMPLETE and t.values and is_feasible(t)]
    if len(ok) < 10:
        return {}
    study = optuna.create_study(directions=spec.directions)
    study.add_trials(_one_distribution_object([_lean(t, params=True) for t in ok]))
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


def _one_distribution_object(trials: list[FrozenTrial]) -> list[FrozenTrial]:
    """The lean copies with equal distributions of a parameter as one object: PED-ANOVA groups each parameter's
    trials by their distribution (a dict lookup per trial, parameter and objective), and a lookup compares
    distinct objects with Optuna's ``__eq__`` where the same object is found by identity (3,700 trials, two
    objectives: 0.50 -> 0.36 s). Equal means Optuna's equality: same class and attributes (categorical choices
    compared by Optuna itself, which tells 1 from True), once per trial and parameter here."""
    first: dict[str, BaseDistribution] = {}
    for t in trials:
        shared = {}
        for name, d in t.distributions.items():
            c = first.setdefault(name, d)
            shared[name] = c if c is d or c == d else d
        t._distributions = shared  # set on the lean copy only: the stored trial keeps its own dict
    return trials


def _target(k: int, direction: str) -> Callable[[FrozenTrial], float]:
    """Objective k as a lower-is-better value (PED-ANOVA rates reaching low targets)."""
    sign = 1.0 if direction == "minimize" else -1.0

    def target(t: FrozenTrial) -> float:
        return sign * t.values[k]

    return target


def summarize(spec: StudySpec, storage_url: str, evaluator: Evaluator | None = None,
              trials: Sequence[FrozenTrial] | None = None) -> dict[str, Any]:
    """The study record (what ``pimmodel explore --json`` prints)."""
    with quiet_optuna():
        return _summarize(spec, storage_url, evaluator, trials)


def _summarize(spec: StudySpec, storage_url: str, evaluator: Evaluator | None,
               trials: Sequence[FrozenTrial] | None) -> dict[str, Any]:
    trials = stored_trials(spec, storage_url) if trials is None else trials
    evaluator = evaluator or Evaluator(spec)
    base = evaluator.evaluate([{}])
    names = [o.name for o in spec.objectives]
    baseline: dict[str, float | None] = dict(zip(names, (float(v) for v in base.values[0]), strict=True))
    cnames = evaluator.constraint_names
    no_links = "links" in cnames and float(base.constraints[0][cnames.index("links")]) > 0
    infeasible = None
    if no_links:  # its penalty epoch is no time: the baseline cannot run the workloads' optimizer
        infeasible = f"{spec.baseline} lacks the direct DPU links the workloads' optimizer needs"
        baseline = {o.name: (baseline[o.name] if o.kind == "cost" else None) for o in spec.objectives}
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    location = locate(storage_url)
    return {
        "study": spec.name, "storage": location.shown, "description": spec.description,
        "trials": len(trials), "complete": len(complete), "feasible": sum(1 for t in complete if is_feasible(t)),
        "objectives": [{"name": o.name, "direction": o.direction, "dpus": o.dpus,
                        "unit": OBJECTIVE_UNITS.get(o.kind, ""), "label": objective_label(o.name, o.kind)}
                       for o in spec.objectives],
        "constraints": evaluator.constraint_names,
        "parameters": {p.name: {"unit": p.unit, "field": p.field, "label": parameter_label(p)}
                       for p in spec.parameters},
        "workloads": [c.label for c in spec.workloads],
        "front": [_design(group, spec, baseline, evaluator.constraint_names) for group in front(spec, trials)],
        "baseline": {"hardware": spec.baseline, "objectives": baseline, "infeasible": infeasible,
                     "epoch_s": dict(zip([c.label for c in spec.workloads],
                                         (None if no_links else float(x) for x in base.epoch_s[0]), strict=True))},
        "importances": importances(spec, trials),
        "dashboard": location.dashboard_command(),
        "optuna": location.optuna_command(spec.name),
    }


def _design(group: Sequence[FrozenTrial], spec: StudySpec, baseline: dict[str, float | None],
            constraint_names: Sequence[str]) -> dict[str, Any]:
    t = group[0]
    objectives = dict(zip([o.name for o in spec.objectives], (float(v) for v in t.values), strict=True))
    values = constraints_of(t)
    names = list(constraint_names) if len(constraint_names) == len(values) else [str(i) for i in range(len(values))]
    return {
        "number": t.number, "params": dict(t.params), "objectives": objectives,
        "improvement": {o.name: (None if baseline[o.name] is None else
                                 improvement(objectives[o.name], baseline[o.name], o.direction))  # type: ignore[arg-type]
                        for o in spec.objectives},
        "constraints": dict(zip(names, values, strict=True)), "epoch_s": t.user_attrs.get("epoch_s", {}),
        "same_objectives": [other.number for other in group[1:]],
    }
