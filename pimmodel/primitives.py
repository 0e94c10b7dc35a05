"""Cost of one event on a PIM system: an instruction stream, a DMA burst, a barrier, a host transfer,
a launch, a host reduction.

These functions are shared by the symbolic cost model (called with sympy symbols, they return
expressions) and by the emulator's timing (called with numbers or numpy arrays, they return numbers),
so model and emulator differ only in the counts they feed in. ``hw`` is anything with the
``HardwareSpec`` field names as attributes: a ``HardwareSpec`` or the cost model's symbol namespace.

Conventions (one DMA engine and one revolver pipeline per DPU):
- A tasklet may issue one instruction every ``revolver_interval_cycles``; with T >= interval runnable
  tasklets the DPU issues one instruction per cycle, so a stream of n instructions per tasklet takes
  ``n * max(interval, T)`` cycles.
- A single DMA of S bytes takes the PrIM ``alpha + beta * S``. A burst of k concurrent DMAs (one per
  tasklet) completes after ``alpha + beta * S + (k - 1) * (engine_cycles_per_transfer + beta * S)``: the
  latency overlaps, the one engine serialises the transfers behind the first.
- A parallel section's DMA hides behind its compute up to the share ``dma_compute_overlap`` of the shorter of
  the two (16 tasklets contend for one pipeline and one DMA engine, so they never overlap perfectly).
- Host transfers: ``call_overhead + total_bytes / bandwidth``, aggregate bandwidth of a rank set growing
  as ``ranks ** rank_scaling_exponent`` across ranks and as ``(DPUs per rank used / dpus_per_rank) **
  rank_fill_exponent`` inside a partly used rank; a call from the DPUs costs ``pull_call_extra_s`` more than one
  to them; a read of a WRAM symbol adds ``wram_pull_per_dpu_s`` per DPU.
- A launch costs ``launch_overhead_s + launch_per_dpu_s * dpus``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Num = Any  # a float, a numpy array or a sympy expression


# sympy is imported only for symbolic arguments (below): numeric callers (the emulator, the compiled model, the
# CLI) never load it.
def _is_symbolic(*values: Num) -> bool:
    return any(hasattr(v, "free_symbols") for v in values)


def maximum(a: Num, b: Num) -> Num:
    """max(a, b) for numbers, arrays and sympy expressions alike."""
    if _is_symbolic(a, b):
        import sympy

        return sympy.Max(a, b)
    return np.maximum(a, b)


def minimum(a: Num, b: Num) -> Num:
    if _is_symbolic(a, b):
        import sympy

        return sympy.Min(a, b)
    return np.minimum(a, b)


def ceil(a: Num) -> Num:
    if _is_symbolic(a):
        import sympy

        return sympy.ceiling(a)
    return np.ceil(a)


# ---------------------------------------------------------------- DPU core
def issue_cycles(instructions_per_tasklet: Num, active_tasklets: Num, hw: Any) -> Num:
    """Cycles for each of ``active_tasklets`` tasklets to issue ``instructions_per_tasklet`` instructions."""
    return instructions_per_tasklet * maximum(hw.revolver_interval_cycles, active_tasklets)


def serial_cycles(instructions: Num, hw: Any) -> Num:
    """Cycles for one tasklet running alone (the others wait at a barrier)."""
    return instructions * hw.revolver_interval_cycles


def barrier_cycles(tasklets: Num, hw: Any) -> Num:
    """One barrier: every tasklet runs its share under the lock, one instruction per revolver interval."""
    return tasklets * hw.barrier_instructions_per_tasklet * hw.revolver_interval_cycles


def mul64_instructions(hw: Any) -> Num:
    """Software 64-bit multiply ``__muldi3`` and its call: straight-line code, the same cost for any operands."""
    return hw.int64_mul_base_instructions


def mul32_instructions(significant_bits: Num, hw: Any) -> Num:
    """``__mulsi3``: a fixed part plus one ``mul_step`` per bit of the smaller unsigned operand."""
    return hw.int32_mul_base_instructions + hw.mul_step_instructions * significant_bits


def unhidden_overlap(compute: Num, dma: Num, hw: Any) -> Num:
    """Cycles of a parallel section's DMA that contention keeps from hiding behind its compute, beyond
    ``max(0, DMA - compute)``: ``(1 - dma_compute_overlap) * min(compute, DMA)`` (0 when the overlap is 1)."""
    return (1 - hw.dma_compute_overlap) * minimum(compute, dma)


# ---------------------------------------------------------------- MRAM <-> WRAM DMA
def dma_burst_cycles(bytes_per_transfer: Num, concurrent: Num, hw: Any, write: bool = False) -> Num:
    """Cycles until the last of ``concurrent`` simultaneous DMAs of ``bytes_per_transfer`` completes."""
    if write:
        latency, per_byte = hw.dma_write_latency_cycles, hw.dma_write_cycles_per_byte
    else:
        latency, per_byte = hw.dma_read_latency_cycles, hw.dma_read_cycles_per_byte
    transfer = bytes_per_transfer * per_byte
    return latency + transfer + (concurrent - 1) * (hw.dma_engine_cycles_per_transfer + transfer)


def dma_transfers(total_bytes: Num, hw: Any) -> Num:
    """Number of DMAs needed to move ``total_bytes`` with the largest allowed transfer."""
    return ceil(total_bytes / hw.dma_max_bytes)


# ---------------------------------------------------------------- host <-> PIM
def ranks(dpus: Num, hw: Any) -> Num:
    return ceil(dpus / hw.dpus_per_rank)


def rank_set_bandwidth(per_rank_bytes_per_s: Num, dpus: Num, hw: Any) -> Num:
    """Aggregate bandwidth of the ranks holding ``dpus`` DPUs: sub-linear in the number of ranks, and lower
    when the ranks are partly used (fewer DPUs share each rank's transfer; 1 for full ranks)."""
    r = ranks(dpus, hw)
    fill = (dpus / (r * hw.dpus_per_rank)) ** hw.rank_fill_exponent
    return per_rank_bytes_per_s * r ** hw.rank_scaling_exponent * fill


def host_transfer_s(bytes_per_dpu: Num, dpus: Num, hw: Any, to_pim: bool, mode: str = "parallel",
                    memory: str = "mram") -> Num:
    """One transfer call: ``parallel`` push/pull (distinct buffers), ``broadcast`` (one buffer, to PIM
    only), ``serial`` copies (one DPU after another), or ``identical``: the same buffer to every DPU (the
    global model), sent as a broadcast when ``hw.broadcast_identical_pushes`` is 1, else as a parallel push.

    ``identical`` is the blend ``flag * broadcast + (1 - flag) * parallel`` rather than a branch (or a
    compile key): the flag is an input of the one compiled function, so a design-space batch mixes both
    settings in one vectorized call, the sensitivity analysis can differentiate through it, and at
    flag = 0 it evaluates exactly to the parallel push (0 * x + 1 * y = y in floating point).

    ``memory = "wram"``: a read of a WRAM ``__host`` symbol also costs ``wram_pull_per_dpu_s`` per DPU (the
    host reads WRAM DPU by DPU)."""
    if memory == "wram" and not to_pim:
        return host_transfer_s(bytes_per_dpu, dpus, hw, to_pim, mode) + dpus * hw.wram_pull_per_dpu_s
    if mode == "identical":
        if not to_pim:
            raise ValueError("an identical buffer goes to the PIM side only")
        flag = hw.broadcast_identical_pushes
        return (flag * host_transfer_s(bytes_per_dpu, dpus, hw, True, "broadcast")
                + (1 - flag) * host_transfer_s(bytes_per_dpu, dpus, hw, True, "parallel"))
    overhead = hw.transfer_call_overhead_s if to_pim else hw.transfer_call_overhead_s + hw.pull_call_extra_s
    if mode == "parallel":
        per_rank = hw.push_bytes_per_s_per_rank if to_pim else hw.pull_bytes_per_s_per_rank
        return overhead + bytes_per_dpu * dpus / rank_set_bandwidth(per_rank, dpus, hw)
    if mode == "broadcast":
        if not to_pim:
            raise ValueError("broadcast goes to the PIM side only")
        bandwidth = rank_set_bandwidth(hw.broadcast_bytes_per_s_per_rank, dpus, hw)
        return hw.transfer_call_overhead_s + bytes_per_dpu * dpus / bandwidth
    if mode == "serial":
        per_dpu = hw.serial_to_pim_bytes_per_s if to_pim else hw.serial_from_pim_bytes_per_s
        return dpus * (overhead + bytes_per_dpu / per_dpu)
    raise ValueError(f"unknown transfer mode {mode!r}")


def launch_s(hw: Any, dpus: Num = 0) -> Num:
    """One synchronous ``dpu_launch`` on ``dpus`` DPUs (boot, run-to-completion polling, excluding the kernel
    itself); ``dpus`` = 0 prices the fixed part alone."""
    return hw.launch_overhead_s + hw.launch_per_dpu_s * dpus


# ---------------------------------------------------------------- direct DPU links (hypothetical; UPMEM has none)
def link_step_s(message_bytes: Num, hw: Any) -> Num:
    """One step of an exchange over direct links: every DPU sends one message of ``message_bytes`` through its
    port (``link_bytes_per_s``) after the per-message ``link_latency_s``; the DPUs step in lockstep."""
    return hw.link_latency_s + message_bytes / hw.link_bytes_per_s


# ---------------------------------------------------------------- host parameter server
def host_reduce_s(bytes_streamed: Num, threads: Num, hw: Any) -> Num:
    """Stream ``bytes_streamed`` through ``threads`` host threads (capped by cores and memory bandwidth)."""
    bandwidth = minimum(minimum(threads, hw.host_cores) * hw.host_thread_bytes_per_s, hw.host_memory_bytes_per_s)
    return bytes_streamed / bandwidth


def thread_start_s(threads: Num, hw: Any) -> Num:
    """Create and join ``threads`` pthreads (done every round by the study's parameter server)."""
    return threads * hw.thread_start_s


def cycles_to_s(cycles: Num, hw: Any) -> Num:
    return cycles / hw.dpu_clock_hz
