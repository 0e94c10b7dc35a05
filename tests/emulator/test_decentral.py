"""The optimizers outside the study on emulated DPUs: exact equivalences (local-sgd and hier-sgd with H = 1 train
MA-SGD's model bit for bit, allreduce-sgd trains GA-SGD's), decentralized SGD's accuracy, and the fixed-point
gossip mixing's properties. Agreement between the emulator and the cost model is consistency, not hardware
evidence: no DPU-to-DPU link has been built."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import hardware_file, run_emulation, train_config

from pimmodel.emulator import fixedpoint as fx
from pimmodel.emulator.data import SyntheticDense, shard, synthetic_sparse
from pimmodel.emulator.links import gossip_graph, group_sum, mix, received_elements
from pimmodel.emulator.trainers import RunResult, train
from pimmodel.specs.optimizers import torus_shape

DPUS = 4


def _shards(layout: str, rows: int = 24):
    if layout == "dense":
        return SyntheticDense(DPUS, rows, 256, seed=3)
    idx, y = synthetic_sparse(DPUS * rows, 20_000, seed=3)
    return shard(idx, y, DPUS, "sparse", 20_000)


def _train(layout: str, model: str, optimizer: str, **cfg: object) -> RunResult:
    config = {"model": model, "optimizer": optimizer, "batch_size": 4, "global_batch_size": 4 * DPUS,
              "learning_rate_shift": 3, "reg_shift": 10, "epochs": 2, **cfg}
    return train(_shards(layout), train_config(**config))


def _same_models(a: RunResult, b: RunResult) -> None:
    assert len(a.epoch_weights) == len(b.epoch_weights) == 2
    for wa, wb in zip(a.epoch_weights, b.epoch_weights, strict=True):
        assert np.array_equal(wa.coef, wb.coef) and wa.intercept == wb.intercept
    assert np.any(a.weights.coef != 0)  # it trained


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("model", ["lr", "svm"])
def test_local_sgd_with_h_1_is_ma_sgd_bit_for_bit(layout: str, model: str) -> None:
    _same_models(_train(layout, model, "local-sgd", sync_every=1), _train(layout, model, "ma-sgd"))


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_local_sgd_history_and_predicted_phases_with_h_1_equal_ma_sgd(layout: str) -> None:
    """Through the public emulation: the same history (every metric of every epoch, bit for bit) and the same
    predicted per-epoch phases and rounds (up to floating-point rounding of two differently written equations)."""
    dense = layout == "dense"
    args = ("synthetic-yfcc" if dense else "synthetic-criteo", DPUS, "lr")
    options = {"epochs": 2, "samples_per_dpu": 24, "features": 256 if dense else 20_000}
    hyper = {"batch_size": 4, "learning_rate_shift": 3}
    local = run_emulation(*args, "local-sgd", {**hyper, "sync_every": 1}, **options)
    ma = run_emulation(*args, "ma-sgd", hyper, **options)
    assert local.history == ma.history
    assert local.predicted["rounds_per_epoch"] == ma.predicted["rounds_per_epoch"] == 6
    for phase, seconds in ma.predicted["per_epoch_s"].items():
        assert local.predicted["per_epoch_s"][phase] == pytest.approx(seconds, rel=1e-12, abs=0)
    assert local.predicted["per_epoch_bytes"] == ma.predicted["per_epoch_bytes"]


def test_local_sgd_averages_every_h_steps() -> None:
    """H = 4 over 6 steps per epoch: 2 rounds (4 + 2 steps), 2 launches, 2 model pulls per epoch; the model differs
    from MA-SGD's (it averages less often)."""
    res = run_emulation("synthetic-yfcc", DPUS, "lr", "local-sgd", {"batch_size": 4, "sync_every": 4}, epochs=1,
                        samples_per_dpu=24, features=256)
    assert res.trace["rounds"] == res.predicted["rounds_per_epoch"] == 2
    assert res.trace["launch"]["launches"] == 2
    pulls = res.trace["pim_to_host"]["calls"]
    assert sorted((c["bytes_per_dpu"], c["calls"]) for c in pulls) == [(8, 2), (4 * 256, 2)]


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_hier_sgd_with_h_1_through_the_host_is_ma_sgd_bit_for_bit(layout: str) -> None:
    """Every step is then a global average, which the host computes with MA-SGD's code (ranks of 2 DPUs)."""
    _same_models(_train(layout, "lr", "hier-sgd", sync_every=1, dpus_per_rank=2), _train(layout, "lr", "ma-sgd"))


def test_hier_sgd_rank_averages_differ_from_global_ones() -> None:
    """H = 3 with ranks of 2 DPUs: between global averages each rank keeps its own model, so the result differs
    from MA-SGD's, over links and through the host alike (the two round differently: a shift per DPU vs C's
    division of the sum)."""
    host = _train("dense", "lr", "hier-sgd", sync_every=3, dpus_per_rank=2)
    links = _train("dense", "lr", "hier-sgd", sync_every=3, dpus_per_rank=2, link_topology="in-rank")
    ma = _train("dense", "lr", "ma-sgd")
    assert not np.array_equal(host.weights.coef, ma.weights.coef)
    assert not np.array_equal(links.weights.coef, host.weights.coef)
    assert np.max(np.abs(links.weights.coef - host.weights.coef)) < 1e-3


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("topology", ["ring", "torus", "all-to-all"])
def test_allreduce_sgd_trains_ga_sgds_model_bit_for_bit(layout: str, topology: str) -> None:
    """The int64 partial sums are the host's sum exactly, and every DPU applies the host's update."""
    _same_models(_train(layout, "lr", "allreduce-sgd", link_topology=topology), _train(layout, "lr", "ga-sgd"))


