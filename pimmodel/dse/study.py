"""Optuna wiring: run a study (resumable, seeded, several worker processes or machines), read it back.

The sampler runs on an in-memory shadow of the study: each batch of ``spec.batch`` trials is asked from
it, scored in one vectorized pass (``objective.Evaluator``), told back, then written to the persistent
storage (``storage.TrialStore``, Optuna's public API). Before each batch the shadow takes in the trials
other writers stored, so N processes on one storage, on one machine or many, share what they learn; each
writes only its own trials. A trial counts once it is stored.

Re-running a study name resumes it only when its definition (baseline, workloads, objectives,
constraints, parameters) is unchanged; the stored trials seed the sampler and the trial budget counts new
trials. Stored studies are dashboard-ready: objective names are the study's metric names, constraint
values are stored the way Optuna's samplers store them (the ``constraints`` list that ``best_trials``
and optuna-dashboard read), and the constraint names are a study user attribute.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import itertools
import json
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import FrameType
from typing import Any

import numpy as np
import optuna
from optuna.trial import BaseTrial, FrozenTrial, TrialState

from ..errors import PimModelError, StudyError
from ..version import environment
from .objective import Evaluator
from .space import FAMILY_FIELD, OPTIMIZER_FIELD, STRUCTURAL_FIELD, Parameter, StudySpec
from .storage import DEFAULT_STORAGE, Depth, Location, TrialStore, locate, open_storage, storage_errors

Progress = Callable[[int, float | None], None]
"""Called after each stored batch with the trials stored by this run so far and the best feasible value
of the first objective (None: no feasible design yet)."""
Opened = Callable[["OpenedStudy", "int | None"], None]
"""Called once the study is open, with the number of trials already stored (None: not counted)."""
CONSTRAINTS_KEY = "constraints"
"""The trial system attribute Optuna's samplers (``constraints_func``) and optuna-dashboard read: a list
of constraint values, feasible when all are <= 0."""
RUN_KEY = "run:"
"""Study user attributes ``run:TAG``: the provenance of each run that wrote trials (a trial's ``worker``
user attribute is its TAG); ``provenance`` is the run that created the study."""
STOP_GRACE_S = 1.0
"""After Ctrl-C, how long worker processes (sent SIGTERM: they stop after the trial they write) get to end before
they are killed."""
WARM_POINTS = 4096
"""At most this many design points compile every configuration a search can reach before workers start."""

log = logging.getLogger(__name__)


@contextlib.contextmanager
def quiet_optuna() -> Iterator[None]:
    """Optuna's INFO lines (one per trial told to the in-memory sampler) silenced for the block, and its
    verbosity put back afterwards: nothing here changes the caller's logging for good."""
    previous = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(max(previous, optuna.logging.WARNING))
    try:
        yield
    finally:
        optuna.logging.set_verbosity(previous)


@dataclass(frozen=True, slots=True)
class RunResult:
    study: str
    storage: str
    """The storage as shown to users (absolute file path, no password)."""
    added: int
    """New trials stored by this run (this process and its workers)."""
    elapsed_s: float
    """Wall time of this run's trials."""
    interrupted: bool = False
    """Stopped early on request (Ctrl-C); every counted trial is stored."""
    store: TrialStore | None = dataclasses.field(default=None, compare=False, repr=False)
    """The study as this process wrote and read it (its storage already holds what it has read: reading the
    study back through it skips opening and replaying the storage again); None where not kept."""

    def stored_trials(self) -> list[FrozenTrial] | None:
        """All finished trials of the study now (as ``study.stored_trials`` reads them), through ``store``; None
        without one."""
        return None if self.store is None else self.store.read_all()


@dataclass(frozen=True, slots=True)
class OpenedStudy:
    study: optuna.Study
    store: TrialStore
    location: Location
    existed: bool
    """The study was in the storage before (this run resumes it)."""


