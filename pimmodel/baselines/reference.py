"""A real numpy implementation of the study's CPU baselines, used to validate the CPU model on this machine.

It mirrors what one process of ``baseline/model.py::train_CPU`` (PIM-Opt artifact) does per step, in float32:
forward ``X_b @ w + b``, the LR (sigmoid) or SVM (hinge, margin 0.5) error, backward ``e @ X_b``, the SGD update,
and the exchange between processes:

* MA-SGD (the study's ``dist_type = "ma1"``): a local step, then the model is averaged after every batch;
* GA-SGD (``"ga"``, DDP): the gradient is averaged every step, then every process applies the same update;
* ADMM: a whole local epoch with the proximal term on ``w + (u - z)`` and no exchange, then rank 0 gathers
  the local models, updates ``z`` and every ``u_k`` and sends back ``u_k - z`` (``update_z`` from LambdaML).

The processes exchange through an ``Exchange`` (``parallel.py`` backs it with shared memory and a barrier; one
process needs none). Every shard is a contiguous block of rows and a mini-batch is a view into it, so the only
data movement is the kernels' own reads; the study's DataLoader instead gathers every batch with a copy (the
CPU model counts that for the study's configuration, see ``cpu.py``).

These small kernels are dispatch-bound (a step's numpy calls cost more than its arithmetic at the study's
batch of 8), exactly like PyTorch's eager mode in the study; the probe measures that fixed cost per step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..errors import SpecError, check_known, unknown
from ..specs.workload import BASELINE_HINGE_MARGIN, MODELS
from .workload import MULTI_PROCESS_OPTIMIZERS, baseline_optimizer

OPTIMIZERS = MULTI_PROCESS_OPTIMIZERS
HINGE_MARGIN = BASELINE_HINGE_MARGIN


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """Hyper-parameters of one run; step size, decay and ADMM alpha are powers of two as in the study."""

    model: str
    optimizer: str
    batch_size: int
    lr_shift: int
    wd_shift: int
    alpha_shift: int = 0

    def __post_init__(self) -> None:
        check_known("model", self.model, MODELS)
        check_known("optimizer", self.optimizer, OPTIMIZERS)
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise SpecError(f"batch_size must be a positive whole number, got {self.batch_size!r}")

    @property
    def step_size(self) -> float:
        return 2.0 ** -self.lr_shift

    @property
    def weight_decay(self) -> float:
        return 2.0 ** -self.wd_shift

    @property
    def alpha(self) -> float:
        return 2.0 ** -self.alpha_shift


def study_config(model: str, optimizer: str, batch_size: int | None = None) -> TrainConfig:
    """The study's YFCC CPU hyper-parameters (``baseline/train_yfcc_cpu.py``, smallest batch of each sweep;
    GA-SGD's batch is per process: 64 x 128 processes = the PIM runs' global 8,192)."""
    table = {
        ("lr", "ma-sgd"): (8, 6, 12, 0), ("lr", "ga-sgd"): (64, 4, 10, 0), ("lr", "admm"): (8, 6, 12, 4),
        ("svm", "ma-sgd"): (8, 6, 10, 0), ("svm", "ga-sgd"): (64, 6, 8, 0), ("svm", "admm"): (8, 6, 10, 12),
    }
    if (model, optimizer) not in table:
        raise unknown("model/optimizer", f"{model}/{optimizer}", [f"{m}/{o}" for m, o in table])
    b, lr, wd, alpha = table[(model, optimizer)]
    return TrainConfig(model, optimizer, batch_size or b, lr, wd, alpha)


def make_dataset(rows: int, features: int, model: str, seed: int, part: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Dense float32 features in [0, 1) (like the min-max normalised YFCC features) and labels from a random
    hyperplane through the centre: {0, 1} for LR, {-1, +1} for SVM. Linearly separable by construction.
    ``part`` draws a different block of rows from the same distribution (one per process)."""
    if rows < 1 or features < 1:
        raise SpecError(f"rows and features must be positive, got {rows} x {features}")
    w_true = np.random.default_rng(seed).standard_normal(features).astype(np.float32)
    x = np.random.default_rng([seed, part]).random((rows, features), dtype=np.float32)
    positive = (x - np.float32(0.5)) @ w_true > 0
    y = positive.astype(np.float32) if model == "lr" else np.where(positive, 1.0, -1.0).astype(np.float32)
    return x, y


