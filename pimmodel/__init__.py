"""pimmodel: predict, explain and explore distributed ML training on processing-in-memory hardware.

Library use (every name below is typed; ``pimmodel.api`` documents the entry points):

- ``predict(workload, hardware, view, calibration) -> Prediction`` and ``predict_interval(...)``: the cost
  model's per-epoch phase times (``Prediction.to_record()``, ``.to_dataframe()``; ``to_dataframe(predictions)``
  for several; pandas is optional);
- ``emulate(dataset, dpus, model, optimizer, ...) -> EmulationReport``: train on emulated DPUs, with the cost
  model's prediction of the same run;
- ``provenance(hardware, calibration, seed) -> Provenance``: the version and hashes a record carries;
- ``Workload``, ``load_dataset``, ``load_hardware``, ``HardwareSpec``, ``HyperParams``, ``load_calibration``,
  ``validate``;
- ``pimmodel.emulator.PimLogisticRegression`` / ``PimSVM``: scikit-learn estimators (needs scikit-learn).

The public API is imported lazily so that ``import pimmodel`` stays cheap (the CLI's cold start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

_LAZY = {
    "load_hardware": "pimmodel.specs",
    "load_dataset": "pimmodel.specs",
    "Workload": "pimmodel.specs",
    "HardwareSpec": "pimmodel.specs",
    "HyperParams": "pimmodel.specs",
    "predict": "pimmodel.api",
    "predict_interval": "pimmodel.api",
    "emulate": "pimmodel.api",
    "provenance": "pimmodel.api",
    "EmulationReport": "pimmodel.api",
    "Provenance": "pimmodel.api",
    "Prediction": "pimmodel.costmodel.predict",
    "to_dataframe": "pimmodel.costmodel.predict",
    "validate": "pimmodel.validation",
    "load_calibration": "pimmodel.calibration.result",
    "CalibrationResult": "pimmodel.calibration.result",
    "PimModelError": "pimmodel.errors",
}

if TYPE_CHECKING:  # what type checkers see of the lazy names (py.typed ships the hints)
    from .api import EmulationReport, Provenance, emulate, predict, predict_interval, provenance
    from .calibration.result import CalibrationResult, load_calibration
    from .costmodel.predict import Prediction, to_dataframe
    from .errors import PimModelError
    from .specs import HardwareSpec, HyperParams, Workload, load_dataset, load_hardware
    from .validation import validate

__all__ = [
    "CalibrationResult", "EmulationReport", "HardwareSpec", "HyperParams", "PimModelError", "Prediction",
    "Provenance", "Workload", "__version__", "emulate", "load_calibration", "load_dataset", "load_hardware",
    "predict", "predict_interval", "provenance", "to_dataframe", "validate",
]
"""The lazy names and the version (a literal list, which type checkers and linters read)."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pimmodel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