# ---------------------------------------------------------------- trials
def suggest(trial: BaseTrial, parameters: Sequence[Parameter]) -> dict[str, Any]:
    """Ask ``trial`` for every parameter (values in the study's units); with a family axis, the family first and
    then only that family's parameters (define-by-run: a parameter of another family is not asked)."""
    out: dict[str, Any] = {}
    axis = next((p for p in parameters if p.field == FAMILY_FIELD), None)
    if axis is not None:
        out[axis.name] = trial.suggest_categorical(axis.name, list(axis.choices))
    for p in parameters:
        if axis is not None and (p is axis or getattr(p, "family", out[axis.name]) != out[axis.name]):
            continue
        if p.kind == "choice":
            out[p.name] = trial.suggest_categorical(p.name, list(p.choices))
        elif p.kind == "int":
            out[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            out[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return out


def objective_function(evaluator: Evaluator) -> Callable[[BaseTrial], tuple[float, ...]]:
    """A classic one-trial Optuna objective (for ``study.optimize`` and ``FixedTrial``); it sets the
    trial's named constraints."""

    def objective(trial: BaseTrial) -> tuple[float, ...]:
        scores = evaluator.evaluate([suggest(trial, evaluator.parameters)])
        for name, value in zip(evaluator.constraint_names, scores.constraints[0], strict=True):
            trial.set_constraint(name, float(value))
        return tuple(float(v) for v in scores.values[0])

    return objective


def constraints_of(trial: FrozenTrial) -> list[float]:
    """A finished trial's constraint values (<= 0 is feasible), in either of Optuna's two formats."""
    return [float(v) for v in trial.constraints.values()]


def is_feasible(trial: FrozenTrial) -> bool:
    return all(c <= 0 for c in constraints_of(trial))


def stored_form(trial: FrozenTrial) -> FrozenTrial:
    """``trial`` as it is written: its named constraints (``constraints:NAME``, which optuna-dashboard does
    not read) become the ``constraints`` list, in the order of the study's ``constraint_names``."""
    system = {k: v for k, v in trial.system_attrs.items() if not k.startswith(f"{CONSTRAINTS_KEY}:")}
    if trial.constraints:
        system[CONSTRAINTS_KEY] = [float(v) for v in trial.constraints.values()]
    return FrozenTrial(number=trial.number, state=trial.state, value=None, values=trial.values,
                       datetime_start=trial.datetime_start, datetime_complete=trial.datetime_complete,
                       params=trial.params, distributions=trial.distributions, user_attrs=trial.user_attrs,
                       system_attrs=system, intermediate_values={}, trial_id=0)


def population_size(spec: StudySpec) -> int:
    """NSGA-II's population: one batch (at least 20)."""
    return max(spec.batch, 20)


def make_sampler(spec: StudySpec, seed: int | None) -> optuna.samplers.BaseSampler:
    if spec.sampler == "nsga2":
        return optuna.samplers.NSGAIISampler(population_size=population_size(spec), seed=seed)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=spec.batch)


# ---------------------------------------------------------------- the study's definition
def definition(spec: StudySpec) -> dict[str, Any]:
    """What the study's trials mean: baseline, view, workloads, objectives, constraints, parameters. The
    name, budget, seed, batch, sampler and description are left out: changing them does not change what a
    stored trial says."""
    raw = {"baseline": spec.baseline, "view": spec.view,
           "workloads": [dataclasses.asdict(c) for c in spec.workloads],
           "objectives": [dataclasses.asdict(o) for o in spec.objectives],
           "constraints": dataclasses.asdict(spec.constraints),
           "parameters": {p.name: dataclasses.asdict(p) for p in spec.parameters}}
    return dict(json.loads(json.dumps(raw)))


def fingerprint(defn: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(defn, sort_keys=True).encode()).hexdigest()


def _changes(stored: dict[str, Any], current: dict[str, Any]) -> str:
    """The parts of a definition that differ, e.g. 'parameters dpu_clock, wram; constraints'."""
    parts = []
    for key in sorted(set(stored) | set(current)):
        a, b = stored.get(key), current.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict) and key == "parameters":
            names = sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))
            parts.append(f"parameters {', '.join(names)}")
        else:
            parts.append(key)
    return "; ".join(parts) or "unknown"


