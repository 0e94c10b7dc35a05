"""pimmodel: predict, explain and explore distributed ML training on processing-in-memory hardware.

The public API is imported lazily so that ``import pimmodel`` stays cheap (the CLI's cold start).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "load_hardware": "pimmodel.specs",
    "load_dataset": "pimmodel.specs",
    "Workload": "pimmodel.specs",
    "HardwareSpec": "pimmodel.specs",
    "HyperParams": "pimmodel.specs",
    "predict": "pimmodel.api",
    "predict_interval": "pimmodel.api",
    "emulate": "pimmodel.api",
    "Prediction": "pimmodel.costmodel",
    "validate": "pimmodel.validation",
    "load_calibration": "pimmodel.calibration.result",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pimmodel' has no attribute {name!r}")
