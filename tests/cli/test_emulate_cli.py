"""``pimmodel emulate`` end to end: a real --json run, and bad input as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import CliResult, cli


def run(*args: str) -> CliResult:
    return cli("emulate", *args)


def _svmlight(path: Path, value: float, rows: int = 80) -> Path:
    path.write_text("".join(f"{i % 2} 1:{value if i % 2 else 0.1} 2:0.3\n" for i in range(rows)))
    return path


def test_json_run_has_history_trace_and_prediction() -> None:
    p = run("--dataset", "synthetic-yfcc", "--model", "lr", "--optimizer", "admm", "--dpus", "8",
            "--samples-per-dpu", "64", "--features", "128", "--epochs", "2", "--seed", "1", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert [h["epoch"] for h in r["history"]] == [1, 2]
    for h in r["history"]:
        assert set(h) == {"epoch", "train_accuracy", "test_accuracy", "majority_baseline", "positive_rate", "loss",
                          "auc"}
        assert 0 <= h["test_accuracy"] <= 1 and 0 <= h["auc"] <= 1
    assert r["trace"]["rounds"] >= 1 and r["predicted"]["optimizer"] == "admm"
    assert set(r["trace"]["seconds"]["wall"]) >= {"dpu_compute", "host_to_pim", "launch"}


def test_svmlight_file_trains(tmp_path: Path) -> None:
    p = run("--dataset", str(_svmlight(tmp_path / "ok.svm", 0.9)), "--dpus", "1", "--batch-size", "4",
            "--learning-rate-shift", "1", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["history"][0]["train_accuracy"] > 0.9


@pytest.mark.parametrize("content, fragment", [
    ("1 1:0.5\n0 2:0.1\n1 1:abc\n", ":3:"),
    ("1 1:0.5\n2 2:0.1\n", "binary"),
])
def test_bad_files(tmp_path: Path, content: str, fragment: str) -> None:
    f = tmp_path / "bad.svm"
    f.write_text(content)
    p = run("--dataset", str(f), "--dpus", "1")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and fragment in lines[0] and "Traceback" not in p.stderr


def test_features_out_of_q31_range(tmp_path: Path) -> None:
    p = run("--dataset", str(_svmlight(tmp_path / "range.svm", 1.5)), "--dpus", "1", "--batch-size", "4")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "range" in p.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--arithmetic", "double"], "unknown arithmetic"),
    (["--dpus", "0"], "--dpus must be a positive"),
    (["--optimizer", "adamw"], "unknown optimizer"),
    (["--dataset", "nope.svm"], "neither"),
    (["--samples-per-dpu", "100000", "--dpus", "2"], "MiB"),
])
def test_bad_arguments(args: list[str], fragment: str) -> None:
    p = run(*args)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and fragment in lines[0]


@pytest.mark.slow
def test_engine_process_json_says_how_it_ran_and_the_memory_estimate() -> None:
    p = run("--dataset", "synthetic-yfcc", "--dpus", "8", "--samples-per-dpu", "32", "--features", "128",
            "--epochs", "1", "--engine", "process", "--workers", "2", "--json")
    assert p.returncode == 0, p.stderr
    ran = json.loads(p.stdout)["ran"]
    assert ran["engine"] == "process (2 workers)" and ran["memory"]["processes"] == 3
    assert 0 < ran["memory"]["estimate_bytes"] < ran["memory"]["available_bytes"]


def test_engine_ray_without_ray_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray is an optional extra: without it, one line that says how to install it."""
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "pimmodel.emulator.ray_engine", raising=False)
    p = run("--dpus", "4", "--samples-per-dpu", "16", "--features", "64", "--epochs", "1", "--engine", "ray")
    assert p.returncode == 2
    assert [line for line in p.stderr.splitlines() if line.strip()] == [
        "error: --engine ray needs Ray, an optional extra: pip install 'pimmodel[ray]'"]
