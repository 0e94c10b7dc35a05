"""`pimmodel scale` over DPU counts some of which do not fit the DPUs' memory: those are marked infeasible with the
reason, the rest predicted (the scaling metrics relative to the first count that fits); all infeasible: refused."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from support import cli

SWEEP = ("scale", "--dataset", "criteo-1tb", "--optimizer", "ma-sgd", "--scaling", "strong")


def test_a_sweep_marks_the_count_that_does_not_fit(tmp_path: Path) -> None:
    res = cli(*SWEEP, "--dpus", "8,256,2048", "--json")
    assert res.returncode == 0, res.stderr
    points = json.loads(res.stdout)["points"]
    assert [(p["dpus"], p["feasible"]) for p in points] == [(8, False), (256, True), (2048, True)]
    # Criteo's rows split over 8 DPUs: ~1 GiB per DPU against 64 MiB of MRAM (kernels/capacity.py says how much)
    assert "MiB per DPU" in points[0]["reason"] and "per_epoch_s" not in points[0]
    assert points[1]["scaling_metrics"]["speedup"] == 1.0  # the first count that fits is the base
    ratio = points[1]["per_epoch_s"]["total"] / points[2]["per_epoch_s"]["total"]
    assert points[2]["scaling_metrics"]["speedup"] == ratio
    table = cli(*SWEEP, "--dpus", "8,256", "-o", str(tmp_path / "s.csv"))
    assert table.returncode == 0 and "8 DPUs: infeasible" in table.stdout
    with open(tmp_path / "s.csv", newline="") as f:
        assert [r["dpus"] for r in csv.DictReader(f)] == ["8", "256"]


def test_a_sweep_where_nothing_fits_is_refused() -> None:
    res = cli(*SWEEP, "--dpus", "8,16")
    assert res.returncode == 2 and "MiB per DPU" in res.stderr and "Traceback" not in res.stderr