# ---------------------------------------------------------------- opening
def open_study(spec: StudySpec, storage_url: str, resume_anyway: bool = False,
               evaluator: Evaluator | None = None, provenance: Mapping[str, Any] | None = None) -> OpenedStudy:
    """Create the stored study, or load it when its definition is unchanged (or ``resume_anyway``); any
    number of writers may do so at the same moment (Optuna's ``load_if_exists`` and ``storage.open_storage``
    settle the races)."""
    location = locate(storage_url)
    storage = open_storage(storage_url)
    with storage_errors(location), quiet_optuna():
        try:
            storage.get_study_id_from_name(spec.name)
            existed = True
        except KeyError:
            existed = False
        try:
            study = optuna.create_study(study_name=spec.name, storage=storage, directions=spec.directions,
                                        load_if_exists=True)
        except ValueError as exc:
            raise StudyError(f"study {spec.name!r} in {location.shown}: {exc}") from None
        if existed:
            _check_definition(spec, study, location, resume_anyway)
        _describe(spec, study, evaluator or Evaluator(spec), provenance)
        study_id = storage.get_study_id_from_name(spec.name)
    return OpenedStudy(study, TrialStore(storage, study_id, location), location, existed)


def _check_definition(spec: StudySpec, study: optuna.Study, location: Location, resume_anyway: bool) -> None:
    names = [o.name for o in spec.objectives]
    attrs = study.user_attrs
    stored_names = attrs.get("objectives", names)
    directions = [d.name.lower() for d in study.directions]
    if stored_names != names or directions != spec.directions:
        raise StudyError(f"study {spec.name!r} in {location.shown} has objectives {stored_names}, the study file "
                         f"{names}; give the study a new name in [study] or use another --storage")
    stored = attrs.get("definition")
    current = definition(spec)
    if stored is None or stored == current or resume_anyway:
        return
    raise StudyError(f"study {spec.name!r} in {location.shown} was defined differently ({_changes(stored, current)}"
                     " changed); give the study a new name in [study], or pass --resume-anyway to add these "
                     "trials to it")


def _describe(spec: StudySpec, study: optuna.Study, evaluator: Evaluator,
              provenance: Mapping[str, Any] | None = None) -> None:
    """Name the objectives with their units (optuna-dashboard's axis titles) and record the definition and the
    provenance of the run that creates the study, once."""
    names = [o.name for o in spec.objectives]
    attrs = study.user_attrs
    defn = definition(spec)
    if attrs.get("definition") is None:
        if "provenance" not in attrs:
            study.set_user_attr("provenance", dict(provenance) if provenance is not None else environment())
        study.set_user_attr("definition", defn)
        study.set_user_attr("definition_sha256", fingerprint(defn))
        study.set_user_attr("objectives", names)
        study.set_user_attr("constraint_names", evaluator.constraint_names)
        study.set_user_attr("parameters", [p.name for p in spec.parameters])
    labels = [o.label for o in spec.objectives]  # with units: optuna-dashboard's axis and column titles
    if study.metric_names != labels:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(labels)


def stored_trials(spec: StudySpec, storage_url: str) -> list[FrozenTrial]:
    """All finished trials of the stored study, in number order; a missing storage or study is an error."""
    location = locate(storage_url)
    storage = open_storage(storage_url, must_exist=True)
    with storage_errors(location), quiet_optuna():
        try:
            study_id = storage.get_study_id_from_name(spec.name)
        except KeyError:
            names = sorted(s.study_name for s in storage.get_all_studies())
            have = f" (it has: {', '.join(names)})" if names else " (it has no study)"
            raise StudyError(f"no study named {spec.name!r} in {location.shown}{have}; run pimmodel explore "
                             "first") from None
    return TrialStore(storage, study_id, location).read_all()


