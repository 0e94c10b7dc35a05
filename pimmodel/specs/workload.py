"""Workloads: a dataset as stored on the PIM system, a model, an optimizer with its hyper-parameters,
and a deployment (DPUs, tasklets, weak or strong scaling). All frozen and validated.

The two presets are the PIM-Opt study's datasets exactly as stored on the DPUs
(``shared/reference/pim-opt-study.md`` §2); the hyper-parameter defaults are the study's (§3.4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from ..errors import SpecError, check_known, check_type, unknown
from ._toml import read_toml
from .optimizers import OPTIMIZERS, OptimizerInfo, optimizer_info, takers

Layout = Literal["dense", "sparse"]
MODELS = ("lr", "svm")
SCALINGS = ("weak", "strong")
LAYOUTS = ("dense", "sparse")
VALUE_BYTES = (1, 2, 4, 8)
"""Widths of a stored feature value a DPU can load (its 8-, 16-, 32- and 64-bit loads)."""


def check_positive_ints(record: object, keys: Iterable[str], name: Callable[[str], str]) -> None:
    """Each field ``keys`` of ``record`` is a positive whole number (a bool is none); the first that is not is a
    one-line SpecError saying ``name(key)`` must be one (datasets, workloads, hyper-parameters, the baselines'
    workloads and the comparison's jobs)."""
    for key in keys:
        value = getattr(record, key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpecError(f"{name(key)} must be a positive whole number, got {value!r}")


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """A training set as laid out in MRAM.

    ``features`` is the model length d as stored (padding included); ``nonzeros_per_row`` the active
    features of one row (= features for dense rows); a sparse row takes ``slots_per_row`` uint32 byte
    offsets (the study's 40-slot ELL layout). ``rows_per_dpu_weak`` is the shard of weak scaling;
    ``strong_rows`` the whole training set that strong scaling splits over N DPUs. ``bias_index`` (sparse
    layout, bias inside w) is the bias slot's index = the number of real features before it; the kernels'
    update sweep stops there (Criteo: 1,000,000 of the padded 1,001,472); None = the last slot.
    """

    name: str
    layout: str
    features: int
    nonzeros_per_row: int
    slots_per_row: int
    bytes_per_value: int
    rows_per_dpu_weak: int
    strong_rows: int
    label_bytes: int = 4
    bias_separate: bool = True
    positive_fraction: float = 0.5
    description: str = ""
    bias_index: int | None = None

    def __post_init__(self) -> None:
        for key in ("name", "description"):
            if not isinstance(getattr(self, key), str):
                raise SpecError(f"dataset {self.name!r}: {key} must be a string, got {getattr(self, key)!r}")
        if not isinstance(self.bias_separate, bool):
            raise SpecError(f"dataset {self.name!r}: bias_separate must be true or false, got {self.bias_separate!r}")
        if not isinstance(self.layout, str) or self.layout not in LAYOUTS:
            raise unknown("layout", str(self.layout), LAYOUTS)
        check_positive_ints(self, ("features", "nonzeros_per_row", "slots_per_row", "bytes_per_value",
                                   "rows_per_dpu_weak", "strong_rows", "label_bytes"),
                            lambda key: f"dataset {self.name!r}: {key}")
        if self.bytes_per_value not in VALUE_BYTES:
            raise SpecError(f"dataset {self.name!r}: bytes_per_value must be one of {', '.join(map(str, VALUE_BYTES))}"
                            f" (the widths a DPU loads and the kernels' fixed point holds), got {self.bytes_per_value}")
        if self.nonzeros_per_row > self.features:
            raise SpecError(f"dataset {self.name!r}: nonzeros_per_row ({self.nonzeros_per_row}) exceeds "
                            f"features ({self.features})")
        if self.layout == "sparse" and self.slots_per_row < self.nonzeros_per_row:
            raise SpecError(f"dataset {self.name!r}: slots_per_row must be at least nonzeros_per_row")
        if self.bias_index is not None and (isinstance(self.bias_index, bool) or not isinstance(self.bias_index, int)
                                            or not 0 <= self.bias_index < self.features):
            raise SpecError(f"dataset {self.name!r}: bias_index must be a whole number in [0, features), "
                            f"got {self.bias_index!r}")
        if isinstance(self.positive_fraction, bool) or not isinstance(self.positive_fraction, int | float) or not (
                0 < self.positive_fraction < 1):
            raise SpecError(f"dataset {self.name!r}: positive_fraction must be in (0, 1)")

    @property
    def row_bytes(self) -> int:
        """Bytes of one training row in MRAM."""
        per_row = self.features if self.layout == "dense" else self.slots_per_row
        return per_row * self.bytes_per_value

    @property
    def bias_slot(self) -> int:
        """Index of the bias in w (sparse kernels' update sweep covers [0, bias_slot]); dense: features
        (the bias is a separate int64 after w)."""
        if self.layout == "dense":
            return self.features
        return self.features - 1 if self.bias_index is None else self.bias_index

    def train_rows(self, dpus: int, scaling: str) -> int:
        return self.rows_per_dpu_weak * dpus if scaling == "weak" else self.strong_rows


@dataclass(frozen=True, slots=True)
class HyperParams:
    """The study's power-of-two hyper-parameters, held as shift counts (η = 2^-ℓ, λ = 2^-r)."""

    batch_size: int
    """per-DPU mini-batch b of MA-SGD and ADMM."""
    global_batch_size: int
    """global batch B of GA-SGD (each DPU takes B/N rows per round)."""
    learning_rate_shift: int
    reg_shift: int
    admm_alpha_shift: int = 0
    task_epochs: int = 1
    """ADMM local passes over the shard per global epoch (the artifact's ``task_epochs``)."""
    sync_every: int = 1
    """H: local steps between two global averages (local-sgd, hier-sgd; ``resolve_hyperparams`` takes the
    registry's default when the user gives none; 1 = every step)."""

    def __post_init__(self) -> None:
        check_positive_ints(self, ("batch_size", "global_batch_size", "task_epochs", "sync_every"), _option)
        for key in ("learning_rate_shift", "reg_shift", "admm_alpha_shift"):
            value = getattr(self, key)
            if not isinstance(value, int) or not 0 <= value <= 62:
                raise SpecError(f"{_option(key)} must be a whole number in [0, 62], got {value!r}")


def _option(key: str) -> str:
    """The command-line option that sets hyper-parameter ``key``."""
    return "--alpha-shift" if key == "admm_alpha_shift" else "--" + key.replace("_", "-")


YFCC = DatasetSpec(
    name="yfcc100m-hnfc6", layout="dense", features=4096, nonzeros_per_row=4096, slots_per_row=4096,
    bytes_per_value=4, rows_per_dpu_weak=3328, strong_rows=851_968, bias_separate=True, positive_fraction=0.5,
    description="YFCC100M-HNfc6: 4096 dense Q1.31 features + int64 bias, balanced indoor/outdoor labels",
)
CRITEO = DatasetSpec(
    name="criteo-1tb", layout="sparse", features=1_001_472, nonzeros_per_row=39, slots_per_row=40,
    bytes_per_value=4, rows_per_dpu_weak=196_608, strong_rows=50_331_648, bias_separate=False,
    positive_fraction=0.0342, bias_index=1_000_000,
    description="Criteo 1TB: 39 binary features of 10^6 in a 40-slot ELL layout, bias inside w, 3.42 % positive",
)
DATASETS: dict[str, DatasetSpec] = {d.name: d for d in (YFCC, CRITEO)}

# §3.4 of the study's reference: (dataset, model, optimizer) -> (b or B, ℓ, r[, α])
_STUDY_HYPER: dict[tuple[str, str, str], tuple[int, ...]] = {
    ("yfcc100m-hnfc6", "lr", "ma-sgd"): (8, 6, 12), ("yfcc100m-hnfc6", "lr", "ga-sgd"): (8192, 4, 10),
    ("yfcc100m-hnfc6", "lr", "admm"): (8, 6, 12, 4), ("yfcc100m-hnfc6", "svm", "ma-sgd"): (8, 6, 10),
    ("yfcc100m-hnfc6", "svm", "ga-sgd"): (8192, 6, 8), ("yfcc100m-hnfc6", "svm", "admm"): (8, 6, 10, 12),
    ("criteo-1tb", "lr", "ma-sgd"): (2048, 0, 12), ("criteo-1tb", "lr", "ga-sgd"): (262_144, 0, 12),
    ("criteo-1tb", "lr", "admm"): (2048, 0, 12, 6), ("criteo-1tb", "svm", "ma-sgd"): (2048, 2, 12),
    ("criteo-1tb", "svm", "ga-sgd"): (262_144, 2, 12), ("criteo-1tb", "svm", "admm"): (2048, 1, 12, 8),
}


def study_hyperparams(dataset: DatasetSpec, model: str, optimizer: str) -> HyperParams:
    """The study's defaults (an optimizer outside the study borrows those of the study optimizer its registry
    entry names); user datasets borrow those of the preset with the same layout."""
    key_name = dataset.name if dataset.name in DATASETS else ("yfcc100m-hnfc6" if dataset.layout == "dense"
                                                             else "criteo-1tb")
    values = _STUDY_HYPER[(key_name, model, optimizer_info(optimizer).study_name)]
    local_b = _STUDY_HYPER[(key_name, model, "ma-sgd")][0]
    global_b = _STUDY_HYPER[(key_name, model, "ga-sgd")][0]
    alpha = _STUDY_HYPER[(key_name, model, "admm")][3]
    return HyperParams(batch_size=local_b, global_batch_size=global_b, learning_rate_shift=values[1],
                       reg_shift=values[2], admm_alpha_shift=alpha)


KERNEL_VARIANTS = ("study", "corrected")
"""``study``: the artifact's kernels bit for bit (quirks included); ``corrected``: widening casts, SVM margin 0.5,
class weights 1:1 (see ``pimmodel.emulator.kernels.KernelConfig``)."""


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


# ---------------------------------------------------------------- the study's dataset facts and training conventions
STUDY_DPUS = 2048
"""The study's full system for its weak-scaling runs: its training rows are ``rows_per_dpu_weak`` x 2,048."""
STUDY_EPOCHS = 10
"""Epochs of every study run (PIM, CPU, GPU)."""
STUDY_CLASS_WEIGHTS = (0.5, 15.0)
"""Weights of negative and positive rows on Criteo, in the study's Criteo kernels and its CPU baseline
(``baseline/smodel.py``, backward_lr/svm)."""
BASELINE_HINGE_MARGIN = 0.5
"""The CPU/GPU baselines' ``HingeLoss(margin=0.5)`` (``baseline/model.py``, ``smodel.py``), not the PIM kernels'
2^-15 (study note §6.4 item 3)."""

STUDY_LOCAL_STEPS = {"dense": STUDY_EPOCHS * YFCC.rows_per_dpu_weak // 8,
                     "sparse": STUDY_EPOCHS * CRITEO.rows_per_dpu_weak // 2048}
"""Local steps per DPU in the study's 10 epochs (weak scaling, its local batch), which its learning rates were
tuned for: YFCC 4,160, Criteo 960."""


def resolve_hyperparams(dataset: DatasetSpec, model: str, optimizer: str, dpus: int, scaling: str,
                        batch_size: int | None = None, global_batch_size: int | None = None, epochs: int = 10,
                        **others: int) -> tuple[HyperParams, tuple[str, ...]]:
    """The study's hyper-parameters with the ones given replaced, adapted to the deployment where the user gave
    none: the local batch b to the smallest shard (a power of two: the DPUs average with a shift), GA-SGD's
    global batch B to a multiple of the DPU count (B/N rows per DPU per round, at most a shard). For a user's
    dataset (not one of the study's presets) GA-SGD's per-DPU share is the local batch b, and the learning rate
    keeps the study's total step length: its rates were tuned for ``STUDY_LOCAL_STEPS`` local steps, so a run
    with k times fewer steps takes a k times larger step (rounded to a power of two, at most 1/2). Returns the
    hyper-parameters and one sentence per value chosen for the user. Given values that cannot run are errors.
    H (``sync_every``) defaults to the optimizer's registry entry; giving it to an optimizer that does not take it
    is an error."""
    info = optimizer_info(optimizer)
    base = study_hyperparams(dataset, model, optimizer)
    global_batch = info.batch == "global"
    if "sync_every" in others and "sync_every" not in info.takes:
        raise SpecError(f"--sync-every applies to {' and '.join(takers('sync_every'))}; {optimizer} synchronises "
                        "every local step (drop --sync-every)")
    others = {"sync_every": info.default_sync_every, **others}
    train_rows = dataset.train_rows(dpus, scaling)
    smallest = train_rows // dpus
    if smallest == 0:
        raise SpecError(f"{train_rows:,} training rows cannot feed {dpus:,} DPUs; use at most {train_rows:,} --dpus")
    largest = -(-train_rows // dpus)
    notes: list[str] = []
    if batch_size is not None:
        if batch_size <= 0 or batch_size & (batch_size - 1):
            raise SpecError(f"--batch-size {batch_size} must be a power of two (the DPUs average their local "
                            f"batch with a shift), e.g. {_pow2_floor(batch_size)}")
        if batch_size > largest:
            raise SpecError(f"--batch-size {batch_size} exceeds the {largest:,} rows per DPU; use at most "
                            f"{_pow2_floor(largest)}")
        b = batch_size
    else:
        b = base.batch_size if base.batch_size <= smallest else _pow2_floor(smallest)
        if b != base.batch_size:
            notes.append(f"batch size {b} per DPU (the study's {base.batch_size} exceeds the {smallest:,} rows of "
                         "the smallest shard)")
    if global_batch_size is not None:
        if global_batch_size % dpus:
            lower = max(dpus, global_batch_size // dpus * dpus)
            raise SpecError(f"--global-batch-size {global_batch_size:,} is not a multiple of --dpus {dpus:,} (each "
                            f"DPU takes B/N rows per round); use e.g. {lower:,}")
        if global_batch_size // dpus > largest:
            raise SpecError(f"--global-batch-size {global_batch_size:,} gives {global_batch_size // dpus:,} rows "
                            f"per DPU per round, more than the {largest:,} rows per DPU; use at most "
                            f"{largest * dpus:,}")
        big_b = global_batch_size
    elif dataset.name in DATASETS:  # the study's global batch, made a multiple of the DPU count
        per_dpu = min(max(1, round(base.global_batch_size / dpus)), smallest)
        big_b = per_dpu * dpus
        if big_b != base.global_batch_size and global_batch:
            notes.append(f"global batch {big_b:,} = {dpus:,} DPUs x {per_dpu:,} rows per round (the study's "
                         f"{base.global_batch_size:,} made a multiple of the DPU count)")
    else:  # a user's dataset: each DPU takes the study's local batch per round
        big_b = b * dpus
        if global_batch:
            notes.append(f"global batch {big_b:,} = {dpus:,} DPUs x {b:,} rows per round (the study's local batch; "
                         "its global batch is sized for 6.8 M rows)")
    if dataset.name not in DATASETS:
        # GA-SGD takes the local batch per DPU here, so it takes MA-SGD's rates (the study's GA rates go with B)
        local_rates = study_hyperparams(dataset, model, "ma-sgd") if global_batch else base
        others = {"reg_shift": local_rates.reg_shift, **others}
        if "learning_rate_shift" not in others:
            local = b if not global_batch else big_b // dpus
            steps = epochs * -(-largest // local) * (others.get("task_epochs", base.task_epochs)
                                                     if "task_epochs" in info.takes else 1)
            faster = max(0, round(math.log2(STUDY_LOCAL_STEPS[dataset.layout] / steps)))
            # dense kernels sum a batch's b terms (each at most 2^(31 - l)) in an int32: from l = log2(b) on, only b
            # rows all holding the largest value 1.0 of a feature with the same gradient sign could reach 2^31
            floor = max(1, local.bit_length() - 1) if dataset.layout == "dense" else 1
            others["learning_rate_shift"] = shift = max(floor, local_rates.learning_rate_shift - faster)
            if shift != base.learning_rate_shift:
                cap = f"; at least 2^-{floor} so a batch of {local} fits the kernels' int32 accumulator" \
                    if shift == floor and floor > 1 else ""
                notes.append(f"learning rate 2^-{shift} (the study's 2^-{local_rates.learning_rate_shift} is tuned "
                             f"for {STUDY_LOCAL_STEPS[dataset.layout]:,} local steps; this run makes {steps:,}{cap})")
    if "sync_every" in info.takes:
        local = b if not global_batch else big_b // dpus
        steps = -(-largest // local) * (others.get("task_epochs", base.task_epochs) if "task_epochs" in info.takes
                                        else 1)
        if others["sync_every"] > steps:
            notes.append(f"H = {steps:,} local steps between averages (--sync-every {others['sync_every']:,} exceeds "
                         f"the {steps:,} local steps of an epoch; an epoch ends with an average, so it is one per "
                         "epoch)")
            others["sync_every"] = steps
    return replace(base, batch_size=b, global_batch_size=big_b, **others), tuple(notes)


@dataclass(frozen=True, slots=True)
class Workload:
    """One training job: what runs, on how many DPUs, for how many epochs.

    Rows are split as a host would: contiguous blocks, the remainder spread over the first DPUs, so shards hold
    ``rows_per_dpu`` (the largest, which decides the epoch) or one row fewer. ``hyper`` None: the study's
    hyper-parameters adapted to the deployment (``resolve_hyperparams``; ``notes`` says what was chosen)."""

    dataset: DatasetSpec
    model: str
    optimizer: str
    dpus: int
    tasklets: int = 16
    scaling: str = "weak"
    epochs: int = 10
    hyper: HyperParams | None = None
    kernels: str = "study"
    notes: tuple[str, ...] = field(default=(), compare=False)
    """what the defaults chose for this deployment (printed by the CLI, kept in the records)."""

    def __post_init__(self) -> None:
        check_known("model", self.model, MODELS)
        check_known("optimizer", self.optimizer, OPTIMIZERS)
        check_known("scaling", self.scaling, SCALINGS)
        check_known("kernel variant", self.kernels, KERNEL_VARIANTS)
        check_positive_ints(self, ("dpus", "tasklets", "epochs"), lambda key: f"--{key}")
        if self.hyper is None:
            hyper, notes = resolve_hyperparams(self.dataset, self.model, self.optimizer, self.dpus, self.scaling,
                                               epochs=self.epochs)
            object.__setattr__(self, "hyper", hyper)
            object.__setattr__(self, "notes", notes)
        elif self.train_rows < self.dpus:
            raise SpecError(f"{self.train_rows:,} training rows cannot feed {self.dpus:,} DPUs; use at most "
                            f"{self.train_rows:,} --dpus")
        self._check_batches()

    def _check_batches(self) -> None:
        """The kernels' constraints on the batch sizes (the same checks as ``resolve_hyperparams``)."""
        if self.info.batch == "global":
            big_b = self.hp.global_batch_size
            if big_b % self.dpus or big_b < self.dpus:
                raise SpecError(f"--global-batch-size {big_b:,} is not a multiple of --dpus {self.dpus:,}; use a "
                                "multiple of the DPU count")
        else:
            b = self.hp.batch_size
            if b & (b - 1):
                raise SpecError(f"--batch-size {b} must be a power of two (the DPUs average their local batch with "
                                f"a shift), e.g. {_pow2_floor(b)}")
        if self.local_batch > self.rows_per_dpu:
            raise SpecError(f"a local batch of {self.local_batch:,} rows exceeds the {self.rows_per_dpu:,} rows per "
                            "DPU; use a smaller --batch-size / --global-batch-size")

    @property
    def hp(self) -> HyperParams:
        assert self.hyper is not None  # set in __post_init__
        return self.hyper

    @property
    def info(self) -> OptimizerInfo:
        """The optimizer's registry entry."""
        return optimizer_info(self.optimizer)

    @property
    def train_rows(self) -> int:
        return self.dataset.train_rows(self.dpus, self.scaling)

    @property
    def rows_per_dpu(self) -> int:
        """Rows of the largest shard: ceil(rows / DPUs)."""
        return -(-self.train_rows // self.dpus)

    @property
    def local_batch(self) -> int:
        """Rows each DPU processes per local step (B/N for a global batch, else b)."""
        if self.info.batch == "global":
            return self.hp.global_batch_size // self.dpus
        return self.hp.batch_size

    @property
    def local_epochs(self) -> int:
        """Passes over its shard each DPU makes per global epoch (ADMM's ``task_epochs``; 1 otherwise)."""
        return self.hp.task_epochs if "task_epochs" in self.info.takes else 1

    @property
    def sync_every(self) -> int:
        """H: local steps between two global averages (1 for the optimizers that do not take it)."""
        return self.hp.sync_every if "sync_every" in self.info.takes else 1

    @property
    def steps_per_epoch(self) -> int:
        """Local steps (mini-batches, the last one possibly partial) per DPU per epoch."""
        return self.local_epochs * -(-self.rows_per_dpu // self.local_batch)

    @property
    def rounds_per_epoch(self) -> int:
        """Synchronisation rounds per epoch (over the host or over links): one per local step, one per H local
        steps (the last one possibly shorter), or one (``OptimizerInfo.sync``)."""
        sync = self.info.sync
        if sync == "epoch":
            return 1
        return -(-self.steps_per_epoch // self.sync_every) if sync == "every-h" else self.steps_per_epoch

    def with_(self, **changes: Any) -> Workload:
        return replace(self, **changes)


# ---------------------------------------------------------------- user-defined datasets
@lru_cache(maxsize=1)
def dataset_schema() -> Any:
    """The schema of a dataset file's table (the file itself, or its ``[dataset]`` table): ``specs.schema``."""
    # lazy imports keep the CLI's cold start fast (msgspec is imported only when a file is validated)
    from typing import Annotated

    import msgspec

    from .schema import literal

    def count(doc: str, low: int = 1) -> Any:
        return Annotated[int, msgspec.Meta(ge=low, description=doc)]

    unset = msgspec.UNSET
    return msgspec.defstruct("dataset", [
        ("features", count("the model length d as stored (padding included)")),
        ("rows_per_dpu_weak", count("rows per DPU under weak scaling")),
        ("name", Annotated[str, msgspec.Meta(min_length=1, description="default: the file's name")], unset),
        ("layout", literal(LAYOUTS), "dense"),
        ("nonzeros_per_row", count("active features of one row (default: features if dense, else 1)"), unset),
        ("slots_per_row", count("uint32 offsets a sparse row takes (default: nonzeros_per_row)"), unset),
        ("bytes_per_value", Annotated[literal(VALUE_BYTES), msgspec.Meta(
            description="width of a stored value (a DPU's 8-, 16-, 32- and 64-bit loads)")], 4),
        ("strong_rows", count("the training set strong scaling splits (default: 256 x rows_per_dpu_weak)"), unset),
        ("label_bytes", count("bytes of one label"), 4),
        ("bias_separate", bool, unset),
        ("positive_fraction", Annotated[float, msgspec.Meta(gt=0, lt=1)], 0.5),
        ("description", str, ""),
        ("bias_index", count("the bias slot of a sparse row (default: the last)", 0), unset),
    ], forbid_unknown_fields=True, kw_only=True)


@lru_cache(maxsize=1)
def dataset_file_schema() -> Any:
    """A dataset file with its keys under ``[dataset]``."""
    # lazy imports keep the CLI's cold start fast
    import msgspec

    return msgspec.defstruct("dataset_file", [("dataset", dataset_schema())], forbid_unknown_fields=True)


def dataset_json_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset file: its keys at the top level or under ``[dataset]``."""
    # lazy imports keep the CLI's cold start fast
    import msgspec

    (one, wrapped), defs = msgspec.json.schema_components([dataset_schema(), dataset_file_schema()])
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "anyOf": [one, wrapped], "$defs": defs}


def dataset_from_mapping(data: Mapping[str, Any], origin: str) -> DatasetSpec:
    """A dataset from a parsed file checked against ``dataset_schema()`` (one line naming the file and key)."""
    # lazy imports keep the CLI's cold start fast
    from .schema import validate

    if "dataset" in data:
        validate(data, dataset_file_schema(), origin)
        table = data["dataset"]
    else:
        validate(data, dataset_schema(), origin)
        table = data
    layout = table.get("layout", "dense")
    values = dict(table)
    values.setdefault("name", Path(origin).stem)
    values.setdefault("layout", layout)
    values.setdefault("nonzeros_per_row", values["features"] if layout == "dense" else 1)
    values.setdefault("slots_per_row", values["features"] if layout == "dense" else values["nonzeros_per_row"])
    values.setdefault("bytes_per_value", 4)
    values.setdefault("strong_rows", values["rows_per_dpu_weak"] * 256)
    values.setdefault("bias_separate", layout == "dense")
    return DatasetSpec(**values)


def load_dataset(name_or_path: str) -> DatasetSpec:
    """A preset by name, or a TOML file describing a user dataset."""
    check_type("load_dataset", "name_or_path", name_or_path, (str, Path), "a dataset name or a TOML file path")
    name_or_path = str(name_or_path)
    if name_or_path in DATASETS:
        return DATASETS[name_or_path]
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return dataset_from_mapping(read_toml(path, "dataset"), str(path))
    raise unknown("dataset", name_or_path, DATASETS)
