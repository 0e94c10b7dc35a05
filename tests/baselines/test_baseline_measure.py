"""A quick real measurement: the report's shape (the 25 % check is a benchmark: tests/benchmarks)."""

from __future__ import annotations

import json
import math

import pytest

from pimmodel.baselines.measure import run_measurement

CASE_KEYS = {"optimizer", "model", "processes", "rows", "features", "measured_s", "predicted_s", "rel_error"}


@pytest.fixture(scope="module")
def quick_report() -> dict:
    return json.loads(json.dumps(run_measurement(quick=True)))


@pytest.mark.slow
def test_quick_measure_shape(quick_report: dict) -> None:
    cases = quick_report["cases"]
    assert len(cases) >= 6
    for case in cases:
        assert set(case) >= CASE_KEYS
        assert case["measured_s"] > 0 and case["predicted_s"] > 0 and math.isfinite(case["rel_error"])
        assert case["rel_error"] == pytest.approx((case["predicted_s"] - case["measured_s"]) / case["measured_s"])
    assert {c["processes"] for c in cases} <= {1, 2} and {c["optimizer"] for c in cases} == {"ma-sgd", "ga-sgd",
                                                                                              "admm"}
    machine = quick_report["machine"]
    assert machine["cores"] >= 1 and machine["readings"]["dram_1p_matvec_read_bytes_per_s"] > 0
    assert set(machine["specs"]) >= {"1"} and quick_report["summary"]["cases"] == len(cases)
