"""Hand-computable cases. Each expected value carries its one-line derivation."""

from __future__ import annotations

import pytest
import sympy
from support import full_ranks_transfer_s, raw_floats

from pimmodel.api import predict
from pimmodel.costmodel.common import dense_sample, error_section
from pimmodel.costmodel.symbols import COEF, HW, WL
from pimmodel.costmodel.terms import Terms
from pimmodel.kernels import pricing
from pimmodel.specs import CRITEO, YFCC, Workload


def _subs(expr, hw, **workload):
    values = {getattr(HW, k): v for k, v in hw.numeric().items()}
    values.update({getattr(WL, k): v for k, v in workload.items()})
    values.update({COEF.svm_hit_fraction: 0.5})
    return float(sympy.sympify(expr).subs(values))


def _priced(build, *args):
    """(compute cycles, DMA cycles, DMAs) of one occurrence of the section ``build(terms, *args)`` builds."""
    t = Terms()
    s = build(t, *args)
    compute = t.expand(pricing.compute_cycles(s.work, s.parallel, WL.tasklets, HW))
    dma = t.expand(pricing.dma_cycles(s.work, HW))
    return compute, dma, t.expand(s.work.dma_totals("read")[0] + s.work.dma_totals("write")[0])


YFCC_DPU = {"tasklets": 16, "features": 4096, "bytes_per_value": 4, "local_batch": 8, "rows_per_dpu": 3328}


def test_dense_lr_sample_compute_cycles(upmem) -> None:
    # per tasklet 256 features; dot: 132 (mul64, straight-line __muldi3) + 4 (shift64) + 2 (add64) + 5 loop
    # = 143; grad: 132 + 4 + 1 (add32) + 7 loop = 144; + 24 per-sample overhead
    # => (256*143 + 256*144 + 24) instructions per tasklet x max(11, 16) cycles = 1,175,936
    compute, _, _ = _priced(dense_sample, "lr", sympy.Integer(1))
    assert _subs(compute, upmem, **YFCC_DPU) == pytest.approx(1_175_936)


def test_dense_sample_dma_cycles(upmem) -> None:
    # a burst of k DMAs of S bytes: alpha + S/2 + (k - 1) * (31 + S/2)
    # X: one burst of 16 x 1024 B: 77 + 512 + 15*(31 + 512) = 8,734
    # w and accumulators: 4 bursts of 16 x 512 B: 4 * (77 + 256 + 15*(31 + 256)) = 18,552
    # accumulator write-back: 2 bursts: 2 * (61 + 256 + 15*287) = 9,244      => 36,530 cycles per sample
    _, dma, dmas = _priced(dense_sample, "lr", sympy.Integer(1))
    assert _subs(dma, upmem, **YFCC_DPU) == pytest.approx(36_530)
    assert _subs(dmas, upmem, **YFCC_DPU) == 112  # reference §3.1: 112 DMAs per sample


def test_lr_serial_section_cycles(upmem) -> None:
    # tasklet 0 alone (11 cycles per instruction): reduce 16 * (2 + 3) = 80; sigmoid 4*30 (conversions)
    # + 3*178 (float mul; / 2^31 compiles to a multiply) + 100 (double add) + 2185 (double div) + 40 = 2,979
    # => 11 * 3,059 = 33,649, plus 2 barriers of 16 tasklets x barrier_instructions_per_tasklet x 11 cycles
    # (12 before the hardware fit: 37,873 cycles; fitted 16.77: 39,552)
    barrier = 16 * upmem.barrier_instructions_per_tasklet * 11
    assert _subs(_priced(error_section, "lr", sympy.Integer(1))[0], upmem, tasklets=16) == \
        pytest.approx(33_649 + 2 * barrier)
    old = upmem.replace(barrier_instructions_per_tasklet=12)
    assert _subs(_priced(error_section, "lr", sympy.Integer(1))[0], old, tasklets=16) == pytest.approx(37_873)


def test_ma_sgd_host_to_pim_one_rank(upmem) -> None:
    # 64 DPUs = 1 full rank; 416 rounds x 2 pushes of one buffer to every DPU (w: 16,384 B, 4 threads of 2 lines;
    # the bias: 8 B, one thread for the 8 lines); one buffer costs a line one DPU's bytes at the serial rate, here
    # slower than 1/8 of the full-rank rate: 2 x 16,384 B / 0.33 GB/s and 8 x 8 B / 0.33 GB/s, plus the calls
    p = predict(Workload(YFCC, "lr", "ma-sgd", 64), upmem)
    call, serial = upmem.transfer_call_overhead_s, upmem.serial_to_pim_bytes_per_s
    assert 1 / serial > 8 / upmem.push_bytes_per_s_per_rank
    expected = 416 * (2 * call + 2 * 16_384 / serial + 8 * 8 / serial)
    assert p.per_epoch_s["host_to_pim"] == pytest.approx(expected, rel=1e-12)
    assert p.per_epoch_s["host_to_pim"] == pytest.approx(
        416 * (full_ranks_transfer_s(upmem, 16_384, 1, distinct=False) + full_ranks_transfer_s(upmem, 8, 1,
                                                                                               distinct=False)))
    assert p.per_epoch_bytes["host_to_pim"] == 416 * 64 * (4096 * 4 + 8)


