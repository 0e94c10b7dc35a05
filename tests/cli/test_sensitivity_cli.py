"""``pimmodel sensitivity`` takes the workload options of ``pimmodel predict`` (issue 9)."""

from __future__ import annotations

import json

import pytest
from support import CliResult, cli


def run(*args: str) -> CliResult:
    return cli("sensitivity", *args)


@pytest.mark.slow
def test_any_dpu_count_and_batch_options() -> None:
    p = run("--optimizer", "ga-sgd", "--dpus", "1000", "--global-batch-size", "16000", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["dpus"] == 1000 and r["workload"] == "yfcc100m-hnfc6/lr/ga-sgd"


@pytest.mark.slow
def test_custom_dataset_options() -> None:
    p = run("--features", "512", "--rows-per-dpu", "1000", "--dpus", "64", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["workload"] == "custom(yfcc100m-hnfc6)/lr/ma-sgd"


def test_bad_global_batch_is_one_line() -> None:
    p = run("--optimizer", "ga-sgd", "--dpus", "1000", "--global-batch-size", "8192")
    assert p.returncode == 2 and "multiple of --dpus 1,000" in p.stderr and len(p.stderr.strip().splitlines()) == 1
