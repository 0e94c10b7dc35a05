"""The phase vocabulary and the two views: one home, imported by the cost model, the emulator, reports and
the design-space search.

A prediction or an emulated run splits an epoch into six phases (``PHASES``). Both produce the same *raw*
per-epoch quantities: the six phases with ``mram_wram_dma`` the whole DMA time (compute and DMA summed, as the
study's instrumented builds count them) plus ``mram_wram_dma_exposed``, the DMA time not hidden behind
compute. A *view* picks what is charged (``in_view``):

- ``wall``: kernel wall time as production runs see it: only the exposed DMA is charged to
  ``mram_wram_dma``, launches are included (the study's time-to-accuracy figures);
- ``breakdown``: the study's instrumented accounting (its Figs. 2, 4 and 9): its benchmark builds' compute and DMA
  categories (``INSTRUMENTED_COMPUTE``, ``INSTRUMENTED_DMA``: no overlap, untimed barriers left out), launch
  overhead excluded (``launch`` = 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from .errors import check_known

PHASES: tuple[str, ...] = ("dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host", "host_aggregate", "launch")
"""Per-epoch phases, in the order every table and record shows them."""
COMM_PHASES: tuple[str, ...] = ("host_to_pim", "pim_to_host", "host_aggregate")
"""The study's "communication / synchronization with the parameter server"."""
BYTE_KEYS: tuple[str, ...] = ("host_to_pim", "pim_to_host", "mram_to_wram", "wram_to_mram")
"""Bytes moved per epoch, by path (all DPUs together)."""
EXPOSED_DMA = "mram_wram_dma_exposed"
"""Raw output: DMA time not hidden behind compute (what the wall view charges as ``mram_wram_dma``)."""
INSTRUMENTED_COMPUTE = "dpu_compute_instrumented"
INSTRUMENTED_DMA = "mram_wram_dma_instrumented"
"""Raw outputs: compute and DMA as the study's benchmark builds count them (what the breakdown view charges):
compute without barrier waits, each DMA direction with the barriers timed inside it, each category the max over
(DPU, tasklet), summed over the epoch (``kernels.study.INSTRUMENTED``)."""
VIEWS: tuple[str, ...] = ("wall", "breakdown")
PHASE_LABELS: dict[str, str] = {  # how tables and plots name the phases
    "dpu_compute": "DPU compute", "mram_wram_dma": "MRAM<->WRAM DMA", "host_to_pim": "host -> PIM",
    "pim_to_host": "PIM -> host", "host_aggregate": "host aggregation", "launch": "launch + sync",
}

V = TypeVar("V")


def check_view(view: str) -> str:
    """``view`` if it is one of ``VIEWS``, else a one-line error naming the valid ones."""
    check_known("view", view, VIEWS)
    return view


VIEW_SOURCES: dict[str, dict[str, str | None]] = {
    "wall": {**{p: p for p in PHASES}, "mram_wram_dma": EXPOSED_DMA},
    "breakdown": {**{p: p for p in PHASES}, "dpu_compute": INSTRUMENTED_COMPUTE,
                  "mram_wram_dma": INSTRUMENTED_DMA, "launch": None},
}
"""THE view rule: for each view, the raw output each phase is charged from (None: not charged)."""


def in_view(raw: Mapping[str, V], view: str, zero: Any = 0.0) -> dict[str, V]:
    """The six phases charged in ``view`` from raw per-epoch quantities (``zero``: what an uncharged phase is,
    e.g. an array of zeros for vectorized inputs)."""
    check_view(view)
    return {p: (zero if src is None else raw[src]) for p, src in VIEW_SOURCES[view].items()}


def total(phases: Mapping[str, Any]) -> Any:
    """Sum of the six phases (numbers or arrays)."""
    return sum((phases[p] for p in PHASES[1:]), phases[PHASES[0]])


def bottleneck(phases: Mapping[str, float]) -> str:
    """The phase that takes longest."""
    return max(PHASES, key=lambda p: phases[p])
