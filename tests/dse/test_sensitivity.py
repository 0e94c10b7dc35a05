"""Elasticities from the symbolic derivatives agree with finite differences of the compiled model."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from support import first_fast, raw

from pimmodel.calibration.result import coefficients_for
from pimmodel.dse.sensitivity import elasticities
from pimmodel.phases import PHASES, in_view
from pimmodel.specs import CRITEO, YFCC, Workload, load_hardware
from pimmodel.specs.hardware import FIELD_BY_NAME

CASES = [(YFCC, "lr", "ma-sgd", "none", "wall"), (CRITEO, "svm", "ga-sgd", "none", "breakdown"),
         (CRITEO, "lr", "admm", "ring", "wall"), (YFCC, "svm", "ga-sgd", "in-rank", "wall")]


def _total(w: Workload, values: dict[str, float], topology: str, view: str) -> float:
    return float(sum(in_view(raw(w, values, topology=topology), view).values()))


@pytest.mark.parametrize("case", first_fast(CASES, unpack=False),
                         ids=lambda c: f"{c[0].name}-{c[1]}-{c[2]}-{c[3]}-{c[4]}")
def test_elasticities_match_finite_differences(case) -> None:  # type: ignore[no-untyped-def]
    ds, model, optimizer, topology, view = case
    hw = load_hardware("upmem-2556").replace(link_topology=topology, link_bytes_per_s=4e9, link_latency_s=1e-6)
    w = Workload(ds, model, optimizer, 2048)
    record = elasticities(w, hw, coefficients_for(w), view)
    assert record["epoch_s"] == pytest.approx(sum(record["phases_s"].values()))
    checked = 0
    h = 1e-6
    for row in record["elasticities"]:
        name = row["parameter"]
        if FIELD_BY_NAME[name].integer or abs(row["epoch"]) < 1e-4:
            continue
        up, down = hw.numeric(), hw.numeric()
        up[name] *= 1 + h
        down[name] *= 1 - h
        fd = (math.log(_total(w, up, topology, view)) - math.log(_total(w, down, topology, view))) / (
            math.log(1 + h) - math.log(1 - h))
        assert row["epoch"] == pytest.approx(fd, rel=1e-3, abs=1e-6), name
        checked += 1
    assert checked >= 5


@pytest.mark.slow
@pytest.mark.parametrize(("dpus", "bandwidth"), [(64, "pull_bytes_per_s_per_rank"),
                                                   (2048, "pull_saturation_bytes_per_s")])
def test_phase_elasticities_of_a_pure_bandwidth_term(dpus: int, bandwidth: str) -> None:
    """pim_to_host = rounds (c + c_pull + b N / B): its elasticity w.r.t. the bandwidth B that binds is minus the
    bandwidth share (one minus the shares of the call overhead and of the pull call's extra). On one rank B is the
    rank's own pull bandwidth; at 2,048 DPUs (32 ranks) the aggregate stops at the host path's ceiling (issue 17's
    multi-rank model), so the ceiling binds and the per-rank bandwidth has no effect."""
    hw = load_hardware("upmem-2556")
    w = Workload(CRITEO, "lr", "ga-sgd", dpus)
    rows = {r["parameter"]: r for r in elasticities(w, hw, coefficients_for(w))["elasticities"]}
    e = rows[bandwidth]["phases"]["pim_to_host"]
    overhead = rows["transfer_call_overhead_s"]["phases"]["pim_to_host"] + rows["pull_call_extra_s"]["phases"][
        "pim_to_host"]
    assert e == pytest.approx(-(1 - overhead), rel=1e-9)
    assert all(rows[bandwidth]["phases"][p] == 0 for p in PHASES if p != "pim_to_host")
    other = {"pull_bytes_per_s_per_rank", "pull_saturation_bytes_per_s"} - {bandwidth}
    assert all(rows[o]["phases"]["pim_to_host"] == 0 for o in other if o in rows)


@pytest.mark.slow
def test_sensitivity_cli_json() -> None:
    out = subprocess.run([sys.executable, "-c", "from pimmodel.cli import main; main()", "sensitivity", "--dataset",
                          "criteo-1tb", "--optimizer", "ga-sgd", "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["elasticities"][0]["parameter"] and {"epoch", "phases", "value"} <= set(r["elasticities"][0])
    assert abs(r["elasticities"][0]["epoch"]) >= abs(r["elasticities"][-1]["epoch"])
    lines = {x["change"]: x for x in r["what_if"]}
    assert lines["4x host bandwidth"]["speedup"]["ga-sgd"] > lines["4x host bandwidth"]["speedup"]["admm"]
    assert "MA-SGD" in lines["4x host bandwidth"]["text"]
