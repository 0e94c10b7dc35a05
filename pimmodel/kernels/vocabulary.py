"""A small, general vocabulary for what a UPMEM kernel does, independent of any hardware's speed.

A DPU kernel is a sequence of *sections*, each between two barriers (or a kernel boundary). A section is
either *parallel* (all tasklets interleave in the revolver pipeline, so one tasklet's DMA can hide behind
another's compute) or *serial* (one tasklet works while the others wait). One occurrence of a section does
some ``Work``:

- ``ops``: instructions by operation class (``OP_CLASSES``), counted over all tasklets of a parallel
  section, or for the one working tasklet of a serial section;
- ``tail_ops``: the part of ``ops`` that only ``k`` < T tasklets run while the others already wait at the
  next barrier (an uneven split), keyed ``(op class, k)``;
- ``dmas``: MRAM<->WRAM transfers, each ``Dma(direction, bytes, concurrent, transfers)``: ``transfers`` DMAs
  of ``bytes`` each, issued ``concurrent`` at a time (tasklets in lockstep);
- ``barriers``: ``barrier_wait`` calls;
- ``timed_barriers``: of those, the ones an instrumented build times inside a DMA category ("read"/"write": the
  study's benchmark builds bracket every bulk DMA with ``timer_start`` ... ``barrier_wait`` ... ``timer_stop``).
- ``chains``: steps that run one after another across tasklets (``Chain``): a critical section behind one
  mutex (every element of HST-L, every tile of TRNS's step 3), or a handshake chain (the 15 hops of the
  lock-step SCAN, SEL and UNI rounds).

A ``Section`` may say how many tasklets are active in it (``tasklets``; fewer than T when the work has fewer
pieces than tasklets, e.g. GEMV's rows go to tasklets in pairs); the others only take its barriers.

The host side of a kernel is a list of ``HostCall``s (transfer calls with their bytes per DPU, mode and the
DPU memory they touch). A ``KernelRun`` is one measured kernel: its launches, its sections and the host calls
around it (the PrIM kernels, ``pimmodel.kernels.prim``). An exchange over direct DPU links (hypothetical
hardware) is a ``LinkOp``.

Every count may be a number, a numpy array (the emulator: one entry per DPU) or a sympy expression (the cost
model): ``pimmodel.kernels.pricing`` turns any of them into cycles and seconds with the hardware primitives,
so the training kernels of the study, the PrIM benchmarks and the emulator's traces share one pricing path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import primitives as P
from ..errors import check_choice

Num = Any  # a number, a numpy array or a sympy expression

DIRECTIONS = ("read", "write")
TRANSFER_MODES = ("parallel", "broadcast", "serial", "identical")
"""Host transfer modes (``primitives.host_transfer_s``)."""
MEMORIES = ("mram", "wram")
"""DPU memory a host transfer touches: MRAM (the DMA-capable bank) or a WRAM ``__host`` symbol."""
CHAIN_KINDS = ("mutex", "handshake")
"""``mutex``: a critical section; the lock holder issues among every runnable (spinning) tasklet while the
others' work overlaps it. ``handshake``: a rendezvous chain; each hop runs nearly alone, after the work."""


def _field(name: str) -> Callable[[Any], Num]:
    return lambda hw: getattr(hw, name)


OP_CLASSES: dict[str, Callable[[Any], Num]] = {
    "instructions": lambda hw: 1,
    "bookkeeping": lambda hw: 1,
    "int32_add": _field("int32_add_instructions"),
    "int32_shift": _field("int32_shift_instructions"),
    "int64_add": _field("int64_add_instructions"),
    "int64_shift": _field("int64_shift_instructions"),
    "mul32": _field("int32_mul_base_instructions"),
    "mul32_bits": _field("mul_step_instructions"),
    "mul64": _field("int64_mul_base_instructions"),
    "float_add": _field("float_add_instructions"),
    "float_mul": _field("float_mul_instructions"),
    "float_div": _field("float_div_instructions"),
    "double_add": _field("double_add_instructions"),
    "double_mul": _field("double_mul_instructions"),
    "double_div": _field("double_div_instructions"),
    "float_convert": _field("float_convert_instructions"),
}
"""Operation class -> instructions per operation on a hardware spec. ``instructions`` and ``bookkeeping``
(loads, stores, index updates, compares, branches) are one instruction each; ``mul32`` / ``mul64`` count
calls of the software multiplies and ``mul32_bits`` the significant bits of the smaller operand that drive
``__mulsi3``'s data-dependent part (``primitives.mul32_instructions``); ``__muldi3`` has none."""


def op_instructions(op: str, hw: Any) -> Num:
    """Instructions one operation of class ``op`` takes on ``hw``."""
    try:
        return OP_CLASSES[op](hw)
    except KeyError:
        raise ValueError(f"unknown operation class {op!r}; known: {', '.join(OP_CLASSES)}") from None


@dataclass(frozen=True)
class Dma:
    """``transfers`` MRAM<->WRAM DMAs of ``bytes`` each, ``concurrent`` of them in flight together; ``after``:
    each tasklet issues it after its compute (a write-back; matters in a lock-step section only)."""

    direction: str
    bytes: Num
    concurrent: Num
    transfers: Num
    after: bool = False

    def __post_init__(self) -> None:
        check_choice("DMA direction", self.direction, DIRECTIONS)

    @property
    def moved_bytes(self) -> Num:
        return self.transfers * self.bytes


