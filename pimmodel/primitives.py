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
- Host transfers follow the UPMEM SDK's host side (``host_transfer_s``): a rank's DPUs form transfer *lines*
  (one DPU of each of the rank's chips: every 64-B cache line the host writes carries 8 B for each chip), a
  rank's transfer thread pool splits the lines among its threads, and a line costs its bytes per DPU at the
  serial (one-DPU) rate when one thread works alone, or at the per-thread share of PrIM's full-rank rate when
  several do. A transfer of a WRAM symbol goes word by word through the control interfaces, one line at a time.
  Across ranks (``rank_set_s``): the SDK keeps one transfer thread pool per memory channel and locks it for a
  rank's transfer, so ranks sharing a channel go one after another; each further rank adds the share
  ``push/pull_rank_growth`` of one rank's bandwidth, up to the ceiling ``push/pull_saturation_bytes_per_s`` of the
  shared host path (both fitted per machine to the upmem-scale fit files); a call from the DPUs costs
  ``pull_call_extra_s`` more than one to them.
- NUMA placement (``placement_factor``): the SDK's copy threads run on the rank's node, so a rank whose host buffer
  sits on the other socket moves its bytes across the socket link; the share of such ranks
  (``remote_buffer_share``, or the ranks beyond ``ranks_per_socket`` when every buffer sits on the first node) costs
  ``remote_transfer_factor`` (A) times a local rank's bytes. 0 remote (the default) is the pricing from before.
- Host-mediated collectives (``host_gather_s``, ``host_broadcast_s``, ``host_reduction_s``, ``host_allreduce_s``):
  the exchanges the optimizers make through the host, priced by the transfers and the host reduction above, times
  ``host_collective_time_factor`` (1: the SDK path; a what-if knob for a changed collective implementation).
- A launch costs ``launch_overhead_s + launch_per_dpu_s * dpus + launch_per_rank_s * (ranks - 1)``: the SDK's
  polling threads (NR_QUEUES = 4) sweep their ranks one after another, each sweep polling every DPU of a rank.
"""

from __future__ import annotations

import functools
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


def step(x: Num) -> Num:
    """1 where ``x >= 0``, else 0, for numbers, arrays and sympy expressions alike: a threshold as arithmetic,
    which the compiled model and the readable equations take without branches (``_step_function``)."""
    if _is_symbolic(x):
        return _step_function()(x)
    return np.where(np.asarray(x) >= 0, 1.0, 0.0)


@functools.cache
def _step_function() -> Any:
    """The sympy form of ``step``: prints as numpy.heaviside(x, 1) and as \\theta(x); piecewise constant, so its
    derivative is 0 (a threshold switches, it has no rate: the sensitivity analysis sees no Dirac delta)."""
    import sympy

    class Step(sympy.Function):  # type: ignore[misc]  # sympy's classes are untyped
        @classmethod
        def eval(cls, arg: Any) -> Any:
            if arg.is_nonnegative:
                return sympy.Integer(1)
            if arg.is_negative:
                return sympy.Integer(0)
            return None

        def fdiff(self, argindex: int = 1) -> Any:
            return sympy.Integer(0)

        def _latex(self, printer: Any, exp: Any = None) -> str:
            return rf"\theta\left({printer._print(self.args[0])}\right)"

        def _numpycode(self, printer: Any) -> str:
            return f"{printer._module_format('numpy.heaviside')}({printer._print(self.args[0])}, 1.0)"

    return Step


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
# The host side of a transfer, as the UPMEM SDK's x86 backend does it (SDK 2021.3 source, the closest published to
# the SDK 2023.2 behind the measurements and the study: AIS-SNU/PID-Comm upmem-2021.3.0_opt/src/backends/hw/src/
# mappings/xeon_sp/xeon_sp_translation.c):
# - threads_write_to_rank / threads_read_from_rank loop over a rank's lines (``dpu_id`` = a DPU's index inside its
#   chip); each 8-B word of every DPU of a line goes into one 64-B cache line interleaved over the 8 chips, so a
#   line costs its bytes per DPU once, however many of its chips' DPUs take part;
# - xeon_sp_init_and_do_xfer: 1 thread below 1 KiB per DPU, 2 below 2 KiB, 4 below 32 KiB, else the pool's
#   nb_thread_per_pool (default 4, get_default_xfer_thread_configuration; PrIM's CPU-DPU microbenchmark asks for 8:
#   dpu_alloc(NR_DPUS, "nrThreadPerPool=8", ...), prim-benchmarks Microbenchmarks/CPU-DPU/host/app.c:50; the PrIM
#   applications and PIM-Opt pass NULL, e.g. VA/host/app.c:66);
# - thread_do_mram_xfer: thread t takes lines [t * lines / threads, (t + 1) * lines / threads);
# - dpu_alloc keeps the enabled DPUs of a partly used rank on the fewest lines (disable_unused_dpus disables a
#   line's DPUs before touching another; AIS-SNU/PID-Comm upmem-2021.3.0_opt/src/backends/api/src/api/dpu_set.c),
#   so n DPUs of a rank use ceil(n / chips) lines.
TRANSFER_THREAD_SIZES = (1024, 2048, 32 * 1024)
"""Bytes per DPU below which a transfer uses 1, 2, 4 threads of the pool (xeon_sp_init_and_do_xfer defaults)."""


def ranks(dpus: Num, hw: Any) -> Num:
    return ceil(dpus / hw.dpus_per_rank)


# Across ranks (same SDK file): xeon_sp_write_to_rank / xeon_sp_read_from_rank take the pool of the rank's memory
# channel (xeon_sp_acquire_pool locks channels_mutex[channel_id]; one pool per channel, MAX_NB_POOL = 31, "no need
# for more pool than channel"), so ranks on one channel are moved one after another and only ranks on different
# channels overlap; a pool's threads run on the rank's NUMA node (set_thread_numa_affinity). What a further rank adds
# is therefore a share of one rank's bandwidth (``*_rank_growth``), and the aggregate stops at the shared host path
# (``*_saturation_bytes_per_s``): both fitted per machine (calibration/transfers.py).
def rank_growth(dpus: Num, hw: Any, to_pim: bool) -> Num:
    """Aggregate bandwidth of the ranks holding ``dpus`` DPUs over one rank's, before the ceiling:
    ``1 + growth * (ranks - 1)``."""
    growth = hw.push_rank_growth if to_pim else hw.pull_rank_growth
    return 1 + growth * (ranks(dpus, hw) - 1)


def rank_set_s(one_rank_s: Num, total_bytes: Num, dpus: Num, hw: Any, to_pim: bool) -> Num:
    """Seconds to move ``total_bytes`` over the ranks of ``dpus`` DPUs when one rank's share alone takes
    ``one_rank_s``: ``ranks / (1 + growth * (ranks - 1))`` times it, and never faster than the ceiling, which limits
    how far the ranks overlap but never makes them slower than one after another at one rank's own rate (so one
    rank alone keeps its measured rate: PrIM's 16.88 GB/s broadcast on one rank of this server is above the
    fitted machines' ceilings)."""
    ceiling = hw.push_saturation_bytes_per_s if to_pim else hw.pull_saturation_bytes_per_s
    n = ranks(dpus, hw)
    return maximum(n / rank_growth(dpus, hw, to_pim) * one_rank_s, minimum(total_bytes / ceiling, n * one_rank_s))


def rank_set_bandwidth(per_rank_bytes_per_s: Num, dpus: Num, hw: Any, to_pim: bool = True) -> Num:
    """Aggregate bandwidth of the ranks holding ``dpus`` DPUs: one rank's times ``rank_growth``, capped by the
    ceiling but never below one rank's own rate (as ``rank_set_s``)."""
    ceiling = hw.push_saturation_bytes_per_s if to_pim else hw.pull_saturation_bytes_per_s
    return minimum(per_rank_bytes_per_s * rank_growth(dpus, hw, to_pim), maximum(ceiling, per_rank_bytes_per_s))


# NUMA placement. The SDK's MRAM copy threads run on the rank's NUMA node (xeon_sp_translation.c
# set_thread_numa_affinity; pim-opt-server.md section 3.2); nothing in the SDK places the host buffers, so they sit
# where their pages were first touched (or where numactl puts them). A remote rank's bytes cross the socket link.
def remote_rank_share(dpus: Num, hw: Any) -> Num:
    """Share of a transfer's ranks whose host buffer sits on another socket: ``remote_buffer_share``, or, with every
    buffer on the first node (``buffers_on_one_node`` = 1), the ranks beyond ``ranks_per_socket`` (dpu_alloc takes
    ranks in enumeration order, the first socket's first)."""
    n = ranks(dpus, hw)
    one_node = hw.buffers_on_one_node
    return (one_node * maximum(n - hw.ranks_per_socket, 0) / maximum(n, 1)
            + (1 - one_node) * hw.remote_buffer_share)


def placement_factor(dpus: Num, hw: Any) -> Num:
    """A transfer's byte time over its all-local time: ``1 + share * (remote_transfer_factor - 1)`` (the remote
    ranks' bytes at the factor, the others unchanged; exactly 1 at share 0)."""
    return 1 + remote_rank_share(dpus, hw) * (hw.remote_transfer_factor - 1)


def transfer_threads(bytes_per_dpu: Num, hw: Any) -> Num:
    """Threads of a rank's pool one transfer of ``bytes_per_dpu`` uses (``TRANSFER_THREAD_SIZES``): 1, then 2 from
    1 KiB, 4 from 2 KiB, the whole pool from 32 KiB (never more than the pool)."""
    pool = hw.transfer_threads
    small, medium, large = TRANSFER_THREAD_SIZES
    two, four = minimum(2, pool), minimum(4, pool)
    return (1 + step(bytes_per_dpu - small) * (two - 1) + step(bytes_per_dpu - medium) * (four - two)
            + step(bytes_per_dpu - large) * (pool - four))


def transfer_lines(dpus: Num, hw: Any) -> Num:
    """Lines of the fullest rank a transfer to ``dpus`` DPUs touches (DPUs packed on the fewest lines)."""
    return ceil(minimum(dpus, hw.dpus_per_rank) / hw.chips_per_rank)


def line_s_per_byte(dpus_on_line: Num, hw: Any, to_pim: bool, contended: Num = 0) -> Num:
    """Seconds per byte per DPU for one thread to move a line of ``dpus_on_line`` distinct buffers (1 when every
    DPU gets the same buffer). Alone: the serial one-DPU rate (PrIM's 0.33 / 0.12 GB/s) plus
    ``push/pull_line_dpu_s_per_byte`` per further DPU. With other threads of the pool at work (``contended`` = 1):
    at least the per-thread share of PrIM's full-rank rate, which one thread per line reached (8 threads, 8
    lines): ``dpus_on_line * lines_per_rank / per_rank_bandwidth``."""
    serial = hw.serial_to_pim_bytes_per_s if to_pim else hw.serial_from_pim_bytes_per_s
    extra = hw.push_line_dpu_s_per_byte if to_pim else hw.pull_line_dpu_s_per_byte
    per_rank = hw.push_bytes_per_s_per_rank if to_pim else hw.pull_bytes_per_s_per_rank
    alone = 1 / serial + extra * (dpus_on_line - 1)
    shared = dpus_on_line * hw.dpus_per_rank / hw.chips_per_rank / per_rank
    return alone + contended * maximum(shared - alone, 0)


def rank_transfer_s(bytes_per_dpu: Num, dpus: Num, hw: Any, to_pim: bool, distinct: bool = True) -> Num:
    """One parallel MRAM transfer's bytes on the fullest rank: the busiest thread's lines, each at
    ``line_s_per_byte``; contended when more than one thread has lines (arithmetic, not a comparison, so the
    compiled model never branches on a branch)."""
    lines = transfer_lines(dpus, hw)
    threads = transfer_threads(bytes_per_dpu, hw)
    per_thread = hw.dpus_per_rank / hw.chips_per_rank / threads
    busiest = minimum(lines, per_thread)
    contended = minimum(ceil(lines * threads * hw.chips_per_rank / hw.dpus_per_rank), 2) - 1
    on_line = minimum(dpus, hw.chips_per_rank) if distinct else 1
    return busiest * bytes_per_dpu * line_s_per_byte(on_line, hw, to_pim, contended)


def host_transfer_s(bytes_per_dpu: Num, dpus: Num, hw: Any, to_pim: bool, mode: str = "parallel",
                    memory: str = "mram") -> Num:
    """One transfer call: ``parallel`` push/pull (distinct buffers), ``broadcast`` (one buffer, to PIM
    only), ``serial`` copies (one DPU after another), or ``identical``: the same buffer to every DPU (the
    global model), sent as a broadcast when ``hw.broadcast_identical_pushes`` is 1, else as a parallel push.

    ``identical`` is the blend ``flag * broadcast + (1 - flag) * parallel`` rather than a branch (or a
    compile key): the flag is an input of the one compiled function, so a design-space batch mixes both
    settings in one vectorized call, the sensitivity analysis can differentiate through it, and at
    flag = 0 it evaluates exactly to the parallel push of one buffer (0 * x + 1 * y = y in floating point).

    A parallel MRAM transfer costs the call (``transfer_call_overhead_s``, plus ``pull_call_extra_s`` from the
    DPUs) and its fullest rank's lines (``rank_transfer_s``) spread over the ranks by ``rank_set_s``.
    ``memory = "wram"``: a WRAM ``__host`` symbol (arguments, results) costs ``wram_call_overhead_s`` and
    ``wram_word_s`` per 32-bit word per line; a serial copy costs one call per DPU (one line, one DPU)."""
    if mode == "identical":
        if not to_pim:
            raise ValueError("an identical buffer goes to the PIM side only")
        flag = hw.broadcast_identical_pushes
        return (flag * host_transfer_s(bytes_per_dpu, dpus, hw, True, "broadcast", memory)
                + (1 - flag) * _parallel_s(bytes_per_dpu, dpus, hw, True, memory, distinct=False))
    if mode == "broadcast":
        if not to_pim:
            raise ValueError("broadcast goes to the PIM side only")
        bandwidth = rank_set_bandwidth(hw.broadcast_bytes_per_s_per_rank, dpus, hw, True)
        return hw.transfer_call_overhead_s + bytes_per_dpu * dpus / bandwidth * placement_factor(dpus, hw)
    if mode == "parallel":
        return _parallel_s(bytes_per_dpu, dpus, hw, to_pim, memory)
    if mode == "serial":
        if memory == "wram":
            return dpus * (hw.wram_call_overhead_s + ceil(bytes_per_dpu / 4) * hw.wram_word_s)
        per_dpu = hw.serial_to_pim_bytes_per_s if to_pim else hw.serial_from_pim_bytes_per_s
        return dpus * (_call_s(hw, to_pim) + bytes_per_dpu / per_dpu * placement_factor(dpus, hw))
    raise ValueError(f"unknown transfer mode {mode!r}")


def _call_s(hw: Any, to_pim: bool) -> Num:
    return hw.transfer_call_overhead_s if to_pim else hw.transfer_call_overhead_s + hw.pull_call_extra_s


def _parallel_s(bytes_per_dpu: Num, dpus: Num, hw: Any, to_pim: bool, memory: str, distinct: bool = True) -> Num:
    if memory == "wram":
        words = ceil(bytes_per_dpu / 4)
        spread = ranks(dpus, hw) / rank_growth(dpus, hw, to_pim)
        return hw.wram_call_overhead_s + spread * transfer_lines(dpus, hw) * words * hw.wram_word_s
    one_rank = rank_transfer_s(bytes_per_dpu, dpus, hw, to_pim, distinct)
    return (_call_s(hw, to_pim)
            + rank_set_s(one_rank, bytes_per_dpu * dpus, dpus, hw, to_pim) * placement_factor(dpus, hw))


def direct_transfer_s(bytes_per_dpu: Num, dpus: Num, hw: Any, path: Any, to_pim: bool, threads: Num) -> Num:
    """One parallel MRAM transfer through a direct host path instead of the SDK's pool: the host maps each rank
    and interleaves the bytes itself, one host thread per rank at a time (upmem-sdk-light's direct interface,
    Loremkang/upmem-sdk-light src/benchmark/host.cpp; no per-size thread heuristic, no per-channel lock). The call
    costs ``path.call_s``; a thread moves a rank's lines at the SDK's own one-thread line rate
    (``line_s_per_byte`` alone: the same interleave and writes, without the pool), ``ceil(ranks / threads)``
    rounds of it, never faster than ``path.ceiling_bytes_per_s`` for all the bytes, at ``placement_factor``.
    ``path`` holds one direction's constants (``calibration.direct_path``)."""
    on_line = minimum(dpus, hw.chips_per_rank)
    one_rank_s = transfer_lines(dpus, hw) * bytes_per_dpu * line_s_per_byte(on_line, hw, to_pim)
    rounds = ceil(ranks(dpus, hw) / threads)
    return path.call_s + (maximum(rounds * one_rank_s, bytes_per_dpu * dpus / path.ceiling_bytes_per_s)
                          * placement_factor(dpus, hw))


def launch_s(hw: Any, dpus: Num = 0) -> Num:
    """One synchronous ``dpu_launch`` on ``dpus`` DPUs (boot, run-to-completion polling, excluding the kernel
    itself); ``dpus`` = 0 prices the fixed part alone. Completion polling (SDK 2021.3, AIS-SNU/PID-Comm
    upmem-2021.3.0_opt/src/backends/api/src/api/dpu_polling.c:120-126): each of the NR_QUEUES = 4 polling threads
    (include/dpu_thread_job.h:35) loops over its ranks and calls dpu_poll_rank on each (dpu_runner.c:177), so the
    last rank's completion is seen one sweep over the ranks later: ``launch_per_rank_s`` per rank beyond the first
    (no growth inside one rank, as the 1-64-DPU fit finds)."""
    return (hw.launch_overhead_s + hw.launch_per_dpu_s * dpus
            + hw.launch_per_rank_s * maximum(ranks(dpus, hw) - 1, 0))


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


# ---------------------------------------------------------------- host-mediated collectives
# The exchanges the optimizers make through the host (the study's host code: pull every DPU's vector, reduce it on
# the host's threads, push the result to every DPU; pim-opt-server.md section 2.5), as named prices built from the
# transfers and the host reduction above, so a changed implementation of one (PID-Comm's in-DIMM collectives, a
# faster host path) is one change: ``host_collective_time_factor`` (1 = the SDK path, no new measured constant).
def host_gather_s(bytes_per_dpu: Num, dpus: Num, hw: Any) -> Num:
    """Gather: one parallel pull of every DPU's own ``bytes_per_dpu`` (distinct buffers)."""
    return hw.host_collective_time_factor * host_transfer_s(bytes_per_dpu, dpus, hw, False, "parallel")


def host_broadcast_s(bytes_per_dpu: Num, dpus: Num, hw: Any) -> Num:
    """Broadcast: the same buffer to every DPU (``host_transfer_s`` mode ``identical``: dpu_broadcast_to when
    ``broadcast_identical_pushes`` is 1, else a parallel push of one buffer, as the study's host code does)."""
    return hw.host_collective_time_factor * host_transfer_s(bytes_per_dpu, dpus, hw, True, "identical")


def host_scatter_s(bytes_per_dpu: Num, dpus: Num, hw: Any) -> Num:
    """Scatter: one parallel push of a distinct buffer to every DPU."""
    return hw.host_collective_time_factor * host_transfer_s(bytes_per_dpu, dpus, hw, True, "parallel")


def host_reduction_s(bytes_streamed: Num, threads: Num, thread_rounds: Num, hw: Any) -> Num:
    """Reduce on the host: stream ``bytes_streamed`` (every DPU's vector, once per pass) through ``threads``
    threads, created and joined ``thread_rounds`` times (the study's parameter server)."""
    return hw.host_collective_time_factor * (host_reduce_s(bytes_streamed, threads, hw)
                                             + thread_rounds * thread_start_s(threads, hw))


def host_allreduce_s(bytes_per_dpu: Num, dpus: Num, threads: Num, hw: Any, passes: Num = 1,
                     thread_rounds: Num = 1) -> Num:
    """All-reduce through the host: gather every DPU's vector, reduce the ``dpus`` vectors (``passes`` sweeps) on
    ``threads`` host threads, broadcast the result: what MA-SGD's round exchanges (its three phases
    ``pim_to_host``, ``host_aggregate`` and ``host_to_pim`` price the three parts)."""
    return (host_gather_s(bytes_per_dpu, dpus, hw)
            + host_reduction_s(passes * dpus * bytes_per_dpu, threads, thread_rounds, hw)
            + host_broadcast_s(bytes_per_dpu, dpus, hw))


def cycles_to_s(cycles: Num, hw: Any) -> Num:
    return cycles / hw.dpu_clock_hz
