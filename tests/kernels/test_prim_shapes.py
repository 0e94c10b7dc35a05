"""The PrIM builds' shape parameters (CMU-SAFARI/prim-benchmarks @ 9a1498f), checked on hand-computed points, and a
grid whose infeasible points are marked while the rest are priced."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pimmodel.calibration.kernel_interval import predict_grid
from pimmodel.errors import SpecError
from pimmodel.kernels import prim_data as D
from pimmodel.kernels import prim_sync
from pimmodel.kernels.prim import DoesNotFit, active_dpus, describe, kernels
from pimmodel.kernels.vocabulary import KernelRun
from pimmodel.specs import load_hardware


def _bytes(run: KernelRun, name: str) -> float:
    (call,) = [c for c in run.host if c.name == name]
    return float(call.bytes_per_dpu)


def _calls(run: KernelRun, name: str) -> float:
    (call,) = [c for c in run.host if c.name == name]
    return float(call.calls)


def test_every_shape_parameter_names_its_prim_source() -> None:
    shaped = {k: [p.key for p in info.shape] for k, info in kernels().items() if info.shape}
    assert shaped == {"BS": ["queries"], "GEMV": ["cols"], "MLP": ["cols", "layers"], "RED": ["elem"],
                      "TRNS": ["rows", "blocks", "cols"], "TS": ["query_length"]}
    for info in kernels().values():
        for p in info.shape:
            assert "/" in p.meaning and ":" in p.meaning, (info.name, p.key)  # file:line of the PrIM source


def test_gemv_columns_by_hand() -> None:
    # 1,001 rows on 4 DPUs: 251 rows, padded to 252 (GEMV/host/app.c:99-118); 1,023 columns padded to 1,024
    run = describe("GEMV", 4, 1001, cols=1023)
    assert _bytes(run, "A") == 4 * 1024 * 252 == 1_032_192
    assert _bytes(run, "x") == 4 * 1024 and _bytes(run, "y") == 4 * 252
    assert run.mram_bytes == 1_032_192 + 4096 + 1008
    # the measured build's 64 columns: the old closed form 260 rows_pad + 256
    assert describe("GEMV", 4, 1001).mram_bytes == 260 * 252 + 256


def test_mlp_layers_and_columns_by_hand() -> None:
    run = describe("MLP", 64, 1024, cols=4096, layers=5)
    assert run.launches == 5 and _calls(run, "A") == 5
    assert _bytes(run, "A") == 4 * 16 * 4096  # 16 rows per DPU x 4,096 int32; one layer at a time in MRAM
    assert run.mram_bytes == 4 * 16 * 4096 + 4 * 4096 + 4 * 16
    assert describe("MLP", 64, 1024).launches == 3


def test_ts_query_length_by_hand() -> None:
    # n = 65,536 on 64 DPUs, m = 256: rounded up to 64 x 16 x 256 = 262,144, 4,096 per DPU (TS/host/app.c:144-145)
    assert D.ts_slice(65_536, 64, 256) == 4096
    # per tasklet 256 elements, blocks of 64: 4 each; the last stops at 4,096 - 256 = 3,840: none (task.c:69-73)
    assert D.ts_blocks(4096, 256) == (4, 60)
    run = describe("TS", 64, 65_536, query_length=256)
    (dma,) = run.sections[-1].work.dmas
    assert dma.transfers == (3 * 4 + 2) * 60  # 256 / 64 = 4 query blocks x 3 reads + 2 per block
    assert run.mram_bytes == 4 * 256 + 12 * (4096 + 256)
    assert _bytes(run, "query") == 1024
    with pytest.raises(SpecError, match="multiple of 64"):
        describe("TS", 64, 65_536, query_length=100)
    with pytest.raises(SpecError, match="query_length 256 is longer than the series"):
        describe("TS", 1, 255, query_length=256)  # PrIM would pad the series to 4,096 and price the padding
    assert describe("TS", 1, 256, query_length=256).mram_bytes > 0  # one position: the shortest that exists


def test_bs_queries_by_hand() -> None:
    # 262,144 queries on 60 DPUs: rounded up to a multiple of 960 = 263,040, 4,384 per DPU (BS/host/app.c:93-94)
    assert D.bs_queries_per_dpu(2_048_576, 60, queries=262_144) == 4384
    run = describe("BS", 60, 2_048_576, queries=262_144)
    assert _bytes(run, "queries") == 8 * 4384 and _bytes(run, "array") == 8 * 2_048_576
    assert describe("BS", 64, 131_072).host == describe("BS", 64, 131_072, queries=131_072 // 8).host


def test_red_element_type_by_hand() -> None:
    # 1,000 elements on 3 DPUs: 334 each; 334 x 4 B is 8-aligned, so no rounding (per_dpu_8bytes)
    assert describe("RED", 3, 1000, elem="int32").mram_bytes == 1336
    assert describe("RED", 3, 1000).mram_bytes == 2672
    ops32 = describe("RED", 3, 1000, elem="int32").sections[1].work.ops
    assert "int32_add" in ops32 and "int64_add" not in ops32
    with pytest.raises(SpecError, match="int64, int32"):
        describe("RED", 3, 1000, elem="float")


def test_trns_shape_by_hand() -> None:
    # M_ = 12,288, m = 16, N_ = 64, n = 8 on 60 DPUs: 2 rounds of 2 launches (TRNS/host/app.c:114-119)
    run = describe("TRNS", 60, 12_288, rows=16, blocks=64, cols=8)
    assert run.launches == 4
    assert _calls(run, "tiles") == 2 * 16 * 12_288 and _bytes(run, "tiles") == 64
    assert _bytes(run, "matrix") == 8 * 16 * 8 * 12_288 == 12_582_912
    assert run.mram_bytes == 12_582_912 + 12_288 * 8
    # i * m and (m n - 1)(i / n) over i < 32 (m = 4, n = 8): (4 + 28 x 3 + ... ) -> 90/32 + 48/32; __udiv32 7.75
    assert D.trns_step2_bits(4, 8) == (90 / 32 + 48 / 32, 7.75)
    assert describe("TRNS", 1, 12_288, rows=16, blocks=1).launches == 2
    assert active_dpus("TRNS", 2048) == 64 and active_dpus("TRNS", 2048, blocks=100) == 100
    assert active_dpus("VA", 2048) == 2048
    with pytest.raises(DoesNotFit, match="WRAM"):
        describe("TRNS", 1, 64, rows=64, cols=8)  # 4 KiB tiles, two per tasklet: 128 KiB


def test_unknown_shape_parameter_is_one_line() -> None:
    with pytest.raises(SpecError, match="VA does not take cols"):
        describe("VA", 4, 1024, cols=4)


def test_grid_marks_infeasible_points_and_prices_the_rest() -> None:
    hw = load_hardware("upmem-2556")
    # 2^25 int32 pairs: 256 MiB on one DPU (infeasible), 4 MiB each on 64, 128 KiB each on 2,048
    points = predict_grid("VA", [1, 64, 2048], [2**25], hw)
    assert [p["feasible"] for p in points] == [False, True, True]
    assert "256 MiB of MRAM" in points[0]["reason"] and points[0]["kernel_ms"] is None
    for p in points[1:]:
        assert p["low_ms"] < p["kernel_ms"] < p["high_ms"] and p["reason"] == ""


def _check_ts_slice(slice_fn: Callable[..., int]) -> None:
    assert slice_fn(65_536, 64, 256) == 4096


def test_the_hand_check_fails_on_a_broken_description(monkeypatch: pytest.MonkeyPatch) -> None:
    _check_ts_slice(D.ts_slice)
    # break it on purpose: a slice that ignores the query length (the uPIMulator build's 64) must fail the check
    monkeypatch.setattr(prim_sync.D, "ts_slice", lambda n, dpus, m=64: D.ceil_div(n, dpus * 16 * 64) * 16 * 64)
    with pytest.raises(AssertionError):
        _check_ts_slice(prim_sync.D.ts_slice)
    with pytest.raises(AssertionError):
        test_ts_query_length_by_hand()