def shard_rows(rows: int, processes: int, rank: int) -> slice:
    """Rank ``rank``'s contiguous block of rows (the last rank takes the remainder)."""
    per = rows // processes
    stop = rows if rank == processes - 1 else (rank + 1) * per
    return slice(rank * per, stop)


class Exchange(Protocol):
    """How processes combine vectors. ``average`` is an all-reduce mean in place; ``admm_round`` gathers the
    local models on rank 0, updates z and the dual variables, and returns this rank's ``u_k - z``."""

    processes: int

    def average(self, vector: np.ndarray) -> None: ...

    def admm_round(self, model: np.ndarray, config: TrainConfig, out_u_minus_z: np.ndarray) -> None: ...


@dataclass
class AdmmHost:
    """Rank 0's ADMM state: one dual vector per process (LambdaML consensus ADMM, as in the study's CPU code)."""

    u: np.ndarray

    def round(self, local_models: np.ndarray, config: TrainConfig, out_u_minus_z: np.ndarray) -> None:
        """``z = soft(mean w + mean u, alpha / (p * wd))``; ``u_k += w_k - z``; row k of the output = u_k - z."""
        p = local_models.shape[0]
        v = local_models.mean(axis=0) + self.u.mean(axis=0)
        threshold = np.float32(config.alpha / (p * config.weight_decay))
        z = np.sign(v) * np.maximum(np.abs(v) - threshold, np.float32(0))
        self.u += local_models - z
        np.subtract(self.u, z, out=out_u_minus_z)


@dataclass
class LocalExchange:
    """One process: averaging is the identity; ADMM's host step runs in place."""

    size: int
    processes: int = 1
    host: AdmmHost = field(init=False)

    def __post_init__(self) -> None:
        self.host = AdmmHost(np.zeros((1, self.size), np.float32))

    def average(self, vector: np.ndarray) -> None:
        return None

    def admm_round(self, model: np.ndarray, config: TrainConfig, out_u_minus_z: np.ndarray) -> None:
        self.host.round(model[None, :], config, out_u_minus_z[None, :])


@dataclass
class TrainState:
    """One process's model ``wb = [w, bias]`` (d + 1 float32, zero-initialised like the study's) and scratch."""

    features: int
    batch_size: int
    wb: np.ndarray = field(init=False)
    grad: np.ndarray = field(init=False)
    z: np.ndarray = field(init=False)
    err: np.ndarray = field(init=False)
    mask: np.ndarray = field(init=False)
    u_minus_z: np.ndarray = field(init=False)
    prox: np.ndarray = field(init=False)
    scratch: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        d, b = self.features, self.batch_size
        self.wb = np.zeros(d + 1, np.float32)
        self.grad = np.zeros(d + 1, np.float32)
        self.z = np.zeros(b, np.float32)
        self.err = np.zeros(b, np.float32)
        self.mask = np.zeros(b, bool)
        self.u_minus_z = np.zeros(d + 1, np.float32)
        self.prox = np.zeros(d, np.float32)
        self.scratch = np.zeros(d, np.float32)


def _forward_error(x_b: np.ndarray, y_b: np.ndarray, state: TrainState, model: str) -> np.ndarray:
    """``e = sigmoid(X_b w + b) - y`` (LR) or ``-y`` where ``y (X_b w + b) < margin`` else 0 (SVM); the
    bias's gradient is ``sum(e)``."""
    n = x_b.shape[0]
    d = state.features
    z, e = state.z[:n], state.err[:n]
    np.matmul(x_b, state.wb[:d], out=z)
    z += state.wb[d]
    if model == "lr":
        np.negative(z, out=e)
        np.exp(e, out=e)
        e += np.float32(1)
        np.reciprocal(e, out=e)
        e -= y_b
    else:
        mask = state.mask[:n]
        np.multiply(y_b, z, out=e)
        np.less(e, np.float32(HINGE_MARGIN), out=mask)
        np.negative(y_b, out=e)
        e *= mask
    return e


def _backward(x_b: np.ndarray, e: np.ndarray, state: TrainState) -> None:
    """Summed gradient ``[e @ X_b, sum(e)]`` into ``state.grad``."""
    d = state.features
    np.matmul(e, x_b, out=state.grad[:d])
    state.grad[d] = e.sum()


