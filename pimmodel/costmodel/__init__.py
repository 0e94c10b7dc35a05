"""Symbolic cost model: one sympy equation set per optimizer, compiled once, evaluated vectorized."""

from __future__ import annotations

from .coefficients import COEFFICIENT_DEFAULTS
from .predict import BYTE_KEYS, PHASES, VIEWS, Prediction, evaluate, phases_for_view, predict, predict_many

__all__ = ["BYTE_KEYS", "COEFFICIENT_DEFAULTS", "PHASES", "VIEWS", "Prediction", "evaluate", "phases_for_view",
           "predict", "predict_many"]
