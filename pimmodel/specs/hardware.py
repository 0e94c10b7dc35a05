"""Hardware specifications: one frozen record per PIM system, loaded from ``hardware_specs/*.toml``.

Every numeric field is SI (seconds, bytes, hertz, instructions, cycles). The TOML files use prefixed,
unit-suffixed keys (``clock_mhz``, ``wram_kib``) and give a source for every constant as
``key = { value = ..., source = "..." }``. The table ``FIELDS`` below is the one place that maps TOML keys
to record fields, scales and allowed ranges: loading, validation, writing and the design-space search
all read it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Self, cast

from ..errors import SpecError, check_known
from ._toml import dumps, read_toml

FAMILY = "upmem-like"
"""The architecture family of this module's files (``specs/architectures.py``; a file may say
``family = "upmem-like"``)."""
TOPOLOGIES = ("none", "in-rank", "ring", "torus", "all-to-all")
"""Direct inter-DPU links: UPMEM has none; the others are hypothetical designs (see the DSE): a ring inside each
rank, one ring through all DPUs, a 2-D torus of all DPUs (``specs.optimizers.torus_shape``), or every DPU linked
to every other."""


@dataclass(frozen=True, slots=True)
class Field:
    """How one record field appears in TOML: section, key, scale to SI, and allowed range. ``default`` (in the
    TOML unit): the value a spec file that predates the field gets, chosen to reproduce the pricing from before
    the field existed (None: the key is required)."""

    name: str
    section: str
    key: str
    scale: float
    low: float
    high: float
    integer: bool = False
    doc: str = ""
    default: float | None = None
    default_note: str = "reproduces the pricing from before this constant"
    """why a spec file without the key gets ``default`` (the source recorded for it)."""


def _f(name: str, section: str, key: str, scale: float, low: float, high: float, integer: bool = False,
       doc: str = "", default: float | None = None, default_note: str = "") -> Field:
    return Field(name, section, key, scale, low, high, integer, doc, default,
                 default_note or "reproduces the pricing from before this constant")


def _instructions(operation: str, low: float, high: float, doc: str = "") -> Field:
    """The ``[instructions]`` row of one operation: its count, read as written (``OPERATION_instructions``)."""
    return _f(f"{operation}_instructions", "instructions", operation, 1, low, high, doc=doc)


def _dma(key: str, low: float, high: float, integer: bool = False, doc: str = "",
         default: float | None = None) -> Field:
    """A ``[dma]`` row read as written (``dma_KEY``)."""
    return _f(f"dma_{key}", "dma", key, 1, low, high, integer, doc=doc, default=default)


def check_numbers(label: str, record: Any, fields: tuple[Field, ...]) -> None:
    """Every numeric field of a spec record is a number, whole where it must be, and inside its range; the
    first that is not is a one-line SpecError starting with ``label`` (hardware and the CPU/GPU baselines)."""
    for f in fields:
        value = getattr(record, f.name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(f"{label}: {f.section}.{f.key} must be a number, got {value!r}")
        if f.integer and int(value) != value:
            raise SpecError(f"{label}: {f.section}.{f.key} must be a whole number, got {value}")
        if not f.low <= value <= f.high:
            lo, hi = f.low / f.scale, f.high / f.scale
            raise SpecError(f"{label}: {f.section}.{f.key} = {value / f.scale:g} is out of range; "
                            f"use a value in [{lo:g}, {hi:g}]")


def read_fields(data: Mapping[str, Any], fields: tuple[Field, ...],
                origin: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The record values of a ``Field`` table from a parsed spec file (checked against its schema), in SI, and the
    source of each: a key the file lacks takes the field's ``default`` (its source says so); a count that is not
    whole in SI is a one-line error naming the file and the key (never rounded silently)."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for f in fields:
        table = data.get(f.section, {})
        if f.key not in table and f.default is not None:
            values[f.name] = int(f.default * f.scale) if f.integer else float(f.default * f.scale)
            sources[f.name] = f"default {f.default:g}: {f.default_note}"
            continue
        raw = table[f.key]
        source = ""
        if isinstance(raw, Mapping):
            source = str(raw.get("source", ""))
            raw = raw["value"]
        scaled = raw * f.scale
        if f.integer and not float(scaled).is_integer():  # 2.5 tasklets is no count: never rounded silently
            raise SpecError(f"{origin}: {f.section}.{f.key} must be a whole number, got {raw!r}")
        values[f.name] = int(round(scaled)) if f.integer else float(scaled)
        sources[f.name] = source
    return values, sources


def write_fields(out: dict[str, Any], record: Any, fields: tuple[Field, ...]) -> dict[str, Any]:
    """The inverse of ``read_fields`` into ``out``'s section tables: each field in its TOML unit (whole where it
    is a count), as ``{value, source}`` where its source is known."""
    for f in fields:
        value = getattr(record, f.name) / f.scale
        value = int(value) if f.integer and float(value).is_integer() else float(value)
        source = record.sources.get(f.name, "")
        out.setdefault(f.section, {})[f.key] = {"value": value, "source": source} if source else value
    return out


class SpecRecord:
    """What every spec record with a ``Field`` table shares (UPMEM-like and bank-simd hardware, the CPU and GPU
    baselines): its numbers by name and a validated copy. A subclass is a frozen dataclass naming its table in
    ``FIELDS``."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[Field, ...]]

    def numeric(self) -> dict[str, float]:
        """The numeric fields by name, in the table's order (what the compiled cost model takes)."""
        return {f.name: float(getattr(self, f.name)) for f in self.FIELDS}

    def replace(self, **changes: Any) -> Self:
        """A validated copy with some fields changed (a hypothetical design)."""
        return cast(Self, dataclasses.replace(cast(Any, self), **changes))


