"""Price a kernel description on a hardware spec: instructions and DMAs to cycles, host calls to seconds.

One pricing path for the cost model (sympy counts), the emulator's traces (per-DPU numpy counts) and the
PrIM benchmark kernels (numbers). The rules (``pimmodel.primitives``):

- a parallel section issues its instructions at the revolver rate of its T tasklets,
  ``instructions / T * max(interval, T)`` cycles; the tail that only k < T tasklets run (``tail_ops``) issues
  at the rate of k; a serial section issues one instruction every ``interval`` cycles;
- every barrier costs ``barrier_cycles(T)``;
- ``transfers`` DMAs issued ``concurrent`` at a time cost ``transfers / concurrent`` bursts;
- in the wall view a parallel section hides its DMA behind its compute: ``max(0, DMA - compute)`` is exposed,
  plus ``(1 - dma_compute_overlap) * min(compute, DMA)``, the share of the shorter one that contention among
  the tasklets keeps from overlapping (overlap 1 = the shorter hides entirely); a serial section hides none;
- a section may run its ops on fewer tasklets than the kernel has (``Section.tasklets``): they issue at the
  rate of that many;
- a ``mutex`` chain (critical sections behind one lock) issues one instruction per ``max(interval, runnable)``
  cycles, runnable = the section's tasklets (the others spin on the lock), and overlaps the section's other
  work: the section computes for the longer of the two; a ``handshake`` chain's hops run one instruction per
  revolver interval after the work. A chain's DMAs each wait their full latency (nothing overlaps them);
- a lock-step section (``Section.lockstep``: a round of a loop with a barrier per iteration) starts with all
  tasklets waiting for their DMAs: it lasts the DMA burst plus the compute of the tasklet served last, alone at
  one instruction per revolver interval, plus its write-back (``Dma.after``) -- or the engine's total, or all
  tasklets' compute at full rate, whichever is longest. Its handshake hops overlap the staggered finishes, so
  only what the burst does not cover is exposed (at least one hop);
- a kernel (``KernelRun``) costs its launches plus every section's compute and exposed DMA.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from .. import primitives as P
from .vocabulary import Chain, HostCall, KernelRun, LinkOp, Num, Section, Work, op_instructions


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


def compute_cycles(work: Work, parallel: bool, tasklets: Num, hw: Any, active: Num | None = None) -> Num:
    """Cycles one occurrence of a section spends issuing instructions, in its chains and in barriers;
    ``active``: the tasklets sharing its ops (default all ``tasklets``; every tasklet takes the barriers)."""
    issued = instructions(work.ops, hw)
    k_active = tasklets if active is None else active
    if parallel:
        by_k: dict[Any, Num] = defaultdict(lambda: 0)
        for (op, k), count in work.tail_ops.items():
            by_k[k] = by_k[k] + count * op_instructions(op, hw)
        tail = sum((P.issue_cycles(n / k, k, hw) for k, n in by_k.items()), 0)
        cycles = P.issue_cycles((issued - sum(by_k.values(), 0)) / k_active, k_active, hw) + tail
    else:
        if work.tail_ops:
            raise ValueError("a serial section has no tail: one tasklet runs it")
        cycles = P.serial_cycles(issued, hw)
    locks: dict[str, Num] = {}
    for c in work.chains:
        if c.kind == "mutex":
            locks[c.lock] = locks.get(c.lock, 0) + chain_cycles(c, k_active, hw)
    for held in locks.values():
        cycles = P.maximum(cycles, held)
    cycles = cycles + sum((chain_cycles(c, k_active, hw) for c in work.chains if c.kind == "handshake"), 0)
    return cycles + work.barriers * P.barrier_cycles(tasklets, hw)


def chain_cycles(chain: Chain, runnable: Num, hw: Any) -> Num:
    """Cycles of a chain's steps one after another (see the module docstring)."""
    rate = P.maximum(hw.revolver_interval_cycles, runnable) if chain.kind == "mutex" else hw.revolver_interval_cycles
    dma = sum((d.transfers * P.dma_burst_cycles(d.bytes, 1, hw, d.direction == "write") for d in chain.dmas), 0)
    return chain.steps * (instructions(chain.ops, hw) * rate + dma)


def dma_cycles(work: Work, hw: Any, direction: str | None = None) -> Num:
    """Cycles of one occurrence's MRAM<->WRAM DMAs (nothing overlapped), of one direction or both."""
    return sum((d.transfers / d.concurrent * P.dma_burst_cycles(d.bytes, d.concurrent, hw, d.direction == "write")
                for d in work.dmas if direction in (None, d.direction)), 0)


def exposed_dma_cycles(parallel: bool, compute: Num, dma: Num, hw: Any = None) -> Num:
    """DMA cycles not hidden behind compute (wall view); without ``hw`` the shorter of the two hides entirely
    (``dma_compute_overlap`` = 1)."""
    if not parallel:
        return dma
    return P.maximum(dma - compute, 0) + (0 if hw is None else P.unhidden_overlap(compute, dma, hw))


def section_cycles(section: Section, tasklets: Num, hw: Any) -> Num:
    """Wall cycles of one occurrence of a section: compute plus the DMA not hidden behind it."""
    if section.lockstep:
        return lockstep_cycles(section, tasklets, hw)
    compute = compute_cycles(section.work, section.parallel, tasklets, hw, section.tasklets)
    return compute + exposed_dma_cycles(section.parallel, compute, dma_cycles(section.work, hw), hw)


def lockstep_cycles(section: Section, tasklets: Num, hw: Any) -> Num:
    """Wall cycles of one occurrence of a lock-step section (see the module docstring)."""
    work = section.work
    active = tasklets if section.tasklets is None else section.tasklets
    if work.tail_ops or any(c.kind == "mutex" for c in work.chains):
        raise ValueError("a lock-step section has neither a tail nor a mutex chain")
    before = dma_cycles(Work(dmas=tuple(d for d in work.dmas if not d.after)), hw)
    after = tuple(d for d in work.dmas if d.after)
    last = sum((P.dma_burst_cycles(d.bytes, 1, hw, d.direction == "write") for d in after), 0)
    per_tasklet = instructions(work.ops, hw) / active
    core = P.maximum(P.maximum(before + P.serial_cycles(per_tasklet, hw) + last,
                               before + dma_cycles(Work(dmas=after), hw)),
                     P.issue_cycles(per_tasklet, active, hw))
    for c in work.chains:
        total = chain_cycles(c, active, hw)
        core = core + P.maximum(total / c.steps, total - before)
    return core + work.barriers * P.barrier_cycles(tasklets, hw)


def kernel_s(run: KernelRun, dpus: Num, hw: Any) -> Num:
    """Seconds of a timed kernel: its launches and the busiest DPU's sections."""
    cycles = sum((s.count * section_cycles(s, run.tasklets, hw) for s in run.sections), 0)
    return run.launches * P.launch_s(hw, dpus) + P.cycles_to_s(cycles, hw)


def host_calls_s(calls: Iterable[HostCall], dpus: Num, hw: Any, to_pim: bool) -> Num:
    """Seconds of the transfer calls of one direction."""
    return sum((c.calls * P.host_transfer_s(c.bytes_per_dpu, dpus, hw, c.to_pim, c.mode, c.memory)
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
