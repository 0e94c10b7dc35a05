"""The CPU baseline model: its closed form on a hand-computed case, and its behaviour on the study's runs."""

from __future__ import annotations

import json
import math

import pytest

from pimmodel.baselines import BaselineWorkload, load_cpu, predict_cpu, study_workload
from pimmodel.baselines.cpu import dram_bytes_per_s, exchange_s, llc_share_bytes, memory_level
from pimmodel.baselines.specs import CpuSpec
from pimmodel.errors import SpecError


@pytest.fixture
def simple_cpu() -> CpuSpec:
    """A made-up machine with round numbers, running the numpy reference (no data-loader copy)."""
    return load_cpu().replace(
        name="simple", implementation="numpy-reference", sockets=1, cores_per_socket=4, l2_bytes=1024**2,
        llc_bytes=8 * 1024**2, llc_cores_per_group=4, llc_bytes_per_s=20e9, dram_peak_bytes_per_s=10e9,
        dram_sustained_fraction=1.0, dram_core_bytes_per_s=8e9, matvec_flops_per_s=10e9, vector_bytes_per_s=20e9,
        sign_bytes_per_s=10e9, ma_sgd_lr_step_s=10e-6, index_op_s=1e-6, sync_algorithm="shared-memory",
        sync_latency_s=5e-6, sync_bytes_per_s=1e9, sync_call_s=0.0)


def test_closed_form_by_hand(simple_cpu: CpuSpec) -> None:
    # 65,536 rows x 1,024 features, MA-SGD LR, batch 8, 2 processes on the made-up machine above.
    # shard: 32,768 rows x 4,100 B = 134,348,800 B > the 4 MiB LLC share -> DRAM at min(8, 10/2) = 5 GB/s
    # steps: 32,768 / 8 = 4,096
    # dispatch 10 us
    # forward 2*8*1024 / 10e9 = 1.6384 us; compute = 2 * 1.6384 + 28 B * 1,025 / 20e9 = 3.2768 + 1.435 = 4.7118 us
    # memory = 8 * 4,100 / 5e9 - 1.6384 = 6.56 - 1.6384 = 4.9216 us
    # sync = 5 us + 1,025 * 4 B / 1e9 = 5 + 4.1 = 9.1 us
    # epoch = 4,096 * (10 + 4.7118 + 4.9216 + 9.1) us = 4,096 * 28.7334 us = 0.117692 s
    w = BaselineWorkload(rows=65536, features=1024, model="lr", optimizer="ma-sgd", batch_size=8, processes=2)
    p = predict_cpu(w, simple_cpu)
    assert p.steps_per_epoch == 4096
    assert p.per_epoch_s["dispatch"] == pytest.approx(4096 * 10e-6)
    assert p.per_epoch_s["compute"] == pytest.approx(4096 * 4.7118e-6)
    assert p.per_epoch_s["memory"] == pytest.approx(4096 * 4.9216e-6)
    assert p.per_epoch_s["sync"] == pytest.approx(4096 * 9.1e-6)
    assert p.epoch_s == pytest.approx(0.11769201, rel=1e-6)
    assert p.total_s == pytest.approx(10 * 0.11769201, rel=1e-6) and p.combine == "sum"


def test_memory_levels(simple_cpu: CpuSpec) -> None:
    assert memory_level(simple_cpu, 512 * 1024, 1).name == "l2"
    assert llc_share_bytes(simple_cpu, 2) == 4 * 1024**2
    assert memory_level(simple_cpu, 3 * 1024**2, 2).name == "llc"
    assert memory_level(simple_cpu, 64 * 1024**2, 2).name == "dram"
    assert dram_bytes_per_s(simple_cpu, 1) == 8e9 and dram_bytes_per_s(simple_cpu, 4) == 2.5e9


def test_ring_allreduce_closed_form() -> None:
    cpu = load_cpu()  # ring: call 20 us, 15 us per step, 2 GB/s
    assert exchange_s(cpu, 16384.0, 1) == 0.0
    expected = 20e-6 + 2 * 127 * (15e-6 + 16384 / (128 * 2e9))
    assert exchange_s(cpu, 16384.0, 128) == pytest.approx(expected)


@pytest.mark.parametrize("dataset", ["yfcc100m-hnfc6", "criteo-1tb"])
@pytest.mark.parametrize("model", ["lr", "svm"])
@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
def test_study_runs(dataset: str, model: str, optimizer: str) -> None:
    p = predict_cpu(study_workload(dataset, model, optimizer), load_cpu())
    record = json.loads(json.dumps(p.to_record()))
    assert set(record["per_epoch_s"]) == {"compute", "memory", "sync", "dispatch", "total"}
    assert all(math.isfinite(v) and v >= 0 for v in record["per_epoch_s"].values())
    assert record["per_epoch_s"]["total"] == pytest.approx(sum(v for k, v in record["per_epoch_s"].items()
                                                               if k != "total"))
    assert record["assumptions"] and record["workload"]["processes"] == 128
    # `baseline measure` runs the study's PyTorch loop with gloo's ring here, but on 2 processes and dense data
    assert record["validated"] is False and "NOT validated" in record["validation"]
    assert {k: v["run_here"] for k, v in record["structure"].items()} == {
        "implementation": True, "exchange": True, "processes": False, "layout": dataset == "yfcc100m-hnfc6"}
    assert "sync.latency_us" in record["assumed_constants"]


