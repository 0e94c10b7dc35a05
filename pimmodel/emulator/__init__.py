"""Functional emulator of the PIM-Opt kernels: real Q31 training of LR/SVM with MA-SGD, GA-SGD and ADMM on
emulated DPUs, with an event trace per section (``trace.py``), priced by ``timing.py`` and rendered by
``record.py``, and scikit-learn style estimators. It never imports the cost model."""

from .api import Emulation, emulate
from .data import ArrayShards, SyntheticDense, read_npy, read_svmlight, shard, synthetic_sparse, train_test_split
from .estimator import PimLogisticRegression, PimSVM
from .trace import Trace, merge
from .trainers import RunResult, TrainConfig, Weights, train

__all__ = [
    "ArrayShards", "Emulation", "PimLogisticRegression", "PimSVM", "RunResult", "SyntheticDense",
    "Trace", "TrainConfig", "Weights", "emulate", "merge", "read_npy", "read_svmlight", "shard",
    "synthetic_sparse", "train", "train_test_split",
]
