"""The hardware fit: it recovers known constants from synthetic data generated with them, the shipped calibration
never saw the test kernels, and the spec carries exactly its values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pimmodel.calibration.hardware import BANDWIDTH_CONSTANTS, HOST_CONSTANTS, KERNEL_CONSTANTS, apply, fit_both
from pimmodel.calibration.hardware_result import read_hardware_calibration
from pimmodel.calibration.measurements import TEST_KERNELS, load_measurements, predict_point
from pimmodel.specs import load_hardware

TRUTH = {"launch_overhead_s": 0.3e-3, "launch_per_dpu_s": 2e-6, "dma_compute_overlap": 0.6,
         "barrier_instructions_per_tasklet": 20.0, "transfer_call_overhead_s": 80e-6, "pull_call_extra_s": 40e-6,
         "wram_call_overhead_s": 30e-6, "wram_word_s": 3e-6, "push_line_dpu_s_per_byte": 0.2e-9,
         "pull_line_dpu_s_per_byte": 1e-9, "push_bytes_per_s_per_rank": 3e9, "pull_bytes_per_s_per_rank": 2e9,
         "serial_to_pim_bytes_per_s": 0.4e9, "serial_from_pim_bytes_per_s": 0.1e9}


def test_fit_recovers_known_constants_from_synthetic_data() -> None:
    base = load_hardware("upmem-2556")
    truth = base.replace(**TRUTH)
    points = []
    for m in load_measurements():
        if m.kernel in TEST_KERNELS:
            continue
        p = predict_point(m.kernel, m.dpus, m.size, truth)
        points.append(replace(m, kernel_ms=p["kernel_ms"], cpu_to_dpu_ms=p["cpu_to_dpu_ms"],
                              dpu_to_cpu_ms=p["dpu_to_cpu_ms"]))
    fits = fit_both(base, points, HOST_CONSTANTS + BANDWIDTH_CONSTANTS)
    recovered = {**fits[0].as_dict(), **fits[1].as_dict()}
    for name, value in TRUTH.items():
        assert recovered[name] == pytest.approx(value, rel=1e-3, abs=1e-9), name
    assert fits[0].rms_log_residual < 1e-6 and fits[1].rms_log_residual < 1e-6
    assert apply(base, fits).dma_compute_overlap == pytest.approx(0.6, rel=1e-3)


def test_shipped_calibration_never_fitted_a_test_kernel() -> None:
    cal = read_hardware_calibration()
    assert set(cal.test_kernels) == {"VA", "GEMV", "RED"}
    fitted = cal.fitted_points()
    assert fitted and not any(k in TEST_KERNELS for k, _, _ in fitted)
    train = {m.point for m in load_measurements() if m.kernel not in TEST_KERNELS}
    assert set(cal.kernel_fit.points) == train and set(cal.host_fit.points) == train
    assert {e.kernel for e in cal.errors if e.role == "test"} == set(TEST_KERNELS)
    assert set(cal.kernel_fit.names) == {c.name for c in KERNEL_CONSTANTS}
    assert set(cal.host_fit.names) == {c.name for c in HOST_CONSTANTS}


def test_spec_carries_the_fitted_values() -> None:
    hw, cal = load_hardware("upmem-2556"), read_hardware_calibration()
    for name, value in cal.values().items():
        assert getattr(hw, name) == pytest.approx(value, rel=1e-3, abs=1e-9), name
        assert hw.sources[name].startswith("F:") and "hardware-upmem-2556.json" in hw.sources[name]


def test_stored_errors_match_the_spec() -> None:
    """The per-kernel errors stored with the fit are what the shipped spec predicts (to the 4-digit rounding of
    the constants in the TOML)."""
    from pimmodel.calibration.hardware import errors_by_kernel

    hw, cal = load_hardware("upmem-2556"), read_hardware_calibration()
    live = errors_by_kernel(hw, load_measurements())
    for e in cal.errors:
        assert live[e.kernel]["kernel_ms"] == pytest.approx(e.kernel_mape, abs=0.2), e.kernel
        assert live[e.kernel]["cpu_to_dpu_ms"] == pytest.approx(e.cpu_to_dpu_mape, abs=0.2), e.kernel
