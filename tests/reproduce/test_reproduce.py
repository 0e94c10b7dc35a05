"""``pimmodel reproduce``: a figure's numbers are the models' (``api.predict``, the baseline models, the cached
stand-in curves), what the model says is computed from them, the files are written whole, and bad output folders
fail before any work with one line and exit code 2. Accuracy figures run on a tiny stand-in here (seconds)."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import CliResult, cli

from pimmodel.api import predict
from pimmodel.baselines import load_cpu, load_gpu
from pimmodel.comparison import StandIn, cached, pim_job
from pimmodel.comparison.platforms import cpu_epoch, gpu_epoch
from pimmodel.phases import COMM_PHASES
from pimmodel.reproduce import Setup, compute, curve_tasks, load_figure, plan, reproduce, train
from pimmodel.reproduce.figures import stand_in_for
from pimmodel.reproduce.findings import model_says
from pimmodel.specs import CRITEO, YFCC, Workload, resolve_hyperparams

TINY = StandIn(workers=2, dense_divisor=64, sparse_divisor=64, dense_features=16, sparse_features=2000,
               dense_max_rows=128, sparse_max_rows=2048)
"""A stand-in small enough for tests: 2 workers, at most 128 dense or 2,048 sparse rows each."""


@pytest.fixture(scope="module", autouse=True)
def _equations_loaded() -> None:
    """Load every study configuration's compiled equations from the usual cache before a test points
    PIMMODEL_CACHE_DIR at an empty folder (a cold compile takes seconds per configuration)."""
    for ds in (YFCC, CRITEO):
        for model in ("lr", "svm"):
            for optimizer in ("ma-sgd", "ga-sgd", "admm"):
                predict(Workload(ds, model, optimizer, 2048))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(folder))
    return folder


def _workload(ds: Any, model: str, optimizer: str, dpus: int, scaling: str, epochs: int, b: int | None,
              big_b: int | None) -> Workload:
    """The study's workload built by hand (not through the figure file)."""
    hyper, _ = resolve_hyperparams(ds, model, optimizer, dpus, scaling, batch_size=b,
                                   global_batch_size=big_b if optimizer == "ga-sgd" else None, epochs=epochs)
    return Workload(ds, model, optimizer, dpus, scaling=scaling, epochs=epochs, hyper=hyper)


def _png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


