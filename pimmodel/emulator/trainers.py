"""MA-SGD, GA-SGD and ADMM exactly as the study's host drivers run them, on emulated DPUs.

- MA-SGD: every round the host pushes the global model, each DPU runs ONE local step on its next b rows,
  the host pulls and averages; rounds per epoch = rows per DPU / b.
- GA-SGD: each DPU accumulates the gradient of B/N rows; the host sums and updates; rounds = m / B.
- ADMM: one launch per epoch runs a full local pass; the host computes z and the duals once per epoch.
Partitions are contiguous per DPU and never reshuffled. ``arithmetic="float64"`` runs the same loops
without quantization (no shifts, guards or clamps).

Every optimizer's epoch is an ``EpochTrainer`` named by its registry entry (``pimmodel.specs.optimizers``, the
plug-in contract): ``train`` looks it up, so a new optimizer's trainer (e.g. ``decentral.py``) needs no change
here.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError
from ..kernels.study import PROFILE as K
from ..specs.optimizers import optimizer_info
from . import events as ev
from . import fixedpoint as fx
from . import host
from . import kernels as kn
from .config import TrainConfig
from .data import Shards
from .group import Group
from .trace import Trace

Progress = Callable[[int, int], None]


@dataclass
class Weights:
    """Decoded global model in real units (what is evaluated)."""

    coef: NDArray[np.float64]
    intercept: float


@dataclass
class RunResult:
    weights: Weights
    epoch_weights: list[Weights] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)
    engine: str = "serial"
    """how the DPUs ran (``engine.describe``)."""
    worker_cpu_s: list[float] = field(default_factory=list)
    """CPU seconds of each worker process (process engine)."""


class State:
    """Global model on the host and per-DPU local state (the models persist across epochs) of the DPUs of
    ``group`` (all of them in one process): ``n`` is the run's DPU count, ``local`` this process's."""

    def __init__(self, shards: Shards, cfg: TrainConfig, group: Group | None = None) -> None:
        self.group = group or Group.alone(shards.n_dpus)
        if self.group.size != shards.n_dpus:
            raise ValueError(f"a group of {self.group.size} DPUs got shards of {shards.n_dpus}")
        self.fixed = cfg.arithmetic == "fixed"
        self.dense = shards.layout == "dense"
        self.n = self.group.n
        self.local = self.group.size
        self.d = shards.features if self.dense else model_length(shards.features, cfg.tasklets)
        self.bias_index = shards.features
        dtype = np.int64 if self.fixed and self.dense else (np.int32 if self.fixed else np.float64)
        # int64/int32 arrays in fixed point, float64 in float64 mode: typed NDArray[Any] on purpose
        self.w: NDArray[Any] = np.zeros(self.d, dtype=dtype)
        self.bias: Any = np.int64(0) if self.fixed else 0.0
        self._dtype = dtype
        self._w_local: NDArray[Any] | None = None  # made on first use: only the trainers that keep local models
        self.b_local: NDArray[Any] = np.zeros(self.local, dtype=np.int64 if self.fixed else np.float64)
        duals = optimizer_info(cfg.optimizer).keeps_duals
        self.u: NDArray[Any] | None = np.zeros((self.local, self.d), dtype=dtype) if duals else None
        self.c: NDArray[Any] | None = np.zeros((self.local, self.d), dtype=dtype) if duals else None

    @property
    def w_local(self) -> NDArray[Any]:
        """The DPUs' own models (local x d), zero until a trainer that keeps them (ADMM, D-PSGD) first reads
        them: MA-SGD and GA-SGD start every round from the host's model and never hold the N x d array (at
        2,048 DPUs x 10^6 features it is 7.6 GiB)."""
        if self._w_local is None:
            self._w_local = np.zeros((self.local, self.d), dtype=self._dtype)
        return self._w_local

    @w_local.setter
    def w_local(self, value: NDArray[Any]) -> None:
        self._w_local = value

    def decoded(self, w: NDArray, bias: Any) -> Weights:
        scale = fx.ONE if self.fixed else 1.0
        if self.dense:
            return Weights(np.asarray(w, np.float64) / scale, float(bias) / scale)
        wr = np.asarray(w, np.float64) / scale
        return Weights(wr[: self.bias_index].copy(), float(wr[self.bias_index]))


EpochTrainer = Callable[[State, Shards, TrainConfig, int, int, Trace, Progress | None], Weights]
"""The plug-in contract's trainer: ``(state, shards, config, local batch, local steps per epoch, trace, progress)
-> the model to evaluate``; it trains one epoch for real and records every event it causes in ``trace``."""


@cache
def trainer_of(optimizer: str) -> EpochTrainer:
    """The epoch trainer the registry entry of ``optimizer`` names (``module:function``)."""
    module, _, name = optimizer_info(optimizer).trainer.partition(":")
    function: EpochTrainer = getattr(importlib.import_module(module), name)
    return function


def model_length(features: int, tasklets: int) -> int:
    """Model length: features + the bias slot, padded to tasklets x 128 (1,000,001 -> 1,001,472)."""
    unit = tasklets * (K.dense_block_bytes // 4)
    return -(-(features + 1) // unit) * unit


def check_config(shards: Shards, cfg: TrainConfig) -> int:
    """Validate the batch sizes against the shards; return the local batch per step (MA-SGD / ADMM: a power of
    two, the DPU averages with a shift; GA-SGD: B / N, any size: the host divides by B)."""
    rows = shards.rows_per_dpu
    if optimizer_info(cfg.optimizer).batch == "global":
        if cfg.global_batch_size % shards.n_dpus or cfg.global_batch_size < shards.n_dpus:
            raise DataError(f"--global-batch-size {cfg.global_batch_size} is not a multiple of --dpus "
                            f"{shards.n_dpus}; use a multiple of the DPU count")
        b = cfg.global_batch_size // shards.n_dpus
    else:
        b = cfg.batch_size
        if b < 1 or b & (b - 1):
            raise DataError(f"--batch-size {b} must be a power of two (the DPUs average with a shift)")
    if b > rows:
        raise DataError(f"a local batch of {b} rows exceeds the {rows} rows per DPU; change --batch-size / "
                        "--global-batch-size")
    return b


def train(shards: Shards, cfg: TrainConfig, on_epoch: Callable[[int, Weights, Trace], None] | None = None,
          progress: Progress | None = None) -> RunResult:
    """Run ``cfg.epochs`` epochs in this process; ``on_epoch(epoch, weights, trace)`` is called after each."""
    b = check_config(shards, cfg)
    result = RunResult(weights=_initial(shards, cfg))
    for epoch, weights, tr in epochs(shards, cfg, b, Group.alone(shards.n_dpus), progress):
        result.weights = weights
        result.epoch_weights.append(weights)
        result.traces.append(tr)
        if on_epoch is not None:
            on_epoch(epoch, weights, tr)
    return result


def _initial(shards: Shards, cfg: TrainConfig) -> Weights:
    """The untrained global model (zeros), decoded."""
    d = shards.features if shards.layout == "dense" else model_length(shards.features, cfg.tasklets)
    coef = np.zeros(d)
    return Weights(coef if shards.layout == "dense" else coef[: shards.features].copy(), 0.0)


def epochs(shards: Shards, cfg: TrainConfig, b: int, group: Group, progress: Progress | None = None
           ) -> Iterator[tuple[int, Weights, Trace]]:
    """Train ``cfg.epochs`` epochs on the DPUs of ``group`` (``shards``: theirs), yielding after each the epoch,
    the global model and the trace of this group's DPUs (the host's counts: the same in every group)."""
    epoch_trainer = trainer_of(cfg.optimizer)
    st = State(shards, cfg, group)
    steps = -(-shards.rows_per_dpu // b)  # the last batch may be partial
    for epoch in range(1, cfg.epochs + 1):
        tr = Trace(st.local, cfg.tasklets, epochs=1)
        weights = epoch_trainer(st, shards, cfg, b, steps, tr, progress)
        yield epoch, weights, tr


# ---------------------------------------------------------------- one local step on every DPU
def _local_step(st: State, shards: Shards, cfg: TrainConfig, lo: int, b: int, w: NDArray, bias: NDArray,
                tr: Trace, update: bool) -> tuple[Any, Any]:
    """Accumulate one batch on every DPU and (MA/ADMM) apply the local update; record its events."""
    kc = cfg.kernel()
    x, y = shards.rows(lo, lo + b)
    valid = shards.valid(lo, lo + b)
    rows = np.full(st.local, float(x.shape[1])) if valid is None else valid.sum(axis=1).astype(np.float64)
    admm = optimizer_info(cfg.optimizer).keeps_duals
    if st.dense:
        fn: Any = kn.dense_batch_fixed if st.fixed else kn.dense_batch_float
        acc, bacc, stats = fn(w, bias, x, y, kc, valid)
        if stats.acc_overflows.size:
            tr.add("events", "acc_overflow", stats.acc_overflows)
        ev.dense_step(tr, stats, rows, b, st.d, cfg.model, update, admm, cfg.dma_max_bytes, cfg.kernels)
        if not update:
            return acc, bacc
        if st.fixed:
            nw, nb, sat = kn.dense_update_fixed(w, bias, acc, bacc, int(math.log2(b)), kc, st.c if admm else None)
            tr.add("events", "saturated", sat)
            return nw, nb
        return kn.update_float(w, acc, b, kc, st.c if admm else None), bias - bacc / b
    sacc: Any
    facc: Any
    if st.fixed:
        sacc, stats = kn.sparse_batch_fixed(w, x, y, st.bias_index, kc, valid)
    else:
        facc, stats = kn.sparse_batch_float(w, x, y, st.bias_index, kc, valid)
    ev.sparse_step(tr, stats, rows, b, x.shape[2], st.d, st.bias_index, cfg.model, update, admm, cfg.dma_max_bytes)
    if not update:
        return (sacc if st.fixed else facc), None
    if st.fixed:
        if w.strides[0] == 0 and not admm:  # every DPU starts from the same (broadcast) model: MA-SGD
            shared, sat = kn.sparse_update_shared(w[0], sacc, int(math.log2(b)), st.bias_index, kc)
            tr.add("events", "saturated", sat)
            return shared, None
        new_w, sat = kn.sparse_update_fixed(w, sacc, int(math.log2(b)), st.bias_index, kc, st.c if admm else None)
        tr.add("events", "saturated", sat)
        return new_w, None
    return kn.sparse_update_float(w, facc, b, st.bias_index, kc, st.c if admm else None), None


def _model_calls(tr: Trace, st: State, to_pim: bool, vectors: int = 1, element_bytes: int = 4,
                 mode: str = "parallel") -> None:
    """The model vector(s) and, dense, the bias; ``mode="identical"``: one buffer for every DPU."""
    for _ in range(vectors):
        tr.transfer(to_pim, st.d * element_bytes, mode)
    if st.dense:
        tr.transfer(to_pim, 8, mode)


def _host_work(tr: Trace, st: State, passes: float, element_bytes: int, thread_rounds: int = 1) -> None:
    threads = K.host_threads("dense" if st.dense else "sparse")
    tr.host(passes * st.n * st.d * element_bytes, passes * st.n * st.d, threads)
    tr.thread_starts[threads] += thread_rounds


# ---------------------------------------------------------------- MA-SGD and GA-SGD
def ma_sgd_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                 progress: Progress | None) -> Weights:
    """MA-SGD: one local step per round, the host averages."""
    return _round_epoch(st, shards, cfg, b, steps, tr, progress, ga=False)


def ga_sgd_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                 progress: Progress | None) -> Weights:
    """GA-SGD: the DPUs accumulate B/N rows' gradients per round, the host sums them and updates."""
    return _round_epoch(st, shards, cfg, b, steps, tr, progress, ga=True)


