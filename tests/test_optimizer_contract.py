"""The optimizer plug-in contract (``pimmodel.specs.optimizers``): every registry entry has an equation module and
an emulator trainer with the contract's signatures, on the right side of the layers, and every entry is covered by
the reconciliation tests (model counts = emulator counts) without being named there."""

from __future__ import annotations

import importlib
import inspect

import pytest

from pimmodel.specs import OPTIMIZERS, REGISTRY, STUDY_OPTIMIZERS, optimizer_info
from pimmodel.specs.optimizers import LINK_NEEDS


def test_optimizers_are_the_registry() -> None:
    assert tuple(REGISTRY) == tuple(OPTIMIZERS) and tuple(REGISTRY) == OPTIMIZERS
    assert STUDY_OPTIMIZERS == ("ma-sgd", "ga-sgd", "admm")
    assert {"local-sgd", "hier-sgd", "dpsgd", "allreduce-sgd"} <= set(OPTIMIZERS)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_entry_has_an_equation_module_and_a_trainer(name: str) -> None:
    info = optimizer_info(name)
    equations = importlib.import_module(info.equations).equations
    assert list(inspect.signature(equations).parameters) == ["model", "layout", "kernels", "topology"]
    module, _, function = info.trainer.partition(":")
    assert info.trainer.count(":") == 1 and ":" not in info.equations
    trainer = getattr(importlib.import_module(module), function)
    assert list(inspect.signature(trainer).parameters) == ["st", "shards", "cfg", "b", "steps", "tr", "progress"]
    assert info.topologies == LINK_NEEDS[info.links] and info.study_name in STUDY_OPTIMIZERS


SLOW_TO_BUILD = ("hier-sgd", "local-sgd")
"""2-4 s of sympy each: their equations are built in the slow tier (the five others stay in the default one)."""


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_TO_BUILD else n
                                  for n in REGISTRY])
def test_every_entry_builds_its_equations_on_every_topology_it_runs_on(name: str) -> None:
    from pimmodel.costmodel.registry import equation_set
    from pimmodel.phases import PHASES

    for topology in optimizer_info(name).topologies:
        terms, outputs = equation_set(name, "lr", "dense", topology).outputs()
        assert set(PHASES) <= set(outputs) and terms.expand(outputs["dpu_compute"]).free_symbols
        assert (outputs["link"] != 0) == (topology != "none")


def test_the_reconciliation_covers_every_entry() -> None:
    """``CASES`` of the count reconciliation is built from the registry: a new entry is tested without a change
    there; those whose emulator trains over links are reconciled on every topology they run on."""
    from emulator.test_counts_match_model import CASES

    covered = {(o, t) for _, _, o, t in CASES}
    for name, info in REGISTRY.items():
        expected = {t for t in info.topologies if t == "none" or info.emulated_links}
        assert {t for o, t in covered if o == name} == expected
        assert sum(1 for _, _, o, t in CASES if o == name) == 4 * len(expected)  # LR/SVM x dense/sparse


def test_unknown_optimizer_is_one_line() -> None:
    from pimmodel.errors import SpecError

    with pytest.raises(SpecError, match=r"unknown optimizer 'dpsdg' \(did you mean \"dpsgd\"\?\)"):
        optimizer_info("dpsdg")