# ---------------------------------------------------------------- --list
def test_list_names_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    out = cli("reproduce", "--list").stdout
    for fid in ("fig2", "fig4", "fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "fig12", "fig13"):
        assert f" {fid} " in out
    assert "Data movement per epoch on Criteo LR" in out and "what it shows" in out
    listed = json.loads(cli("reproduce", "--list", "--json").stdout)["figures"]
    assert [f["id"] for f in listed][:3] == ["fig2", "fig4", "fig5"] and len(listed) == 11
    assert {f["kind"] for f in listed} == {"data-movement", "breakdown", "time-to-accuracy", "batch-sweep",
                                           "scaling"}


# ---------------------------------------------------------------- benchmark figures, end to end
def test_fig4_end_to_end_is_the_cost_models_breakdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figs"
    printed = json.loads(cli("reproduce", "fig4", "--output", str(out), "--json").stdout)
    written = json.loads((out / "fig4.json").read_text(encoding="utf-8"))
    assert printed == written and _png(out / "fig4.png")
    assert written["configuration"]["view"] == "breakdown" and len(written["data"]) == 6
    for row in written["data"]:
        w = _workload(YFCC, row["model"], row["optimizer"], 2048, "weak", 1, 8, 4096)
        p = predict(w, "upmem-2556", view="breakdown")
        assert row["comm_sync_s"] == pytest.approx(sum(p.per_epoch_s[k] for k in COMM_PHASES), rel=1e-12)
        assert row["pim_compute_s"] == pytest.approx(p.per_epoch_s["dpu_compute"], rel=1e-12)
        assert row["pim_data_movement_s"] == pytest.approx(p.per_epoch_s["mram_wram_dma"], rel=1e-12)
        assert row["epoch_s"] == pytest.approx(p.per_epoch_total_s, rel=1e-12)
        # the study's total is the sum of its three categories (launches excluded in the breakdown view)
        assert row["epoch_s"] == pytest.approx(row["comm_sync_s"] + row["pim_compute_s"]
                                               + row["pim_data_movement_s"], rel=1e-12)
        # 3,328 rows per DPU: MA-SGD 416 rounds of b = 8; GA-SGD B = 4,096 is 2 rows per DPU, 1,664 rounds
        assert row["rounds_per_epoch"] == {"ma-sgd": 416, "ga-sgd": 1664, "admm": 1}[row["optimizer"]]
    ga_lr = next(r for r in written["data"] if (r["model"], r["optimizer"]) == ("lr", "ga-sgd"))
    assert f"{ga_lr['comm_sync_s'] / ga_lr['epoch_s']:.0%} of GA-SGD's" in written["model_says"][0]
    md = (out / "fig4.md").read_text(encoding="utf-8")
    assert md.startswith("# Fig. 4: ") and "| model | optimizer | comm./sync. |" in md
    assert f"**Study found:** {written['study_finding']}" in md and written["model_says"][0] in md
    assert written["provenance"]["hardware"] == "upmem-2556" and written["notes"]
    assert written["figure"]["study_file"] == "studies/pim-opt/fig04.toml" and "`studies/pim-opt/fig04.toml`" in md


def test_fig2_throughput_is_bytes_over_time_and_the_sentences_follow_the_numbers() -> None:
    record = compute(load_figure("fig2"), Setup.default())
    rows = {r["optimizer"]: r for r in record["data"]}
    for optimizer, row in rows.items():
        p = predict(_workload(CRITEO, "lr", optimizer, 2048, "weak", 1, 2048, 262_144), view="breakdown")
        b, s = p.per_epoch_bytes, p.per_epoch_s
        assert row["host_pim_bytes"] == b["host_to_pim"] + b["pim_to_host"]
        assert row["mram_wram_bytes"] == b["mram_to_wram"] + b["wram_to_mram"]
        host_s = s["host_to_pim"] + s["pim_to_host"]
        assert row["host_pim_bytes_per_s"] == pytest.approx(row["host_pim_bytes"] / host_s)
        assert row["mram_wram_bytes_per_s"] == pytest.approx(row["mram_wram_bytes"] / s["mram_wram_dma"])
    # GA-SGD pulls 8 MB of int64 gradients per DPU per round, MA-SGD 4 MB of model per round, ADMM three models
    # per epoch: ADMM moves the fewest host bytes (pim-opt-study.md §3.3)
    ratio = rows["ga-sgd"]["host_pim_bytes"] / rows["admm"]["host_pim_bytes"]
    assert f"{ratio:,.0f}x fewer than GA-SGD" in record["model_says"][0]
    assert record["model_says"][0].startswith("ADMM moves the fewest bytes")
    changed = copy.deepcopy(record)
    for r in changed["data"]:
        if r["optimizer"] == "admm":
            r["host_pim_bytes"] *= 1e6  # now the largest: the sentence must say another optimizer is the fewest
    assert not model_says(changed)[0].startswith("ADMM moves the fewest")


# ---------------------------------------------------------------- figures that train
@pytest.mark.slow
def test_accuracy_figure_with_a_tiny_stand_in(cache: Path, tmp_path: Path) -> None:
    spec = load_figure("fig5")
    setup = Setup.default(stand_in=TINY)
    assert len(plan([spec], setup).missing) == 14  # 2 models x (3 PIM + 3 CPU + 1 GPU)
    [record] = reproduce([spec], setup, output=tmp_path / "out", workers=1)
    assert plan([spec], setup).missing == ()  # all cached now
    cpu, gpu = load_cpu(), load_gpu()
    runs = record["data"]
    assert len(runs) == 14 and {r["platform"] for r in runs} == {"pim", "cpu", "gpu"}
    for r in runs:
        w = _workload(YFCC, r["model"], r["optimizer"] if r["platform"] != "gpu" else "ma-sgd", 2048, "weak", 10,
                      8, 4096)
        expected = {"pim": predict(w, "upmem-2556").per_epoch_total_s, "cpu": cpu_epoch(w, cpu).epoch_s,
                    "gpu": gpu_epoch(w, gpu).epoch_s}[r["platform"]]
        assert r["epoch_s"] == pytest.approx(expected, rel=1e-12)
        assert r["total_s"] == pytest.approx(10 * r["epoch_s"]) and len(r["times_s"]) == 10
        assert len(r["per_epoch_metric"]) == 10 and all(0.0 <= v <= 1.0 for v in r["per_epoch_metric"])
        if r["platform"] == "pim":
            assert tuple(r["per_epoch_metric"]) == cached(pim_job(w), TINY).per_epoch  # the cached curve
    assert any("a smaller stand-in than `pimmodel compare`'s default" in n for n in record["notes"])
    assert any("unvalidated" in n for n in record["notes"]) and "not the real data set" in record["footer"]
    fastest = min(runs, key=lambda r: r["total_s"])
    assert any(fastest["label"] in s for s in record["model_says"])
    assert _png(tmp_path / "out" / "fig5.png") and (tmp_path / "out" / "fig5.md").is_file()


def test_scaling_stand_in_workers_follow_the_dpu_count() -> None:
    spec = load_figure("fig13")
    assert [stand_in_for(spec, n, StandIn()).workers for n in spec.dpus] == [1, 2, 4, 8]
    assert stand_in_for(load_figure("fig10"), 2048, TINY) is TINY  # other figures keep the stand-in


@pytest.mark.slow
def test_scaling_figure_through_the_cli(cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    default = Setup.default
    monkeypatch.setattr(Setup, "default", classmethod(lambda cls, hardware="upmem-2556", stand_in=None,
                                                      calibration=None: default(hardware, TINY, calibration)))
    out = cli("reproduce", "fig12", "--output", str(tmp_path), "--workers", "1").stdout
    record = json.loads((tmp_path / "fig12.json").read_text(encoding="utf-8"))
    assert "Fig. 12" in out and "study found:" in out and "model says:" in out
    rows = record["data"]
    assert len(rows) == 24 and sorted({r["dpus"] for r in rows}) == [256, 512, 1024, 2048]
    for r in rows:
        w = _workload(CRITEO, r["model"], r["optimizer"], r["dpus"], "weak", 10, 2048, 262_144)
        assert r["epoch_s"] == pytest.approx(predict(w).per_epoch_total_s, rel=1e-12)
        assert r["stand_in_workers"] == max(1, 2 * r["dpus"] // 2048)
    lr = {(r["optimizer"], r["dpus"]): r["total_s"] for r in rows if r["model"] == "lr"}
    growth = lr[("ga-sgd", 2048)] / lr[("ga-sgd", 256)]
    says = record["model_says"][0]
    assert says.startswith("LR: time of 10 epochs at 2,048 against 256 DPUs") and f"GA-SGD {growth:.1f}x" in says
    assert _png(tmp_path / "fig12.png")


def test_a_pool_trains_the_same_curves_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = curve_tasks(load_figure("fig7"), Setup.default(stand_in=TINY))[:3]
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path / "pool"))
    steps: list[str] = []
    pooled = train(tasks, workers=2, step=steps.append)
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path / "serial"))
    serial = train(tasks, workers=1)
    assert len(steps) == 3 and all(s.startswith("trained PIM") for s in steps)
    assert {t: c.per_epoch for t, c in pooled.items()} == {t: c.per_epoch for t, c in serial.items()}


