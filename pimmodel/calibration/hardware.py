"""Fit the hardware constants that no microbenchmark pins to real UPMEM measurements of the PrIM kernels.

Two independent least-squares fits (``scipy.optimize.least_squares``, residual log(predicted / measured), so
every point weighs by its relative error), each over the points of the fitted kernels only (``TEST_KERNELS``
are never seen):

- kernel time: the launch cost (a fixed part and a part per DPU), the share of the shorter of compute and DMA a
  parallel section hides (``dma_compute_overlap``), the cost of one barrier (instructions per tasklet under the
  lock);
- host transfers (CPU->DPU and DPU->CPU together): the fixed cost of a transfer call through the SDK's thread
  pool, the extra of a call from the DPUs, the fixed cost of a WRAM-symbol transfer and its cost per word and
  line, and the extra cost per further DPU of a transfer line for one thread alone. The structure (lines, the
  thread pool, the rates of one DPU alone and of a full rank) is the SDK's and PrIM's, not fitted
  (``pimmodel.primitives.host_transfer_s``).

Instruction counts are never fitted (they are the descriptions' estimates, ``pimmodel.kernels.prim``); every
constant is a hardware property shared by all kernels. Standard errors come from the Jacobian at the optimum
(residual variance x (J^T J)^-1). Leave-one-kernel-out cross-validation refits both groups without each fitted
kernel in turn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..kernels import pricing
from ..kernels.prim import describe, kernels
from ..kernels.vocabulary import KernelRun
from ..specs import HardwareSpec
from .hardware_result import GroupFit, HardwareCalibration, KernelErrors
from .measurements import QUANTITIES, TEST_KERNELS, Measurement, mape
from .result import git_revision


@dataclass(frozen=True, slots=True)
class Constant:
    """A fitted ``HardwareSpec`` field: fitted in units of ``scale`` within [low, high] (those units)."""

    name: str
    scale: float
    low: float
    high: float


KERNEL_CONSTANTS: tuple[Constant, ...] = (
    Constant("launch_overhead_s", 1e-3, 0.0, 5.0),
    Constant("launch_per_dpu_s", 1e-6, 0.0, 100.0),
    Constant("dma_compute_overlap", 1.0, 0.0, 1.0),
    Constant("barrier_instructions_per_tasklet", 10.0, 0.0, 20.0),
)
HOST_CONSTANTS: tuple[Constant, ...] = (
    Constant("transfer_call_overhead_s", 1e-4, 0.0, 10.0),
    Constant("pull_call_extra_s", 1e-4, 0.0, 10.0),
    Constant("wram_call_overhead_s", 1e-5, 0.0, 100.0),
    Constant("wram_word_s", 1e-6, 0.0, 100.0),
    Constant("push_line_dpu_s_per_byte", 1e-10, 0.0, 1000.0),
    Constant("pull_line_dpu_s_per_byte", 1e-10, 0.0, 1000.0),
)
"""Not fitted by default: the one-DPU (serial) and full-rank rates, which PrIM's CPU-DPU microbenchmark pins (R values
of the spec, the ``published`` validation group). ``BANDWIDTH_CONSTANTS`` adds them to the host fit (``pimmodel kernel
--fit --fit-bandwidths``) to show how far these transfers (0.5 KB-17 MB per DPU, another machine) are from them."""
BANDWIDTH_CONSTANTS: tuple[Constant, ...] = (
    Constant("push_bytes_per_s_per_rank", 1e9, 0.05, 50.0),
    Constant("pull_bytes_per_s_per_rank", 1e9, 0.05, 50.0),
    Constant("serial_to_pim_bytes_per_s", 1e9, 0.01, 50.0),
    Constant("serial_from_pim_bytes_per_s", 1e9, 0.01, 50.0),
)
KERNEL_QUANTITIES = ("kernel_ms",)
HOST_QUANTITIES = ("cpu_to_dpu_ms", "dpu_to_cpu_ms")
DATA_SOURCE = ("uPIMulator real-hardware sheet (VIA-Research/uPIMulator tools/upmem_reg_model/data/input.xlsx), "
               "pimmodel/data/validation/upimulator-hw.csv")


def _predict(run: KernelRun, dpus: int, hw: Any, quantity: str) -> float:
    if quantity == "kernel_ms":
        return 1e3 * float(pricing.kernel_s(run, dpus, hw))
    return 1e3 * float(pricing.host_calls_s(run.host, dpus, hw, to_pim=quantity == "cpu_to_dpu_ms"))


class _Problem:
    """The residuals of one group of constants on a set of points (their descriptions built once)."""

    def __init__(self, hw: HardwareSpec, points: Sequence[Measurement], constants: Sequence[Constant],
                 quantities: Sequence[str]) -> None:
        self.hw, self.points, self.constants, self.quantities = hw, tuple(points), tuple(constants), tuple(quantities)
        self.runs = [describe(m.kernel, m.dpus, m.size) for m in self.points]

    def spec(self, x: Sequence[float]) -> HardwareSpec:
        return self.hw.replace(**{c.name: float(v) * c.scale for c, v in zip(self.constants, x, strict=True)})

    def residuals(self, x: Sequence[float]) -> np.ndarray:
        hw = self.spec(x)
        return np.array([math.log(_predict(run, m.dpus, hw, q) / m.value(q))
                         for m, run in zip(self.points, self.runs, strict=True) for q in self.quantities])

    def start(self) -> np.ndarray:
        return np.array([min(max(getattr(self.hw, c.name) / c.scale, c.low), c.high) for c in self.constants])


def fit_group(hw: HardwareSpec, points: Sequence[Measurement], constants: Sequence[Constant],
              quantities: Sequence[str]) -> GroupFit:
    """Least-squares fit of ``constants`` to ``quantities`` of ``points`` (see the module docstring)."""
    from scipy.optimize import least_squares  # function-local: keeps the CLI's cold start fast

    problem = _Problem(hw, points, constants, quantities)
    res = least_squares(problem.residuals, problem.start(), bounds=([c.low for c in constants],
                                                                    [c.high for c in constants]),
                        x_scale="jac", xtol=1e-10, ftol=1e-10)
    dof = max(1, res.fun.size - len(constants))
    cov = float(res.fun @ res.fun) / dof * np.linalg.pinv(res.jac.T @ res.jac)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return GroupFit(tuple(quantities), tuple(c.name for c in constants),
                    tuple(float(v) * c.scale for v, c in zip(res.x, constants, strict=True)),
                    tuple(float(s) * c.scale for s, c in zip(se, constants, strict=True)),
                    tuple(float(getattr(hw, c.name)) for c in constants),
                    tuple(m.point for m in problem.points), float(np.sqrt(np.mean(res.fun ** 2))))


def apply(hw: HardwareSpec, fits: Iterable[GroupFit]) -> HardwareSpec:
    """``hw`` with the fitted constants."""
    values: dict[str, float] = {}
    for f in fits:
        values.update(f.as_dict())
    return hw.replace(**values)


def fit_both(hw: HardwareSpec, points: Sequence[Measurement],
             host_constants: Sequence[Constant] = HOST_CONSTANTS) -> tuple[GroupFit, GroupFit]:
    """The kernel-time and host-transfer fits on ``points``."""
    return (fit_group(hw, points, KERNEL_CONSTANTS, KERNEL_QUANTITIES),
            fit_group(hw, points, host_constants, HOST_QUANTITIES))


def errors_by_kernel(hw: HardwareSpec, points: Sequence[Measurement]) -> dict[str, dict[str, float]]:
    """Per kernel: the MAPE (%) of each quantity of ``points`` on ``hw``."""
    out: dict[str, dict[str, float]] = {}
    for name in sorted({m.kernel for m in points}):
        mine = [m for m in points if m.kernel == name]
        runs = [describe(m.kernel, m.dpus, m.size) for m in mine]
        out[name] = {q: mape([_predict(r, m.dpus, hw, q) for m, r in zip(mine, runs, strict=True)],
                             [m.value(q) for m in mine]) for q in QUANTITIES}
    return out


def calibrate_hardware(hw: HardwareSpec, measurements: Sequence[Measurement], cross_validate: bool = True,
                       test_kernels: Sequence[str] = TEST_KERNELS, label: str = "",
                       progress: Callable[[str], None] | None = None,
                       host_constants: Sequence[Constant] = HOST_CONSTANTS) -> HardwareCalibration:
    """Fit on every kernel but ``test_kernels``; errors per kernel; leave-one-kernel-out CV (if asked)."""
    train = [m for m in measurements if m.kernel not in test_kernels]
    fits = fit_both(hw, train, host_constants)
    fitted = apply(hw, fits)
    main = errors_by_kernel(fitted, measurements)
    cv: dict[str, dict[str, float]] = {}
    for name in sorted(main):
        if progress:
            progress(name)
        if name in test_kernels or not cross_validate:
            cv[name] = main[name] if name in test_kernels else {q: float("nan") for q in QUANTITIES}
            continue
        held_out = [m for m in measurements if m.kernel == name]
        refit = fit_both(hw, [m for m in train if m.kernel != name], host_constants)
        cv[name] = errors_by_kernel(apply(hw, refit), held_out)[name]
    errors = tuple(_kernel_errors(name, measurements, main[name], cv[name], test_kernels) for name in sorted(main))
    return HardwareCalibration(label or f"hardware fit of {hw.name}", hw.name, tuple(test_kernels), fits[0],
                               fits[1], errors, _summary(fitted, measurements, errors, test_kernels),
                               {"created": datetime.now(UTC).isoformat(timespec="seconds"), "git": git_revision(),
                                "data": DATA_SOURCE, "points": len(measurements), "fitted_points": len(train),
                                "objective": "least squares of log(predicted / measured)"})


def _kernel_errors(name: str, measurements: Sequence[Measurement], main: dict[str, float], cv: dict[str, float],
                   test_kernels: Sequence[str]) -> KernelErrors:
    mine = [m for m in measurements if m.kernel == name]
    sim = mape([m.sim_kernel_ms for m in mine], [m.kernel_ms for m in mine])
    return KernelErrors(name, "test" if name in test_kernels else "fit", len(mine), main["kernel_ms"],
                        main["cpu_to_dpu_ms"], main["dpu_to_cpu_ms"], cv["kernel_ms"], cv["cpu_to_dpu_ms"],
                        cv["dpu_to_cpu_ms"], sim)


def _summary(hw: HardwareSpec, measurements: Sequence[Measurement], errors: Sequence[KernelErrors],
             test_kernels: Sequence[str]) -> dict[str, float]:
    """MAPE over all points (fitted kernels in-sample, test kernels out-of-sample) and over the test points."""
    preds = {q: [] for q in QUANTITIES}  # type: dict[str, list[float]]
    for m in measurements:
        run = describe(m.kernel, m.dpus, m.size)
        for q in QUANTITIES:
            preds[q].append(_predict(run, m.dpus, hw, q))
    out = {f"all_{q.removesuffix('_ms')}_mape": mape(preds[q], [m.value(q) for m in measurements]) for q in QUANTITIES}
    tests = [i for i, m in enumerate(measurements) if m.kernel in test_kernels]
    out["test_kernel_mape"] = mape([preds["kernel_ms"][i] for i in tests], [measurements[i].kernel_ms for i in tests])
    out["upimulator_all_kernel_mape"] = mape([m.sim_kernel_ms for m in measurements],
                                             [m.kernel_ms for m in measurements])
    out["all_cv_kernel_mape"] = float(np.mean([e.cv_kernel_mape for e in errors]))
    return out


def kernel_names() -> list[str]:
    return list(kernels())
