"""The JSON-ready record of an emulated run's trace: counts per phase (per-DPU max and mean), seconds in both
views, and per section the busiest DPU's compute, DMA and exposed DMA seconds."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..phases import VIEWS
from ..specs import HardwareSpec
from . import timing
from .trace import Trace


def _stat(v: NDArray[np.float64]) -> dict[str, float]:
    return {"max": float(v.max()), "mean": float(v.mean())}


def trace_record(trace: Trace, hw: HardwareSpec) -> dict[str, Any]:
    dma = trace.dma_totals()
    return {
        "dpus": trace.dpus, "tasklets": trace.tasklets, "epochs": trace.epochs, "rounds": trace.rounds,
        "dpu_compute": {
            "instructions_parallel": {k: _stat(v) for k, v in timing.instructions(trace, hw).items()},
            "instructions_serial": {k: _stat(v) for k, v in timing.instructions(trace, hw, serial=True).items()},
            "events": {k: _stat(v) for k, v in trace.events.items()},
        },
        "mram_wram_dma": {
            d: {"count": _stat(v["count"]), "bytes": _stat(v["bytes"])} for d, v in dma.items()
        } | {"by_size": [{"direction": d, "bytes": s, "concurrent": c, "count": _stat(n)}
                         for (d, s, c), n in sorted(trace.dmas.items())]},
        "host_to_pim": _transfers(trace, True),
        "pim_to_host": _transfers(trace, False),
        "host_aggregate": {"bytes_streamed": float(sum(trace.host_bytes.values())),
                           "element_passes": trace.host_element_passes,
                           "thread_starts": {str(k): v for k, v in trace.thread_starts.items()}},
        "launch": {"launches": trace.launches},
        "links": {"exchanges": [{"kind": op.kind, "algorithm": op.algorithm, "vector_bytes": float(op.vector_bytes),
                                 "group": int(op.group), "count": n} for op, n in trace.link_ops.items()],
                  "seconds": float(sum(timing.link_seconds(trace, hw))), "bytes": timing.link_bytes(trace)},
        "seconds": {view: timing.seconds(trace, hw, view) for view in VIEWS},
        "sections": timing.section_seconds(trace, hw),
    }


def _transfers(trace: Trace, to_pim: bool) -> dict[str, Any]:
    key = "to_pim" if to_pim else "to_host"
    calls = [{"mode": m, "bytes_per_dpu": b, "calls": n} for (d, m, b), n in trace.transfers.items() if d == key]
    return {"calls": calls, "bytes": trace.host_transfer_bytes(to_pim)}