def _sgd_update(state: TrainState, config: TrainConfig, batch: int) -> None:
    """``w <- w - eta (g / b + lambda w)``, bias without decay (torch SGD weight_decay)."""
    d = state.features
    state.wb[:d] *= np.float32(1 - config.step_size * config.weight_decay)
    state.grad *= np.float32(config.step_size / batch)
    state.wb -= state.grad


def _admm_update(state: TrainState, config: TrainConfig, batch: int) -> None:
    """SGD without weight decay on ``loss + wd |w + (u - z)|_1`` (LR) or ``wd/2 |w + (u - z)|_2`` (SVM), the
    study's CPU ADMM penalty."""
    d = state.features
    v = state.prox
    if config.model == "lr":
        np.add(state.wb[:d], state.u_minus_z[:d], out=state.scratch)
        np.sign(state.scratch, out=v)  # not in place: numpy's in-place sign is about twice as slow
        scale = np.float32(config.step_size * config.weight_decay)
    else:
        np.add(state.wb[:d], state.u_minus_z[:d], out=v)
        norm = float(np.linalg.norm(v))
        scale = np.float32(config.step_size * config.weight_decay / 2 / norm) if norm > 0 else np.float32(0)
    v *= scale
    state.grad *= np.float32(config.step_size / batch)
    state.wb[:d] -= v
    state.wb -= state.grad


def _batches(rows: int, batch: int) -> range:
    return range(0, rows - batch + 1, batch)


def _steps(x: np.ndarray, y: np.ndarray, state: TrainState, config: TrainConfig, exchange: Exchange) -> None:
    """Every full batch: forward, backward, then what the optimizer does with the step (its registry entry says):
    GA-SGD averages the gradients before the update, MA-SGD the models after it, ADMM updates its local model
    against ``u - z`` and exchanges nothing until the epoch's round."""
    b = config.batch_size
    nature = baseline_optimizer(config.optimizer)
    for start in _batches(x.shape[0], b):
        e = _forward_error(x[start:start + b], y[start:start + b], state, config.model)
        _backward(x[start:start + b], e, state)
        if nature.epoch_round:
            _admm_update(state, config, b)
            continue
        if nature.averages == "gradients":
            exchange.average(state.grad)
        _sgd_update(state, config, b)
        if nature.averages == "models":
            exchange.average(state.wb)


def run_steps(x: np.ndarray, y: np.ndarray, state: TrainState, config: TrainConfig, exchange: Exchange) -> None:
    """The steps over ``x`` (a whole shard or a slice of it; a trailing partial batch is dropped, so every
    process takes the same number of steps and the exchanges pair up)."""
    with np.errstate(over="ignore"):
        _steps(x, y, state, config, exchange)


def finish_epoch(state: TrainState, config: TrainConfig, exchange: Exchange) -> None:
    """What follows the last step of an epoch: ADMM's z and dual update (nothing for MA/GA-SGD)."""
    if baseline_optimizer(config.optimizer).epoch_round:
        exchange.admm_round(state.wb, config, state.u_minus_z)


def run_epoch(x: np.ndarray, y: np.ndarray, state: TrainState, config: TrainConfig, exchange: Exchange) -> None:
    """One pass over this process's shard, then the end-of-epoch exchange."""
    run_steps(x, y, state, config, exchange)
    finish_epoch(state, config, exchange)


def steps_per_epoch(shard_rows: int, batch_size: int) -> int:
    return shard_rows // batch_size


def train(x: np.ndarray, y: np.ndarray, config: TrainConfig, epochs: int) -> np.ndarray:
    """Single-process training; returns ``[w, bias]`` (used by the tests and as the 1-process reference)."""
    state = TrainState(x.shape[1], config.batch_size)
    exchange = LocalExchange(x.shape[1] + 1)
    for _ in range(epochs):
        run_epoch(x, y, state, config, exchange)
    return state.wb.copy()


def predict_labels(wb: np.ndarray, x: np.ndarray, model: str) -> np.ndarray:
    """Class labels in the model's convention ({0, 1} for LR, {-1, +1} for SVM)."""
    score = x @ wb[:-1] + wb[-1]
    return (score >= 0).astype(np.float32) if model == "lr" else np.where(score >= 0, 1.0, -1.0).astype(np.float32)
