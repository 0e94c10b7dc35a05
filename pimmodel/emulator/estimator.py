"""scikit-learn estimators over the emulator: ``PimLogisticRegression`` and ``PimSVM``.

They train on emulated DPUs exactly as ``pimmodel emulate`` does with a file (the same sharding, hyper-parameter
defaults, kernels and warnings), so ``clone``, ``cross_val_score``, pipelines and grid searches run the PIM
training. Data conventions are the kernels': dense features must lie in [0, 1] (they are quantized to unsigned
Q1.31); a scipy sparse matrix holding one value everywhere (binary features, as Criteo) takes the sparse
kernels, each stored entry an active feature (at most 39 per row: the study's ELL layout). Binary
classification only; the two classes may be any labels.

This module imports scikit-learn, which pimmodel does not depend on (``pip install 'pimmodel[sklearn]'``):
``pimmodel.emulator`` loads it only when one of the two estimators is asked for.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import PimModelError
from ..kernels.capacity import check as check_capacity
from ..specs import CRITEO, DEFAULT_HARDWARE, KERNEL_VARIANTS, OPTIMIZERS, YFCC, HardwareSpec, Workload, load_hardware
from . import fixedpoint as fx
from .api import ARITHMETICS, _data_warnings, _metric_rows, _workload
from .config import Options, train_config
from .data import CRITEO_ACTIVE, ArrayShards, ell_from_rows, shard
from .lut import sigmoid
from .metrics import decision, evaluate
from .timing import seconds
from .trace import Trace, merge
from .trainers import model_length, train

try:
    import scipy.sparse as sp
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError(f"pimmodel's estimators need scikit-learn >= 1.6 ({exc}); install it with "
                      "pip install 'pimmodel[sklearn]'") from None

ADMM_CONSENSUS = ("artifact", "intended")
_FLAGS = {"--global-batch-size": "global_batch_size", "--batch-size": "batch_size", "--dpus": "n_dpus",
          "--learning-rate-shift": "learning_rate_shift", "--reg-shift": "reg_shift"}
"""The CLI's option names in shared error messages, as the estimator's parameter names."""


class EstimatorError(PimModelError, ValueError):
    """A parameter or an input an estimator cannot train with: one line, as every pimmodel error, and a
    ValueError, which scikit-learn's tools (``cross_val_score``, grid searches, its checks) expect."""


def _param_error(message: str) -> EstimatorError:
    for flag, name in _FLAGS.items():
        message = message.replace(flag, name)
    return EstimatorError(message)


