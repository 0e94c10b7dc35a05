"""The validation data files (package data ``pimmodel/data/validation``; ``PIMMODEL_VALIDATION_DIR``
overrides)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from ..resources import data_dir
from ..specs._toml import read_toml


def validation_dir() -> Path:
    return data_dir("validation")


@lru_cache(maxsize=8)
def load(name: str) -> dict[str, Any]:
    """A TOML file of the validation folder, parsed (one-line error if missing or malformed)."""
    return read_toml(validation_dir() / name, "validation data")