# ---------------------------------------------------------------- running
def run(spec: StudySpec, storage_url: str = DEFAULT_STORAGE, trials: int | None = None,
        timeout_s: float | None = None, seed: int | None = None, progress: Progress | None = None,
        resume_anyway: bool = False, stop: Callable[[], bool] | None = None,
        opened: Opened | None = None, provenance: Mapping[str, Any] | None = None) -> RunResult:
    """Run ``trials`` new trials (default: the study's) in this process; ``stop()`` true ends the run after
    the trial being written (a ``StopRequest`` as ``stop`` also ends it at once, outside a write, when its
    signal arrives: every trial counted is stored). ``provenance`` (``pimmodel.api.provenance``'s record; by
    default what ``version.environment`` knows) is stored with the study."""
    budget = spec.trials if trials is None else trials
    seed = spec.seed if seed is None else seed
    with quiet_optuna():
        evaluator = Evaluator(spec)
        study = open_study(spec, storage_url, resume_anyway, evaluator, provenance)
        return _trials(spec, study, evaluator, budget, timeout_s, seed, progress, stop, opened, provenance)


def _trials(spec: StudySpec, study: OpenedStudy, evaluator: Evaluator, budget: int, timeout_s: float | None,
            seed: int | None, progress: Progress | None, stop: Callable[[], bool] | None, opened: Opened | None,
            provenance: Mapping[str, Any] | None, launch: Callable[[], None] | None = None,
            claim: Callable[[int], int] | None = None) -> RunResult:
    """``run``'s trials on an opened study; ``launch()`` (``run_workers``: let the other worker processes start)
    is called once the stored trials are counted, before this process's first trial. ``claim(n)`` (a budget
    shared with other processes, ``_Claims``) grants up to n more trials, 0 once the budget is spent; without it
    the budget is ``budget``."""
    added, stopped = 0, False
    store = study.store
    shadow = Shadow(spec, seed)
    stored = store.read_all()
    if opened is not None:
        opened(study, len(stored))
    if launch is not None:
        launch()
    shadow.add(stored)
    best = _best(stored, spec)  # kept up to date batch by batch: the progress line never rescans the study
    tag = f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    _record_run(study, tag, provenance, seed)
    start = time.perf_counter()
    try:
        while added < budget and (timeout_s is None or time.perf_counter() - start < timeout_s):
            if stop is not None and stop():
                stopped = True
                break
            n = min(spec.batch, budget - added) if claim is None else claim(spec.batch)
            if n <= 0:
                break
            batch = [shadow.study.ask() for _ in range(n)]
            scored = _score(evaluator, shadow.study, batch, tag)
            store.append(scored, stop)
            added = store.written
            others = store.read_new()
            shadow.add(others)
            best = _best([*scored, *others], spec, best)
            if progress is not None:
                progress(added, best)
    except KeyboardInterrupt:  # a StopRequest's signal outside a write: every trial written is counted
        stopped = True
        added = store.written  # a signal between two writes of a batch, or after the batch's last one
        if progress is not None:
            progress(added, None)
    stopped = stopped or (stop is not None and stop())
    return RunResult(spec.name, study.location.shown, added, time.perf_counter() - start, stopped, store)


def _record_run(study: OpenedStudy, tag: str, provenance: Mapping[str, Any] | None, seed: int | None) -> None:
    """The provenance of this run as the study user attribute ``run:TAG`` (its trials carry ``worker`` =
    TAG), and as ``provenance`` when the study has none yet (the run that created it)."""
    record = dict(provenance) if provenance is not None else {**environment(), "seed": seed}
    with storage_errors(study.location):
        study.study.set_user_attr(f"{RUN_KEY}{tag}", record)
        if "provenance" not in study.study.user_attrs:
            study.study.set_user_attr("provenance", record)


SHADOW_POPULATIONS = 10
"""NSGA-II's shadow is trimmed once it holds this many populations of trials more than it kept (``Shadow``)."""


class LeanTrial(FrozenTrial):
    """A finished trial whose deep copy copies its containers and shares their values (floats, strings, the
    constraint list and distribution objects, which neither Optuna nor pimmodel changes in place once a trial is
    finished). An in-memory study deep-copies every trial it is given (``add_trial``) and ``study.trials`` (which
    ``best_trials`` reads) every trial it returns; for a trial read from storage most of that went to copying its
    20-odd distribution objects one by one: 4,000 trials 0.72 s, as ``LeanTrial`` 0.04 s. Samplers,
    ``best_trials`` and the importance evaluators read it as the ``FrozenTrial`` it is."""

    def __deepcopy__(self, memo: dict[int, Any]) -> LeanTrial:
        new = copy.copy(self)
        new._params = dict(self._params)
        new._distributions = dict(self._distributions)
        new._user_attrs = dict(self._user_attrs)
        new._system_attrs = dict(self._system_attrs)
        new.intermediate_values = dict(self.intermediate_values)
        if self._values is not None:
            new._values = list(self._values)
        return new


