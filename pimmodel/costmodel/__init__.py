"""Symbolic cost model: one sympy equation set per optimizer, compiled once, evaluated vectorized.

It takes coefficients as an argument; resolving them from a calibration file is the caller's job.
"""

from __future__ import annotations

from .coefficients import COEFFICIENT_DEFAULTS
from .evaluate import HardwareInputs, evaluate, workload_inputs
from .predict import Prediction, predict

__all__ = ["COEFFICIENT_DEFAULTS", "HardwareInputs", "Prediction", "evaluate", "predict", "workload_inputs"]
