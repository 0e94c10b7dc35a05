"""Real UPMEM measurements of the 13 PrIM kernels (``validation/upimulator-hw.csv``) and their predictions.

The data set is uPIMulator's real-hardware sheet (VIA-Research/uPIMulator, ``tools/upmem_reg_model/data/
input.xlsx``; described in ``validation/README.md``): per (kernel, DPUs, ``data_prep_param``) the measured kernel
time and host transfer times, and uPIMulator's own simulated kernel time. VA, GEMV and RED are the test kernels:
no fit ever sees them.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..kernels import pricing
from ..kernels.prim import active_dpus, describe, kernels
from ..resources import data_dir

TEST_KERNELS: tuple[str, ...] = ("VA", "GEMV", "RED")
"""Never used in any fit (the data set's rules of use)."""
QUANTITIES: tuple[str, ...] = ("kernel_ms", "cpu_to_dpu_ms", "dpu_to_cpu_ms")
CSV_NAME = "upimulator-hw.csv"
_COLUMNS = {"benchmark", "num_dpus", "data_prep_param", "hw_kernel", "hw_cpu_to_dpu", "hw_dpu_to_cpu",
            "hw_dpu_to_dpu", "sim_kernel", "sim_err_pct"}


@dataclass(frozen=True, slots=True)
class Measurement:
    """One row of the data set: real times in ms, and uPIMulator's simulated kernel time for the same point."""

    kernel: str
    dpus: int
    size: int
    kernel_ms: float
    cpu_to_dpu_ms: float
    dpu_to_cpu_ms: float
    dpu_to_dpu_ms: float
    sim_kernel_ms: float
    sim_err_pct: float

    def __post_init__(self) -> None:
        if self.kernel not in kernels():
            raise SpecError(f"{CSV_NAME}: unknown kernel {self.kernel!r}")
        if self.dpus < 1 or self.size < 1 or min(self.kernel_ms, self.cpu_to_dpu_ms, self.dpu_to_cpu_ms) <= 0:
            raise SpecError(f"{CSV_NAME}: {self.kernel} {self.dpus} DPUs {self.size}: times and sizes must be > 0")

    @property
    def point(self) -> tuple[str, int, int]:
        return (self.kernel, self.dpus, self.size)

    def value(self, quantity: str) -> float:
        return float(getattr(self, quantity))


def csv_path() -> Path:
    return data_dir("validation") / CSV_NAME


@lru_cache(maxsize=4)
def load_measurements(path: Path | None = None) -> tuple[Measurement, ...]:
    """The data set's rows (one-line error if the file is missing or malformed)."""
    where = path or csv_path()
    try:
        with open(where, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise SpecError(f"cannot read {where}: {exc.strerror or exc}") from None
    if not rows or not set(rows[0]) >= _COLUMNS:
        raise SpecError(f"{where}: expected the columns {', '.join(sorted(_COLUMNS))}")
    try:
        return tuple(Measurement(r["benchmark"], int(r["num_dpus"]), int(r["data_prep_param"]),
                                 float(r["hw_kernel"]), float(r["hw_cpu_to_dpu"]), float(r["hw_dpu_to_cpu"]),
                                 float(r["hw_dpu_to_dpu"]), float(r["sim_kernel"]), float(r["sim_err_pct"]))
                     for r in rows)
    except ValueError as exc:
        raise SpecError(f"{where}: malformed number ({exc})") from None


def predict_point(kernel: str, dpus: int, size: int, hw: Any, **shape: int | str | None) -> dict[str, float]:
    """Predicted kernel and host transfer times (ms) of one point on ``hw`` (``shape``: the kernel's shape
    parameters, ``pimmodel.kernels.prim.describe``)."""
    run = describe(kernel, dpus, size, **shape)
    used = active_dpus(kernel, dpus, **shape)  # TRNS allocates at most one DPU per column block
    return {"kernel_ms": 1e3 * float(pricing.kernel_s(run, used, hw)),
            "cpu_to_dpu_ms": 1e3 * float(pricing.host_calls_s(run.host, used, hw, to_pim=True)),
            "dpu_to_cpu_ms": 1e3 * float(pricing.host_calls_s(run.host, used, hw, to_pim=False))}


def mape(predicted: list[float], measured: list[float]) -> float:
    """Mean absolute percentage error, in %."""
    if not measured:
        return float("nan")
    return 100.0 * sum(abs(p / m - 1) for p, m in zip(predicted, measured, strict=True)) / len(measured)
