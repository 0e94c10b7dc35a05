"""The PrIM kernel descriptions on hand-checked points, and the vocabulary's extensions priced by hand."""

from __future__ import annotations

import math

import pytest

from pimmodel.errors import SpecError
from pimmodel.kernels import pricing
from pimmodel.kernels import prim_data as D
from pimmodel.kernels.prim import describe, kernels
from pimmodel.kernels.vocabulary import Chain, Dma, HostCall, Section, Work


def _host_bytes(run, to_pim: bool) -> float:  # type: ignore[no-untyped-def]
    return sum(c.calls * c.bytes_per_dpu for c in run.host if c.to_pim == to_pim)


def test_thirteen_kernels() -> None:
    assert set(kernels()) == {"BS", "GEMV", "HST-L", "HST-S", "MLP", "RED", "SCAN-RSS", "SCAN-SSA", "SEL", "TRNS",
                              "TS", "UNI", "VA"}


def test_va_host_bytes_per_dpu() -> None:
    # 524,288 int32 over 4 DPUs: 131,072 each; to the DPUs 12 B of arguments + A and B (4 B each); back C
    run = describe("VA", 4, 524_288)
    assert _host_bytes(run, True) == 12 + 8 * 131_072
    assert _host_bytes(run, False) == 4 * 131_072
    # an odd per-DPU count is rounded up to 8 elements (DP va_data_prep.py:37-40): ceil(1001/4) = 251 -> 256
    assert _host_bytes(describe("VA", 4, 1001), False) == 4 * 256


@pytest.mark.parametrize("name,dpus,size,launches", [
    ("VA", 4, 524_288, 1), ("RED", 64, 524_288, 1), ("MLP", 4, 256, 3), ("SCAN-RSS", 16, 262_144, 2),
    ("SCAN-SSA", 64, 262_144, 2), ("TRNS", 4, 64, 32), ("TRNS", 16, 64, 8), ("TRNS", 64, 64, 2), ("TS", 4, 4096, 1),
])
def test_launches_per_kernel_time(name: str, dpus: int, size: int, launches: int) -> None:
    # MLP: one launch per layer; SCANs: two kernels; TRNS: two steps per round, 64 / DPUs rounds
    assert describe(name, dpus, size).launches == launches


def test_ts_sizing_rounds_to_1024_per_dpu() -> None:
    # ts_size rounded up to DPUs x 16 tasklets x 64 (DP ts_data_prep.py:22-26): at 16 DPUs every size up to
    # 16,384 becomes 16,384 -> 1,024 per DPU; each tasklet one 64-element block, the last none (15 active)
    for size in (4096, 8192, 12_288, 16_384):
        assert D.ts_slice(size, 16) == 1024
    assert D.ts_slice(65_536, 64) == 1024 and D.ts_slice(65_536, 4) == 16_384
    assert D.ts_blocks(1024) == (1, 15)
    assert D.ts_blocks(65_536) == (64, 64 * 16 - 1)
    assert describe("TS", 16, 4096).sections[-1].tasklets == 15


def test_scan_sizing_rounds_to_2048_per_dpu() -> None:
    # ceil(total / DPUs) rounded up to 16 tasklets x 128 int64 (DP scan_rss_data_prep.py:32-37)
    assert D.per_dpu_rounds(262_144, 64) == 4096
    assert D.per_dpu_rounds(1000, 4) == 2048
    assert D.per_dpu_rounds(1_048_576, 16) == 65_536
    run = describe("SCAN-RSS", 64, 262_144)
    assert _host_bytes(run, True) == 16 + 8 * 4096 and _host_bytes(run, False) == 8 * 4096
    assert next(s for s in run.sections if s.lockstep).count == 4096 // 2048


@pytest.mark.parametrize("dpus,size,active", [(4, 8192, 16), (64, 2048, 16), (4, 32, 4), (1, 6, 3)])
def test_gemv_active_tasklets(dpus: int, size: int, active: int) -> None:
    # rows go to tasklets in pairs (U/GEMV/dpu/task.c:49-67): min(16, ceil(rows / 2)) tasklets work
    assert describe("GEMV", dpus, size).sections[-1].tasklets == active


