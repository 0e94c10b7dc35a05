"""Price a kernel description on a hardware spec: instructions and DMAs to cycles, host calls to seconds.

One pricing path for the cost model (sympy counts), the emulator's traces (per-DPU numpy counts) and the
PrIM benchmark kernels (numbers). The rules (``pimmodel.primitives``):

- a parallel section issues its instructions at the revolver rate of its T tasklets,
  ``instructions / T * max(interval, T)`` cycles; the tail that only k < T tasklets run (``tail_ops``) issues
  at the rate of k; a serial section issues one instruction every ``interval`` cycles;
- every barrier costs ``barrier_cycles(T)``;
- ``transfers`` DMAs issued ``concurrent`` at a time cost ``transfers / concurrent`` bursts;
- in the wall view a parallel section hides its DMA behind its compute (only ``max(0, DMA - compute)`` is
  exposed); a serial section hides none.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from .. import primitives as P
from .vocabulary import HostCall, LinkOp, Num, Work, op_instructions


def instructions(ops: Mapping[str, Num], hw: Any) -> Num:
    """Instructions of a table of operation counts."""
    return sum((count * op_instructions(op, hw) for op, count in ops.items()), 0)


def instructions_by_class(ops: Mapping[str, Num], hw: Any) -> dict[str, Num]:
    """Instructions per operation class, the software 32-bit multiply's data-dependent part folded into its
    class (``mul32_bits`` into ``mul32``)."""
    out: dict[str, Num] = {}
    for op, count in ops.items():
        name = {"mul32_bits": "mul32"}.get(op, op)
        out[name] = out.get(name, 0) + count * op_instructions(op, hw)
    return out


def compute_cycles(work: Work, parallel: bool, tasklets: Num, hw: Any) -> Num:
    """Cycles one occurrence of a section spends issuing instructions and in barriers."""
    issued = instructions(work.ops, hw)
    if parallel:
        by_k: dict[Any, Num] = defaultdict(lambda: 0)
        for (op, k), count in work.tail_ops.items():
            by_k[k] = by_k[k] + count * op_instructions(op, hw)
        tail = sum((P.issue_cycles(n / k, k, hw) for k, n in by_k.items()), 0)
        cycles = P.issue_cycles((issued - sum(by_k.values(), 0)) / tasklets, tasklets, hw) + tail
    else:
        if work.tail_ops:
            raise ValueError("a serial section has no tail: one tasklet runs it")
        cycles = P.serial_cycles(issued, hw)
    return cycles + work.barriers * P.barrier_cycles(tasklets, hw)


def dma_cycles(work: Work, hw: Any, direction: str | None = None) -> Num:
    """Cycles of one occurrence's MRAM<->WRAM DMAs (nothing overlapped), of one direction or both."""
    return sum((d.transfers / d.concurrent * P.dma_burst_cycles(d.bytes, d.concurrent, hw, d.direction == "write")
                for d in work.dmas if direction in (None, d.direction)), 0)


def exposed_dma_cycles(parallel: bool, compute: Num, dma: Num) -> Num:
    """DMA cycles not hidden behind compute (wall view)."""
    return P.maximum(dma - compute, 0) if parallel else dma


def host_calls_s(calls: Iterable[HostCall], dpus: Num, hw: Any, to_pim: bool) -> Num:
    """Seconds of the transfer calls of one direction."""
    return sum((c.calls * P.host_transfer_s(c.bytes_per_dpu, dpus, hw, c.to_pim, c.mode)
                for c in calls if c.to_pim == to_pim), 0)


def host_calls_bytes(calls: Iterable[HostCall], dpus: Num, to_pim: bool) -> Num:
    """Bytes of the transfer calls of one direction, all DPUs together."""
    return dpus * sum((c.calls * c.bytes_per_dpu for c in calls if c.to_pim == to_pim), 0)


def link_halves_s(op: LinkOp, hw: Any) -> tuple[Num, Num]:
    """(gather, distribute) seconds of one exchange over direct links (``vocabulary.LinkOp``): the reduce-scatter
    and the all-gather of an all-reduce; a gossip round is all distribute."""
    v, g = op.vector_bytes, op.group
    if op.kind == "gossip":
        return 0, g * P.link_step_s(v, hw)
    if op.algorithm == "all-to-all":
        half = P.link_step_s((g - 1) * v / g, hw)
    elif op.algorithm == "torus":
        columns = g / op.rows
        half = (columns - 1) * P.link_step_s(v / columns, hw) + (op.rows - 1) * P.link_step_s(v / g, hw)
    else:
        half = (g - 1) * P.link_step_s(v / g, hw)
    return half, half


def link_bytes_per_dpu(op: LinkOp) -> Num:
    """Bytes one DPU sends over its links in one exchange: (G - 1) V / G per all-reduce half, V per neighbour."""
    if op.kind == "gossip":
        return op.group * op.vector_bytes
    return 2 * (op.group - 1) * op.vector_bytes / op.group


def host_reduce_s(bytes_streamed: Num, threads: Num, thread_rounds: Num, hw: Any) -> Num:
    """The parameter server's work: stream ``bytes_streamed`` through ``threads`` host threads, created and
    joined ``thread_rounds`` times."""
    return P.host_reduce_s(bytes_streamed, threads, hw) + thread_rounds * P.thread_start_s(threads, hw)


def instrumented_cycles(work: Work, parallel: bool, categories: tuple[str, ...], tasklets: Num, hw: Any
                        ) -> tuple[Num, Num, Num]:
    """(compute, read, write) cycles of one occurrence as an instrumented build counts them per category
    (``kernels.study.INSTRUMENTED``): compute without any barrier wait, each DMA direction with the barriers timed
    inside it; ``categories`` says which intervals count ("compute", "read", "write"; "dma_in_compute": the DMAs
    lie inside a compute interval and count as compute)."""
    barrier = P.barrier_cycles(tasklets, hw)
    compute = compute_cycles(work, parallel, tasklets, hw) - work.barriers * barrier
    if "dma_in_compute" in categories:
        compute = compute + dma_cycles(work, hw)
    read = dma_cycles(work, hw, "read") + work.timed_barriers.get("read", 0) * barrier
    write = dma_cycles(work, hw, "write") + work.timed_barriers.get("write", 0) * barrier
    return (compute if "compute" in categories else 0, read if "read" in categories else 0,
            write if "write" in categories else 0)
