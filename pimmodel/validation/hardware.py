"""The ``hardware`` group: the PrIM kernels' real UPMEM measurements (``validation/upimulator-hw.csv``) against
the kernel descriptions priced on the spec, whose kernel and host constants were fitted on every kernel but the
test kernels VA, GEMV and RED (``pimmodel.calibration.hardware``).

Cases (each must pass):

- one per test-kernel point: the kernel time within ``POINT_TOLERANCE``, a stated per-point tolerance no tighter
  than what the model shows out of sample on the fitted kernels (the 95th percentile of their leave-one-kernel-out
  per-point errors is 21.8 %, the largest 26.7 %; ``tests/validation/test_hardware_cases.py`` recomputes them);
- one per kernel: the leave-one-kernel-out cross-validated kernel-time MAPE of the stored calibration at most
  ``CV_MAPE_BOUND`` (for a test kernel the main fit, which never saw it).

Targets (the issue's aggregate goals, reported with ``met``; a missed one does not fail the run):

- per test kernel: kernel-time MAPE at most ``TEST_MAPE_TARGET`` and below uPIMulator's on the same points;
- over all 13 kernels (fitted ones in-sample, test ones out-of-sample): kernel-time MAPE at most
  ``ALL_MAPE_TARGET``; CPU->DPU and DPU->CPU MAPE at most ``HOST_MAPE_TARGET`` each.

Beside them, ``kernels``: per kernel its MAPE (kernel, CV, both transfer directions) next to uPIMulator's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..calibration.hardware_result import HardwareCalibration, read_hardware_calibration
from ..calibration.kernel_interval import cv_coverage, kernel_interval, read_residuals
from ..calibration.measurements import QUANTITIES, TEST_KERNELS, Measurement, load_measurements, mape, predict_point
from ..kernels import pricing
from ..specs import HardwareSpec
from .cases import Case, Target
from .prim_scale import SOURCES, load_prim_runs

POINT_TOLERANCE = 0.25
"""Per test-kernel point: |predicted / measured - 1| <= 25 %."""
TEST_MAPE_TARGET = 15.0
ALL_MAPE_TARGET = 12.0
HOST_MAPE_TARGET = 20.0
CV_MAPE_BOUND = 25.0
SOURCE = "real UPMEM system: uPIMulator's hardware sheet (validation/upimulator-hw.csv)"
POINT_SOURCE = (SOURCE + "; tolerance >= the fitted kernels' out-of-sample per-point error (leave-one-kernel-out: "
                "95th percentile 21.8 %, largest 26.7 %)")

WHY_MISSED: dict[str, str] = {
    "VA": "VA's kernel time has a fixed part per launch that nothing in its host or DPU code explains: the line "
          "through its two smallest sizes at each DPU count (4, 16, 64; 3+ sizes) meets zero size at 0.52-0.67 ms, "
          "those of the other streaming kernels (GEMV, HST-L, HST-S, RED, SCAN-RSS, SCAN-SSA, SEL, UNI) at 0.13-0.37 "
          "ms, and the fit (on the other kernels, never VA) gives a launch 0.13 ms; its four smallest points miss by "
          "32-54 %, its largest by 7-8 %",
    "RED": "RED's description predicts 13-16 % too little on every point from 1 to 16 DPUs: 8.26 cycles per int64 "
           "element measured (1 DPU, 2^21 elements) against 7.11 predicted (6 instructions per element, 0.78 of the "
           "DMA hidden); uPIMulator, which runs the compiled code, takes 7.95 there (-4 %), so the compiled loop is "
           "likely longer than the 6 instructions the counting rule reads off the C, but no compiled RED code is "
           "published to count it; uPIMulator's 12.1 % comes from its small 16-64 DPU points (down to -39 %)",
    "cpu_to_dpu_ms": "the measured pushes scatter up to 2x between kernels that make the same calls (4 DPUs, one "
                     "1-MiB push per DPU: 1.6-3.4 ms over 7 kernels): on the 89 points where kernels make the same "
                     "MRAM calls no prediction that depends on the DPUs and the calls alone gets below 13.3 % (the "
                     "model: 32.2 %), and a free line per DPU count (fixed + per byte) through the 9 kernels with one "
                     "or two bulk pushes gets 23.4 %. The code leaves the scatter to placement, not to the kernels: "
                     "the SDK runs a rank's transfer threads on the rank's NUMA node (xeon_sp_translation.c:754-801, "
                     "SDK 2021.3), the host buffers are plain malloc wherever the program runs (U/VA/host:80-83) and "
                     "dpu_alloc(NR_DPUS, NULL) picks ranks without regard to either (U/VA/host:66); NUMA-aware "
                     "allocation changes host-PIM transfer throughput by up to 2.9x (arXiv 2510.15927). Beyond it, "
                     "the measuring host moves ~0.56 GB/s for one DPU and ~4.4 GB/s for a rank against PrIM's 0.33 "
                     "GB/s serial and 6.68 GB/s with 8 threads, which the spec keeps (R: the machine the study ran on)",
}


@dataclass(frozen=True)
class HardwareRun:
    """The data set's points, their predictions on a spec, and the stored calibration (for the CV errors)."""

    rows: tuple[Measurement, ...]
    predicted: tuple[dict[str, float], ...]
    calibration: HardwareCalibration

    @classmethod
    def on(cls, hw: HardwareSpec, calibration: HardwareCalibration | None = None,
           measurements: Sequence[Measurement] | None = None) -> HardwareRun:
        rows = tuple(measurements if measurements is not None else load_measurements())
        return cls(rows, tuple(predict_point(m.kernel, m.dpus, m.size, hw) for m in rows),
                   calibration if calibration is not None else read_hardware_calibration())

    def mape(self, quantity: str, kernel: str | None = None, simulated: bool = False) -> float:
        idx = [i for i, m in enumerate(self.rows) if kernel in (None, m.kernel)]
        measured = [self.rows[i].value(quantity) for i in idx]
        if simulated:
            return mape([self.rows[i].sim_kernel_ms for i in idx], measured)
        return mape([self.predicted[i][quantity] for i in idx], measured)

    def cases(self) -> list[Case]:
        cases = [Case("hardware", f"{m.kernel} {m.dpus} DPUs size {m.size}: kernel time", "kernel", m.kernel_ms,
                      p["kernel_ms"], POINT_TOLERANCE, unit="ms", source=POINT_SOURCE, kernel=m.kernel, dpus=m.dpus,
                      size=m.size)
                 for m, p in zip(self.rows, self.predicted, strict=True) if m.kernel in TEST_KERNELS]
        cal = self.calibration
        for e in cal.errors:
            cases.append(Case("hardware", f"{e.kernel} leave-one-kernel-out CV kernel-time MAPE <= {CV_MAPE_BOUND:g} %",
                              "kernel", CV_MAPE_BOUND, e.cv_kernel_mape, 0.0, "below", "%", SOURCE,
                              f"from {cal.label}; {'test kernel: the main fit' if e.role == 'test' else 'refit'}",
                              e.kernel))
        return cases

    def targets(self) -> list[Target]:
        out = []
        for name in TEST_KERNELS:
            ours, sim = self.mape("kernel_ms", name), self.mape("kernel_ms", name, simulated=True)
            target = Target("hardware", f"{name} kernel-time MAPE <= {TEST_MAPE_TARGET:g} % (never fitted) and below "
                            "uPIMulator's", name, "kernel_ms", ours, TEST_MAPE_TARGET, sim,
                            "uPIMulator's MAPE on the same points")
            out.append(target if target.met else _with_note(target, WHY_MISSED.get(name, "")))
        for quantity, goal in (("kernel_ms", ALL_MAPE_TARGET), ("cpu_to_dpu_ms", HOST_MAPE_TARGET),
                               ("dpu_to_cpu_ms", HOST_MAPE_TARGET)):
            target = Target("hardware", f"all 13 kernels: {quantity.removesuffix('_ms')} MAPE <= {goal:g} %", "all",
                            quantity, self.mape(quantity), goal)
            note = (f"uPIMulator's on the same points: {self.mape('kernel_ms', simulated=True):.1f} %"
                    if quantity == "kernel_ms" else "")
            out.append(_with_note(target, note if target.met else WHY_MISSED.get(quantity, note)))
        return out

    def kernels(self) -> list[dict[str, Any]]:
        """Per kernel: role, points, MAPE of each quantity, the stored CV kernel-time MAPE and uPIMulator's."""
        cv = {e.kernel: e.cv_kernel_mape for e in self.calibration.errors}
        rows = []
        for name in sorted({m.kernel for m in self.rows}):
            rows.append({"kernel": name, "role": "test" if name in TEST_KERNELS else "fit",
                         "points": sum(m.kernel == name for m in self.rows),
                         **{f"{q.removesuffix('_ms')}_mape": self.mape(q, name) for q in QUANTITIES},
                         "cv_kernel_mape": cv.get(name, float("nan")),
                         "upimulator_kernel_mape": self.mape("kernel_ms", name, simulated=True)})
        return rows