FIELDS: tuple[Field, ...] = (
    # --- DPU organisation and pipeline
    _f("dpu_clock_hz", "dpu", "clock_mhz", 1e6, 1e6, 1e11, doc="DPU clock"),
    _f("dpus_per_rank", "dpu", "dpus_per_rank", 1, 1, 1 << 16, True, doc="DPUs driven as one rank"),
    _f("dpus_available", "dpu", "dpus_available", 1, 1, 1 << 24, True, doc="usable DPUs in the system"),
    _f("max_tasklets", "dpu", "max_tasklets", 1, 1, 1024, True, doc="hardware threads per DPU"),
    _f("revolver_interval_cycles", "dpu", "revolver_interval_cycles", 1, 1, 64, True,
       doc="cycles before a thread may issue again (IPC 1 needs this many runnable threads)"),
    _f("barrier_instructions_per_tasklet", "dpu", "barrier_instructions_per_tasklet", 1, 0, 1e4,
       doc="instructions each tasklet executes under the barrier lock"),
    _f("wram_bytes", "dpu", "wram_kib", 1024, 1024, 1 << 40, True, doc="scratchpad per DPU"),
    _f("mram_bytes", "dpu", "mram_mib", 1024**2, 1024**2, 1 << 50, True, doc="DRAM bank per DPU"),
    _f("iram_bytes", "dpu", "iram_kib", 1024, 1024, 1 << 30, True, doc="instruction memory per DPU"),
    _f("power_per_dpu_w", "dpu", "power_per_dpu_w", 1, 0, 1e3, doc="power per DPU while running"),
    _f("chips_per_rank", "dpu", "chips_per_rank", 1, 1, 1 << 16, True, default=8,
       default_note="the UPMEM rank's 8 chips (dpu_chip_description.c: 8 control interfaces)",
       doc="DPU chips of a rank; a host transfer line is one DPU of each chip (8 B of each in a 64-B cache line)"),
    # --- instructions per operation (software routines where the ISA has no unit)
    _instructions("int32_add", 0.25, 1e4),
    _instructions("int32_shift", 0.25, 1e4),
    _instructions("int64_add", 0.25, 1e4),
    _instructions("int64_shift", 0.25, 1e4),
    _instructions("int32_mul_base", 0, 1e4,
       doc="fixed part of __mulsi3; one mul_step per bit of the smaller operand follows"),
    _instructions("mul_step", 0, 1e3,
       doc="per bit of the smaller operand (0 = native multiplier)"),
    _instructions("int64_mul_base", 0.25, 1e5),
    _instructions("float_add", 0.25, 1e5),
    _instructions("float_mul", 0.25, 1e5),
    _instructions("float_div", 0.25, 1e5),
    _instructions("double_add", 0.25, 1e5),
    _instructions("double_mul", 0.25, 1e5),
    _instructions("double_div", 0.25, 1e5),
    _instructions("float_convert", 0.25, 1e5,
       doc="int<->float or float<->double conversion"),
    # --- MRAM <-> WRAM DMA
    _dma("read_latency_cycles", 0, 1e5),
    _dma("write_latency_cycles", 0, 1e5),
    _dma("read_cycles_per_byte", 1e-4, 1e3),
    _dma("write_cycles_per_byte", 1e-4, 1e3),
    _dma("engine_cycles_per_transfer", 0, 1e5,
       doc="engine occupancy per transfer beyond the bytes (serialises concurrent small DMAs)"),
    _dma("compute_overlap", 0, 1, default=1.0,
       doc="share of the shorter of compute and DMA a parallel section hides behind the other (1 = all)"),
    _dma("min_bytes", 1, 1 << 20, True),
    _dma("max_bytes", 1, 1 << 30, True),
    # --- host <-> PIM transfers
    _f("push_bytes_per_s_per_rank", "host", "push_gb_per_s_per_rank", 1e9, 1e6, 1e15,
       doc="parallel CPU->DPU, one rank, large transfers"),
    _f("pull_bytes_per_s_per_rank", "host", "pull_gb_per_s_per_rank", 1e9, 1e6, 1e15),
    _f("broadcast_bytes_per_s_per_rank", "host", "broadcast_gb_per_s_per_rank", 1e9, 1e6, 1e15,
       doc="dpu_broadcast_to, one rank, bytes delivered"),
    _f("broadcast_identical_pushes", "host", "broadcast_identical_pushes", 1, 0, 1, True,
       doc="1: a buffer identical for every DPU (MA/GA-SGD's global model) goes by dpu_broadcast_to; "
           "0: by a parallel push, as the study's host code does"),
    _f("serial_to_pim_bytes_per_s", "host", "serial_to_pim_gb_per_s", 1e9, 1e6, 1e15),
    _f("serial_from_pim_bytes_per_s", "host", "serial_from_pim_gb_per_s", 1e9, 1e6, 1e15),
    _f("push_rank_growth", "host", "push_rank_growth", 1, 0.0, 1.0, default=1.0,
       default_note="every further rank adds a whole rank's bandwidth (no shared host limit)",
       doc="share of one rank's CPU->DPU bandwidth each further rank adds (ranks sharing a memory channel share "
           "its transfer pool; 1 = linear)"),
    _f("pull_rank_growth", "host", "pull_rank_growth", 1, 0.0, 1.0, default=1.0,
       default_note="every further rank adds a whole rank's bandwidth (no shared host limit)",
       doc="the same from the DPUs"),
    _f("push_saturation_bytes_per_s", "host", "push_saturation_gb_per_s", 1e9, 1e6, 1e15, default=1e6,
       default_note="no ceiling on the aggregate",
       doc="ceiling of the aggregate CPU->DPU bandwidth over all ranks (the shared host path)"),
    _f("pull_saturation_bytes_per_s", "host", "pull_saturation_gb_per_s", 1e9, 1e6, 1e15, default=1e6,
       default_note="no ceiling on the aggregate", doc="the same from the DPUs"),
    _f("transfer_threads", "host", "transfer_threads", 1, 1, 1 << 10, True, default=4,
       default_note="the UPMEM SDK's default transfer thread pool (nrThreadPerPool) of the host programs",
       doc="host threads of a rank's transfer pool; they split the rank's transfer lines (1 below 1 KiB per DPU, "
           "2 below 2 KiB, 4 below 32 KiB)"),
    _f("push_line_dpu_s_per_byte", "host", "push_line_dpu_ns_per_byte", 1e-9, 0, 1e9, default=0.0,
       default_note="no extra cost per further DPU of a transfer line",
       doc="one thread moving a transfer line to the DPUs: extra per byte per further DPU on the line (the first "
           "costs 1 / serial_to_pim_gb_per_s)"),
    _f("pull_line_dpu_s_per_byte", "host", "pull_line_dpu_ns_per_byte", 1e-9, 0, 1e9, default=0.0,
       default_note="no extra cost per further DPU of a transfer line",
       doc="the same from the DPUs (the first DPU costs 1 / serial_from_pim_gb_per_s)"),
    _f("transfer_call_overhead_s", "host", "transfer_call_overhead_us", 1e-6, 0, 1e6,
       doc="fixed cost of one dpu_push_xfer / broadcast call"),
    _f("pull_call_extra_s", "host", "pull_call_extra_us", 1e-6, 0, 1e6, default=0.0,
       doc="extra fixed cost of a DPU->CPU call (parallel pull or serial copy) over a CPU->DPU one"),
    _f("wram_call_overhead_s", "host", "wram_call_overhead_us", 1e-6, 0, 1e6, default=17.42,
       default_note="upmem-2556's fitted value",
       doc="fixed cost of one transfer of a WRAM symbol (arguments, results): no transfer thread pool involved"),
    _f("wram_word_s", "host", "wram_word_us", 1e-6, 0, 1e6, default=2.323,
       default_note="upmem-2556's fitted value",
       doc="one 32-bit word of a WRAM symbol on one transfer line (the 8 chips' DPUs of the line together)"),
    _f("launch_overhead_s", "host", "launch_overhead_ms", 1e-3, 0, 1e4, doc="one synchronous dpu_launch"),
    _f("launch_per_dpu_s", "host", "launch_per_dpu_us", 1e-6, 0, 1e6, default=0.0,
       doc="launch cost growing with the DPUs launched (boot and completion polling)"),
    _f("launch_per_rank_s", "host", "launch_per_rank_us", 1e-6, 0, 1e6, default=0.0,
       doc="launch cost per rank beyond the first: the SDK's 4 polling threads sweep their ranks one after another "
           "(dpu_polling.c), so completion is seen later the more ranks there are"),
    _f("host_thread_bytes_per_s", "host", "aggregate_gb_per_s_per_thread", 1e9, 1e6, 1e15,
       doc="bytes one host thread streams while reducing DPU vectors"),
    _f("host_memory_bytes_per_s", "host", "memory_gb_per_s", 1e9, 1e6, 1e15, doc="host memory bandwidth cap"),
    _f("host_cores", "host", "cores", 1, 1, 1 << 16, True),
    _f("thread_start_s", "host", "thread_start_us", 1e-6, 0, 1e6, doc="create + join one pthread"),
    _f("host_collective_time_factor", "host", "collective_time_factor", 1, 0.001, 1000, default=1.0,
       default_note="the host-mediated exchange as the SDK does it (gather, host reduction, broadcast), priced by "
                    "its transfers and reduction: the pricing from before this knob",
       doc="a what-if on the host-mediated collectives (primitives.host_gather_s, host_broadcast_s, host_allreduce_s): "
           "their time over the SDK path's (below 1: a faster collective implementation; PID-Comm's up to 4.20x over "
           "the host-mediated baseline is a context bound, not a fit)"),
    _f("host_power_w", "host", "power_w", 1, 0, 1e6),
    # --- the host platform (documentation of the machine; the transfer mechanism cites it)
    _f("host_sockets", "platform", "sockets", 1, 1, 64, True, default=2, default_note="a two-socket Xeon host",
       doc="CPU sockets of the host"),
    _f("memory_channels_per_socket", "platform", "memory_channels_per_socket", 1, 1, 64, True, default=6,
       default_note="a Xeon Scalable socket's six DDR4 channels", doc="DDR channels per socket (PIM and DRAM DIMMs)"),
    _f("memory_channel_bytes_per_s", "platform", "channel_gb_per_s", 1e9, 1e6, 1e15, default=19.2,
       default_note="DDR4-2400 peak (2400 MT/s x 8 B)", doc="peak bandwidth of one memory channel"),
    _f("socket_link_bytes_per_s", "platform", "socket_link_gb_per_s", 1e9, 1e6, 1e15, default=19.2,
       default_note="one UPI link at 9.6 GT/s, one direction", doc="socket-to-socket link, one direction"),
    _f("ranks_per_channel", "platform", "ranks_per_channel", 1, 1, 64, True, default=4,
       default_note="two PIM DIMMs of two ranks per channel",
       doc="ranks on one memory channel; the SDK has one transfer thread pool per channel, locked per transfer"),
    _f("ranks_per_socket", "platform", "ranks_per_socket", 1, 1, 1 << 16, True, default=20,
       default_note="derf/prim-benchmarks @ 38e5cce util/limit_ranks_to_numa_node: /dev/dpu_rank0-19 on NUMA node 0, "
                    "20-39 on node 1 of a 40-rank two-socket UPMEM server; priced only with buffers_on_one_node = 1",
       doc="placement: ranks on one socket's channels; dpu_alloc takes ranks in enumeration order (hw_dpu_sysfs.c), "
           "so a transfer's ranks beyond this many sit on the next socket"),
    _f("remote_buffer_share", "platform", "remote_buffer_share", 1, 0, 1, default=0.0,
       default_note="every host buffer on the socket of the rank it moves to or from (local placement): the pricing "
                    "from before placement was a term",
       doc="placement: share of a transfer's ranks whose host buffer sits on another socket (the SDK's copy threads "
           "run on the rank's node, xeon_sp_translation.c set_thread_numa_affinity, so those bytes cross the socket "
           "link); local 0, remote 1, interleaved 1 - 1/sockets"),
    _f("buffers_on_one_node", "platform", "buffers_on_one_node", 1, 0, 1, True, default=0,
       default_note="buffers placed by remote_buffer_share",
       doc="placement: 1 = every host buffer on the first socket's memory (first touch by one unpinned thread, or "
           "numactl --membind): the ranks beyond ranks_per_socket are remote; 0 = remote_buffer_share"),
    _f("remote_transfer_factor", "platform", "remote_transfer_factor", 1, 1, 100, default=1.7,
       default_note="A: no measured local/remote pair in the project's data; the log-midpoint of 1 (no penalty) and "
                    "the 2.9x bound of UPMEM Unleashed (arXiv 2510.15927v1 abstract: NUMA-aware allocation improves "
                    "host-PIM transfer throughput by up to 2.9x; context row unleashed-numa-xfer-max): sqrt(2.9)",
       doc="placement: time per byte of a remote rank's transfer over a local one's (host buffer on another socket)"),
    # --- direct inter-DPU links (hypothetical; UPMEM has none)
    _f("link_bytes_per_s", "interconnect", "link_gb_per_s", 1e9, 1e6, 1e15),
    _f("link_latency_s", "interconnect", "link_latency_us", 1e-6, 0, 1e6),
)
FIELD_BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
NUMERIC_FIELDS: tuple[str, ...] = tuple(f.name for f in FIELDS)


