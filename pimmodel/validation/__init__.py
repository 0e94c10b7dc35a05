"""Validation: how far is the model from its references? Cases and aggregate targets in four groups, reported in
this order (``cases.GROUPS``; ``cases.GROUP_INFO`` says what each is evidence of):

- ``hardware`` (``hardware.py``): real UPMEM measurements of the 13 PrIM kernels against their descriptions priced
  on the spec, whose fitted constants never saw the test kernels VA, GEMV and RED; cases per test-kernel point and
  the leave-one-kernel-out CV per kernel, targets (the issue's MAPE goals) beside uPIMulator's error.
- ``published`` (``published.py``): PrIM's measurements of the real UPMEM system, each evaluated as a
  microbenchmark workload through the cost primitives; cases that restate a spec input are marked, not evidence.
- ``emulator`` (``consistency.py``), titled ``consistency (model vs emulator)`` (alias ``consistency``): the cost
  model vs the functional emulator on configurations not used for calibration; consistency of the equations with
  the kernels, NOT evidence about hardware.
- ``finding`` (``findings.py``): the PIM-Opt study's qualitative findings as comparisons between model outputs.
- ``training`` (``training.py``, only when asked for): real end-to-end training runs (dpu_kmeans) against the
  training families; rows no family expresses are listed with the reason.

``validate()`` returns a frozen ``ValidationReport``; ``to_record()`` is exactly what ``pimmodel validate
--json`` prints. The same data drives the parametrized tests in ``tests/validation``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..calibration.result import CalibrationResult, load_calibration
from ..errors import SpecError
from ..specs import HardwareSpec, load_hardware
from ..specs.architectures import REGISTRY as ARCHITECTURES
from ..specs.architectures import ArchitectureInfo, architecture_of, resolve
from .cases import (
    DEFAULT_GROUPS,
    GROUP_ALIASES,
    GROUP_INFO,
    GROUPS,
    KINDS,
    Case,
    Target,
    ValidationReport,
    canonical_group,
    ordered,
)
from .consistency import consistency_cases
from .findings import finding_cases
from .hardware import HardwareRun, hardware_cases, hardware_targets, scale_test_section, scale_transfer_section
from .published import published_cases

__all__ = ["DEFAULT_GROUPS", "GROUPS", "GROUP_ALIASES", "GROUP_INFO", "KINDS", "Case", "Target", "ValidationReport",
           "canonical_group", "consistency_cases", "finding_cases", "hardware_cases", "hardware_targets",
           "published_cases", "validate"]


def family_of_group(group: str) -> ArchitectureInfo | None:
    """The architecture family whose silicon check ``group`` is, if any."""
    return next((info for info in ARCHITECTURES.values() if group in info.validation_groups), None)


def validate(hw: HardwareSpec, groups: Iterable[str] = DEFAULT_GROUPS,
             calibration: CalibrationResult | None = None, cached: bool = False) -> ValidationReport:
    """Run the selected groups (ids or aliases; reported in ``GROUPS`` order) with ``calibration`` (None: the
    shipped one); ``cached``: the consistency group reads emulations of unchanged emulator sources from disk."""
    cal = calibration if calibration is not None else load_calibration(None)
    selected = ordered(list(groups))
    family = architecture_of(hw)
    wrong = [g for g in selected if family.validation_groups and g not in family.validation_groups]
    if wrong:
        raise SpecError(f"--group {','.join(wrong)} checks UPMEM-like hardware, not {hw.name} ({family.label}); "
                        f"use --group {','.join(family.validation_groups)}")
    cases: list[Case] = []
    targets: list[Target] = []
    details: dict[str, Any] = {}
    for group in selected:
        if group == "hardware":
            run = HardwareRun.on(hw)
            cases += run.cases()
            targets += run.targets()
            scale_targets, scale = scale_test_section(hw)
            targets += scale_targets
            transfer_targets, transfers = scale_transfer_section(hw)
            targets += transfer_targets
            details["hardware"] = {"kernels": run.kernels(), "test_sources": scale, "test_transfers": transfers}
        elif group == "published":
            cases += published_cases(hw)
        elif group == "emulator":
            cases += consistency_cases(hw, cal, cached=cached)
        elif group == "training":
            # lazy import: the training runs' module loads the K-means equations only when asked for
            from .simplepim import simplepim_cases
            from .training import kmeans_cases, training_details

            more, aims = kmeans_cases(hw)
            cases += more
            targets += aims
            more, aims = simplepim_cases(hw)
            cases += more
            targets += aims
            details["training"] = training_details(hw)
        elif (owner := family_of_group(group)) is not None:  # an architecture family's own silicon check
            spec = hw if group in family.validation_groups else load_hardware(GROUP_INFO[group].measured_on)
            more, aims, details[group] = resolve(owner.silicon_check)(spec)
            cases += more
            targets += aims
        elif group == "whatif":
            from .whatif_cases import whatif_cases

            more, aims, details["whatif"] = whatif_cases(hw)
            cases += more
            targets += aims
        else:
            cases += finding_cases(hw, cal)
    return ValidationReport(tuple(cases), hw.name, cal.label, selected, tuple(targets), details)