def same_calls_floor(rows: Sequence[Measurement], quantity: str, to_pim: bool) -> tuple[list[Measurement], float]:
    """The lowest MAPE (%) any prediction that depends only on the DPU count and a kernel's MRAM transfer calls in
    one direction (bytes per DPU, mode, calls: ``KernelRun.host``) can reach: over the groups of ``rows`` where at
    least two kernels make the same calls, each group's best single value (the one that minimises its MAPE, which
    is one of the measured values). Returns (the points of those groups, the floor MAPE)."""
    from ..kernels.prim import describe

    groups: dict[tuple[Any, ...], list[Measurement]] = {}
    for m in rows:
        host = describe(m.kernel, m.dpus, m.size).host
        calls = tuple(sorted((float(h.bytes_per_dpu), h.mode, float(h.calls)) for h in host
                             if h.to_pim == to_pim and h.memory == "mram"))
        groups.setdefault((m.dpus, calls), []).append(m)
    errors: list[float] = []
    points: list[Measurement] = []
    for members in groups.values():
        if len({m.kernel for m in members}) < 2:
            continue
        measured = [m.value(quantity) for m in members]
        errors += min(([abs(c / t - 1) for t in measured] for c in measured), key=sum)
        points += members
    return points, 100 * sum(errors) / max(1, len(errors))


