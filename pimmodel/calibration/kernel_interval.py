"""95 % intervals for PrIM kernel-time predictions, from measured out-of-sample error (one home).

What the interval is built from (``build_residuals``, stored in ``data/calibration/kernel-residuals-upmem-2556.json``):

- **leave-one-kernel-out residuals**: for each fitted kernel in turn (never the test kernels VA, GEMV, RED, whose
  rows never reach a fit or a default), the kernel-time constants are refitted on the other fitted kernels' rows
  (``calibration.hardware.fit_group``) and the left-out kernel's points are predicted; the residual of a point is
  ``log(predicted / measured)``. The interval is symmetric in log: with h the conformal 95 % quantile of |residual| (the
  ceil((n + 1) 0.95)-th smallest),
  ``low = predicted x exp(-h)``, ``high = predicted x exp(h)``. (The residuals' errors are mostly per kernel,
  -23 % to +14 % in the mean; judged with each kernel left out of the percentile (``cv_coverage``), the symmetric
  form covers 91 % of the fit rows, the asymmetric 2.5-97.5 % quantile range 86 %, so the symmetric one is used.)
- **a widening outside the fitted range**, measured the same way: the constants are refitted on the rows at
  <= ``EXTRAPOLATION_SPLIT_DPUS`` DPUs only (leaving each kernel out again) and the left-out kernel's points at
  more DPUs are predicted; the ratio of the 95th percentile of their |residual| to that of the in-range points,
  per doubling of DPUs beyond the split, is ``growth_per_doubling``. A prediction at d doublings (log2) outside the
  fitted DPU counts, plus outside the fitted per-DPU MRAM footprints (sizes), scales h by
  ``1 + growth_per_doubling x d``. That the same rate holds for sizes as for DPU counts is an assumption (A): the
  fit rows do not separate the two.

``kernel_interval`` is the one function callers use (``pimmodel kernel``, ``validate``'s hardware group, and the
predict/scale records that quote a kernel time). The interval covers the model's structural error as the fit rows
show it; it says nothing about a machine other than the measured one (the test sources check that).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SpecError
from ..kernels.prim import DoesNotFit, describe
from ..resources import data_dir
from ..specs import HardwareSpec
from .hardware_result import read_json, write_json
from .measurements import TEST_KERNELS, Measurement, predict_point

LEVEL = 0.95
EXTRAPOLATION_SPLIT_DPUS = 16
"""The widening's experiment fits on the rows at <= 16 DPUs and predicts the 64-DPU rows (two doublings out)."""
RESIDUALS_NAME = "kernel-residuals-upmem-2556.json"
SCHEMA_VERSION = 1


def residuals_path() -> Path:
    return data_dir("calibration") / RESIDUALS_NAME


@dataclass(frozen=True)
class KernelResiduals:
    """Leave-one-kernel-out kernel-time residuals and what the interval derives from them."""

    hardware: str
    points: tuple[tuple[str, int, int, float], ...]
    """(kernel, DPUs, size, log(predicted / measured)) with the kernel left out of the fit."""
    dpus_range: tuple[int, int]
    bytes_range: tuple[float, float]
    """per-DPU MRAM footprint (bytes) of the fitted points: the sizes the constants were fitted on."""
    growth_per_doubling: float
    extrapolation: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    level: float = LEVEL

    @property
    def log_residuals(self) -> np.ndarray:
        return np.array([p[3] for p in self.points])

    def half_log(self, values: np.ndarray | None = None) -> float:
        """The conformal ``level`` quantile of |log(predicted / measured)|: the ceil((n + 1) level)-th smallest of
        the n values (the largest if that is beyond n), so that a new point exchangeable with them falls inside
        with probability >= level."""
        r = np.sort(np.abs(self.log_residuals if values is None else values))
        k = math.ceil((r.size + 1) * self.level)
        return float(r[min(k, r.size) - 1])

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "hardware": self.hardware, "level": self.level,
                "dpus_range": list(self.dpus_range), "bytes_range": list(self.bytes_range),
                "growth_per_doubling": self.growth_per_doubling, "extrapolation": dict(self.extrapolation),
                "provenance": dict(self.provenance), "points": [list(p) for p in self.points]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str) -> KernelResiduals:
        try:
            if int(data["schema_version"]) != SCHEMA_VERSION:
                raise SpecError(f"{origin}: kernel residuals schema {data['schema_version']} is not {SCHEMA_VERSION}")
            points = tuple((str(k), int(n), int(s), float(r)) for k, n, s, r in data["points"])
            return cls(str(data["hardware"]), points,
                       (int(data["dpus_range"][0]), int(data["dpus_range"][1])),
                       (float(data["bytes_range"][0]), float(data["bytes_range"][1])),
                       float(data["growth_per_doubling"]), dict(data.get("extrapolation", {})),
                       dict(data.get("provenance", {})), float(data.get("level", LEVEL)))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise SpecError(f"{origin}: not a kernel-residuals file ({exc})") from None

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())