def lean_trial(trial: FrozenTrial, params: bool = True, system: Sequence[str] | None = None) -> LeanTrial:
    """A ``LeanTrial`` copy of ``trial`` without its user attributes (samplers, fronts and importances never read
    them), without its parameters unless ``params``, and with only the ``system`` attributes named (None: all)."""
    lean = LeanTrial.__new__(LeanTrial)
    lean.__dict__.update(trial.__dict__)
    lean._user_attrs = {}
    if not params:
        lean._params, lean._distributions = {}, {}
    if system is not None:
        lean._system_attrs = {k: v for k, v in trial.system_attrs.items() if k in system}
    return lean


class Shadow:
    """The sampler's in-memory study. NSGA-II reads only its last generations: the current one, the one
    before it and its parents (the elite of everything before, which it carries from generation to generation).
    Once the shadow holds ``SHADOW_POPULATIONS`` populations more than its last rebuild kept, it is rebuilt from
    those alone (through the sampler's public ``get_population`` / ``get_parent_population``), so the sampler's
    per-trial cost stays flat as the study grows, and a resumed study starts from them instead of replaying its
    whole history. TPE models every trial by design: its shadow keeps them all. Trials enter without their user
    attributes (samplers read parameters, values, states and system attributes only), as ``LeanTrial``s:
    cheap to copy, so taking in another writer's trials costs little more than this writer's own."""

    def __init__(self, spec: StudySpec, seed: int | None) -> None:
        self.spec = spec
        self.seed = seed
        self._memory = optuna.storages.InMemoryStorage()
        self._count = 0
        self._kept = 0
        """Trials the last rebuild kept: the next one waits for ``SHADOW_POPULATIONS`` populations more, so
        with other writers' trials coming in (larger generations, more kept) a rebuild still pays for itself."""
        self.study = self._new()

    @property
    def sampler(self) -> optuna.samplers.BaseSampler:
        return self.study.sampler

    def _new(self) -> optuna.Study:
        """A new study with a new sampler (a sampler's caches belong to one study), seeded from the run's seed
        and the rebuild's number, so a seeded run stays reproducible."""
        seed = None if self.seed is None else self.seed + 7919 * self._count
        self._count += 1
        return optuna.create_study(storage=self._memory, study_name=f"shadow-{self._count}",
                                   directions=self.spec.directions, sampler=make_sampler(self.spec, seed))

    def add(self, trials: Sequence[FrozenTrial]) -> None:
        """Other writers' (or the stored) trials in; a parameter whose distribution changed (a study resumed
        with --resume-anyway) is a one-line error."""
        lean = [lean_trial(t) for t in trials]
        try:
            self.study.add_trials(lean)
        except ValueError as exc:
            raise StudyError(f"cannot resume: a stored trial does not fit this study file ({exc}); use a new "
                             "study name") from None
        self.trim()

    def trim(self) -> None:
        """Rebuild the study from the trials NSGA-II reads next, once it has grown past its bound."""
        sampler = self.sampler
        if not isinstance(sampler, optuna.samplers.NSGAIISampler):
            return
        trials = self.study.get_trials(deepcopy=False)
        if len(trials) < self._kept + SHADOW_POPULATIONS * population_size(self.spec):
            return
        complete = [t for t in trials if t.state == TrialState.COMPLETE]
        if not complete or any(not t.state.is_finished() for t in trials):
            return  # between batches every asked trial is told; a pending one waits for the next trim
        last = max(sampler.get_trial_generation(self.study, t) for t in complete)
        keep: dict[int, FrozenTrial] = {}
        for generation in (last - 1, last):
            if generation >= 0:
                for t in (*sampler.get_parent_population(self.study, generation),
                          *sampler.get_population(self.study, generation)):
                    keep[t.number] = t
        old = self.study
        self.study = self._new()
        self.study.add_trials([lean_trial(keep[n]) for n in sorted(keep)])
        self._kept = len(keep)
        rebuilt = self.sampler
        assert isinstance(rebuilt, optuna.samplers.NSGAIISampler)
        for generation in range(1, last + 1):  # the elite chain rebuilt bottom-up: each level cached, no recursion
            rebuilt.get_parent_population(self.study, generation)
        optuna.delete_study(study_name=old.study_name, storage=self._memory)


