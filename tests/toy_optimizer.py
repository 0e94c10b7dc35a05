"""A plug-in optimizer that lives outside the package, written by following ARCHITECTURE.md ("Optimizers are
plug-ins") alone: a registry entry, an equation module and an epoch trainer. It is MA-SGD under another name, so
what it predicts and emulates has a reference (MA-SGD's) to be checked against."""

from __future__ import annotations

from typing import Any

from pimmodel.costmodel import ma_sgd
from pimmodel.costmodel.common import EquationSet
from pimmodel.emulator import trainers
from pimmodel.specs import OptimizerInfo

INFO = OptimizerInfo(
    "toy-sgd", "Toy SGD", "MA-SGD under another name (a plug-in registered by a test)",
    equations="toy_optimizer", trainer="toy_optimizer:toy_epoch", study_like="ma-sgd")


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    return ma_sgd.equations(model, layout, kernels, topology)


def toy_epoch(st: Any, shards: Any, cfg: Any, b: int, steps: int, tr: Any, progress: Any) -> Any:
    return trainers.ma_sgd_epoch(st, shards, cfg, b, steps, tr, progress)
