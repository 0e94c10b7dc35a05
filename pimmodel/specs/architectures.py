"""The hardware-architecture registry: one frozen ``ArchitectureInfo`` per PIM family, the list every layer reads.

**The plug-in contract.** An architecture family is four things (``tests/test_architecture_contract.py`` checks
them), and adding one touches nothing else but its entry below:

1. an entry in ``REGISTRY``: its name (the ``family`` key of a hardware TOML file; a file without the key is
   ``upmem-like``), what it is, and the dotted paths of the other three pieces;
2. a spec module ``pimmodel.specs.<module>`` with a frozen spec record and ``from_mapping(data, origin)`` (the
   file's parsed TOML -> the record, validated; every constant with its source);
3. a pricing module ``pimmodel.costmodel.<module>`` with ``evaluate(w, hw, coefficients) -> {output: value}``
   (the same outputs an ``EquationSet`` gives: the phases of ``pimmodel.phases``, rounds, bytes) and
   ``equations(w) -> (Terms, {output: expr})`` for ``pimmodel equations``, pricing the optimizer's equation set
   (what each round moves and computes) with the family's own events;
4. a capacity check ``pimmodel.kernels.<module>:<function>`` ``(w, hw)`` that refuses a workload the family cannot
   hold or run (one line, ``CapacityError``/``SpecError``), saying what it cannot run and why.

``upmem-like`` is UPMEM's organisation (in-order DPUs beside MRAM banks, the study's machine): its pricing is the
optimizers' own equation modules (``pricing`` is empty) and its capacity check ``kernels.capacity.check``.
Code outside this module never compares a family's name: it reads the entry (``unit``, ``layouts``,
``datatypes``, ``interval``) found by a spec's ``family`` attribute.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError, unknown

DEFAULT_FAMILY = "upmem-like"
"""The family of a hardware file without a ``family`` key (every UPMEM-shaped spec)."""


@dataclass(frozen=True, slots=True)
class ArchitectureInfo:
    """One PIM architecture family: what it is and where its spec, pricing and capacity check live."""

    name: str
    label: str
    description: str
    spec: str
    """``pimmodel.specs.<module>:<Record>``: the frozen spec record; the module has ``from_mapping``."""
    capacity: str
    """``pimmodel.kernels.<module>:<function>``: ``(w, hw)``, raises a one-line error for what cannot run."""
    pricing: str = ""
    """dotted path of its pricing module (``evaluate``, ``equations``); "" for the optimizers' own equations."""
    unit: str = "DPU"
    """what one processing element is called in records and messages (``--dpus`` counts them)."""
    layouts: tuple[str, ...] = ("dense", "sparse")
    """the dataset layouts its kernels can run."""
    layout_note: str = ""
    """why it cannot run the others."""
    datatypes: str = "int32/int64 fixed point (the study's)"
    """the arithmetic its units run the study's models in (said in every record)."""
    interval: bool = True
    """True: the transfer spread of the upmem-scale fit machines applies (``calibration.transfers``)."""
    calibrated: bool = True
    """True: its pricing reads the coefficients ``pimmodel calibrate`` fits on the emulator."""
    validation_groups: tuple[str, ...] = ()
    """the ``pimmodel validate`` groups that check its specs (empty: the UPMEM groups)."""
    silicon_check: str = ""
    """``module:function`` ``(hw) -> (cases, targets, details)``: its validation group's check on real numbers."""
    modules: tuple[str, ...] = ()
    """its other modules (a fit, the silicon check's), reached only through this entry."""
    sources: str = ""
    """where its constants come from."""
    clock: str = "dpu_clock_hz"
    """the spec attribute giving one unit's clock (what ``specs list`` shows)."""
    commands: tuple[str, ...] = ()
    """the CLI commands that take its specs (empty: every command); another is refused with one line."""
    workloads: tuple[str, ...] = ()
    """the training workload families (``specs.families``) it prices (empty: every one)."""
    ignores: tuple[tuple[str, str], ...] = ()
    """(option, why): command-line options (Python names) its pricing never reads; given on the command line
    they are refused with one line, never ignored (``check_options``; ``tests/test_architecture_contract.py``
    checks each against the pricing's equations)."""

    def __post_init__(self) -> None:
        if ":" not in self.spec or ":" not in self.capacity or ":" in self.pricing:
            raise ValueError(f"{self.name}: spec and capacity are module:name paths, pricing a module path")


