"""Event counts of an emulated run, per DPU section and phase, and their conversion to seconds.

Every DPU count belongs to a section of the kernels' work (``pimmodel.kernelspec.SECTIONS``: the same
names and parallel/serial classification as the cost model's ``Section``s). Counters with a DPU axis hold
per-DPU totals (summed over tasklets for parallel sections); host-side counters are scalars. Seconds come
from ``pimmodel.primitives`` only, in two views:

- ``wall``: what a production build takes. Per DPU and per section, DMA overlaps compute across tasklets
  only inside a parallel section (between two barriers): that section is charged max(0, DMA - compute) of
  its DMA; a serial section (tasklet 0 alone) hides none of its DMA. The exposed DMA summed over sections
  is ``mram_wram_dma`` (the busiest DPU decides); launches count. As in the cost model (which charges
  ``count x max(0, dma - compute)`` with mean per-occurrence cycles), the overlap is taken over a section's
  totals in the trace, which equals the per-occurrence sum whenever every occurrence has the same sign of
  DMA - compute (always for LR, whose per-occurrence counts do not depend on the data).
- ``breakdown``: the study's instrumented builds: compute and DMA summed (each the max over DPUs),
  launch overhead excluded.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import primitives as P
from ..kernelspec import SECTIONS, is_parallel
from ..specs import HardwareSpec

PHASES = ("dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host", "host_aggregate", "launch")
OP_CLASSES = ("mul64", "int64_add", "int64_shift", "int32_add", "int32_shift", "float_convert", "float_mul",
              "float_div", "double_add", "double_div", "bookkeeping")
"""Instruction classes; ``mul64`` counts calls, ``mul64_bytes`` (separately) the significant operand bytes."""
_HW_FIELD = {"int64_add": "int64_add_instructions", "int64_shift": "int64_shift_instructions",
             "int32_add": "int32_add_instructions", "int32_shift": "int32_shift_instructions",
             "float_convert": "float_convert_instructions", "float_mul": "float_mul_instructions",
             "float_div": "float_div_instructions", "double_add": "double_add_instructions",
             "double_div": "double_div_instructions"}


TABLES = ("ops", "tail_ops", "dmas", "events")
"""Per-section tables: ``ops`` op class -> count (issued by all tasklets in a parallel section, by one in a
serial one); ``tail_ops`` (op class, active tasklets k) -> the part of ``ops`` that only k < T tasklets run
while the others wait at the next barrier (parallel sections only); ``dmas`` (direction 'read'|'write',
bytes, concurrent tasklets) -> DMAs; ``events`` name -> count (``barriers`` cost compute cycles in their
section; the others are statistics: samples, serial_sections, steps, margin_hits, acc_writes, ...)."""
NO_SECTION = ""
"""The section of events that cost nothing (statistics recorded outside the kernels' sections)."""


def _vec(n: int) -> NDArray[np.float64]:
    return np.zeros(n, dtype=np.float64)


Table = dict[Any, NDArray[np.float64]]


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
            value = target[key] = _vec(self.dpus)
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

    def host(self, bytes_streamed: float, element_passes: float, threads: int) -> None:
        self.host_bytes[threads] += bytes_streamed
        self.host_element_passes += element_passes

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

    # ------------------------------------------------------------ derived counts
    def instructions(self, hw: HardwareSpec, serial: bool = False, table: dict[Any, NDArray[np.float64]] | None = None
                     ) -> dict[str, NDArray[np.float64]]:
        """Instructions per op class per DPU (the data-dependent 64-bit multiply cost included)."""
        if table is None:
            table = self.serial_ops if serial else self.ops
        out: dict[str, NDArray[np.float64]] = {}
        for name, count in table.items():
            if name == "mul64":  # order-independent: mul64_bytes may come first
                out[name] = out.get(name, _vec(self.dpus)) + P.mul64_instructions(0, hw) * count
            elif name == "mul64_bytes":
                out["mul64"] = out.get("mul64", _vec(self.dpus)) + hw.int64_mul_per_byte_instructions * count
            elif name == "bookkeeping":
                out[name] = count.copy()
            else:
                out[name] = getattr(hw, _HW_FIELD[name]) * count
        return out

    def dma_totals(self) -> dict[str, dict[str, NDArray[np.float64]]]:
        """Per direction: DMA count and bytes per DPU."""
        res = {d: {"count": _vec(self.dpus), "bytes": _vec(self.dpus)} for d in ("read", "write")}
        for (direction, size, _), n in self.dmas.items():
            res[direction]["count"] += n
            res[direction]["bytes"] += n * size
        return res

    def host_transfer_bytes(self, to_pim: bool) -> float:
        key = "to_pim" if to_pim else "to_host"
        return float(sum(b * calls for (d, _, b), calls in self.transfers.items() if d == key)) * self.dpus

    # ------------------------------------------------------------ seconds
    def section_cycles(self, hw: HardwareSpec) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """Per section: (compute cycles, DMA cycles) per DPU."""
        barrier = P.barrier_cycles(self.tasklets, hw)
        out = {}
        for section, tables in self.sections.items():
            if section == NO_SECTION:
                continue
            instructions = sum(self.instructions(hw, table=tables["ops"]).values(), _vec(self.dpus))
            if is_parallel(section):
                tail = _vec(self.dpus)
                for k in sorted({k for _, k in tables["tail_ops"]}):
                    n = sum(self.instructions(hw, table={c: v for (c, kk), v in tables["tail_ops"].items()
                                                         if kk == k}).values(), _vec(self.dpus))
                    instructions = instructions - n
                    tail = tail + P.issue_cycles(n / k, k, hw)
                compute = P.issue_cycles(instructions / self.tasklets, self.tasklets, hw) + tail
            else:
                compute = P.serial_cycles(instructions, hw)
            if "barriers" in tables["events"]:
                compute = compute + tables["events"]["barriers"] * barrier
            dma = _vec(self.dpus)
            for (direction, size, conc), n in tables["dmas"].items():
                dma += n / conc * P.dma_burst_cycles(size, conc, hw, write=direction == "write")
            out[section] = (compute, dma)
        return out

    def dpu_cycles(self, hw: HardwareSpec) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(compute cycles, DMA cycles) per DPU, summed over sections."""
        compute, dma = _vec(self.dpus), _vec(self.dpus)
        for c, d in self.section_cycles(hw).values():
            compute, dma = compute + c, dma + d
        return compute, dma

    @staticmethod
    def exposed_dma_cycles(section: str, compute: NDArray[np.float64], dma: NDArray[np.float64]
                           ) -> NDArray[np.float64]:
        """DMA cycles of ``section`` not hidden behind its compute (wall view), per DPU."""
        return np.maximum(dma - compute, 0.0) if is_parallel(section) else dma

    def seconds(self, hw: HardwareSpec, view: str = "wall") -> dict[str, float]:
        cycles = self.section_cycles(hw)
        compute, dma, exposed = _vec(self.dpus), _vec(self.dpus), _vec(self.dpus)
        for section, (c, d) in cycles.items():
            compute, dma = compute + c, dma + d
            exposed = exposed + self.exposed_dma_cycles(section, c, d)
        if view == "wall":
            c_s = float(P.cycles_to_s(compute.max(), hw))
            dma_s = float(P.cycles_to_s((compute + exposed).max(), hw)) - c_s
            launch = self.launches * float(P.launch_s(hw))
        elif view == "breakdown":
            c_s, dma_s, launch = float(P.cycles_to_s(compute.max(), hw)), float(P.cycles_to_s(dma.max(), hw)), 0.0
        else:
            raise ValueError(f"unknown view {view!r}")
        out = {"dpu_compute": c_s, "mram_wram_dma": dma_s, "launch": launch,
               "host_to_pim": self._transfer_s(hw, True), "pim_to_host": self._transfer_s(hw, False),
               "host_aggregate": self._aggregate_s(hw)}
        out = {k: out[k] for k in PHASES}
        out["total"] = sum(out.values())
        return out

    def section_seconds(self, hw: HardwareSpec) -> dict[str, dict[str, Any]]:
        """Per section (in ``kernelspec.SECTIONS`` order): parallel or not, and compute, DMA and exposed DMA
        seconds (max and mean over DPUs). The wall view's ``mram_wram_dma`` is the busiest DPU's kernel time
        (compute + exposed DMA summed over sections) minus the busiest DPU's compute."""
        def stat(cycles: NDArray[np.float64]) -> dict[str, float]:
            s = np.asarray(P.cycles_to_s(cycles, hw), dtype=np.float64)
            return {"max": float(s.max()), "mean": float(s.mean())}

        cycles = self.section_cycles(hw)
        out = {}
        for section in sorted(cycles, key=SECTIONS.index):
            c, d = cycles[section]
            out[section] = {"parallel": is_parallel(section), "dpu_compute_s": stat(c), "mram_wram_dma_s": stat(d),
                            "mram_wram_dma_exposed_s": stat(self.exposed_dma_cycles(section, c, d))}
        return out

    def _transfer_s(self, hw: HardwareSpec, to_pim: bool) -> float:
        key = "to_pim" if to_pim else "to_host"
        return float(sum(calls * P.host_transfer_s(b, self.dpus, hw, to_pim, mode)
                         for (d, mode, b), calls in self.transfers.items() if d == key))

    def _aggregate_s(self, hw: HardwareSpec) -> float:
        stream = sum(float(P.host_reduce_s(b, t, hw)) for t, b in self.host_bytes.items())
        return stream + sum(n * float(P.thread_start_s(t, hw)) for t, n in self.thread_starts.items())

    # ------------------------------------------------------------ reporting
    def to_record(self, hw: HardwareSpec) -> dict[str, Any]:
        """Plain JSON-ready record: per-phase counts (per DPU max and mean), seconds in both views, and per
        section the busiest DPU's compute, DMA and exposed DMA seconds."""
        def stat(v: NDArray[np.float64]) -> dict[str, float]:
            return {"max": float(v.max()), "mean": float(v.mean())}

        dma = self.dma_totals()
        ops = self.ops
        return {
            "dpus": self.dpus, "tasklets": self.tasklets, "epochs": self.epochs, "rounds": self.rounds,
            "dpu_compute": {
                "instructions_parallel": {k: stat(v) for k, v in self.instructions(hw).items()},
                "instructions_serial": {k: stat(v) for k, v in self.instructions(hw, serial=True).items()},
                "mul64_significant_bytes": stat(ops.get("mul64_bytes", _vec(self.dpus))),
                "events": {k: stat(v) for k, v in self.events.items()},
            },
            "mram_wram_dma": {
                d: {"count": stat(v["count"]), "bytes": stat(v["bytes"])} for d, v in dma.items()
            } | {"by_size": [{"direction": d, "bytes": s, "concurrent": c, "count": stat(n)}
                             for (d, s, c), n in sorted(self.dmas.items())]},
            "host_to_pim": self._transfer_record(True),
            "pim_to_host": self._transfer_record(False),
            "host_aggregate": {"bytes_streamed": float(sum(self.host_bytes.values())),
                               "element_passes": self.host_element_passes,
                               "thread_starts": {str(k): v for k, v in self.thread_starts.items()}},
            "launch": {"launches": self.launches},
            "seconds": {"wall": self.seconds(hw, "wall"), "breakdown": self.seconds(hw, "breakdown")},
            "sections": self.section_seconds(hw),
        }

    def _transfer_record(self, to_pim: bool) -> dict[str, Any]:
        key = "to_pim" if to_pim else "to_host"
        calls = [{"mode": m, "bytes_per_dpu": b, "calls": n} for (d, m, b), n in self.transfers.items() if d == key]
        return {"calls": calls, "bytes": self.host_transfer_bytes(to_pim)}


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
    return out
