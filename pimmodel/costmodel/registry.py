"""The optimizers' equation sets by name: the readable form (named terms) and the full expressions.

Which optimizers exist is ``pimmodel.specs.optimizers.REGISTRY`` (the plug-in contract, documented there and in
ARCHITECTURE.md): each entry names its equation module, ``pimmodel.costmodel.<module>``, whose
``equations(model, layout, kernels="study", topology="none") -> EquationSet`` is its one readable equation set.
An optimizer whose entry has ``emulated_links`` handles the topology itself (its equations and its emulator
trainer); for the others this registry swaps the host averaging for an all-reduce over the links on link hardware
(``interconnect.linked``, over the equation set's ``exchange``). Hardware without the links an optimizer needs is
refused here (``specs.optimizers.require_links``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache

import sympy

from ..errors import check_known, unknown
from ..specs import KERNEL_VARIANTS
from ..specs.hardware import TOPOLOGIES
from ..specs.optimizers import OPTIMIZERS, REGISTRY, require_links
from .common import EquationSet
from .interconnect import linked
from .terms import Terms

Equations = Callable[[str, str, str, str], EquationSet]


@cache
def equations_of(optimizer: str) -> Equations:
    """The ``equations`` function of ``optimizer``'s module (its registry entry)."""
    if optimizer not in REGISTRY:
        raise unknown("optimizer", optimizer, OPTIMIZERS)
    function: Equations = importlib.import_module(REGISTRY[optimizer].equations).equations
    return function


def equation_set(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
                 ) -> EquationSet:
    """One configuration's equation set on ``topology`` links (see the module docstring); ``kernels``: the
    study's kernels or the corrected ones."""
    function = equations_of(optimizer)
    check_known("interconnect topology", topology, TOPOLOGIES)
    check_known("kernel variant", kernels, KERNEL_VARIANTS)
    require_links(optimizer, topology, f"a {topology!r} interconnect")
    equations = function(model, layout, kernels, topology)
    if REGISTRY[optimizer].emulated_links or topology == "none":
        return equations
    return linked(equations, topology, layout)


def readable(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
             ) -> tuple[Terms, dict[str, sympy.Expr]]:
    """(terms, outputs): the per-epoch outputs written over named terms, as ``pimmodel equations`` shows them."""
    return equation_set(optimizer, model, layout, topology, kernels).outputs()


@cache
def expressions(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
                ) -> dict[str, sympy.Expr]:
    """Per-epoch outputs (phases in seconds, bytes, rounds) as full expressions of the model's inputs."""
    return equation_set(optimizer, model, layout, topology, kernels).phase_expressions()
