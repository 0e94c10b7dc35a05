"""What the PrIM kernels' inputs make them do: data-preparation sizing and the data-dependent counts.

The measured PrIM runs (``validation/upimulator-hw.csv``) were prepared by uPIMulator's data preparation
(VIA-Research/uPIMulator @ 870d916, ``python_cpp/uPIMulator_frontend/src/assembler/data_prep/<k>_data_prep.py``,
below ``DP/<k>``) and run by the PrIM host programs (``.../benchmark/<K>/host/app.c``, below ``U/<K>``). Every
function here re-does what that code does with the kernel's ``data_prep_param``: per-DPU sizes with their
rounding, and the quantities that depend on the values (bit lengths driving ``__mulsi3``, the binary search's
path, the transposition's cycles). Nothing here is fitted or read off a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

TASKLETS = 16
"""NR_TASKLETS of every measured build (uPIMulator benchmark CMakeLists / Makefiles: -DNR_TASKLETS=16)."""


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def per_dpu_8bytes(total: int, dpus: int, elem_bytes: int) -> int:
    """Elements per DPU, ``input_size_dpu_8bytes``: ceil(total / dpus), rounded up to a multiple of 8 elements
    when its byte size is not 8-aligned (DP/va:35-40, DP/red, DP/hst:33-38; U/VA/host/app.c:72-77)."""
    e = ceil_div(total, dpus)
    return (e // 8) * 8 + 8 if (e * elem_bytes) % 8 else e


def per_dpu_rounds(total: int, dpus: int, tasklets: int = TASKLETS, regs: int = 128) -> int:
    """Elements per DPU of the lock-step kernels (SCAN-RSS, SCAN-SSA, SEL, UNI): ceil(total / dpus) rounded up
    to a multiple of tasklets x REGS = 2,048 (DP/scan_rss:32-37, DP/sel, DP/uni; U/SEL/host/app.c:82-85)."""
    return ceil_div(ceil_div(total, dpus), tasklets * regs) * tasklets * regs


def bit_length(values: np.ndarray) -> np.ndarray:
    """Steps of ``__mulsi3`` for a smaller operand ``v``: max(1, bit length of v) (SDK mul32.c: one mul_step per
    bit, early exit once the remaining multiplier is 0; C: pim-ml LogReg_int8/disassem ``__mulsi3``)."""
    v = np.asarray(values, dtype=np.int64)
    out = np.ones(v.shape, dtype=np.float64)
    nz = v > 0
    out[nz] = np.floor(np.log2(v[nz])) + 1
    return out


@lru_cache(maxsize=1)
def gemv_mul_bits() -> float:
    """GEMV: mean ``__mulsi3`` steps over A and x uniform in [0, 50) (``rand() % 50``, U/GEMV/host/app.c:36-48):
    the smaller of two independent values drives the steps (4.07)."""
    a = np.arange(50)
    return float(bit_length(np.minimum.outer(a, a)).mean())


HST_MUL_BITS = 8.64
"""HST-S/HST-L: mean ``__mulsi3`` steps of ``d * bins`` with bins = 256 over the measured input, the 12-bit
big-endian image ``input/image_VanHateren.iml`` (U/HST-S/host/app.c:36-56, values clamped to 4,095; blob
1ae6047 in the uPIMulator repository): the smaller operand is min(d, 256), 71 % of the pixels are >= 256;
mean of max(1, bit_length(min(d, 256))) over the 1,572,864 pixels = 8.64 (computed once from that file)."""

MLP_MUL_BITS = 1.0
"""MLP: 98 % of the weights and 48 of 50 inputs are 0 and the rest 0/1 (DP/mlp:37-45, U/MLP/host/app.c:38-56), so
the smaller operand is 0 or 1 and ``__mulsi3`` exits after one step."""


TS_STEP = 64
"""Elements per TS block: ``BLOCK_SIZE / sizeof(DTYPE)`` = 256 B / 4 (BL unset: TS/support/common.h:9-10,
TS/dpu/task.c:15,112 in PrIM; the same in uPIMulator's build)."""


@lru_cache(maxsize=8)
def ts_mul_bits(query_length: int = 64) -> float:
    """TS dot products: mean steps of ``A[j+i] * q[i]`` with tSeries[x] = x % 127 and query[x] = x % 127
    (DP/ts:26-27, U/TS/host/app.c:38-52; PrIM TS/host/app.c:38-48), over the query's elements i, the block's
    64 offsets j and the block's phase in the period of 127."""
    r = np.arange(127)[:, None, None]
    i = np.arange(query_length)[None, :, None]
    j = np.arange(TS_STEP)[None, None, :]
    return float(bit_length(np.minimum((r + i + j) % 127, i % 127)).mean())


def ts_slice(ts_size: int, dpus: int, query_length: int = 64, tasklets: int = TASKLETS) -> int:
    """TS elements per DPU: ts_size rounded up to a multiple of dpus x tasklets x query_length (DP/ts:22-26,
    U/TS/host/app.c:144-145; PrIM TS/host/app.c:144-145,173), split over the DPUs."""
    unit = dpus * tasklets * query_length
    return ceil_div(ts_size, unit) * unit // dpus


def ts_blocks(slice_per_dpu: int, query_length: int = 64, tasklets: int = TASKLETS) -> tuple[int, int]:
    """(64-element blocks of the busiest tasklet, blocks of the whole DPU): tasklet t covers [t per, (t+1) per - 1]
    with per = slice / T, the last one stops at slice - query_length, in steps of 64 elements
    (U/TS/dpu/task.c:69-73,112; PrIM TS/dpu/task.c:69-73,112)."""
    per = slice_per_dpu // tasklets
    busiest = ceil_div(per - 1, TS_STEP)
    last_end = min(15 * per + per - 1, slice_per_dpu - query_length)
    last = max(0, ceil_div(last_end - 15 * per, TS_STEP))
    return busiest, busiest * (tasklets - 1) + last


@dataclass(frozen=True)
class SearchPath:
    """BS per query, averaged over a DPU's queries: loop iterations, 256-B DMAs and int64 compares."""

    iterations: float
    block_reads: float
    compares: float


BS_SAMPLE = 1 << 16
"""At most this many queries are re-executed (evenly spaced over all of them) to average the search path."""


@lru_cache(maxsize=64)
def bs_search(n: int, queries: int, block_bytes: int = 256) -> SearchPath:
    """Re-execute the binary search of U/BS/dpu/task.c:75-151 (byte-address bisection, 256-B blocks, the linear
    ``search`` of :19-33) for the queries 0 .. queries-1 over the array 1 .. n (DP/bs:31-32), vectorized (at most
    ``BS_SAMPLE`` of them, evenly spaced). The DMA engine ignores the low 3 address bits, so a block starts at
    element floor(address / 8)."""
    x = np.unique(np.linspace(0, queries - 1, min(queries, BS_SAMPLE)).astype(np.int64))
    queries = x.size
    base, elems = 0, block_bytes // 8
    start = np.full(queries, base, dtype=np.int64)
    end = np.full(queries, base + 8 * n, dtype=np.int64)
    cur = (start + end) // 2
    active = np.ones(queries, dtype=bool)
    iters = np.zeros(queries)
    reads = np.full(queries, 2.0)  # the first and last blocks (:92-93)
    compares = np.zeros(queries)

    def search(addr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _search_block(addr, x, elems)

    for _ in range(64):
        if not active.any():
            break
        found, cmp = search(cur)
        iters += active
        reads += active
        compares += np.where(active, cmp, 0)
        done = active & (found == 1)
        active &= ~done
        right = active & (found == -2)
        left = active & (found == -1)
        end = np.where(right, cur, end)
        start = np.where(left, cur, start)
        cur = np.where(right, (cur + start) // 2, np.where(left, (cur + end) // 2, cur))
        low = active & (cur < base + block_bytes)
        high = active & (cur > end - block_bytes)
        for edge, addr in ((low, cur), (high, end - block_bytes)):  # both checks may fire (:126-150)
            _, c2 = search(addr)
            reads += edge
            compares += np.where(edge, c2, 0)
        active &= ~(low | high)
    return SearchPath(float(iters.mean()), float(reads.mean()), float(compares.mean()))


def _search_block(addr: np.ndarray, x: np.ndarray, elems: int) -> tuple[np.ndarray, np.ndarray]:
    """``search`` (U/BS/dpu/task.c:19-33) on the block at byte ``addr`` of the array 1 .. n: (1 found, -1 go
    right, -2 go left; int64 compares made). block[j] = idx + j + 1 with idx = addr / 8."""
    idx = addr // 8
    le = idx + 1 <= x
    hit = le & (x - idx - 1 < elems)
    compares = np.where(le, np.where(hit, x - idx, elems), 0)
    return np.where(hit, 1, np.where(le, -1, -2)), compares


def bs_queries_per_dpu(n: int, dpus: int, tasklets: int = TASKLETS, queries: int | None = None) -> int:
    """Queries per DPU: ``queries`` (None: N / 8, uPIMulator's DP/bs:20-27,35) rounded up to a multiple of
    dpus x tasklets and split over the DPUs (U/BS/host; PrIM BS/host/app.c:93-94)."""
    q = n // 8 if queries is None else queries
    unit = dpus * tasklets
    return ceil_div(q, unit) * unit // dpus


@dataclass(frozen=True)
class TransposeCycles:
    """TRNS step 3 on one DPU: tiles taken, fixed points, and the tiles moved along the permutation's cycles."""

    tiles: int
    fixed: int
    cycles: int
    moved: int


@lru_cache(maxsize=64)
def trns_cycles(m_blocks: int, n: int = 8) -> TransposeCycles:
    """The in-place permutation of U/TRNS/dpu/task.c:94-125: tile t -> t * M_ - tile_max * (t / n) over
    t < tile_max = M_ * n - 1; its fixed points are skipped, every other cycle is followed once."""
    tile_max = m_blocks * n - 1
    seen = np.zeros(tile_max, dtype=bool)
    fixed = cycles = moved = 0
    for t in range(tile_max):
        if seen[t]:
            continue
        length, u = 0, t
        while not seen[u]:
            seen[u] = True
            length += 1
            u = u * m_blocks - tile_max * (u // n)
        if length == 1:
            fixed += 1
        else:
            cycles += 1
            moved += length
    return TransposeCycles(tile_max, fixed, cycles, moved)


def bit_length_int(value: int) -> int:
    return max(1, int(value).bit_length())


def trns_step2_bits(m: int, n: int) -> tuple[float, float]:
    """TRNS step 2 over the tile's elements i < m n (U/TRNS/dpu:67-69; PrIM TRNS/dpu/task.c:67-69): (mean
    ``__mulsi3`` steps of ``i * m`` plus ``(m n - 1) * (i / n)``, mean instructions of ``__udiv32`` for ``i / n``:
    5 below n, else 7 + one ``div_step`` per bit of the quotient). m = 4, n = 8: (4.31, 7.75)."""
    count = m * n
    bits = sum(bit_length_int(min(i, m)) + bit_length_int(min(count - 1, i // n)) for i in range(count))
    udiv = sum(5 if i < n else 7 + bit_length_int(i) - bit_length_int(n) + 1 for i in range(count))
    return bits / count, udiv / count


def log2(value: int) -> float:
    return math.log2(value)
