"""A stored hardware calibration: constants fitted to real UPMEM measurements, with what they were fitted on.

The file (``pimmodel/data/calibration/hardware-upmem-2556.json``, versioned JSON) holds per group of constants
(kernel time; host transfers) the fitted values and standard errors in SI units, the start values, and the exact
(kernel, DPUs, size) points of the fit; per kernel the mean absolute percentage error of the kernel time and of
both host transfer directions, in-sample for the fitted kernels and out-of-sample for the test kernels, the
leave-one-kernel-out cross-validated errors, and uPIMulator's kernel-time error on the same points. The
``upmem-2556`` spec carries the fitted values (tag F, citing this file).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import replacing
from ..errors import SpecError
from ..resources import data_dir

SCHEMA_VERSION = 1
SHIPPED_NAME = "hardware-upmem-2556.json"


def shipped_path() -> Path:
    return data_dir("calibration") / SHIPPED_NAME


@dataclass(frozen=True)
class GroupFit:
    """Constants fitted together on ``quantities`` of ``points``; values and standard errors in SI units."""

    quantities: tuple[str, ...]
    names: tuple[str, ...]
    values: tuple[float, ...]
    std_errors: tuple[float, ...]
    start: tuple[float, ...]
    points: tuple[tuple[str, int, int], ...]
    rms_log_residual: float

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.values, strict=True))

    def to_json(self) -> dict[str, Any]:
        return {"quantities": list(self.quantities), "rms_log_residual": self.rms_log_residual,
                "constants": {n: {"value": v, "std_error": s, "start": s0}
                              for n, v, s, s0 in zip(self.names, self.values, self.std_errors, self.start,
                                                     strict=True)},
                "points": [list(p) for p in self.points]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupFit:
        c = data["constants"]
        return cls(tuple(data["quantities"]), tuple(c), tuple(float(v["value"]) for v in c.values()),
                   tuple(float(v["std_error"]) for v in c.values()), tuple(float(v["start"]) for v in c.values()),
                   tuple((str(k), int(n), int(s)) for k, n, s in data["points"]), float(data["rms_log_residual"]))


@dataclass(frozen=True)
class KernelErrors:
    """One kernel's errors against the real hardware, in % (mean absolute percentage error over its points)."""

    kernel: str
    role: str
    """``fit`` (in the fits: errors in-sample) or ``test`` (never fitted: errors out-of-sample)."""
    points: int
    kernel_mape: float
    cpu_to_dpu_mape: float
    dpu_to_cpu_mape: float
    cv_kernel_mape: float
    """leave-one-kernel-out: fitted without this kernel (for a test kernel, the main fit itself)."""
    cv_cpu_to_dpu_mape: float
    cv_dpu_to_cpu_mape: float
    upimulator_kernel_mape: float


@dataclass(frozen=True)
class HardwareCalibration:
    """Constants fitted to real measurements, errors per kernel and overall, and the provenance."""

    label: str
    hardware: str
    test_kernels: tuple[str, ...]
    kernel_fit: GroupFit
    host_fit: GroupFit
    errors: tuple[KernelErrors, ...]
    summary: Mapping[str, float]
    provenance: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def values(self) -> dict[str, float]:
        """Every fitted constant by ``HardwareSpec`` field name (SI)."""
        return {**self.kernel_fit.as_dict(), **self.host_fit.as_dict()}

    def fitted_points(self) -> set[tuple[str, int, int]]:
        return set(self.kernel_fit.points) | set(self.host_fit.points)

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "label": self.label, "hardware": self.hardware,
                "provenance": dict(self.provenance), "test_kernels": list(self.test_kernels),
                "fits": {"kernel": self.kernel_fit.to_json(), "host": self.host_fit.to_json()},
                "errors": [asdict(e) for e in self.errors], "summary": dict(self.summary)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str) -> HardwareCalibration:
        try:
            if int(data["schema_version"]) != SCHEMA_VERSION:
                raise SpecError(f"{origin}: hardware calibration schema {data['schema_version']} is not "
                                f"{SCHEMA_VERSION}; re-run `pimmodel kernel --fit`")
            return cls(str(data["label"]), str(data["hardware"]), tuple(data["test_kernels"]),
                       GroupFit.from_json(data["fits"]["kernel"]), GroupFit.from_json(data["fits"]["host"]),
                       tuple(KernelErrors(**e) for e in data["errors"]), dict(data["summary"]),
                       dict(data.get("provenance", {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError(f"{origin}: not a hardware calibration ({exc})") from None

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())


def read_hardware_calibration(path: str | Path | None = None) -> HardwareCalibration:
    """A stored hardware calibration (None: the shipped one)."""
    where = Path(path) if path is not None else shipped_path()
    return HardwareCalibration.from_json(read_json(where), str(where))


def write_json(path: str | Path, record: Any) -> Path:
    """A JSON record written atomically (one space of indent, a final newline): the stored calibration files."""
    with replacing(path) as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    return Path(path)


def read_json(where: Path) -> Any:
    """A stored JSON record, or one SpecError line naming the file (unreadable, not JSON)."""
    try:
        return json.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read {where}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise SpecError(f"{where}: not JSON ({exc.msg} at line {exc.lineno})") from None
