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

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import sympy
from sympy import Expr

from .. import primitives as P
from ..kernelspec import EXCHANGE
from ..kernelspec import PROFILE as K
from .symbols import HW, WL

if TYPE_CHECKING:
    from .common import EquationSet, HostCall, Section

LINKED = ("in-rank", "ring", "all-to-all")


@dataclass(frozen=True)
class Exchange:
    """What one round's averaging step moves and computes, as an all-reduce over links."""

    vector_bytes: Expr
    """bytes per DPU entering the all-reduce (w, a gradient, or w + u), bias included."""
    element_bytes: int
    update_passes: int
    """sweeps over d each DPU makes after the all-reduce (the host's former update work)."""


@dataclass(frozen=True)
class LinkTimes:
    gather_s: Expr
    distribute_s: Expr
    link_s: Expr
    link_bytes_per_dpu: Expr


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


def cross_rank_calls(ex: Exchange, topology: str) -> list[HostCall]:
    """In-rank only: the host pulls each DPU's reduced shard (V/G bytes) and pushes the sum back; with a
    single rank the shards are empty (only the call overhead remains)."""
    from .common import HostCall

    if topology != "in-rank":
        return []
    shard = sympy.Min(1, P.ranks(WL.dpus, HW) - 1) * ex.vector_bytes / group_size(topology)
    return [HostCall("shard", shard, to_pim=False), HostCall("shard", shard, to_pim=True)]


def cross_rank_aggregate_s(ex: Exchange, threads: int) -> Expr:
    """Host work of the in-rank topology: sum the ranks' reduced vectors (ranks x d values)."""
    ranks = P.ranks(WL.dpus, HW)
    cross = sympy.Min(1, ranks - 1)
    return cross * (P.host_reduce_s(ranks * ex.vector_bytes, threads, HW) + P.thread_start_s(threads, HW))


def dpu_exchange_section(ex: Exchange, topology: str, rounds: Expr) -> Section:
    """The DPU side of each round: add the (G-1)/G x d received partial sums, then ``update_passes``
    sweeps over d (average, or the GA-SGD/ADMM update), streaming through WRAM in 2 KiB DMAs."""
    from .common import Section, T, concurrent_dmas

    g = group_size(topology)
    d = WL.features
    received = (g - 1) / g * d
    add = HW.int64_add_instructions + K.reduce_instructions_per_tasklet
    update = HW.int64_shift_instructions + HW.int64_add_instructions + K.update_loop_instructions
    compute = P.issue_cycles((received * add + ex.update_passes * d * update) / T, T, HW)
    read_bytes = 2 * received * ex.element_bytes + ex.update_passes * 2 * 4 * d
    write_bytes = received * ex.element_bytes + ex.update_passes * 4 * d
    block = HW.dma_max_bytes
    r_cycles, r_dmas = concurrent_dmas(read_bytes / (T * block), block)
    w_cycles, w_dmas = concurrent_dmas(write_bytes / (T * block), block, write=True)
    return Section(EXCHANGE, rounds, compute, read_cycles=r_cycles, write_cycles=w_cycles, read_bytes=read_bytes,
                   write_bytes=write_bytes, read_dmas=r_dmas, write_dmas=w_dmas)


def linked(equations: EquationSet, topology: str, layout: str) -> EquationSet:
    """The equation set with its averaging step done over ``topology`` links (host path replaced)."""
    from .common import host_threads

    ex = equations.exchange
    if topology not in LINKED or ex is None:
        return equations
    times = link_times(ex, topology)
    aggregate = equations.rounds * (cross_rank_aggregate_s(ex, host_threads(layout))
                                    if topology == "in-rank" else sympy.Integer(0))
    sections = [*equations.sections, dpu_exchange_section(ex, topology, equations.rounds)]
    return replace(equations, sections=sections, calls_per_round=cross_rank_calls(ex, topology),
                   host_aggregate_s=aggregate, link_gather_s=times.gather_s,
                   link_distribute_s=times.distribute_s, link_s=times.link_s,
                   link_bytes_per_dpu=times.link_bytes_per_dpu)
