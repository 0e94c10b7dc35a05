"""Every sympy symbol of the cost model, declared once with its assumptions.

Hardware symbols carry exactly the names of the numeric ``HardwareSpec`` fields, so a spec's
``numeric()`` dict is the compiled model's hardware input. Workload symbols describe the deployment;
coefficients are the data-dependent quantities that calibration fits to the emulator.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import sympy

from ..specs.hardware import FIELDS
from .coefficients import COEFFICIENT_DEFAULTS


class HardwareSymbols:
    """Attribute access ``hw.dpu_clock_hz`` etc.; usable wherever a HardwareSpec is (see primitives)."""

    def __init__(self) -> None:
        for f in FIELDS:
            # fields whose range includes 0 (a native unit's mul_step, the broadcast flag) are nonnegative
            setattr(self, f.name, sympy.Symbol(f.name, positive=f.low > 0 or None, nonnegative=True,
                                               integer=f.integer or None))

    def __getattr__(self, name: str) -> sympy.Symbol:  # only reached for unknown names (tells mypy the type)
        raise AttributeError(f"no hardware symbol {name!r}")

    def all(self) -> dict[str, sympy.Symbol]:
        return {f.name: getattr(self, f.name) for f in FIELDS}


@dataclass(frozen=True)
class WorkloadSymbols:
    dpus: sympy.Symbol
    tasklets: sympy.Symbol
    rows_per_dpu: sympy.Symbol
    local_batch: sympy.Symbol
    features: sympy.Symbol
    nonzeros: sympy.Symbol
    bytes_per_value: sympy.Symbol
    bias_slot: sympy.Symbol
    """sparse: index of the bias inside w (the update sweep covers [0, bias_slot]); dense: features."""

    def all(self) -> dict[str, sympy.Symbol]:
        return _by_name(self)


@dataclass(frozen=True)
class Coefficients:
    """Data-dependent coefficients (defaults in ``COEFFICIENT_DEFAULTS``; fitted by calibration)."""

    dot_mul_bytes: sympy.Symbol
    grad_mul_bytes: sympy.Symbol
    svm_hit_fraction: sympy.Symbol
    sparse_write_fraction: sympy.Symbol

    def all(self) -> dict[str, sympy.Symbol]:
        return _by_name(self)


def _by_name(symbols: Any) -> dict[str, sympy.Symbol]:
    """Field name -> symbol of a dataclass of symbols."""
    return {f.name: getattr(symbols, f.name) for f in fields(symbols)}



HW = HardwareSymbols()
WL = WorkloadSymbols(*(sympy.Symbol(n, positive=True, integer=True) for n in
                       ("dpus", "tasklets", "rows_per_dpu", "local_batch", "features", "nonzeros",
                        "bytes_per_value", "bias_slot")))
COEF = Coefficients(*(sympy.Symbol(n, nonnegative=True) for n in COEFFICIENT_DEFAULTS))


def all_symbols() -> dict[str, sympy.Symbol]:
    """Name -> symbol for every input of the compiled model (hardware, workload, coefficients)."""
    return {**HW.all(), **WL.all(), **COEF.all()}
