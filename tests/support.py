"""Helpers shared by the tests (on the path through ``pythonpath = ["tests"]`` in pyproject.toml)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pimmodel.calibration.result import coefficients_for
from pimmodel.costmodel import HardwareInputs, evaluate
from pimmodel.specs import HardwareSpec, Workload


def raw(w: Workload, hw: HardwareSpec | Mapping[str, Any], topology: str | None = None,
        coefficients: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The cost model's raw outputs with the documented default coefficients (unless given): ``hw`` is a spec
    (its topology, unless ``topology`` overrides it) or a dict of hardware values (topology "none")."""
    if isinstance(hw, HardwareSpec):
        inputs = HardwareInputs(hw.numeric(), topology or hw.link_topology)
    else:
        inputs = HardwareInputs(hw, topology or "none")
    return evaluate(w, inputs, coefficients_for(w, coefficients))


def raw_floats(*args: Any, **kwargs: Any) -> dict[str, float]:
    return {k: float(np.asarray(v)) for k, v in raw(*args, **kwargs).items()}
