"""Communication-efficient and decentralized optimizers on emulated DPUs: each an ``EpochTrainer`` of the plug-in
contract (``pimmodel.specs.optimizers``), training for real with the study's fixed-point kernels for the local
steps (``trainers._local_step``) and recording every event, so that their equations
(``pimmodel.costmodel.<name>``) can be checked against the counts.

- ``local-sgd``: H local steps per launch, then the host averages (MA-SGD's host code); H = 1 is MA-SGD.
- ``hier-sgd``: after every step the models of each rank are averaged (over in-rank links, or by the host per
  rank), every H steps and at the epoch's end all models (through the host).
- ``dpsgd``: one launch per epoch; after every step each DPU mixes its model with its gossip neighbours'.
- ``allreduce-sgd``: one launch per epoch; the GA-SGD gradient of every round is all-reduced over the links and
  every DPU applies the host's GA-SGD update to the exact sum (so the model is GA-SGD's bit for bit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import LinkOp
from ..specs.optimizers import torus_shape
from . import events as ev
from . import fixedpoint as fx
from . import host
from . import kernels as kn
from .data import Shards
from .group import Group
from .links import gossip_graph, group_sum, mix, received_elements
from .trace import Trace
from .trainers import (
    Progress,
    State,
    TrainConfig,
    Weights,
    _ga_host,
    _host_work,
    _local_step,
    _ma_host,
    _model_calls,
)


def _shared(st: State) -> tuple[Any, Any]:
    """Every DPU holding the global model (a broadcast view) and its bias."""
    return np.broadcast_to(st.w, (st.local, st.d)), np.full(st.local, st.bias, dtype=st.b_local.dtype)


def _dense(w: Any) -> Any:
    return w.dense() if isinstance(w, kn.SharedLocal) else w


def _zero_pads(st: State, w: NDArray[Any]) -> NDArray[Any]:
    """The sparse kernels' padding slot (index 0) and the slots past the bias stay 0, as the study's host forces
    after every aggregation (rows of DPU models)."""
    if not st.dense:
        w[..., 0] = 0
        w[..., st.bias_index + 1:] = 0
    return w


def _tick(progress: Progress | None, steps: int) -> None:
    if progress is not None:
        progress(1, steps)


# ---------------------------------------------------------------- local SGD
def local_sgd_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                    progress: Progress | None) -> Weights:
    """Rounds of H local steps: the host pushes the global model, one launch runs the steps, the host pulls and
    averages (the epoch's last round may be shorter)."""
    for first in range(0, steps, cfg.sync_every):
        w, bias = _shared(st)
        _model_calls(tr, st, to_pim=True, mode="identical")
        ev.launch(tr, st.dense)
        for s in range(first, min(steps, first + cfg.sync_every)):
            w, new_bias = _local_step(st, shards, cfg, s * b, b, _dense(w) if s > first else w, bias, tr,
                                      update=True)
            bias = new_bias if st.dense else bias
            _tick(progress, steps)
        _model_calls(tr, st, to_pim=False)
        _ma_host(st, w, bias)
        _host_work(tr, st, K.ma_host_passes, 4)
        tr.rounds += 1
    return st.decoded(st.w, st.bias)


# ---------------------------------------------------------------- hierarchical SGD
def hier_sgd_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                   progress: Progress | None) -> Weights:
    """Every step ends in an average inside each rank (over links if the hardware has any, else by the host),
    every H steps and the epoch's last in an average of all DPUs."""
    linked = cfg.link_topology != "none"
    group = min(st.n, cfg.dpus_per_rank)
    if linked and (group & (group - 1) or st.n % group):
        raise DataError(f"hier-sgd over links needs equal power-of-two groups of min(DPUs, {cfg.dpus_per_rank}); "
                        f"{st.n} DPUs do not form them")
    shared = True  # every DPU starts the epoch from the global model
    w: Any = None
    bias: Any = None
    for s in range(steps):
        is_global = (s + 1) % cfg.sync_every == 0 or s == steps - 1
        if shared:
            w, bias = _shared(st)
        if not linked:
            _model_calls(tr, st, to_pim=True, mode="identical" if shared else "parallel")
        if not linked or shared:
            ev.launch(tr, st.dense)
        w, new_bias = _local_step(st, shards, cfg, s * b, b, w, bias, tr, update=True)
        bias = new_bias if st.dense else bias
        if linked:
            w, bias = _rank_average_links(st, cfg, _dense(w), bias, group, tr, is_global)
        else:
            w, bias = _average_through_host(st, w, bias, group, tr, is_global)
        shared = is_global
        tr.rounds += 1
        _tick(progress, steps)
    return st.decoded(st.w, st.bias)


