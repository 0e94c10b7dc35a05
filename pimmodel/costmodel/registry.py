"""The optimizers' equation sets by name: the readable form (named terms) and the full expressions."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import sympy

from ..errors import unknown
from ..specs import KERNEL_VARIANTS
from ..specs.hardware import TOPOLOGIES
from . import admm, ga_sgd, ma_sgd
from .common import EquationSet
from .interconnect import linked
from .terms import Terms

EQUATION_SETS: dict[str, Callable[[str, str, str], EquationSet]] = {
    "ma-sgd": ma_sgd.equations,
    "ga-sgd": ga_sgd.equations,
    "admm": admm.equations,
}


def equation_set(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
                 ) -> EquationSet:
    """One configuration's equation set; a ``topology`` other than "none" does the averaging step over direct
    DPU links (``interconnect.py``); ``kernels``: the study's kernels or the corrected ones."""
    if optimizer not in EQUATION_SETS:
        raise unknown("optimizer", optimizer, EQUATION_SETS)
    if topology not in TOPOLOGIES:
        raise unknown("interconnect topology", topology, TOPOLOGIES)
    if kernels not in KERNEL_VARIANTS:
        raise unknown("kernel variant", kernels, KERNEL_VARIANTS)
    equations = EQUATION_SETS[optimizer](model, layout, kernels)
    return linked(equations, topology, layout) if topology != "none" else equations


def readable(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
             ) -> tuple[Terms, dict[str, sympy.Expr]]:
    """(terms, outputs): the per-epoch outputs written over named terms, as ``pimmodel equations`` shows them."""
    return equation_set(optimizer, model, layout, topology, kernels).outputs()


@cache
def expressions(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
                ) -> dict[str, sympy.Expr]:
    """Per-epoch outputs (phases in seconds, bytes, rounds) as full expressions of the model's inputs."""
    return equation_set(optimizer, model, layout, topology, kernels).phase_expressions()