# ---------------------------------------------------------------- errors: one line, exit 2, before any work
def _run(*args: str, cache: Path) -> CliResult:
    return cli("reproduce", *args, env={"PIMMODEL_CACHE_DIR": str(cache)})


@pytest.mark.parametrize("case", ["output is a file", "parent is a file", "read-only folder"])
def test_unwritable_output_fails_first_in_one_line(case: str, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    target = {"output is a file": blocker, "parent is a file": blocker / "figures",
              "read-only folder": tmp_path / "ro"}[case]
    if case == "read-only folder":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        target.mkdir()
        target.chmod(0o500)
    p = _run("fig5", "--output", str(target), cache=tmp_path / "cache")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "cache" / "curves").exists()  # nothing was trained


@pytest.mark.parametrize("args,message", [(("fig3",), "unknown figure 'fig3'"),
                                          ((), "give a figure (e.g. fig5), 'all', or --list"),
                                          (("fig4", "--workers", "0"), "--workers must be a positive"),
                                          (("fig5", "--hardware", "upmem-640"),
                                           "fig5 on upmem-640: --dpus 2048 exceeds the 640 DPUs")])
def test_bad_arguments_are_one_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    p = _run(*args, "--output", str(tmp_path / "o"), cache=tmp_path / "cache")
    assert p.returncode == 2 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "cache" / "curves").exists()  # refused before any training


def _stat(pid: int) -> list[str] | None:
    """State, parent, ... of a process from /proc (None once it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid``."""
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit() and _alive(int(e.name))
            and (_stat(int(e.name)) or ["", "0"])[1] == str(pid)]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_stops_the_training_pool_at_once(tmp_path: Path) -> None:
    """A terminal's Ctrl-C reaches the whole process group: the pool's processes ignore it, the command stops
    them and ends with one line, exit 130, within seconds (not after the curves in flight)."""
    import shutil
    import signal
    import time

    from pimmodel.costmodel.compile import _source_key
    from pimmodel.resources import cache_dir

    cache = tmp_path / "cache"
    shutil.copytree(cache_dir("compiled") / _source_key(), cache / "compiled" / _source_key())  # equations, no curves
    env = {**os.environ, "PIMMODEL_CACHE_DIR": str(cache)}
    p = subprocess.Popen([sys.executable, "-m", "pimmodel", "reproduce", "fig10", "--output", str(tmp_path / "o")],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(_children(p.pid)) < 2 and time.monotonic() < deadline:  # the pool's processes (and a resource tracker)
        time.sleep(0.2)
    workers = _children(p.pid)
    assert len(workers) >= 2, "the pool never started"
    time.sleep(1.0)
    start = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert time.monotonic() - start < 10
    said = [line for line in err.splitlines() if not re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO ", line)]
    assert p.returncode == 130 and said == [err.splitlines()[-1]] and said[0].startswith("error: interrupted;"), err
    time.sleep(0.5)
    assert not [w for w in workers if _alive(w)], "a pool process outlived the command"