class _PimLinear(ClassifierMixin, BaseEstimator):
    """A linear binary classifier trained on emulated PIM hardware (see the module docstring).

    Parameters mirror ``emulator.trainers.TrainConfig`` and ``pimmodel emulate``: ``None`` hyper-parameters are
    the study's, adapted to the data and the deployment as ``pimmodel emulate`` adapts them (``notes_`` says
    what was chosen, ``hyperparams_`` holds every value used). Fitted attributes: ``classes_``,
    ``n_features_in_``, ``coef_``, ``intercept_``, ``history_`` (metrics after each epoch), ``trace_`` (the
    merged event trace), ``emulated_s_`` (the emulated wall time of the whole training), ``workload_`` (the
    configuration that ran: ``pimmodel.predict(est.workload_, est.hardware)`` gives the cost model's time),
    ``warnings_``.
    """

    _model = "lr"

    def __init__(self, optimizer: str = "ma-sgd", n_dpus: int = 16, hardware: str | HardwareSpec = DEFAULT_HARDWARE,
                 batch_size: int | None = None, global_batch_size: int | None = None,
                 learning_rate_shift: int | None = None, reg_shift: int | None = None,
                 alpha_shift: int | None = None, task_epochs: int = 1, epochs: int = 10, arithmetic: str = "fixed",
                 tasklets: int = 16, kernels: str = "study", svm_margin: float | None = None,
                 class_weights: tuple[float, float] | None = None, admm_consensus: str = "artifact") -> None:
        self.optimizer = optimizer
        self.n_dpus = n_dpus
        self.hardware = hardware
        self.batch_size = batch_size
        self.global_batch_size = global_batch_size
        self.learning_rate_shift = learning_rate_shift
        self.reg_shift = reg_shift
        self.alpha_shift = alpha_shift
        self.task_epochs = task_epochs
        self.epochs = epochs
        self.arithmetic = arithmetic
        self.tasklets = tasklets
        self.kernels = kernels
        self.svm_margin = svm_margin
        self.class_weights = class_weights
        self.admm_consensus = admm_consensus

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True  # Q31 fixed point and a LUT sigmoid, a few epochs by default
        return tags

    # ------------------------------------------------------------ parameters
    def _check_params(self) -> HardwareSpec:
        """Every parameter, one line each, before any data is touched (scikit-learn validates in ``fit``, not in
        ``__init__``, so that ``set_params`` and ``clone`` stay plain); returns the hardware spec."""
        choices = {"optimizer": OPTIMIZERS, "arithmetic": ARITHMETICS, "kernels": KERNEL_VARIANTS,
                   "admm_consensus": ADMM_CONSENSUS}
        for name, allowed in choices.items():
            value = getattr(self, name)
            if value not in allowed:
                raise EstimatorError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed))}")
        for name in ("n_dpus", "epochs", "tasklets", "task_epochs"):
            _whole(name, getattr(self, name), low=1)
        for name in ("batch_size", "global_batch_size"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), low=1)
        if self.batch_size is not None and self.batch_size & (self.batch_size - 1):
            raise EstimatorError(f"batch_size={self.batch_size} must be a power of two (the DPUs average their "
                                 f"local batch with a shift), e.g. {1 << (int(self.batch_size).bit_length() - 1)}")
        for name in ("learning_rate_shift", "reg_shift", "alpha_shift"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), low=0, high=62)
        if self.svm_margin is not None and (not isinstance(self.svm_margin, Real) or not 0 < self.svm_margin <= 1):
            raise EstimatorError(f"svm_margin={self.svm_margin!r} must be in (0, 1] (Q31 holds margins up to "
                                 "1.0), e.g. 0.5")
        if self.class_weights is not None:
            weights = self.class_weights
            if (not isinstance(weights, tuple | list) or len(weights) != 2
                    or not all(isinstance(v, Real) and v > 0 for v in weights)):
                raise EstimatorError(f"class_weights={weights!r} must be two positive numbers (negative, positive), "
                                     "e.g. (1.0, 1.0)")
        if isinstance(self.hardware, HardwareSpec):
            return self.hardware
        if not isinstance(self.hardware, str):
            raise EstimatorError(f"hardware={self.hardware!r} must be a spec name, a TOML file or a HardwareSpec")
        return load_hardware(self.hardware)

    def _hyper(self) -> dict[str, int]:
        given = (("batch_size", self.batch_size), ("global_batch_size", self.global_batch_size),
                 ("learning_rate_shift", self.learning_rate_shift), ("reg_shift", self.reg_shift),
                 ("admm_alpha_shift", self.alpha_shift), ("task_epochs", self.task_epochs))
        return {k: int(v) for k, v in given if v is not None}

    def _options(self, hw: HardwareSpec) -> Options:
        weights = None if self.class_weights is None else (float(self.class_weights[0]), float(self.class_weights[1]))
        margin = None if self.svm_margin is None else float(self.svm_margin)
        return Options(epochs=int(self.epochs), arithmetic=self.arithmetic, hardware=hw.name,
                       tasklets=int(self.tasklets), kernels=self.kernels, svm_margin=margin, class_weights=weights)

    # ------------------------------------------------------------ data
    def _labels(self, y: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.uint8]]:
        """The two classes (sorted) and y as 0/1 (1: ``classes_[1]``)."""
        check_classification_targets(y)
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        classes, index = np.unique(y, return_inverse=True)
        if kind != "binary":
            raise EstimatorError(f"Only binary classification is supported. The type of the target is {kind} "
                                 f"({classes.size} classes); {type(self).__name__} separates two classes")
        if classes.size < 2:
            raise EstimatorError(f"y holds one class only ({classes[0]!r}); a classifier needs two classes")
        return classes, index.astype(np.uint8)

    def _shards(self, x: Any, y01: NDArray[np.uint8]) -> ArrayShards:
        """Sparse input: index sets in the ELL layout (slot 0 is the padding slot, so feature j sits at j + 1);
        dense input: unsigned Q1.31 rows, features padded as ``pimmodel emulate`` pads a file's."""
        if sp.issparse(x):
            return shard(_ell(x), y01, self.n_dpus, "sparse", x.shape[1] + 1)
        if x.size and x.min() < 0:
            raise EstimatorError(f"Negative values in data passed to {type(self).__name__}: features must lie in "
                                 "[0, 1] (unsigned Q1.31); min-max scale them first")
        return shard(fx.quantize_unit(x), y01, self.n_dpus, "dense", x.shape[1], pad_multiple=2 * self.tasklets)

    def _workload(self, shards: ArrayShards, y01: NDArray[np.uint8], options: Options) -> Workload:
        """The configuration that runs, described as ``pimmodel emulate`` describes a file's (hyper-parameters
        adapted to the deployment where none were given)."""
        positive = float(np.clip(y01.mean(), 1e-6, 1 - 1e-6))
        name = "estimator data"
        if shards.layout == "dense":
            d = shards.features
            spec = replace(YFCC, name=name, features=d, nonzeros_per_row=d, slots_per_row=d,
                           rows_per_dpu_weak=shards.rows_per_dpu, positive_fraction=positive)
        else:
            spec = replace(CRITEO, name=name, features=model_length(shards.features, self.tasklets),
                           bias_index=shards.features, rows_per_dpu_weak=shards.rows_per_dpu,
                           positive_fraction=positive)
        return _workload(spec, self._model, self.optimizer, int(self.n_dpus), self._hyper(), options)

    # ------------------------------------------------------------ scikit-learn API
    def fit(self, X: Any, y: ArrayLike) -> _PimLinear:  # noqa: N803 (scikit-learn naming)
        """Train on emulated DPUs: ``X`` dense in [0, 1] (n_samples, n_features) or scipy sparse with one value
        everywhere; ``y`` two classes (any labels; ``classes_[1]`` is the positive class). Errors are one-line
        ``EstimatorError``s (pimmodel errors and ValueErrors), named by the estimator's parameters."""
        try:
            return self._fit(X, y)
        except PimModelError as exc:
            if isinstance(exc, ValueError):
                raise
            raise _param_error(str(exc)) from None

    def _fit(self, X: Any, y: ArrayLike) -> _PimLinear:  # noqa: N803
        hw = self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc", "coo"), dtype=np.float64)  # noqa: N806
        classes, y01 = self._labels(np.asarray(y))
        options = self._options(hw)
        shards = self._shards(X, y01)
        workload = self._workload(shards, y01, options)
        check_capacity(workload, hw)
        cfg = train_config(workload, options, hw, admm_consensus=self.admm_consensus)
        notices = _data_warnings(shards, workload, cfg)
        history: list[dict[str, float]] = []
        xm, ym = _metric_rows(shards)

        def on_epoch(epoch: int, weights: Any, tr: Trace) -> None:
            rec = evaluate(decision(xm, shards.layout, weights.coef, weights.intercept), ym, self._model)
            history.append({"epoch": epoch, "train_accuracy": rec["accuracy"], "loss": rec["loss"],
                            "auc": rec["auc"], "emulated_s": seconds(tr, hw)["total"]})

        result = train(shards, cfg, on_epoch=on_epoch)
        trace = merge(result.traces)
        saturated = float(np.max(trace.events.get("saturated", np.zeros(1))))
        if saturated:
            notices.append(f"{saturated:,.0f} weight updates hit the Q31 limit of +-1.0 on the busiest DPU")
        n, coef = X.shape[1], result.weights.coef
        # fitted attributes, all at once: a fit that failed above leaves none behind
        self.classes_ = classes
        self.layout_ = shards.layout
        self.coef_ = np.array(coef[1: n + 1] if shards.layout == "sparse" else coef[:n], dtype=np.float64)
        self.intercept_ = float(result.weights.intercept)
        self.history_ = history
        self.trace_ = trace
        self.emulated_s_ = float(sum(h["emulated_s"] for h in history))
        self.workload_ = workload
        self.hyperparams_ = workload.hp
        self.notes_ = list(workload.notes)
        self.warnings_ = notices
        for message in notices:
            warnings.warn(message, UserWarning, stacklevel=3)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:  # noqa: N803
        """x . coef_ + intercept_ (positive: ``classes_[1]``); sparse rows count their stored entries as 1, as
        the sparse kernels do."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=False)  # noqa: N806
        if sp.issparse(X):
            pattern = X.tocsr(copy=True)
            pattern.eliminate_zeros()
            pattern.data[:] = 1.0
            return np.asarray(pattern @ self.coef_).ravel() + self.intercept_
        return np.asarray(X @ self.coef_ + self.intercept_, dtype=np.float64)

    def predict(self, X: Any) -> NDArray[Any]:  # noqa: N803
        """The predicted class labels (values of ``classes_``)."""
        positive = self.decision_function(X) > 0  # first: it raises NotFittedError before classes_ is read
        return np.asarray(self.classes_[positive.astype(np.intp)])

    def evaluate(self, X: Any, y: ArrayLike) -> dict[str, float]:  # noqa: N803
        """Accuracy (with the majority baseline and the predicted-positive rate), the model's loss and ROC AUC."""
        check_is_fitted(self)
        positive = np.asarray(y) == self.classes_[1]
        return evaluate(self.decision_function(X), positive.astype(np.uint8), self._model)


