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


def run_emulation(dataset: str, dpus: int, model: str, optimizer: str, hyper: Any = None, **options: Any) -> Any:
    """``pimmodel.api.emulate`` with the emulator's ``Options`` given as keywords (epochs default 1 here)."""
    from pimmodel.api import emulate
    from pimmodel.emulator.api import Options

    return emulate(dataset, dpus, model, optimizer, hyper, Options(**{"epochs": 1, **options}))


def raw_floats(*args: Any, **kwargs: Any) -> dict[str, float]:
    return {k: float(np.asarray(v)) for k, v in raw(*args, **kwargs).items()}
