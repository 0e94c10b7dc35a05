"""The optimizers' equation sets by name, and their per-epoch expressions."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import sympy

from ..errors import unknown
from ..specs.hardware import TOPOLOGIES
from . import admm, ga_sgd, ma_sgd
from .common import EquationSet
from .interconnect import linked

EQUATION_SETS: dict[str, Callable[[str, str], EquationSet]] = {
    "ma-sgd": ma_sgd.equations,
    "ga-sgd": ga_sgd.equations,
    "admm": admm.equations,
}


def equation_set(optimizer: str, model: str, layout: str) -> EquationSet:
    if optimizer not in EQUATION_SETS:
        raise unknown("optimizer", optimizer, EQUATION_SETS)
    return EQUATION_SETS[optimizer](model, layout)


@cache
def expressions(optimizer: str, model: str, layout: str, topology: str = "none") -> dict[str, sympy.Expr]:
    """Per-epoch expressions (phases in seconds, bytes, rounds) of one configuration; a ``topology`` other
    than "none" does the averaging step over direct DPU links (``interconnect.py``)."""
    equations = equation_set(optimizer, model, layout)
    if topology != "none":
        if topology not in TOPOLOGIES:
            raise unknown("interconnect topology", topology, TOPOLOGIES)
        equations = linked(equations, topology, layout)
    return {k: sympy.sympify(v) for k, v in equations.phase_expressions().items()}
