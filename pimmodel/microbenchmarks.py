"""The PrIM microbenchmarks as workloads, costed through ``pimmodel.primitives``.

Each function describes what one PrIM microbenchmark executes (instructions per element, tasklets, DMA sizes,
transfer calls: read off the benchmark code in CMU-SAFARI/prim-benchmarks) and asks the shared primitives
what it costs on a hardware spec. The published validation group (``pimmodel.validation``) compares these
predictions with PrIM's measurements in ``validation/prim.toml``; no hardware constant is read back directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from . import primitives as P
from .errors import SpecError, check_known
from .specs import HardwareSpec

MOPS = 1e6
MB_PER_S = 1e6
GB_PER_S = 1e9

# ---- Arithmetic-Throughput (dpu/task.c, host/app.c, run.sh)
ARITH_ELEMENTS = 1 << 20
"""run.sh: -i 1048576 on 1 DPU."""
ARITH_SCALAR = ARITH_ELEMENTS
"""``T scalar = (T)input_size_dpu``: the element count per DPU."""
ARITH_DATA_BITS = 31
"""Elements are ``rand()`` (31-bit)."""
ARITH_BLOCK_BYTES = 1024
"""BL = 10: tasklets take 1,024-B blocks in turn."""
ARITH_LOOP_INSTRUCTIONS = 5
"""The update() loop is not unrolled: WRAM load, store, index update, compare, branch."""

# ---- STREAM in WRAM (dpu/{copyw,add,scale,triad}.c): uint64, fully unrolled loops
STREAM_SCALAR = 1 << 21
"""run.sh: -i 2097152; ``scalar = (T)input_size_dpu``."""
STREAM_KERNELS: dict[str, tuple[int, int, bool, bool]] = {
    # kernel: (WRAM loads + stores per element, bytes per element, has 64-bit add, has 64-bit multiply)
    "copy": (2, 16, False, False),
    "add": (3, 24, True, False),
    "scale": (2, 16, False, True),
    "triad": (3, 24, True, True),
}

_INT_BYTES = {"int32": 4, "int64": 8}


def _bit_length(value: int) -> int:
    return max(1, int(value).bit_length())


def op_instructions(op: str, hw: HardwareSpec, scalar: int = ARITH_SCALAR, data_bits: int = ARITH_DATA_BITS) -> Any:
    """Instructions of one ``x = x op scalar`` (without the loop), from the spec's operation costs."""
    smaller_bits = min(_bit_length(scalar), data_bits)
    table: dict[str, Callable[[], Any]] = {
        "int32_add": lambda: hw.int32_add_instructions,
        "int32_sub": lambda: hw.int32_add_instructions,
        "int32_mul": lambda: P.mul32_instructions(smaller_bits, hw),
        "int64_add": lambda: hw.int64_add_instructions,
        "int64_sub": lambda: hw.int64_add_instructions,
        "int64_mul": lambda: P.mul64_instructions(hw),
        "float_add": lambda: hw.float_add_instructions,
        "float_sub": lambda: hw.float_add_instructions,
        "float_mul": lambda: hw.float_mul_instructions,
        "float_div": lambda: hw.float_div_instructions,
        "double_add": lambda: hw.double_add_instructions,
        "double_sub": lambda: hw.double_add_instructions,
        "double_mul": lambda: hw.double_mul_instructions,
        "double_div": lambda: hw.double_div_instructions,
    }
    check_known("arithmetic op", op, table)
    return table[op]()


def _element_bytes(op: str) -> int:
    kind = op.split("_")[0]
    return {"int32": 4, "int64": 8, "float": 4, "double": 8}[kind]


def arithmetic(hw: HardwareSpec, op: str, tasklets: int, elements: int = ARITH_ELEMENTS) -> dict[str, float]:
    """PrIM Arithmetic-Throughput: ``cycles`` of the busiest tasklet's timed loop and ``throughput`` (MOPS)."""
    per_block = ARITH_BLOCK_BYTES // _element_bytes(op)
    blocks = math.ceil(elements / per_block)
    elements_busiest = math.ceil(blocks / tasklets) * per_block
    per_element = op_instructions(op, hw) + ARITH_LOOP_INSTRUCTIONS
    cycles = float(P.issue_cycles(elements_busiest * per_element, tasklets, hw))
    seconds = float(P.cycles_to_s(cycles, hw))
    return {"cycles": cycles, "throughput": elements / seconds / MOPS}


