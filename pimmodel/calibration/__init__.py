"""Calibration: fit the cost model's data-dependent coefficients to emulator runs, and store the result.

``calibrate()`` emulates a design (``design.py``), fits each data layout's free coefficients with
``scipy.optimize.least_squares`` (``fit.py``), and returns a ``CalibrationResult`` (``result.py``) with the
provenance and the before/after error per phase. Hardware constants are never fitted.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy re-exports: ``predict`` reads the shipped calibration through ``result`` on every CLI start, and
# must not pay for scipy.optimize (the fit) or the emulator.
_LAZY = {
    "FIT_PHASES": "fit", "CalibrationError": "fit", "fit": "fit", "fit_layout": "fit",
    "Observation": "observations", "model_phases": "observations",
    "CalibrationResult": "result", "LayoutFit": "result", "load_calibration": "result", "read_calibration": "result",
    "coefficients_for": "result",
    "DesignPoint": "design", "EmulatorSettings": "design", "default_design": "design", "tiny_design": "design",
    "emulate": "compare", "calibrate": "run",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