def _average_through_host(st: State, w: Any, bias: Any, group: int, tr: Trace, is_global: bool) -> tuple[Any, Any]:
    """The host pulls every model and averages all of them (MA-SGD's host code) or each rank's (C's truncating
    division per rank); returns the DPUs' models (None after a global average: they take ``st.w``)."""
    _model_calls(tr, st, to_pim=False)
    _host_work(tr, st, K.ma_host_passes, 4)
    if is_global:
        _ma_host(st, w, bias)
        return None, None
    w = _dense(w)
    bounds = list(range(0, st.local, group)) + [st.local]  # this process's DPUs start a rank (engine.align)
    rows: list[Any] = []
    biases: list[Any] = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if st.fixed:
            rows.append(host.average_fixed(np.asarray(w[lo:hi], dtype=np.int64)))
            biases.append(host.average_bias_fixed(bias[lo:hi]) if st.dense else 0)
        else:
            rows.append(Group.alone(hi - lo).mean(w[lo:hi]))
            biases.append(float(Group.alone(hi - lo).mean(bias[lo:hi])) if st.dense else 0.0)
    sizes = np.diff(bounds)
    models = _zero_pads(st, np.repeat(np.stack(rows).astype(st.w.dtype), sizes, axis=0))
    return models, np.repeat(np.asarray(biases, dtype=st.b_local.dtype), sizes)


