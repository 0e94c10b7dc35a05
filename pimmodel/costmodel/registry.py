"""The optimizers' equation sets by name, and their per-epoch expressions."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import sympy

from ..errors import unknown
from . import admm, ga_sgd, ma_sgd
from .common import EquationSet

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
def expressions(optimizer: str, model: str, layout: str) -> dict[str, sympy.Expr]:
    """Per-epoch expressions (phases in seconds, bytes, rounds) of one configuration."""
    return {k: sympy.sympify(v) for k, v in equation_set(optimizer, model, layout).phase_expressions().items()}
