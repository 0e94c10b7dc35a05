"""K-means (``upmem/dpu_kmeans``) as sympy equations, one per phase of a Lloyd iteration, plus the one-off phases.

The expressions price the kernel description of ``pimmodel.kernels.kmeans`` with the shared pricing
(``kernels.pricing``) over sympy symbols: the hardware's (``HardwareSymbols``) and the problem's (``KMEANS_SYMBOLS``:
points on the busiest DPU, its tasks, the task size, dims, clusters, DPUs, the running-minimum updates per point).
So a new transfer or launch primitive flows in without touching this module.

Per iteration (the six phases of ``pimmodel.phases``): ``dpu_compute`` and ``mram_wram_dma`` (the exposed DMA) of
the Lloyd launch, ``launch``, ``host_to_pim`` (the centroid broadcast), ``pim_to_host`` (counts and sums) and
``host_aggregate`` (the host's C loop over the DPUs' partials). Once per run: ``load`` (CPU->PIM of the points),
``inertia_kernel`` (the extra launch computing the inertia), ``inertia_before`` and ``inertia_after`` (its
broadcasts and pull).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import sympy

from .. import primitives as P
from ..kernels import kmeans as KM
from ..kernels import pricing as PR
from ..kernels.vocabulary import Section
from .symbols import HardwareSymbols

KMEANS_SYMBOLS: tuple[str, ...] = ("points", "tasks", "task_bytes", "task_points", "dims", "clusters", "dpus",
                                   "updates", "inertia_updates")
ITERATION_PHASES: tuple[str, ...] = ("dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host", "host_aggregate",
                                     "launch")
ONCE: tuple[str, ...] = ("load", "inertia_kernel", "inertia_before", "inertia_after")


def _symbols() -> dict[str, sympy.Symbol]:
    return {n: sympy.Symbol(n, positive=True) for n in KMEANS_SYMBOLS}


def _compute_dma(sections: tuple[Section, ...], hw: Any) -> tuple[Any, Any]:
    """(compute, exposed DMA) cycles of a launch's sections."""
    compute = dma = sympy.Integer(0)
    for s in sections:
        c = PR.compute_cycles(s.work, s.parallel, KM.TASKLETS, hw, s.tasklets)
        compute += s.count * c
        dma += s.count * PR.exposed_dma_cycles(s.parallel, c, PR.dma_cycles(s.work, hw), hw)
    return compute, dma


def _calls(s: Mapping[str, Any], which: str) -> tuple[Any, ...]:
    k, d, n = s["clusters"], s["dims"], s["points"]
    counts = 8 * P.ceil(4 * k / 8)
    if which == "iteration":
        return (KM.HostCall("centroids", k * d * KM.FEATURE_BYTES, True, mode="broadcast", memory="wram"),
                KM.HostCall("counts", counts, False), KM.HostCall("sums", 8 * k * d, False))
    if which == "inertia_before":  # K/iter:215-220
        return (KM.HostCall("centroids", k * d * KM.FEATURE_BYTES, True, mode="broadcast", memory="wram"),
                KM.HostCall("compute_inertia", 4, True, mode="broadcast", memory="wram"))
    if which == "inertia_after":  # K/iter:229-250, the PIM->CPU timer
        return (KM.HostCall("inertia", 8, False, memory="wram"),
                KM.HostCall("compute_inertia_off", 4, True, mode="broadcast", memory="wram"))
    return (KM.HostCall("t_features", n * d * KM.FEATURE_BYTES, True), KM.HostCall("npoints", 4, True, memory="wram"))


def equation_iteration_kernel(s: Mapping[str, Any], hw: Any) -> dict[str, Any]:
    """dpu_compute, mram_wram_dma, launch of one Lloyd launch (seconds)."""
    sections = KM.lloyd_sections(s["points"], s["tasks"], s["task_bytes"], s["task_points"], s["dims"],
                                 s["clusters"], s["updates"], reduce=True)
    compute, dma = _compute_dma(sections, hw)
    return {"dpu_compute": P.cycles_to_s(compute, hw), "mram_wram_dma": P.cycles_to_s(dma, hw),
            "launch": P.launch_s(hw, s["dpus"])}


def equation_iteration_transfers(s: Mapping[str, Any], hw: Any) -> dict[str, Any]:
    """host_to_pim, pim_to_host of one iteration (seconds)."""
    calls = _calls(s, "iteration")
    return {"host_to_pim": PR.host_calls_s(calls, s["dpus"], hw, True),
            "pim_to_host": PR.host_calls_s(calls, s["dpus"], hw, False)}


