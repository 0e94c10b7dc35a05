"""SimplePIM's gen_red kernels (``pimmodel.kernels.simplepim``): event counts in closed form at small sizes."""

from __future__ import annotations

import pytest

from pimmodel.kernels import simplepim as SP
from pimmodel.kernels.pricing import compute_cycles, instructions
from pimmodel.specs import load_hardware

HW = load_hardware("upmem-2556")

LR_PER_ROW = {"bookkeeping": 135, "mul32": 10, "mul32_bits": 10, "int64_add": 21, "int32_shift": 1, "mul64": 10,
              "int64_shift": 10}
"""By hand from S/lin/lin_reg_funcs/map_to_val_func.h:41-56 and init_combine_func.h:20-22: dot 10 x (2 loads, call
2, sign-extend 1) = 50; error 2; gradient 10 x (load, sign-extend, call 2, store) = 50; *dummy 1; combine 10 x 3 =
30; row loop 2: 135 bookkeeping."""


def test_linear_regression_per_row_closed_form() -> None:
    w = SP.linear_regression()
    assert w.per_row == LR_PER_ROW
    # on upmem-2556: 135 + 10 x (6 + 1) __mulsi3 + 21 x 2 + 1 + 10 x 132 __muldi3 + 10 x 4 int64 shifts
    assert instructions(w.per_row, HW) == 135 + 70 + 42 + 1 + 1320 + 40 == 1608
    assert (w.input_bytes, w.output_bytes, w.table_entries) == (44, 80, 1)


def test_block_size_follows_copy_block_size_fun() -> None:
    assert SP.copy_block_elements(44, 80, 20) == 2  # rows <= 2 x 12 tasklets, 4-B aligned (S/ph:11-13)
    assert SP.copy_block_elements(44, 80, 10_000) == 16  # the else branch (S/ph:27-29)
    assert SP.copy_block_elements(8, 8, 5) == 1
    assert SP.copy_block_elements(40, 44, 1_000) == 16


def test_small_run_counts_by_hand() -> None:
    """20 rows, blocks of 2: tasklets 0-9 take one block each, 10 and 11 none; every row runs with 10 tasklets."""
    w = SP.linear_regression()
    assert SP.tasklet_rows(20, 2) == [2] * 10 + [0, 0]
    rows = {s.name: s for s in SP.sections(w, 20)}["rows"]
    assert rows.work.ops["mul64"] == 20 * 10
    assert rows.work.ops["bookkeeping"] == 20 * 135 + 10 * SP.BLOCK_OVERHEAD
    assert {k: v for k, v in rows.work.tail_ops.items()} == {(op, 10): 20 * v for op, v in LR_PER_ROW.items()}
    (read,) = rows.work.dmas
    assert (read.transfers, read.bytes, read.concurrent) == (10, 88, 12)
    # cycles: the block overhead at 12 tasklets' rate, the rows at 10 tasklets' (one per 11 cycles each)
    expected = 10 * SP.BLOCK_OVERHEAD + 20 * 1608 / 10 * 11
    assert compute_cycles(rows.work, True, 12, HW) == pytest.approx(expected)


def test_ragged_tail_at_the_paper_size() -> None:
    """10,000 rows in 625 blocks of 16: tasklet 0 takes 53 blocks, the others 52, so 16 rows run alone."""
    counts = SP.tasklet_rows(10_000, 16)
    assert counts == [53 * 16] + [52 * 16] * 11 and sum(counts) == 10_000
    rows = {s.name: s for s in SP.sections(SP.linear_regression(), 10_000)}["rows"]
    assert rows.work.tail_ops == {(op, 1): 16 * v for op, v in LR_PER_ROW.items()}
    # 2,500 rows (strong scaling, 2,432 DPUs): 156 whole blocks (13 each) and 4 rows to the last tasklet
    assert SP.tasklet_rows(2_500, 16) == [13 * 16] * 11 + [13 * 16 + 4]


def test_strong_scaling_rows_follow_the_608_dpu_total() -> None:
    assert SP.rows_per_dpu("Linear Regression", "weak", 2432) == 10_000
    assert SP.rows_per_dpu("Linear Regression", "strong", 608) == 10_000
    assert SP.rows_per_dpu("Linear Regression", "strong", 2432) == 2_500
    with pytest.raises(ValueError):
        SP.rows_per_dpu("Linear Regression", "sideways", 608)


def test_logistic_regression_is_soft_float_and_kmeans_multiplies() -> None:
    log = SP.logistic_regression()
    assert log.per_row["float_mul"] == 20 and log.per_row["float_add"] == 11 and log.per_row["float_convert"] == 2
    km = SP.kmeans()
    assert km.per_row["mul32"] == 101 and km.table_entries == 10 and km.output_bytes == 44
    bits = SP.kmeans_mul_bits()
    assert 16 < bits < 32  # about half the differences are negative (32 steps), the rest ~10-14 bits
