"""The GPU baseline model (unvalidated): its stages by hand, and the study's run."""

from __future__ import annotations

import pytest

from pimmodel.baselines import BaselineWorkload, load_gpu, predict_gpu, study_workload
from pimmodel.errors import SpecError


def test_study_run_is_loader_bound_and_unvalidated() -> None:
    p = predict_gpu(study_workload("yfcc100m-hnfc6", "lr", "sgd", "gpu"), load_gpu())
    assert not p.validated and p.combine == "max" and p.bottleneck == "loader worker"
    assert p.steps_per_epoch == 1664  # ceil(6,815,744 / 4,096)
    assert p.details["fits_in_gpu_memory"] == 0.0  # 111.7 GB > 80 GiB
    assert p.epoch_s == max(p.details["stage_loader_worker_s"], p.details["stage_pin_memory_thread_s"],
                            p.details["stage_main_thread_gpu_s"])
    assert any("unvalidated" in a for a in p.assumptions) and any("sample_fetch_us" in a for a in p.assumptions)


def test_stages_by_hand() -> None:
    # 8,192 rows x 1,024 features, batch 1,024: 8 steps; a row is 1,025 x 4 B = 4,100 B; a batch 4,198,400 B.
    gpu = load_gpu().replace(sample_fetch_s=1e-6, host_copy_bytes_per_s=4e9, worker_start_s=0.5,
                             pcie_peak_bytes_per_s=10e9, pcie_sustained_fraction=1.0)
    w = BaselineWorkload(rows=8192, features=1024, model="lr", optimizer="sgd", batch_size=1024)
    p = predict_gpu(w, gpu)
    # loader = 0.5 s + 8 x (1,024 x 1 us + 4,198,400 B / 4e9 B/s) = 0.5 + 8 x 2.0736 ms = 0.5165888 s
    assert p.per_epoch_s["loader"] == pytest.approx(0.5165888)
    # pin-memory copy = 8 x 1.0496 ms; PCIe = 8 x 4,198,400 / 10e9 = 8 x 0.41984 ms
    assert p.per_epoch_s["host_copy"] == pytest.approx(8 * 1.0496e-3)
    assert p.per_epoch_s["host_transfer"] == pytest.approx(8 * 0.41984e-3)
    assert p.epoch_s == pytest.approx(0.5165888)


def test_resident_data() -> None:
    gpu = load_gpu()
    small = BaselineWorkload(rows=65536, features=4096, model="svm", optimizer="sgd", batch_size=4096)
    resident = predict_gpu(small, gpu, data_on_gpu=True)
    assert resident.per_epoch_s["loader"] == 0.0 and resident.bottleneck == "main thread + GPU"
    assert resident.epoch_s < predict_gpu(small, gpu).epoch_s
    with pytest.raises(SpecError, match="does not fit"):
        predict_gpu(study_workload("yfcc100m-hnfc6", "lr", "sgd", "gpu"), gpu, data_on_gpu=True)


def test_invalid_requests() -> None:
    gpu = load_gpu()
    with pytest.raises(SpecError, match="mini-batch SGD"):
        predict_gpu(BaselineWorkload(65536, 4096, "lr", "admm", 8), gpu)
    with pytest.raises(SpecError, match="one process"):
        predict_gpu(BaselineWorkload(65536, 4096, "lr", "ga-sgd", 8, processes=2), gpu)