def equation_iteration_aggregate(s: Mapping[str, Any], hw: Any) -> dict[str, Any]:
    """host_aggregate: one host thread adds the DPUs' counts and int64 sums (K/iter:167-178)."""
    k, d = s["clusters"], s["dims"]
    streamed = s["dpus"] * (8 * P.ceil(4 * k / 8) + 8 * k * d)
    return {"host_aggregate": PR.host_reduce_s(streamed, 1, 0, hw)}


def equation_once(s: Mapping[str, Any], hw: Any) -> dict[str, Any]:
    """load (CPU->PIM of the points), inertia_kernel (launch + kernel), inertia_before / inertia_after (its host
    calls before and after the launch), seconds."""
    sections = KM.lloyd_sections(s["points"], s["tasks"], s["task_bytes"], s["task_points"], s["dims"],
                                 s["clusters"], s["inertia_updates"], reduce=False)
    compute, dma = _compute_dma(sections, hw)
    before, after = _calls(s, "inertia_before"), _calls(s, "inertia_after")
    return {"load": PR.host_calls_s(_calls(s, "load"), s["dpus"], hw, True),
            "inertia_kernel": P.launch_s(hw, s["dpus"]) + P.cycles_to_s(compute + dma, hw),
            "inertia_before": PR.host_calls_s(before, s["dpus"], hw, True),
            "inertia_after": PR.host_calls_s(after, s["dpus"], hw, True) + PR.host_calls_s(after, s["dpus"], hw, False)}


EQUATIONS: tuple[Callable[[Mapping[str, Any], Any], dict[str, Any]], ...] = (
    equation_iteration_kernel, equation_iteration_transfers, equation_iteration_aggregate, equation_once)
"""One equation function per phase group; together they give ``ITERATION_PHASES`` and ``ONCE``."""


@cache
def equations() -> dict[str, sympy.Expr]:
    """Every phase's sympy expression over the problem's and the hardware's symbols."""
    s, hw = _symbols(), HardwareSymbols()
    out: dict[str, sympy.Expr] = {}
    for eq in EQUATIONS:
        out.update(eq(s, hw))
    return out


@cache
def _compiled() -> tuple[tuple[str, ...], tuple[str, ...], Callable[..., Any]]:
    exprs = equations()
    names = tuple(ITERATION_PHASES + ONCE)
    hw = HardwareSymbols().all()
    args = tuple(KMEANS_SYMBOLS) + tuple(hw)
    symbols = [sympy.Symbol(n, positive=True) for n in KMEANS_SYMBOLS] + list(hw.values())
    modules = [{"Max": lambda *a: _npmax(*a), "Min": lambda *a: _npmin(*a), "ceiling": _ceil}, "numpy"]
    fn = sympy.lambdify(symbols, [exprs[n] for n in names], modules=modules)
    return names, args, fn


def _npmax(*a: Any) -> Any:
    import numpy as np

    return np.maximum.reduce(np.broadcast_arrays(*a)) if len(a) > 1 else a[0]


def _npmin(*a: Any) -> Any:
    import numpy as np

    return np.minimum.reduce(np.broadcast_arrays(*a)) if len(a) > 1 else a[0]


def _ceil(x: Any) -> Any:
    import numpy as np

    return np.ceil(x)


def problem_values(shape: KM.KmeansShape, updates: float | None = None,
                   inertia_updates: float | None = None) -> dict[str, float]:
    """The problem symbols' values for ``shape`` (the busiest DPU: ``points_per_dpu`` points);
    ``updates``: running-minimum improvements per point in a Lloyd launch (default ``harmonic(clusters)``, tag A),
    ``inertia_updates`` in the inertia launch (default: ``updates``)."""
    n = shape.points_per_dpu
    u = KM.harmonic(shape.clusters) if updates is None else float(updates)
    return {"points": float(n), "tasks": float(KM.ceil_div(n, shape.task_points)),
            "task_bytes": float(shape.task_bytes), "task_points": float(shape.task_points),
            "dims": float(shape.dims), "clusters": float(shape.clusters), "dpus": float(shape.dpus),
            "updates": u, "inertia_updates": u if inertia_updates is None else float(inertia_updates)}


def evaluate(shape: KM.KmeansShape, hw: Any, updates: float | None = None,
             inertia_updates: float | None = None) -> dict[str, float]:
    """Seconds of every phase (``ITERATION_PHASES`` per iteration, ``ONCE`` per run) for ``shape`` on ``hw``."""
    names, args, fn = _compiled()
    values = {**problem_values(shape, updates, inertia_updates), **hw.numeric()}
    out = fn(*[values[a] for a in args])
    return {n: float(v) for n, v in zip(names, out, strict=True)}


run_times = KM.run_times
