"""Functional emulator of the PIM-Opt kernels: real Q31 training of LR/SVM with MA-SGD, GA-SGD and ADMM on
emulated DPUs, with an event trace per section (``trace.py``), priced by ``timing.py`` and rendered by
``record.py``, and scikit-learn estimators. It never imports the cost model.

The estimators (``PimLogisticRegression``, ``PimSVM``) load on first access: they import scikit-learn, which
pimmodel does not depend on and ``pimmodel emulate`` never needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .api import Emulation, emulate
from .data import ArrayShards, SyntheticDense, read_npy, read_svmlight, shard, synthetic_sparse, train_test_split
from .trace import Trace, merge
from .trainers import RunResult, TrainConfig, Weights, train

if TYPE_CHECKING:  # what type checkers see of the two lazy names
    from .estimator import PimLogisticRegression, PimSVM

__all__ = [
    "ArrayShards", "Emulation", "PimLogisticRegression", "PimSVM", "RunResult", "SyntheticDense",
    "Trace", "TrainConfig", "Weights", "emulate", "merge", "read_npy", "read_svmlight", "shard",
    "synthetic_sparse", "train", "train_test_split",
]


def __getattr__(name: str) -> Any:
    if name in ("PimLogisticRegression", "PimSVM"):
        from . import estimator  # scikit-learn loads only here

        return getattr(estimator, name)
    raise AttributeError(f"module 'pimmodel.emulator' has no attribute {name!r}")
