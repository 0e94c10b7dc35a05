"""One call for a whole emulation: data, training, metrics per epoch, warnings and the event trace, plus the
``Workload`` that describes what ran (so that a caller can put the cost model's prediction beside it: the
emulator itself never imports the cost model, it is the reference the model is checked against).

Every argument is checked, and the memory the run needs is estimated against what the machine has, before a
single row is generated or read."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError, SpecError, unknown
from ..kernels.capacity import check as check_capacity
from ..specs import (
    CRITEO,
    KERNEL_VARIANTS,
    MODELS,
    OPTIMIZERS,
    REGISTRY,
    YFCC,
    DatasetSpec,
    HardwareSpec,
    HyperParams,
    Workload,
    load_hardware,
    require_links,
    resolve_hyperparams,
)
from . import fixedpoint as fx
from .config import Options, TrainConfig, train_config
from .data import (
    CRITEO_ACTIVE,
    ArrayShards,
    Shards,
    SyntheticDense,
    ell_from_rows,
    read_npy,
    read_svmlight_data,
    shard,
    synthetic_sparse,
    train_test_split,
)
from .metrics import decision, evaluate
from .timing import seconds
from .trace import Trace, merge
from .trainers import Progress, model_length, train

METRIC_ROWS = 16384
"""Training metrics use the first rows of every shard, at most this many in total."""
SYNTHETIC = ("synthetic-yfcc", "synthetic-criteo")
ARITHMETICS = ("fixed", "float64")
MAX_DENSE_FEATURES = 1 << 16
"""Largest real-valued feature count the dense kernels are emulated with (a dense row must fit MRAM)."""
MEMORY_SHARE = 0.8
"""Share of the free memory an emulation may plan to use (the rest: Python, numpy, the estimate's slack)."""
MIN_SPARSE_FEATURES = 2 * CRITEO_ACTIVE + 1
"""The synthetic Criteo-like generator hashes 39 fields into disjoint ranges of at least 2 indices."""


@dataclass
class Emulation:
    """What one emulation produced: metrics per epoch, the merged trace of all epochs, the workload and hardware
    it ran (for pricing the trace and for the cost model's prediction of the same configuration), and warnings
    about results that could mislead."""

    history: list[dict[str, float]]
    trace: Trace
    workload: Workload
    hardware: HardwareSpec
    warnings: list[str]


Hyper = HyperParams | Mapping[str, int] | None
"""Hyper-parameters: all of them, or the ones the user gave (the others: the study's, adapted to the data and the
deployment; the workload's ``notes`` say what was chosen), or None (all adapted)."""


def emulate(dataset: str, dpus: int, model: str, optimizer: str, hyper: Hyper = None,
            options: Options = Options(), progress: Progress | None = None) -> Emulation:
    """Train on ``dpus`` emulated DPUs (see ``Hyper`` and ``Options``)."""
    _check_arguments(dataset, dpus, model, optimizer, options)
    hw = load_hardware(options.hardware)
    require_links(optimizer, hw.link_topology, hw.name)  # before any data is made or read
    if dataset in SYNTHETIC:  # every check before a row is generated
        spec = _synthetic_spec(dataset, options)
        workload = _workload(spec, model, optimizer, dpus, hyper, options)
        check_capacity(workload, hw)
        _check_memory(workload, options)
        shards, x_test, y_test = _synthetic_data(dataset, dpus, options)
    else:
        shards, x_test, y_test, spec = _file_data(Path(dataset), dpus, options)
        workload = _workload(spec, model, optimizer, dpus, hyper, options)
        check_capacity(workload, hw)
        _check_memory(workload, options)
    cfg = train_config(workload, options, hw)
    warnings = _data_warnings(shards, workload, cfg)
    history: list[dict[str, float]] = []
    xm, ym = _metric_rows(shards)

    def on_epoch(epoch: int, weights: Any, tr: Any) -> None:
        train_m = evaluate(decision(xm, shards.layout, weights.coef, weights.intercept), ym, model)
        test_m = evaluate(decision(x_test, shards.layout, weights.coef, weights.intercept), y_test, model)
        history.append({"epoch": epoch, "train_accuracy": train_m["accuracy"], "test_accuracy": test_m["accuracy"],
                        "majority_baseline": test_m["majority_baseline"], "positive_rate": test_m["positive_rate"],
                        "loss": test_m["loss"], "auc": test_m["auc"], "emulated_wall_s": seconds(tr, hw)["total"]})

    result = train(shards, cfg, on_epoch=on_epoch, progress=progress)
    trace = merge(result.traces)
    overflows = float(np.max(trace.events.get("acc_overflow", np.zeros(1))))
    if overflows:
        floor = workload.local_batch.bit_length()  # log2(b) + 1 for a power of two: b terms below 2^(31-l) fit
        warnings.append(f"{overflows:,.0f} batch gradient sums left the dense kernels' int32 accumulator on the "
                        f"busiest DPU and wrapped to the wrong sign (b x 2^-l reaches 1); use "
                        f"--learning-rate-shift {floor} or more")
    saturated = float(np.max(trace.events.get("saturated", np.zeros(1))))
    if saturated:
        warnings.append(f"{saturated:,.0f} weight updates hit the Q31 limit of +-1.0 on the busiest DPU: the model "
                        "needs larger weights than the fixed point holds (lower --learning-rate-shift is no cure; "
                        "use --arithmetic float64 to see the unsaturated result)")
    return Emulation(history, trace, workload, hw, warnings)


# ---------------------------------------------------------------- checks
def _check_arguments(dataset: str, dpus: int, model: str, optimizer: str, o: Options) -> None:
    """One-line errors for bad arguments, before any data is made."""
    for name, value in (("--dpus", dpus), ("--epochs", o.epochs), ("--samples-per-dpu", o.samples_per_dpu),
                        ("--tasklets", o.tasklets)):
        if value <= 0:
            raise SpecError(f"{name} must be a positive whole number, got {value}")
    if o.seed < 0:
        raise SpecError(f"--seed must be a whole number >= 0, got {o.seed}")
    if model not in MODELS:
        raise unknown("model", model, MODELS)
    if optimizer not in OPTIMIZERS:
        raise unknown("optimizer", optimizer, OPTIMIZERS)
    if o.arithmetic not in ARITHMETICS:
        raise unknown("arithmetic", o.arithmetic, ARITHMETICS)
    if o.kernels not in KERNEL_VARIANTS:
        raise unknown("kernel variant", o.kernels, KERNEL_VARIANTS)
    if o.svm_margin is not None and not 0 < o.svm_margin <= 1:
        raise SpecError(f"--svm-margin {o.svm_margin:g} must be in (0, 1] (Q31 holds margins up to 1.0), e.g. 0.5")
    if o.features is not None:
        if dataset not in SYNTHETIC:
            raise SpecError("--features sets the synthetic data's width; a file's features come from the file")
        low = o.tasklets if dataset == "synthetic-yfcc" else MIN_SPARSE_FEATURES
        if o.features < low:
            raise SpecError(f"--features {o.features} is too small for {dataset}; use at least {low}")


def _available_bytes() -> float:
    """Free physical memory, or less when an address-space limit (``ulimit -v``) leaves less room."""
    try:
        free = float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not POSIX: no estimate, no refusal
        free = float("inf")
    return min(free, _address_space_left())


def _address_space_left() -> float:
    try:
        import resource  # POSIX only

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit == resource.RLIM_INFINITY:
            return float("inf")
        with open("/proc/self/statm") as statm:
            used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, IndexError):
        return float("inf")
    return float(max(limit - used, 0))


