"""The mechanisms of the study's kernels and host code, pinned to the artifact (CMU-SAFARI/PIM-Opt at bbc8313;
paths below abbreviate ``upmem_ml_coding/UPMEM/`` as ``U/``) and to the UPMEM runtime as vendored by uPIMulator
(VIA-Research/uPIMulator at 870d916). Each expected value is derived by hand from the cited lines."""

from __future__ import annotations

import pytest
from support import raw_floats, run_emulation

from pimmodel.kernels.study import PROFILE as K
from pimmodel.specs import CRITEO, YFCC, HyperParams, Workload, load_hardware

HW = load_hardware("upmem-2556")
BARRIER = 16 * HW.barrier_instructions_per_tasklet * HW.revolver_interval_cycles
"""cycles of one barrier_wait with 16 tasklets on upmem-2556: each tasklet's instructions under the lock (the
spec's fitted 16.8; the compiled SDK code agrees) at one per revolver interval (11 cycles)."""


def test_muldi3_is_straight_line_so_the_dpu_time_ignores_the_data() -> None:
    """``__muldi3`` (uPIMulator golang/uPIMulator/sdk/syslib/mul64.c:131-163) computes all 36 byte products with no
    branch: the LR kernel's two 64-bit multiplies per feature (U/MA-SGD/YFCC100M-HNfc6/LR/dpu/task.c:28 and :205)
    cost the same for any features. Emulating the same deployment on two different datasets gives the same
    compute time to the cycle."""
    hyper = HyperParams(batch_size=4, global_batch_size=16, learning_rate_shift=4, reg_shift=10)
    a = run_emulation("synthetic-yfcc", 2, "lr", "ma-sgd", hyper, samples_per_dpu=8, features=512, seed=1)
    b = run_emulation("synthetic-yfcc", 2, "lr", "ma-sgd", hyper, samples_per_dpu=8, features=512, seed=2)
    assert a.trace["seconds"]["wall"]["dpu_compute"] == b.trace["seconds"]["wall"]["dpu_compute"]
    calls = a.trace["dpu_compute"]["instructions_parallel"]["mul64"]["max"] / HW.int64_mul_base_instructions
    assert calls == 8 * 512 * 2  # 8 samples x 512 features x (dot product + gradient)


def test_svm_kernels_multiply_once_per_feature_and_criteo_kernels_never() -> None:
    """SVM: only the dot product multiplies (U/MA-SGD/YFCC100M-HNfc6/SVM/dpu/task.c:27; the gradient is a shift,
    :203); the Criteo kernels sum gathered weights (U/MA-SGD/Criteo/LR/dpu/task.c:182): no multiply."""
    hyper = HyperParams(batch_size=4, global_batch_size=16, learning_rate_shift=4, reg_shift=10)
    svm = run_emulation("synthetic-yfcc", 2, "svm", "ma-sgd", hyper, samples_per_dpu=8, features=512)
    assert svm.trace["dpu_compute"]["instructions_parallel"]["mul64"]["max"] == 8 * 512 * HW.int64_mul_base_instructions
    sparse = run_emulation("synthetic-criteo", 2, "lr", "ma-sgd", HyperParams(32, 64, 0, 12), samples_per_dpu=64,
                           features=2000)
    assert "mul64" not in sparse.trace["dpu_compute"]["instructions_parallel"]


def test_breakdown_view_follows_the_benchmark_build_timers() -> None:
    """U/MA-SGD/YFCC100M-HNfc6/benchmark_LR/dpu/task.c: every bulk DMA is timed with the barrier after it, per
    sample the X read (:229), 2 w blocks (:244) and 2 accumulator blocks read (:306) and written (:330); per local
    step the 2 zeroing writes (:184) and, per update block, one read (:373) and one write (:414) barrier; the host
    takes the max over (DPU, tasklet) per category (benchmark_LR/host/app.c:730-741). So the breakdown DMA is the
    production DMA plus, per epoch (3,328 samples, 416 steps at 2,048 DPUs), 3,328 x 7 + 416 x (2 + 4) timed
    barriers."""
    w = Workload(YFCC, "lr", "ma-sgd", 2048)
    raw = raw_floats(w, HW)
    timed = 3328 * 7 + 416 * (2 + 2 * 2)
    # the init interval (the kernel prologue with tasklet 15's 8-B bias read, :67-142) is not in the totals, and
    # tasklet 0's 8-B LUT read lies inside its sigmoid compute interval (:269-289): 77 + 8 x 0.5 cycles each
    bias_read, lut_read = 416 * (77 + 8 * 0.5), 3328 * (77 + 8 * 0.5)
    expected = raw["mram_wram_dma"] + (timed * BARRIER - bias_read - lut_read) / 350e6
    assert raw["mram_wram_dma_instrumented"] == pytest.approx(expected, rel=1e-12)