@lru_cache(maxsize=4)
def read_residuals(path: str | None = None) -> KernelResiduals:
    """The stored residuals (None: the shipped file)."""
    where = Path(path) if path is not None else residuals_path()
    return KernelResiduals.from_json(read_json(where), str(where))


# ---------------------------------------------------------------- building the residuals (fit rows only)
def _fit_rows(measurements: Sequence[Measurement]) -> list[Measurement]:
    return [m for m in measurements if m.kernel not in TEST_KERNELS]


def _kernel_ms(hw: HardwareSpec, m: Measurement) -> float:
    return predict_point(m.kernel, m.dpus, m.size, hw)["kernel_ms"]


def loo_residuals(hw: HardwareSpec, rows: Sequence[Measurement],
                  predict_on: Sequence[Measurement] | None = None) -> list[tuple[Measurement, float]]:
    """For each kernel of ``rows``: refit the kernel-time constants on the other kernels' ``rows`` and return
    log(predicted / measured) of that kernel's points in ``predict_on`` (None: in ``rows``)."""
    from .hardware import KERNEL_CONSTANTS, KERNEL_QUANTITIES, apply, fit_group  # function-local: import cycle

    targets = list(rows if predict_on is None else predict_on)
    out: list[tuple[Measurement, float]] = []
    for name in sorted({m.kernel for m in targets}):
        if any(name == t for t in TEST_KERNELS):
            raise SpecError(f"{name} is a test kernel: its rows never reach an interval")
        fit = fit_group(hw, [m for m in rows if m.kernel != name], KERNEL_CONSTANTS, KERNEL_QUANTITIES)
        refit = apply(hw, [fit])
        out += [(m, math.log(_kernel_ms(refit, m) / m.kernel_ms)) for m in targets if m.kernel == name]
    return out


def _q95(values: Sequence[float]) -> float:
    return float(np.quantile(np.abs(np.asarray(values)), 0.95))


def build_residuals(hw: HardwareSpec, measurements: Sequence[Measurement]) -> KernelResiduals:
    """Leave-one-kernel-out residuals on the fit rows and the measured widening (see the module docstring)."""
    rows = _fit_rows(measurements)
    loo = loo_residuals(hw, rows)
    split = EXTRAPOLATION_SPLIT_DPUS
    near = [m for m in rows if m.dpus <= split]
    far = [m for m in rows if m.dpus > split]
    ext = loo_residuals(hw, near, predict_on=rows)
    inside = [r for m, r in ext if m.dpus <= split]
    outside = [(m, r) for m, r in ext if m.dpus > split]
    doublings = float(np.mean([math.log2(m.dpus / split) for m, _ in outside])) if outside else 1.0
    ratio = _q95([r for _, r in outside]) / _q95(inside) if outside else 1.0
    growth = max(0.0, (ratio - 1.0) / doublings)
    footprints = [float(describe(m.kernel, m.dpus, m.size).mram_bytes) for m in rows]
    return KernelResiduals(
        hw.name, tuple((m.kernel, m.dpus, m.size, r) for m, r in loo),
        (min(m.dpus for m in rows), max(m.dpus for m in rows)), (min(footprints), max(footprints)), growth,
        {"split_dpus": split, "fitted_points": len(near), "predicted_points": len(far),
         "q95_abs_log_inside": _q95(inside), "q95_abs_log_outside": _q95([r for _, r in outside]),
         "mean_doublings_outside": doublings},
        {"created": datetime.now(UTC).isoformat(timespec="seconds"),
         "data": "pimmodel/data/validation/upimulator-hw.csv, fit rows only (every kernel but "
                 + ", ".join(TEST_KERNELS) + ")",
         "method": "leave one kernel out: refit of the kernel-time constants (calibration.hardware.KERNEL_CONSTANTS)"})


