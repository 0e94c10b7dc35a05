"""Objectives and constraints, scored through Optuna's FixedTrial and directly on batches."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pimmodel.api import predict
from pimmodel.dse.objective import Evaluator
from pimmodel.dse.space import from_mapping
from pimmodel.dse.study import objective_function
from pimmodel.specs import YFCC, Workload, load_hardware

BASE = {"dpu_clock": 350.0, "mram": 64, "multiplier": "software",
        "push_bandwidth": load_hardware("upmem-2556").push_bytes_per_s_per_rank / 1e9,  # the baseline's (GB/s)
        "link_topology": "none", "link_bandwidth": 1.0}


@pytest.fixture(scope="module")
def evaluator(small):  # type: ignore[no-untyped-def]
    return Evaluator(small)


def test_fixed_trial_at_the_baseline_matches_predict(evaluator) -> None:  # type: ignore[no-untyped-def]
    """The baseline point scores the geometric mean of the two workloads' predicted epoch times, cost 1."""
    trial = optuna.trial.FixedTrial(BASE)
    time_s, cost = objective_function(evaluator)(trial)
    hw = load_hardware("upmem-2556")
    times = [predict(Workload(YFCC, "lr", o, 2048, epochs=1), hw).per_epoch_total_s for o in ("ma-sgd", "admm")]
    assert time_s == pytest.approx(float(np.sqrt(times[0] * times[1])), rel=1e-9)
    assert cost == pytest.approx(1.0)
    assert all(c <= 0 for c in trial.constraints.values()) if hasattr(trial, "constraints") else True


def test_fixed_trial_faster_clock_and_multiplier(evaluator) -> None:  # type: ignore[no-untyped-def]
    base_time, base_cost = objective_function(evaluator)(optuna.trial.FixedTrial(BASE))
    fast = {**BASE, "dpu_clock": 700.0, "multiplier": "native"}
    time_s, cost = objective_function(evaluator)(optuna.trial.FixedTrial(fast))
    assert time_s < base_time / 2  # 2x clock alone halves DPU compute; the multiplier removes most of the rest
    assert cost > base_cost


def test_broadcast_parameter_speeds_up_ma_sgd_only(evaluator) -> None:  # type: ignore[no-untyped-def]
    """The study's ``broadcast`` choice sets ``broadcast_identical_pushes``: MA-SGD's model push gets the
    broadcast bandwidth, ADMM's per-DPU pushes do not change; it carries no cost weight."""
    spec = from_mapping({**_SMALL_BROADCAST}, "broadcast")
    ev = Evaluator(spec)
    scores = ev.evaluate([{"broadcast": 0}, {"broadcast": 1}])
    ma, admm = ([c.optimizer for c in spec.workloads].index(o) for o in ("ma-sgd", "admm"))
    assert scores.epoch_s[1, ma] < scores.epoch_s[0, ma]
    assert scores.epoch_s[1, admm] == scores.epoch_s[0, admm]
    assert scores.values[0, 1] == scores.values[1, 1] == pytest.approx(1.0)


_SMALL_BROADCAST = {
    "study": {"name": "broadcast", "seed": 1, "batch": 4},
    "workloads": {"datasets": ["yfcc100m-hnfc6"], "models": ["lr"], "optimizers": ["ma-sgd", "admm"]},
    "objective": [{"kind": "time_per_epoch"}, {"kind": "cost"}],
    "parameters": {"broadcast": {"field": "broadcast_identical_pushes", "choices": [0, 1]}},
}


def test_mram_too_small_is_infeasible(evaluator) -> None:  # type: ignore[no-untyped-def]
    scores = evaluator.evaluate([BASE, {**BASE, "mram": 1}])
    assert list(scores.feasible()) == [True, False]
    assert evaluator.constraint_names == ["memory", "cost"]


def test_batch_equals_one_by_one(evaluator) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    points = [{**BASE, "dpu_clock": float(rng.uniform(350, 1000)), "link_topology": str(rng.choice(["none", "ring"])),
               "push_bandwidth": float(rng.uniform(6.68, 60))} for _ in range(12)]
    batch = evaluator.evaluate(points)
    single = np.vstack([evaluator.evaluate([p]).values for p in points])
    np.testing.assert_allclose(batch.values, single, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(clock=st.floats(350, 1000), factor=st.floats(1.0, 8.0))
def test_more_host_bandwidth_never_slower(small, clock: float, factor: float) -> None:  # type: ignore[no-untyped-def]
    ev = _EVALUATORS.setdefault("small", Evaluator(small))
    a = {**BASE, "dpu_clock": clock, "push_bandwidth": 6.68}
    b = {**a, "push_bandwidth": 6.68 * factor}
    values = ev.evaluate([a, b]).values
    assert values[1, 0] <= values[0, 0] * (1 + 1e-12)


_EVALUATORS: dict[str, Evaluator] = {}


def test_objective_kinds_and_geometric_mean() -> None:
    spec = from_mapping({
        "study": {"name": "kinds"},
        "workloads": {"datasets": ["yfcc100m-hnfc6"], "models": ["svm"], "optimizers": ["ma-sgd", "ga-sgd"]},
        "objective": [{"kind": k} for k in ("time_per_epoch", "speedup", "strong_scaling_efficiency",
                                             "weak_scaling_growth", "energy_per_epoch")],
        "parameters": {"dpu_clock": {"field": "dpu_clock_hz", "low": 350, "high": 700, "unit": "MHz"}},
    }, "inline")
    ev = Evaluator(spec)
    values = ev.evaluate([{"dpu_clock": 350.0}, {"dpu_clock": 700.0}]).values
    time_s, speedup, efficiency, growth, energy = values.T
    assert speedup[0] == pytest.approx(1.0)
    assert speedup[1] > 1.3 and time_s[1] < time_s[0]
    assert 0 < efficiency[0] <= 1.0 and growth[0] >= 1.0
    hw = load_hardware("upmem-2556")
    p = [predict(Workload(YFCC, "svm", o, 2048, epochs=1), hw) for o in ("ma-sgd", "ga-sgd")]
    host = [sum(x.per_epoch_s[k] for k in ("host_to_pim", "pim_to_host", "host_aggregate")) for x in p]
    e = [2048 * hw.power_per_dpu_w * x.per_epoch_total_s + hw.host_power_w * h for x, h in zip(p, host, strict=True)]
    assert energy[0] == pytest.approx(float(np.sqrt(e[0] * e[1])), rel=1e-9)


def test_every_objective_kind_has_a_score() -> None:
    """The objectives' registry (``objective.SCORES``) and the kinds a study file may name are the same set."""
    from pimmodel.dse.objective import SCORES
    from pimmodel.dse.space import OBJECTIVE_UNITS, OBJECTIVES

    assert set(SCORES) == set(OBJECTIVES) == set(OBJECTIVE_UNITS)