def _with_note(target: Target, note: str) -> Target:
    return Target(target.group, target.name, target.kernel, target.quantity, target.value, target.target,
                  target.reference, target.reference_name, note)


def hardware_cases(hw: HardwareSpec, calibration: HardwareCalibration | None = None,
                   measurements: Sequence[Measurement] | None = None) -> list[Case]:
    """The hardware group's cases on ``hw`` (CV from ``calibration``, None: the shipped one)."""
    return HardwareRun.on(hw, calibration, measurements).cases()


def hardware_targets(hw: HardwareSpec, measurements: Sequence[Measurement] | None = None) -> list[Target]:
    """The hardware group's aggregate targets on ``hw``."""
    return HardwareRun.on(hw, measurements=measurements).targets()


# ---------------------------------------------------------------- the upmem-scale test sources: kernel time at scale
SCALE_KERNEL_TARGET = 8.0
"""Kernel time of the expressible PrIM runs within 8 % (MAPE) at every DPU count (issue 17)."""
SCALE_OUTSIDE_TARGET = 10.0
"""95 % intervals cover >= 90 % of the held-out points: at most 10 % outside."""
SCALE_HALF_WIDTH_TARGET = 35.0
"""Median half-width of the intervals at most 35 % of the prediction."""


def scale_test_points(hw: HardwareSpec) -> list[dict[str, Any]]:
    """Every row of the upmem-scale PrIM test files (``validation.prim_scale``): the expressible ones priced on
    ``hw`` with their 95 % interval (``calibration.kernel_interval``), the others with why the model cannot express
    them. Test rows: they reach no fit, default or interval (the interval is built from the fit rows only)."""
    res = read_residuals()
    out = []
    for run in load_prim_runs():
        record = run.to_record()
        if run.expressible and run.size is not None and run.kernel_ms is not None:
            predicted = predict_point(run.kernel, run.dpus, run.size, hw, **run.shape)["kernel_ms"]
            band = kernel_interval(run.kernel, run.dpus, run.size, predicted, res, **run.shape)
            record.update(kernel_ms=predicted, low_ms=band["low_ms"], high_ms=band["high_ms"],
                          half_width=band["half_width"], outside_doublings=band["outside_doublings"],
                          error_pct=100 * (predicted / run.kernel_ms - 1),
                          inside=band["low_ms"] <= run.kernel_ms <= band["high_ms"])
        out.append(record)
    return out


