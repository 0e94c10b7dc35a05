"""Frozen, validated specifications: hardware (from ``hardware_specs/*.toml``) and workloads."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..errors import SpecError, check_type, unknown
from ..resources import data_dir
from .hardware import FIELDS, TOPOLOGIES, HardwareSpec, load_file, to_toml
from .optimizers import OPTIMIZERS, REGISTRY, STUDY_OPTIMIZERS, OptimizerInfo, optimizer_info, require_links
from .workload import (
    CRITEO,
    DATASETS,
    KERNEL_VARIANTS,
    MODELS,
    SCALINGS,
    YFCC,
    DatasetSpec,
    HyperParams,
    Workload,
    load_dataset,
    resolve_hyperparams,
    study_hyperparams,
)

DEFAULT_HARDWARE = "upmem-2556"


def hardware_dir() -> Path:
    """Where the shipped hardware files live (``PIMMODEL_HARDWARE_DIR`` overrides)."""
    return data_dir("hardware_specs")


def hardware_names() -> list[str]:
    return sorted(p.stem for p in hardware_dir().glob("*.toml"))


@lru_cache(maxsize=32)
def _load_named(name: str) -> HardwareSpec:
    return load_file(hardware_dir() / f"{name}.toml")


def load_hardware(name_or_path: str = DEFAULT_HARDWARE) -> HardwareSpec:
    """A shipped system by name, or a TOML file path."""
    check_type("load_hardware", "name_or_path", name_or_path, (str, Path), "a hardware name or a TOML file path")
    name_or_path = str(name_or_path)
    if name_or_path in hardware_names():
        return _load_named(name_or_path)
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists() or os.sep in name_or_path:
        if path.is_dir():
            raise SpecError(f"hardware {name_or_path!r} is a directory; give a .toml file or a name")
        return load_file(path)
    raise unknown("hardware", name_or_path, hardware_names())


__all__ = [
    "CRITEO", "DATASETS", "DEFAULT_HARDWARE", "FIELDS", "KERNEL_VARIANTS", "MODELS", "OPTIMIZERS", "SCALINGS",
    "REGISTRY", "STUDY_OPTIMIZERS", "TOPOLOGIES", "YFCC",
    "DatasetSpec", "HardwareSpec", "HyperParams", "OptimizerInfo", "Workload", "hardware_dir", "hardware_names",
    "load_dataset", "load_hardware", "optimizer_info", "require_links", "resolve_hyperparams", "study_hyperparams",
    "to_toml",
]