@dataclass(frozen=True)
class Chain:
    """``steps`` steps that run one after another across tasklets, each executing ``ops`` (instructions on the
    chain's critical path, by operation class) and ``dmas`` (DMAs issued inside the step, each waiting its
    full latency because nothing else of the chain can proceed meanwhile). ``kind``: ``CHAIN_KINDS``."""

    kind: str
    steps: Num
    ops: Mapping[str, Num] = field(default_factory=dict)
    dmas: tuple[Dma, ...] = ()
    lock: str = ""
    """mutex chains behind the same lock add up; different locks serialize independently."""

    def __post_init__(self) -> None:
        check_choice("chain kind", self.kind, CHAIN_KINDS)


@dataclass(frozen=True)
class Work:
    """What one occurrence of a section executes (see the module docstring). ``ops`` excludes the chains'
    critical-path instructions."""

    ops: Mapping[str, Num] = field(default_factory=dict)
    tail_ops: Mapping[tuple[str, Any], Num] = field(default_factory=dict)
    dmas: tuple[Dma, ...] = ()
    barriers: Num = 0
    timed_barriers: Mapping[str, Num] = field(default_factory=dict)
    chains: tuple[Chain, ...] = ()

    def dma_totals(self, direction: str) -> tuple[Num, Num]:
        """(transfers, bytes) of one direction."""
        picked = [d for d in self.dmas if d.direction == direction]
        return (sum((d.transfers for d in picked), 0), sum((d.moved_bytes for d in picked), 0))


@dataclass(frozen=True)
class Section:
    """A named piece of DPU work run ``count`` times (per launch, or per epoch); ``tasklets``: the tasklets
    that share its ops (None: all of the kernel's tasklets). ``lockstep``: the tasklets start it together (after
    a barrier) by waiting for their DMAs, so the DMA burst is exposed and the tasklet served last computes
    alone after it (``pimmodel.kernels.pricing``)."""

    name: str
    parallel: bool
    count: Num
    work: Work
    tasklets: Num | None = None
    lockstep: bool = False


@dataclass(frozen=True)
class HostCall:
    """One host transfer call: ``bytes_per_dpu`` to or from every DPU, in ``mode`` (``TRANSFER_MODES``;
    ``identical``: the same buffer to every DPU, broadcast if the hardware does so), ``calls`` times, to or
    from ``memory`` (``MEMORIES``)."""

    name: str
    bytes_per_dpu: Num
    to_pim: bool
    mode: str = "parallel"
    calls: Num = 1
    memory: str = "mram"

    def __post_init__(self) -> None:
        check_choice("transfer mode", self.mode, TRANSFER_MODES)
        check_choice("memory", self.memory, MEMORIES)


@dataclass(frozen=True)
class KernelRun:
    """One timed kernel of a host program: ``launches`` synchronous ``dpu_launch`` calls whose DPU work is
    ``sections`` (the busiest DPU's, each ``count`` times over all launches), with the ``host`` transfer calls
    timed around it (to the DPUs before, from them after). ``tasklets``: tasklets per DPU; ``mram_bytes``: the
    MRAM the kernel's data occupies on the busiest DPU."""

    name: str
    launches: Num
    sections: tuple[Section, ...]
    host: tuple[HostCall, ...]
    tasklets: int = 16
    mram_bytes: Num = 0


LINK_KINDS = ("allreduce", "gossip")
LINK_ALGORITHMS = ("ring", "torus", "all-to-all")


@dataclass(frozen=True)
class LinkOp:
    """One exchange over direct DPU links, every DPU taking part in lockstep (``pricing.link_halves_s``).

    ``allreduce``: the DPUs of each group of ``group`` sum a vector of ``vector_bytes`` each, as a reduce-scatter
    (the gather half) and an all-gather (the distribute half) with ``algorithm`` "ring" (2 (G - 1) steps of V/G
    bytes), "all-to-all" (one step per half, a port carrying the G - 1 chunks of V/G) or "torus" (``rows`` x
    G/rows: rows first, then columns: (C - 1) steps of V/C and (R - 1) steps of V/G per half).
    ``gossip``: every DPU sends its ``vector_bytes`` to each of its ``group`` neighbours, one message per step."""

    kind: str
    algorithm: str
    vector_bytes: Num
    group: Num
    rows: Num = 1

    def __post_init__(self) -> None:
        if self.kind not in LINK_KINDS or self.algorithm not in LINK_ALGORITHMS:
            raise ValueError(f"link op must be one of {LINK_KINDS} over {LINK_ALGORITHMS}, got {self!r}")


def blocks(total_bytes: Num, block_bytes: Num) -> tuple[Num, Num]:
    """(transfers, bytes each) to move ``total_bytes`` in DMAs of at most ``block_bytes`` (equal sizes)."""
    n = P.ceil(total_bytes / block_bytes)
    if isinstance(total_bytes, int) and isinstance(block_bytes, int):
        n = -(-total_bytes // block_bytes)
        return n, total_bytes // n if total_bytes % n == 0 else total_bytes / n
    return n, total_bytes / n
