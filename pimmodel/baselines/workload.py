"""A baseline training run described by plain parameters, and the study's CPU and GPU configurations.

The study's numbers (``shared/reference/pim-opt-study.md`` §1, §2, §3.4; artifact ``baseline/train_*.py``):
YFCC100M-HNfc6 as float32, 6,815,744 rows x 4,096 features (the 2,048-DPU weak-scaling set, 111.7 GB) and
Criteo as 39 int32 indices per row of 10^6 features (402,653,184 rows). The CPU runs 128 processes; its batch
is per process (GA-SGD 64 x 128 = 8,192 on YFCC, 2,048 x 128 = 262,144 on Criteo). The GPU runs single-GPU
mini-batch SGD with batch 4,096 on YFCC only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..errors import SpecError, check_known, unknown
from ..specs import CRITEO, YFCC, Workload
from ..specs.optimizers import REGISTRY as PIM_OPTIMIZERS
from ..specs.workload import LAYOUTS, MODELS, STUDY_DPUS, STUDY_EPOCHS, check_positive_ints


@dataclass(frozen=True, slots=True)
class BaselineOptimizer:
    """How a CPU/GPU baseline trains with one optimizer: the one place the baselines read an optimizer's nature
    (``tests/test_name_branches.py`` refuses a comparison of its name anywhere else)."""

    name: str
    label: str
    averages: Literal["gradients", "models", "none"]
    """what the processes all-reduce after every step (``none``: one process, or ADMM's local steps)."""
    global_batch: bool
    """its batch is a global batch split over the processes (GA-SGD; SGD is GA-SGD on one device)."""
    epoch_round: bool
    """one consensus round (z and dual update) ends every epoch (ADMM); its local steps exchange nothing."""
    one_device: bool = False
    """single-device mini-batch SGD (the study's GPU run): one process, compared with every PIM optimizer."""
    steps_like: str = ""
    """the optimizer whose measured step overheads it uses (default: its own name)."""

    @property
    def step_kind(self) -> str:
        return self.steps_like or self.name


def _from_pim(name: str) -> BaselineOptimizer:
    """The study optimizer ``name`` as the baselines run it, read off its PIM registry entry."""
    info = PIM_OPTIMIZERS[name]
    global_batch = info.batch == "global"
    epoch_round = info.sync == "epoch"
    averages: Literal["gradients", "models", "none"] = (
        "none" if epoch_round else "gradients" if global_batch else "models")
    return BaselineOptimizer(name, info.label, averages, global_batch, epoch_round)


BASELINE_REGISTRY: dict[str, BaselineOptimizer] = {
    **{name: _from_pim(name) for name, info in PIM_OPTIMIZERS.items() if info.study},
    "sgd": BaselineOptimizer("sgd", "mini-batch SGD", "none", global_batch=True, epoch_round=False, one_device=True,
                             steps_like="ga-sgd"),
}
BASELINE_OPTIMIZERS = OPTIMIZERS = tuple(BASELINE_REGISTRY)
"""``sgd``: single-device mini-batch SGD (the GPU run); equal to GA-SGD with one process."""
MULTI_PROCESS_OPTIMIZERS = tuple(n for n, o in BASELINE_REGISTRY.items() if not o.one_device)
"""the study's CPU optimizers (128 processes)."""
ONE_DEVICE_OPTIMIZERS = tuple(n for n, o in BASELINE_REGISTRY.items() if o.global_batch)
"""the optimizers a single device runs as mini-batch SGD (GA-SGD on one process is SGD)."""


def optimizer_label(name: str) -> str:
    """How a table or a figure names ``name``: a PIM optimizer's registry label, or a baseline's."""
    if name in BASELINE_REGISTRY:
        return BASELINE_REGISTRY[name].label
    return PIM_OPTIMIZERS[name].label if name in PIM_OPTIMIZERS else name


def baseline_optimizer(name: str) -> BaselineOptimizer:
    if name not in BASELINE_REGISTRY:
        raise unknown("optimizer", name, OPTIMIZERS)
    return BASELINE_REGISTRY[name]
DATASETS = ("yfcc100m-hnfc6", "criteo-1tb")

YFCC_ROWS = YFCC.train_rows(STUDY_DPUS, "weak")  # 3,328 x 2,048 = 6,815,744
YFCC_FEATURES = 4096
CRITEO_ROWS = CRITEO.train_rows(STUDY_DPUS, "weak")  # 196,608 x 2,048 = 402,653,184
CRITEO_FEATURES = 1_000_000
CRITEO_NONZEROS = 39
STUDY_CPU_PROCESSES = 128


@dataclass(frozen=True, slots=True)
class BaselineWorkload:
    """One training run. ``batch_size`` is per process (MA-SGD and ADMM: the local batch; GA-SGD: each
    process's share of the global batch). ``nonzeros_per_row`` is the active features of a sparse row
    (binary values stored as int32 indices); dense rows store ``features`` float32 values."""

    rows: int
    features: int
    model: str
    optimizer: str
    batch_size: int
    processes: int = 1
    epochs: int = STUDY_EPOCHS
    layout: str = "dense"
    nonzeros_per_row: int | None = None
    label_bytes: int = 4
    name: str = "custom"

    def __post_init__(self) -> None:
        check_known("model", self.model, MODELS)
        check_known("optimizer", self.optimizer, OPTIMIZERS)
        check_known("layout", self.layout, LAYOUTS)
        check_positive_ints(self, ("rows", "features", "batch_size", "processes", "epochs", "label_bytes"),
                            lambda key: f"workload {self.name!r}: {key}")
        nnz = self.nonzeros_per_row
        if self.layout == "sparse" and (nnz is None or isinstance(nnz, bool) or not isinstance(nnz, int)
                                        or not 1 <= nnz <= self.features):
            raise SpecError(f"workload {self.name!r}: a sparse layout needs nonzeros_per_row in [1, features], "
                            f"got {nnz!r}")
        if self.rows < self.processes * self.batch_size:
            raise SpecError(f"workload {self.name!r}: {self.rows} rows cannot give each of {self.processes} "
                            f"processes one batch of {self.batch_size}")

    @property
    def active_features(self) -> int:
        """Features touched per row: all of them (dense) or the nonzeros (sparse)."""
        return self.features if self.layout == "dense" else int(self.nonzeros_per_row or 0)

    @property
    def row_bytes(self) -> int:
        """Bytes of one stored row, label included: float32 values (dense) or int32 indices (sparse)."""
        return 4 * self.active_features + self.label_bytes

    @property
    def dataset_bytes(self) -> int:
        return self.rows * self.row_bytes

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def study_batch_size(dataset: str, model: str, optimizer: str, device: str) -> int:
    """The study's batch per process (``baseline/train_yfcc_cpu.py``, ``train_criteo.py``, ``train_yfcc_gpu.py``;
    the first value of each sweep, which equals the PIM runs' setting of §3.4)."""
    if device == "gpu":
        return 4096
    if dataset == "criteo-1tb":
        return 2048
    return 64 if baseline_optimizer(optimizer).global_batch else 8


def study_workload(dataset: str, model: str, optimizer: str, device: str = "cpu",
                   epochs: int = STUDY_EPOCHS) -> BaselineWorkload:
    """The study's baseline run of ``dataset`` x ``model`` x ``optimizer`` on ``device``."""
    check_known("dataset", dataset, DATASETS)
    if device not in ("cpu", "gpu"):
        raise unknown("device", device, ("cpu", "gpu"))
    if device == "gpu":
        if dataset != "yfcc100m-hnfc6":
            raise SpecError("the study ran its GPU baseline on YFCC100M-HNfc6 only (Criteo: CPU and PIM); "
                            "use --device cpu for criteo-1tb")
        if optimizer not in ONE_DEVICE_OPTIMIZERS:
            raise SpecError(f"the study's GPU baseline is single-GPU mini-batch SGD, not {optimizer!r}; "
                            "use --optimizer sgd (or ga-sgd)")
        return BaselineWorkload(YFCC_ROWS, YFCC_FEATURES, model, "sgd", 4096, 1, epochs,
                                name=f"study {dataset} GPU")
    if baseline_optimizer(optimizer).one_device:
        raise SpecError("the study's CPU baseline runs ma-sgd, ga-sgd or admm on 128 processes, not plain sgd")
    batch = study_batch_size(dataset, model, optimizer, device)
    if dataset == "yfcc100m-hnfc6":
        return BaselineWorkload(YFCC_ROWS, YFCC_FEATURES, model, optimizer, batch, STUDY_CPU_PROCESSES, epochs,
                                name=f"study {dataset} CPU")
    return BaselineWorkload(CRITEO_ROWS, CRITEO_FEATURES, model, optimizer, batch, STUDY_CPU_PROCESSES, epochs,
                            layout="sparse", nonzeros_per_row=CRITEO_NONZEROS, name=f"study {dataset} CPU")


# ---------------------------------------------------------------- the baselines of a PIM workload
STUDY_GPU_BATCH = 4096


def _same_rows(w: Workload) -> dict[str, Any]:
    ds = w.dataset
    # a sparse PIM model pads its features (bias inside w, slices per tasklet); the baselines hold the real ones
    features = ds.bias_index if ds.layout == "sparse" and ds.bias_index is not None else ds.features
    return {"rows": w.train_rows, "features": features, "layout": ds.layout,
            "nonzeros_per_row": ds.nonzeros_per_row if ds.layout == "sparse" else None, "epochs": w.epochs}


def cpu_workload_of(w: Workload, processes: int = STUDY_CPU_PROCESSES) -> BaselineWorkload:
    """The study's CPU run of the rows the PIM workload ``w`` trains: ``processes`` processes with contiguous
    blocks of rows; MA-SGD and ADMM take the PIM local batch per process, GA-SGD's batch per process is the PIM
    global batch split over the processes (the study: 64 x 128 = 8,192 on YFCC, 2,048 x 128 = 262,144 on
    Criteo)."""
    procs = min(processes, w.train_rows)
    batch = w.hp.global_batch_size // procs if baseline_optimizer(w.optimizer).global_batch else w.hp.batch_size
    batch = max(1, min(batch, w.train_rows // procs))
    return BaselineWorkload(model=w.model, optimizer=w.optimizer, batch_size=batch, processes=procs,
                            name=f"{w.dataset.name} CPU", **_same_rows(w))


def gpu_workload_of(w: Workload, batch: int = STUDY_GPU_BATCH) -> BaselineWorkload:
    """The study's GPU run (single-GPU mini-batch SGD, batch 4,096) of the rows ``w`` trains."""
    return BaselineWorkload(model=w.model, optimizer="sgd", batch_size=min(batch, w.train_rows), processes=1,
                            name=f"{w.dataset.name} GPU", **_same_rows(w))