def _score(evaluator: Evaluator, shadow: optuna.Study, batch: list[optuna.Trial], tag: str) -> list[FrozenTrial]:
    scores = evaluator.evaluate([suggest(t, evaluator.parameters) for t in batch])
    labels = [c.label for c in evaluator.spec.workloads]
    names = evaluator.constraint_names
    frozen = []
    for i, trial in enumerate(batch):
        for name, value in zip(names, scores.constraints[i], strict=True):
            trial.set_constraint(name, float(value))
        trial.set_user_attr("worker", tag)
        trial.set_user_attr("epoch_s", dict(zip(labels, (float(x) for x in scores.epoch_s[i]), strict=True)))
        values = [float(v) for v in scores.values[i]]
        finite = all(np.isfinite(values))
        frozen.append(stored_form(shadow.tell(trial, values if finite else None,
                                              state=TrialState.COMPLETE if finite else TrialState.FAIL)))
    return frozen


def _best(trials: Sequence[FrozenTrial], spec: StudySpec, best: float | None = None) -> float | None:
    """Best feasible value of the first objective among ``trials`` and ``best`` (the best of the trials seen
    before): the live value of the progress bar, folded in batch by batch."""
    sign = 1.0 if spec.directions[0] == "minimize" else -1.0
    for t in trials:
        if t.state == TrialState.COMPLETE and t.values and is_feasible(t):
            v = t.values[0]
            if best is None or sign * v < sign * best:
                best = v
    return best


# ---------------------------------------------------------------- Ctrl-C and worker processes
class StopRequest:
    """A signal (Ctrl-C's SIGINT; SIGTERM in a worker process) as a request to stop. Outside a write it stops
    at once (``KeyboardInterrupt``: nothing is being written); inside ``deferring()`` (one trial's write) the
    write ends whole first and the run stops after it. A second signal during a write interrupts at once.
    Callable: true once requested (or once ``also()`` is true)."""

    def __init__(self, signum: int = signal.SIGINT, also: Callable[[], bool] | None = None) -> None:
        self.signum = signum
        self.requested = False
        self._also = also
        self._previous: Any = None
        self._writing = Depth()

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(self.signum, self._handle)
        return self

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        again = self.requested
        self.requested = True
        if not self._writing or again:
            raise KeyboardInterrupt

    def deferring(self) -> AbstractContextManager[None]:
        """The block (one trial's write) is not cut by the signal; the stop happens after it."""
        return self._writing.entered()

    def __exit__(self, *_exc: object) -> None:
        if self._previous is not None:
            signal.signal(self.signum, self._previous)

    def __call__(self) -> bool:
        return self.requested or (self._also is not None and self._also())


def warm(evaluator: Evaluator) -> None:
    """Score one design of every structural choice the study searches (optimizer x link topology), so that
    every configuration's equations are compiled, and cached on disk, here and once: worker processes then
    load them instead of each compiling them in its first batch (minutes on a cold cache)."""
    params = evaluator.parameters
    varied = [p for p in params if p.kind == "choice" and p.field in (OPTIMIZER_FIELD, STRUCTURAL_FIELD)]
    if not varied:
        return
    base = {p.name: p.choices[0] if p.kind == "choice" else (int(p.low) if p.kind == "int" else p.low)
            for p in params}
    combos = itertools.islice(itertools.product(*(p.choices for p in varied)), WARM_POINTS)
    evaluator.evaluate([{**base, **dict(zip((p.name for p in varied), c, strict=True))} for c in combos])


TAIL_TRIALS = 10
"""The smallest share of the last trials a worker process claims (``_Claims``)."""


