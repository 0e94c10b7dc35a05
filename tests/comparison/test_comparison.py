"""The study comparison (``pimmodel.comparison``, ``pimmodel compare``): the CPU/GPU runs of a PIM workload are the
study's baseline runs, stand-ins are shaped by hand-computable rules, curves are cached, timelines and break-even
points follow from their definitions, and the CLI answers with one line on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import CliResult, cli

from pimmodel.baselines import cpu_workload_of, gpu_workload_of, load_gpu, predict_gpu, study_workload
from pimmodel.baselines.workload import BaselineWorkload
from pimmodel.comparison import Curve, Run, StandIn, TrainingJob, cpu_job, curve, default_target, pim_job
from pimmodel.comparison.accuracy import difference
from pimmodel.comparison.compare import _overtakes
from pimmodel.specs import CRITEO, YFCC, Workload


def _record(bw: BaselineWorkload) -> dict:
    return {k: v for k, v in bw.to_record().items() if k != "name"}


@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
@pytest.mark.parametrize("dataset", [YFCC, CRITEO])
def test_cpu_run_of_the_study_pim_workload_is_the_study_cpu_run(dataset, optimizer) -> None:
    """§3.4: 128 processes; MA/ADMM b per process = the PIM b; GA 64 x 128 (YFCC), 2,048 x 128 (Criteo)."""
    w = Workload(dataset, "lr", optimizer, 2048)
    assert _record(cpu_workload_of(w)) == _record(study_workload(dataset.name, "lr", optimizer, "cpu"))
    expected_batch = {("yfcc100m-hnfc6", "ga-sgd"): 64}.get((dataset.name, optimizer),
                                                            8 if dataset is YFCC else 2048)
    assert cpu_workload_of(w).batch_size == expected_batch
    assert cpu_workload_of(w).rows == (6_815_744 if dataset is YFCC else 402_653_184)


def test_gpu_run_of_the_study_pim_workload_is_the_study_gpu_run() -> None:
    w = Workload(YFCC, "svm", "ma-sgd", 2048)
    assert _record(gpu_workload_of(w)) == _record(study_workload("yfcc100m-hnfc6", "svm", "sgd", "gpu"))


def test_stand_in_shapes_by_hand() -> None:
    s = StandIn()
    # PIM YFCC MA-SGD at 2,048 DPUs: 3,328 rows per DPU / 16, b = 8
    assert s.shape(pim_job(Workload(YFCC, "lr", "ma-sgd", 2048))) == (8, 208, 8)
    # GA-SGD B = 8,192 over 2,048 DPUs: 4 rows per DPU per round
    assert s.shape(pim_job(Workload(YFCC, "lr", "ga-sgd", 2048))) == (8, 208, 4)
    # Criteo MA-SGD: 196,608 rows per DPU / 64, b = 2,048
    assert s.shape(pim_job(Workload(CRITEO, "lr", "ma-sgd", 2048))) == (8, 3072, 2048)
    # GPU: one worker, 6,815,744 rows, B = 4,096, split over 8 stand-in workers (512 rows each per step):
    # 851,968 rows per worker / 16 = 53,248 (below the 65,536 cap)
    gpu = TrainingJob("gpu", "lr", "ga-sgd", "dense", 1, 6_815_744, 4096, 4, 10)
    assert s.shape(gpu) == (8, 53_248, 512)
    # CPU YFCC MA-SGD: 53,248 rows per process / 16 = 3,328, and the job's full epoch has 53,248 / 8 steps
    cpu = cpu_job(Workload(YFCC, "lr", "ma-sgd", 2048), cpu_workload_of(Workload(YFCC, "lr", "ma-sgd", 2048)))
    assert s.shape(cpu) == (8, 3328, 8) and cpu.steps_per_epoch == 6656
    assert "416 of the full epoch's 6,656 local steps" in s.describe(cpu)


def test_steps_per_epoch_counts_partial_batches_and_local_epochs() -> None:
    job = TrainingJob("pim", "lr", "admm", "dense", 4, 10, 4, 6, 12, 4, task_epochs=2)
    assert job.steps_per_epoch == 2 * 3


def test_run_timeline_by_hand() -> None:
    job = TrainingJob("pim", "lr", "ma-sgd", "dense", 4, 16, 8, 6, 12)
    run = Run("pim", "ma-sgd", 2.0, Curve("accuracy", (0.5, 0.7, 0.9), "hand"), job)
    assert run.times_s() == [2.0, 4.0, 6.0] and run.total_s == 6.0
    assert run.time_to(0.7) == 4.0 and run.time_to(0.91) is None
    assert run.reaches(0.7) == "PIM MA-SGD: reaches accuracy 0.700 at 4 s (epoch 2)"
    assert "does not reach accuracy 0.910 in 3 epochs" in run.reaches(0.91)
    other = Run("cpu", "admm", 1.0, Curve("accuracy", (0.80, 0.8567), "hand"), job)
    assert default_target([run, other]) == 0.856  # the lower of the two bests, rounded down


@given(st.lists(st.one_of(st.none(), st.floats(0.01, 100.0)), max_size=12))
def test_overtakes_is_where_pim_stays_ahead(speedups) -> None:
    values = list(range(1, len(speedups) + 1))
    v = _overtakes(values, speedups)
    known = [(x, s) for x, s in zip(values, speedups, strict=True) if s is not None]
    if v is None:
        assert not known or known[-1][1] < 1.0
    else:
        after = [s for x, s in known if x >= v]
        before = [s for x, s in known if x < v]
        assert all(s >= 1.0 for s in after) and (not before or before[-1] < 1.0)


def test_sparse_gpu_extension_by_hand() -> None:
    spec = load_gpu()
    bw = BaselineWorkload(8192, 1000, "lr", "sgd", 4096, layout="sparse", nonzeros_per_row=39)
    p = predict_gpu(bw, spec)
    hbm = spec.hbm_peak_bytes_per_s * spec.hbm_sustained_fraction
    batch_bytes = 4096 * (4 * 39 + 4)
    assert p.per_epoch_s["memory"] == pytest.approx(2 * (batch_bytes + 2 * 4096 * 39 * 32) / hbm)
    assert any("sparse rows" in a for a in p.assumptions)


TINY = StandIn(workers=2, dense_divisor=64, sparse_divisor=64, dense_features=16)


def test_curve_is_cached_and_a_damaged_entry_is_recomputed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path))
    job = TrainingJob("pim", "lr", "ma-sgd", "dense", 16, 1024, 8, 4, 12, epochs=2)
    first = curve(job, TINY)
    assert first.metric == "accuracy" and len(first.per_epoch) == 2
    assert "2 workers x 16 rows x 16 features" in first.source
    entries = list((tmp_path / "curves").glob("*.json"))
    assert len(entries) == TINY.seeds == 3  # one entry per seed
    assert first.seeds == (0, 1, 2) and "mean of seeds 0-2" in first.source
    assert all(lo <= m <= hi for lo, m, hi in zip(first.low, first.per_epoch, first.high, strict=True))

    import pimmodel.emulator.api as emulator_api

    def refuse(*_a, **_k):
        raise AssertionError("a cached curve must not be emulated again")

    monkeypatch.setattr(emulator_api, "emulate", refuse)
    assert curve(job, TINY) == first
    entries[0].write_text("{not json")
    monkeypatch.undo()
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path))
    assert curve(job, TINY) == first


def test_float_ma_sgd_averaging_every_step_is_ga_sgd(tmp_path, monkeypatch) -> None:
    """Averaging the models after one local step each is one step with the averaged gradient: in float64 the
    CPU stand-ins of MA-SGD (b per process) and GA-SGD (b per process share of B) learn the same curve."""
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path))
    ma = TrainingJob("cpu", "lr", "ma-sgd", "dense", 8, 512, 8, 4, 12, epochs=3)
    ga = TrainingJob("cpu", "lr", "ga-sgd", "dense", 8, 512, 8, 4, 12, epochs=3)
    s = StandIn(workers=4, dense_divisor=1, dense_features=32)
    a, b = curve(ma, s), curve(ga, s)
    assert a.per_epoch == pytest.approx(b.per_epoch, abs=2e-3)


def _cli(*args: str, cache: Path) -> CliResult:
    return cli("compare", *args, env={"PIMMODEL_CACHE_DIR": str(cache)})


@pytest.mark.slow
def test_compare_cli_json(tmp_path) -> None:
    p = _cli("--optimizer", "admm", "--dpus", "64", "--epochs", "2", "--json", "--plot", str(tmp_path / "c.png"),
             cache=tmp_path)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert {x["platform"] for x in r["runs"]} == {"pim", "cpu", "gpu"}
    for x in r["runs"]:
        assert max(x["per_epoch_metric"]) >= r["target"]  # the default target is reached by every run
        assert x["time_to_target_s"] == pytest.approx(x["epochs_to_target"] * x["epoch_s"])
        assert x["total_s"] == pytest.approx(2 * x["epoch_s"])
    points = r["break_even"]["points"]
    assert [pt["dpus"] for pt in points] == [64, 128, 256, 512, 1024, 2048, 2556]
    for pt in points:
        assert pt["speedup_over_cpu"] == pytest.approx(pt["cpu_epoch_s"] / pt["pim_epoch_s"])
    assert (tmp_path / "c.png").stat().st_size > 10_000
    said = [line.split(" INFO ", 1)[1] for line in p.stderr.splitlines() if " INFO comparing admm on " in line]
    assert said and ": started (18 seed-epochs to do)" in said[0] and ": done: " in said[-1], p.stderr  # no terminal
    assert any("estimate" in line for line in said[:3]), said  # the up-front estimate (or why there is none)
    assert any("stand-in" in line for line in said[1:-1]), said  # each stand-in a line of its own


@pytest.mark.parametrize(("args", "needle"), [
    (("--target", "1.5"), "--target 1.5 must be between 0 and 1"),
    (("--break-even", "sideways"), "--break-even must be dpus, batch or none"),
    (("--cpu", "no-such-cpu"), "no-such-cpu"),
    (("--optimizer", "adam"), "adam"),
    (("--stand-in-divisor", "0"), "--stand-in-divisor must be a positive whole number"),
    (("--plot", "out.txt"), ".png, .svg or .pdf"),
])
def test_compare_bad_input_is_one_line(tmp_path, args, needle) -> None:
    p = _cli(*args, cache=tmp_path)
    assert p.returncode == 2 and needle in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_a_curve_of_seeds_is_their_mean_and_range() -> None:
    c = Curve.of_seeds("accuracy", [(0.5, 0.8), (0.7, 0.6), (0.6, 0.7)], "hand", (0, 1, 2))
    assert c.per_epoch == pytest.approx((0.6, 0.7)) and c.low == (0.5, 0.6) and c.high == (0.7, 0.8)
    assert c.spread == pytest.approx((0.2, 0.2)) and c.final == pytest.approx(0.7)


def test_a_platform_difference_is_claimed_only_beyond_the_seeds_spread() -> None:
    pim = Curve.of_seeds("accuracy", [(0.80,), (0.90,), (0.85,)], "hand", (0, 1, 2))
    close = Curve.of_seeds("accuracy", [(0.88,), (0.92,), (0.90,)], "hand", (0, 1, 2))
    apart = Curve.of_seeds("accuracy", [(0.93,), (0.95,), (0.94,)], "hand", (0, 1, 2))
    assert difference(pim, close)["verdict"] == "within noise"  # 0.85 vs 0.90: the ranges overlap
    d = difference(pim, apart)
    assert d["verdict"] == "lower" and d["difference"] == pytest.approx(-0.09) and d["spread_a"] == pytest.approx(0.1)
    assert difference(apart, pim)["verdict"] == "higher"
    single = Curve("accuracy", (0.5,), "one run")
    assert difference(single, apart)["verdict"] == "within noise"  # no spread known: no claim


def test_a_speedup_over_the_cpu_spans_its_all_reduce_latency_range() -> None:
    from pimmodel.comparison.compare import speedup_range, speedup_text
    job = TrainingJob("cpu", "lr", "ma-sgd", "dense", 128, 1024, 8, 4, 12, epochs=2)
    cpu = Run("cpu", "ma-sgd", 10.0, Curve("accuracy", (0.5, 0.6), "hand"), job,
              {"interval": {"epoch_s": [4.0, 40.0], "range": [5.0, 50.0], "decided_by": "sync.latency_us"}})
    r = speedup_range(5.0, cpu)  # PIM 5 s in all against the CPU's 20 s (8-80 s)
    assert r["speedup"] == pytest.approx(4.0) and r["range"] == pytest.approx([1.6, 16.0])
    assert speedup_text(5.0, cpu) == "4x faster (1.6-16x, decided by the CPU's all-reduce latency)"
    assert cpu.to_record()["total_s_range"] == [8.0, 80.0]
    plain = Run("gpu", "sgd", 10.0, Curve("accuracy", (0.5, 0.6), "hand"), job)
    assert speedup_text(40.0, plain) == "2x slower" and "range" not in speedup_range(40.0, plain)


def test_the_headline_leads_with_time_to_target_and_names_each_ratio() -> None:
    """PIM 5x faster per epoch but reaching the target 4 epochs later than the CPU: the claim is 'slower to the
    target' first (8 s vs 5 s: 1.6x slower), the per-epoch ratio second and named (issue 31: YFCC SVM said
    '5.28x faster' while PIM reached the target at 80.8 s and the CPU at 53.4 s)."""
    from pimmodel.comparison.compare import Comparison, time_to_target

    job = TrainingJob("cpu", "lr", "ma-sgd", "dense", 128, 1024, 8, 4, 12, epochs=10)
    pim = Run("pim", "ma-sgd", 1.0, Curve("accuracy", tuple(0.1 * k for k in range(1, 11)), "hand"), job)
    cpu = Run("cpu", "ma-sgd", 5.0, Curve("accuracy", (0.5, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9), "hand"),
              job)
    t = time_to_target(pim, cpu, 0.8)
    assert (t["pim_s"], t["other_s"]) == (8.0, 15.0) and t["speedup"] == pytest.approx(15 / 8)
    t = time_to_target(pim, cpu, 0.55)  # PIM at epoch 6 (6 s), CPU at epoch 2 (10 s)
    assert t["speedup"] == pytest.approx(10 / 6)
    slow = Run("pim", "ma-sgd", 1.0, Curve("accuracy", (0.1,) * 7 + (0.85, 0.9, 0.95), "hand"), job)
    comparison = Comparison((), "x", (slow, cpu), 0.8, StandIn(), None, ())
    (sp,) = comparison.speedups()
    assert sp["time_to_target"]["speedup"] == pytest.approx(15 / 8)
    fast_late = Run("pim", "ma-sgd", 0.5, Curve("accuracy", (0.1,) * 9 + (0.85,), "hand"), job)
    (sp,) = Comparison((), "x", (fast_late, cpu), 0.8, StandIn(), None, ()).speedups()
    assert sp["per_epoch"]["speedup"] == pytest.approx(10.0)  # 10x faster per epoch ...
    assert sp["time_to_target"]["speedup"] == pytest.approx(15 / 5)  # ... 5 s against 15 s to the target
    assert sp["text"].startswith("3x faster to accuracy 0.800 (PIM 5 s, CPU 15 s); per epoch 10x faster")
    never = Run("pim", "ma-sgd", 0.5, Curve("accuracy", (0.1,) * 10, "hand"), job)
    (sp,) = Comparison((), "x", (never, cpu), 0.8, StandIn(), None, ()).speedups()
    assert sp["time_to_target"]["speedup"] is None
    assert sp["text"].startswith("PIM does not reach accuracy 0.800 in 10 epochs (CPU at 15 s); per epoch")
    slower = Run("pim", "ma-sgd", 2.0, Curve("accuracy", (0.1,) * 9 + (0.85,), "hand"), job)
    (sp,) = Comparison((), "x", (slower, cpu), 0.8, StandIn(), None, ()).speedups()
    assert sp["text"] == "1.33x slower to accuracy 0.800 (PIM 20 s, CPU 15 s); per epoch 2.5x faster"
