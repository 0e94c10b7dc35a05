"""K-means (upmem/dpu_kmeans @ df30f5c): sizing, the fixed-point emulator against scikit-learn and brute force,
the model against the emulator (consistency: the same events priced the same way), the validation rows."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from pimmodel.costmodel import kmeans as KMC
from pimmodel.emulator import kmeans as KME
from pimmodel.kernels import kmeans as KM
from pimmodel.specs import load_hardware
from pimmodel.specs.families import parse_count

HW = load_hardware("upmem-2556")


def test_sizes_follow_the_host_code() -> None:
    # src/main.cpp:95-96: ceil(points / (8 dpus)) * 8; 25.6M / 2,040 DPUs -> ceil(1568.63) * 8
    assert KM.KmeansShape(25_600_000, 16, 16, 2040).points_per_dpu == 1569 * 8
    # get_task_size (dimm_manager.c:165-200) by hand: 16 dims -> 256 int16 / 16 = 16 points of 512 B
    big = KM.KmeansShape(25_600_000, 16, 16, 256)
    assert (big.task_points, big.task_bytes) == (16, 512)
    # 28 dims: 9 points (504 B, a multiple of lcm(56, 8) = 56)
    higgs = KM.KmeansShape(11_000_000, 28, 2, 256)
    assert (higgs.task_points, higgs.task_bytes) == (9, 504)
    # 1,000 points on 64 DPUs: 16 per DPU, 16 tasks of 1 point (32 B)
    small = KM.KmeansShape(1000, 16, 16, 64)
    assert (small.points_per_dpu, small.task_points, small.task_bytes) == (16, 1, 32)
    assert sum(small.real_points()) == 1000 and small.real_points()[-1] == 0


def test_limits_are_refused() -> None:
    assert "ASSUMED_NR_FEATURES" in KM.fits(KM.KmeansShape(100, 64, 4, 1))
    assert "ASSUMED_NR_CLUSTERS" in KM.fits(KM.KmeansShape(100, 4, 33, 1))
    assert "MAX_FEATURE_DPU" in KM.fits(KM.KmeansShape(10_000_000, 16, 4, 1))
    assert KM.fits(KM.KmeansShape(25_600_000, 16, 16, 256)) == ""


def test_counts_parse() -> None:
    assert parse_count("25.6M", "--points") == 25_600_000
    assert parse_count("100k", "--points") == 100_000
    assert parse_count("1_000", "--points") == 1000
    with pytest.raises(Exception, match="--points"):
        parse_count("2.5", "--points")


def test_assignment_is_the_kernels_integer_arithmetic() -> None:
    rng = np.random.default_rng(1)
    block = rng.integers(-15000, 15000, size=(40, 5)).astype(np.int16)
    centers = rng.integers(-15000, 15000, size=(7, 5)).astype(np.int16)
    labels, dist, updates = KME._assign(block, centers)
    for i, p in enumerate(block):
        best, best_d, improved = -1, 2 ** 64, 0
        for k, c in enumerate(centers):
            d = 0
            for a, b in zip(p.tolist(), c.tolist(), strict=True):
                diff = ((a - b + 32768) % 65536) - 32768  # int_feature diff wraps to int16
                d += diff * diff
            if d < best_d:
                best, best_d, improved = k, d, improved + 1
        assert (labels[i], int(dist[i]), updates[i]) == (best, best_d, improved)


def test_chunked_assignment_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    block = rng.integers(-9000, 9000, size=(50, 3)).astype(np.int16)
    centers = rng.integers(-9000, 9000, size=(4, 3)).astype(np.int16)
    whole = KME._assign(block, centers)
    monkeypatch.setattr(KME, "CHUNK_POINTS", 7)
    for a, b in zip(whole, KME._assign(block, centers), strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("name,k", [("iris", 3), ("wine", 3)])
def test_inertia_within_one_percent_of_scikit_learn(name: str, k: int) -> None:
    datasets = pytest.importorskip("sklearn.datasets")
    cluster = pytest.importorskip("sklearn.cluster")
    x = getattr(datasets, f"load_{name}")().data
    for seed in range(3):
        init = x[np.random.RandomState(seed).permutation(len(x))[:k]]
        run = KME.train_kmeans(x, k, 4, HW, init=init)
        ref = cluster.KMeans(k, init=init, n_init=1, max_iter=300, tol=1e-4, algorithm="lloyd").fit(x)
        assert run.inertia == pytest.approx(ref.inertia_, rel=0.01)


def test_n_init_keeps_the_best_restart() -> None:
    x = KME.blobs(600, 3, 4, seed=2)
    run = KME.train_kmeans(x, 4, 2, HW, n_init=4, seed=3)
    assert len(run.restarts) == 4
    assert run.inertia == min(r["inertia"] for r in run.restarts)


def test_model_reconciles_with_the_emulator() -> None:
    """Consistency (NOT evidence about hardware): the model fed the emulator's running-minimum updates prices the
    same per-iteration and one-off phases as the emulator's own events."""
    x = KME.blobs(3000, 8, 6, seed=0)
    run = KME.train_kmeans(x, 6, 8, HW, seed=0)
    model = KMC.evaluate(run.shape, HW, run.events["updates_busiest_per_point"],
                         run.events["inertia_updates_busiest_per_point"])
    for phase in (*KMC.ITERATION_PHASES, *KMC.ONCE):
        assert run.phases[phase] == pytest.approx(model[phase], rel=1e-9), phase


