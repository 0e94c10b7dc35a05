"""The ``hardware`` validation group: every test-kernel point is a case with a stated per-point tolerance that no
fit set, the leave-one-kernel-out CV per kernel is a case, the issue's MAPE goals are targets (met or missed, with
the values asserted here), and the cases that fail on the shipped spec are listed with their reason (xfail strict:
red the day they pass)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from pimmodel.calibration.hardware import apply, fit_both
from pimmodel.calibration.measurements import TEST_KERNELS, load_measurements, predict_point
from pimmodel.specs import load_hardware
from pimmodel.validation import Case, Target, validate
from pimmodel.validation.hardware import CV_MAPE_BOUND, POINT_TOLERANCE, HardwareRun

VA_FIXED = ("VA's kernel time has a 0.52-0.67 ms fixed part per launch at every DPU count (the other streaming "
            "kernels: 0.13-0.37 ms, fitted launch 0.13 ms); nothing in VA's host or DPU code explains it, and no fit "
            "sees VA")
KNOWN_DISCREPANCIES: dict[str, str] = {
    "VA 16 DPUs size 524288: kernel time": VA_FIXED,
    "VA 64 DPUs size 524288: kernel time": VA_FIXED,
    "VA 64 DPUs size 1048576: kernel time": VA_FIXED,
    "VA 64 DPUs size 2097152: kernel time": VA_FIXED,
}
TARGETS_MET = {"VA": False, "GEMV": True, "RED": False, "kernel_ms": True, "cpu_to_dpu_ms": False,
               "dpu_to_cpu_ms": True}
"""The issue's goals on the shipped spec: VA 17.9 % (> 15 %), RED 13.3 % (<= 15 % but above uPIMulator's 12.1 %),
CPU->DPU 28.7 % (> 20 %) are missed."""


@cache
def _run() -> HardwareRun:
    return HardwareRun.on(load_hardware("upmem-2556"))


@cache
def _cases() -> dict[str, Case]:
    return {c.name: c for c in _run().cases()}


@cache
def _targets() -> dict[str, Target]:
    return {t.quantity if t.kernel == "all" else t.kernel: t for t in _run().targets()}


def _names() -> list[str]:
    tests = [m for m in load_measurements() if m.kernel in TEST_KERNELS]
    return [f"{m.kernel} {m.dpus} DPUs size {m.size}: kernel time" for m in tests]


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.xfail(reason=KNOWN_DISCREPANCIES[n], strict=True)]
                                               if n in KNOWN_DISCREPANCIES else []) for n in _names()])
def test_test_kernel_point(name: str) -> None:
    c = _cases()[name]
    assert c.tolerance == POINT_TOLERANCE and c.kernel in TEST_KERNELS and c.dpus and c.size
    assert c.ok, f"{name}: {c.rel_error:+.1%}"


def test_cross_validation_cases() -> None:
    cv = [c for n, c in _cases().items() if "leave-one-kernel-out" in n]
    assert len(cv) == 13 and all(c.kind == "below" and c.reference == CV_MAPE_BOUND for c in cv)
    assert all(c.ok for c in cv), [(c.kernel, c.predicted) for c in cv if not c.ok]


@pytest.mark.parametrize("key", list(TARGETS_MET))
def test_target(key: str) -> None:
    t = _targets()[key]
    assert t.met is TARGETS_MET[key], f"{t.name}: {t.value:.1f} %"
    assert t.met or t.note, "a missed target says why"


def test_target_values() -> None:
    """The numbers the README and the report quote (shipped spec; rounded to 0.1 %)."""
    t = _targets()
    assert round(t["VA"].value, 1) == 17.9 and round(t["VA"].reference or 0, 1) == 36.3
    assert round(t["GEMV"].value, 1) == 6.3 and round(t["GEMV"].reference or 0, 1) == 41.4
    assert round(t["RED"].value, 1) == 13.3 and round(t["RED"].reference or 0, 1) == 12.1
    assert round(t["kernel_ms"].value, 1) == 9.1
    assert round(t["cpu_to_dpu_ms"].value, 1) == 28.7 and round(t["dpu_to_cpu_ms"].value, 1) == 11.8


@pytest.mark.slow
def test_point_tolerance_is_no_tighter_than_the_fitted_kernels_out_of_sample_error() -> None:
    """The per-point tolerance (25 %) is stated from the fitted kernels, not the test kernels: predicted by a fit
    without them (leave one kernel out), their points' kernel times miss by at most 26.7 %, 21.8 % at the 95th
    percentile."""
    hw = load_hardware("upmem-2556")
    rows = load_measurements()
    train = [m for m in rows if m.kernel not in TEST_KERNELS]
    errors = []
    for kernel in sorted({m.kernel for m in train}):
        fitted = apply(hw, fit_both(hw, [m for m in train if m.kernel != kernel]))
        errors += [abs(predict_point(m.kernel, m.dpus, m.size, fitted)["kernel_ms"] / m.kernel_ms - 1)
                   for m in rows if m.kernel == kernel]
    assert len(errors) == 139
    assert np.percentile(errors, 95) == pytest.approx(0.218, abs=0.005)
    assert max(errors) == pytest.approx(0.267, abs=0.005)
    assert np.percentile(errors, 95) < POINT_TOLERANCE


def test_group_shape() -> None:
    cases = list(_cases().values())
    assert len([c for c in cases if c.dpus]) == len(_names()) == 51
    record = validate(load_hardware("upmem-2556"), ["hardware"]).to_record()
    assert all({"kernel", "dpus", "size", "group", "name", "ok"} <= set(c) for c in record["cases"])
    group = record["groups"]["hardware"]
    assert (group["cases"], group["passed"]) == (64, 64 - len(KNOWN_DISCREPANCIES))
    # the upmem-scale test sources' targets: tests/validation/test_scale_sources.py
    scale = [t for t in record["targets"] if t["kernel"] in ("vpim", "memclave", "upmem-scale", "held-out")]
    assert (group["targets"] - len(scale), group["targets_met"] - sum(t["met"] for t in scale)) == \
        (6, sum(TARGETS_MET.values()))
    kernels = {r["kernel"]: r for r in group["kernels"]}
    assert set(kernels) == {m.kernel for m in load_measurements()}
    assert round(kernels["GEMV"]["upimulator_kernel_mape"], 1) == 41.4 and kernels["GEMV"]["role"] == "test"
    assert set(KNOWN_DISCREPANCIES) <= set(_cases())


def test_cpu_to_dpu_note_states_the_scatter_floor() -> None:
    """The CPU->DPU target's note, recomputed: where different kernels make the same MRAM calls (the same DPUs, bytes
    per DPU, mode and calls; the host programs differ only in what the host computed before the timed region, e.g.
    U/RED/host:102 against U/SCAN-RSS/host:102, none of it inside), the measured times differ so much that no
    prediction of (DPUs, calls) gets below 13.3 % MAPE on those 89 points; a free line (fixed + per byte) per DPU
    count through the 9 kernels with one or two bulk pushes gets 23.4 % (its rates: 0.56 GB/s for 1 DPU, 4.4 GB/s for
    64, where the spec keeps PrIM's 0.33 serial and 6.68 with 8 threads); the spec's model 32.2 % on the 89."""
    from scipy.optimize import minimize

    from pimmodel.kernels.prim import describe
    from pimmodel.validation.hardware import WHY_MISSED, same_calls_floor

    rows = load_measurements()
    points, floor = same_calls_floor(rows, "cpu_to_dpu_ms", True)
    hw = load_hardware("upmem-2556")
    model = 100 * np.mean([abs(predict_point(m.kernel, m.dpus, m.size, hw)["cpu_to_dpu_ms"] / m.cpu_to_dpu_ms - 1)
                           for m in points])
    assert (len(points), round(floor, 1), round(float(model), 1)) == (89, 13.3, 32.2)
    assert {m.kernel for m in points} == {"HST-L", "HST-S", "RED", "SCAN-RSS", "SCAN-SSA", "SEL", "UNI"}
    same = [m.cpu_to_dpu_ms for m in points if m.dpus == 4
            and describe(m.kernel, 4, m.size).host[1].bytes_per_dpu == 2**20]
    assert len(same) == 7 and round(min(same), 1) == 1.6 and round(max(same), 1) == 3.4
    bulk = {"GEMV", "HST-L", "HST-S", "RED", "SCAN-RSS", "SCAN-SSA", "SEL", "UNI", "VA"}
    errors, rates = [], {}
    for dpus in (1, 4, 16, 64):
        mine = [m for m in rows if m.kernel in bulk and m.dpus == dpus]
        size = np.array([sum(h.bytes_per_dpu * h.calls for h in describe(m.kernel, dpus, m.size).host
                             if h.to_pim and h.memory == "mram") for m in mine])
        measured = np.array([m.cpu_to_dpu_ms for m in mine])

        def line(x: np.ndarray, size: np.ndarray = size) -> np.ndarray:
            return np.exp(x[0]) + size * np.exp(x[1])

        best = minimize(lambda x, t=measured, f=line: np.mean(np.abs(f(x) / t - 1)), [np.log(0.1), np.log(3e-6)],
                        method="Nelder-Mead").x
        errors += list(np.abs(line(best) / measured - 1))
        rates[dpus] = dpus / np.exp(best[1]) / 1e6  # GB/s: bytes per ms -> GB/s
    assert round(100 * float(np.mean(errors)), 1) == pytest.approx(23.4, abs=0.2)
    assert rates[1] == pytest.approx(0.56, abs=0.01) and rates[64] == pytest.approx(4.4, abs=0.1)
    note = WHY_MISSED["cpu_to_dpu_ms"]
    assert "13.3 %" in note and "32.2 %" in note and "23.4 %" in note and "1.6-3.4 ms over 7 kernels" in note
    assert "~0.56 GB/s for one DPU and ~4.4 GB/s for a rank" in note
    assert "xeon_sp_translation.c:754-801" in note and "U/VA/host:66" in note


def test_red_note_numbers() -> None:
    """RED's note, recomputed at 1 DPU, 2^21 int64 elements: cycles per element at 350 MHz measured, predicted and
    uPIMulator's; the model is 13-16 % low at every point up to 16 DPUs; uPIMulator's worst point is at 64 DPUs."""
    from pimmodel.validation.hardware import WHY_MISSED

    hw = load_hardware("upmem-2556")
    rows = [m for m in load_measurements() if m.kernel == "RED"]
    one = next(m for m in rows if m.dpus == 1)
    assert one.size == 2**21

    def cycles(ms: float) -> float:
        return ms * 1e-3 * hw.dpu_clock_hz / one.size

    predicted = predict_point("RED", 1, one.size, hw)["kernel_ms"]
    assert (round(cycles(one.kernel_ms), 2), round(cycles(predicted), 2), round(cycles(one.sim_kernel_ms), 2)) == (
        8.26, 7.11, 7.95)
    misses = [predict_point("RED", m.dpus, m.size, hw)["kernel_ms"] / m.kernel_ms - 1 for m in rows if m.dpus <= 16]
    assert all(-0.165 < e < -0.125 for e in misses), misses
    worst = min(rows, key=lambda m: m.sim_kernel_ms / m.kernel_ms)
    assert worst.dpus == 64 and round(100 * (worst.sim_kernel_ms / worst.kernel_ms - 1)) == -39
    note = WHY_MISSED["RED"]
    assert "13-16 % too little" in note and round(-100 * min(misses)) == 16 and round(-100 * max(misses)) == 13
    assert "8.26" in note and "7.11" in note and "7.95" in note and "-39 %" in note


def test_va_note_numbers() -> None:
    """VA's note, recomputed: per kernel and DPU count (4, 16, 64; those with three sizes or more), the line through
    the two smallest sizes' kernel times meets zero size at 0.52-0.67 ms for VA and 0.13-0.37 ms for the other
    streaming kernels; VA's four smallest points are 32-54 % low, its largest (9,437,184 elements) 7-8 %."""
    from pimmodel.validation.hardware import WHY_MISSED

    rows = load_measurements()

    def intercepts(kernel: str) -> list[float]:
        out = []
        for dpus in (4, 16, 64):
            pts = sorted((m.size, m.kernel_ms) for m in rows if m.kernel == kernel and m.dpus == dpus)
            if len(pts) < 3:  # a DPU count with only two sizes (HST-L at 64) says nothing about the trend
                continue
            (x0, y0), (x1, y1) = pts[:2]
            out.append(y0 - (y1 - y0) / (x1 - x0) * x0)
        return out

    va = intercepts("VA")
    others = [v for k in ("GEMV", "HST-L", "HST-S", "RED", "SCAN-RSS", "SCAN-SSA", "SEL", "UNI") for v in intercepts(k)]
    assert (round(min(va), 2), round(max(va), 2)) == (0.52, 0.67)
    assert (round(min(others), 2), round(max(others), 2)) == (0.13, 0.37)
    hw = load_hardware("upmem-2556")
    misses = sorted(predict_point("VA", m.dpus, m.size, hw)["kernel_ms"] / m.kernel_ms - 1
                    for m in rows if m.kernel == "VA")
    assert round(-100 * misses[0]) == 54 and round(-100 * misses[3]) == 32
    largest = [predict_point("VA", m.dpus, m.size, hw)["kernel_ms"] / m.kernel_ms - 1
               for m in rows if m.kernel == "VA" and m.size == 9437184]
    assert all(-0.085 < e < -0.065 for e in largest), largest
    note = WHY_MISSED["VA"]
    assert "0.52-0.67 ms" in note and "0.13-0.37 ms" in note and "32-54 %" in note and "7-8 %" in note
