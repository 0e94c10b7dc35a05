"""The PrIM kernels with synchronization inside their loops, or latency-bound ones: the lock-step rounds of
SCAN-RSS, SCAN-SSA, SEL and UNI (a DMA, compute, a 15-hop handshake chain and a barrier per 2,048 elements),
BS (a binary search of 256-B DMAs per query), TS (``__mulsi3`` dot products) and TRNS (64/n rounds of two
launches; step 3 follows the permutation's cycles under a mutex held across small DMAs).

Same sources as ``pimmodel.kernels.prim``; counting conventions in ``pimmodel.kernels.prim_counts``.
"""

from __future__ import annotations

from . import prim_data as D
from .prim_counts import ACCESS, BLOCK_CONST, CALL, DMA_CONST, DMA_SETUP, HOP, LOOP, UDIV, B
from .prim_counts import args as _args
from .prim_counts import ops as _ops
from .prim_counts import serial as _serial
from .prim_counts import setup as _setup
from .prim_counts import stream as _stream
from .prim_data import TASKLETS, ceil_div
from .vocabulary import Chain, Dma, HostCall, KernelRun, Section, Work

REGS = 128
"""int64 elements per 1-KB block (``REGS = BLOCK_SIZE >> 3``, U/SCAN-RSS/support/common.h:41)."""
ROUND = TASKLETS * REGS
"""Elements per DPU per lock-step round: every tasklet one block."""


def _round(per_elem: dict[str, float], per_block: float, write_bytes: float, hop: float, rounds: int,
           write_after_chain: bool) -> Section:
    """``rounds`` lock-step rounds: every tasklet reads a block (after writing the previous round's, unless it
    writes right after its hop), computes, joins the 15-hop handshake chain and takes one barrier.
    ``per_block``: bookkeeping per block outside the per-element work."""
    ops = {k: v * ROUND for k, v in per_elem.items()}
    ops[B] = ops.get(B, 0) + per_block * TASKLETS
    read = Dma("read", 1024, TASKLETS, TASKLETS)
    write = Dma("write", write_bytes, TASKLETS, TASKLETS, after=write_after_chain)
    chain = Chain("handshake", TASKLETS - 1, _ops(b=hop))
    return Section("round", True, rounds, Work(ops, dmas=(write, read), barriers=1, chains=(chain,)),
                   lockstep=True)


def _scan_round(rounds: int) -> tuple[Section, Section]:
    """After the barrier every tasklet runs ``add_`` (unrolled: load, 64-bit add, store), all at full rate, then
    writes its block; then the next round: read, ``scan`` (load, 64-bit add, store), handshake, barrier
    (U/SCAN-RSS/dpu:33-40,63-68,164-189; the same loop is SCAN-SSA's kernel 1, U/SCAN-SSA/dpu:100-128)."""
    add = Section("add", True, rounds, Work(_ops(b=TASKLETS * (2 * REGS + 6), add64=ROUND)))
    per_block = BLOCK_CONST + DMA_CONST + 6 + 8 / TASKLETS  # + the sync call, tasklet 15's running total
    return add, _round(_ops(b=2, add64=1), per_block, 1024, HOP, rounds, write_after_chain=False)


def _scan_host(e: int) -> tuple[HostCall, ...]:
    return (_args(16), HostCall("A", 8 * e, True), HostCall("B", 8 * e, False))


