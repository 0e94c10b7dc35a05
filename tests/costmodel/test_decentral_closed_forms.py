"""The new optimizers' per-epoch counts and times written by hand from the kernel and host code (``emulator/
decentral.py``, ``kernels/exchange.py``) and the spec files, at the study's scale (YFCC LR, 2,048 DPUs, weak
scaling: 3,328 rows per DPU, b = 8, so 416 local steps per epoch; GA's B = 8,192, so 832 rounds).

upmem-2556 constants used: 350 MHz, 16 tasklets (>= the revolver's 11: one instruction per cycle), int32 shift 1,
int64 add 2, int64 shift 4 instructions, host reduction 16 threads x 5 GB/s = 80 GB/s, 17 threads x 15 us of
pthread create/join per reduction, 32 full ranks (bandwidth x 32^0.75); the fitted constants are read from the
spec (``hw``): the barrier's instructions per tasklet (16 x that x 11 cycles), the launch overhead; one host
transfer to or from 2,048 DPUs (32 full ranks) is ``support.full_ranks_transfer_s``, written by hand from the SDK's
transfer lines and threads (tests/kernels/test_host_transfers.py); a broadcast is the call plus all bytes at the
broadcast bandwidth of 32 ranks."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support import full_ranks_transfer_s, raw_floats

from pimmodel.specs import YFCC, Workload, load_hardware

N, D, F = 2048, 4096, 350e6
V_MODEL = 4 * D + 8  # int32 model + int64 bias
UPMEM = load_hardware("upmem-2556")
CALL, BROADCAST = UPMEM.transfer_call_overhead_s, UPMEM.broadcast_bytes_per_s_per_rank
# dpu_broadcast_to over 32 ranks: one rank's rate times 1 + 31 g (each further rank adds the share g), capped by
# the push ceiling of the shared host path (never below one rank's own rate)
BROADCAST_32 = min(BROADCAST * (1 + 31 * UPMEM.push_rank_growth), max(UPMEM.push_saturation_bytes_per_s, BROADCAST))
# one launch on 2,048 DPUs: the fixed part, the per-DPU part (0) and 31 ranks of completion polling beyond the first
LAUNCH = UPMEM.launch_overhead_s + UPMEM.launch_per_dpu_s * N + 31 * UPMEM.launch_per_rank_s
BARRIER_CYCLES = 16 * UPMEM.barrier_instructions_per_tasklet * 11


def _hw(name: str = "upmem-2556", **changes: object):  # type: ignore[no-untyped-def]
    return load_hardware(name).replace(**changes) if changes else load_hardware(name)


def _w(optimizer: str, **hyper: int) -> Workload:
    w = Workload(YFCC, "lr", optimizer, N)
    return w.with_(hyper=replace(w.hp, **hyper)) if hyper else w


def test_dpsgd_on_the_torus() -> None:
    """416 gossip rounds; each: 4 messages of 16,392 B at 1 GB/s plus 1 us (pim-torus-hypothetical), charged to
    host_to_pim; per round the mixing sweep reads 5 x 16 KiB and writes 16 KiB in 2,048-B DMAs (40 + 8) and issues
    4,096 x (5 shifts + 4 x 2 (64-bit adds) + 5 loads + 5) + the bias's 5 x 4 + 4 x 2 = 94,236 instructions; one
    launch per epoch instead of MA-SGD's 416 (415 fewer bias reads, bias writes and 2 x 415 barriers); no host."""
    hw = _hw("pim-torus-hypothetical")
    dp, ma = raw_floats(_w("dpsgd"), hw), raw_floats(_w("ma-sgd"), _hw())
    link = 416 * 4 * (1e-6 + V_MODEL / 1e9)
    assert dp["rounds"] == 416
    assert dp["host_to_pim"] == pytest.approx(link, rel=1e-12) and dp["link"] == pytest.approx(link, rel=1e-12)
    assert dp["pim_to_host"] == dp["host_aggregate"] == dp["bytes_host_to_pim"] == dp["bytes_pim_to_host"] == 0
    assert dp["bytes_link"] == pytest.approx(N * 416 * 4 * V_MODEL, rel=1e-12)
    assert dp["launch"] == pytest.approx(LAUNCH, rel=1e-12)
    assert dp["dmas_read"] == pytest.approx(ma["dmas_read"] + 416 * 40 - 415, rel=1e-12)
    assert dp["dmas_write"] == pytest.approx(ma["dmas_write"] + 416 * 8 - 415, rel=1e-12)
    mix_cycles = D * (5 * 1 + 4 * 2 + 5 + 5) + 5 * 4 + 4 * 2
    assert mix_cycles == 94_236
    assert dp["dpu_compute"] == pytest.approx(ma["dpu_compute"] + (416 * mix_cycles - 415 * 2 * BARRIER_CYCLES) / F,
                                              rel=1e-12)


