"""The library's entry points, composing the layers below (what the CLI calls, and what users import as
``pimmodel.predict`` etc.): a prediction resolves its coefficients from a calibration here, and an emulation is
put beside the cost model's prediction of the same configuration here (the emulator itself never imports the
cost model)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .calibration.result import CalibrationResult, load_calibration
from .costmodel import Prediction
from .costmodel import predict as _predict
from .specs import DEFAULT_HARDWARE, HardwareSpec, HyperParams, Workload, load_hardware

HardwareLike = HardwareSpec | str | Path
CalibrationLike = CalibrationResult | str | Path | None


def hardware_of(hardware: HardwareLike) -> HardwareSpec:
    return hardware if isinstance(hardware, HardwareSpec) else load_hardware(str(hardware))


def predict(workload: Workload, hardware: HardwareLike = DEFAULT_HARDWARE, view: str = "wall",
            calibration: CalibrationLike = None, check_capacity: bool = True) -> Prediction:
    """Per-epoch phase times of ``workload`` on ``hardware`` with the coefficients of ``calibration``
    (None: the calibration shipped with pimmodel; ``"defaults"``: the unfitted defaults; or a file)."""
    cal = load_calibration(calibration)
    return _predict(workload, hardware_of(hardware), cal.coefficients_for(workload), view, cal.label,
                    check_capacity)


def predict_interval(workload: Workload, hardware: HardwareLike = DEFAULT_HARDWARE, view: str = "wall",
                     calibration: CalibrationLike = None, level: float = 0.95) -> dict[str, Any]:
    """The central ``level`` interval of every phase from the calibration's coefficient covariance."""
    from .calibration.interval import interval  # numpy random sampling only when an interval is asked for

    return interval(workload, hardware_of(hardware), load_calibration(calibration), view, level)


@dataclass(frozen=True)
class EmulationReport:
    """An emulation beside the cost model's prediction of the same configuration."""

    history: list[dict[str, float]]
    trace: dict[str, Any]
    """the merged trace of every epoch (``emulator.record.trace_record``)."""
    predicted: dict[str, Any]
    """the cost model's prediction record (per epoch) of the configuration that ran."""
    workload: Workload
    warnings: list[str]


def emulate(dataset: str, dpus: int, model: str, optimizer: str, hyper: HyperParams | Mapping[str, int] | None = None,
            options: Any = None, progress: Any = None, calibration: CalibrationLike = None) -> EmulationReport:
    """Train on emulated PIM hardware (``pimmodel.emulator.emulate``; ``options``: an ``emulator.api.Options``)
    and predict the same configuration with the cost model."""
    # the emulator (and its data generators) load only when an emulation is asked for: the CLI's cold start
    from .emulator.api import Options
    from .emulator.api import emulate as run
    from .emulator.record import trace_record

    em = run(dataset, dpus, model, optimizer, hyper, options or Options(), progress)
    predicted = predict(em.workload, em.hardware, calibration=calibration).to_record()
    return EmulationReport(em.history, trace_record(em.trace, em.hardware), predicted, em.workload, em.warnings)