def test_admm_pim_to_host_32_ranks(upmem) -> None:
    # 2048 DPUs = 32 full ranks; one round: w_k (16,384 B, 4 threads of 2 lines, each DPU its own buffer: a busy
    # thread moves a line at max(1 / 0.12 GB/s + 7 x the per-DPU extra, 8 x 8 / 4.74 GB/s) per byte) and the bias
    # (8 B, one thread, 8 lines alone), each a call from the DPUs; 32 ranks take 32 / (1 + 31 g_pull) times one
    # rank, never less than their bytes at the pull ceiling (which binds for w_k: 33.5 MB / 8.23 GB/s)
    p = predict(Workload(YFCC, "lr", "admm", 2048), upmem)
    call = upmem.transfer_call_overhead_s + upmem.pull_call_extra_s
    alone = 1 / upmem.serial_from_pim_bytes_per_s + 7 * upmem.pull_line_dpu_s_per_byte
    busy = max(alone, 64 / upmem.pull_bytes_per_s_per_rank)
    spread = 32 / (1 + 31 * upmem.pull_rank_growth)
    ceiling = upmem.pull_saturation_bytes_per_s
    assert 2048 * 16_384 / ceiling > spread * 2 * 16_384 * busy
    expected = 2 * call + 2048 * 16_384 / ceiling + max(spread * 8 * 8 * alone, 2048 * 8 / ceiling)
    assert p.per_epoch_s["pim_to_host"] == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(full_ranks_transfer_s(upmem, 16_384, 32, to_pim=False)
                                     + full_ranks_transfer_s(upmem, 8, 32, to_pim=False))


def test_ga_sgd_criteo_pulls_int64_gradients(upmem) -> None:
    # 1536 rounds x 2048 DPUs x 1,001,472 x 8 B
    p = predict(Workload(CRITEO, "lr", "ga-sgd", 2048), upmem)
    assert p.rounds_per_epoch == 1536
    assert p.per_epoch_bytes["pim_to_host"] == 1536 * 2048 * 1_001_472 * 8
    assert p.per_epoch_bytes["host_to_pim"] == 1536 * 2048 * 1_001_472 * 4


def test_ma_sgd_mram_bytes(upmem) -> None:
    # per DPU per sample: X 16 KiB + w 16 KiB + accumulators 16 KiB + 8 B LUT entry; per step = launch
    # (416): update reads w + accumulators (32 KiB) + 32 B of labels + the 8 B int64 bias
    p = predict(Workload(YFCC, "lr", "ma-sgd", 64), upmem)
    per_dpu = 3328 * (3 * 16384 + 8) + 416 * (2 * 16384 + 32 + 8)
    assert p.per_epoch_bytes["mram_to_wram"] == 64 * per_dpu
    # writes: accumulators every sample, zeroing + w + the 8 B bias every step
    assert p.per_epoch_bytes["wram_to_mram"] == 64 * (3328 * 16384 + 416 * (2 * 16384 + 8))


def test_launch_only_in_wall_view(upmem) -> None:
    w = Workload(YFCC, "svm", "ma-sgd", 256)
    wall, breakdown = predict(w, upmem, "wall"), predict(w, upmem, "breakdown")
    # 256 DPUs = 4 ranks: the fixed part (0.6 ms before the fit) and 3 ranks of completion polling beyond the first
    assert wall.per_epoch_s["launch"] == pytest.approx(416 * (upmem.launch_overhead_s + 3 * upmem.launch_per_rank_s))
    assert breakdown.per_epoch_s["launch"] == 0
    # the benchmark builds time no barrier wait as compute: the production kernel's 2 per sample (3,328), 2 per
    # local step (416) and 2 per launch (416) leave the compute category: 8,320 x 16 tasklets x the spec's
    # instructions per tasklet under the barrier's lock x 11 cycles at 350 MHz
    barriers_s = (3328 * 2 + 416 * 2 + 416 * 2) * 16 * upmem.barrier_instructions_per_tasklet * 11 / 350e6
    assert breakdown.per_epoch_s["dpu_compute"] == pytest.approx(wall.per_epoch_s["dpu_compute"] - barriers_s,
                                                                 rel=1e-12)
    assert wall.per_epoch_s["mram_wram_dma"] <= breakdown.per_epoch_s["mram_wram_dma"]


def test_criteo_ma_sgd_dma_counts(upmem) -> None:
    # per DPU per sample: X 7 x 16 B + 9 x 8 B (39 slots over 16 tasklets: 7 take 3), 39 w gathers,
    # 39 + 1 accumulator reads (8 B), 1 LUT entry (8 B); per step (96 at 2048 DPUs, b = 2048): labels
    # 2048/128 = 16 x 512 B, the bias weight (8 B), the update sweep up to the bias slot:
    # ceil(1,000,001 / 128) = 7,813 blocks (15 x 489 + 478) of w (512 B) and accumulators (1024 B)
    raw = raw_floats(Workload(CRITEO, "lr", "ma-sgd", 2048), upmem)
    steps = 196_608 // 2048
    reads = 196_608 * (16 + 39 + 40 + 1) + steps * (16 + 1 + 2 * 7_813)
    read_bytes = 196_608 * (7 * 16 + 9 * 8 + 8 * 80) + steps * (16 * 512 + 8 + 7_813 * (512 + 1024))
    assert float(raw["dmas_read"]) == reads
    assert float(raw["bytes_mram_to_wram"]) == 2048 * read_bytes
    # writes (write fraction 1): 39 + 1 accumulators per sample; zeroing 16 x 489 x 1 KiB + 7,813 w blocks
    assert float(raw["dmas_write"]) == 196_608 * 40 + steps * (16 * 489 + 7_813)
