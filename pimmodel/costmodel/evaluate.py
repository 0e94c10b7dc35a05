"""Evaluate the compiled model on hardware: the one place where a workload, a hardware description and the
coefficients become the model's raw per-epoch outputs (``EquationSet.outputs`` keys: the phases, the exposed
DMA, rounds, bytes, DMA counts, link time).

The hardware is a ``HardwareSpec`` (its numeric fields and its link topology) or ``HardwareInputs`` (the same
as arrays: a design-space batch, a Monte Carlo sample). Coefficients are an argument: resolving them from a
calibration is the caller's job (``pimmodel.calibration``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SpecError
from ..specs import HardwareSpec, Workload
from ..specs.architectures import DEFAULT_FAMILY, architecture, architecture_of, resolve
from ..specs.optimizers import torus_shape
from .coefficients import COEFFICIENT_DEFAULTS
from .compile import compiled


@dataclass(frozen=True)
class HardwareInputs:
    """The model's hardware inputs: numeric field values (numbers or equal-length arrays) and a link topology."""

    values: Mapping[str, Any]
    topology: str = "none"
    family: str = DEFAULT_FAMILY
    """the architecture family whose pricing the values are for (``specs.architectures``)."""

    @classmethod
    def of(cls, hw: HardwareSpec, **changes: Any) -> HardwareInputs:
        """A spec's values, some of them replaced (e.g. by arrays of candidate values)."""
        return cls({**hw.numeric(), **changes}, hw.link_topology, architecture_of(hw).name)


def family_pricing(hw: Any) -> Any:
    """The pricing module of ``hw``'s architecture family, or None for the optimizers' own equations."""
    info = architecture(hw.family) if isinstance(hw, HardwareInputs) else architecture_of(hw)
    return resolve(info.pricing) if info.pricing else None


def workload_inputs(w: Workload) -> dict[str, float]:
    """The workload symbols' values (``costmodel.symbols.WorkloadSymbols``)."""
    return {"dpus": w.dpus, "tasklets": w.tasklets, "rows_per_dpu": w.rows_per_dpu,
            "local_batch": w.local_batch, "features": w.dataset.features,
            "nonzeros": w.dataset.nonzeros_per_row, "bytes_per_value": w.dataset.bytes_per_value,
            "bias_slot": w.dataset.bias_slot, "local_epochs": w.local_epochs, "sync_every": w.sync_every,
            "torus_rows": torus_shape(w.dpus)[0]}


def evaluate_point(w: Workload, hw: HardwareSpec, coefficients: Mapping[str, float]) -> dict[str, float]:
    """``evaluate`` at one design point (a spec, no arrays): the scalar ``math`` function, no broadcasting."""
    entry = _POINTS.get((id(w), id(hw), id(coefficients)))
    if entry is None and (pricing := family_pricing(hw)) is not None:
        return pricing.evaluate_point(w, hw, coefficients)  # type: ignore[no-any-return]
    if entry is None or entry[0] is not w or entry[1] is not hw or entry[2] != coefficients:
        missing = set(COEFFICIENT_DEFAULTS) - set(coefficients)
        if missing:
            raise SpecError(f"coefficients {sorted(missing)} are missing; resolve them from a calibration "
                            "(pimmodel.calibration.load_calibration(...).coefficients_for(workload))")
        model = compiled(w.optimizer, w.model, w.dataset.layout, hw.link_topology, w.kernels)
        values = {**hw.numeric(), **coefficients, **workload_inputs(w)}
        try:
            args = tuple(float(values[name]) for name in model.inputs)
        except KeyError as exc:
            raise KeyError(f"cost model input {exc.args[0]!r} is missing") from None
        if len(_POINTS) > 256:
            _POINTS.clear()
        # the objects themselves are kept: an id is not reused while its entry holds it
        entry = _POINTS[(id(w), id(hw), id(coefficients))] = (w, hw, dict(coefficients), model, args)
    model, args = entry[3], entry[4]
    return dict(zip(model.outputs, map(float, model.scalar_function(*args)), strict=True))


_POINTS: dict[tuple[int, int, int], tuple[Workload, HardwareSpec, dict[str, Any], Any, tuple[float, ...]]] = {}
"""(workload, hardware, coefficients) by identity -> the scalar function and its arguments: one design point asked
again (a loop, a sweep over views) resolves its inputs once; equal coefficients are checked, not assumed."""


def evaluate(w: Workload, hw: HardwareSpec | HardwareInputs, coefficients: Mapping[str, Any],
             workload: Mapping[str, Any] | None = None, outputs: tuple[str, ...] | None = None
             ) -> dict[str, np.ndarray]:
    """Raw per-epoch outputs of ``w`` on ``hw`` (averaging over ``hw``'s link topology). ``workload`` overrides
    workload inputs by name (arrays evaluate many deployments of the same configuration at once); ``outputs``:
    only these (default every one)."""
    inputs = hw if isinstance(hw, HardwareInputs) else HardwareInputs.of(hw)
    pricing = family_pricing(inputs)
    if pricing is not None:
        return pricing.evaluate(w, inputs.values, coefficients, workload, outputs)  # type: ignore[no-any-return]
    missing = set(COEFFICIENT_DEFAULTS) - set(coefficients)
    if missing:
        raise SpecError(f"coefficients {sorted(missing)} are missing; resolve them from a calibration "
                        "(pimmodel.calibration.load_calibration(...).coefficients_for(workload))")
    model = compiled(w.optimizer, w.model, w.dataset.layout, inputs.topology, w.kernels)
    return model({**inputs.values, **coefficients, **workload_inputs(w), **(workload or {})}, outputs)