class PimLogisticRegression(_PimLinear):
    """Logistic regression trained on emulated PIM hardware (Q31 arithmetic, the kernels' LUT sigmoid); see
    ``_PimLinear`` for the parameters and fitted attributes."""

    _model = "lr"

    def predict_proba(self, X: Any) -> NDArray[np.float64]:  # noqa: N803
        """Probabilities of ``classes_[0]`` and ``classes_[1]`` (the logistic function of the decision)."""
        p = sigmoid(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X: Any) -> NDArray[np.float64]:  # noqa: N803
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class PimSVM(_PimLinear):
    """Linear SVM (hinge loss) trained on emulated PIM hardware; margin 2^-15 as the study's kernels
    (``kernels='study'``) or 0.5 (``'corrected'``), or ``svm_margin``. See ``_PimLinear`` for the parameters."""

    _model = "svm"


def _whole(name: str, value: Any, low: int, high: int | None = None) -> None:
    whole = isinstance(value, Integral) and not isinstance(value, bool)
    if not whole or int(value) < low or (high is not None and int(value) > high):
        span = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise EstimatorError(f"{name}={value!r} must be a whole number {span}")


def _ell(x: Any) -> NDArray[np.int32]:
    """A sparse matrix of binary features as ELL index rows (feature j at j + 1; slot value 0 pads)."""
    csr = x.tocsr(copy=True)
    csr.eliminate_zeros()
    values = np.unique(csr.data)
    if values.size > 1:
        raise EstimatorError(f"sparse X takes the binary sparse kernels, so every stored value must be the same; "
                             f"found {values.size} distinct values (e.g. {values[0]:g}, {values[-1]:g}); pass "
                             "real-valued features as a dense array in [0, 1]")
    active = np.diff(csr.indptr)
    if active.size and int(active.max()) > CRITEO_ACTIVE:
        row = int(np.argmax(active))
        raise EstimatorError(f"row {row} of X has {int(active[row])} active features; the sparse ELL layout holds "
                             f"{CRITEO_ACTIVE} per row")
    csr.sort_indices()
    rows = [csr.indices[csr.indptr[i]:csr.indptr[i + 1]].astype(np.int64) + 1 for i in range(csr.shape[0])]
    return ell_from_rows(rows)