def _round_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                 progress: Progress | None, ga: bool) -> Weights:
    grad_bytes = 8 if (ga and not st.dense) else 4
    for r in range(steps):
        w = np.broadcast_to(st.w, (st.local, st.d))
        bias = np.full(st.local, st.bias, dtype=st.b_local.dtype)
        _model_calls(tr, st, to_pim=True, mode="identical")
        ev.launch(tr, st.dense)
        out_w, out_b = _local_step(st, shards, cfg, r * b, b, w, bias, tr, update=not ga)
        _model_calls(tr, st, to_pim=False, element_bytes=grad_bytes)
        if ga:
            _ga_host(st, cfg, out_w, out_b, b * st.n)
            _host_work(tr, st, K.ga_host_passes, grad_bytes)
            tr.host(K.ga_host_update_bytes_per_weight * st.d, st.d, K.host_threads("dense" if st.dense else "sparse"))
        else:
            _ma_host(st, out_w, out_b)
            _host_work(tr, st, K.ma_host_passes, 4)
        tr.rounds += 1
        if progress is not None:
            progress(1, steps)
    return st.decoded(st.w, st.bias)


def _zero_pad_slots(st: State, w: NDArray) -> NDArray:
    if not st.dense:
        w[0] = 0
        w[st.bias_index + 1:] = 0
    return w


