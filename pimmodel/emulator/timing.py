"""Seconds of an emulated run: its trace priced with ``pimmodel.kernels.pricing``, the same path that prices
the cost model's sections and the PrIM kernels.

Raw per-epoch quantities (``pimmodel.phases``), as the cost model's: ``dpu_compute`` and ``mram_wram_dma`` are
the busiest DPU's compute and DMA (summed over sections, nothing overlapped); ``mram_wram_dma_exposed`` is the
busiest DPU's kernel time (compute plus, per section, the DMA not hidden behind its compute) minus the busiest
DPU's compute. A parallel section's overlap is taken over the section's totals, which equals the model's
per-occurrence sum whenever every occurrence has the same sign of DMA - compute (always for LR, whose
per-occurrence counts do not depend on the data). A view (``phases.in_view``) picks what is charged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import primitives as P
from ..kernels import pricing
from ..kernels.study import INSTRUMENTED
from ..phases import EXPOSED_DMA, INSTRUMENTED_COMPUTE, INSTRUMENTED_DMA, in_view, total
from ..specs import HardwareSpec
from .trace import Trace, zeros


def section_cycles(trace: Trace, hw: HardwareSpec) -> dict[str, tuple[bool, NDArray[np.float64], NDArray[np.float64]]]:
    """Per section: (parallel, compute cycles per DPU, DMA cycles per DPU)."""
    out = {}
    for name, (parallel, work) in trace.works().items():
        compute = pricing.compute_cycles(work, parallel, trace.tasklets, hw) + zeros(trace.dpus)
        dma = pricing.dma_cycles(work, hw) + zeros(trace.dpus)
        out[name] = (parallel, compute, dma)
    return out


def raw_seconds(trace: Trace, hw: HardwareSpec) -> dict[str, float]:
    """The run's raw phases (see the module docstring), summed over its epochs."""
    compute, dma, exposed = zeros(trace.dpus), zeros(trace.dpus), zeros(trace.dpus)
    for parallel, c, d in section_cycles(trace, hw).values():
        compute, dma = compute + c, dma + d
        exposed = exposed + pricing.exposed_dma_cycles(parallel, c, d, hw)
    c_s = float(P.cycles_to_s(compute.max(), hw))
    calls = trace.host_calls()
    ic, ir, iw = instrumented_cycles(trace, hw)
    gather, distribute = link_seconds(trace, hw)
    return {
        "dpu_compute": c_s,
        "mram_wram_dma": float(P.cycles_to_s(dma.max(), hw)),
        EXPOSED_DMA: float(P.cycles_to_s((compute + exposed).max(), hw)) - c_s,
        INSTRUMENTED_COMPUTE: float(P.cycles_to_s(ic.max(), hw)),
        INSTRUMENTED_DMA: float(P.cycles_to_s(ir.max(), hw) + P.cycles_to_s(iw.max(), hw)),
        "host_to_pim": float(pricing.host_calls_s(calls, trace.dpus, hw, to_pim=True)) + distribute,
        "pim_to_host": float(pricing.host_calls_s(calls, trace.dpus, hw, to_pim=False)) + gather,
        "host_aggregate": aggregate_s(trace, hw),
        "launch": trace.launches * float(P.launch_s(hw, trace.dpus)),
    }


def link_seconds(trace: Trace, hw: HardwareSpec) -> tuple[float, float]:
    """(gather, distribute) seconds of the run's exchanges over direct DPU links (``pricing.link_halves_s``):
    charged to ``pim_to_host`` and ``host_to_pim``, as the cost model charges them."""
    gather = distribute = 0.0
    for op, n in trace.link_ops.items():
        g, d = pricing.link_halves_s(op, hw)
        gather += n * float(g)
        distribute += n * float(d)
    return gather, distribute


def link_bytes(trace: Trace) -> float:
    """Bytes all DPUs together sent over direct links."""
    return trace.dpus * sum(n * float(pricing.link_bytes_per_dpu(op)) for op, n in trace.link_ops.items())


def instrumented_cycles(trace: Trace, hw: HardwareSpec
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per DPU: (compute, MRAM->WRAM, WRAM->MRAM) cycles as the study's benchmark builds count them."""
    out = [zeros(trace.dpus), zeros(trace.dpus), zeros(trace.dpus)]
    for name, (parallel, work) in trace.works().items():
        for k, v in enumerate(pricing.instrumented_cycles(work, parallel, INSTRUMENTED[name], trace.tasklets, hw)):
            out[k] = out[k] + v
    return out[0], out[1], out[2]


def aggregate_s(trace: Trace, hw: HardwareSpec) -> float:
    stream = sum(float(P.host_reduce_s(b, t, hw)) for t, b in trace.host_bytes.items())
    return stream + sum(n * float(P.thread_start_s(t, hw)) for t, n in trace.thread_starts.items())


def seconds(trace: Trace, hw: HardwareSpec, view: str = "wall") -> dict[str, float]:
    """The phases charged in ``view``, and their ``total``, summed over the run's epochs."""
    out = in_view(raw_seconds(trace, hw), view)
    out["total"] = total(out)
    return out


def section_seconds(trace: Trace, hw: HardwareSpec) -> dict[str, dict[str, Any]]:
    """Per section: parallel or not, and compute, DMA and exposed DMA seconds (max and mean over DPUs)."""
    def stat(cycles: NDArray[np.float64]) -> dict[str, float]:
        s = np.asarray(P.cycles_to_s(cycles, hw), dtype=np.float64)
        return {"max": float(s.max()), "mean": float(s.mean())}

    return {name: {"parallel": parallel, "dpu_compute_s": stat(c), "mram_wram_dma_s": stat(d),
                   "mram_wram_dma_exposed_s": stat(pricing.exposed_dma_cycles(parallel, c, d, hw))}
            for name, (parallel, c, d) in section_cycles(trace, hw).items()}


def instructions(trace: Trace, hw: HardwareSpec, serial: bool = False) -> dict[str, NDArray[np.float64]]:
    """Instructions per operation class per DPU, parallel or serial sections."""
    table = trace.serial_ops if serial else trace.ops
    return {k: v + zeros(trace.dpus) for k, v in pricing.instructions_by_class(table, hw).items()}
