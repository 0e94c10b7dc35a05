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

from ..errors import SpecError, check_choice, check_known
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


RED_TYPES = {"int64": 8, "int32": 4}
"""RED's element types and their bytes: PrIM builds ``TYPE ?= INT64`` (RED/Makefile:9), ``-DINT32`` selects int32_t
(RED/support/common.h:15-39); the measured uPIMulator build is int64."""


def red(dpus: int, size: int, elem: str = "int64") -> KernelRun:
    """RED (SINGLE, HAND): ``output += input[j]`` per block (U/RED/dpu:24-30,79-90), then tasklet 0 adds
    the 15 partial sums (:130-137, unrolled); results are a WRAM symbol (U/RED/host:174). ``elem``: int64 (64-bit
    adds, 128 per 1-KB block) or int32 (32-bit adds, 256 per block)."""
    nbytes = RED_TYPES[elem]
    add = {"add64": 1} if nbytes == 8 else {"add": 1}
    final_add = {"add64": 15} if nbytes == 8 else {"add": 15}
    e = D.per_dpu_8bytes(size, dpus, nbytes)
    stream = _stream("stream", e, nbytes, _ops(b=ACCESS + LOOP, **add), reads=1, writes=0)
    final = _serial("final", _ops(b=15 + 4, **final_add), barriers=1)
    host = (_args(16), HostCall("A", nbytes * e, True), HostCall("results", 16 * TASKLETS, False, memory="wram"))
    return KernelRun("RED", 1, (_setup(1), stream, final), host, mram_bytes=nbytes * e)


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


def gemv(dpus: int, size: int, cols: int = 64) -> KernelRun:
    """GEMV (uint32, values < 50): ``size`` rows m split over the DPUs (U/GEMV/host:99-124; PrIM
    GEMV/host/app.c:99-124), ``cols`` columns n (64 in the measured build: the row is shorter than a block, so
    only the last-block j-loop runs, with its ``j >= 256`` check, U/GEMV/dpu:94,140-147); host U/GEMV/host:161-172,
    210 (x: the same buffer prepared for every DPU, :169-172; PrIM GEMV/host/app.c:161-172, 210)."""
    rows = ceil_div(size, dpus)
    rows_pad = rows + rows % 2
    cols_pad = cols + cols % 2
    mac = _ops(b=ACCESS * 2 + CALL + 2 + LOOP, add=1, mul=1, bits=D.gemv_mul_bits())
    host = (_args(16), HostCall("A", 4 * cols_pad * rows_pad, True),
            HostCall("x", 4 * cols_pad, True, mode="identical"), HostCall("y", 4 * rows_pad, False))
    return KernelRun("GEMV", 1, (_setup(4), _mv_section(rows, cols, mac, 1)), host,
                     mram_bytes=4 * cols_pad * rows_pad + 4 * cols_pad + 4 * rows_pad)


def mlp(dpus: int, size: int, cols: int | None = None, layers: int = 3) -> KernelRun:
    """MLP: ``layers`` GEMV launches over m x n int32 layers, m = ``size`` rows split over the DPUs, n = ``cols``
    (None: n = m, the measured build) (U/MLP/dpu = GEMV with n_size = N, ``gemv()`` :18-23 for all blocks but the
    last; PrIM MLP/host/app.c:112-142 rows, :163-253 one launch per layer, NUM_LAYERS MLP/support/common.h:20);
    hw_cpu_to_dpu carries all layers' weights (as uPIMulator's regression books it,
    tools/upmem_reg_model/src/benchmark/mlp.py:19-29); every layer's weights overwrite the last at offset 0
    (PrIM MLP/host/app.c:181,240), so MRAM holds one layer."""
    n = size if cols is None else cols
    rows = ceil_div(size, dpus)
    rows_pad = rows + rows % 2
    n_pad = n + n % 2
    mac = _ops(b=ACCESS * 2 + CALL + 2 + LOOP, add=1, mul=1, bits=D.MLP_MUL_BITS)
    layer = _mv_section(rows, n, mac, 1)
    sections = (Section("setup", True, layers, _setup(4).work),
                Section(layer.name, True, layers, layer.work, tasklets=layer.tasklets))
    weights = 4 * rows_pad * n_pad
    host = (_args(16), HostCall("A", weights, True, calls=layers), HostCall("x", 4 * n_pad, True, mode="identical"),
            HostCall("y", 4 * rows_pad, False))
    return KernelRun("MLP", layers, sections, host, mram_bytes=weights + 4 * n_pad + 4 * rows_pad)


