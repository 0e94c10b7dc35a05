"""Direct inter-DPU links (hypothetical; UPMEM has none): exchanges over links instead of the host.

On UPMEM every exchange between DPUs goes DPU -> host -> DPU: the host pulls N vectors, reduces them and
pushes the result (``common.py``). With links of ``link_bytes_per_s`` per port and ``link_latency_s`` per
message, the averaging step of each round of a centralized optimizer becomes an all-reduce of the vector V each
DPU contributes (``Exchange.vector_bytes``), done as a reduce-scatter (the gather half) and an all-gather (the
distribute half); every DPU then applies the update the host used to do (``Exchange.update_passes`` sweeps over
d). Per round, with G DPUs in a link group (``kernels.vocabulary.LinkOp``, priced by
``kernels.pricing.link_halves_s``):

- ``ring`` (all N DPUs in one ring, G = N): each half is G - 1 steps of V/G bytes:
  ``(G - 1) * (L + V / (G * B))``.
- ``torus`` (a 2-D torus of R x C DPUs, ``specs.optimizers.torus_shape``): each half runs along the rows, then
  along the columns: ``(C - 1) * (L + V / (C B)) + (R - 1) * (L + V / (G B))``.
- ``all-to-all`` (every DPU reaches every other, G = N): each half is one step in which a DPU's port
  carries the G - 1 chunks of V/G bytes: ``L + (G - 1) * V / (G * B)``.
- ``in-rank`` (ring links inside a rank only, G = min(N, dpus_per_rank)): the ring halves run inside
  every rank; when there is more than one rank the host finishes the cross-rank step: it pulls each
  DPU's reduced shard (V/G bytes), sums the ranks' shards (ranks x d values) and pushes the sum back,
  before the in-rank all-gather.

Decentralized SGD instead gossips (``gossip_op``): every DPU sends its model to each of its k neighbours (ring:
2, torus: 4) and mixes (``dpu_mix_section``, ``kernels/exchange.py``).

Phase accounting (the six phases stay the vocabulary): the gather half (link reduce-scatter, plus the
cross-rank pull for in-rank) is charged to ``pim_to_host``, the distribute half (and a gossip round) to
``host_to_pim``; the host's cross-rank sum to ``host_aggregate``; the DPU's reduction adds, update and mixing
sweeps are a ``Section`` (``dpu_compute`` and ``mram_wram_dma``). The raw output ``link`` is the link time alone
(for energy: the host idles during it). Partial sums travel in ``Exchange.element_bytes``; the bias (dense
kernels) rides along with the vector.
"""

from __future__ import annotations

from dataclasses import replace

import sympy
from sympy import Expr

from .. import primitives as P
from ..kernels.exchange import EXCHANGE_PROFILE as X
from ..kernels.study import EXCHANGE
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import HostCall, LinkOp, Section
from ..specs.optimizers import gossip_neighbours
from .common import HW, WL, EquationSet, Exchange, T, host_threads, lockstep, ops, parallel

LINKED = ("in-rank", "ring", "torus", "all-to-all")


def group_size(topology: str) -> Expr:
    return sympy.Min(WL.dpus, HW.dpus_per_rank) if topology == "in-rank" else WL.dpus


def allreduce_op(ex: Exchange, topology: str) -> LinkOp:
    """The all-reduce of one round over ``topology`` (in-rank: a ring inside each rank)."""
    algorithm = "ring" if topology == "in-rank" else topology
    return LinkOp("allreduce", algorithm, ex.vector_bytes, group_size(topology), WL.torus_rows)


def gossip_op(vector_bytes: Expr, topology: str) -> LinkOp:
    """One gossip round: every DPU sends ``vector_bytes`` to each neighbour (a ring, or the 2-D torus that
    all-to-all links also gossip on)."""
    return LinkOp("gossip", "ring" if topology == "ring" else "torus", vector_bytes,
                  sympy.Integer(gossip_neighbours(topology)), WL.torus_rows)


def cross_rank_calls(ex: Exchange, topology: str) -> tuple[HostCall, ...]:
    """In-rank only: the host pulls each DPU's reduced shard (V/G bytes) and pushes the sum back; with a
    single rank the shards are empty (only the call overhead remains)."""
    if topology != "in-rank":
        return ()
    shard = sympy.Min(1, P.ranks(WL.dpus, HW) - 1) * ex.vector_bytes / group_size(topology)
    return HostCall("shard", shard, to_pim=False), HostCall("shard", shard, to_pim=True)


def cross_rank_aggregate_s(ex: Exchange, threads: int) -> Expr:
    """Host work of the in-rank topology: sum the ranks' reduced vectors (ranks x d values)."""
    ranks = P.ranks(WL.dpus, HW)
    return sympy.Min(1, ranks - 1) * P.host_reduction_s(ranks * ex.vector_bytes, threads, 1, HW)


def dpu_exchange_section(ex: Exchange, g: Expr, rounds: Expr) -> Section:
    """The DPU side of an all-reduce over ``g`` DPUs in each of ``rounds``: add the (G-1)/G x d received partial
    sums, then ``update_passes`` sweeps over d (average, or the GA-SGD/ADMM update), streaming through WRAM in the
    largest DMAs (``kernels/exchange.py``)."""
    d = WL.features
    received = (g - 1) / g * d
    add = ops(int64_add=1) + K.reduce_instructions_per_tasklet
    update = ops(int64_shift=1, int64_add=1) + K.update_loop_instructions
    read_bytes = 2 * received * ex.element_bytes + ex.update_passes * X.read_streams_per_update * 4 * d
    write_bytes = received * ex.element_bytes + ex.update_passes * 4 * d
    block = HW.dma_max_bytes
    dmas = (lockstep("read", read_bytes / (T * block), block), lockstep("write", write_bytes / (T * block), block))
    return parallel(EXCHANGE, rounds, (received * add + ex.update_passes * d * update) / T, dmas)


def dpu_mix_section(layout: str, neighbours: int, rounds: Expr) -> Section:
    """The DPU side of a gossip round (``kernels/exchange.py``): read the own and k received models, write
    ``(w >> 1) + sum (w_n >> log2 2k)`` clamped; dense kernels mix the int64 bias too."""
    d, k = WL.features, neighbours
    per_element = ops(int32_shift=k + 1, int64_add=k) + (k + 1) * X.mix_load_instructions + X.mix_loop_instructions
    bias = ops(int64_shift=k + 1, int64_add=k) if layout == "dense" else 0
    block = HW.dma_max_bytes
    dmas = (lockstep("read", (k + 1) * 4 * d / (T * block), block), lockstep("write", 4 * d / (T * block), block))
    return parallel(EXCHANGE, rounds, (d * per_element + bias) / T, dmas)


def linked(equations: EquationSet, topology: str, layout: str) -> EquationSet:
    """The equation set with its averaging step done over ``topology`` links (host path replaced)."""
    ex = equations.exchange
    if topology not in LINKED or ex is None:
        return equations
    aggregate = equations.rounds * (cross_rank_aggregate_s(ex, host_threads(layout))
                                    if topology == "in-rank" else sympy.Integer(0))
    section = dpu_exchange_section(ex, group_size(topology), equations.rounds)
    return replace(equations, sections=(*equations.sections, section),
                   calls_per_round=cross_rank_calls(ex, topology), host_aggregate_s=aggregate,
                   link_ops=((equations.rounds, allreduce_op(ex, topology)),))
