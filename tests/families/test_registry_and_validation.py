"""The workload-family plug-ins and the real training runs of the ``training`` validation group."""

from __future__ import annotations

import importlib
import inspect
import json

import pytest

from pimmodel.specs import load_hardware
from pimmodel.specs.families import FAMILIES, REGISTRY, family_info
from pimmodel.validation import training
from tests.support import cli

HW = load_hardware("upmem-2556")


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_has_its_pieces(name: str) -> None:
    info = REGISTRY[name]
    importlib.import_module(info.kernels)
    equations = importlib.import_module(info.equations)
    assert hasattr(equations, "equations") or hasattr(equations, "equation_set")
    module, function = info.trainer.split(":")
    assert callable(getattr(importlib.import_module(module), function))


def test_the_study_is_one_member() -> None:
    assert family_info("linear").study and "kmeans" in FAMILIES
    with pytest.raises(Exception, match="kmeans"):
        family_info("kmean")


def test_kmeans_trainer_signature() -> None:
    from pimmodel.emulator.kmeans import train_kmeans

    assert list(inspect.signature(train_kmeans).parameters)[:4] == ["x", "clusters", "dpus", "hw"]


def test_every_dpu_kmeans_row_is_a_case_per_timer() -> None:
    cases, targets = training.kmeans_cases(HW)
    rows = training._rows("dpu-kmeans.csv")
    assert len(cases) == 5 * len(rows)  # every row is expressible (HIGGS with its published size)
    assert {c.phase for c in cases} == set(training.PHASES)
    names = {t.quantity for t in targets}
    assert names == set(training.PHASES)
    per_iter = next(t for t in targets if t.quantity == "per_iteration")
    assert per_iter.target == 20.0 and per_iter.value > 0


def test_unexpressed_rows_say_why() -> None:
    out = training.unexpressed()
    sources = {u.source for u in out}
    assert "upmem/scikit-dpu decision tree" in sources
    assert all(u.why for u in out)
    assert sum(u.rows for u in out if "SimplePIM" in u.source) == 18  # hand-optimized; SimplePIM's own are priced


def test_validate_training_json() -> None:
    r = cli("validate", "--group", "training", "--json")
    record = json.loads(r.stdout)
    assert "training" in record["groups"] and record["groups"]["training"]["unexpressed"]
    assert r.returncode == (0 if record["ok"] else 1)


def test_predict_kmeans_json_keeps_the_phase_vocabulary() -> None:
    r = cli("predict", "--workload", "kmeans", "--points", "25.6M", "--dims", "16", "--clusters", "16",
            "--dpus", "256", "--iterations", "6", "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)["points"][0]
    assert set(rec["per_iteration_s"]) == {"dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host",
                                           "host_aggregate", "launch", "total"}
    assert rec["points_per_dpu"] == 100_000 and rec["iterations_from"] == "given"
    iv = rec["interval"]["kernel_s"]
    assert iv["low_s"] < rec["run_s"]["kernel"] < iv["high_s"] and 0 < iv["half_width"] < 1


def test_scale_and_bad_input() -> None:
    r = cli("scale", "--workload", "kmeans", "--points", "1M", "--dims", "8", "--clusters", "4",
            "--dpus", "64,128", "--iterations", "5", "--json")
    assert r.returncode == 0, r.stderr
    pts = json.loads(r.stdout)["points"]
    assert pts[1]["scaling_metrics"]["speedup"] > 1.5
    for args in (("--points", "1Q"), ("--dims", "8")):
        bad = cli("predict", "--workload", "kmeans", *args, "--clusters", "4")
        assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert cli("predict", "--workload", "kmean").returncode == 2
    too_wide = cli("predict", "--workload", "kmeans", "--points", "1M", "--dims", "64", "--clusters", "4")
    assert too_wide.returncode == 2 and "ASSUMED_NR_FEATURES" in too_wide.stderr


def test_emulate_kmeans_blobs() -> None:
    r = cli("emulate", "--workload", "kmeans", "--dataset", "blobs", "--points", "2000", "--dims", "4",
            "--clusters", "5", "--dpus", "4", "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["iterations"] >= 1 and rec["inertia"] > 0
    assert rec["emulated"]["per_iteration_s"]["total"] == pytest.approx(rec["model"]["per_iteration_s"]["total"])
