"""Direct inter-DPU links (hypothetical; UPMEM has none): the averaging step over links instead of the host.

On UPMEM every exchange between DPUs goes DPU -> host -> DPU: the host pulls N vectors, reduces them and
pushes the result (``common.py``). With links of ``link_bytes_per_s`` per port and ``link_latency_s`` per
message, the averaging step of each round becomes an all-reduce of the vector V each DPU contributes
(``Exchange.vector_bytes``), done as a reduce-scatter (the gather half) and an all-gather (the
distribute half); every DPU then applies the update the host used to do (``Exchange.update_passes``
sweeps over d). Per round, with G DPUs in a link group, B = link bandwidth, L = link latency:

- ``ring`` (all N DPUs in one ring, G = N): each half is G - 1 steps of V/G bytes:
  ``(G - 1) * (L + V / (G * B))``.
- ``all-to-all`` (every DPU reaches every other, G = N): each half is one step in which a DPU's port
  carries the G - 1 chunks of V/G bytes: ``L + (G - 1) * V / (G * B)``.
- ``in-rank`` (ring links inside a rank only, G = min(N, dpus_per_rank)): the ring halves run inside
  every rank; when there is more than one rank the host finishes the cross-rank step: it pulls each
  DPU's reduced shard (V/G bytes), sums the ranks' shards (ranks x d values) and pushes the sum back,
  before the in-rank all-gather.

Phase accounting (the six phases stay the vocabulary): the gather half (link reduce-scatter, plus the
cross-rank pull for in-rank) is charged to ``pim_to_host``, the distribute half to ``host_to_pim``; the
host's cross-rank sum to ``host_aggregate``; the DPU's reduction adds and update sweeps are a ``Section``
(``dpu_compute`` and ``mram_wram_dma``). The raw output ``link`` is the link time alone (for energy:
the host idles during it). Partial sums travel in the vector's own width, pre-scaled by 1/N as the host's
shift-average does; the bias (dense kernels) rides along with the vector.
"""

from __future__ import annotations

from dataclasses import replace

import sympy
from sympy import Expr

from .. import primitives as P
from ..kernels import pricing
from ..kernels.study import EXCHANGE
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import HostCall, Section
from .common import HW, WL, EquationSet, Exchange, LinkTimes, T, host_threads, lockstep, ops, parallel

LINKED = ("in-rank", "ring", "all-to-all")


def group_size(topology: str) -> Expr:
    return sympy.Min(WL.dpus, HW.dpus_per_rank) if topology == "in-rank" else WL.dpus


def _half(topology: str, v: Expr, g: Expr) -> Expr:
    """One half (reduce-scatter or all-gather) of an all-reduce of ``v`` bytes over ``g`` DPUs."""
    chunk = v / g
    if topology == "all-to-all":
        return HW.link_latency_s + (g - 1) * chunk / HW.link_bytes_per_s
    return (g - 1) * (HW.link_latency_s + chunk / HW.link_bytes_per_s)


def link_times(ex: Exchange, topology: str) -> LinkTimes:
    """Per-round times of the averaging step over ``topology`` (see the module docstring)."""
    g = group_size(topology)
    half = _half(topology, ex.vector_bytes, g)
    return LinkTimes(half, half, 2 * half, 2 * (g - 1) * ex.vector_bytes / g)


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
    return sympy.Min(1, ranks - 1) * pricing.host_reduce_s(ranks * ex.vector_bytes, threads, 1, HW)


def dpu_exchange_section(ex: Exchange, topology: str, rounds: Expr) -> Section:
    """The DPU side of each round: add the (G-1)/G x d received partial sums, then ``update_passes``
    sweeps over d (average, or the GA-SGD/ADMM update), streaming through WRAM in the largest DMAs."""
    g = group_size(topology)
    d = WL.features
    received = (g - 1) / g * d
    add = ops(int64_add=1) + K.reduce_instructions_per_tasklet
    update = ops(int64_shift=1, int64_add=1) + K.update_loop_instructions
    read_bytes = 2 * received * ex.element_bytes + ex.update_passes * 2 * 4 * d
    write_bytes = received * ex.element_bytes + ex.update_passes * 4 * d
    block = HW.dma_max_bytes
    dmas = (lockstep("read", read_bytes / (T * block), block), lockstep("write", write_bytes / (T * block), block))
    return parallel(EXCHANGE, rounds, (received * add + ex.update_passes * d * update) / T, dmas)


def linked(equations: EquationSet, topology: str, layout: str) -> EquationSet:
    """The equation set with its averaging step done over ``topology`` links (host path replaced)."""
    ex = equations.exchange
    if topology not in LINKED or ex is None:
        return equations
    aggregate = equations.rounds * (cross_rank_aggregate_s(ex, host_threads(layout))
                                    if topology == "in-rank" else sympy.Integer(0))
    return replace(equations, sections=(*equations.sections, dpu_exchange_section(ex, topology, equations.rounds)),
                   calls_per_round=cross_rank_calls(ex, topology), host_aggregate_s=aggregate,
                   links=link_times(ex, topology))
