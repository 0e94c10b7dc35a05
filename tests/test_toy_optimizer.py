"""The plug-in contract holds: an optimizer registered from a test module (``toy_optimizer``: MA-SGD under another
name, its files only) is accepted everywhere an optimizer name is, and it predicts, emulates and explores with
MA-SGD's results."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import toy_optimizer
from support import run_emulation

from pimmodel.api import predict
from pimmodel.specs import OPTIMIZERS, REGISTRY, YFCC, HyperParams, Workload, load_hardware, register, unregister


@pytest.fixture
def toy() -> Iterator[str]:
    register(toy_optimizer.INFO)
    try:
        yield toy_optimizer.INFO.name
    finally:
        unregister(toy_optimizer.INFO.name)


def test_registered_optimizer_is_an_optimizer(toy: str) -> None:
    assert toy in OPTIMIZERS and toy in REGISTRY and OPTIMIZERS[-1] == toy
    with pytest.raises(ValueError, match="already registered"):
        register(toy_optimizer.INFO)


def test_it_is_gone_after_unregister() -> None:
    assert "toy-sgd" not in OPTIMIZERS
    with pytest.raises(ValueError, match="built in"):
        unregister("ma-sgd")


def test_it_predicts(toy: str) -> None:
    hw = load_hardware("upmem-2556")
    for n in (256, 2048):
        mine = predict(Workload(YFCC, "lr", toy, n), hw, "breakdown").to_record()
        ref = predict(Workload(YFCC, "lr", "ma-sgd", n), hw, "breakdown").to_record()
        assert mine["optimizer"] == toy
        assert mine["per_epoch_s"] == ref["per_epoch_s"] and mine["per_epoch_bytes"] == ref["per_epoch_bytes"]


def test_it_emulates(toy: str) -> None:
    hyper = HyperParams(batch_size=4, global_batch_size=16, learning_rate_shift=4, reg_shift=10)
    mine = run_emulation("synthetic-yfcc", 2, "lr", toy, hyper, samples_per_dpu=8, features=512, seed=3)
    ref = run_emulation("synthetic-yfcc", 2, "lr", "ma-sgd", hyper, samples_per_dpu=8, features=512, seed=3)
    assert mine.trace["seconds"] == ref.trace["seconds"]
    assert mine.history == ref.history and mine.history
    assert mine.predicted["per_epoch_s"] == ref.predicted["per_epoch_s"]


def test_it_explores(toy: str, tmp_path: Path) -> None:
    from pimmodel.dse.objective import Evaluator
    from pimmodel.dse.space import from_mapping
    from pimmodel.dse.study import run, stored_trials

    def study(optimizer: str):  # type: ignore[no-untyped-def]
        return from_mapping({
            "study": {"name": f"toy-{optimizer}", "seed": 1, "batch": 4, "trials": 4},
            "workloads": {"datasets": ["yfcc100m-hnfc6"], "models": ["lr"], "optimizers": [optimizer]},
            "objective": [{"kind": "time_per_epoch", "dpus": 2048}, {"kind": "cost"}],
            "parameters": {"dpu_clock": {"field": "dpu_clock_hz", "low": 350, "high": 1000, "unit": "MHz"}}},
            "toy")

    points = [{"dpu_clock": 350.0}, {"dpu_clock": 700.0}]
    mine, ref = Evaluator(study(toy)).evaluate(points), Evaluator(study("ma-sgd")).evaluate(points)
    assert mine.values.tolist() == ref.values.tolist() and mine.values[1, 0] < mine.values[0, 0]
    url = f"journal://{tmp_path / 'toy.log'}"
    spec = study(toy)
    assert run(spec, url, trials=4, seed=1).added == 4
    assert len(stored_trials(spec, url)) == 4
