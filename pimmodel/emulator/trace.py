"""Event counts of an emulated run, per phase, and their conversion to seconds.

Counters with a DPU axis hold per-DPU totals (summed over tasklets for parallel sections); host-side
counters are scalars. Seconds come from ``pimmodel.primitives`` only, in two views:

- ``wall``: what a production build takes. Per DPU, DMA overlaps compute across tasklets, so only the DMA
  time not hidden behind compute is charged to ``mram_wram_dma`` (the busiest DPU decides); launches count.
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


def _vec(n: int) -> NDArray[np.float64]:
    return np.zeros(n, dtype=np.float64)


@dataclass
class Trace:
    """Everything that costs time in one run (or one epoch) on ``dpus`` DPUs with ``tasklets`` each."""

    dpus: int
    tasklets: int
    epochs: int = 0
    ops: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    """parallel sections: op class -> count per DPU (all tasklets together)."""
    tail_ops: dict[tuple[str, int], NDArray[np.float64]] = field(default_factory=dict)
    """(op class, active tasklets k) -> the part of ``ops`` that only k < T tasklets run while the others
    wait at the next barrier (e.g. the extra slot of the sparse kernels' busier tasklets)."""
    serial_ops: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    """tasklet 0 alone between barriers: op class -> count per DPU."""
    dmas: dict[tuple[str, int, int], NDArray[np.float64]] = field(default_factory=dict)
    """(direction 'read'|'write', bytes, concurrent tasklets) -> DMAs per DPU."""
    events: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    """barriers, serial_sections, margin_hits, acc_writes, acc_skipped, saturated, samples."""
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
    def add(self, table: str, key: Any, per_dpu: Any) -> None:
        target: dict[Any, NDArray[np.float64]] = getattr(self, table)
        if key not in target:
            target[key] = _vec(self.dpus)
        target[key] += np.asarray(per_dpu, dtype=np.float64)

    def transfer(self, to_pim: bool, bytes_per_dpu: int, mode: str = "parallel", calls: int = 1) -> None:
        self.transfers[("to_pim" if to_pim else "to_host", mode, int(bytes_per_dpu))] += calls

    def host(self, bytes_streamed: float, element_passes: float, threads: int) -> None:
        self.host_bytes[threads] += bytes_streamed
        self.host_element_passes += element_passes

    # ------------------------------------------------------------ derived counts
    def instructions(self, hw: HardwareSpec, serial: bool = False, table: dict[Any, NDArray[np.float64]] | None = None
                     ) -> dict[str, NDArray[np.float64]]:
        """Instructions per op class per DPU (the data-dependent 64-bit multiply cost included)."""
        if table is None:
            table = self.serial_ops if serial else self.ops
        out: dict[str, NDArray[np.float64]] = {}
        for name, count in table.items():
            if name == "mul64":
                out[name] = P.mul64_instructions(0, hw) * count
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
    def dpu_cycles(self, hw: HardwareSpec) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(compute cycles, DMA cycles) per DPU."""
        par = sum(self.instructions(hw).values(), _vec(self.dpus))
        ser = sum(self.instructions(hw, serial=True).values(), _vec(self.dpus))
        tail = _vec(self.dpus)
        for k in sorted({k for _, k in self.tail_ops}):
            n = sum(self.instructions(hw, table={c: v for (c, kk), v in self.tail_ops.items() if kk == k}).values(),
                    _vec(self.dpus))
            par = par - n
            tail = tail + P.issue_cycles(n / k, k, hw)
        compute = (P.issue_cycles(par / self.tasklets, self.tasklets, hw) + tail + P.serial_cycles(ser, hw)
                   + self.events.get("barriers", _vec(self.dpus)) * P.barrier_cycles(self.tasklets, hw))
        dma = _vec(self.dpus)
        for (direction, size, conc), n in self.dmas.items():
            dma += n / conc * P.dma_burst_cycles(size, conc, hw, write=direction == "write")
        return compute, dma

    def seconds(self, hw: HardwareSpec, view: str = "wall") -> dict[str, float]:
        compute, dma = self.dpu_cycles(hw)
        if view == "wall":
            kernel = compute + np.maximum(dma - compute, 0.0)
            c_s = float(P.cycles_to_s(compute.max(), hw))
            dma_s = float(P.cycles_to_s(kernel.max(), hw)) - c_s
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

    def _transfer_s(self, hw: HardwareSpec, to_pim: bool) -> float:
        key = "to_pim" if to_pim else "to_host"
        return float(sum(calls * P.host_transfer_s(b, self.dpus, hw, to_pim, mode)
                         for (d, mode, b), calls in self.transfers.items() if d == key))

    def _aggregate_s(self, hw: HardwareSpec) -> float:
        stream = sum(float(P.host_reduce_s(b, t, hw)) for t, b in self.host_bytes.items())
        return stream + sum(n * float(P.thread_start_s(t, hw)) for t, n in self.thread_starts.items())

    # ------------------------------------------------------------ reporting
    def to_record(self, hw: HardwareSpec) -> dict[str, Any]:
        """Plain JSON-ready record: per-phase counts (per DPU max and mean) and seconds in both views."""
        def stat(v: NDArray[np.float64]) -> dict[str, float]:
            return {"max": float(v.max()), "mean": float(v.mean())}

        dma = self.dma_totals()
        return {
            "dpus": self.dpus, "tasklets": self.tasklets, "epochs": self.epochs, "rounds": self.rounds,
            "dpu_compute": {
                "instructions_parallel": {k: stat(v) for k, v in self.instructions(hw).items()},
                "instructions_serial": {k: stat(v) for k, v in self.instructions(hw, serial=True).items()},
                "mul64_significant_bytes": stat(self.ops.get("mul64_bytes", _vec(self.dpus))),
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
        for table in ("ops", "tail_ops", "serial_ops", "dmas", "events"):
            for key, value in getattr(tr, table).items():
                out.add(table, key, value)
        for key, n in tr.transfers.items():
            out.transfers[key] += n
        for key, b in tr.host_bytes.items():
            out.host_bytes[key] += b
        for key, n in tr.thread_starts.items():
            out.thread_starts[key] += n
    return out
