"""Accuracy (dense, YFCC-like) or ROC AUC (sparse, Criteo-like) after each epoch, from training for real on a
reduced stand-in of the job.

What a curve keeps from the full job (``TrainingJob``): the algorithm, the model, each worker's batch per local
step (a DPU's or a CPU process's; GA-SGD: its share of the global batch), the learning-rate, decay and ADMM shifts
and the number of epochs. What it shrinks, the same way for every platform so that curves stay comparable
(``StandIn``): 8 workers instead of N DPUs or 128 processes, 1/k of each worker's rows (so 1/k of the local steps of
a full epoch: k = 16 dense, 64 sparse by default; at most 65,536 dense or 49,152 sparse rows per worker) and 64 of
4,096 dense features. A stand-in curve therefore
understates how far a full epoch gets; it says which optimizer and platform learns faster per epoch, not the
study's absolute accuracy. ``--stand-in-divisor 1`` runs every local step (slow).

- ``pim``: the emulator in Q31 fixed point with the workload's kernels (the study's quirks included);
- ``cpu`` / ``gpu``: the emulator in float64 with the PyTorch baselines' conventions (hinge margin 0.5; Criteo LR
  and SVM class weights 0.5 / 15, ``baseline/smodel.py``). The study's CPU ADMM penalises ``w + u - z`` inside the
  loss (L1 for LR); the stand-in runs PIM's ADMM in float64 instead, and says so.

Every curve is trained from ``StandIn.seeds`` seeds (3 by default: data, initial rows and shuffling differ): a
``Curve`` holds the mean per epoch and the lowest and highest seed (``low``, ``high``), and ``difference`` says
whether two curves' final values differ by more than the seeds' spread or lie "within noise".

The PIM SVM stand-in zig-zags from epoch to epoch because of the study's SVM kernels, not the emulator: their
margin constant is 2^-15 (``CONSTRAINT`` = 2^16 in Q31), not the 0.5 of the baselines, so the hinge fires only
on misclassified rows and the update acts like a perceptron's. Measured on the YFCC SVM MA-SGD stand-in (2048
DPUs' job, 8 workers, seeds 0-2, 10 epochs): mean |epoch-to-epoch accuracy change| 0.105 with the study's
kernels; 0.008 with margin 0.5; 0.073 with margin 2^-15 in float64 (so not the Q31 arithmetic); 0.075 with
margin 2^-15 and a 4x smaller learning rate (2^-8). The PIM curve keeps the study's margin (it is what the study's
kernels train); read a PIM-vs-CPU SVM difference only where ``difference`` says it exceeds the seeds' spread.

Curves are cached on disk (``$PIMMODEL_CACHE_DIR``, default ``~/.cache/pimmodel``), keyed by every input (one
entry per seed).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import check_known
from ..resources import cache_dir
from ..specs.optimizers import optimizer_info
from ..specs.workload import BASELINE_HINGE_MARGIN, STUDY_CLASS_WEIGHTS, check_positive_ints

PLATFORMS = ("pim", "cpu", "gpu")
CACHE_VERSION = 1
CRITEO_CLASS_WEIGHTS = STUDY_CLASS_WEIGHTS


@dataclass(frozen=True, slots=True)
class TrainingJob:
    """What decides a run's statistics, at the full deployment. ``batch_per_worker``: rows each worker takes per
    local step (GA-SGD: its share of the global batch; the GPU's single worker: the whole batch)."""

    platform: str
    model: str
    optimizer: str
    layout: str
    workers: int
    rows_per_worker: int
    batch_per_worker: int
    learning_rate_shift: int
    reg_shift: int
    admm_alpha_shift: int = 0
    task_epochs: int = 1
    epochs: int = 10
    kernels: str = "study"

    def __post_init__(self) -> None:
        check_known("platform", self.platform, PLATFORMS)
        check_positive_ints(self, ("workers", "rows_per_worker", "batch_per_worker", "epochs", "task_epochs"),
                            lambda key: f"training job: {key}")

    @property
    def steps_per_epoch(self) -> int:
        """Local steps per worker per epoch at the full deployment (the last batch may be partial)."""
        return self.task_epochs * -(-self.rows_per_worker // self.batch_per_worker)


@dataclass(frozen=True, slots=True)
class StandIn:
    """How a curve's training is reduced (the same for every platform of a comparison)."""

    workers: int = 8
    dense_divisor: int = 16
    sparse_divisor: int = 64
    dense_features: int = 64
    sparse_features: int = 100_000
    dense_max_rows: int = 65_536
    sparse_max_rows: int = 49_152
    """at most this many rows per stand-in worker (bounds the time of a curve; a job cut by it makes a smaller
    fraction of its steps, which its source says)."""
    seed: int = 0
    """the first seed; a curve trains ``seed``, ``seed + 1``, ... ``seed + seeds - 1``."""
    seeds: int = 3
    """how many seeds each curve is trained from (their spread is drawn and decides "within noise")."""

    def __post_init__(self) -> None:
        check_positive_ints(self, ("workers", "dense_divisor", "sparse_divisor", "dense_features", "sparse_features",
                                   "dense_max_rows", "sparse_max_rows", "seeds"), lambda key: f"stand-in {key}")

    def divisor(self, layout: str) -> int:
        return self.dense_divisor if layout == "dense" else self.sparse_divisor

    def features(self, layout: str) -> int:
        return self.dense_features if layout == "dense" else self.sparse_features

    def shape(self, job: TrainingJob) -> tuple[int, int, int]:
        """(workers, rows per worker, batch per worker) of the stand-in: at most ``workers`` workers, 1/k of each
        one's rows (at least one local batch). A float GA-SGD job on fewer workers (the GPU's one) is split over
        the stand-in's workers: averaging their gradients is the same update as one worker's whole batch."""
        workers, rows, batch = min(self.workers, job.workers), job.rows_per_worker, job.batch_per_worker
        if job.platform != "pim" and optimizer_info(job.optimizer).batch == "global" and workers < self.workers:
            split = self.workers // workers
            while split > 1 and batch % split:
                split //= 2
            workers, rows, batch = workers * split, -(-rows // split), batch // split
        cap = self.dense_max_rows if job.layout == "dense" else self.sparse_max_rows
        return workers, max(batch, min(cap, rows // self.divisor(job.layout))), batch

    def with_divisor(self, divisor: int) -> StandIn:
        return replace(self, dense_divisor=divisor, sparse_divisor=divisor)

    def describe(self, job: TrainingJob) -> str:
        workers, rows, batch = self.shape(job)
        steps = job.task_epochs * -(-rows // batch)
        return (f"{workers} workers x {rows:,} rows x {self.features(job.layout):,} features "
                f"({steps:,} of the full epoch's {job.steps_per_epoch:,} local steps)")


@dataclass(frozen=True)
class Curve:
    """The metric after each epoch of a stand-in (the mean over its seeds), its spread, and how it was obtained."""

    metric: str
    """``accuracy`` (test accuracy, dense data) or ``auc`` (test ROC AUC, sparse data, as the study reports)."""
    per_epoch: tuple[float, ...]
    source: str
    low: tuple[float, ...] = ()
    """the lowest seed's metric per epoch (empty: one run, no spread known)."""
    high: tuple[float, ...] = ()
    """the highest seed's metric per epoch."""
    seeds: tuple[int, ...] = ()

    @classmethod
    def of_seeds(cls, metric: str, runs: Sequence[Sequence[float]], source: str, seeds: Sequence[int]) -> Curve:
        """The mean, lowest and highest of several seeds' curves (each a metric per epoch)."""
        cols = list(zip(*runs, strict=True))
        return cls(metric, tuple(sum(c) / len(c) for c in cols), source, tuple(min(c) for c in cols),
                   tuple(max(c) for c in cols), tuple(seeds))

    @property
    def spread(self) -> tuple[float, ...]:
        """highest minus lowest seed per epoch (zeros when one run)."""
        return tuple(h - lo for lo, h in zip(self.low, self.high, strict=True)) if self.low else \
            tuple(0.0 for _ in self.per_epoch)

    def epochs_to(self, target: float) -> int | None:
        """The first epoch (1-based) whose metric reaches ``target``, or None."""
        return next((k + 1 for k, v in enumerate(self.per_epoch) if v >= target), None)

    @property
    def final(self) -> float:
        return self.per_epoch[-1]


def difference(a: Curve, b: Curve) -> dict[str, Any]:
    """How ``a``'s final metric compares with ``b``'s: the difference of the means, and ``verdict`` "higher" or
    "lower" only where the seeds' ranges at the last epoch do not overlap, else "within noise" (also when either
    curve has a single run: no spread is known, so no difference is claimed)."""
    diff = a.final - b.final
    known = bool(a.low and b.low)
    apart = known and (a.low[-1] > b.high[-1] or b.low[-1] > a.high[-1])
    verdict = ("higher" if diff > 0 else "lower") if apart else "within noise"
    return {"difference": diff, "spread_a": a.spread[-1], "spread_b": b.spread[-1], "verdict": verdict}


def metric_of(layout: str) -> str:
    return "accuracy" if layout == "dense" else "auc"


def _cache_path(key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return cache_dir("curves") / f"{digest}.json"


def _emulation(job: TrainingJob, s: StandIn) -> tuple[str, int, str, dict[str, int], Any]:
    """The emulator call that stands in for ``job``: dataset, workers, optimizer, hyper-parameters, options."""
    from ..emulator.api import Options  # the emulator loads only when a curve is computed (the CLI's cold start)

    workers, rows, batch = s.shape(job)
    shifts = {"learning_rate_shift": job.learning_rate_shift, "reg_shift": job.reg_shift}
    info = optimizer_info(job.optimizer)
    if info.batch == "global":
        hyper = {**shifts, "global_batch_size": batch * workers}
    else:
        hyper = {**shifts, "batch_size": batch}
        if info.keeps_duals:  # ADMM: its step alpha and the local epochs of each round
            hyper |= {"admm_alpha_shift": job.admm_alpha_shift, "task_epochs": job.task_epochs}
    pim = job.platform == "pim"
    options = Options(
        epochs=job.epochs, samples_per_dpu=rows, features=s.features(job.layout),
        arithmetic="fixed" if pim else "float64", seed=s.seed, kernels=job.kernels if pim else "corrected",
        svm_margin=None if pim or job.model != "svm" else BASELINE_HINGE_MARGIN,  # LR has no margin
        class_weights=None if pim or job.layout == "dense" else CRITEO_CLASS_WEIGHTS)
    dataset = "synthetic-yfcc" if job.layout == "dense" else "synthetic-criteo"
    return dataset, workers, job.optimizer, hyper, options


def _cache_key(job: TrainingJob, stand_in: StandIn) -> dict[str, Any]:
    dataset, workers, optimizer, hyper, options = _emulation(job, stand_in)
    return {"version": CACHE_VERSION, "dataset": dataset, "workers": workers, "model": job.model,
            "optimizer": optimizer, "hyper": hyper, "options": asdict(options)}


def _seeded(stand_in: StandIn) -> list[StandIn]:
    """One single-seed stand-in per seed of ``stand_in`` (their cache keys differ only by the seed)."""
    return [replace(stand_in, seed=stand_in.seed + i, seeds=1) for i in range(stand_in.seeds)]


def _combine(job: TrainingJob, stand_in: StandIn, runs: list[Curve]) -> Curve:
    seeds = [s.seed for s in _seeded(stand_in)]
    span = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"
    source = f"{runs[0].source}; mean of {span} (band: lowest to highest seed)"
    return Curve.of_seeds(metric_of(job.layout), [r.per_epoch for r in runs], source, seeds)


def _cached_one(job: TrainingJob, stand_in: StandIn) -> Curve | None:
    path = _cache_path(_cache_key(job, stand_in))
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Curve(metric_of(job.layout), tuple(float(v) for v in data["per_epoch"]), str(data["source"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged cache entry is recomputed and replaced
    return None


def cached(job: TrainingJob, stand_in: StandIn = StandIn()) -> Curve | None:
    """The cached curve of ``job``'s stand-in (every seed), or None if a seed has not been trained yet (nothing
    is trained)."""
    runs = [_cached_one(job, s) for s in _seeded(stand_in)]
    if any(r is None for r in runs):
        return None
    return _combine(job, stand_in, [r for r in runs if r is not None])


def untrained_epochs(job: TrainingJob, stand_in: StandIn = StandIn()) -> int:
    """Epochs ``curve`` would train for ``job`` (its seeds not cached yet, each ``job.epochs``): what a run's
    time estimate and progress count."""
    return sum(job.epochs for s in _seeded(stand_in) if _cached_one(job, s) is None)


def curve(job: TrainingJob, stand_in: StandIn = StandIn(), progress: Any = None) -> Curve:
    """The metric after each of ``job.epochs`` epochs of ``job``'s stand-in, the mean over its seeds with their
    spread (each seed computed once, then cached)."""
    return _combine(job, stand_in, [_one(job, s, progress) for s in _seeded(stand_in)])


def _one(job: TrainingJob, stand_in: StandIn, progress: Any = None) -> Curve:
    """One seed's curve (computed once, then cached)."""
    hit = _cached_one(job, stand_in)
    if hit is not None:
        return hit
    dataset, workers, optimizer, hyper, options = _emulation(job, stand_in)
    key = _cache_key(job, stand_in)
    path = _cache_path(key)
    metric = metric_of(job.layout)
    from ..emulator.api import emulate  # lazy: see _emulation

    run = emulate(dataset, workers, job.model, optimizer, hyper, options, progress)
    values = tuple(float(h["test_accuracy" if metric == "accuracy" else "auc"]) for h in run.history)
    kind = "Q31 emulation of the PIM kernels" if job.platform == "pim" else "float64 training (baseline conventions)"
    note = (f"; {optimizer_info(job.optimizer).label} in PIM's formulation"
            if job.platform == "cpu" and optimizer_info(job.optimizer).keeps_duals else "")
    source = f"{kind}: {stand_in.describe(job)}{note}"
    from ..atomic import WriteError, write_text  # lazy like the emulator

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps({"per_epoch": values, "source": source, "key": key}))
    except (OSError, WriteError):
        pass  # an unwritable cache costs time on the next run, never the result
    return Curve(metric, values, source)
