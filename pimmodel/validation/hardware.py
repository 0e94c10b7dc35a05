"""The ``hardware`` group: the PrIM kernels' real UPMEM measurements (``validation/upimulator-hw.csv``) against
the kernel descriptions priced on the spec, whose kernel and host constants were fitted on every kernel but the
test kernels VA, GEMV and RED (``pimmodel.calibration.hardware``).

- one case per test-kernel point: the kernel time within ``POINT_TOLERANCE``;
- per test kernel: its kernel-time MAPE at most ``TEST_MAPE_TARGET`` and below uPIMulator's on the same points;
- over all 13 kernels (fitted ones in-sample, test ones out-of-sample): kernel-time MAPE at most
  ``ALL_MAPE_TARGET``; CPU->DPU and DPU->CPU MAPE at most ``HOST_MAPE_TARGET`` each;
- per kernel: the leave-one-kernel-out cross-validated kernel-time MAPE of the stored calibration at most
  ``CV_MAPE_BOUND`` (a stated bound for information: CV refits are not run here).

Summary cases compare MAPEs in %: ``reference`` is the target, ``predicted`` the MAPE, kind ``below``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..calibration.hardware_result import HardwareCalibration, read_hardware_calibration
from ..calibration.measurements import TEST_KERNELS, Measurement, load_measurements, mape, predict_point
from ..specs import HardwareSpec
from .cases import Case

POINT_TOLERANCE = 0.25
"""Per test-kernel point: |predicted / measured - 1| <= 25 % (single runs; neighbouring points scatter 10-30 %)."""
TEST_MAPE_TARGET = 15.0
ALL_MAPE_TARGET = 12.0
HOST_MAPE_TARGET = 20.0
CV_MAPE_BOUND = 25.0
SOURCE = "real UPMEM system: uPIMulator's hardware sheet (validation/upimulator-hw.csv)"


def _summary(name: str, target: float, value: float, kernel: str, phase: str = "kernel", note: str = "") -> Case:
    return Case("hardware", name, phase, target, value, 0.0, "below", "%", SOURCE, note, kernel)


def hardware_cases(hw: HardwareSpec, calibration: HardwareCalibration | None = None,
                   measurements: Sequence[Measurement] | None = None) -> list[Case]:
    """The hardware group on ``hw`` (CV from ``calibration``, None: the shipped one)."""
    rows = list(measurements if measurements is not None else load_measurements())
    cal = calibration if calibration is not None else read_hardware_calibration()
    predicted = [predict_point(m.kernel, m.dpus, m.size, hw) for m in rows]
    cases = [Case("hardware", f"{m.kernel} {m.dpus} DPUs size {m.size}: kernel time", "kernel", m.kernel_ms,
                  p["kernel_ms"], POINT_TOLERANCE, unit="ms", source=SOURCE, kernel=m.kernel, dpus=m.dpus, size=m.size)
             for m, p in zip(rows, predicted, strict=True) if m.kernel in TEST_KERNELS]
    for name in TEST_KERNELS:
        idx = [i for i, m in enumerate(rows) if m.kernel == name]
        ours = mape([predicted[i]["kernel_ms"] for i in idx], [rows[i].kernel_ms for i in idx])
        sim = mape([rows[i].sim_kernel_ms for i in idx], [rows[i].kernel_ms for i in idx])
        cases.append(_summary(f"{name} kernel-time MAPE <= {TEST_MAPE_TARGET:g} % (never fitted)", TEST_MAPE_TARGET,
                              ours, name))
        cases.append(_summary(f"{name} kernel-time MAPE below uPIMulator's on the same points", sim, ours, name,
                              note="reference: uPIMulator's MAPE (sim_err_pct)"))
    every = range(len(rows))
    for quantity, target, phase in (("kernel_ms", ALL_MAPE_TARGET, "kernel"),
                                    ("cpu_to_dpu_ms", HOST_MAPE_TARGET, "host_to_pim"),
                                    ("dpu_to_cpu_ms", HOST_MAPE_TARGET, "pim_to_host")):
        value = mape([predicted[i][quantity] for i in every], [rows[i].value(quantity) for i in every])
        cases.append(_summary(f"all 13 kernels: {quantity.removesuffix('_ms')} MAPE <= {target:g} %", target, value,
                              "all", phase))
    for e in cal.errors:
        cases.append(_summary(f"{e.kernel} leave-one-kernel-out CV kernel-time MAPE <= {CV_MAPE_BOUND:g} %",
                              CV_MAPE_BOUND, e.cv_kernel_mape, e.kernel,
                              note=f"from {cal.label}; {'test kernel: the main fit' if e.role == 'test' else 'refit'}"))
    return cases
