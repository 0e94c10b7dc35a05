"""``pimmodel baseline predict``: JSON records, tables, and bad input as one line with exit 2."""

from __future__ import annotations

import json

from support import CliResult, cli


def run(*args: str) -> CliResult:
    return cli("baseline", *args)


def test_predict_cpu_json_all_optimizers() -> None:
    p = run("predict", "--json")
    assert p.returncode == 0, p.stderr
    points = json.loads(p.stdout)["points"]
    assert [r["workload"]["optimizer"] for r in points] == ["ma-sgd", "ga-sgd", "admm"]
    assert all(r["device"] == "cpu" and r["per_epoch_s"]["total"] > 0 for r in points)


def test_predict_gpu_and_criteo() -> None:
    gpu = json.loads(run("predict", "--device", "gpu", "--model", "svm", "--json").stdout)["points"][0]
    assert gpu["device"] == "gpu" and gpu["validated"] is False and gpu["assumptions"]
    criteo = run("predict", "--dataset", "criteo-1tb", "--optimizer", "admm")
    assert criteo.returncode == 0 and "admm" in criteo.stdout and "framework dispatch" in criteo.stdout


def test_bad_input_is_one_line() -> None:
    for args in (("predict", "--device", "tpu"), ("predict", "--device", "gpu", "--dataset", "criteo-1tb"),
                 ("predict", "--optimizer", "adam"), ("predict", "--processes", "0")):
        p = run(*args)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and p.stderr.startswith("error:"), (args, p.stderr)