def test_a_structure_run_here_is_validated() -> None:
    """The numpy reference with its shared-memory exchange on 2 processes, dense: what `baseline measure` runs."""
    from pimmodel.baselines import BaselineWorkload
    from pimmodel.baselines import load_cpu as load
    spec = load().replace(implementation="numpy-reference", sync_algorithm="shared-memory")
    w = BaselineWorkload(rows=4096, features=64, model="lr", optimizer="ma-sgd", batch_size=8, processes=2)
    p = predict_cpu(w, spec)
    assert p.validated and all(v["run_here"] for v in p.structure.values()) and p.interval is None
    assert not predict_cpu(BaselineWorkload(rows=4096, features=64, model="lr", optimizer="ma-sgd", batch_size=8,
                                            processes=4), spec).validated  # 4 processes never ran here


def test_the_interval_spans_the_gloo_latency_range() -> None:
    """The epoch at 5 and 50 us per ring step, by the ring formula: the sync phase moves by 2 (p - 1) x the
    latency difference per all-reduce, everything else stays."""
    from pimmodel.baselines.cpu import GLOO_LATENCY_RANGE_S, implementation_of
    spec = load_cpu()
    w = study_workload("yfcc100m-hnfc6", "lr", "ma-sgd")
    p = predict_cpu(w, spec)
    assert p.interval is not None and p.interval["range"] == [5.0, 50.0]
    low, high = p.interval["epoch_s"]
    calls = len(implementation_of(spec).exchange_vectors["dense/ma-sgd"]) * p.steps_per_epoch
    per_call = 2 * (w.processes - 1)
    assert low == pytest.approx(p.epoch_s - calls * per_call * (spec.sync_latency_s - GLOO_LATENCY_RANGE_S[0]))
    assert high == pytest.approx(p.epoch_s + calls * per_call * (GLOO_LATENCY_RANGE_S[1] - spec.sync_latency_s))
    assert low < p.epoch_s < high


def test_study_structure() -> None:
    cpu = load_cpu()
    ma = predict_cpu(study_workload("yfcc100m-hnfc6", "lr", "ma-sgd"), cpu)
    ga = predict_cpu(study_workload("yfcc100m-hnfc6", "lr", "ga-sgd"), cpu)
    admm = predict_cpu(study_workload("yfcc100m-hnfc6", "lr", "admm"), cpu)
    assert ma.steps_per_epoch == 6_815_744 // 128 // 8 and ga.steps_per_epoch == 6_815_744 // 128 // 64
    assert ma.bottleneck == "sync" and admm.per_epoch_s["sync"] < 0.01 * admm.epoch_s
    assert admm.epoch_s < ga.epoch_s < ma.epoch_s  # ADMM exchanges once per epoch, MA-SGD every step
    criteo = predict_cpu(study_workload("criteo-1tb", "lr", "ma-sgd"), cpu)
    assert criteo.workload["layout"] == "sparse" and criteo.per_epoch_s["memory"] > 0


def test_more_processes_less_work_each(simple_cpu: CpuSpec) -> None:
    w1 = BaselineWorkload(rows=65536, features=1024, model="svm", optimizer="admm", batch_size=8, processes=1)
    w4 = BaselineWorkload(rows=65536, features=1024, model="svm", optimizer="admm", batch_size=8, processes=4)
    assert predict_cpu(w4, simple_cpu).per_epoch_s["compute"] < predict_cpu(w1, simple_cpu).per_epoch_s["compute"]


def test_invalid_requests(simple_cpu: CpuSpec) -> None:
    sparse = study_workload("criteo-1tb", "lr", "ma-sgd")
    with pytest.raises(SpecError, match="no sparse path"):
        predict_cpu(sparse, simple_cpu)
    with pytest.raises(SpecError, match="exceed the 4 cores"):
        predict_cpu(BaselineWorkload(65536, 1024, "lr", "ma-sgd", 8, processes=8), simple_cpu)
    with pytest.raises(SpecError, match="positive whole number"):
        BaselineWorkload(65536, 0, "lr", "ma-sgd", 8)
    with pytest.raises(SpecError, match="nonzeros_per_row"):
        BaselineWorkload(65536, 1024, "lr", "ma-sgd", 8, layout="sparse")
    with pytest.raises(SpecError, match="unknown optimizer"):
        BaselineWorkload(65536, 1024, "lr", "adam", 8)
    with pytest.raises(SpecError, match="GPU baseline on YFCC100M-HNfc6 only"):
        study_workload("criteo-1tb", "lr", "sgd", "gpu")