# ---------------------------------------------------------------- the interval
def outside_doublings(res: KernelResiduals, dpus: int, mram_bytes: float) -> float:
    """log2 distance of (DPUs, per-DPU footprint) outside the fitted ranges (0 inside)."""
    def beyond(x: float, lo: float, hi: float) -> float:
        if x <= 0:
            return 0.0
        return max(0.0, math.log2(lo / x), math.log2(x / hi))

    return beyond(dpus, *res.dpus_range) + beyond(mram_bytes, *res.bytes_range)


def interval_from(res: KernelResiduals, predicted: float, doublings: float = 0.0,
                  residuals: np.ndarray | None = None) -> tuple[float, float]:
    """(low, high) of the ``res.level`` interval around ``predicted`` (any unit), ``doublings`` outside the fit."""
    h = res.half_log(residuals) * (1.0 + res.growth_per_doubling * doublings)
    return predicted * math.exp(-h), predicted * math.exp(h)


def kernel_interval(kernel: str, dpus: int, size: int, predicted_ms: float, res: KernelResiduals | None = None,
                    **shape: int | str | None) -> dict[str, float]:
    """``{"low_ms", "high_ms", "half_width", "outside_doublings"}`` of a kernel-time prediction (half_width:
    (high - low) / 2 / predicted)."""
    res = res or read_residuals()
    run = describe(kernel, dpus, size, **shape)
    d = outside_doublings(res, dpus, float(run.mram_bytes))
    low, high = interval_from(res, predicted_ms, d)
    return {"low_ms": low, "high_ms": high, "half_width": (high - low) / 2 / predicted_ms, "outside_doublings": d}


def cv_coverage(res: KernelResiduals) -> dict[str, float]:
    """Coverage of the interval when each kernel's residuals are left out of the quantiles that judge them (the
    interval a kernel that never reached the residuals would get): the share of points inside, and the median
    half-width (fraction of the prediction) over those intervals."""
    kernels = sorted({p[0] for p in res.points})
    inside = 0
    widths: list[float] = []
    for k in kernels:
        others = np.array([p[3] for p in res.points if p[0] != k])
        for p in res.points:
            if p[0] != k:
                continue
            low, high = interval_from(res, 1.0, 0.0, others)
            measured = math.exp(-p[3])  # predicted = 1
            inside += low <= measured <= high
            widths.append((high - low) / 2)
    return {"points": len(res.points), "inside": inside, "coverage": inside / max(1, len(res.points)),
            "median_half_width": float(np.median(widths)) if widths else float("nan")}


def predict_grid(kernel: str, dpu_list: Sequence[int], sizes: Sequence[int], hw: HardwareSpec,
                 shape: Mapping[str, int | str] | None = None) -> list[dict[str, Any]]:
    """One record per DPU count x size: the kernel and host times with the kernel time's interval, or, for a point
    whose data does not fit a DPU's memory, ``feasible`` false and the reason (the rest are still priced)."""
    shape = dict(shape or {})
    res = read_residuals()
    points: list[dict[str, Any]] = []
    for n in dpu_list:
        for s in sizes:
            head = {"kernel": kernel, "dpus": n, "size": s, "shape": dict(shape)}
            try:
                describe(kernel, n, s, **shape)
            except DoesNotFit as exc:
                points.append({**head, "feasible": False, "reason": str(exc), "kernel_ms": None, "low_ms": None,
                               "high_ms": None, "cpu_to_dpu_ms": None, "dpu_to_cpu_ms": None})
                continue
            times = predict_point(kernel, n, s, hw, **shape)
            band = kernel_interval(kernel, n, s, times["kernel_ms"], res, **shape)
            points.append({**head, "feasible": True, "reason": "", "kernel_ms": times["kernel_ms"],
                           "low_ms": band["low_ms"], "high_ms": band["high_ms"],
                           "cpu_to_dpu_ms": times["cpu_to_dpu_ms"], "dpu_to_cpu_ms": times["dpu_to_cpu_ms"]})
    return points


def main() -> None:  # pragma: no cover - regenerates the shipped file
    from ..specs import load_hardware
    from .measurements import load_measurements

    res = build_residuals(load_hardware("upmem-2556"), load_measurements())
    res.write(residuals_path())
    print(f"wrote {residuals_path()}: {len(res.points)} points, growth {res.growth_per_doubling:.3f} per doubling, "
          f"{cv_coverage(res)}")


if __name__ == "__main__":  # pragma: no cover
    main()
