"""One call for a whole emulation: data, training, metrics per epoch, warnings and the event trace, plus the
``Workload`` that describes what ran (so that a caller can put the cost model's prediction beside it: the
emulator itself never imports the cost model, it is the reference the model is checked against).

Every argument is checked, and the memory the run needs is estimated against what the machine has, before a
single row is generated or read."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError, SpecError, check_known, check_seed, unknown
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
from . import kernels as kn
from .config import SAMPLES_PER_DPU, Options, TrainConfig, kernels_for, train_config
from .data import (
    CRITEO_ACTIVE,
    DENSE_CHUNK,
    SPARSE_CHUNK,
    ArrayShards,
    Shards,
    SyntheticDense,
    SyntheticSparse,
    distinct_share,
)
from .engine import planned_workers, run
from .files import MappedShards, open_npy, open_svmlight
from .metrics import decision, evaluate
from .timing import seconds
from .trace import Trace, merge
from .trainers import Progress, model_length

IMBALANCED = 0.9
"""A test set whose majority class is at least this share is judged by AUC (accuracy rewards the majority)."""
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
    memory: MemoryCheck | None = None
    """the memory pre-check: the estimate and what the machine had available for it."""
    engine: str = "serial"
    """how the DPUs ran (``engine.describe``)."""


Hyper = HyperParams | Mapping[str, int] | None
"""Hyper-parameters: all of them, or the ones the user gave (the others: the study's, adapted to the data and the
deployment; the workload's ``notes`` say what was chosen), or None (all adapted)."""


def emulate(dataset: str, dpus: int, model: str, optimizer: str, hyper: Hyper = None,
            options: Options = Options(), progress: Progress | None = None) -> Emulation:
    """Train on ``dpus`` emulated DPUs (see ``Hyper`` and ``Options``)."""
    _check_arguments(dataset, dpus, model, optimizer, options)
    options = replace(options, kernels=kernels_for(str(dataset), options, SYNTHETIC))
    hw = load_hardware(options.hardware)
    require_links(optimizer, hw.link_topology, hw.name)  # before any data is made or read
    file_ones: int | None = None
    if dataset in SYNTHETIC:  # every check before a row is generated
        spec = _synthetic_spec(dataset, options)
        workload = _workload(spec, model, optimizer, dpus, hyper, options)
        check_capacity(workload, hw)
        memory = _check_memory(workload, options)
        shards, test = _synthetic_data(dataset, dpus, options)
    else:
        shards, test, spec, file_ones = _file_data(Path(dataset), dpus, options)
        if options.class_weights is not None and spec.layout == "dense":
            raise SpecError(f"--class-weights weights the sparse kernels' gradient; {Path(dataset).name} is dense "
                            "(the dense kernels weigh both classes alike): drop --class-weights")
        workload = _workload(spec, model, optimizer, dpus, hyper, options)
        check_capacity(workload, hw)
        memory = _check_memory(workload, options)
    cfg = train_config(workload, options, hw)
    warnings = _data_warnings(shards, workload, cfg, file_ones)
    history: list[dict[str, float]] = []
    xm, ym = _metric_rows(shards)

    def on_epoch(epoch: int, weights: Any, tr: Any) -> None:
        train_m = evaluate(decision(xm, shards.layout, weights.coef, weights.intercept), ym, model)
        test_m = evaluate(*test.scores(shards.layout, weights.coef, weights.intercept), model)
        history.append({"epoch": epoch, "train_accuracy": train_m["accuracy"], "test_accuracy": test_m["accuracy"],
                        "majority_baseline": test_m["majority_baseline"], "positive_rate": test_m["positive_rate"],
                        "loss": test_m["loss"], "auc": test_m["auc"], "emulated_wall_s": seconds(tr, hw)["total"]})

    result = run(shards, cfg, options, on_epoch=on_epoch, progress=progress)
    trace = merge(result.traces)
    overflows = float(np.max(trace.events.get("acc_overflow", np.zeros(1))))
    if overflows:
        floor = workload.local_batch.bit_length()  # log2(b) + 1 for a power of two: b terms below 2^(31-l) fit
        warnings.append(f"{overflows:,.0f} batch gradient sums left the dense kernels' int32 accumulator on the "
                        f"busiest DPU and wrapped to the wrong sign (b x 2^-l reaches 1); use "
                        f"--learning-rate-shift {floor} or more")
    last = history[-1] if history else None
    if last is not None and last["majority_baseline"] < IMBALANCED and \
            last["test_accuracy"] <= last["majority_baseline"] + 1e-12:
        warnings.append(f"test accuracy {last['test_accuracy']:.3f} is no better than always predicting the majority "
                        f"class ({last['majority_baseline']:.3f}): with {workload.rows_per_dpu:,} rows per DPU and "
                        f"{workload.steps_per_epoch * workload.epochs:,} local steps the DPUs did not learn the "
                        f"threshold (AUC {last['auc']:.3f}); use fewer --dpus or more --epochs")
    saturated = float(np.max(trace.events.get("saturated", np.zeros(1))))
    if saturated:
        warnings.append(f"{saturated:,.0f} weight updates hit the Q31 limit of +-1.0 on the busiest DPU: the model "
                        "needs larger weights than the fixed point holds (lower --learning-rate-shift is no cure; "
                        "use --arithmetic float64 to see the unsaturated result)")
    return Emulation(history, trace, workload, hw, warnings, memory, result.engine)


# ---------------------------------------------------------------- checks
def _check_arguments(dataset: str, dpus: int, model: str, optimizer: str, o: Options) -> None:
    """One-line errors for bad arguments, before any data is made."""
    for name, value in (("--dpus", dpus), ("--epochs", o.epochs), ("--samples-per-dpu", _rows(o)),
                        ("--tasklets", o.tasklets)):
        if value <= 0:
            raise SpecError(f"{name} must be a positive whole number, got {value}")
    check_seed("seed", o.seed)
    check_known("model", model, MODELS)
    check_known("optimizer", optimizer, OPTIMIZERS)
    check_known("arithmetic", o.arithmetic, ARITHMETICS)
    if o.kernels is not None and o.kernels not in KERNEL_VARIANTS:
        raise unknown("kernel variant", o.kernels, KERNEL_VARIANTS)
    if o.svm_margin is not None and model != "svm":
        raise SpecError(f"--svm-margin is the SVM's hinge margin; {model} has none (drop --svm-margin or use "
                        "--model svm)")
    if o.samples_per_dpu is not None and dataset not in SYNTHETIC:
        raise SpecError("--samples-per-dpu sets the synthetic data's rows per DPU; a file's rows come from the "
                        "file (its training rows are split over --dpus)")
    if o.class_weights is not None and dataset == "synthetic-yfcc":
        raise SpecError("--class-weights weights the sparse kernels' gradient; synthetic-yfcc is dense (its "
                        "kernels weigh both classes alike): drop --class-weights")
    if o.svm_margin is not None and not 0 < o.svm_margin <= 1:
        raise SpecError(f"--svm-margin {o.svm_margin:g} must be in (0, 1] (Q31 holds margins up to 1.0), e.g. 0.5")
    if o.features is not None:
        if dataset not in SYNTHETIC:
            raise SpecError("--features sets the synthetic data's width; a file's features come from the file")
        low = o.tasklets if dataset == "synthetic-yfcc" else MIN_SPARSE_FEATURES
        if o.features < low:
            raise SpecError(f"--features {o.features} is too small for {dataset}; use at least {low}")


def _rows(o: Options) -> int:
    """Synthetic rows per DPU."""
    return SAMPLES_PER_DPU if o.samples_per_dpu is None else o.samples_per_dpu


def _available_bytes() -> float:
    """Memory available to a new process: the kernel's MemAvailable (free memory plus what the page cache and
    reclaimable slabs give back), less under a cgroup limit (a container) or an address-space limit (``ulimit
    -v``)."""
    return min(_mem_available(), _cgroup_left(), _address_space_left())


def _mem_available() -> float:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil  # not a dependency: used where it is installed and /proc is not there

        return float(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not POSIX: no estimate, no refusal
        return float("inf")


def _cgroup_left() -> float:
    """What the cgroup v2 memory limit of this process leaves (inf without one)."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as handle:
            path = handle.read().strip().split("::", 1)[1]
        base = Path("/sys/fs/cgroup") / path.lstrip("/")
        limit = (base / "memory.max").read_text().strip()
        if limit == "max":
            return float("inf")
        return float(int(limit) - int((base / "memory.current").read_text().strip()))
    except (OSError, ValueError, IndexError):
        return float("inf")


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


PROCESS_BYTES = 250e6
"""Python, numpy and pimmodel in one process (measured RSS of a worker before its first step: about 0.15 GB)."""


@dataclass(frozen=True)
class MemoryCheck:
    """The pre-check of one emulation: its estimated peak (all its processes; on a Ray cluster, summed over the
    cluster's machines, checked there by Ray) and the memory available for it on this machine."""

    estimate_bytes: float
    available_bytes: float
    processes: int

    def to_record(self) -> dict[str, float]:
        return {"estimate_bytes": self.estimate_bytes, "available_bytes": self.available_bytes,
                "processes": self.processes}


# The bytes below were measured with tracemalloc on one-epoch serial runs (synthetic YFCC-like and Criteo-like LR
# at 64 and 1,024 DPUs, MA-SGD, GA-SGD and ADMM, fixed point); ``tests/emulator/test_memory_estimate.py`` checks
# the estimate against the measured peak of other sizes and optimizers.
DENSE_STEP_BYTES = 100.0
"""Per (DPU, feature): the dense fixed-point step's temporaries (int64 products, accumulators, guards, clamps)."""
DENSE_STATE_STEP_BYTES = 8.0
"""Per (DPU, feature) and per model state beyond the first (ADMM's duals and corrections): more temporaries."""
SPARSE_CHUNK_BYTES = 60.0
"""Per sparse entry of one DPU chunk of the batch kernel (at most ``SPARSE_STEP_ENTRIES`` entries): sorted keys,
values, their order and the absorbing sums' prefix arrays."""
SPARSE_ACC_BYTES = 16.0
"""Per distinct (DPU, index) pair of the batch: the int64 key and value of its accumulator, kept across the
chunks."""
SPARSE_SHARED_UPDATE_BYTES = 52.0
"""Per distinct (DPU, index) pair: the update of DPUs that start every step from the host's model (``SharedLocal``:
the touched entries' keys, raw values, guards and clamps; measured at 1,024 and 2,048 DPUs)."""
SPARSE_UPDATE_BYTES = 37.0
"""Per (DPU, feature) of one chunk of the sparse update sweep over N distinct models (``CHUNK_ELEMENTS`` x 4)."""
SPARSE_STATE_BYTES = 4.0
"""Per (DPU, feature) and model state, int32 (fixed point); the update's new models (and ADMM's new duals) one
more each."""
SPARSE_GLOBAL_UPDATE_BYTES = 16.0
"""Per distinct (DPU, index) pair: the host's sum of GA-SGD's gradients (an int64 key and value; an assumption,
never the peak in the runs measured)."""
FLOAT_STATE_BYTES = 8.0
"""Per (DPU, feature) and float64 array of the sparse float64 mode: the models (and ADMM's duals and corrections),
the update's new ones and its dense accumulators (two, three with ADMM's dual update): measured at 64 DPUs x 10^6
features, MA-SGD 32 bytes and ADMM 64 bytes per (DPU, feature) at the peak, GA-SGD (dense gradients only) 16 at 96
DPUs."""
EVALUATION_SHARE = 1.1
"""The training metric's peak over its rows and the test block (margins, probabilities): measured 1.07-1.14x."""
ROW_BYTES = 4.5
"""Per sparse entry of a generated step: the uint32 index and the row's label (1 byte per 39 entries)."""


def memory_estimate_bytes(w: Workload, o: Options, processes: int = 1) -> float:
    """About the peak memory of an emulation of ``w``: what lives through the run (one step's rows of every DPU and
    the next step's, generated ahead; the per-DPU model state the optimizer keeps, N x d) plus the larger of the
    step's temporaries and the training metric's evaluation, and Python itself per process. Nothing scales with
    the rows per DPU: the data are generated or read one step at a time."""
    n, d, b = w.dpus, w.dataset.features, w.local_batch
    info = REGISTRY[w.optimizer]
    fixed = o.arithmetic == "fixed"
    steps_ahead = 2.0 if w.rows_per_dpu > b else 1.0  # the next step's rows are generated while this one runs
    metric_rows = min(METRIC_ROWS, n * w.rows_per_dpu)
    states = info.state_vectors if _distinct_local_models(w) else 0
    if w.dataset.layout == "dense":
        element = 8.0  # int64 (fixed point) or float64 per state entry
        live = n * _chunk_rows(b, DENSE_CHUNK) * d * 4.0 * steps_ahead + states * n * d * element
        step = n * d * (DENSE_STEP_BYTES + DENSE_STATE_STEP_BYTES * max(states - 1, 0)) \
            + n * b * 8 * 4.0 + (1 << 18) * 9 * processes
        evaluation = (metric_rows * d * 4.0 + 4096 * d * 8.0) * EVALUATION_SHARE
    else:
        entries = n * _chunk_rows(b, SPARSE_CHUNK) * CRITEO_ACTIVE
        batch_entries = n * b * CRITEO_ACTIVE
        distinct = batch_entries * _distinct_share(w)
        live = entries * ROW_BYTES * steps_ahead + d * 16.0
        if fixed:
            batch = min(batch_entries, kn.SPARSE_STEP_ENTRIES * processes) * SPARSE_CHUNK_BYTES \
                + distinct * SPARSE_ACC_BYTES
            if states:  # N models, the update's new ones (and ADMM's new duals), swept in chunks of DPUs
                live += (states + 1 + info.keeps_duals) * n * d * SPARSE_STATE_BYTES
                update = min(n, max(1, kn.CHUNK_ELEMENTS * 4 // d)) * d * SPARSE_UPDATE_BYTES
            elif info.batch == "global":  # the host sums the gradients: no local models
                update = distinct * (SPARSE_ACC_BYTES + SPARSE_GLOBAL_UPDATE_BYTES)
            else:
                update = distinct * (SPARSE_ACC_BYTES + SPARSE_SHARED_UPDATE_BYTES)
            step = max(batch, update)
        else:  # float64: N dense float64 models (and ADMM's duals), the update's new ones, dense accumulators
            if info.batch == "global":  # the DPUs' dense gradients and one temporary of their sum
                live += n * d * FLOAT_STATE_BYTES
                step = n * d * FLOAT_STATE_BYTES + batch_entries * 8 * 6.0
            else:
                live += (info.state_vectors + 1 + info.keeps_duals) * n * d * FLOAT_STATE_BYTES
                step = n * d * FLOAT_STATE_BYTES * (2 + info.keeps_duals) + batch_entries * 8 * 6.0
        evaluation = (metric_rows * CRITEO_ACTIVE * 4.0 + d * 8.0 * 4) * EVALUATION_SHARE
    return live + max(step, evaluation) + PROCESS_BYTES * processes


def _distinct_share(w: Workload) -> float:
    """The share of a DPU's batch entries that are distinct indices: the generator's law for the synthetic
    Criteo-like data; 1 (every entry distinct, the most memory) for a file, whose law is not known."""
    if w.dataset.name not in SYNTHETIC:
        return 1.0
    return distinct_share(w.local_batch, w.dataset.features)


def _distinct_local_models(w: Workload) -> bool:
    """Whether the emulator keeps N distinct models of the DPUs through a step: the optimizer keeps them (ADMM,
    D-PSGD: ``State.w_local``), or a round of several local steps spreads them (local SGD, H > 1 with more than one
    step an epoch). Dense kernels and float64 keep the rows of every DPU whenever the optimizer has local models."""
    info = REGISTRY[w.optimizer]
    if w.dataset.layout == "dense":
        return info.batch != "global"
    if not _sparse_local_models(info):
        return False
    if info.sync == "every-h":
        return w.hp.sync_every > 1 and w.rows_per_dpu > w.local_batch
    return True


def _sparse_local_models(info: Any) -> bool:
    """Whether the sparse fixed-point DPUs hold N distinct models: not when they send gradients only (a global
    batch) or when every step starts from the host's model (one synchronisation per step through the host: the
    local models are the shared one plus the entries the batch touched, ``kernels.SharedLocal``)."""
    return not (info.batch == "global" or (info.sync == "step" and not info.emulated_links))


def _chunk_rows(b: int, chunk: int) -> int:
    """Rows a step of b rows generates (whole chunks)."""
    return -(-b // chunk) * chunk


def _check_memory(w: Workload, o: Options) -> MemoryCheck:
    processes = 1 + planned_workers(w, o)
    need, available = memory_estimate_bytes(w, o, processes), _available_bytes()
    have = MEMORY_SHARE * available
    if o.engine == "ray" and o.address is not None:
        # the DPUs' state lives on the cluster's machines; this one holds the metric rows and the test blocks
        driver = PROCESS_BYTES + min(METRIC_ROWS, w.dpus * w.rows_per_dpu) * w.dataset.slots_per_row * 4.0 * 2
        if driver > have:
            raise SpecError(f"the driver of this Ray run needs about {driver / 1e9:.1f} GB, more than the "
                            f"{have / 1e9:.1f} GB available for it")
        return MemoryCheck(need, available, processes)
    if need > have:
        fits = _dpus_that_fit(w, o, processes, have)
        fewer = f"--dpus {fits:,} or fewer" if fits else "fewer --dpus"
        features = ", fewer --features" if w.dataset.name in SYNTHETIC else ""
        machines = math.ceil(need / have)
        raise SpecError(f"emulating {w.dpus:,} DPUs x {w.rows_per_dpu:,} rows x {w.dataset.features:,} features "
                        f"with {w.optimizer} needs about {need / 1e9:.1f} GB, more than the {have / 1e9:.1f} GB of "
                        f"memory available for it ({MEMORY_SHARE:.0%} of {available / 1e9:.1f} GB); use {fewer}"
                        f"{features}, or --engine ray --address on a cluster of about {machines} machines like "
                        f"this one")
    return MemoryCheck(need, available, processes)


def _dpus_that_fit(w: Workload, o: Options, processes: int, have: float) -> int:
    """The largest DPU count below ``w.dpus`` whose estimate fits ``have`` (0: none does)."""
    lo, hi = 0, w.dpus - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if memory_estimate_bytes(replace(w, dpus=mid), o, processes) <= have:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _workload(spec: DatasetSpec, model: str, optimizer: str, dpus: int, hyper: Hyper, o: Options) -> Workload:
    if isinstance(hyper, HyperParams):
        return Workload(spec, model, optimizer, dpus, o.tasklets, "weak", o.epochs, hyper, o.kernels or "study")
    resolved, notes = resolve_hyperparams(spec, model, optimizer, dpus, "weak", epochs=o.epochs, **dict(hyper or {}))
    return Workload(spec, model, optimizer, dpus, o.tasklets, "weak", o.epochs, resolved, o.kernels or "study", notes)


# ---------------------------------------------------------------- data
def _synthetic_spec(dataset: str, o: Options) -> DatasetSpec:
    """What the synthetic data will be on the DPUs, known before any row is generated (for the checks)."""
    if dataset == "synthetic-yfcc":
        d = o.features or 4096
        return replace(YFCC, name=dataset, features=d, nonzeros_per_row=d, slots_per_row=d,
                       rows_per_dpu_weak=_rows(o))
    f = o.features or 1_000_000
    return replace(CRITEO, name=dataset, features=model_length(f, o.tasklets), bias_index=f,
                   rows_per_dpu_weak=_rows(o))


@dataclass
class TestSet:
    """The rows the test metrics are computed on: in memory, generated in blocks (synthetic, larger than
    ``TEST_IN_MEMORY_BYTES``) or read in blocks from a mapped file; scored one block at a time."""

    y: NDArray[np.uint8]
    x: NDArray | None = None
    source: Any = None
    """a one-DPU synthetic source (``rows``) or ``files.MappedRows`` (``blocks``)."""

    def blocks(self) -> Any:
        if self.x is not None:
            yield self.x
        elif hasattr(self.source, "blocks"):
            yield from self.source.blocks()
        else:
            rows = self.source.rows_per_dpu
            for lo in range(0, rows, TEST_BLOCK_ROWS):
                yield self.source.rows(lo, min(rows, lo + TEST_BLOCK_ROWS))[0][0]

    def scores(self, layout: str, coef: NDArray, intercept: float) -> tuple[NDArray, NDArray]:
        """(decision values of every test row, labels)."""
        parts = [decision(x, layout, coef, intercept) for x in self.blocks()]
        return np.concatenate(parts), self.y


TEST_IN_MEMORY_BYTES = 64e6
TEST_BLOCK_ROWS = 4096


def _synthetic_test(source: Any, width: int) -> TestSet:
    rows = source.rows_per_dpu
    if rows * width * 4 <= TEST_IN_MEMORY_BYTES:
        x, y = source.rows(0, rows)
        return TestSet(y[0], x[0])
    y = np.concatenate([source.rows(lo, min(rows, lo + TEST_BLOCK_ROWS))[1][0] for lo in range(0, rows,
                                                                                                 TEST_BLOCK_ROWS)])
    return TestSet(y, source=source)


def _synthetic_data(dataset: str, dpus: int, o: Options) -> tuple[Shards, TestSet]:
    test_rows = max(1024, min(65536, dpus * _rows(o) // 4))
    if dataset == "synthetic-yfcc":
        d = o.features or 4096
        test = SyntheticDense(1, test_rows, d, o.seed, stream=1, prefetch=False)
        return SyntheticDense(dpus, _rows(o), d, o.seed), _synthetic_test(test, d)
    f = o.features or 1_000_000
    test_sparse = SyntheticSparse(1, test_rows, f, o.seed, stream=1, prefetch=False)
    return SyntheticSparse(dpus, _rows(o), f, o.seed), _synthetic_test(test_sparse, CRITEO_ACTIVE)


def _file_data(path: Path, dpus: int, o: Options) -> tuple[MappedShards, TestSet, DatasetSpec, int | None]:
    """A file's rows, memory-mapped (``files``): 80 % training rows (shuffled unless ``o.shuffle`` is off) sharded
    over the DPUs, 20 % test rows. Real-valued svmlight files and .npy arrays take the dense kernels, binary
    svmlight files the sparse ones. Also: the training rows' features equal to exactly 1.0 (dense)."""
    if not path.is_file():
        raise DataError(f"dataset {str(path)!r} is neither synthetic-yfcc, synthetic-criteo nor a readable file")
    data = open_npy(path) if path.suffix == ".npy" else open_svmlight(path, MAX_DENSE_FEATURES)
    sh, test_rows, train_idx = data.shards(dpus, o.seed, o.shuffle, pad_multiple=2 * o.tasklets)
    test = TestSet(test_rows.y, source=test_rows)
    positive = _positive_fraction(data.labels)
    if data.layout == "dense":
        spec = replace(YFCC, name=path.stem, features=sh.features, nonzeros_per_row=sh.features,
                       slots_per_row=sh.features, rows_per_dpu_weak=sh.rows_per_dpu, positive_fraction=positive)
        ones = None if data.ones is None else int(data.ones[train_idx].sum())
        return sh, test, spec, ones
    spec = replace(CRITEO, name=path.stem, features=model_length(data.features, o.tasklets),
                   bias_index=data.features, rows_per_dpu_weak=sh.rows_per_dpu, positive_fraction=positive)
    return sh, test, spec, None


def _positive_fraction(y: NDArray) -> float:
    return float(np.clip(np.mean(y), 1e-6, 1 - 1e-6))


def _metric_rows(shards: Shards) -> tuple[NDArray, NDArray]:
    """The first rows of every shard (the training metrics' sample), padding rows left out."""
    k = max(1, min(shards.rows_per_dpu, METRIC_ROWS // shards.n_dpus))
    source: Any = replace(shards, prefetch=False) if hasattr(shards, "prefetch") else shards  # type: ignore[type-var]
    x, y = source.rows(0, k)
    valid = source.valid(0, k)
    x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1)
    if valid is None:
        return x, y
    keep = valid.reshape(-1)
    return x[keep], y[keep]


ONE_CLASS_EXPECTED = 64.0
"""A synthetic source is scanned for one-class DPUs only when a shard expects fewer rows of its rarer class than
this (beyond, the chance that a shard holds one class only is below e^-64)."""


def _labels_per_dpu(shards: Shards, w: Workload) -> tuple[NDArray, NDArray] | None:
    """(positives, rows) per DPU, or None where that would mean generating every row of a large synthetic run."""
    if isinstance(shards, (ArrayShards, MappedShards)):
        counts = shards.counts if shards.counts is not None else np.full(shards.n_dpus, shards.rows_per_dpu)
        return np.array([int(shards.y[k, :n].sum()) for k, n in enumerate(counts)]), counts
    p = w.dataset.positive_fraction if w.dataset.layout == "sparse" else 0.5
    if shards.rows_per_dpu * min(p, 1 - p) >= ONE_CLASS_EXPECTED:
        return None
    positives = np.concatenate([shards.part(lo, min(shards.n_dpus, lo + 64)).rows(0, shards.rows_per_dpu)[1].sum(axis=1)
                                for lo in range(0, shards.n_dpus, 64)])
    return positives, np.full(shards.n_dpus, shards.rows_per_dpu)


def _data_warnings(shards: Shards, w: Workload, cfg: TrainConfig, ones: int | None = None) -> list[str]:
    """Warnings about what the chosen kernels will do to this data."""
    out: list[str] = []
    if w.model == "svm" and cfg.kernels == "study" and shards.layout == "dense":
        if ones is None and isinstance(shards, ArrayShards):
            ones = int(np.count_nonzero(shards.x == fx.ONE))
        if ones:
            out.append(f"{ones:,} feature values equal exactly 1.0: the study's SVM kernels cast them to -1.0 (a "
                       "signed 32-bit cast), pushing their weights the wrong way; use --kernels corrected")
    if shards.layout == "sparse" and cfg.weights != (1.0, 1.0):
        neg, pos = cfg.weights
        out.append(f"class weights {neg:g}:{pos:g} (negative:positive) scale the gradient, as the study's Criteo "
                   "kernels do; use --class-weights 1:1 or --kernels corrected for unweighted training")
    labels = _labels_per_dpu(shards, w)
    if labels is not None:
        positives, counts = labels
        one_class = int(np.count_nonzero((positives == 0) | (positives == counts)))
        if one_class:
            out.append(f"{one_class:,} of {shards.n_dpus:,} DPUs hold rows of one class only (a label-sorted file "
                       "without --shuffle, or too few rows per DPU): their local models pull apart")
    return out
