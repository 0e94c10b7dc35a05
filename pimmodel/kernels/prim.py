"""The 13 PrIM kernels of the real-hardware data set, described in the kernel vocabulary.

One function per kernel turns (DPUs, ``data_prep_param``) into a ``KernelRun``: the launches timed as the
kernel, the busiest DPU's sections (instructions by operation class, DMA bursts, barriers, mutex and handshake
chains, active tasklets) and the host transfer calls timed as CPU->DPU and DPU->CPU. Sources: the kernels and
host programs as built for the measurements (VIA-Research/uPIMulator @ 870d916,
``python_cpp/uPIMulator_frontend/benchmark/<K>/{dpu/task.c,host/app.c}``, cited ``U/<K>/dpu:line`` and
``U/<K>/host:line``), the data preparation (``prim_data``), the research notes ``notes/prim_kernels.md``.

Instruction counts are estimates of the compiled code read off the C with one counting rule
(``pimmodel.kernels.prim_counts``), never fitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import SpecError, unknown
from . import prim_data as D
from . import prim_sync as S
from .prim_counts import ACCESS, CALL, DMA_CONST, DMA_SETUP, LOOP, TASKLETS, B, ceil_div
from .prim_counts import args as _args
from .prim_counts import ops as _ops
from .prim_counts import serial as _serial
from .prim_counts import setup as _setup
from .prim_counts import stream as _stream
from .vocabulary import Chain, Dma, HostCall, KernelRun, Section, Work


# ---------------------------------------------------------------- streaming kernels
def va(dpus: int, size: int) -> KernelRun:
    """VA (int32): ``B[i] += A[i]`` per 1-KB block pair (U/VA/dpu:18-22,60-74); host U/VA/host:126-136, 176."""
    e = D.per_dpu_8bytes(size, dpus, 4)
    per_elem = _ops(b=2 * ACCESS + 1 + LOOP, add=1)  # load A, load B, add, store B (address reused), loop
    stream = _stream("stream", e, 4, per_elem, reads=2, writes=1, extra_per_block=2 * DMA_SETUP)
    host = (_args(12), HostCall("A", 4 * e, True), HostCall("B", 4 * e, True), HostCall("C", 4 * e, False))
    return KernelRun("VA", 1, (_setup(2), stream), host, mram_bytes=8 * e)


def red(dpus: int, size: int) -> KernelRun:
    """RED (int64, SINGLE, HAND): ``output += input[j]`` per block (U/RED/dpu:24-30,79-90), then tasklet 0 adds
    the 15 partial sums (:130-137, unrolled); results are a WRAM symbol (U/RED/host:174)."""
    e = D.per_dpu_8bytes(size, dpus, 8)
    stream = _stream("stream", e, 8, _ops(b=ACCESS + LOOP, add64=1), reads=1, writes=0)
    final = _serial("final", _ops(b=15 + 4, add64=15), barriers=1)
    host = (_args(16), HostCall("A", 8 * e, True), HostCall("results", 16 * TASKLETS, False, memory="wram"))
    return KernelRun("RED", 1, (_setup(1), stream, final), host, mram_bytes=8 * e)


def _histogram(name: str, dpus: int, size: int) -> tuple[int, Section]:
    e = D.per_dpu_8bytes(size, dpus, 4)
    if name == "HST-S":  # load d, d * bins (__mulsi3), >> 12, histo[...] += 1, loop (U/HST-S/dpu:26-31)
        per = _ops(b=ACCESS + CALL + 3 + LOOP, add=1, shift=1, mul=1, bits=D.HST_MUL_BITS)
        return e, _stream("stream", e, 4, per, reads=1, writes=0)
    # HST-L (U/HST-L/dpu:33-40): the same outside the lock, plus the mutex id load; one mutex for every element
    per = _ops(b=ACCESS + CALL + ACCESS + LOOP, shift=1, mul=1, bits=D.HST_MUL_BITS)
    section = _stream("stream", e, 4, per, reads=1, writes=0)
    lock = Chain("mutex", e, _ops(b=5, add=1))  # acquire, address, load, +1, store, release
    return e, Section(section.name, True, 1, Work(section.work.ops, dmas=section.work.dmas, chains=(lock,)),
                      tasklets=section.tasklets)


def _stream_hst(name: str, dpus: int, size: int) -> KernelRun:
    e, stream = _histogram(name, dpus, size)
    bins = 256
    if name == "HST-S":  # private histograms: zero 256 bins, merge 16 x 256 (U/HST-S/dpu:70-100), 3 barriers
        zero = Section("zero", True, 1, Work(_ops(b=TASKLETS * bins * (ACCESS + LOOP))))
        merge = Section("merge", True, 1, Work(_ops(b=bins * (TASKLETS * (2 * ACCESS + LOOP) + ACCESS + LOOP),
                                                    add=bins * TASKLETS), barriers=2))
    else:  # one shared histogram: zero and copy round-robin, 4 barriers (U/HST-L/dpu:92-134)
        zero = Section("zero", True, 1, Work(_ops(b=bins * (ACCESS + LOOP)), barriers=1))
        merge = Section("merge", True, 1, Work(_ops(b=bins * (2 * ACCESS + LOOP)), barriers=2))
    write = _serial("write", _ops(b=DMA_SETUP), (Dma("write", 4 * bins, 1, 1),))
    host = (_args(16), HostCall("A", 4 * e, True), HostCall("histogram", 4 * bins, False))
    return KernelRun(name, 1, (_setup(2), zero, stream, merge, write), host, mram_bytes=4 * e + 4 * bins)


def hst_s(dpus: int, size: int) -> KernelRun:
    """HST-S: private per-tasklet histograms (U/HST-S/dpu:26-110; host :169-214)."""
    return _stream_hst("HST-S", dpus, size)


def hst_l(dpus: int, size: int) -> KernelRun:
    """HST-L: one shared histogram, a mutex around every increment (U/HST-L/dpu:33-134; host :169-213)."""
    return _stream_hst("HST-L", dpus, size)


# ---------------------------------------------------------------- matrix-vector kernels
def _rows(rows: int) -> tuple[int, int]:
    """(rows of the busiest tasklet, active tasklets): rows go to tasklets in pairs (U/GEMV/dpu:49-67)."""
    chunks, rest = divmod(rows, 2 * TASKLETS)
    return 2 * chunks + (2 if rest else 0), min(TASKLETS, ceil_div(rows, 2))


def _mv_section(rows: int, cols: int, mac: dict[str, float], last_mac_extra: float) -> Section:
    """One GEMV/MLP launch: every row reads 1-KB blocks of A and x, multiplies, accumulates into cache_C[pos]
    (U/GEMV/dpu:91-164). The busiest tasklet's rows times the active tasklets (all do as many)."""
    busiest, active = _rows(rows)
    blocks = ceil_div(cols, 256)
    per_row = {k: v * cols for k, v in mac.items()}
    # per row: 2 reads, n-loop and offset tests, address updates, pos loop; per extra block the gemv() call
    per_row[B] = per_row[B] + last_mac_extra * (cols - 256 * (blocks - 1)) + 2 * DMA_CONST + 11 \
        + (blocks - 1) * (2 * DMA_CONST + 10)
    total = busiest * active
    # per pair of rows: clear cache_C (2), 8-B write, loop and address update (3)
    ops = {k: v * total + ((5 + DMA_CONST) * total / 2 if k == B else 0) for k, v in per_row.items()}
    dmas = (Dma("read", 1024, active, 2 * blocks * total), Dma("write", 8, active, total // 2))
    return Section("rows", True, 1, Work(ops, dmas=dmas), tasklets=active)


def gemv(dpus: int, size: int) -> KernelRun:
    """GEMV (uint32, 64 columns, values < 50): the row is shorter than a block, so only the last-block j-loop
    runs, with its ``j >= 256`` check (U/GEMV/dpu:94,140-147); host U/GEMV/host:161-172, 210 (x: the same buffer
    prepared for every DPU, :169-172)."""
    rows = ceil_div(size, dpus)
    rows_pad = rows + rows % 2
    mac = _ops(b=ACCESS * 2 + CALL + 2 + LOOP, add=1, mul=1, bits=D.gemv_mul_bits())
    host = (_args(16), HostCall("A", 256 * rows_pad, True), HostCall("x", 256, True, mode="identical"),
            HostCall("y", 4 * rows_pad, False))
    return KernelRun("GEMV", 1, (_setup(4), _mv_section(rows, 64, mac, 1)), host, mram_bytes=260 * rows_pad + 256)


def mlp(dpus: int, size: int) -> KernelRun:
    """MLP: 3 GEMV launches over N x N int32 layers (U/MLP/dpu = GEMV with n_size = N, ``gemv()`` :18-23 for all
    blocks but the last); hw_cpu_to_dpu carries all three layers' weights (as uPIMulator's regression books it,
    tools/upmem_reg_model/src/benchmark/mlp.py:19-29)."""
    rows = ceil_div(size, dpus)
    rows_pad = rows + rows % 2
    mac = _ops(b=ACCESS * 2 + CALL + 2 + LOOP, add=1, mul=1, bits=D.MLP_MUL_BITS)
    layer = _mv_section(rows, size, mac, 1)
    layers = Section(layer.name, True, 3, layer.work, tasklets=layer.tasklets)
    setup = Section("setup", True, 3, _setup(4).work)
    weights = 4 * rows_pad * size
    host = (_args(16), HostCall("A", weights, True, calls=3), HostCall("x", 4 * size, True, mode="identical"),
            HostCall("y", 4 * rows_pad, False))
    return KernelRun("MLP", 3, (setup, layers), host, mram_bytes=weights + 4 * size + 4 * rows_pad)


KernelFn = Callable[[int, int], KernelRun]


@dataclass(frozen=True)
class KernelInfo:
    """A PrIM kernel: its description and what its size (``data_prep_param``) means."""

    name: str
    describe: KernelFn
    size: str


def _registry() -> dict[str, KernelInfo]:
    table = [
        ("BS", S.bs, "sorted-array length N (int64); N/8 queries"),
        ("GEMV", gemv, "matrix rows (64 uint32 columns)"),
        ("HST-L", hst_l, "total pixels (uint32)"),
        ("HST-S", hst_s, "total pixels (uint32)"),
        ("MLP", mlp, "N: three N x N int32 layers"),
        ("RED", red, "total int64 elements"),
        ("SCAN-RSS", S.scan_rss, "total int64 elements"),
        ("SCAN-SSA", S.scan_ssa, "total int64 elements"),
        ("SEL", S.sel, "total uint64 elements"),
        ("TRNS", S.trns, "M_: a (4 M_) x 512 int64 matrix"),
        ("TS", S.ts, "time-series length (int32, query length 64)"),
        ("UNI", S.uni, "total int64 elements"),
        ("VA", va, "total int32 elements"),
    ]
    return {name: KernelInfo(name, fn, meaning) for name, fn, meaning in table}


MAX_SIZE = 2**32 - 1
MRAM_BYTES = 64 * 2**20
"""MRAM per DPU of the UPMEM DPUs the programs were written for (mram.h; the programs size their data for it)."""


KERNELS: dict[str, KernelInfo] = _registry()


def kernels() -> dict[str, KernelInfo]:
    """The 13 kernels by name."""
    return KERNELS


def describe(name: str, dpus: int, size: int) -> KernelRun:
    """The ``KernelRun`` of kernel ``name`` on ``dpus`` DPUs with ``data_prep_param`` = ``size``."""
    table = kernels()
    if name not in table:
        raise unknown("PrIM kernel", name, table)
    if dpus < 1 or not 1 <= size <= MAX_SIZE:
        raise SpecError(f"{name}: DPUs must be >= 1 and the size in [1, {MAX_SIZE}] (the host programs' unsigned "
                        f"int), got dpus={dpus}, size={size}")
    run = table[name].describe(dpus, size)
    if run.mram_bytes > MRAM_BYTES:
        raise SpecError(f"{name} with size {size} on {dpus} DPUs needs {run.mram_bytes / 2**20:.0f} MiB of MRAM per "
                        f"DPU; a DPU has 64 MiB: use a smaller size (or more DPUs where the kernel splits its data)")
    return run