def test_mlp_below_eleven_tasklets_at_64_dpus() -> None:
    # N = 256 over 64 DPUs: 4 rows -> 2 tasklets; each issues every 11 cycles (revolver), not every 2
    assert describe("MLP", 64, 256).sections[-1].tasklets == 2
    assert describe("MLP", 64, 2048).sections[-1].tasklets == 16


def test_bs_search_path() -> None:
    # the re-executed bisection takes log2(N) - 6 steps on average, one 256-B DMA each plus the 2 end blocks
    for n in (2**15, 2**16, 2**17, 2**18):
        path = D.bs_search(n, n // 8)
        assert path.iterations == pytest.approx(math.log2(n) - 6, abs=0.1)
        assert path.block_reads == pytest.approx(path.iterations + 2, abs=0.1)
    assert D.bs_queries_per_dpu(131_072, 64) == 256  # 16,384 queries, a multiple of 64 x 16


def test_trns_cycles_cover_every_tile() -> None:
    for m in (32, 64, 128, 256):
        c = D.trns_cycles(m)
        assert c.tiles == 8 * m - 1 and c.fixed + c.moved == c.tiles


def test_mul_bits_from_the_data() -> None:
    assert D.gemv_mul_bits() == pytest.approx(4.07, abs=0.01)  # min of two values uniform in [0, 50)
    assert 4.5 < D.ts_mul_bits() < 5.0


def test_bad_kernel_and_sizes_are_one_line_errors() -> None:
    with pytest.raises(SpecError, match="VA"):
        describe("VX", 4, 1024)
    with pytest.raises(SpecError, match="size"):
        describe("RED", 4, 0)
    with pytest.raises(SpecError, match="MiB of MRAM"):
        describe("BS", 64, 2**31)


# ---------------------------------------------------------------- the vocabulary's extensions, priced by hand
def test_overlap_default_reproduces_the_old_pricing(upmem) -> None:  # type: ignore[no-untyped-def]
    old = upmem.replace(dma_compute_overlap=1.0, launch_per_dpu_s=0.0)
    assert pricing.exposed_dma_cycles(True, 100.0, 150.0, old) == pricing.exposed_dma_cycles(True, 100.0, 150.0)
    assert pricing.exposed_dma_cycles(True, 100.0, 50.0, old) == 0
    # the fitted overlap exposes (1 - overlap) of the shorter
    phi = upmem.dma_compute_overlap
    assert pricing.exposed_dma_cycles(True, 100.0, 50.0, upmem) == pytest.approx((1 - phi) * 50)


def test_mutex_chain_issues_at_the_rate_of_the_runnable_tasklets(upmem) -> None:  # type: ignore[no-untyped-def]
    # 1,000 critical sections of 6 instructions with 16 spinning tasklets: 6 x 16 cycles each, longer than the
    # 16,000 other instructions issued at 1 per cycle
    work = Work({"bookkeeping": 16_000}, chains=(Chain("mutex", 1000, {"bookkeeping": 6}),))
    assert pricing.compute_cycles(work, True, 16, upmem) == 1000 * 6 * 16
    # with 8 active tasklets the lock holder still issues every 11 cycles (revolver)
    assert pricing.compute_cycles(work, True, 16, upmem, active=8) == pytest.approx(max(1000 * 6 * 11, 2000 * 11))


def test_lockstep_section_by_hand(upmem) -> None:  # type: ignore[no-untyped-def]
    # 16 tasklets read 1 KB each at once, then compute 100 instructions each: the burst, then the last one alone
    read = Dma("read", 1024, 16, 16)
    section = Section("r", True, 1, Work({"bookkeeping": 1600}, dmas=(read,)), lockstep=True)
    burst = 77 + 512 + 15 * (31 + 512)
    assert pricing.section_cycles(section, 16, upmem) == pytest.approx(burst + 100 * 11)


def test_wram_symbol_costs_per_word_and_line(upmem) -> None:  # type: ignore[no-untyped-def]
    # 256 B of results (64 words) from 64 DPUs: 8 lines; from 4 DPUs: 1 line, as from 1
    wram = HostCall("r", 256, False, memory="wram")
    for dpus, lines in ((1, 1), (4, 1), (16, 2), (64, 8)):
        assert pricing.host_calls_s([wram], dpus, upmem, False) == pytest.approx(
            upmem.wram_call_overhead_s + lines * 64 * upmem.wram_word_s)