def _rank_average_links(st: State, cfg: TrainConfig, w: Any, bias: Any, group: int, tr: Trace, is_global: bool
                        ) -> tuple[Any, Any]:
    """Each rank's DPUs pre-scale by 1/G (a shift), all-reduce over their links and hold the rank's average; at a
    global step the host averages the ranks' shards between the reduce-scatter and the all-gather."""
    vector = 4 * st.d + (8 if st.dense else 0)
    g = st.group
    ev.allreduce_exchange(tr, received_elements(st.n, group, st.d)[g.lo:g.hi], st.d, 4, 1, cfg.dma_max_bytes)
    tr.link(LinkOp("allreduce", "all-to-all" if cfg.link_topology == "all-to-all" else "ring", vector, group))
    if st.fixed:
        shift = group.bit_length() - 1
        ranks_w = fx.clamp(group_sum(np.asarray(w, dtype=np.int64) >> shift, group))
        ranks_b = fx.clamp64(group_sum(np.asarray(bias, dtype=np.int64) >> shift, group))
    else:
        ranks_w, ranks_b = group_sum(w / group, group), group_sum(bias / group, group)
    ranks = st.n // group
    if not is_global:
        models = _zero_pads(st, np.repeat(ranks_w.astype(st.w.dtype), group, axis=0))
        return models, np.repeat(ranks_b.astype(st.b_local.dtype), group)
    if ranks > 1:  # the host pulls every DPU's shard of its rank's average, averages the ranks', pushes it back
        shard = 4 * -(-st.d // group) + (8 if st.dense else 0)
        threads = K.host_threads("dense" if st.dense else "sparse")
        tr.transfer(False, shard)
        tr.host(ranks * vector, ranks * st.d, threads)
        tr.thread_starts[threads] += 1
        tr.transfer(True, shard)
    rank_group = Group(ranks, g.lo // group, g.hi // group, g.comm)  # the ranks' averages, one row per rank
    if st.fixed:
        st.w = _zero_pads(st, host.average_fixed(ranks_w, rank_group).astype(st.w.dtype))
        st.bias = host.average_bias_fixed(ranks_b, rank_group) if st.dense else np.int64(0)
    else:
        st.w = _zero_pads(st, rank_group.mean(ranks_w))
        st.bias = float(rank_group.mean(ranks_b)) if st.dense else 0.0
    return None, None


# ---------------------------------------------------------------- decentralized SGD
def dpsgd_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                progress: Progress | None) -> Weights:
    """One launch: every DPU steps on its own model, then mixes with its gossip neighbours over the links. The model
    evaluated is the average of the DPUs' models (what D-PSGD's guarantees are about, and what a deployment takes
    after training: one average at the end, not timed, as no optimizer's evaluation is); a single DPU's model lags
    it by the consensus error."""
    graph = gossip_graph(cfg.link_topology, st.n)
    k = graph.shape[1]
    op = LinkOp("gossip", "ring" if k == 2 else "torus", 4 * st.d + (8 if st.dense else 0), k, torus_shape(st.n)[0])
    ev.launch(tr, st.dense)
    w, bias = st.w_local, st.b_local
    for s in range(steps):
        w, new_bias = _local_step(st, shards, cfg, s * b, b, w, bias, tr, update=True)
        bias = new_bias if st.dense else bias
        w = _zero_pads(st, _mix(st, w, graph))
        if st.dense:
            bias = _mix(st, bias, graph, wide=True)
        ev.gossip_mix(tr, st.d, k, st.dense, cfg.dma_max_bytes)
        tr.link(op)
        tr.rounds += 1
        st.w_local, st.b_local = w, bias  # where a progress hook can see the DPUs' models
        _tick(progress, steps)
    if st.fixed:
        st.w = _zero_pads(st, host.average_fixed(np.asarray(w, dtype=np.int64), st.group).astype(st.w.dtype))
        st.bias = host.average_bias_fixed(bias, st.group) if st.dense else np.int64(0)
    else:
        st.w, st.bias = _zero_pads(st, st.group.mean(w)), float(st.group.mean(bias)) if st.dense else 0.0
    return st.decoded(st.w, st.bias)


def _mix(st: State, values: NDArray[Any], graph: NDArray[np.int64], wide: bool = False) -> NDArray[Any]:
    """``links.mix`` of this group's rows, the neighbours' rows fetched from the groups that hold them."""
    g = st.group
    if g.size == g.n:
        return mix(values, graph, st.fixed, wide)
    mine = graph[g.lo:g.hi]
    need = np.unique(mine)
    return mix(values, np.searchsorted(need, mine), st.fixed, wide, source=g.comm.rows(values, need, g.lo, g.n))


# ---------------------------------------------------------------- all-reduce SGD
def allreduce_sgd_epoch(st: State, shards: Shards, cfg: TrainConfig, b: int, steps: int, tr: Trace,
                        progress: Progress | None) -> Weights:
    """One launch: per round the GA-SGD gradient of B/N rows, an all-reduce of the int64 accumulators over the
    links, and the GA-SGD update on every DPU (the same on all: computed once)."""
    global_batch = b * st.n
    if st.fixed and global_batch & (global_batch - 1):
        raise DataError(f"allreduce-sgd divides by the global batch {global_batch} with a shift; use a power of "
                        "two")
    topology = cfg.link_topology
    op = LinkOp("allreduce", topology, 8 * st.d + (8 if st.dense else 0), st.n, torus_shape(st.n)[0])
    received = received_elements(st.n, st.n, st.d)[st.group.lo:st.group.hi]
    ev.launch(tr, st.dense)
    for r in range(steps):
        w, bias = _shared(st)
        acc, bias_acc = _local_step(st, shards, cfg, r * b, b, w, bias, tr, update=False)
        ev.allreduce_exchange(tr, received, st.d, 8, 1, cfg.dma_max_bytes)
        tr.link(op)
        _ga_host(st, cfg, acc, bias_acc, global_batch)
        tr.rounds += 1
        _tick(progress, steps)
    return st.decoded(st.w, st.bias)