KernelFn = Callable[..., KernelRun]


@dataclass(frozen=True)
class ShapeParam:
    """A shape parameter a kernel's PrIM build takes besides its size: the API keyword (``describe(..., key=)``),
    the default (the measured uPIMulator build's value; None: derived from the size), its meaning with the PrIM
    source (CMU-SAFARI/prim-benchmarks @ 9a1498f), the smallest value, and the values allowed (for a type)."""

    key: str
    default: int | str | None
    meaning: str
    low: int = 1
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class KernelInfo:
    """A PrIM kernel: its description, what its size (``data_prep_param``) means, and its shape parameters."""

    name: str
    describe: KernelFn
    size: str
    shape: tuple[ShapeParam, ...] = ()


_SHAPES: dict[str, tuple[ShapeParam, ...]] = {
    "GEMV": (ShapeParam("cols", 64, "columns n of the m x n matrix (PrIM -n, default 8,192: GEMV/support/params.h:24,"
                        "31,43; rows m are the size, -m :23,30,42)"),),
    "MLP": (ShapeParam("cols", None, "columns n of each m x n layer (PrIM -n, default 4,096: "
                       "MLP/support/params.h:24,31,43; None: n = m, the measured build; rows m are the size, "
                       "-m :23,30,42)"),
            ShapeParam("layers", 3, "layers, one launch each (PrIM's compile-time NUM_LAYERS = 3: "
                       "MLP/support/common.h:20; MLP/host/app.c:209)")),
    "TS": (ShapeParam("query_length", 64, "query length m, a multiple of 64 (PrIM -m, default 256: "
                      "TS/support/params.h:25,32,47; the DPU runs m / 64 dot products per block, TS/dpu/task.c:120; "
                      "the host's query buffer holds 32,768, TS/host/app.c:31)", low=64),),
    "TRNS": (ShapeParam("rows", 4, "m: rows of a tile (PrIM -m, default 16: TRNS/support/params.h:27,37; the size is "
                        "M_, -o :29,36)"),
             ShapeParam("blocks", 64, "N_: column blocks, one per DPU per round (PrIM -p, default 1: "
                        "TRNS/support/params.h:30,38; TRNS/host/app.c:114-119)"),
             ShapeParam("cols", 8, "n: columns of a block (PrIM -n, default 8: TRNS/support/params.h:28,39)")),
    "BS": (ShapeParam("queries", None, "queries (PrIM -i: BS/support/params.h:22,39, rounded up to DPUs x 16, "
                      "BS/host/app.c:93-94; None: size / 8 as uPIMulator prepares them; PrIM's array is the "
                      "compile-time INPUT_SIZE = 2,048,576, BS/support/common.h:25)"),),
    "RED": (ShapeParam("elem", "int64", "element type (PrIM TYPE ?= INT64, RED/Makefile:9; int32_t with -DINT32, "
                       "RED/support/common.h:15-39)", choices=tuple(RED_TYPES)),),
}


def _registry() -> dict[str, KernelInfo]:
    table = [
        ("BS", S.bs, "sorted-array length N (int64); N/8 queries unless queries="),
        ("GEMV", gemv, "matrix rows m (uint32; 64 columns unless cols=)"),
        ("HST-L", hst_l, "total pixels (uint32)"),
        ("HST-S", hst_s, "total pixels (uint32)"),
        ("MLP", mlp, "m: layers of m x m int32 (m x cols with cols=)"),
        ("RED", red, "total elements (int64 unless elem=int32)"),
        ("SCAN-RSS", S.scan_rss, "total int64 elements"),
        ("SCAN-SSA", S.scan_ssa, "total int64 elements"),
        ("SEL", S.sel, "total uint64 elements"),
        ("TRNS", S.trns, "M_: a (M_ rows) x (blocks cols) int64 matrix; 4 x 64 x 8 unless rows=, blocks=, cols="),
        ("TS", S.ts, "time-series length n (int32; query length 64 unless query_length=)"),
        ("UNI", S.uni, "total int64 elements"),
        ("VA", va, "total int32 elements"),
    ]
    return {name: KernelInfo(name, fn, meaning, _SHAPES.get(name, ())) for name, fn, meaning in table}


