from __future__ import annotations

from dataclasses import replace

import pytest

from pimmodel.errors import CapacityError, SpecError
from pimmodel.kernels.capacity import check, footprint
from pimmodel.specs import CRITEO, YFCC, HyperParams, Workload


def test_rounds_per_epoch_match_the_study() -> None:
    # reference §3.3: MA-SGD weak scaling YFCC 3328/8 = 416, Criteo 196,608/2048 = 96; ADMM 1 per epoch
    assert Workload(YFCC, "lr", "ma-sgd", 2048).rounds_per_epoch == 416
    assert Workload(CRITEO, "lr", "ma-sgd", 2048).rounds_per_epoch == 96
    assert Workload(YFCC, "svm", "admm", 256).rounds_per_epoch == 1
    # GA-SGD: m / B = 6,815,744 / 8192 = 832 at 2048 DPUs (weak), 851,968 / 8192 = 104 at 256
    assert Workload(YFCC, "lr", "ga-sgd", 2048).rounds_per_epoch == 832
    assert Workload(YFCC, "lr", "ga-sgd", 256).rounds_per_epoch == 104
    # strong scaling: 851,968 / 2048 = 416 rows per DPU
    assert Workload(YFCC, "lr", "ma-sgd", 2048, scaling="strong").rows_per_dpu == 416


def test_study_footprints_fit_64_mib(upmem) -> None:
    # reference §2.3: YFCC ~56 MiB, Criteo ~50 MiB per DPU, both under 64 MiB
    yfcc = check(Workload(YFCC, "lr", "admm", 2048), upmem)
    criteo = check(Workload(CRITEO, "lr", "admm", 2048), upmem)
    assert 54 * 2**20 < yfcc.mram_bytes < 64 * 2**20
    assert 48 * 2**20 < criteo.mram_bytes < 64 * 2**20


def test_capacity_error_names_numbers_and_smallest_dpu_count(upmem) -> None:
    w = Workload(CRITEO, "lr", "ma-sgd", 64, scaling="strong")
    with pytest.raises(CapacityError, match=r"MiB.*use --dpus (\d+) or more") as info:
        check(w, upmem)
    n = int(info.value.args[0].rsplit("--dpus ", 1)[1].split()[0])
    ok = Workload(CRITEO, "lr", "ma-sgd", n, scaling="strong", hyper=HyperParams(64, 262144, 0, 12))
    assert footprint(ok).mram_bytes <= upmem.mram_bytes
    smaller = footprint(Workload(CRITEO, "lr", "ma-sgd", n - 1 if 50_331_648 % (n - 1) == 0 else 128,
                                 scaling="strong", hyper=HyperParams(64, 262144, 0, 12)))
    assert smaller.mram_bytes > upmem.mram_bytes


def test_wram_overflow_is_reported(upmem) -> None:
    big = YFCC.__class__(**{**{f: getattr(YFCC, f) for f in YFCC.__dataclass_fields__},
                            "name": "wide", "features": 65536, "nonzeros_per_row": 65536, "slots_per_row": 65536,
                            "rows_per_dpu_weak": 8, "strong_rows": 2048})
    with pytest.raises(CapacityError, match="WRAM"):
        check(Workload(big, "lr", "ma-sgd", 16), upmem)


@pytest.mark.parametrize("kwargs, message", [
    ({"dpus": 0}, "--dpus must be a positive"),
    ({"epochs": -1}, "--epochs must be a positive"),
    ({"model": "mlp"}, "unknown model"),
    ({"optimizer": "adam"}, 'did you mean "admm"'),
])
def test_bad_workloads(kwargs, message) -> None:
    args = {"dataset": YFCC, "model": "lr", "optimizer": "ma-sgd", "dpus": 256, **kwargs}
    with pytest.raises(SpecError, match=message):
        Workload(**args)


def test_batch_sizes_the_kernels_cannot_run() -> None:
    with pytest.raises(SpecError, match="--batch-size 7 must be a power of two"):
        Workload(YFCC, "lr", "ma-sgd", 256, hyper=HyperParams(7, 8192, 6, 12))
    with pytest.raises(SpecError, match="multiple of --dpus"):
        Workload(YFCC, "lr", "ga-sgd", 256, hyper=HyperParams(8, 1000, 6, 12))
    with pytest.raises(SpecError, match="exceeds the 3,328 rows per DPU"):
        Workload(YFCC, "lr", "ma-sgd", 256, hyper=HyperParams(4096, 8192, 6, 12))


def test_any_dpu_count_shards_like_a_host() -> None:
    """851,968 rows over 2,556 DPUs: 853 DPUs hold 334 rows, the others 333; the largest shard decides the epoch;
    at b = 8: ceil(334 / 8) = 42 rounds, the last one partial."""
    w = Workload(YFCC, "lr", "ma-sgd", 2556, scaling="strong")
    assert (w.rows_per_dpu, w.rounds_per_epoch, w.notes) == (334, 42, ())


def test_defaults_adapt_to_the_dpu_count() -> None:
    """GA-SGD at 1,000 DPUs: the study's B = 8,192 is no multiple of 1,000; B = 1,000 x round(8.192) = 8,000."""
    w = Workload(YFCC, "lr", "ga-sgd", 1000)
    assert w.hp.global_batch_size == 8000 and w.local_batch == 8
    assert w.notes == ("global batch 8,000 = 1,000 DPUs x 8 rows per round (the study's 8,192 made a multiple of "
                       "the DPU count)",)
    tiny = Workload(replace(YFCC, name="tiny", rows_per_dpu_weak=5), "svm", "ma-sgd", 3)
    assert tiny.hp.batch_size == 4 and "batch size 4 per DPU" in tiny.notes[0]
