"""The PyTorch/gloo path of `baseline measure`: the probe's fit by hand, and (slow, torch extra) a real run."""

from __future__ import annotations

import math

import pytest

from pimmodel.baselines.cpu import predict_cpu
from pimmodel.baselines.torch_measure import CALLS_PER_STEP, fit_allreduce, machine_torch_spec
from pimmodel.baselines.workload import BaselineWorkload


def test_the_allreduce_fit_recovers_a_line() -> None:
    curve = [(n, 100e-6 + n / 2e9) for n in (4, 256, 4096, 65536, 1 << 20)]
    t0, bw = fit_allreduce(curve)
    assert t0 == pytest.approx(100e-6) and bw == pytest.approx(2e9)


def test_the_machine_spec_takes_the_probe() -> None:
    probe = {"call_s": 10e-6, "index_op_s": 3e-6, "allreduce_t0_s": 60e-6, "allreduce_bytes_per_s": 1e9}
    spec = machine_torch_spec(probe, 2)
    assert spec.sync_latency_s == pytest.approx(30e-6)  # 2 (p - 1) = 2 ring steps
    assert spec.ma_sgd_lr_step_s == pytest.approx(CALLS_PER_STEP["ma_sgd_lr"] * 10e-6) and spec.index_op_s == 3e-6
    w = BaselineWorkload(rows=4096, features=64, model="lr", optimizer="ma-sgd", batch_size=8, processes=2)
    p = predict_cpu(w, spec)
    assert p.validated  # PyTorch, gloo ring, 2 processes, dense: the structure baseline measure runs


@pytest.mark.slow
def test_torch_gloo_cases_run_on_this_machine() -> None:
    pytest.importorskip("torch", reason="torch extra not installed")
    from pimmodel.baselines.torch_measure import run_torch_measurement

    r = run_torch_measurement(processes=2)
    assert r["processes"] == 2 and len(r["cases"]) == 6 and r["finite"]
    assert all(c["measured_s"] > 0 and c["predicted_s"] > 0 for c in r["cases"])
    errors = sorted(abs(c["rel_error"]) for c in r["cases"])
    assert r["summary"]["within_25_percent"] == sum(e <= 0.25 for e in errors)
    assert math.isclose(r["summary"]["median_abs_rel_error"], (errors[2] + errors[3]) / 2)
    assert r["spec"]["sync_latency_us"] > 0 and len(r["probe"]["allreduce_curve"]) == 5
