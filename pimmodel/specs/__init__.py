"""Frozen, validated specifications: hardware (from ``hardware_specs/*.toml``) and workloads."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..errors import SpecError, check_type, unknown
from ..resources import data_dir
from ._toml import dumps, read_toml
from .architectures import FAMILIES as HARDWARE_FAMILIES
from .architectures import REGISTRY as _ARCHITECTURES
from .architectures import architecture_of, family_of, resolve, spec_loader
from .hardware import FIELDS, TOPOLOGIES, HardwareSpec
from .optimizers import (
    OPTIMIZERS,
    REGISTRY,
    STUDY_OPTIMIZERS,
    OptimizerInfo,
    optimizer_info,
    register,
    require_links,
    unregister,
)
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
SPEC_TYPES: tuple[type, ...] = tuple(resolve(info.spec) for info in _ARCHITECTURES.values())
"""The spec record of every architecture family (what ``isinstance`` accepts as a hardware spec)."""


def hardware_dir() -> Path:
    """Where the shipped hardware files live (``PIMMODEL_HARDWARE_DIR`` overrides)."""
    return data_dir("hardware_specs")


def hardware_names() -> list[str]:
    return sorted(p.stem for p in hardware_dir().glob("*.toml"))


@lru_cache(maxsize=32)
def _load_named(name: str) -> HardwareSpec:
    return load_file(hardware_dir() / f"{name}.toml")


def load_file(path: Path) -> HardwareSpec:
    """A hardware file of any architecture family (its ``family`` key; ``specs.architectures``)."""
    data = read_toml(path, "hardware")
    family = family_of(data, str(path))
    return spec_loader(family)(data, str(path))  # type: ignore[no-any-return]


def to_toml(spec: HardwareSpec) -> str:
    """A spec's canonical TOML (its family's ``to_mapping``): what its hash in provenance is taken of."""
    module = resolve(architecture_of(spec).spec.partition(":")[0])
    return dumps(module.to_mapping(spec))


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
    "HARDWARE_FAMILIES", "REGISTRY", "SPEC_TYPES", "STUDY_OPTIMIZERS", "TOPOLOGIES", "YFCC", "register", "unregister",
    "DatasetSpec", "HardwareSpec", "HyperParams", "OptimizerInfo", "Workload", "hardware_dir", "hardware_names",
    "load_dataset", "load_hardware", "optimizer_info", "require_links", "resolve_hyperparams", "study_hyperparams",
    "to_toml",
]