REGISTRY: dict[str, ArchitectureInfo] = {info.name: info for info in (
    ArchitectureInfo(
        "upmem-like", "UPMEM-like", "general-purpose in-order cores (DPUs), each beside its own DRAM bank with a "
        "scratchpad and a DMA engine, driven by the host over the DDR4 bus (UPMEM)",
        "pimmodel.specs.hardware:HardwareSpec", "pimmodel.kernels.capacity:check",
        sources="hardware_specs/upmem-*.toml (PrIM, uPIMulator's real-hardware runs, upmem-scale)"),
    ArchitectureInfo(
        "bank-simd", "bank-level SIMD PIM", "FP16 SIMD units beside pairs of DRAM banks, no cores: the host's memory "
        "controller drives every unit of a pseudo-channel at once with column commands (all-bank PIM mode); "
        "Samsung HBM-PIM (Aquabolt-XL / FIMDRAM)",
        "pimmodel.specs.bank_simd:BankSimdSpec", "pimmodel.kernels.bank_simd:check",
        pricing="pimmodel.costmodel.bank_simd", unit="PIM unit", layouts=("dense",),
        layout_note="the units have no gather for a sparse row's indices",
        datatypes="FP16 (the units have no integer multiply: the study's fixed point is priced as FP16)",
        interval=False, calibrated=False, clock="command_rate_hz", validation_groups=("bank-pim",),
        silicon_check="pimmodel.validation.bank_pim:bank_pim_cases",
        modules=("pimmodel.validation.bank_pim", "pimmodel.calibration.bank_pim"),
        commands=("predict", "scale", "equations", "sensitivity", "specs", "validate", "compare-families"),
        workloads=("linear",),
        ignores=(("tasklets", "its units have no threads (the memory controller drives every unit of a "
                  "pseudo-channel at once)"),),
        sources="pimmodel/data/validation/bank-pim/constants.md (ISSCC'21, ISCA'21, PIMSimulator)"),
)}
FAMILIES: tuple[str, ...] = tuple(REGISTRY)


def architecture(name: str) -> ArchitectureInfo:
    """The entry of a family name (one-line error listing the known ones)."""
    if not isinstance(name, str) or name not in REGISTRY:
        raise unknown("hardware family", str(name), FAMILIES)
    return REGISTRY[name]


def architecture_of(hw: Any) -> ArchitectureInfo:
    """The entry of a spec record (its ``family`` attribute; a record without one is ``upmem-like``)."""
    return architecture(getattr(hw, "family", DEFAULT_FAMILY))


def resolve(path: str) -> Any:
    """The object at ``module:name`` (or the module at a dotted path)."""
    module, _, name = path.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, name) if name else loaded


def spec_loader(name: str) -> Callable[[Any, str], Any]:
    """``from_mapping`` of a family's spec module."""
    return resolve(architecture(name).spec.partition(":")[0]).from_mapping  # type: ignore[no-any-return]


def family_of(data: Any, origin: str) -> str:
    """The ``family`` key of a parsed hardware file (default ``upmem-like``), checked."""
    family = data.get("family", DEFAULT_FAMILY) if isinstance(data, dict) else DEFAULT_FAMILY
    if not isinstance(family, str) or family not in REGISTRY:
        raise SpecError(f"{origin}: family = {family!r} is not a hardware family; use one of {', '.join(FAMILIES)}")
    return family


def check_layout(dataset: Any, hw: Any) -> None:
    """Refuse (one line) a dataset layout ``hw``'s family cannot run, saying why and what to use."""
    info = architecture_of(hw)
    if dataset.layout not in info.layouts:
        raise SpecError(f"{hw.name} ({info.label}) cannot run the {dataset.layout} layout of {dataset.name}: its "
                        f"kernels run only {', '.join(info.layouts)} rows ({info.layout_note}); use a "
                        f"{info.layouts[0]} dataset or a spec of another family")


def fields_of(hw: Any) -> Any:
    """The ``FIELDS`` table (``specs.hardware.Field`` records) of ``hw``'s family's spec module."""
    return resolve(architecture_of(hw).spec.partition(":")[0]).FIELDS


def check_command(hw: Any, command: str, workload: str = "linear") -> None:
    """Refuse (one line) a command or a workload family ``hw``'s family does not take (its entry's ``commands``,
    ``workloads``)."""
    info = architecture_of(hw)
    if command and info.commands and command not in info.commands:
        raise SpecError(f"`pimmodel {command}` does not run on {hw.name} ({info.label}): it models UPMEM-like "
                        f"hardware; on this family use {', '.join(info.commands)}")
    if info.workloads and workload not in info.workloads:
        raise SpecError(f"--workload {workload} does not run on {hw.name} ({info.label}); it prices "
                        f"{', '.join(info.workloads)} (e.g. --workload {info.workloads[0]})")


def check_options(hw: Any, given: Sequence[str]) -> None:
    """Refuse (one line) an option of ``given`` (Python names of the options a command line gave) that ``hw``'s
    family does not read (its entry's ``ignores``)."""
    info = architecture_of(hw)
    for option, why in info.ignores:
        if option in given:
            raise SpecError(f"--{option.replace('_', '-')} does not apply to {hw.name} ({info.label}): {why}; "
                            "drop it")


def study_units(hw: Any, study_dpus: int = 2048) -> int:
    """The study's 2,048 units, or the largest power of two of them a smaller system has (what ``--dpus`` means
    when it is not given)."""
    n = study_dpus
    while n > hw.dpus_available and n > 1:
        n //= 2
    return n
