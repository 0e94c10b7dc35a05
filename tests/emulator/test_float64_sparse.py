"""float64 mode on sparse data runs the same algorithms and counts every gradient write-back (no -1 guards)."""

from __future__ import annotations

import pytest
from support import run_emulation

from pimmodel.specs import HyperParams


@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
def test_sparse_float64_trains_and_traces(optimizer: str) -> None:
    hyper = HyperParams(batch_size=64, global_batch_size=256, learning_rate_shift=0, reg_shift=12, admm_alpha_shift=6)
    run = run_emulation("synthetic-criteo", 4, "lr", optimizer, hyper, samples_per_dpu=256, features=20_000,
                        arithmetic="float64")
    assert 0.5 < run.history[0]["auc"] <= 1.0
    writes = run.trace["mram_wram_dma"]["write"]["count"]["max"]
    # LR: every one of the 39 slots of every sample is written back, plus the bias accumulator
    assert writes >= 256 * 40


def test_ma_and_ga_coincide_for_one_local_step_in_float64() -> None:
    # from the same start, averaging the models after one local step of b rows equals one step on the
    # averaged gradient of the global batch N*b: MA-SGD and GA-SGD must give the same model
    hyper = HyperParams(batch_size=64, global_batch_size=256, learning_rate_shift=0, reg_shift=12)
    kw = {"samples_per_dpu": 256, "features": 20_000, "arithmetic": "float64"}
    ma = run_emulation("synthetic-criteo", 4, "lr", "ma-sgd", hyper, **kw)
    ga = run_emulation("synthetic-criteo", 4, "lr", "ga-sgd", hyper, **kw)
    assert ma.history[0]["auc"] == pytest.approx(ga.history[0]["auc"], abs=1e-12)
