"""scikit-learn style estimators over the emulator: ``PimLogisticRegression`` and ``PimSVM``."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import DataError
from ..specs import DEFAULT_HARDWARE, load_hardware
from . import fixedpoint as fx
from .data import ArrayShards, check_labels, ell_from_rows, shard
from .metrics import decision, evaluate
from .timing import seconds
from .trace import Trace, merge
from .trainers import TrainConfig, train


class _PimLinear:
    _model = "lr"

    def __init__(self, optimizer: str = "ma-sgd", n_dpus: int = 16, hardware: str = DEFAULT_HARDWARE,
                 batch_size: int = 8, global_batch_size: int = 64, learning_rate_shift: int = 4,
                 reg_shift: int = 12, alpha_shift: int = 4, epochs: int = 10, arithmetic: str = "fixed",
                 tasklets: int = 16, kernels: str = "study", svm_margin: float | None = None,
                 admm_consensus: str = "artifact") -> None:
        self.optimizer = optimizer
        self.n_dpus = n_dpus
        self.hardware = hardware
        self.batch_size = batch_size
        self.global_batch_size = global_batch_size
        self.learning_rate_shift = learning_rate_shift
        self.reg_shift = reg_shift
        self.alpha_shift = alpha_shift
        self.epochs = epochs
        self.arithmetic = arithmetic
        self.tasklets = tasklets
        self.kernels = kernels
        self.svm_margin = svm_margin
        self.admm_consensus = admm_consensus

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        names = [p for p in inspect.signature(_PimLinear.__init__).parameters if p != "self"]
        return {k: getattr(self, k) for k in names}

    def set_params(self, **params: Any) -> _PimLinear:
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def _config(self) -> TrainConfig:
        return TrainConfig(model=self._model, optimizer=self.optimizer, batch_size=self.batch_size,
                           global_batch_size=self.global_batch_size, learning_rate_shift=self.learning_rate_shift,
                           reg_shift=self.reg_shift, alpha_shift=self.alpha_shift, epochs=self.epochs,
                           arithmetic=self.arithmetic, tasklets=self.tasklets, kernels=self.kernels,
                           svm_margin=self.svm_margin,
                           admm_consensus=self.admm_consensus,
                           dma_max_bytes=load_hardware(self.hardware).dma_max_bytes)

    def _shards(self, x: Any, y: ArrayLike) -> ArrayShards:
        yb = check_labels(np.asarray(y))
        if hasattr(x, "tocsr"):  # scipy sparse: binary features in the ELL layout
            csr = x.tocsr()
            rows = [csr.indices[csr.indptr[i]:csr.indptr[i + 1]].astype(np.int64) + 1 for i in range(csr.shape[0])]
            self._layout, self._features = "sparse", csr.shape[1] + 1
            return shard(ell_from_rows(rows), yb, self.n_dpus, "sparse", self._features)
        xq = fx.quantize_unit(np.asarray(x, dtype=np.float64))
        if xq.ndim != 2:
            raise DataError(f"X must be 2-D (samples x features), got shape {xq.shape}")
        self._layout, self._features = "dense", xq.shape[1]
        return shard(xq, yb, self.n_dpus, "dense", xq.shape[1], pad_multiple=self.tasklets * 128)

    def fit(self, X: Any, y: ArrayLike) -> _PimLinear:  # noqa: N803 (scikit-learn naming)
        shards = self._shards(X, y)
        self.history_: list[dict[str, float]] = []
        hw = load_hardware(self.hardware)
        xs = shards.x.reshape(-1, shards.x.shape[-1])
        ys = shards.y.reshape(-1)

        def on_epoch(epoch: int, weights: Any, tr: Trace) -> None:
            z = decision(xs, shards.layout, weights.coef, weights.intercept)
            rec = evaluate(z, ys, self._model)
            self.history_.append({"epoch": epoch, "train_accuracy": rec["accuracy"], "loss": rec["loss"],
                                  "auc": rec["auc"], "emulated_s": seconds(tr, hw)["total"]})

        result = train(shards, self._config(), on_epoch=on_epoch)
        coef = result.weights.coef
        self.coef_ = coef[1: self._features] if self._layout == "sparse" else coef[: self._features]
        self.intercept_ = result.weights.intercept
        self.trace_ = merge(result.traces)
        self.classes_ = np.array([0, 1])
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:  # noqa: N803
        if hasattr(X, "tocsr"):
            return np.asarray(X.tocsr() @ self.coef_).ravel() + self.intercept_
        return np.asarray(X, dtype=np.float64) @ self.coef_ + self.intercept_

    def predict(self, X: Any) -> NDArray[np.int64]:  # noqa: N803
        return (self.decision_function(X) > 0).astype(np.int64)

    def score(self, X: Any, y: ArrayLike) -> float:  # noqa: N803
        return float((self.predict(X) == check_labels(np.asarray(y))).mean())

    def evaluate(self, X: Any, y: ArrayLike) -> dict[str, float]:  # noqa: N803
        return evaluate(self.decision_function(X), check_labels(np.asarray(y)), self._model)


class PimLogisticRegression(_PimLinear):
    """Logistic regression trained by the emulated PIM system (LUT sigmoid, Q31 arithmetic)."""

    _model = "lr"


class PimSVM(_PimLinear):
    """Linear SVM (hinge loss; the artifact's margin 2^-15 with ``kernels='study'``, 0.5 with 'corrected')."""

    _model = "svm"