def memory_estimate_bytes(w: Workload, o: Options) -> float:
    """About the peak memory an emulation of ``w`` takes: the data as generated or read, the per-DPU model
    state the optimizer keeps (N x d), and the kernels' scratch."""
    n, d, rows = w.dpus, w.dataset.features, w.rows_per_dpu
    state_vectors = REGISTRY[w.optimizer].state_vectors  # local models [+ u, c]
    element = 8.0  # int64 (dense fixed point) or float64 per state entry
    if w.dataset.layout == "dense":
        block = n * min(64, rows) * d * (4 + 4) * 2.0  # float32 generation + uint32 rows, one block prefetched
        data = block if w.dataset.name in SYNTHETIC else n * rows * d * 4 * 2.0
        scratch = n * w.local_batch * 8 * 2.0 + (1 << 18) * 9
    else:
        element = 4.0 if o.arithmetic == "fixed" else 8.0
        data = (n * rows * 1.25) * CRITEO_ACTIVE * (4 + 8)  # indices, plus the generator's scores and ranks
        scratch = n * w.local_batch * CRITEO_ACTIVE * 8 * 6.0  # sort keys, values and order of a batch
    return data + state_vectors * n * d * element * 1.5 + scratch


def _check_memory(w: Workload, o: Options) -> None:
    need, have = memory_estimate_bytes(w, o), MEMORY_SHARE * _available_bytes()
    if need > have:
        raise SpecError(f"emulating {w.dpus:,} DPUs x {w.rows_per_dpu:,} rows x {w.dataset.features:,} features "
                        f"needs about {need / 1e9:.1f} GB, more than the {have / 1e9:.1f} GB of memory free for it; "
                        "use fewer --dpus, --samples-per-dpu or --features")


