"""Bank-level SIMD PIM (Samsung HBM-PIM / Aquabolt-XL): one frozen record per system, loaded from a hardware TOML file
with ``family = "bank-simd"``.

The organisation: a system has ``stacks`` HBM stacks; each has ``pim_channels_per_stack`` pseudo-channels with PIM
units, ``units_per_channel`` units each, one unit per ``banks_per_unit`` banks. A unit is a ``lanes``-wide FP16 SIMD
ALU with ``grf_registers`` vector registers (per operand file) and ``srf_registers`` scalar ones; it runs the
instruction the host's column command selects from its small instruction buffer. Every unit of a pseudo-channel
executes the same command at once (all-bank PIM mode), one command per ``command_s`` (the bank-group column-to-
column delay tCCD_L); a command moves one ``lanes`` x 2 B column of each bank it reads. A DRAM row of ``row_bytes``
is opened once per ``row_cycle_s`` in every bank together (all-bank activate), of which ``activation_exposed`` is
not hidden behind the unit's commands to its other bank, and entering and leaving PIM mode costs ``mode_switch_s``.
The host writes and reads the units' memory and registers over the normal HBM interface.

The ``FIELDS`` table is the one place that maps TOML keys to record fields, scales and allowed ranges, as for the
UPMEM-like family (``specs.hardware.Field``). Every constant's source is in the TOML file; the tags are the hardware
reference's (S/C/T = sourced, D = derived, A = assumption)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

from ..errors import SpecError
from .hardware import Field, SpecRecord, _f, check_numbers, read_fields, write_fields

FAMILY = "bank-simd"

FIELDS: tuple[Field, ...] = (
    # --- organisation
    _f("stacks", "organisation", "stacks", 1, 1, 1 << 12, True, doc="HBM-PIM stacks in the system"),
    _f("pim_channels_per_stack", "organisation", "pim_channels_per_stack", 1, 1, 1 << 10, True,
       doc="pseudo-channels with PIM units in one stack"),
    _f("units_per_channel", "organisation", "units_per_channel", 1, 1, 1 << 10, True,
       doc="PIM units in one pseudo-channel (all driven by the same command)"),
    _f("banks_per_unit", "organisation", "banks_per_unit", 1, 1, 64, True, doc="DRAM banks one unit reads"),
    _f("bank_bytes", "organisation", "bank_mib", 1024**2, 1024**2, 1 << 40, True, doc="capacity of one bank"),
    _f("lanes", "organisation", "lanes", 1, 1, 1024, True, doc="FP16 SIMD lanes of one unit (one column)"),
    _f("grf_registers", "organisation", "grf_registers", 1, 1, 1024, True,
       doc="vector registers in each of the unit's two register files (GRF_A, GRF_B)"),
    _f("srf_registers", "organisation", "srf_registers", 1, 1, 1024, True, doc="scalar registers (SRF) per unit"),
    _f("crf_instructions", "organisation", "crf_instructions", 1, 1, 1 << 16, True,
       doc="instructions the unit's command buffer (CRF) holds"),
    # --- timing of one pseudo-channel
    _f("command_s", "timing", "command_ns", 1e-9, 1e-12, 1e-3,
       doc="one PIM command (all units of the channel); tCCD_L, the same-bank-group column-to-column delay"),
    _f("row_cycle_s", "timing", "row_cycle_ns", 1e-9, 0, 1e-3,
       doc="open a new row in every bank (all-bank ACT + PRE, tRC)"),
    _f("row_bytes", "timing", "row_bytes", 1, 32, 1 << 20, True, doc="bytes of one DRAM row of a bank (page)"),
    _f("activation_exposed", "timing", "activation_exposed", 1, 0, 1,
       doc="share of each row activation the unit's commands to its other bank do not hide (1 = all exposed)"),
    _f("channel_bytes_per_s", "timing", "channel_gb_per_s", 1e9, 1e6, 1e15,
       doc="the pins' rate of one pseudo-channel (what a host can read or write of it at most)"),
    _f("mode_switch_s", "timing", "mode_switch_ns", 1e-9, 0, 1e9,
       doc="enter all-bank PIM mode and return to single-bank mode (the mode-register sequence), per kernel"),
    _f("program_commands", "timing", "program_commands", 1, 0, 1 << 16, True,
       doc="writes that load a kernel's instructions and registers before it runs"),
    # --- host
    _f("host_write_bytes_per_s", "host", "write_gb_per_s", 1e9, 1e6, 1e15,
       doc="what the host writes into the PIM stacks per second (normal mode, every channel)"),
    _f("host_read_bytes_per_s", "host", "read_gb_per_s", 1e9, 1e6, 1e15,
       doc="what the host reads from the PIM stacks per second (normal mode, every channel)"),
    _f("host_reduce_bytes_per_s", "host", "reduce_gb_per_s", 1e9, 1e6, 1e15,
       doc="host vector arithmetic (sums, averages, the error per sample) streaming its operands"),
    _f("host_call_s", "host", "call_us", 1e-6, 0, 1e6, doc="host software per transfer or kernel call"),
    _f("power_per_unit_w", "host", "power_per_unit_w", 1, 0, 1e3, doc="power per PIM unit while running"),
)
FIELD_BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
NUMERIC_FIELDS: tuple[str, ...] = tuple(f.name for f in FIELDS)
SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(f.section for f in FIELDS))
VALUE_BYTES = 2
"""FP16: every value the units read or the host moves."""


@dataclass(frozen=True, slots=True)
class BankSimdSpec(SpecRecord):
    """A bank-level SIMD PIM system. Hypothetical designs: ``spec.replace(lanes=32)`` (re-validated)."""

    family: ClassVar[str] = FAMILY
    FIELDS: ClassVar[tuple[Field, ...]] = FIELDS
    name: str
    description: str
    stacks: int
    pim_channels_per_stack: int
    units_per_channel: int
    banks_per_unit: int
    bank_bytes: int
    lanes: int
    grf_registers: int
    srf_registers: int
    crf_instructions: int
    command_s: float
    row_cycle_s: float
    row_bytes: int
    activation_exposed: float
    channel_bytes_per_s: float
    mode_switch_s: float
    program_commands: int
    host_write_bytes_per_s: float
    host_read_bytes_per_s: float
    host_reduce_bytes_per_s: float
    host_call_s: float
    power_per_unit_w: float
    machine: str = ""
    link_topology: str = "none"
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_numbers(f"hardware {self.name!r}", self, FIELDS)
        if self.link_topology != "none":
            raise SpecError(f"hardware {self.name!r}: a bank-simd system has no direct links between units; "
                            "remove [interconnect] topology")

    @property
    def dpus_available(self) -> int:
        """PIM units of the system (``--dpus`` counts units on this family)."""
        return self.stacks * self.pim_channels_per_stack * self.units_per_channel

    @property
    def dpus_per_rank(self) -> int:
        """Units driven by one command: a pseudo-channel's."""
        return self.units_per_channel

    @property
    def command_rate_hz(self) -> float:
        """PIM commands per second of one pseudo-channel (1 / tCCD_L)."""
        return 1.0 / self.command_s

    @property
    def unit_memory_bytes(self) -> int:
        return self.banks_per_unit * self.bank_bytes

    def ranks(self, dpus: int) -> int:
        """Pseudo-channels needed to hold ``dpus`` units."""
        return -(-dpus // self.units_per_channel)


@lru_cache(maxsize=1)
def schema() -> Any:
    """The schema of a ``family = "bank-simd"`` file, generated from ``FIELDS`` (``specs.schema``)."""
    # lazy imports keep the CLI's cold start fast (msgspec is imported only when a file is validated)
    from .schema import schema_for_fields

    return schema_for_fields(FAMILY, FIELDS, family=FAMILY, extra={"": [("machine", str, "")]})


def from_mapping(data: Mapping[str, Any], origin: str) -> BankSimdSpec:
    """A spec from a parsed ``family = "bank-simd"`` file, checked against ``schema()``: unknown, missing, mistyped
    or out-of-range keys are one-line errors naming the file and the key."""
    # lazy imports keep the CLI's cold start fast
    from .schema import validate

    validate(data, schema(), origin)
    values, sources = read_fields(data, FIELDS, origin)
    return BankSimdSpec(name=data["name"], description=str(data.get("description", "")),
                        machine=str(data.get("machine", "")), sources=sources, **values)


def to_mapping(spec: BankSimdSpec) -> dict[str, Any]:
    """The TOML tables of a spec (inverse of ``from_mapping``), with sources where known."""
    out: dict[str, Any] = {"name": spec.name, "family": FAMILY, "description": spec.description}
    if spec.machine:
        out["machine"] = spec.machine
    return write_fields(out, spec, FIELDS)