def _ma_host(st: State, w_local: NDArray, b_local: Any) -> None:
    g = st.group
    if st.fixed and st.dense and not isinstance(w_local, kn.SharedLocal):
        # host.average_fixed and average_bias_fixed, the two sums in one reduction
        both = g.comm.sum(np.concatenate((np.asarray(w_local).sum(axis=0, dtype=np.int64),
                                          [np.asarray(b_local).sum(dtype=np.int64)])))
        st.w = fx.clamp(fx.trunc_div(both[:-1], g.n)).astype(st.w.dtype)
        st.bias = np.int64(fx.clamp64(fx.trunc_div(both[-1], g.n)))
        return
    if st.fixed:
        avg = (host.average_shared_fixed(w_local, g) if isinstance(w_local, kn.SharedLocal)
               else host.average_fixed(w_local, g))
        st.w = _zero_pad_slots(st, avg.astype(st.w.dtype))
        if st.dense:
            st.bias = host.average_bias_fixed(b_local, g)
        return
    st.w = _zero_pad_slots(st, g.mean(w_local))
    if st.dense:
        st.bias = float(g.mean(b_local))


def _ga_host(st: State, cfg: TrainConfig, acc: Any, bacc: Any, global_b: int) -> None:
    g = st.group
    if st.dense and st.fixed:
        total = g.total(acc)
        btotal = g.scalar_total(bacc)
    elif st.dense:
        total = g.float_sum(acc)
        btotal = g.float_sum(bacc)
    elif st.fixed:
        total = np.zeros(st.d, np.int64)
        np.add.at(total, acc.keys % st.d, acc.values)
        total[st.bias_index] += acc.bias.sum()
        total = g.comm.sum(total)
    else:
        total = g.float_sum(acc)
    if st.fixed:
        nd = None if st.dense else slice(st.bias_index, st.bias_index + 1)
        st.w = _zero_pad_slots(st, host.ga_update_fixed(st.w.astype(np.int64), total, global_b,
                                                        cfg.learning_rate_shift + cfg.reg_shift, nd).astype(st.w.dtype))
        if st.dense:
            st.bias = np.int64(fx.clamp64(st.bias - host.batch_mean(np.int64(btotal), global_b)))
        return
    dec = 2.0 ** -(cfg.learning_rate_shift + cfg.reg_shift) * st.w
    if not st.dense:
        dec[st.bias_index:] = 0.0
    st.w = _zero_pad_slots(st, st.w - total / global_b - dec)
    if st.dense:
        st.bias = st.bias - btotal / global_b


