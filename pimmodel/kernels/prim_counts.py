"""How the PrIM kernel descriptions count instructions, and the section builders they share.

Instruction counts are estimates of the compiled -O2 code read off the C, never fitted, with one counting
rule for every kernel, taken from compiled DPU code of the same SDK (CMU-SAFARI/pim-ml
``Linear_Regression/LinReg_no_quantization/LogReg_int8/disassem``, cited by address): a rolled loop keeps its
index in a register and recomputes each WRAM address (``lsl_add``), so an element access is 2 instructions
(address + load/store; a store back to the element just loaded reuses the address), and an iteration ends with
an increment and a compare-and-branch; ``#pragma unroll`` loops address by immediate offsets (1 per access, no
loop control). The same rule gives PrIM's INT32 ADD microbenchmark its measured ~6 instructions per element.
"""

from __future__ import annotations

from .prim_data import TASKLETS, ceil_div
from .vocabulary import Dma, HostCall, Section, Work

# ---------------------------------------------------------------- counting conventions (instructions)
ACCESS = 2
"""WRAM element access in a rolled loop: address + load or store."""
LOOP = 2
"""Index increment + compare-and-branch per rolled-loop iteration (``add``; ``jneq``)."""
CALL = 2
"""Calling a runtime routine (``__mulsi3``, ``__udiv32``): an argument ``move`` and the ``call`` (the disassembly's
call sites move one or both operands into r0/r1 first, e.g. 80000430-80000438); the routine's body is its
operation class."""
BLOCK = 20
"""Per DMA block of a streaming loop: loop test (2), bound check of the last block (3), DMA set-up + ``ldma`` (4),
helper call, arguments and return (6), accumulating the helper's result (2-3), address update (2)."""
DMA_SETUP = 4
"""One ``mram_read``/``mram_write`` of a run-time size (mram.h:33-53): address, size packing (``lsr_add``,
``lsl_add``) and the ``ldma``/``sdma`` (disassembly 80000218-80000228)."""
DMA_CONST = 2
"""One of a compile-time size: address and the ``ldma`` with the size as an immediate (``ldma r2, r0, 127`` =
1,024 B, disassembly 800002f8)."""
BLOCK_CONST = BLOCK - 3 - (DMA_SETUP - DMA_CONST)
"""The same for a loop over whole blocks of a compile-time size (no bound check, immediate DMA size)."""
SETUP_PER_TASKLET = 40
"""Per tasklet and launch: ``me()``, argument loads, ``mem_alloc`` calls (mutex 201 around ~8 instructions)."""
UDIV = 7
"""``__udiv32`` besides its ``div_step``s: clz, clz, sub, move, move.u, computed jump, return (SDK div32.c)."""
HOP = 22
"""One handshake hop on the chain's critical path (SDK handshake.c:19-66; U/SCAN-RSS/dpu:42-57): the notifier's
store, call, acquire, queue test, resume, release (~10), the waiter's return from ``stop``, release, return, load
of the partial count, 64-bit add, store, call of its own notify (~12)."""

B, A32, A64, SH, MUL, BITS = "bookkeeping", "int32_add", "int64_add", "int32_shift", "mul32", "mul32_bits"


def ops(**counts: float) -> dict[str, float]:
    """Operation counts by short name: b (bookkeeping), add, add64, shift, mul (``__mulsi3`` calls), bits."""
    names = {"b": B, "add": A32, "add64": A64, "shift": SH, "mul": MUL, "bits": BITS}
    return {names[k]: v for k, v in counts.items() if v}


def setup(allocs: int, barriers: int = 1) -> Section:
    """Launch prologue: tasklet 0 resets the heap, everyone takes the start barrier and allocates buffers."""
    return Section("setup", True, 1, Work(ops(b=TASKLETS * (SETUP_PER_TASKLET + 12 * allocs)), barriers=barriers))


def stream(name: str, elements: int, elem_bytes: int, per_elem: dict[str, float], reads: int, writes: int,
            extra_per_block: float = 0.0) -> Section:
    """A round-robin loop over 1,024-B blocks (tasklet t takes blocks t, t+16, ...): ``reads`` block reads and
    ``writes`` block writes per block, ``per_elem`` instructions per element."""
    nbytes = elements * elem_bytes
    blocks = ceil_div(nbytes, 1024)
    size = nbytes / blocks
    active = min(TASKLETS, blocks)
    counts = {k: v * elements for k, v in per_elem.items()}
    counts[B] = counts.get(B, 0) + (BLOCK + extra_per_block) * blocks
    dmas = tuple(d for d in (Dma("read", size, active, reads * blocks), Dma("write", size, active, writes * blocks))
                 if d.transfers)
    return Section(name, True, 1, Work(counts, dmas=dmas), tasklets=active)


def serial(name: str, counts: dict[str, float], dmas: tuple[Dma, ...] = (), barriers: int = 0) -> Section:
    """Work of one tasklet alone (the others wait at a barrier)."""
    return Section(name, False, 1, Work(counts, dmas=dmas, barriers=barriers))


def args(nbytes: int) -> HostCall:
    """The kernel arguments: a parallel push to the WRAM symbol ``DPU_INPUT_ARGUMENTS``."""
    return HostCall("arguments", nbytes, True, memory="wram")