@pytest.mark.parametrize("topology", ["ring", "torus", "all-to-all"])
def test_allreduce_sgd_link_time(topology: str) -> None:
    """832 rounds; each all-reduces V = 8 x 4,096 + 8 = 32,776 B of int64 partial sums (2 GB/s, 1 us per message):
    ring: 2 x 2,047 steps of V / 2,048; torus (32 x 64): per half 63 steps of V / 64 and 31 of V / 2,048;
    all-to-all: 2 steps of 2,047 V / 2,048. One launch per epoch, nothing through the host."""
    hw = _hw(link_topology=topology, link_bytes_per_s=2e9, link_latency_s=1e-6)
    raw = raw_floats(_w("allreduce-sgd"), hw)
    v, step = 8 * D + 8, (lambda b: 1e-6 + b / 2e9)
    half = {"ring": 2047 * step(v / N), "torus": 63 * step(v / 64) + 31 * step(v / N),
            "all-to-all": step(2047 * v / N)}[topology]
    assert raw["rounds"] == 832
    assert raw["link"] == pytest.approx(832 * 2 * half, rel=1e-12)
    assert raw["pim_to_host"] == pytest.approx(832 * half, rel=1e-12)
    assert raw["host_to_pim"] == pytest.approx(832 * half, rel=1e-12)
    assert raw["bytes_link"] == pytest.approx(N * 832 * 2 * 2047 * v / N, rel=1e-12)
    assert raw["host_aggregate"] == 0 and raw["launch"] == pytest.approx(LAUNCH, rel=1e-12)


def test_local_sgd_every_8_steps() -> None:
    """H = 8: 52 rounds, each pushing w and the bias (two calls) and pulling them back, one host stream over the
    2,048 x 4,096 int32 models plus 17 pthreads, and one launch; the DPUs still make 416 local steps."""
    raw = raw_floats(_w("local-sgd", sync_every=8), _hw())
    ma = raw_floats(_w("ma-sgd"), _hw())
    push = full_ranks_transfer_s(UPMEM, 4 * D, 32, distinct=False) + full_ranks_transfer_s(UPMEM, 8, 32,
                                                                                            distinct=False)
    pull = full_ranks_transfer_s(UPMEM, 4 * D, 32, to_pim=False) + full_ranks_transfer_s(UPMEM, 8, 32, to_pim=False)
    assert raw["rounds"] == 52
    assert raw["host_to_pim"] == pytest.approx(52 * push, rel=1e-12)
    assert raw["pim_to_host"] == pytest.approx(52 * pull, rel=1e-12)
    assert raw["host_aggregate"] == pytest.approx(52 * (N * D * 4 / 80e9 + 17 * 15e-6), rel=1e-12)
    assert raw["launch"] == pytest.approx(52 * LAUNCH, rel=1e-12)
    assert raw["dpu_compute"] == pytest.approx(ma["dpu_compute"] - 364 * 2 * BARRIER_CYCLES / F, rel=1e-12)


def test_hier_sgd_through_the_host_broadcasts_only_global_averages() -> None:
    """H = 8 without links: every step pulls and averages all models (as MA-SGD); the 52 global averages go back
    as one buffer for all DPUs (a broadcast when the host broadcasts), the 364 rank averages as a parallel push."""
    hw = _hw(broadcast_identical_pushes=1)
    raw, ma = raw_floats(_w("hier-sgd"), hw), raw_floats(_w("ma-sgd"), hw)
    parallel = full_ranks_transfer_s(hw, 4 * D, 32) + full_ranks_transfer_s(hw, 8, 32)
    broadcast = 2 * CALL + N * V_MODEL / BROADCAST_32
    assert raw["rounds"] == 416 and _w("hier-sgd").sync_every == 8
    assert raw["host_to_pim"] == pytest.approx(364 * parallel + 52 * broadcast, rel=1e-12)
    assert ma["host_to_pim"] == pytest.approx(416 * broadcast, rel=1e-12)
    for same in ("pim_to_host", "host_aggregate", "launch", "dpu_compute"):
        assert raw[same] == pytest.approx(ma[same], rel=1e-12)


def test_hier_sgd_over_in_rank_links() -> None:
    """In-rank links (2 GB/s, 1 us): every step each rank of 64 all-reduces its pre-scaled models (2 x 63 ring
    steps of 16,392 / 64 B); at the 52 global steps the host pulls every DPU's 4 x 64 + 8 = 264-B shard, sums the
    32 ranks' (32 x 16,392 B streamed, 17 threads) and pushes the result back; 52 launches."""
    hw = _hw(link_topology="in-rank", link_bytes_per_s=2e9, link_latency_s=1e-6)
    raw = raw_floats(_w("hier-sgd"), hw)
    link = 416 * 2 * 63 * (1e-6 + V_MODEL / 64 / 2e9)
    assert raw["link"] == pytest.approx(link, rel=1e-12)
    assert raw["pim_to_host"] == pytest.approx(link / 2 + 52 * full_ranks_transfer_s(hw, 264, 32, to_pim=False),
                                               rel=1e-12)
    assert raw["host_to_pim"] == pytest.approx(link / 2 + 52 * full_ranks_transfer_s(hw, 264, 32), rel=1e-12)
    assert raw["bytes_pim_to_host"] == raw["bytes_host_to_pim"] == 52 * N * 264
    assert raw["host_aggregate"] == pytest.approx(52 * (32 * V_MODEL / 80e9 + 17 * 15e-6), rel=1e-12)
    assert raw["launch"] == pytest.approx(52 * LAUNCH, rel=1e-12)