def held_out_test_kernel_points(hw: HardwareSpec) -> list[dict[str, Any]]:
    """uPIMulator's test-kernel rows (VA, GEMV, RED: never fitted) in the records of ``scale_test_points``, source
    ``upimulator-test``: held-out points too, for the interval's coverage."""
    res = read_residuals()
    out = []
    for m in load_measurements():
        if m.kernel not in TEST_KERNELS:
            continue
        predicted = predict_point(m.kernel, m.dpus, m.size, hw)["kernel_ms"]
        band = kernel_interval(m.kernel, m.dpus, m.size, predicted, res)
        out.append({"source": "upimulator-test", "subset": "test kernels", "kernel": m.kernel, "dpus": m.dpus,
                    "size": m.size, "shape": {}, "measured_kernel_ms": m.kernel_ms, "expressible": True,
                    "why_not": "", "note": "", "origin": SOURCE, "kernel_ms": predicted, "low_ms": band["low_ms"],
                    "high_ms": band["high_ms"], "half_width": band["half_width"],
                    "outside_doublings": band["outside_doublings"],
                    "error_pct": 100 * (predicted / m.kernel_ms - 1),
                    "inside": band["low_ms"] <= m.kernel_ms <= band["high_ms"]})
    return out


def _summary(points: list[dict[str, Any]]) -> dict[str, Any]:
    priced = [p for p in points if p["expressible"]]
    by_dpus: dict[int, list[float]] = {}
    for p in priced:
        by_dpus.setdefault(p["dpus"], []).append(abs(p["error_pct"]))
    errors = [abs(p["error_pct"]) for p in priced]
    inside = sum(bool(p["inside"]) for p in priced)
    widths = sorted(100 * p["half_width"] for p in priced)
    worst = sorted(priced, key=lambda p: -abs(p["error_pct"]))[:3]
    return {"rows": len(points), "expressible": len(priced), "not_expressible": len(points) - len(priced),
            "kernel_mape": sum(errors) / len(errors) if errors else float("nan"),
            "kernel_max_error": max(errors, default=float("nan")),
            "within_target": sum(e <= SCALE_KERNEL_TARGET for e in errors),
            "mape_by_dpus": {n: sum(v) / len(v) for n, v in sorted(by_dpus.items())},
            "inside": inside, "coverage": inside / len(priced) if priced else float("nan"),
            "median_half_width": (widths[len(widths) // 2] if len(widths) % 2 else
                                  (widths[len(widths) // 2 - 1] + widths[len(widths) // 2]) / 2) if widths
            else float("nan"),
            "worst": [f"{p['kernel']} {p['dpus']} DPUs {p['error_pct']:+.0f} %" for p in worst]}


def scale_test_section(hw: HardwareSpec, calibration: HardwareCalibration | None = None) -> tuple[list[Target],
                                                                                                 dict[str, Any]]:
    """The hardware group's upmem-scale test sources (kernel time; the transfer section sits beside it): targets
    per source and pooled, and a detail record ``{"fit": ..., "sources": {source: summary}, "points": [...]}``
    with the fit error beside (the fitted kernels' in-sample and leave-one-kernel-out kernel-time MAPE)."""
    cal = calibration if calibration is not None else read_hardware_calibration()
    fitted = [e for e in cal.errors if e.role == "fit"]
    n = sum(e.points for e in fitted)
    fit = {"kernel_mape": sum(e.kernel_mape * e.points for e in fitted) / n,
           "cv_kernel_mape": sum(e.cv_kernel_mape * e.points for e in fitted) / n,
           "interval_cv": cv_coverage(read_residuals()), "points": n, "dpus": "1-64",
           "source": SOURCE + ", fitted kernels"}
    points = scale_test_points(hw)
    sources = {s: _summary([p for p in points if p["source"] == s]) for s in SOURCES}
    sources["upmem-scale"] = _summary(points)
    held = held_out_test_kernel_points(hw)
    sources["upimulator-test"] = _summary(held)
    sources["held-out"] = _summary(points + held)
    targets: list[Target] = []
    for s, summ in sources.items():
        if s in ("upimulator-test", "held-out"):
            continue
        if not summ["expressible"]:
            continue
        label = "upmem-scale PrIM runs" if s == "upmem-scale" else f"{s} PrIM runs"
        worst_dpus = max(summ["mape_by_dpus"].items(), key=lambda kv: kv[1])
        note = "worst points: " + ", ".join(summ["worst"])
        targets.append(Target("hardware", f"{label} (test, never fitted): kernel-time MAPE <= "
                              f"{SCALE_KERNEL_TARGET:g} % at every DPU count (worst: {worst_dpus[0]} DPUs; fit rows "
                              f"{fit['kernel_mape']:.1f} % in-sample, {fit['cv_kernel_mape']:.1f} % CV)",
                              s, "kernel_ms", worst_dpus[1], SCALE_KERNEL_TARGET, note=note))
        targets.append(Target("hardware", f"{label}: 95 % intervals cover >= {100 - SCALE_OUTSIDE_TARGET:g} % "
                              f"({summ['inside']} of {summ['expressible']} inside; value: % outside)", s,
                              "kernel_ms", 100 * (1 - summ["coverage"]), SCALE_OUTSIDE_TARGET, note=note))
        targets.append(Target("hardware", f"{label}: median interval half-width <= {SCALE_HALF_WIDTH_TARGET:g} %", s,
                              "kernel_ms", summ["median_half_width"], SCALE_HALF_WIDTH_TARGET))
    summ = sources["held-out"]
    targets.append(Target("hardware", f"every held-out kernel point (upmem-scale PrIM runs and uPIMulator's test "
                          f"kernels VA, GEMV, RED): 95 % intervals cover >= {100 - SCALE_OUTSIDE_TARGET:g} % "
                          f"({summ['inside']} of {summ['expressible']} inside; value: % outside)", "held-out",
                          "kernel_ms", 100 * (1 - summ["coverage"]), SCALE_OUTSIDE_TARGET,
                          note=f"uPIMulator's test kernels: {sources['upimulator-test']['inside']} of "
                               f"{sources['upimulator-test']['expressible']} inside"))
    targets.append(Target("hardware", f"every held-out kernel point: median interval half-width <= "
                          f"{SCALE_HALF_WIDTH_TARGET:g} %", "held-out", "kernel_ms", summ["median_half_width"],
                          SCALE_HALF_WIDTH_TARGET))
    return targets, {"fit": fit, "sources": sources, "points": points + held}


# ---------------------------------------------------------------- the upmem-scale test sources: host transfers
SCALE_TRANSFER_TARGET = 30.0
"""Host-transfer times of the PrIM runs within 30 % (MAPE; they scatter 2-4x between runs, so the median is
reported too) (issue 17)."""


def scale_transfer_points(hw: HardwareSpec) -> list[dict[str, Any]]:
    """Both transfer directions of every expressible upmem-scale PrIM run with a measured time: the prediction, its
    95 % interval (``calibration.transfers.transfer_log_sd`` of the run's bytes per DPU, from the fit files'
    machine spread: no test row reaches it), the error and whether the measurement falls inside."""
    import math

    from ..calibration.transfers import Z_95, transfer_log_sd
    from ..kernels.prim import describe

    out = []
    for run in load_prim_runs():
        if not (run.expressible and run.size is not None):
            continue
        described = describe(run.kernel, run.dpus, run.size, **run.shape)
        predicted = predict_point(run.kernel, run.dpus, run.size, hw, **run.shape)
        for direction, key, measured in (("to-dpu", "cpu_to_dpu_ms", run.cpu_to_dpu_ms),
                                         ("from-dpu", "dpu_to_cpu_ms", run.dpu_to_cpu_ms)):
            if measured is None or measured <= 0 or predicted[key] <= 0:
                continue
            per_dpu = float(pricing.host_calls_bytes(described.host, 1, direction == "to-dpu"))
            half = Z_95 * transfer_log_sd(max(per_dpu, 8.0), run.dpus, hw, direction)
            ms = predicted[key]
            low, high = ms * math.exp(-half), ms * math.exp(half)
            out.append({"source": run.source, "kernel": run.kernel, "dpus": run.dpus, "size": run.size,
                        "direction": direction, "measured_ms": measured, "predicted_ms": ms, "low_ms": low,
                        "high_ms": high, "half_width": (high - low) / 2 / ms,
                        "error_pct": 100 * (ms / measured - 1), "inside": low <= measured <= high})
    return out


def _transfer_summary(points: list[dict[str, Any]]) -> dict[str, Any]:
    import statistics

    errors = [abs(p["error_pct"]) for p in points]
    return {"points": len(points),
            "mape": statistics.fmean(errors) if errors else float("nan"),
            "median_error": statistics.median(errors) if errors else float("nan"),
            "inside": sum(bool(p["inside"]) for p in points),
            "coverage": sum(bool(p["inside"]) for p in points) / len(points) if points else float("nan"),
            "median_half_width": 100 * statistics.median(p["half_width"] for p in points) if points
            else float("nan"),
            "dpus": sorted({p["dpus"] for p in points})}


def scale_transfer_section(hw: HardwareSpec) -> tuple[list[Target], dict[str, Any]]:
    """The test sources' host-transfer times per source and direction, beside the fit error (the fit files'
    per-machine MAPE, ``calibration.transfers``): targets on the MAPE (30 %), with the median error and the
    interval coverage in the detail record."""
    from ..calibration.transfers import MACHINES, errors, machine_spec

    fit = {m: {k: round(v["mape_pct"], 1) for k, v in errors(machine_spec(hw, m), m).items()} for m in MACHINES}
    points = scale_transfer_points(hw)
    sources: dict[str, Any] = {}
    targets: list[Target] = []
    for s in SOURCES:
        for direction in ("to-dpu", "from-dpu"):
            sel = [p for p in points if p["source"] == s and p["direction"] == direction]
            if not sel:
                continue
            summ = _transfer_summary(sel)
            sources[f"{s} {direction}"] = summ
            key = "cpu_to_dpu_ms" if direction == "to-dpu" else "dpu_to_cpu_ms"
            targets.append(Target("hardware", f"{s} PrIM runs (test, never fitted): {direction} transfer MAPE <= "
                                  f"{SCALE_TRANSFER_TARGET:g} % (median {summ['median_error']:.0f} %, "
                                  f"{summ['inside']} of {summ['points']} inside the 95 % interval; fit files: "
                                  f"bpforest/upvec per-machine MAPE in the detail)", s, key, summ["mape"],
                                  SCALE_TRANSFER_TARGET))
    sources["all"] = _transfer_summary(points)
    return targets, {"fit": fit, "sources": sources, "points": points}