# ---------------------------------------------------------------- ADMM
def admm_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
               progress: Progress | None) -> Weights:
    """Consensus ADMM: one launch per epoch runs every local pass; the host computes z and the duals."""
    _model_calls(tr, st, to_pim=True, vectors=2)
    ev.launch(tr, st.dense)
    w, bias = st.w_local, st.b_local
    for _ in range(cfg.task_epochs):  # one launch runs every local pass
        for s in range(steps):
            w, nb = _local_step(st, shards, cfg, s * b, b, w, bias, tr, update=True)
            bias = nb if st.dense else bias
            if progress is not None:
                progress(1, steps * cfg.task_epochs)
    _model_calls(tr, st, to_pim=False)
    st.w_local, st.b_local = w, bias
    intended = cfg.admm_consensus == "intended"
    assert st.u is not None  # allocated for ADMM in State
    b_mean: Any
    w_mean: Any
    if st.fixed:
        kappa = host.admm_kappa(st.n, cfg.reg_shift, cfg.alpha_shift)
        scale = host.admm_svm_scale(st.n, cfg.reg_shift, cfg.alpha_shift, intended)
        w_mean, _, st.u, st.c = host.admm_fixed(w, st.u, cfg.model, kappa, scale, group=st.group)
        b_mean = host.average_bias_fixed(bias, st.group) if st.dense else 0
    else:
        w_mean, _, st.u, st.c = host.admm_float(w, st.u, cfg.model, st.n, cfg.reg_shift, cfg.alpha_shift, intended,
                                                group=st.group)
        b_mean = float(st.group.mean(bias)) if st.dense else 0.0
    _host_work(tr, st, K.admm_host_passes, 4, thread_rounds=K.admm_thread_rounds("dense" if st.dense else "sparse"))
    tr.rounds += 1
    st.w, st.bias = _zero_pad_slots(st, np.asarray(w_mean).astype(st.w.dtype)), b_mean
    return st.decoded(st.w, st.bias)