def test_sparse_benchmark_times_only_the_x_read_with_a_barrier() -> None:
    """Criteo benchmark: the X read is barrier-timed (U/MA-SGD/Criteo/benchmark_LR/dpu/task.c:203-210), the 8-B
    gathers and accumulator accesses are timed without barriers (:255-260, :351-357, :388-392), the dense sweeps
    per block: zeroing 489 blocks (:171-178), update 7,813 blocks split over 16 tasklets (:476-528)."""
    w = Workload(CRITEO, "lr", "ma-sgd", 2048)
    raw = raw_floats(w, HW)
    steps = 96
    timed = 196_608 * 1 + steps * (489 + 2 * 7_813 / 16)
    lut_read = 196_608 * (77 + 8 * 0.5)  # inside tasklet 0's sigmoid compute interval; the prologue reads nothing
    expected = raw["mram_wram_dma"] + (timed * BARRIER - lut_read) / 350e6
    assert raw["mram_wram_dma_instrumented"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("optimizer,layout,expected_s", [
    # U/MA-SGD/YFCC100M-HNfc6/LR/host/app.c:584-593: 17 pthread create/join per round; :53-57 one read stream over
    # the N x d int32 local models summed into int64. 416 rounds; 16 busy cores x 5 GB/s = 80 GB/s.
    ("ma-sgd", "dense", 416 * (2048 * 4096 * 4 / 80e9 + 17 * 15e-6)),
    # U/GA-SGD/YFCC100M-HNfc6/LR/host/app.c:55-59 one stream over N x d int32, :61-86 the update reads the int64 sum
    # and w and writes w (16 B per weight); 832 rounds at B = 8,192.
    ("ga-sgd", "dense", 832 * (2048 * 4096 * 4 / 80e9 + 17 * 15e-6 + 16 * 4096 / 80e9)),
    # U/ADMM/YFCC100M-HNfc6/LR/host/app.c:61-170: 5 read streams, u updated in place (:140-154, 1 write-back) and
    # U_Z written only (:156-170, write-back + write-allocate read); one group of 17 threads (:837-846).
    ("admm", "dense", 8 * 2048 * 4096 * 4 / 80e9 + 17 * 15e-6),
    # U/MA-SGD/Criteo/LR/host/app.c:545-554: 63 threads per round; 96 rounds of one int32 stream (d = 1,001,472).
    ("ma-sgd", "sparse", 96 * (2048 * 1_001_472 * 4 / 80e9 + 63 * 15e-6)),
    # U/GA-SGD/Criteo/LR/host/app.c:57-61 the gradients are int64 (8 B); 1,536 rounds at B = 262,144.
    ("ga-sgd", "sparse", 1536 * (2048 * 1_001_472 * 8 / 80e9 + 63 * 15e-6 + 16 * 1_001_472 / 80e9)),
    # U/ADMM/Criteo/LR/host/app.c:900-936: three groups of 63 threads per epoch (189 create/join).
    ("admm", "sparse", 8 * 2048 * 1_001_472 * 4 / 80e9 + 3 * 63 * 15e-6),
])
def test_host_side_recount(optimizer: str, layout: str, expected_s: float) -> None:
    w = Workload(YFCC if layout == "dense" else CRITEO, "lr", optimizer, 2048)
    assert raw_floats(w, HW)["host_aggregate"] == pytest.approx(expected_s, rel=1e-12)
    assert K.host_threads(layout) == (17 if layout == "dense" else 63)
