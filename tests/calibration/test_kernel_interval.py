"""The kernel-time interval: built from leave-one-kernel-out residuals of the fit rows only, checked against a
hand recomputation, its coverage computed from those residuals, and a broken interval that the check catches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pimmodel.calibration.kernel_interval import (
    KernelResiduals,
    build_residuals,
    cv_coverage,
    interval_from,
    kernel_interval,
    loo_residuals,
    outside_doublings,
    read_residuals,
)
from pimmodel.calibration.measurements import TEST_KERNELS, load_measurements
from pimmodel.errors import SpecError
from pimmodel.kernels.prim import describe
from pimmodel.specs import load_hardware


def test_residuals_hold_fit_rows_only() -> None:
    res = read_residuals()
    fit_rows = [m for m in load_measurements() if m.kernel not in TEST_KERNELS]
    kernels = {p[0] for p in res.points}
    assert kernels == {m.kernel for m in fit_rows} and not kernels & set(TEST_KERNELS)
    assert len(res.points) == len(fit_rows) == 139
    assert res.dpus_range == (1, 64)
    with pytest.raises(SpecError, match="test kernel"):
        loo_residuals(load_hardware("upmem-2556"), load_measurements())


def test_interval_by_hand_inside_and_outside_the_fitted_range() -> None:
    res = read_residuals()
    r = sorted(abs(p[3]) for p in res.points)
    h = r[math.ceil(140 * 0.95) - 1]  # the 133rd smallest of 139 |log(pred / meas)|: the conformal 95 % quantile
    # SCAN-RSS, 64 DPUs, 262,144 elements: a fitted point, inside both ranges
    band = kernel_interval("SCAN-RSS", 64, 262_144, 10.0, res)
    assert band["outside_doublings"] == 0.0
    assert (band["low_ms"], band["high_ms"]) == pytest.approx((10 * math.exp(-h), 10 * math.exp(h)))
    # the same footprint per DPU on 2,048 DPUs: log2(2048 / 64) = 5 doublings beyond the fitted DPU counts
    run = describe("SCAN-RSS", 2048, 262_144 * 32)
    assert res.bytes_range[0] <= run.mram_bytes <= res.bytes_range[1]
    assert outside_doublings(res, 2048, float(run.mram_bytes)) == pytest.approx(5.0)
    wide = kernel_interval("SCAN-RSS", 2048, 262_144 * 32, 10.0, res)
    hw5 = h * (1 + 5 * res.growth_per_doubling)
    assert (wide["low_ms"], wide["high_ms"]) == pytest.approx((10 * math.exp(-hw5), 10 * math.exp(hw5)))
    assert wide["half_width"] >= band["half_width"]


def test_coverage_from_the_loo_residuals_by_hand() -> None:
    res = read_residuals()
    inside = 0
    for k in sorted({p[0] for p in res.points}):
        others = sorted(abs(p[3]) for p in res.points if p[0] != k)
        h = others[min(math.ceil((len(others) + 1) * 0.95), len(others)) - 1]
        inside += sum(abs(p[3]) <= h for p in res.points if p[0] == k)
    cov = cv_coverage(res)
    assert cov["inside"] == inside and cov["points"] == 139
    # measured on the fit rows: 126 of 139 (90.6 %) with each kernel judged by the others' residuals
    assert cov["coverage"] == pytest.approx(126 / 139)
    # in-sample (every residual in the percentile) the 95 % band holds >= 95 % of them by construction
    h_all = res.half_log()
    assert np.mean(np.abs(res.log_residuals) <= h_all) >= 0.95


def test_a_broken_interval_fails_the_coverage_check() -> None:
    res = read_residuals()
    assert cv_coverage(res)["coverage"] >= 0.9
    # break it on purpose: residuals shrunk 4x make an interval too narrow for the real scatter of the fit rows
    narrow = KernelResiduals(res.hardware, tuple((k, n, s, r / 4) for k, n, s, r in res.points), res.dpus_range,
                             res.bytes_range, res.growth_per_doubling)
    low, high = interval_from(narrow, 1.0)
    truth = np.exp(-res.log_residuals)  # measured / predicted of the real LOO points
    with pytest.raises(AssertionError):
        assert np.mean((truth >= low) & (truth <= high)) >= 0.9


@pytest.mark.slow
def test_shipped_residuals_are_current() -> None:
    """Re-running the leave-one-kernel-out refits (about 4 s) reproduces the shipped file."""
    fresh = build_residuals(load_hardware("upmem-2556"), load_measurements())
    shipped = read_residuals()
    assert [p[:3] for p in fresh.points] == [p[:3] for p in shipped.points]
    assert np.allclose(fresh.log_residuals, shipped.log_residuals, atol=1e-6)
    assert fresh.growth_per_doubling == pytest.approx(shipped.growth_per_doubling, abs=1e-6)
