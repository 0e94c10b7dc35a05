"""The event store of an emulated run: counts per DPU section, host transfers and parameter-server work.

Every DPU count belongs to a section of the kernels' work (``pimmodel.kernels.study.SECTIONS``: the same names
and parallel/serial classification as the cost model's sections) and is kept in the vocabulary of
``pimmodel.kernels.vocabulary`` (operation classes, tail operations, DMAs, barriers), one value per DPU.
Counters with a DPU axis hold per-DPU totals (summed over tasklets for parallel sections); host-side counters
are scalars. Pricing the counts is ``timing.py``'s job, rendering them ``record.py``'s.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..kernels.study import SECTIONS, is_parallel
from ..kernels.vocabulary import Dma, HostCall, LinkOp, Work

TABLES = ("ops", "tail_ops", "dmas", "events")
"""Per-section tables: ``ops`` op class -> count (issued by all tasklets in a parallel section, by one in a
serial one); ``tail_ops`` (op class, active tasklets k) -> the part of ``ops`` that only k < T tasklets run
while the others wait at the next barrier (parallel sections only); ``dmas`` (direction 'read'|'write',
bytes, concurrent tasklets) -> DMAs; ``events`` name -> count (``barriers`` cost compute cycles in their
section; the others are statistics: samples, serial_sections, steps, margin_hits, acc_writes, ...)."""
NO_SECTION = ""
"""The section of events that cost nothing (statistics recorded outside the kernels' sections)."""

Table = dict[Any, NDArray[np.float64]]


def zeros(n: int) -> NDArray[np.float64]:
    return np.zeros(n, dtype=np.float64)


@dataclass
class Trace:
    """Everything that costs time in one run (or one epoch) on ``dpus`` DPUs with ``tasklets`` each."""

    dpus: int
    tasklets: int
    epochs: int = 0
    sections: dict[str, dict[str, Table]] = field(default_factory=dict)
    """section name -> table (``TABLES``) -> key -> count per DPU."""
    launches: int = 0
    rounds: int = 0
    transfers: dict[tuple[str, str, int], int] = field(default_factory=lambda: defaultdict(int))
    """(direction 'to_pim'|'to_host', mode, bytes per DPU) -> calls."""
    host_bytes: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    """host threads -> bytes streamed by the parameter server."""
    host_element_passes: float = 0.0
    """element passes over N x d vectors (one pass = every element read once)."""
    thread_starts: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    """threads per round -> rounds in which that many pthreads were created and joined."""
    link_ops: dict[LinkOp, int] = field(default_factory=lambda: defaultdict(int))
    """exchange over direct DPU links (hypothetical hardware) -> how many the run made."""

    # ------------------------------------------------------------ recording
    def add(self, table: str, key: Any, per_dpu: Any, section: str = NO_SECTION) -> None:
        """Add ``per_dpu`` (a scalar or one value per DPU) to ``table[key]`` of ``section``."""
        tables = self.sections.get(section)
        if tables is None:
            tables = self.sections[section] = self._new_section(section)
        target = tables[table]
        value = target.get(key)
        if value is None:
            self._check_entry(table, section)
            value = target[key] = zeros(self.dpus)
        value += np.asarray(per_dpu, dtype=np.float64)

    @staticmethod
    def _new_section(section: str) -> dict[str, Table]:
        if section != NO_SECTION:
            is_parallel(section)  # raises for an unknown name
        return {t: {} for t in TABLES}

    @staticmethod
    def _check_entry(table: str, section: str) -> None:
        if section == NO_SECTION and table != "events":
            raise ValueError(f"{table} must be recorded in one of the sections {', '.join(SECTIONS)}")
        if table == "tail_ops" and not is_parallel(section):
            raise ValueError(f"tail_ops in the serial section {section!r}")

    def transfer(self, to_pim: bool, bytes_per_dpu: int, mode: str = "parallel", calls: int = 1) -> None:
        self.transfers[("to_pim" if to_pim else "to_host", mode, int(bytes_per_dpu))] += calls

    def link(self, op: LinkOp, count: int = 1) -> None:
        self.link_ops[op] += count

    def host(self, bytes_streamed: float, element_passes: float, threads: int) -> None:
        self.host_bytes[threads] += bytes_streamed
        self.host_element_passes += element_passes

    # ------------------------------------------------------------ the counts in the kernel vocabulary
    def works(self) -> dict[str, tuple[bool, Work]]:
        """Per section (in ``SECTIONS`` order): whether it is parallel, and its total ``Work`` per DPU."""
        out = {}
        for section in sorted((s for s in self.sections if s != NO_SECTION), key=SECTIONS.index):
            tables = self.sections[section]
            dmas = tuple(Dma(direction, size, conc, n) for (direction, size, conc), n in tables["dmas"].items())
            events = tables["events"]
            timed = {d: events[f"timed_barriers_{d}"] for d in ("read", "write") if f"timed_barriers_{d}" in events}
            work = Work(ops=dict(tables["ops"]), tail_ops=dict(tables["tail_ops"]), dmas=dmas,
                        barriers=events.get("barriers", 0), timed_barriers=timed)
            out[section] = (is_parallel(section), work)
        return out

    def host_calls(self) -> list[HostCall]:
        """The transfer calls of the run (``calls`` each)."""
        return [HostCall("", b, d == "to_pim", mode, calls) for (d, mode, b), calls in self.transfers.items()]

    # ------------------------------------------------------------ totals over sections
    def _total(self, table: str, parallel: bool | None = None) -> Table:
        out: Table = {}
        for section, tables in self.sections.items():
            if parallel is not None and (section == NO_SECTION or is_parallel(section) != parallel):
                continue
            for key, value in tables[table].items():
                out[key] = out[key] + value if key in out else value.copy()
        return out

    @property
    def ops(self) -> Table:
        """Parallel sections: op class -> count per DPU (all tasklets together)."""
        return self._total("ops", parallel=True)

    @property
    def serial_ops(self) -> Table:
        """Serial sections (one tasklet alone between barriers): op class -> count per DPU."""
        return self._total("ops", parallel=False)

    @property
    def tail_ops(self) -> Table:
        """(op class, active tasklets k) -> the part of ``ops`` run by k < T tasklets."""
        return self._total("tail_ops")

    @property
    def dmas(self) -> Table:
        """(direction 'read'|'write', bytes, concurrent tasklets) -> DMAs per DPU, all sections."""
        return self._total("dmas")

    @property
    def events(self) -> Table:
        """Event name -> count per DPU, all sections."""
        return self._total("events")

    def dma_totals(self) -> dict[str, dict[str, NDArray[np.float64]]]:
        """Per direction: DMA count and bytes per DPU."""
        res = {d: {"count": zeros(self.dpus), "bytes": zeros(self.dpus)} for d in ("read", "write")}
        for (direction, size, _), n in self.dmas.items():
            res[direction]["count"] += n
            res[direction]["bytes"] += n * size
        return res

    def host_transfer_bytes(self, to_pim: bool) -> float:
        key = "to_pim" if to_pim else "to_host"
        return float(sum(b * calls for (d, _, b), calls in self.transfers.items() if d == key)) * self.dpus


def merge(traces: list[Trace]) -> Trace:
    """The sum of several traces of the same deployment (e.g. the epochs of a run)."""
    out = Trace(traces[0].dpus, traces[0].tasklets)
    for tr in traces:
        out.epochs += tr.epochs
        out.launches += tr.launches
        out.rounds += tr.rounds
        out.host_element_passes += tr.host_element_passes
        for section, tables in tr.sections.items():
            for table, entries in tables.items():
                for key, value in entries.items():
                    out.add(table, key, value, section)
        for key, n in tr.transfers.items():
            out.transfers[key] += n
        for key, b in tr.host_bytes.items():
            out.host_bytes[key] += b
        for key, n in tr.thread_starts.items():
            out.thread_starts[key] += n
        for op, n in tr.link_ops.items():
            out.link_ops[op] += n
    return out


HOST_FIELDS = ("epochs", "launches", "rounds", "host_element_passes", "transfers", "host_bytes", "thread_starts",
               "link_ops")
"""What the host counts (no DPU axis): every group of an SPMD run counts the same."""


def concat(parts: list[Trace]) -> Trace:
    """The trace of a run whose DPUs ran in groups (in DPU order): per-DPU counts side by side, the host's counts
    once (they must be equal in every group)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    for other in parts[1:]:
        for name in HOST_FIELDS:
            if getattr(other, name) != getattr(first, name):
                raise ValueError(f"the DPU groups' host counts differ in {name}: an engine bug")
    sizes = [t.dpus for t in parts]
    out = Trace(sum(sizes), first.tasklets)
    for name in HOST_FIELDS:
        value = getattr(first, name)
        setattr(out, name, type(value)(value) if not isinstance(value, defaultdict) else defaultdict(
            value.default_factory, value))
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    for k, tr in enumerate(parts):
        for section, tables in tr.sections.items():
            target = out.sections.get(section)
            if target is None:
                target = out.sections[section] = out._new_section(section)
            for table, entries in tables.items():
                for key, value in entries.items():
                    full = target[table].get(key)
                    if full is None:
                        full = target[table][key] = zeros(out.dpus)
                    full[bounds[k]:bounds[k + 1]] = value
    return out
