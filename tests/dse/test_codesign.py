"""Searching the optimizer, its H or gossip topology and the hardware together: the study file's algorithm
parameters, the time-to-target objective over a convergence table, and the links / target constraints."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from support import raw_floats

from pimmodel.dse.convergence import Convergence, StandIn, Variant, load_table, variants
from pimmodel.dse.objective import Evaluator
from pimmodel.dse.space import from_mapping
from pimmodel.errors import StudyError
from pimmodel.phases import in_view, total
from pimmodel.specs import REGISTRY, YFCC, Workload, load_hardware

STAND_IN = StandIn(epochs=2, checkpoints=2)
CURVES = {  # metric after 1/2, 1, 3/2, 2 epochs
    "ma-sgd/H1/-": [0.6, 0.8, 0.9, 0.9],
    "local-sgd/H4/-": [0.55, 0.7, 0.85, 0.88],
    "dpsgd/H1/torus": [0.7, 0.85, 0.9, 0.9],
    "dpsgd/H1/ring": [0.52, 0.6, 0.7, 0.75],  # never reaches 0.99 x 0.9
}
TABLE = Convergence(STAND_IN, {f"yfcc100m-hnfc6/lr/{k}": v for k, v in CURVES.items()},
                    {"yfcc100m-hnfc6": "accuracy"})
STUDY = {
    "study": {"name": "t", "trials": 10, "batch": 10},
    "workloads": {"datasets": ["yfcc100m-hnfc6"], "models": ["lr"]},
    "objective": [{"kind": "time_to_target", "dpus": 2048, "target": 0.99}, {"kind": "cost"}],
    "parameters": {"optimizer": {"choices": ["ma-sgd", "local-sgd", "dpsgd"]},
                   "sync_every": {"choices": [1, 4]},
                   "link_topology": {"choices": ["none", "ring", "torus"]}},
}


def test_epochs_to_target_interpolates_between_checkpoints() -> None:
    """target 0.99 x 0.9 = 0.891: MA-SGD's curve passes it between 1 epoch (0.8) and 1.5 (0.9): 1 + 0.5 x 0.91 =
    1.455 epochs; from the untrained 0.5 to 0.6 at half an epoch, 0.55 is reached at 0.25 epochs."""
    ma = Variant("yfcc100m-hnfc6", "lr", "ma-sgd")
    assert TABLE.target("yfcc100m-hnfc6", "lr", 0.99) == pytest.approx(0.891)
    assert TABLE.epochs_to(ma, 0.891) == pytest.approx(1.455)
    assert TABLE.epochs_to(ma, 0.55) == pytest.approx(0.25)
    assert math.isinf(TABLE.epochs_to(Variant("yfcc100m-hnfc6", "lr", "dpsgd", 1, "ring"), 0.891))
    # local-sgd with H = 1 and allreduce-sgd share MA-SGD's and GA-SGD's curves (they train the same models)
    assert TABLE.curve(Variant("yfcc100m-hnfc6", "lr", "local-sgd", 1)) == CURVES["ma-sgd/H1/-"]


def test_time_to_target_is_epochs_times_the_picked_optimizers_epoch() -> None:
    spec = from_mapping(STUDY, "t")
    assert {c.optimizer for c in spec.workloads} == {"ma-sgd", "local-sgd", "dpsgd"}
    ev = Evaluator(spec, convergence=TABLE)
    assert ev.constraint_names == ["memory", "links", "target"]
    points = [{"optimizer": "ma-sgd", "sync_every": 4, "link_topology": "none"},
              {"optimizer": "local-sgd", "sync_every": 4, "link_topology": "none"},
              {"optimizer": "dpsgd", "sync_every": 1, "link_topology": "torus"},
              {"optimizer": "dpsgd", "sync_every": 1, "link_topology": "none"},
              {"optimizer": "dpsgd", "sync_every": 4, "link_topology": "ring"}]
    scores = ev.evaluate(points)
    hw = load_hardware("upmem-2556")

    def epoch_s(optimizer: str, topology: str, **hyper: int) -> float:
        w = Workload(YFCC, "lr", optimizer, 2048, epochs=1)
        if hyper:
            w = w.with_(hyper=replace(w.hp, **hyper))
        return float(total(in_view(raw_floats(w, hw.replace(link_topology=topology)), "wall")))

    assert scores.values[0, 0] == pytest.approx(1.455 * epoch_s("ma-sgd", "none"), rel=1e-9)
    # local-sgd H = 4 never reaches 0.891 within the 2 epochs: twice the epochs as a penalty, and infeasible
    assert scores.values[1, 0] == pytest.approx(4 * epoch_s("local-sgd", "none", sync_every=4), rel=1e-9)
    # dpsgd on the torus: 0.891 between 1 (0.85) and 1.5 epochs (0.9): 1 + 0.5 x 41/50
    assert scores.values[2, 0] == pytest.approx((1 + 0.5 * 0.041 / 0.05) * epoch_s("dpsgd", "torus"), rel=1e-9)
    memory, links, target = scores.constraints.T
    assert links.tolist() == [-1, -1, -1, 1, -1] and target.tolist() == [-1, 1, -1, -1, 1]
    assert scores.feasible().tolist() == [True, False, True, False, False]
    assert np.all(memory < 0) and np.all(np.isfinite(scores.values))


def test_algorithm_parameters_are_checked() -> None:
    bad_pick = {**STUDY, "parameters": {"optimizer": {"choices": ["ma-sgd", "adam"]}}}
    with pytest.raises(StudyError, match="unknown optimizer 'adam'"):
        from_mapping(bad_pick, "t")
    both = {**STUDY, "workloads": {"optimizers": ["ma-sgd"]}}
    with pytest.raises(StudyError, match="the optimizer is searched"):
        from_mapping(both, "t")
    with pytest.raises(StudyError, match="sync_every choices must be positive whole numbers"):
        from_mapping({**STUDY, "parameters": {"sync_every": {"choices": [0, 4]}}}, "t")
    with pytest.raises(StudyError, match=r"objective\[1\].target = 1.5 is out of range; use a number in \(0, 1\]"):
        from_mapping({**STUDY, "objective": [{"kind": "time_to_target", "target": 1.5}]}, "t")


def test_the_shipped_table_holds_every_variant_the_study_can_pick() -> None:
    table = load_table()
    workloads = {tuple(k.split("/")[:2]) for k in table.curves}
    assert workloads == {(d, m) for d in ("yfcc100m-hnfc6", "criteo-1tb") for m in ("lr", "svm")}
    per_epoch = table.stand_in.checkpoints * table.stand_in.epochs
    for v in variants(["yfcc100m-hnfc6", "criteo-1tb"], ["lr", "svm"]):
        curve = table.curve(v)
        assert len(curve) == per_epoch and all(0.0 <= x <= 1.0 for x in curve)
    assert set(REGISTRY) == {v.optimizer for v in variants(["criteo-1tb"], ["lr"])}