def _workload(spec: DatasetSpec, model: str, optimizer: str, dpus: int, hyper: Hyper, o: Options) -> Workload:
    if isinstance(hyper, HyperParams):
        return Workload(spec, model, optimizer, dpus, o.tasklets, "weak", o.epochs, hyper, o.kernels)
    resolved, notes = resolve_hyperparams(spec, model, optimizer, dpus, "weak", epochs=o.epochs, **dict(hyper or {}))
    return Workload(spec, model, optimizer, dpus, o.tasklets, "weak", o.epochs, resolved, o.kernels, notes)


# ---------------------------------------------------------------- data
def _synthetic_spec(dataset: str, o: Options) -> DatasetSpec:
    """What the synthetic data will be on the DPUs, known before any row is generated (for the checks)."""
    if dataset == "synthetic-yfcc":
        d = o.features or 4096
        return replace(YFCC, name=dataset, features=d, nonzeros_per_row=d, slots_per_row=d,
                       rows_per_dpu_weak=o.samples_per_dpu)
    f = o.features or 1_000_000
    return replace(CRITEO, name=dataset, features=model_length(f, o.tasklets), bias_index=f,
                   rows_per_dpu_weak=o.samples_per_dpu)


def _synthetic_data(dataset: str, dpus: int, o: Options) -> tuple[Shards, NDArray, NDArray]:
    test_rows = max(1024, min(65536, dpus * o.samples_per_dpu // 4))
    if dataset == "synthetic-yfcc":
        d = o.features or 4096
        xt, yt = SyntheticDense(1, test_rows, d, o.seed, stream=1).rows(0, test_rows)
        return SyntheticDense(dpus, o.samples_per_dpu, d, o.seed), xt[0], yt[0]
    idx, y = synthetic_sparse(dpus * o.samples_per_dpu + test_rows, o.features or 1_000_000, o.seed)
    n = dpus * o.samples_per_dpu
    return shard(idx[:n], y[:n], dpus, "sparse", o.features or 1_000_000), idx[n:], y[n:]


def _file_data(path: Path, dpus: int, o: Options) -> tuple[ArrayShards, NDArray, NDArray, DatasetSpec]:
    """A file's rows: 80 % training rows (shuffled unless ``o.shuffle`` is off) sharded over the DPUs, 20 % test
    rows. Real-valued svmlight files and .npy arrays take the dense kernels, binary svmlight files the sparse
    ones."""
    if not path.is_file():
        raise DataError(f"dataset {str(path)!r} is neither synthetic-yfcc, synthetic-criteo nor a readable file")
    rng = np.random.default_rng(o.seed)
    budget = MEMORY_SHARE * _available_bytes()  # the readers refuse a file they cannot hold before reading it all
    if path.suffix == ".npy":
        xq, y = read_npy(path, budget)
        return _shards(path, xq, y, dpus, rng, o, "dense")
    data = read_svmlight_data(path, budget)
    if not data.binary:  # real-valued features: the dense kernels, Q1.31 after a range check
        if data.features > MAX_DENSE_FEATURES:
            raise DataError(f"{path}: {data.features:,} real-valued features; the dense kernels take at most "
                            f"{MAX_DENSE_FEATURES:,} (binary data, one value everywhere, takes the sparse kernels)")
        return _shards(path, fx.quantize_unit(data.dense(budget)), data.labels, dpus, rng, o, "dense")
    data.check_ell(CRITEO_ACTIVE)
    return _shards(path, ell_from_rows(data.rows), data.labels, dpus, rng, o, "sparse", data.features)


def _shards(path: Path, x: NDArray, y: NDArray, dpus: int, rng: np.random.Generator, o: Options, layout: str,
            features: int = 0) -> tuple[ArrayShards, NDArray, NDArray, DatasetSpec]:
    if len(np.unique(y)) < 2:
        raise DataError(f"{path}: every label is {int(y[0])}; a classifier needs both classes")
    train_idx, test_idx = train_test_split(x.shape[0], 0.2, rng)
    if o.shuffle:
        train_idx = rng.permutation(train_idx)
    if train_idx.size < dpus:
        raise DataError(f"{path}: {train_idx.size:,} training rows cannot feed {dpus:,} DPUs; use at most "
                        f"{train_idx.size:,} --dpus")
    if layout == "dense":
        sh = shard(x[train_idx], y[train_idx], dpus, "dense", x.shape[1], pad_multiple=2 * o.tasklets)
        spec = replace(YFCC, name=path.stem, features=sh.features, nonzeros_per_row=sh.features,
                       slots_per_row=sh.features, rows_per_dpu_weak=sh.rows_per_dpu,
                       positive_fraction=_positive_fraction(y))
        return sh, x[test_idx], y[test_idx], spec
    sh = shard(x[train_idx], y[train_idx], dpus, "sparse", features)
    spec = replace(CRITEO, name=path.stem, features=model_length(features, o.tasklets), bias_index=features,
                   rows_per_dpu_weak=sh.rows_per_dpu, positive_fraction=_positive_fraction(y))
    return sh, x[test_idx], y[test_idx], spec


def _positive_fraction(y: NDArray) -> float:
    return float(np.clip(np.mean(y), 1e-6, 1 - 1e-6))


def _metric_rows(shards: Shards) -> tuple[NDArray, NDArray]:
    """The first rows of every shard (the training metrics' sample), padding rows left out."""
    k = max(1, min(shards.rows_per_dpu, METRIC_ROWS // shards.n_dpus))
    x, y = shards.rows(0, k)
    valid = shards.valid(0, k)
    x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1)
    if valid is None:
        return x, y
    keep = valid.reshape(-1)
    return x[keep], y[keep]


def _data_warnings(shards: Shards, w: Workload, cfg: TrainConfig) -> list[str]:
    """Warnings about what the chosen kernels will do to this data (checked on in-memory shards)."""
    out: list[str] = []
    if not isinstance(shards, ArrayShards):
        return out
    if w.model == "svm" and cfg.kernels == "study" and shards.layout == "dense":
        ones = int(np.count_nonzero(shards.x == fx.ONE))
        if ones:
            out.append(f"{ones:,} feature values equal exactly 1.0: the study's SVM kernels cast them to -1.0 (a "
                       "signed 32-bit cast), pushing their weights the wrong way; use --kernels corrected")
    if shards.layout == "sparse" and cfg.weights != (1.0, 1.0):
        neg, pos = cfg.weights
        out.append(f"class weights {neg:g}:{pos:g} (negative:positive) scale the gradient, as the study's Criteo "
                   "kernels do; use --class-weights 1:1 or --kernels corrected for unweighted training")
    counts = shards.counts if shards.counts is not None else np.full(shards.n_dpus, shards.rows_per_dpu)
    positives = np.array([int(shards.y[k, :n].sum()) for k, n in enumerate(counts)])
    one_class = int(np.count_nonzero((positives == 0) | (positives == counts)))
    if one_class:
        out.append(f"{one_class:,} of {shards.n_dpus:,} DPUs hold rows of one class only (a label-sorted file "
                   "without --shuffle, or too few rows per DPU): their local models pull apart")
    return out