MAX_SIZE = 2**32 - 1
MRAM_BYTES = 64 * 2**20
"""MRAM per DPU of the UPMEM DPUs the programs were written for (mram.h; the programs size their data for it)."""
WRAM_BYTES = 64 * 2**10
"""WRAM per DPU (the same generation); TRNS step 2 keeps two m x n int64 tiles per tasklet in it
(PrIM TRNS/dpu/task.c:62-63)."""


class DoesNotFit(SpecError):
    """A point whose data does not fit a DPU's memory (a grid marks it infeasible and prices the rest)."""


KERNELS: dict[str, KernelInfo] = _registry()


def kernels() -> dict[str, KernelInfo]:
    """The 13 kernels by name."""
    return KERNELS


def check_shape(name: str, shape: dict[str, int | str | None]) -> dict[str, int | str]:
    """The shape parameters ``shape`` for kernel ``name``, checked (one-line error for an unknown key or a bad
    value); None values mean the default."""
    info = kernels()[name]
    allowed = {p.key: p for p in info.shape}
    out: dict[str, int | str] = {}
    for key, value in shape.items():
        if value is None:
            continue
        if key not in allowed:
            takes = ", ".join(allowed) or "no shape parameters"
            raise SpecError(f"{name} does not take {key} (it takes {takes})")
        p = allowed[key]
        if p.choices:
            check_choice(f"{name} {key}", value, p.choices, SpecError)
        elif isinstance(value, bool) or not isinstance(value, int) or not p.low <= value <= MAX_SIZE:
            raise SpecError(f"{name} {key} must be an integer in [{p.low}, {MAX_SIZE}], got {value!r}")
        out[key] = value
    if name == "TS" and int(out.get("query_length", 64)) % 64:
        raise SpecError(f"TS query_length must be a multiple of 64 (the DPU runs query_length / 64 dot products per "
                        f"64-element block, TS/dpu/task.c:120), got {out['query_length']}")
    if name == "TS" and int(out.get("query_length", 64)) > 32768:
        raise SpecError("TS query_length must be at most 32,768 (the host's query buffer, TS/host/app.c:31)")
    return out


def active_dpus(name: str, dpus: int, **shape: int | str | None) -> int:
    """DPUs the host program allocates: TRNS takes one column block per DPU, so at most N_ (``blocks``) DPUs
    (PrIM TRNS/host/app.c:114-130); every other kernel all of them."""
    if name == "TRNS":
        blocks = shape.get("blocks")
        return min(dpus, int(blocks) if blocks is not None else 64)
    return dpus


def describe(name: str, dpus: int, size: int, **shape: int | str | None) -> KernelRun:
    """The ``KernelRun`` of kernel ``name`` on ``dpus`` DPUs with ``data_prep_param`` = ``size`` and the kernel's
    shape parameters (``kernels()[name].shape``; omitted: the measured build's). ``DoesNotFit`` (a ``SpecError``)
    if the data does not fit a DPU's MRAM or WRAM."""
    table = kernels()
    check_known("PrIM kernel", name, table)
    if dpus < 1 or not 1 <= size <= MAX_SIZE:
        raise SpecError(f"{name}: DPUs must be >= 1 and the size in [1, {MAX_SIZE}] (the host programs' unsigned "
                        f"int), got dpus={dpus}, size={size}")
    checked = check_shape(name, shape)
    query = int(checked.get("query_length", 64))
    if name == "TS" and size < query:
        raise SpecError(f"TS query_length {query} is longer than the series ({size:,} "
                        f"elements): a series of n elements has n - m + 1 positions for a query of m (the host's "
                        f"reference, TS/host/app.c:149,299; PrIM would price its own zero padding); use a series at "
                        f"least as long as the query")
    if name == "TRNS":
        tile = 8 * int(checked.get("rows", 4)) * int(checked.get("cols", 8))
        if 2 * tile * TASKLETS > WRAM_BYTES:
            raise DoesNotFit(f"TRNS with tiles of {tile:,} B needs {2 * tile * TASKLETS / 1024:.0f} KiB of WRAM for "
                             f"two tiles per tasklet; a DPU has 64 KiB: use smaller rows x cols")
    run = table[name].describe(dpus, size, **checked)
    if run.mram_bytes > MRAM_BYTES:
        where = ", ".join(f"{k}={v}" for k, v in checked.items())
        raise DoesNotFit(f"{name} with size {size}{' (' + where + ')' if where else ''} on {dpus} DPUs needs "
                         f"{run.mram_bytes / 2**20:.0f} MiB of MRAM per DPU; a DPU has 64 MiB: use a smaller size "
                         f"(or more DPUs where the kernel splits its data)")
    return run
