"""Optuna wiring: run a study (resumable, seeded, several local worker processes), summarize it.

The sampler runs on an in-memory shadow of the study: each batch of ``spec.batch`` trials is asked
from it, scored in one vectorized pass (``objective.Evaluator``), told back, then written to the
persistent storage in one transaction (``storage.TrialStore``). Before each batch the shadow takes in the
trials other workers wrote, so N processes on one storage share what they learn; each writes only its
own trials (no duplicates). Re-running with the same study name resumes it: the stored trials seed the
sampler and the trial budget counts new trials. A trial counts once its batch is committed.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
from optuna.trial import BaseTrial, FrozenTrial, TrialState

from ..errors import StudyError
from .objective import Evaluator
from .space import Parameter, StudySpec, load_study
from .storage import TrialStore, open_storage

DEFAULT_STORAGE = "sqlite:///pimmodel-studies.db"
"""An SQLite file in the current directory."""
Progress = Callable[[int, float | None], None]

optuna.logging.set_verbosity(optuna.logging.WARNING)


@dataclass(frozen=True, slots=True)
class RunResult:
    study: str
    storage: str
    added: int
    elapsed_s: float


def suggest(trial: BaseTrial, parameters: Sequence[Parameter]) -> dict[str, Any]:
    """Ask ``trial`` for every parameter (values in the study's units)."""
    out: dict[str, Any] = {}
    for p in parameters:
        if p.kind == "choice":
            out[p.name] = trial.suggest_categorical(p.name, list(p.choices))
        elif p.kind == "int":
            out[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            out[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return out


def objective_function(evaluator: Evaluator) -> Callable[[BaseTrial], tuple[float, ...]]:
    """A classic one-trial Optuna objective (for ``study.optimize`` and ``FixedTrial``); it stores the
    constraint values in the trial's user attribute ``constraints``."""

    def objective(trial: BaseTrial) -> tuple[float, ...]:
        scores = evaluator.evaluate([suggest(trial, evaluator.parameters)])
        set_constraints(trial, evaluator.constraint_names, scores.constraints[0])
        return tuple(float(v) for v in scores.values[0])

    return objective


_NAMED_CONSTRAINTS = hasattr(optuna.trial.Trial, "set_constraint")
"""Optuna >= 5 stores named constraints on the trial; older versions take a sampler constraints_func."""


def set_constraints(trial: BaseTrial, names: Sequence[str], values: Sequence[float]) -> None:
    if _NAMED_CONSTRAINTS:
        for name, value in zip(names, values, strict=True):
            trial.set_constraint(name, float(value))
    else:
        trial.set_user_attr("constraints", [float(v) for v in values])


def constraints_of(trial: FrozenTrial) -> list[float]:
    """A finished trial's constraint values (<= 0 is feasible)."""
    named = getattr(trial, "constraints", None)
    if isinstance(named, dict):
        return [float(v) for v in named.values()]
    return [float(v) for v in trial.user_attrs.get("constraints", [])]


def is_feasible(trial: FrozenTrial) -> bool:
    return all(c <= 0 for c in constraints_of(trial))


def make_sampler(spec: StudySpec, seed: int | None) -> optuna.samplers.BaseSampler:
    extra: dict[str, Any] = {} if _NAMED_CONSTRAINTS else {"constraints_func": constraints_of}
    if spec.sampler == "nsga2":
        return optuna.samplers.NSGAIISampler(population_size=max(spec.batch, 20), seed=seed, **extra)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=spec.batch, **extra)


def open_study(spec: StudySpec, storage_url: str) -> tuple[optuna.Study, TrialStore]:
    """Create or load the stored study; refuse one whose objectives differ."""
    storage = open_storage(storage_url)
    names = [o.name for o in spec.objectives]
    try:
        study = optuna.create_study(study_name=spec.name, storage=storage, directions=spec.directions,
                                    load_if_exists=True)
    except ValueError as exc:
        raise StudyError(f"study {spec.name!r} in {storage_url}: {exc}") from None
    stored = study.user_attrs.get("objectives")
    if stored is None:
        study.set_user_attr("objectives", names)
        study.set_user_attr("parameters", [p.name for p in spec.parameters])
    elif stored != names or [d.name.lower() for d in study.directions] != spec.directions:
        raise StudyError(f"study {spec.name!r} in {storage_url} has objectives {stored}, the study file {names}; "
                         "rename the study or use another --storage")
    return study, TrialStore(storage, study._study_id)


def run(spec: StudySpec, storage_url: str = DEFAULT_STORAGE, trials: int | None = None,
        timeout_s: float | None = None, seed: int | None = None, progress: Progress | None = None) -> RunResult:
    """Run ``trials`` new trials (default: the study's) in this process."""
    budget = spec.trials if trials is None else trials
    seed = spec.seed if seed is None else seed
    _, store = open_study(spec, storage_url)
    shadow = optuna.create_study(directions=spec.directions, sampler=make_sampler(spec, seed))
    shadow.add_trials(store.read_new())
    evaluator = Evaluator(spec)
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    start, added = time.perf_counter(), 0
    while added < budget and (timeout_s is None or time.perf_counter() - start < timeout_s):
        batch = [shadow.ask() for _ in range(min(spec.batch, budget - added))]
        store.append(_score(evaluator, shadow, batch, tag))
        added += len(batch)
        others = [t for t in store.read_new() if t.user_attrs.get("worker") != tag]
        if others:
            shadow.add_trials(others)
        if progress is not None:
            progress(added, _best(shadow, spec))
    return RunResult(spec.name, storage_url, added, time.perf_counter() - start)


def _score(evaluator: Evaluator, shadow: optuna.Study, batch: list[optuna.Trial], tag: str) -> list[FrozenTrial]:
    scores = evaluator.evaluate([suggest(t, evaluator.parameters) for t in batch])
    labels = [c.label for c in evaluator.spec.workloads]
    frozen = []
    for i, trial in enumerate(batch):
        set_constraints(trial, evaluator.constraint_names, scores.constraints[i])
        trial.set_user_attr("worker", tag)
        trial.set_user_attr("epoch_s", dict(zip(labels, (float(x) for x in scores.epoch_s[i]), strict=True)))
        values = [float(v) for v in scores.values[i]]
        if all(np.isfinite(values)):
            frozen.append(shadow.tell(trial, values))
        else:
            frozen.append(shadow.tell(trial, state=TrialState.FAIL))
    return frozen


def _best(study: optuna.Study, spec: StudySpec) -> float | None:
    """Best feasible value of the first objective so far (the live value of the progress bar)."""
    sign = 1.0 if spec.directions[0] == "minimize" else -1.0
    best = None
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if t.values and is_feasible(t):
            v = t.values[0]
            if best is None or sign * v < sign * best:
                best = v
    return best


def _worker(path: str, storage_url: str, trials: int, timeout_s: float | None, seed: int | None) -> None:
    run(load_study(path), storage_url, trials, timeout_s, seed)


def run_workers(spec: StudySpec, storage_url: str, trials: int, timeout_s: float | None, seed: int | None,
                workers: int, poll: Callable[[], None] | None = None) -> RunResult:
    """``workers`` local processes on one storage, the trial budget split between them; worker i is
    seeded with seed + i."""
    if workers <= 1:
        return run(spec, storage_url, trials, timeout_s, seed)
    open_study(spec, storage_url)  # create it once, before the workers race to
    ctx = multiprocessing.get_context("spawn")
    shares = [trials // workers + (1 if i < trials % workers else 0) for i in range(workers)]
    procs = [ctx.Process(target=_worker, args=(spec.path, storage_url, n, timeout_s,
                                               None if seed is None else seed + i)) for i, n in enumerate(shares)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    while any(p.is_alive() for p in procs):
        if poll is not None:
            poll()
        time.sleep(0.3)
    failed = [p.exitcode for p in procs if p.exitcode]
    if failed:
        raise StudyError(f"{len(failed)} of {workers} worker processes failed (exit codes {failed})")
    return RunResult(spec.name, storage_url, trials, time.perf_counter() - start)


def stored_trials(spec: StudySpec, storage_url: str) -> list[FrozenTrial]:
    """All finished trials of the stored study, in number order."""
    storage = open_storage(storage_url)
    try:
        study_id = storage.get_study_id_from_name(spec.name)
    except KeyError:
        raise StudyError(f"no study named {spec.name!r} in {storage_url}; run pimmodel explore first") from None
    return sorted(TrialStore(storage, study_id).read_new(), key=lambda t: t.number)