class _Claims:
    """The trial budget the worker processes of one run share: each claims its next batch under one lock (held
    for a few instructions, inside the claimer's ``deferring()`` so that its own signal cannot leave it held), so
    a process that started later, or runs slower, simply does fewer trials, and the total is the budget. Once
    fewer than a batch per process are left, a claim takes its share of what is left (at least ``TAIL_TRIALS``),
    so the processes end close together: with whole batches to the end, the run waited for the last one's
    batch, about half a batch's time (0.2-0.5 s of a 4,000-trial run on 2 cores)."""

    def __init__(self, ctx: Any, budget: int, workers: int) -> None:
        self.budget = budget
        self.workers = workers
        self.claimed = ctx.Value("q", 0)

    def __call__(self, want: int, stop: Any = None) -> int:
        with getattr(stop, "deferring", contextlib.nullcontext)(), self.claimed.get_lock():
            left = self.budget - self.claimed.value
            n = max(0, min(want, left, max(TAIL_TRIALS, -(-left // self.workers))))
            self.claimed.value += n
        return n


def _worker(spec: StudySpec, storage_url: str, claims: _Claims, timeout_s: float | None, seed: int | None,
            resume_anyway: bool, stop: Any, stored: Any, errors: Any, parent_pid: int,
            provenance: Mapping[str, Any] | None, slot: int, ready: Any) -> None:
    """One worker process: SIGINT is ignored (inherited from the parent); the parent's ``stop`` event, the
    parent's death or SIGTERM (the parent's last word) ends it after the trial it writes. It starts (imports)
    while the parent opens the study, and opens it itself once ``ready`` is set. Input problems go to the
    parent as one line, not a traceback."""

    def parent_says_stop() -> bool:
        return bool(stop.is_set()) or os.getppid() != parent_pid

    def progress(done: int, _best_value: float | None) -> None:
        stored[slot] = done  # this worker's own slot, set (not added to): a signal here cannot count twice

    try:
        with StopRequest(signal.SIGTERM, also=parent_says_stop) as request:
            while not ready.wait(0.05):
                if parent_says_stop():
                    raise KeyboardInterrupt  # the parent stopped before the trials began
            with quiet_optuna():
                evaluator = Evaluator(spec)
                study = open_study(spec, storage_url, resume_anyway, evaluator, provenance)
                _trials(spec, study, evaluator, claims.budget, timeout_s, seed, progress, request, None, provenance,
                        claim=lambda n: claims(n, request))
    except PimModelError as exc:
        errors.put(str(exc))
        raise SystemExit(2) from None
    except KeyboardInterrupt:  # SIGTERM while the study was opening: nothing of this worker's is stored
        pass
    # every write is whole (a journal batch is fsynced when it ends): end now, not after the interpreter's teardown
    # of everything the run built, which the parent, waiting for this process, would otherwise wait for too
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_workers(spec: StudySpec, storage_url: str, trials: int, timeout_s: float | None, seed: int | None,
                workers: int, progress: Progress | None = None, resume_anyway: bool = False,
                stop: Callable[[], bool] | None = None, opened: Opened | None = None,
                provenance: Mapping[str, Any] | None = None) -> RunResult:
    """``workers`` local processes on one storage sharing the trial budget (each claims its next batch: a
    process that starts later or runs slower does fewer); worker i is seeded with seed + i (one worker: ``run``
    in this process). This process is worker 0: it runs trials itself while ``workers - 1`` worker processes,
    started at once (their imports overlap its opening of the study), run theirs; so it has read every trial
    by the end, and the report reads the study back through it (``RunResult.stored_trials``) without replaying
    the storage. ``progress`` gets the trials stored by all of them so far and the best feasible value this
    process has seen; ``stop()`` true (or Ctrl-C here) ends every worker after the trial it writes, within
    ``STOP_GRACE_S``. The equations are compiled here, once, before the worker processes open the study."""
    if workers <= 1:
        return run(spec, storage_url, trials, timeout_s, seed, progress, resume_anyway, stop, opened, provenance)
    ctx = multiprocessing.get_context("spawn")
    # trials stored per worker: one slot each, one writer each, so no lock that a signal could leave held
    halt, ready, stored, errors = ctx.Event(), ctx.Event(), ctx.Array("q", workers, lock=False), ctx.SimpleQueue()
    claims = _Claims(ctx, trials, workers)
    procs = [ctx.Process(target=_worker, args=(spec, storage_url, claims, timeout_s,
                                               None if seed is None else seed + i, True, halt, stored, errors,
                                               os.getpid(), provenance, i, ready))
             for i in range(1, workers)]

    def others_failed() -> bool:
        return not errors.empty() or any(p.exitcode not in (None, 0) for p in procs)

    def mine(done: int, best: float | None) -> None:
        stored[0] = done
        if progress is not None:
            progress(int(sum(stored[:])), best)

    start = [time.perf_counter()]

    def launch() -> None:
        start[0] = time.perf_counter()
        ready.set()

    study: OpenedStudy | None = None
    interrupted = False
    _start_ignoring_sigint(procs)
    try:
        with quiet_optuna():
            evaluator = Evaluator(spec)
            warm(evaluator)
            study = open_study(spec, storage_url, resume_anyway, evaluator, provenance)  # before the workers
            _trials(spec, study, evaluator, trials, timeout_s, seed, mine, _Either(stop, others_failed), opened,
                    provenance, launch=launch, claim=lambda n: claims(n, stop))
        while any(p.is_alive() for p in procs):
            if (stop is not None and stop()) or not errors.empty():
                halt.set()
            if progress is not None:
                progress(int(sum(stored[:])), None)
            time.sleep(0.05)
    except KeyboardInterrupt:  # Ctrl-C (a StopRequest as ``stop``): the workers stop after their writes
        if study is None:
            raise  # before the study was open (compiling the equations): the workers never began
        interrupted = True
    finally:
        if study is not None:
            stored[0] = study.store.written
        halt.set()
        _stop(procs, at_once=interrupted or study is None or (stop is not None and stop()))
    messages = []
    while not errors.empty():
        messages.append(errors.get())
    if messages:
        raise StudyError(f"{messages[0]} (in {len(messages)} of {workers} worker processes)")
    failed = [p.exitcode for p in procs if p.exitcode]
    interrupted = interrupted or (stop is not None and stop())
    if failed and not interrupted:
        raise StudyError(f"{len(failed)} of {workers} worker processes failed (exit codes {failed})")
    return RunResult(spec.name, study.location.shown, int(sum(stored[:])), time.perf_counter() - start[0],
                     interrupted, study.store)


class _Either:
    """A stop request (a ``StopRequest``, with its ``deferring()``, or any callable) or ``also()``."""

    def __init__(self, first: Callable[[], bool] | None, also: Callable[[], bool]) -> None:
        self.first = first
        self.also = also

    def __call__(self) -> bool:
        return bool(self.first is not None and self.first()) or self.also()

    def deferring(self) -> AbstractContextManager[Any]:
        return getattr(self.first, "deferring", contextlib.nullcontext)()


def _stop(procs: Sequence[multiprocessing.process.BaseProcess], at_once: bool) -> None:
    """End the workers (told to stop by the event): ``at_once`` (Ctrl-C) by SIGTERM, which a worker takes as a
    stop after the trial it writes, else after ``STOP_GRACE_S`` of waiting; SIGKILL for any still there
    ``STOP_GRACE_S`` later."""
    if not at_once:
        deadline = time.monotonic() + STOP_GRACE_S
        for p in procs:
            if p.pid is not None:
                p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.pid is not None and p.is_alive():
            p.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for p in procs:
        if p.pid is not None:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()


def _start_ignoring_sigint(procs: Sequence[multiprocessing.process.BaseProcess]) -> None:
    """Start the worker processes with SIGINT ignored (a terminal's Ctrl-C reaches the whole process
    group): the parent decides when they stop, so a worker is never cut in the middle of a write."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        for p in procs:
            p.start()
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


__all__ = ["DEFAULT_STORAGE", "OpenedStudy", "RunResult", "StopRequest", "constraints_of", "definition",
           "is_feasible", "make_sampler", "objective_function", "open_study", "quiet_optuna", "run", "run_workers",
           "stored_form", "stored_trials", "suggest", "warm"]
