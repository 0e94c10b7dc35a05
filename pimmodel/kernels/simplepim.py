"""SimplePIM's training workloads (linear regression, logistic regression, K-means), described in the kernel
vocabulary: one ``table_gen_red`` launch each, the kernel the SimplePIM paper's scaling figures time.

Source: the version behind ``validation/upmem-scale/simplepim-figures.csv``, ``CMU-SAFARI/SimplePIM @ a487b4f``,
cited ``S/<file>:<line>`` with ``S/gr`` = ``lib/processing/gen_red/GenRedProcessing.h``, ``S/grc`` =
``lib/processing/gen_red/GenRed.c``, ``S/grd`` = ``lib/processing/gen_red/gen_red_dpu.c``, ``S/tab`` =
``lib/Table.c``, ``S/tsh`` = ``lib/TableShared.c``, ``S/ph`` = ``lib/processing/ProcessingHelper.c``, ``S/phh`` =
``lib/processing/ProcessingHelperHost.c``, ``S/lin`` = ``benchmarks/linear_reg``, ``S/log`` = ``benchmarks/log_reg``,
``S/km`` = ``benchmarks/kmeans``. Structure, the same for the three workloads (only the map and combine functions
and the table differ):

- the host scatters the rows once (``small_table_scatter``, S/lin/host.c:169, equal rows per DPU,
  ``lib/communication/CommOps.c:62-75``), broadcasts the model (S/lin/host.c:171), builds the DPU binary with
  ``-O2 -DNR_TASKLETS=12`` (S/phh:28) and calls ``table_gen_red`` once (``iter = 1``, S/lin/Param.h:11,
  S/log/Param.h:11, S/km/Param.h:12);
- ``table_gen_red`` loads the binary, pushes the arguments and times **only** the synchronous ``dpu_launch``
  (S/grc:132-137: the kernel time the figures plot); the gather of the DPUs' tables and their reduction on the host
  (S/grc:139-156, ``gather_tables_to_host`` S/grc:17-77) and the next broadcast (S/lin/host.c:181) are outside it;
- on the DPU: tasklet 0 resets the heap (S/grd:20-23, barrier), reads the model from MRAM (``start_func``,
  S/lin/lin_reg_funcs/map_to_val_func.h:20-30, barrier); every tasklet zeroes its private table (``init_table``,
  S/tab:4-18, a byte loop of ``init_func``), then takes blocks of ``copy_block_elements`` rows round-robin
  (tasklet t: blocks t, t + 12, ..., S/gr:84-106), one ``mram_read`` per block, and per row calls the map function
  and the combine function into its table (S/gr:97-104); the last tasklet takes the rows after the last whole
  block (S/gr:127-140); ``combine_tables_lockfree`` (S/tab:66-120) merges the 12 tables in 12 barrier-separated
  rounds into one that tasklet 0 zeroed, and ``store_arr_aligned`` (S/tsh:44-72) writes it to MRAM in 256-B blocks
  handed out under a mutex.

Instruction counts follow the PrIM counting rule (``prim_counts``: unrolled loops address by immediate, 1 per
access; a call is an argument move and the call; the routine's body is its operation class). The constants that the
source does not fix are assumptions (tag A), chosen from the code and the instruction set, never from a measured
time. Rows per DPU are not printed in the figures: ``PAPER_ROWS_PER_DPU`` says what is assumed, and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .kmeans import harmonic
from .pricing import kernel_s as price_kernel
from .prim_counts import CALL, DMA_SETUP, LOOP, SETUP_PER_TASKLET
from .vocabulary import Chain, Dma, HostCall, KernelRun, Num, Section, Work

TASKLETS = 12
"""``-DNR_TASKLETS=12`` in the gen_red build command (S/phh:28)."""
FEATURES = 10
"""``dim = 10`` (S/lin/Param.h:9, S/log/Param.h:9, S/km/Param.h:10)."""
CLUSTERS = 10
"""``k = 10`` (S/km/Param.h:9)."""
ELEMENT_BYTES = 4
"""``typedef int T`` / ``int32_t`` (S/lin/Param.h:7, S/log/Param.h:7, S/km/Param.h:7)."""
STORE_BLOCK_BYTES = 256
"""``transfer_each_time = 256`` of ``store_arr_aligned`` (S/tsh:45)."""

WORKLOADS = ("Linear Regression", "Logistic Regression", "K-Means")
"""The SimplePIM training workloads of the figures (the CSV's ``workload`` values)."""

PAPER_ROWS_PER_DPU = {"Linear Regression": 10_000, "Logistic Regression": 1_000, "K-Means": 1_000}
"""A: rows per DPU of the paper's weak-scaling runs. The committed ``Param.h`` files are debug builds
(``dpu_number = 5``, with ``// 2432`` beside it); where a size has a second value in a comment beside it, that
comment is the paper's size: VA's ``dpu_number*10000; //dpu_number*1000000`` (``benchmarks/va/Param.h:8``) and
RED's ``1000*dpu_number; //1000000*dpu_number`` (``benchmarks/red/Param.h:9``) are the 1,000,000 rows per DPU the
data set's README gives for those fit rows, whose kernel bars the model prices within ~10 % at that size. By that
rule linear regression runs ``//10000*dpu_number`` (S/lin/Param.h:10) and logistic regression and K-means, with no
comment, the committed ``1000*dpu_number`` (S/log/Param.h:10, S/km/Param.h:11). Chosen from the code alone, never
from a test row."""
STRONG_TOTAL_DPUS = 608
"""A: strong scaling keeps the total rows of the 608-DPU weak-scaling run (608 x rows per DPU) and spreads them over
1,216 and 2,432 DPUs. The fit rows show the design: VA's, RED's and Histogram's strong- and weak-scaling bars at 608
DPUs are the same run (equal to the printed digit, ``simplepim-figures.csv``)."""

MAP_INLINED = True
"""A: ``map_to_val_func`` and ``combine_func`` are defined in headers of the DPU program's translation unit (S/gr:3-4)
and clang -O2 inlines them into the row loop; the ``dim = 10`` loops (compile-time constants) are unrolled. With the
map inlined, ``*dummy = 0`` makes the table key a constant 0 for the regressions, so ``key * inter_type_size``
(S/gr:101) folds away; K-means' key is data-dependent and stays a ``__mulsi3`` call."""

ZERO_MUL_BITS = 1.0
"""``__mulsi3`` steps of ``x * w`` with the weights all zero (S/lin/host.c:154-156, ``calloc``-like init; the run has
one iteration, so the DPUs never see non-zero weights): the smaller operand is 0 and the routine exits after one step
(as ``prim_data.MLP_MUL_BITS``)."""
KEY_MUL_BITS = 2.5
"""K-means' ``key * inter_type_size`` (S/gr:101, 44-B entries): the smaller operand is the cluster index 0-9, mean
max(1, bit length) over 0..9 = (1+1+2+2+3+3+3+3+4+4)/10 = 2.6; A: 2.5 (the index 0 exits after one step)."""
BLOCK_OVERHEAD = 2 + 1 + DMA_SETUP + 1
"""Per block of the row loop (S/gr:93-97): the loop's increment and compare-and-branch (2), the MRAM address
``elements + i`` (1), the ``mram_read`` of a run-time size (``DMA_SETUP``), the inner loop's end pointer (1)."""
PER_ROW_LOOP = LOOP
"""The row loop's ``j += elem_type_size`` and compare-and-branch (S/gr:97)."""
MUTEX = 3
"""A ``mutex_lock``/``mutex_unlock`` pair on the lock holder's path (as ``kernels.kmeans.MUTEX``)."""


@lru_cache(maxsize=4)
def kmeans_mul_bits(samples: int = 4_000, seed: int = 10) -> float:
    """``__mulsi3`` steps of K-means' ``tmp * tmp`` (S/km/kmeans_funcs/map_to_val_func.h:60-61) over the benchmark's
    own data generator (S/km/kmeans.py:45-52: feature j of point i is ``(i % 100) * U(10, 100) + j * U(0, 100)``,
    negated for odd i; the centroids are the first 10 points, S/km/host.c:127-133): the two operands are equal, so the
    steps are the significant bits of ``tmp`` as an unsigned 32-bit value (a negative difference has 32). Computed
    from the generator (a numpy draw with a fixed seed), never from a time."""
    rng = np.random.default_rng(seed)
    i = np.arange(samples)[:, None]
    j = np.arange(FEATURES)[None, :]
    value = (i % 100) * rng.uniform(10, 100, (samples, FEATURES)) + j * rng.uniform(0, 100, (samples, FEATURES))
    points = np.where(i % 2 == 0, value.astype(np.int64), (-value).astype(np.int64))
    tmp = (points[:, None, :] - points[None, :CLUSTERS, :]).astype(np.int64) & 0xFFFFFFFF
    bits = np.where(tmp == 0, 1, np.floor(np.log2(np.maximum(tmp, 1))) + 1)
    return float(bits.mean())


@dataclass(frozen=True)
class GenRed:
    """One SimplePIM ``table_gen_red`` workload: its row and table-entry sizes, table entries, and per-row and
    per-entry-merge instruction counts by operation class."""

    name: str
    input_bytes: int
    output_bytes: int
    table_entries: int
    per_row: Mapping[str, float]
    per_merge: Mapping[str, float]
    """One ``combine_func`` call of the final merge (S/tab:103, through a pointer: a call with its arguments)."""


def linear_regression() -> GenRed:
    """Linear regression (S/lin/lin_reg_funcs/map_to_val_func.h:34-58, init_combine_func.h:17-23): rows of 10 int32
    features and the label (44 B, S/lin/host.c:146), a table of one entry of 10 int64 gradients (80 B,
    S/lin/host.c:177). Per row:

    - dot product (:41-44): per feature load x, load w (2), ``x * w`` as ``__mulsi3`` (``CALL`` + mul32, w = 0:
      ``ZERO_MUL_BITS``), sign-extend to 64 bits (1), the int64 ``+=``;
    - error (:46): load y, ``y << shift`` (int32_shift), sign-extend (1), the int64 subtraction;
    - gradient (:48-52): per feature load x (1), sign-extend (1), the int32 x int64 product as ``__muldi3``
      (``CALL`` + mul64), ``>> 8`` (int64_shift), store the int64 (1); ``*dummy = 0`` (1);
    - combine (init_combine_func.h:20-22): per feature load both int64 (2), add (int64_add), store (1)."""
    f = FEATURES
    per_row = {"bookkeeping": f * (2 + CALL + 1) + 2 + f * (1 + 1 + CALL + 1) + 1 + f * 3 + PER_ROW_LOOP,
               "mul32": f, "mul32_bits": f * ZERO_MUL_BITS, "int64_add": f + 1 + f, "int32_shift": 1,
               "mul64": f, "int64_shift": f}
    per_merge = {"bookkeeping": CALL + 2 + f * 3, "int64_add": f}
    return GenRed("Linear Regression", (f + 1) * ELEMENT_BYTES, f * 8, 1, per_row, per_merge)


def logistic_regression() -> GenRed:
    """Logistic regression (S/log/log_reg_funcs/map_to_val_func.h:32-73, init_combine_func.h:17-23): the same rows,
    read as ``float`` (``(float*)input``, :54: software floating point on the DPU), a table of one entry of 10
    4-B values (40 B, S/log/host.c:161). Per row:

    - dot product (:58-61): per feature load x, load w (2), a ``float`` multiply and add (each ``CALL`` + its class);
    - ``sigmoid_dpu(dot)`` (:32-48) takes a ``T`` (int): the float-to-int conversion (``CALL`` + float_convert), the
      three tests (compare-and-branch, 2 each); with the weights zero (S/log/host.c:149-152) dot = 0 and it returns at
      ``x == 0`` (the 100-term series never runs), the int result converted back (``CALL`` + float_convert), load y
      (1), the float subtraction (``CALL`` + float_add);
    - gradient (:65-68): per feature load x (1), a float multiply (``CALL`` + float_mul), store (1);
    - combine (init_combine_func.h:20-22, ``T`` = int): per feature load both (2), add (int32_add), store (1).

    A: every soft-float call costs the spec's ``float_*`` instructions (PrIM's FLOAT ADD/MUL microbenchmarks); the
    operands here are zeros and denormals (int32 bit patterns read as float), which the routines may take faster."""
    f = FEATURES
    per_row = {"bookkeeping": f * (2 + 2 * CALL) + (CALL + 6) + (CALL + 1 + CALL) + f * (1 + CALL + 1) + f * 3
               + PER_ROW_LOOP,
               "float_mul": 2 * f, "float_add": f + 1, "float_convert": 2, "int32_add": f}
    per_merge = {"bookkeeping": CALL + 2 + f * 3, "int32_add": f}
    return GenRed("Logistic Regression", (f + 1) * ELEMENT_BYTES, f * ELEMENT_BYTES, 1, per_row, per_merge)


def kmeans() -> GenRed:
    """K-means (S/km/kmeans_funcs/map_to_val_func.h:34-71, init_combine_func.h:17-30): rows of 10 int32 features
    (40 B, S/km/host.c:121), a table of ``k`` = 10 entries of a count and 10 int32 sums (44 B, S/km/host.c:142). Per
    row:

    - ``*times = 1`` and the copy of the point into the entry (:37-45): 1 + 10 x (load, store);
    - per centroid (:53-66; the feature loop unrolled, the centroid loop rolled): ``curr_dist = 0`` (2), per feature
      load both (2), subtract (int32_add), ``tmp * tmp`` (``CALL`` + mul32 + ``kmeans_mul_bits``), sign-extend (1),
      the int64 ``+=``; the 64-bit compare (3), the loop (``LOOP``); the minimum's update (2 moves) ``harmonic(k)``
      times on average (A, as ``kernels.kmeans``);
    - ``*centroid = best`` (1), the entry offset ``key * 44`` (S/gr:101: ``CALL`` + mul32 + ``KEY_MUL_BITS``) and its
      address (1);
    - combine (init_combine_func.h:17-29): the count and 10 sums, each load both (2), add, store (1)."""
    f, k = FEATURES, CLUSTERS
    bits = kmeans_mul_bits()
    per_row = {"bookkeeping": 1 + 2 * f + k * (2 + f * (2 + CALL + 1) + 3 + LOOP) + 2 * harmonic(k) + 1 + CALL + 1
               + (f + 1) * 3 + PER_ROW_LOOP,
               "int32_add": k * f + f + 1, "mul32": k * f + 1, "mul32_bits": k * f * bits + KEY_MUL_BITS,
               "int64_add": k * f}
    per_merge = {"bookkeeping": CALL + 2 + (f + 1) * 3, "int32_add": f + 1}
    return GenRed("K-Means", f * ELEMENT_BYTES, (f + 1) * ELEMENT_BYTES, k, per_row, per_merge)


def workload(name: str) -> GenRed:
    """The description of one of ``WORKLOADS``."""
    build = {"Linear Regression": linear_regression, "Logistic Regression": logistic_regression,
             "K-Means": kmeans}
    try:
        return build[name]()
    except KeyError:
        raise ValueError(f"unknown SimplePIM workload {name!r}; known: {', '.join(WORKLOADS)}") from None


def copy_block_elements(input_bytes: int, output_bytes: int, rows: int) -> int:
    """Rows per ``mram_read`` block: ``copy_block_size_fun`` (S/ph:2-35) with NR_TASKLETS = 12."""
    largest = max(input_bytes, output_bytes)
    if input_bytes % 8 == 0 and output_bytes % 8 == 0 and (rows <= TASKLETS or largest > 512):
        return 1
    if input_bytes % 4 == 0 and output_bytes % 4 == 0 and (rows <= 2 * TASKLETS or largest > 256):
        return 2
    if input_bytes % 2 == 0 and output_bytes % 2 == 0 and largest > 128:
        return 4
    if largest < 16:
        return 256
    if largest < 32:
        return 128
    return 16


def tasklet_rows(rows: int, block: int) -> list[int]:
    """Rows each of the 12 tasklets maps (S/gr:84-140): whole blocks round-robin (tasklet t: blocks t, t + 12, ...),
    the rows after the last whole block to the last tasklet."""
    whole = rows // block
    out = [block * (whole // TASKLETS + (1 if t < whole % TASKLETS else 0)) for t in range(TASKLETS)]
    out[-1] += rows - whole * block
    return out


def _ragged(per_row: Mapping[str, float], counts: list[int]) -> tuple[dict[str, float], dict[tuple[str, int], float]]:
    """(ops, tail_ops) of the row loop when tasklet t maps ``counts[t]`` rows: the rows every tasklet maps run at
    the full rate; above them, while k tasklets still have rows, the rest issue at the rate of k."""
    ordered = sorted(counts, reverse=True)
    total = sum(counts)
    ops = {op: v * total for op, v in per_row.items()}
    tail: dict[tuple[str, int], float] = {}
    for k in range(1, len(ordered)):
        extra = ordered[k - 1] - ordered[k]  # rows run by exactly k tasklets
        if extra > 0:
            for op, v in per_row.items():
                tail[(op, k)] = tail.get((op, k), 0.0) + v * extra * k
    return ops, tail


def sections(w: GenRed, rows: int) -> tuple[Section, ...]:
    """The DPU work of one ``table_gen_red`` launch on the DPU with ``rows`` rows (see the module docstring)."""
    block = copy_block_elements(w.input_bytes, w.output_bytes, rows)
    counts = tasklet_rows(rows, block)
    table_bytes = w.table_entries * w.output_bytes
    model_bytes = table_bytes + 8 - table_bytes % 8  # start_func's aligned_weights_size (map_to_val_func.h:21-22)
    start = Section("start", False, 1, Work({"bookkeeping": 10 + 6 + DMA_SETUP},
                                            dmas=(Dma("read", model_bytes, 1, 1),), barriers=2))
    # every tasklet: its set-up, three fsb_alloc calls, init_table's byte loop over its table (S/gr:48-79, S/tab:4-18)
    init = Section("init", True, 1, Work({"bookkeeping": TASKLETS * (SETUP_PER_TASKLET + 3 * 12 + 3 * table_bytes)}))
    ops, tail = _ragged(w.per_row, counts)
    blocks = [-(-c // block) for c in counts]
    ops["bookkeeping"] = ops.get("bookkeeping", 0.0) + BLOCK_OVERHEAD * sum(blocks)
    read = Dma("read", block * w.input_bytes, TASKLETS, sum(blocks))
    rows_section = Section("rows", True, 1, Work(ops, tail_ops=tail, dmas=(read,)))
    # combine_tables_lockfree (S/tab:66-120): barrier, tasklet 0 zeroes the helper table, barrier
    helper = Section("merge-init", False, 1, Work({"bookkeeping": 10 + 3 * table_bytes}))
    # 12 rounds: in each, the tasklets whose entry range is non-empty combine it, then a barrier (S/tab:99-106)
    active = min(w.table_entries, TASKLETS)
    per_round = {op: v * w.table_entries for op, v in w.per_merge.items()}
    per_round["bookkeeping"] = per_round.get("bookkeeping", 0.0) + TASKLETS * 8  # curr_id, lengths, offsets
    merge = Section("merge", True, TASKLETS, Work(per_round, barriers=1), tasklets=active)
    # store_arr_aligned (S/tsh:44-72): a barrier, 256-B blocks handed out under a mutex, a barrier
    store_blocks = -(-table_bytes // STORE_BLOCK_BYTES)
    dispatch = Chain("mutex", store_blocks + TASKLETS, {"bookkeeping": MUTEX + 3}, lock="store")
    store = Section("store", True, 1, Work({"bookkeeping": TASKLETS * 12 + store_blocks * DMA_SETUP},
                                           dmas=(Dma("write", min(table_bytes, STORE_BLOCK_BYTES), 1, store_blocks),),
                                           barriers=3, chains=(dispatch,)))
    return (start, init, rows_section, helper, merge, store)


def run(w: GenRed, rows: int) -> KernelRun:
    """The timed launch (S/grc:132-137) on the busiest DPU, ``rows`` rows per DPU, with the host calls around it
    (arguments before, the table gathered after: not in the kernel timer)."""
    table_bytes = w.table_entries * w.output_bytes
    host = (HostCall("GEN_RED_INPUT_ARGUMENTS", 28, True, memory="wram"),
            HostCall("table", table_bytes + table_bytes % 8, False))
    return KernelRun(f"SimplePIM {w.name}", 1, sections(w, rows), host, tasklets=TASKLETS,
                     mram_bytes=rows * w.input_bytes + table_bytes)


def rows_per_dpu(workload_name: str, scaling: str, dpus: int) -> int:
    """Rows on the busiest DPU of a figure's run (``PAPER_ROWS_PER_DPU``, ``STRONG_TOTAL_DPUS``; equal rows per DPU,
    the last DPU the remainder: ``lib/communication/CommOps.c:62-75``)."""
    per = PAPER_ROWS_PER_DPU[workload_name]
    if scaling == "weak":
        return per
    if scaling != "strong":
        raise ValueError(f"scaling must be strong or weak, got {scaling!r}")
    return -(-(per * STRONG_TOTAL_DPUS) // dpus)


def kernel_s(workload_name: str, scaling: str, dpus: int, hw: object) -> Num:
    """Predicted kernel time (s) of a figure's run: the launch on ``dpus`` DPUs and the busiest DPU's work."""
    return price_kernel(run(workload(workload_name), rows_per_dpu(workload_name, scaling, dpus)), dpus, hw)