def wram_stream(hw: HardwareSpec, kernel: str, tasklets: int, elements_per_tasklet: int = 1 << 14) -> dict[str, float]:
    """PrIM STREAM on WRAM-resident uint64 arrays: sustained ``bandwidth`` (MB/s)."""
    check_known("STREAM kernel", kernel, STREAM_KERNELS)
    memory_ops, nbytes, has_add, has_mul = STREAM_KERNELS[kernel]
    per_element = memory_ops + (hw.int64_add_instructions if has_add else 0)
    if has_mul:
        per_element += P.mul64_instructions(hw)
    cycles = float(P.issue_cycles(elements_per_tasklet * per_element, tasklets, hw))
    moved = elements_per_tasklet * tasklets * nbytes
    return {"bandwidth": moved / float(P.cycles_to_s(cycles, hw)) / MB_PER_S}


def dma_latency(hw: HardwareSpec, bytes: int, write: bool = False) -> dict[str, float]:
    """PrIM MRAM-Latency (1 tasklet, one timed DMA at a time): ``latency`` (cycles), ``bandwidth`` (MB/s)."""
    _check_dma_size(hw, bytes)
    cycles = float(P.dma_burst_cycles(bytes, 1, hw, write=write))
    return {"latency": cycles, "bandwidth": bytes / float(P.cycles_to_s(cycles, hw)) / MB_PER_S}


def mram_copy(hw: HardwareSpec, bytes: int, tasklets: int) -> dict[str, float]:
    """PrIM STREAM COPY-DMA: every tasklet reads a block, then writes it back; bytes read + written (MB/s)."""
    _check_dma_size(hw, bytes)
    cycles = float(P.dma_burst_cycles(bytes, tasklets, hw) + P.dma_burst_cycles(bytes, tasklets, hw, write=True))
    return {"bandwidth": 2 * bytes * tasklets / float(P.cycles_to_s(cycles, hw)) / MB_PER_S}


CPU_DPU_TRANSFER_THREADS = 8
"""PrIM's CPU-DPU microbenchmark allocates its DPUs with a transfer pool of 8 threads
(``dpu_alloc(NR_DPUS, "nrThreadPerPool=8", ...)``, prim-benchmarks Microbenchmarks/CPU-DPU/host/app.c:50), where the
applications keep the SDK's default (the spec's ``transfer_threads``)."""


def host_transfer(hw: HardwareSpec, mode: str, dpus: int, to_pim: bool, bytes_per_dpu: int,
                  threads: int = CPU_DPU_TRANSFER_THREADS) -> dict[str, float]:
    """PrIM CPU-DPU: one transfer of ``bytes_per_dpu`` to/from each of ``dpus`` with a pool of ``threads`` transfer
    threads: ``bandwidth`` (GB/s)."""
    seconds = float(P.host_transfer_s(bytes_per_dpu, dpus, hw.replace(transfer_threads=threads), to_pim, mode))
    return {"time": seconds, "bandwidth": bytes_per_dpu * dpus / seconds / GB_PER_S}


def _check_dma_size(hw: HardwareSpec, nbytes: int) -> None:
    if not hw.dma_min_bytes <= nbytes <= hw.dma_max_bytes:
        raise SpecError(f"DMA size {nbytes} B is outside [{hw.dma_min_bytes}, {hw.dma_max_bytes}] for {hw.name}")


BENCHMARKS: dict[str, Callable[..., dict[str, float]]] = {
    "arithmetic": arithmetic,
    "wram_stream": wram_stream,
    "dma_latency": dma_latency,
    "mram_copy": mram_copy,
    "host_transfer": host_transfer,
}


def run(benchmark: str, quantity: str, params: Mapping[str, Any], hw: HardwareSpec) -> float:
    """The predicted ``quantity`` of one microbenchmark workload (in the unit the data file uses)."""
    check_known("microbenchmark", benchmark, BENCHMARKS)
    try:
        result = BENCHMARKS[benchmark](hw, **params)
    except TypeError as exc:
        raise SpecError(f"microbenchmark {benchmark!r}: bad parameters {dict(params)!r} ({exc})") from None
    check_known(f"{benchmark} quantity", quantity, result)
    return float(result[quantity])
