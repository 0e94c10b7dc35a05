"""Validation: how far is the model from its references? A table of cases in groups.

- ``emulator`` (``consistency.py``): the cost model vs the functional emulator on configurations not used for
  calibration; consistency of the equations with the kernels, not evidence about hardware.
- ``published`` (``published.py``): PrIM's measurements of the real UPMEM system, each evaluated as a
  microbenchmark workload through the cost primitives.
- ``finding`` (``findings.py``): the PIM-Opt study's qualitative findings as comparisons between model outputs.
- ``hardware`` (``hardware.py``): real UPMEM measurements of the 13 PrIM kernels against their descriptions priced
  on the spec, whose fitted constants never saw the test kernels VA, GEMV and RED.

``validate()`` returns a frozen ``ValidationReport``; ``to_record()`` is exactly what ``pimmodel validate
--json`` prints. The same data drives the parametrized tests in ``tests/validation``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..calibration.result import CalibrationResult, load_calibration
from ..errors import unknown
from ..specs import HardwareSpec
from .cases import GROUPS, KINDS, Case, ValidationReport
from .consistency import consistency_cases
from .findings import finding_cases
from .hardware import hardware_cases
from .published import published_cases

__all__ = ["GROUPS", "KINDS", "Case", "ValidationReport", "consistency_cases", "finding_cases", "hardware_cases",
           "published_cases", "validate"]


def validate(hw: HardwareSpec, groups: Iterable[str] = GROUPS,
             calibration: CalibrationResult | None = None) -> ValidationReport:
    """Run the selected groups with ``calibration`` (None: the shipped one)."""
    cal = calibration if calibration is not None else load_calibration(None)
    selected: Sequence[str] = list(groups)
    for g in selected:
        if g not in GROUPS:
            raise unknown("validation group", g, GROUPS)
    cases: list[Case] = []
    if "emulator" in selected:
        cases += consistency_cases(hw, cal)
    if "published" in selected:
        cases += published_cases(hw)
    if "finding" in selected:
        cases += finding_cases(hw, cal)
    if "hardware" in selected:
        cases += hardware_cases(hw)
    return ValidationReport(tuple(cases), hw.name, cal.label)