@dataclass(frozen=True, slots=True)
class HardwareSpec(SpecRecord):
    """A PIM system. Build hypothetical designs with ``dataclasses.replace(spec, ...)`` (re-validated)."""

    FIELDS: ClassVar[tuple[Field, ...]] = FIELDS
    name: str
    description: str
    dpu_clock_hz: float
    dpus_per_rank: int
    dpus_available: int
    max_tasklets: int
    revolver_interval_cycles: int
    barrier_instructions_per_tasklet: float
    wram_bytes: int
    mram_bytes: int
    iram_bytes: int
    power_per_dpu_w: float
    int32_add_instructions: float
    int32_shift_instructions: float
    int64_add_instructions: float
    int64_shift_instructions: float
    int32_mul_base_instructions: float
    mul_step_instructions: float
    int64_mul_base_instructions: float
    float_add_instructions: float
    float_mul_instructions: float
    float_div_instructions: float
    double_add_instructions: float
    double_mul_instructions: float
    double_div_instructions: float
    float_convert_instructions: float
    dma_read_latency_cycles: float
    dma_write_latency_cycles: float
    dma_read_cycles_per_byte: float
    dma_write_cycles_per_byte: float
    dma_engine_cycles_per_transfer: float
    dma_min_bytes: int
    dma_max_bytes: int
    push_bytes_per_s_per_rank: float
    pull_bytes_per_s_per_rank: float
    broadcast_bytes_per_s_per_rank: float
    broadcast_identical_pushes: int
    serial_to_pim_bytes_per_s: float
    serial_from_pim_bytes_per_s: float
    transfer_call_overhead_s: float
    launch_overhead_s: float
    host_thread_bytes_per_s: float
    host_memory_bytes_per_s: float
    host_cores: int
    thread_start_s: float
    host_power_w: float
    link_bytes_per_s: float
    link_latency_s: float
    dma_compute_overlap: float = 1.0
    pull_call_extra_s: float = 0.0
    launch_per_dpu_s: float = 0.0
    chips_per_rank: int = 8
    transfer_threads: int = 4
    push_line_dpu_s_per_byte: float = 0.0
    pull_line_dpu_s_per_byte: float = 0.0
    wram_call_overhead_s: float = 17.42e-6
    wram_word_s: float = 2.323e-6
    launch_per_rank_s: float = 0.0
    push_rank_growth: float = 1.0
    pull_rank_growth: float = 1.0
    push_saturation_bytes_per_s: float = 1e15
    pull_saturation_bytes_per_s: float = 1e15
    host_sockets: int = 2
    memory_channels_per_socket: int = 6
    memory_channel_bytes_per_s: float = 19.2e9
    socket_link_bytes_per_s: float = 19.2e9
    ranks_per_channel: int = 4
    ranks_per_socket: int = 20
    remote_buffer_share: float = 0.0
    buffers_on_one_node: int = 0
    remote_transfer_factor: float = 1.7
    host_collective_time_factor: float = 1.0
    machine: str = ""
    link_topology: str = "none"
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_numbers(f"hardware {self.name!r}", self, FIELDS)
        check_known("interconnect topology", self.link_topology, TOPOLOGIES)
        if self.dma_min_bytes > self.dma_max_bytes:
            raise SpecError(f"hardware {self.name!r}: dma.min_bytes exceeds dma.max_bytes")
        if self.dpus_per_rank > self.dpus_available:
            raise SpecError(f"hardware {self.name!r}: dpu.dpus_per_rank ({self.dpus_per_rank}) exceeds "
                            f"dpu.dpus_available ({self.dpus_available})")

    def ranks(self, dpus: int) -> int:
        """Ranks needed to hold ``dpus`` DPUs."""
        return -(-dpus // self.dpus_per_rank)


@lru_cache(maxsize=1)
def schema() -> Any:
    """The schema of an UPMEM-like hardware file, generated from ``FIELDS`` (``specs.schema``), with the link
    topology and the optional ``family = "upmem-like"``."""
    # lazy imports keep the CLI's cold start fast (msgspec is imported only when a file is validated)
    from .schema import literal, schema_for_fields, with_source

    topology = with_source(literal(TOPOLOGIES), "upmem_like_interconnect_topology")
    return schema_for_fields(FAMILY, FIELDS, family=FAMILY,
                             extra={"": [("machine", str, "")], "interconnect": [("topology", topology, "none")]})


def from_mapping(data: Mapping[str, Any], origin: str) -> HardwareSpec:
    """Build a spec from parsed TOML, checked against ``schema()``: an unknown, missing, mistyped or out-of-range
    key is one line naming the file and the key."""
    # lazy imports keep the CLI's cold start fast
    from .architectures import family_of
    from .schema import validate

    family_of(data, origin)  # an unknown family: one line listing the known ones
    validate(data, schema(), origin)
    values, sources = read_fields(data, FIELDS, origin)
    topology = data.get("interconnect", {}).get("topology", "none")
    if isinstance(topology, Mapping):
        sources["link_topology"] = str(topology.get("source", ""))
        topology = topology.get("value", "none")
    return HardwareSpec(name=data["name"], description=str(data.get("description", "")), link_topology=str(topology),
                        machine=str(data.get("machine", "")), sources=sources, **values)


def to_mapping(spec: HardwareSpec) -> dict[str, Any]:
    """The TOML tables of a spec (inverse of ``from_mapping``), with sources where known."""
    out: dict[str, Any] = {"name": spec.name, "description": spec.description}
    if spec.machine:
        out["machine"] = spec.machine
    write_fields(out, spec, FIELDS)
    topology_source = spec.sources.get("link_topology", "")
    out["interconnect"]["topology"] = ({"value": spec.link_topology, "source": topology_source} if topology_source
                                       else spec.link_topology)
    return out


def to_toml(spec: HardwareSpec) -> str:
    return dumps(to_mapping(spec))


def load_file(path: Path) -> HardwareSpec:
    return from_mapping(read_toml(path, "hardware"), str(path))
