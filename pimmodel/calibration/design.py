"""The calibration design: which emulator runs the coefficients are fitted to.

Per optimizer x model x layout, a few configurations that vary the DPU count, samples per DPU, features,
batch size and density (dense: the fraction of features that carry data; sparse: 39 active of ``features``).
Everything is small enough that the default design emulates in about a minute on two cores. Hold-out
configurations for validation (larger DPU and sample counts) live in ``validation/emulator.toml``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..emulator.data import SyntheticDense, shard, synthetic_sparse
from ..errors import SpecError, check_choice
from ..specs import (
    CRITEO,
    MODELS,
    STUDY_OPTIMIZERS,
    YFCC,
    DatasetSpec,
    HyperParams,
    Workload,
    optimizer_info,
    study_hyperparams,
)
from ..specs.workload import LAYOUTS

OPTIMIZERS = STUDY_OPTIMIZERS  # the calibration design fits the study optimizers (the others borrow theirs)
SPARSE_ACTIVE = 39
TASKLETS = 16


@dataclass(frozen=True)
class EmulatorSettings:
    """How the emulator is run for calibration (stored in the calibration file)."""

    epochs: int = 2
    """epochs per run; the reference is the mean epoch (coefficients drift as training proceeds)."""
    arithmetic: str = "fixed"
    tasklets: int = TASKLETS


@dataclass(frozen=True)
class DesignPoint:
    layout: str
    optimizer: str
    model: str
    dpus: int
    rows_per_dpu: int
    features: int
    batch_size: int
    """per-DPU batch (MA-SGD, ADMM) or global batch B (GA-SGD)."""
    density: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice("design point layout", self.layout, LAYOUTS, SpecError)
        if not 0 < self.density <= 1:
            raise SpecError(f"design point density must be in (0, 1], got {self.density}")

    @property
    def name(self) -> str:
        return (f"{self.layout}-{self.optimizer}-{self.model}-n{self.dpus}-r{self.rows_per_dpu}-d{self.features}"
                f"-b{self.batch_size}-p{self.density:g}-s{self.seed}")

    def hyper(self) -> HyperParams:
        preset = YFCC if self.layout == "dense" else CRITEO
        hp = study_hyperparams(preset, self.model, self.optimizer)
        if optimizer_info(self.optimizer).batch == "global":
            return replace(hp, global_batch_size=self.batch_size)
        return replace(hp, batch_size=self.batch_size)

    def model_features(self) -> int:
        """Model length d as the kernels hold it (sparse: features + bias slot, padded to T x 128)."""
        if self.layout == "dense":
            return self.features
        unit = TASKLETS * 128
        return -(-(self.features + 1) // unit) * unit

    def dataset(self) -> DatasetSpec:
        d = self.model_features()
        if self.layout == "dense":
            nonzeros = max(1, round(self.density * d))
            return DatasetSpec(name=self.name, layout="dense", features=d, nonzeros_per_row=nonzeros, slots_per_row=d,
                               bytes_per_value=4, rows_per_dpu_weak=self.rows_per_dpu,
                               strong_rows=self.rows_per_dpu * self.dpus, bias_separate=True)
        return DatasetSpec(name=self.name, layout="sparse", features=d, nonzeros_per_row=SPARSE_ACTIVE,
                           slots_per_row=SPARSE_ACTIVE + 1, bytes_per_value=4, rows_per_dpu_weak=self.rows_per_dpu,
                           strong_rows=self.rows_per_dpu * self.dpus, bias_separate=False,
                           positive_fraction=CRITEO.positive_fraction, bias_index=self.features)

    def workload(self, epochs: int = 1) -> Workload:
        return Workload(self.dataset(), self.model, self.optimizer, self.dpus, tasklets=TASKLETS, epochs=epochs,
                        hyper=self.hyper())

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> DesignPoint:
        allowed = set(cls.__dataclass_fields__)
        unknown_keys = set(data) - allowed
        if unknown_keys:
            raise SpecError(f"design point: unknown keys {sorted(unknown_keys)} (valid: {sorted(allowed)})")
        return cls(**dict(data))


class MaskedDense:
    """A dense synthetic source whose features outside a seeded ``density`` fraction are zero."""

    def __init__(self, source: Any, density: float, seed: int) -> None:
        self.source = source
        self.layout, self.n_dpus = source.layout, source.n_dpus
        self.rows_per_dpu, self.features = source.rows_per_dpu, source.features
        keep = np.random.default_rng([seed, 7]).random(self.features) < density
        self.mask = keep.astype(np.uint32)

    def rows(self, start: int, stop: int) -> tuple[NDArray, NDArray[np.uint8]]:
        x, y = self.source.rows(start, stop)
        return x * self.mask, y

    def valid(self, start: int, stop: int) -> NDArray[np.bool_] | None:
        return self.source.valid(start, stop)


def shards(point: DesignPoint) -> Any:
    """The emulator's data for a design point (seeded synthetic YFCC-like or Criteo-like rows)."""
    if point.layout == "dense":
        src = SyntheticDense(point.dpus, point.rows_per_dpu, point.features, seed=point.seed)
        return src if point.density >= 1 else MaskedDense(src, point.density, point.seed)
    x, y = synthetic_sparse(point.dpus * point.rows_per_dpu, features=point.features, seed=point.seed)
    return shard(x, y, point.dpus, "sparse", point.features)


def default_design(seed: int = 0) -> list[DesignPoint]:
    """Four configurations per optimizer x model x layout, varying every axis (48 emulator runs)."""
    dense = [(2, 64, 2048, 8, 1.0), (4, 32, 2048, 4, 0.5), (8, 32, 4096, 16, 1.0), (4, 64, 4096, 8, 0.25)]
    sparse = [(2, 256, 8_000, 32, 1.0), (4, 128, 20_000, 64, 1.0), (8, 128, 50_000, 16, 1.0),
              (4, 256, 100_000, 32, 1.0)]
    points = []
    for (layout, table), opt, model in itertools.product((("dense", dense), ("sparse", sparse)), OPTIMIZERS, MODELS):
        for k, (n, rows, d, b, density) in enumerate(table):
            batch = b * n if optimizer_info(opt).batch == "global" else b
            points.append(DesignPoint(layout, opt, model, n, rows, d, batch, density, seed + k))
    return points


def tiny_design(seed: int = 0) -> list[DesignPoint]:
    """A few seconds of emulation: two small points per optimizer x model x layout."""
    points = []
    for opt, model in itertools.product(OPTIMIZERS, MODELS):
        for k, (n, rows, b, density) in enumerate(((2, 16, 4, 1.0), (4, 16, 8, 0.5))):
            batch = b * n if optimizer_info(opt).batch == "global" else b
            points.append(DesignPoint("dense", opt, model, n, rows, 2048, batch, density, seed + k))
        for k, (n, rows, b, d) in enumerate(((2, 64, 16, 4_000), (2, 64, 32, 8_000))):
            batch = b * n if optimizer_info(opt).batch == "global" else b
            points.append(DesignPoint("sparse", opt, model, n, rows, d, batch, 1.0, seed + k))
    return points
