"""``broadcast_identical_pushes``: the global model of MA-SGD and GA-SGD (one buffer for every DPU) goes by
``dpu_broadcast_to`` instead of a parallel push; ADMM's per-DPU w_k/c_k never do. The default (0) is the
study's host code and must leave every prediction as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import full_ranks_transfer_s, raw, run_emulation

from pimmodel.phases import PHASES
from pimmodel.specs import CRITEO, YFCC, HyperParams, Workload, load_hardware
from pimmodel.specs.hardware import to_toml

CONFIGS = [(ds, m, o) for ds in (YFCC, CRITEO) for m in ("lr", "svm") for o in ("ma-sgd", "ga-sgd", "admm")]
TOPOLOGIES = ("none", "in-rank", "ring", "all-to-all")


def _pushes(w: Workload, hw, mode: str) -> float:
    """host_to_pim of the host path by hand: per round the model vector (and, dense, the 8-B bias); ADMM's w_k and
    c_k are each DPU's own buffer, MA/GA-SGD's model and bias one buffer for every DPU. ``parallel``: as the SDK
    moves them (``support.full_ranks_transfer_s``, 32 full ranks at 2,048 DPUs); ``broadcast``: the call overhead
    + N x bytes / min(PrIM's broadcast bandwidth per rank x (1 + g (ranks - 1)), the push ceiling) (the
    constants read from upmem-2556.toml)."""
    calls = [w.dataset.features * 4] + ([8] if w.dataset.layout == "dense" else [])
    distinct = w.optimizer == "admm"
    if distinct:  # w_k and c_k, each DPU its own
        calls = [w.dataset.features * 4, *calls]
    rounds = 1 if w.optimizer == "admm" else w.rows_per_dpu / w.local_batch
    ranks = w.dpus / 64
    if mode == "parallel":
        return rounds * sum(full_ranks_transfer_s(hw, b, ranks, distinct=distinct) for b in calls)
    bandwidth = min(hw.broadcast_bytes_per_s_per_rank * (1 + hw.push_rank_growth * (ranks - 1)),
                    max(hw.push_saturation_bytes_per_s, hw.broadcast_bytes_per_s_per_rank))
    return rounds * sum(hw.transfer_call_overhead_s + w.dpus * b / bandwidth for b in calls)


def test_upmem_specs_default_to_the_study_parallel_push() -> None:
    for name in ("upmem-2556", "upmem-640", "pim-next-hypothetical"):
        hw = load_hardware(name)
        assert hw.broadcast_identical_pushes == 0
        assert "dpu_push_xfer" in hw.sources["broadcast_identical_pushes"]


@pytest.mark.parametrize("dataset,model,optimizer", CONFIGS)
def test_flag_0_is_the_parallel_push_and_flag_1_the_broadcast(upmem, dataset, model, optimizer) -> None:
    w = Workload(dataset, model, optimizer, 2048)
    off = {k: float(v) for k, v in raw(w, upmem.numeric()).items()}
    on = {k: float(v) for k, v in raw(w, {**upmem.numeric(), "broadcast_identical_pushes": 1.0}).items()}
    # flag 0: exactly the study's parallel pushes (to the last bit but for summation order)
    assert off["host_to_pim"] == pytest.approx(_pushes(w, upmem, "parallel"), rel=1e-12)
    if optimizer == "admm":
        assert on == off
        return
    assert on["host_to_pim"] == pytest.approx(_pushes(w, upmem, "broadcast"), rel=1e-12)
    # at 32 ranks the parallel push of one buffer meets the 10.6 GB/s ceiling of the shared host path, while the
    # broadcast keeps PrIM's one-rank 16.88 GB/s (a rank alone is never slowed by the ceiling): the bytes' part
    # shrinks to 10.6 / 16.88 = 0.63 of the push's (the fixed call costs stay)
    calls = off["rounds"] * (2 if dataset.layout == "dense" else 1) * upmem.transfer_call_overhead_s
    assert on["host_to_pim"] - calls < 0.7 * (off["host_to_pim"] - calls)
    assert on["bytes_host_to_pim"] == off["bytes_host_to_pim"]  # the same bytes arrive
    assert all(on[p] == off[p] for p in PHASES if p != "host_to_pim")


@pytest.mark.parametrize("topology", TOPOLOGIES[1:])
def test_links_replace_the_pushes_so_the_flag_does_not_matter(upmem, topology) -> None:
    w = Workload(YFCC, "lr", "ma-sgd", 2048)
    off = raw(w, upmem.numeric(), topology=topology)
    on = raw(w, {**upmem.numeric(), "broadcast_identical_pushes": 1.0}, topology=topology)
    assert all(np.array_equal(off[p], on[p]) for p in PHASES)


def test_flag_is_vectorized_in_one_compiled_call(upmem) -> None:
    # one rank (64 DPUs), where no ceiling binds: PrIM's broadcast (16.88 GB/s per rank, 8 threads) beats the
    # applications' 4-thread push of one buffer (2 lines per thread, each one DPU's bytes at 0.33 GB/s)
    w = Workload(YFCC, "lr", "ga-sgd", 64)
    both = raw(w, {**upmem.numeric(), "broadcast_identical_pushes": np.array([0.0, 1.0])})
    assert both["host_to_pim"][1] < both["host_to_pim"][0]


@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
def test_emulator_charges_the_same_pushes(tmp_path: Path, optimizer) -> None:
    spec = tmp_path / "broadcast.toml"
    spec.write_text(to_toml(load_hardware("upmem-2556").replace(name="bcast", broadcast_identical_pushes=1)))
    hyper = HyperParams(batch_size=4, global_batch_size=16, learning_rate_shift=4, reg_shift=10, admm_alpha_shift=4)
    runs = {hw: run_emulation("synthetic-yfcc", 4, "lr", optimizer, hyper, samples_per_dpu=8, features=512, hardware=hw)
            for hw in ("upmem-2556", str(spec))}
    seconds = {hw: r.trace["seconds"]["wall"]["host_to_pim"] for hw, r in runs.items()}
    predicted = runs[str(spec)].predicted
    assert predicted is not None
    assert seconds[str(spec)] == pytest.approx(predicted["per_epoch_s"]["host_to_pim"], rel=1e-12)
    if optimizer == "admm":
        assert seconds[str(spec)] == seconds["upmem-2556"]
    else:
        assert seconds[str(spec)] < seconds["upmem-2556"]