def scan_rss(dpus: int, size: int) -> KernelRun:
    """SCAN-RSS: kernel 1 reduces (unrolled, U/SCAN-RSS/dpu:24-31,81-131), kernel 2 scans in lock-step rounds;
    host U/SCAN-RSS/host:118-122 (to), :238 (from); the inter-DPU step is timed apart."""
    e = D.per_dpu_rounds(size, dpus)
    reduce = _stream("reduce", e, 8, _ops(b=1, add64=1), reads=1, writes=0, extra_per_block=-3)
    final = _serial("final", _ops(b=15 * (ACCESS + LOOP) + 2, add64=15), barriers=1)
    sections = (_setup(1), reduce, final, _setup(2, barriers=2), *_scan_round(e // ROUND))
    return KernelRun("SCAN-RSS", 2, sections, _scan_host(e), mram_bytes=16 * e)


def scan_ssa(dpus: int, size: int) -> KernelRun:
    """SCAN-SSA: kernel 1 scans in lock-step rounds, kernel 2 adds the DPU's prefix to every element
    (U/SCAN-SSA/dpu:136-172: read, ``add_``, write, no synchronization); host as SCAN-RSS."""
    e = D.per_dpu_rounds(size, dpus)
    add = _stream("add", e, 8, _ops(b=2, add64=1), reads=1, writes=1, extra_per_block=DMA_SETUP + 4)
    sections = (_setup(2, barriers=2), *_scan_round(e // ROUND), _setup(2), add)
    return KernelRun("SCAN-SSA", 2, sections, _scan_host(e), mram_bytes=16 * e)


def _filter_host(e: int, size: int, dpus: int, results: int) -> tuple[HostCall, ...]:
    """SEL / UNI: the kept elements come back with one serial ``dpu_copy_from`` per DPU (U/SEL/host:202,
    U/UNI/host:218), about half of the input: 8 x size / 2 bytes in all."""
    kept = 8 * (size / 2) / dpus
    return (_args(8), HostCall("A", 8 * e, True), HostCall("results", results, False, memory="wram"),
            HostCall("kept", kept, False, mode="serial"))


def sel(dpus: int, size: int) -> KernelRun:
    """SEL (uint64, drop even values = half, alternating): per element load, bit test and branch, and for a kept
    one address, store, pos++ (U/SEL/dpu:24-34, unrolled); per round handshake, barrier, write of the kept
    (U/SEL/dpu:97-120)."""
    e = D.per_dpu_rounds(size, dpus)
    keep = 0.5 * min(e, ceil_div(size, dpus)) / e
    per_elem = _ops(b=2 + 2 * keep, add=keep)
    round_ = _round(per_elem, BLOCK_CONST + DMA_SETUP + 6 + 4 + 8 / TASKLETS, 8 * REGS * keep, HOP - 2,
                    e // ROUND, write_after_chain=False)
    return KernelRun("SEL", 1, (_setup(2, barriers=2), round_), _filter_host(e, size, dpus, 4 * TASKLETS),
                     mram_bytes=16 * e)


def uni(dpus: int, size: int) -> KernelRun:
    """UNI (int64, 0 2 2 4 4 ...: half unique): per element load, 64-bit compare with the previous one, and for a
    unique one address, store, pos++ (U/UNI/dpu:27-39); the chain passes three values (:42-70); per round
    write then barrier (U/UNI/dpu:113-144)."""
    e = D.per_dpu_rounds(size, dpus)
    keep = 0.5 * min(e, ceil_div(size, dpus)) / e + 1 / REGS
    per_elem = _ops(b=3 + 2 * keep, add=keep)
    round_ = _round(per_elem, BLOCK_CONST + DMA_SETUP + 6 + 6 + 12 / TASKLETS, 8 * REGS * keep, HOP + 10,
                    e // ROUND, write_after_chain=True)
    return KernelRun("UNI", 1, (_setup(2, barriers=2), round_), _filter_host(e, size, dpus, 24 * TASKLETS),
                     mram_bytes=16 * e)


# ---------------------------------------------------------------- latency- and compute-bound kernels
BS_ITERATION = 22
"""Per binary-search step (U/BS/dpu:95-151): the 256-B read (2), ``search`` call and return (4), its ``block[0] <=
x`` test (3: load, 64-bit compare), the ``found`` tests (4), bound update and halving (3), both boundary
checks (6)."""
BS_COMPARE = ACCESS + 2 + LOOP
"""Per element of ``search``'s linear scan (:23-28): address, load, 64-bit equality, loop."""


def bs(dpus: int, size: int, queries: int | None = None) -> KernelRun:
    """BS (int64, 256-B blocks): each tasklet runs its queries one after another, one 256-B DMA per search step
    (U/BS/dpu:65-151); the whole array, one buffer prepared for every DPU, goes to every DPU (U/BS/host:128-134).
    ``size``: the sorted array's length (uPIMulator's data_prep_param; PrIM's compile-time INPUT_SIZE = 2,048,576,
    BS/support/common.h:25); ``queries``: the query count (None: size / 8 as uPIMulator prepares it; PrIM's ``-i``,
    BS/support/params.h:22,39), rounded up to a multiple of DPUs x 16 (BS/host/app.c:93-94)."""
    q = D.bs_queries_per_dpu(size, dpus, queries=queries)
    path = D.bs_search(size, q * dpus)
    edge_reads = path.block_reads - 2 - path.iterations
    per_query = (3 * DMA_CONST + 8 + BS_ITERATION * path.iterations + edge_reads * (DMA_CONST + 4 + 3 + 2)
                 + BS_COMPARE * path.compares)
    dmas = (Dma("read", 8, TASKLETS, q), Dma("read", 256, TASKLETS, q * path.block_reads))
    search = Section("search", True, 1, Work(_ops(b=q * per_query), dmas=dmas))
    host = (_args(24), HostCall("array", 8 * size, True, mode="identical"), HostCall("queries", 8 * q, True),
            HostCall("results", 8 * TASKLETS, False, memory="wram"))
    return KernelRun("BS", 1, (_setup(3), search), host, mram_bytes=8 * size + 8 * q)


TS_MAC = _ops(b=1 + 1 + 1 + 1 + CALL + 1 + 2 + LOOP + 0.5, add=2, mul=1, bits=D.ts_mul_bits())
"""``dot_product`` (U/TS/dpu:21-37) per multiply-accumulate: ``j + i > 63`` test and branch, address, load A or
A_aux, load B[i] (not hoisted: result may alias it), call ``__mulsi3``, load/add/store result[j] (address
once), loop, the join jump of the if/else (half the time)."""
TS_DISTANCE = _ops(b=3 * ACCESS + 3 * CALL + UDIV + 10 + 8 + 2 + LOOP + 1, add=2, shift=1, mul=3, bits=18)
"""Per element of the distance loop (U/TS/dpu:137-147): three loads, three ``__mulsi3`` (operands below 128:
~6 steps each), a signed ``__div32`` (~10 steps + ~8 sign fix-ups), compare, loop, the rare minimum update."""


def _ts_mac(query_length: int) -> dict[str, float]:
    return {**TS_MAC, "mul32_bits": D.ts_mul_bits(query_length)}


def ts(dpus: int, size: int, query_length: int = 64) -> KernelRun:
    """TS (int32, 256-B blocks of 64 elements): per 64-element block zero 64 partial products, then
    query_length / 64 times 3 DMAs of 256 B and 4,096 MACs, then 2 DMAs and 64 distances (U/TS/dpu:112-148; PrIM
    TS/dpu/task.c:112-148, the query loop :120-129); serial ``dpu_copy_to`` of the arguments (U/TS/host:191-196).
    ``size``: the series length n (PrIM ``-n``, TS/support/params.h:24,46), ``query_length``: m (PrIM ``-m``,
    default 256, TS/support/params.h:25,32; the measured uPIMulator build: 64)."""
    e = D.ts_slice(size, dpus, query_length)
    busiest, blocks = D.ts_blocks(e, query_length)
    dots = query_length // D.TS_STEP
    active = TASKLETS - 1 + (1 if blocks > busiest * (TASKLETS - 1) else 0)
    ops = {k: v * 4096 * dots * blocks for k, v in _ts_mac(query_length).items()}
    for k, v in TS_DISTANCE.items():
        ops[k] = ops.get(k, 0) + v * 64 * blocks
    # per block: zero 64 partial products, the DMAs, the query loop's control and address updates, the distances'
    # loop control
    ops[B] += blocks * (64 * (ACCESS + LOOP) + (3 * dots + 2) * DMA_CONST + 7 + (dots - 1) * (LOOP + 2)
                        + 64 * (LOOP + 2))
    work = Work(ops, dmas=(Dma("read", 256, active, (3 * dots + 2) * blocks),))
    host = (HostCall("arguments", 28, True, mode="serial", memory="wram"), HostCall("query", 4 * query_length, True),
            HostCall("series", 4 * (e + query_length), True, calls=3),
            HostCall("results", 16 * TASKLETS, False, memory="wram"))
    return KernelRun("TS", 1, (_setup(6), Section("blocks", True, 1, work, tasklets=active)), host,
                     mram_bytes=4 * query_length + 12 * (e + query_length))


def _trns_step2_element(m: int, n: int) -> dict[str, float]:
    """Step 2 per element (U/TRNS/dpu:67-69; PrIM TRNS/dpu/task.c:67-69): ``i * m`` and ``(m n - 1) * (i / n)``
    (two ``__mulsi3``), ``i / n`` (``__udiv32``), subtract, load data[i], store backup[...], loop; the
    data-dependent steps from ``prim_data.trns_step2_bits`` (m = 4, n = 8: 2.81 + 1.5 steps, 7.75 instructions)."""
    bits, udiv = D.trns_step2_bits(m, n)
    return _ops(b=3 * CALL + 2 * ACCESS + LOOP + udiv, add=1, mul=2, bits=bits)


TRNS_STEP2_ELEMENT = _trns_step2_element(4, 8)
TRNS_NEXT = _ops(b=3 * CALL + UDIV + 8 + 3, add=2, mul=2, bits=14)
"""``next_in_cycle = tile * M_ - tile_max * (tile / n)`` (U/TRNS/dpu:106,114): two ``__mulsi3`` (~7 steps each),
one ``__udiv32`` (~8 steps), subtract, compare."""
TRNS_DMA_MAX = 2048
"""Step 2 moves a tile in DMAs of at most 2,048 B (PrIM TRNS/dpu/task.c:141-160)."""


def _trns_step3(m_blocks: int, m: int = 4, n: int = 8) -> Section:
    """Step 3 (U/TRNS/dpu:77-130): tiles handed out under ``tile_mutex``; each non-fixed tile is read and its done
    bit read under ``done_mutex``; each cycle is followed once (read, read-and-set the done bit under
    ``done_mutex`` with an 8-B read and an 8-B write inside the lock, write, copy m int64)."""
    c = D.trns_cycles(m_blocks, n)
    taken, follow = c.tiles - c.fixed, c.moved + c.cycles
    ops = {k: v * (taken + follow) for k, v in TRNS_NEXT.items()}
    ops[B] += taken * (3 + DMA_SETUP + 3) + follow * (3 + DMA_SETUP + 3 + m * (2 * ACCESS + LOOP)) \
        + c.moved * (3 + DMA_SETUP) + (c.tiles + TASKLETS) * 3
    dmas = (Dma("read", 8 * m, TASKLETS, taken + follow), Dma("write", 8 * m, TASKLETS, c.moved))
    tiles = Chain("mutex", c.tiles + TASKLETS, _ops(b=4, add=1), lock="tile_mutex")
    # get_done: acquire, ldma (8 B, address computed before the lock), load, bit test (4), release;
    # get_and_set_done: the same plus set the bit (or, store) and sdma (8 B) (U/TRNS/dpu:177-199)
    done = Chain("mutex", 1, _ops(b=8 * taken + 11 * follow),
                 (Dma("read", 8, 1, taken + follow), Dma("write", 8, 1, follow)), lock="done_mutex")
    return Section("step3", True, 1, Work(ops, dmas=dmas, chains=(tiles, done)))


def trns(dpus: int, size: int, rows: int = 4, blocks: int = 64, cols: int = 8) -> KernelRun:
    """TRNS (int64): an (M_ m) x (N_ n) matrix with M_ = ``size``, m = ``rows``, N_ = ``blocks``, n = ``cols``
    (PrIM ``-o -m -p -n``, TRNS/support/params.h:27-30,36-39; the measured uPIMulator build: m = 4, N_ = 64,
    n = 8). One column block per DPU per round, so ceil(N_ / DPUs) rounds of two launches (U/TRNS/host:114-235;
    PrIM TRNS/host/app.c:114-235); step 1 is M_ m pushes of 8 n B per DPU per round (:138-145); step 2 moves
    M_ tiles of m x n (:65-71 of the DPU code), step 3 follows the cycles of M_ n - 1 tiles of m (:94-127)."""
    rounds = ceil_div(blocks, dpus)
    active = min(TASKLETS, size)
    tile_bytes = 8 * rows * cols
    chunks = ceil_div(tile_bytes, TRNS_DMA_MAX)
    step2 = {k: v * rows * cols * size for k, v in _trns_step2_element(rows, cols).items()}
    step2[B] += size * 2 * chunks * (12 + DMA_SETUP)
    tiles = Section("step2", True, rounds,
                    Work(step2, dmas=(Dma("read", tile_bytes / chunks, active, chunks * size),
                                      Dma("write", tile_bytes / chunks, active, chunks * size))),
                    tasklets=active)
    step3 = _trns_step3(size, rows, cols)
    sections = (Section("setup", True, 2 * rounds, _setup(3).work), tiles,
                Section(step3.name, True, rounds, step3.work))
    host = (HostCall("tiles", 8 * cols, True, calls=rounds * rows * size),
            HostCall("matrix", tile_bytes * size, False, calls=rounds))
    return KernelRun("TRNS", 2 * rounds, sections, host, mram_bytes=tile_bytes * size + size * cols)