def test_equations_are_sympy_over_named_symbols() -> None:
    exprs = KMC.equations()
    assert set(exprs) == set(KMC.ITERATION_PHASES) | set(KMC.ONCE)
    names = {s.name for s in exprs["dpu_compute"].free_symbols}
    assert {"points", "clusters", "dims", "dpu_clock_hz"} <= names
    shape = KM.KmeansShape(1_000_000, 16, 16, 64)
    values = {**KMC.problem_values(shape), **HW.numeric()}
    direct = float(exprs["pim_to_host"].subs({sympy.Symbol(n, positive=True): v for n, v in values.items()
                                             if n in KMC.KMEANS_SYMBOLS}).subs(
        {s: values[s.name] for s in exprs["pim_to_host"].free_symbols if s.name in values}))
    assert direct == pytest.approx(KMC.evaluate(shape, HW)["pim_to_host"], rel=1e-12)


def test_compute_grows_with_the_work() -> None:
    a = KMC.evaluate(KM.KmeansShape(1_024_000, 16, 16, 64), HW)["dpu_compute"]
    b = KMC.evaluate(KM.KmeansShape(2_048_000, 16, 16, 64), HW)["dpu_compute"]
    assert b / a == pytest.approx(2.0, rel=0.01)
    half = KMC.evaluate(KM.KmeansShape(1_024_000, 8, 16, 64), HW)["dpu_compute"]
    assert 0.4 < half / a < 0.6  # the distance terms dominate: about half the work at half the dims


def test_run_times_compose_the_phases() -> None:
    ph = {p: 1.0 for p in (*KMC.ITERATION_PHASES, *KMC.ONCE)}
    t = KM.run_times(ph, 4)
    assert t["kernel"] == 4 * 3 + 1  # compute + DMA + launch per iteration, plus the inertia launch
    assert t["inter_core"] == 4 * 3 + 2
    assert t["per_iteration"] == (13 + 14) / 4


def test_scaling_study_runs_each_change(tmp_path) -> None:
    from pimmodel.families import scaling_study, study_markdown

    study = tmp_path / "s.toml"
    study.write_text('name = "t"\ndpus = [64, 128]\n[workload]\npoints = 1_000_000\nweak_points_per_dpu = 10_000\n'
                     'dims = 8\nclusters = 4\niterations = 3\n[[change]]\nname = "2x clock"\n'
                     'scale = { dpu_clock_hz = 2.0 }\n')
    out = scaling_study(study)
    base, fast = out["rows"]
    assert base["change"] == "baseline"
    # the iteration is nearly all DPU compute: twice the clock, about half the time
    assert fast["strong_per_iteration_s"][0] == pytest.approx(base["strong_per_iteration_s"][0] / 2, rel=0.05)
    assert "2x clock" in study_markdown(out)
    study.write_text('dpus = [64]\n[workload]\npoints = 1\n[[change]]\nname = "x"\nscale = { nope = 2.0 }\n')
    with pytest.raises(Exception, match="nope|not a K-means study"):
        scaling_study(study)