def test_allreduce_sgd_history_equals_ga_sgd_and_its_time_excludes_the_host() -> None:
    options = {"epochs": 2, "samples_per_dpu": 24, "features": 256, "hardware": "pim-torus-hypothetical"}
    ar = run_emulation("synthetic-yfcc", DPUS, "lr", "allreduce-sgd", {"global_batch_size": 16}, **options)
    ga = run_emulation("synthetic-yfcc", DPUS, "lr", "ga-sgd", {"global_batch_size": 16}, **options)
    timeless = [[{k: v for k, v in h.items() if k != "emulated_wall_s"} for h in r.history] for r in (ar, ga)]
    assert timeless[0] == timeless[1] and ar.history[-1]["test_accuracy"] > 0.7
    assert ar.history[-1]["emulated_wall_s"] < ga.history[-1]["emulated_wall_s"]
    assert ar.trace["host_to_pim"]["bytes"] == ar.trace["pim_to_host"]["bytes"] == 0
    assert ar.trace["host_aggregate"]["bytes_streamed"] == 0 and ar.trace["launch"]["launches"] == 2
    assert ar.trace["links"]["exchanges"][0]["count"] == 12  # 6 rounds per epoch x 2 epochs


@pytest.mark.parametrize("hardware", ["pim-torus-hypothetical", "ring"])
def test_dpsgd_trains_within_two_points_of_ma_sgd(hardware: str) -> None:
    """LR on the synthetic YFCC-like data, 64 DPUs (an 8 x 8 torus, or a ring of 64), 4 epochs, the default
    (adapted) hyper-parameters: the averaged decentralized model's test accuracy is within 2 points of MA-SGD's."""
    hw = "pim-torus-hypothetical" if hardware != "ring" else str(hardware_file("ring"))
    options = {"epochs": 4, "samples_per_dpu": 64, "features": 256, "seed": 0}
    ma = run_emulation("synthetic-yfcc", 64, "lr", "ma-sgd", None, **options)
    dp = run_emulation("synthetic-yfcc", 64, "lr", "dpsgd", None, **options, hardware=hw)
    final_ma, final_dp = ma.history[-1]["test_accuracy"], dp.history[-1]["test_accuracy"]
    assert final_ma > ma.history[-1]["majority_baseline"] + 0.3  # both really learned
    assert abs(final_dp - final_ma) <= 0.02
    assert dp.trace["host_to_pim"]["bytes"] == dp.trace["pim_to_host"]["bytes"] == 0
    assert dp.trace["launch"]["launches"] == 4


# ---------------------------------------------------------------- the gossip mixing and the group sums
def test_gossip_graphs_are_regular() -> None:
    """Every DPU is the neighbour of exactly k others (ring k = 2, torus k = 4): the dyadic mixing matrix
    (1/2 self, 1/2k each neighbour) is symmetric and doubly stochastic."""
    for n in (3, 7, 16, 60, 64):
        for topology, k in (("ring", 2), ("torus", 4)):
            graph = gossip_graph(topology, n)
            assert graph.shape == (n, k)
            assert np.array_equal(np.bincount(graph.ravel(), minlength=n), np.full(n, k))
    assert torus_shape(2048) == (32, 64) and torus_shape(64) == (8, 8) and torus_shape(13) == (1, 13)
    assert sorted(gossip_graph("torus", 16)[5]) == [1, 4, 6, 9]  # (1, 1) on a 4 x 4 torus


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), topology=st.sampled_from(["ring", "torus"]), seed=st.integers(0, 2**32 - 1))
def test_fixed_point_mixing_lowers_the_average_by_at_most_k_units(n: int, topology: str, seed: int) -> None:
    """Arithmetic shifts round down: per weight, the average over the DPUs never rises and falls by at most k Q31
    units (1/2 + k (2k - 1) / 2k = k per DPU); the float64 mix keeps it to rounding."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-fx.HIGHEST, fx.HIGHEST, size=(n, 5), endpoint=True, dtype=np.int64)
    graph = gossip_graph(topology, n)
    k = graph.shape[1]
    drop = w.sum(axis=0) - mix(w, graph, fixed=True).sum(axis=0)
    assert np.all(drop >= 0) and np.all(drop <= k * n)
    real = w / fx.ONE
    np.testing.assert_allclose(mix(real, graph, fixed=False).mean(axis=0), real.mean(axis=0), rtol=0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(value=st.integers(-(2**27), 2**27), n=st.integers(3, 20), topology=st.sampled_from(["ring", "torus"]))
def test_a_consensus_divisible_by_2k_is_a_fixed_point(value: int, n: int, topology: str) -> None:
    k = 2 if topology == "ring" else 4
    w = np.full((n, 3), value * 2 * k, dtype=np.int64)
    assert np.array_equal(mix(w, gossip_graph(topology, n), fixed=True), w)


def test_group_sums_are_exact_and_count_the_received_chunks() -> None:
    w = np.arange(8 * 10, dtype=np.int64).reshape(8, 10) * (2**31 - 1) // 80
    sums = group_sum(w, 4)
    assert sums.dtype == np.int64 and np.array_equal(sums, [w[:4].sum(0), w[4:].sum(0)])
    # 10 elements in 4 chunks of 3, 3, 2, 2: the DPU at position p receives every chunk but chunk p
    assert received_elements(8, 4, 10).tolist() == [7, 7, 8, 8, 7, 7, 8, 8]
    assert received_elements(4, 4, 512).tolist() == [384] * 4  # (G - 1) d / G
