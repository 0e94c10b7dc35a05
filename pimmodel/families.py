"""The training families' entry points (``specs.families``): a K-means prediction, a scaling sweep and an emulation
beside its prediction, as plain records the CLI renders.

Records keep the phase vocabulary of ``pimmodel.phases`` per Lloyd iteration (``per_iteration_s``), the one-off
phases (``once_s``: the load of the points, the inertia launch and its calls) and the timers of the real runs
(``run_s``: kernel, cpu_pim, pim_cpu, inter_core, per_iteration, and ``total`` = n_init restarts + the load).
"""

from __future__ import annotations

from typing import Any

from .costmodel import kmeans as KMC
from .emulator import kmeans as KME
from .kernels import kmeans as KM
from .phases import PHASES, bottleneck
from .specs import HardwareSpec
from .specs.families import family_info

SAMPLE_POINTS = 16_384
"""Points of the synthetic sample the emulator trains to find the iteration count when none is given."""


def _check(shape: KM.KmeansShape, hw: HardwareSpec) -> None:
    # lazy import keeps this module's import light
    from .errors import CapacityError

    why = KM.fits(shape)
    if why:
        raise CapacityError(f"the dpu_kmeans kernel cannot run this problem: {why}")
    if shape.dpus > hw.dpus_available:
        raise CapacityError(f"{shape.dpus:,} DPUs asked for; {hw.name} has {hw.dpus_available:,}")


def emulated_iterations(points: int, dims: int, clusters: int, hw: HardwareSpec, seed: int = 0) -> tuple[int, float]:
    """(iterations, running-minimum updates per point) of the emulator on a synthetic blobs sample."""
    n = min(points, SAMPLE_POINTS)
    run = KME.train_kmeans(KME.blobs(n, dims, clusters, seed), clusters, 1, hw, n_init=1, seed=seed)
    return run.iterations, run.events["updates_busiest_per_point"]


def kmeans_record(shape: KM.KmeansShape, hw: HardwareSpec, phases: dict[str, float], iterations: float,
                  n_init: int, source: str) -> dict[str, Any]:
    per = {p: phases[p] for p in PHASES}
    total = sum(per.values())
    run = KM.run_times(phases, iterations)
    run["total"] = n_init * (run["kernel"] + run["inter_core"]) + run["cpu_pim"]
    return {"workload": "kmeans", "family": family_info("kmeans").label, "hardware": hw.name,
            "points": shape.points, "dims": shape.dims, "clusters": shape.clusters, "dpus": shape.dpus,
            "points_per_dpu": shape.points_per_dpu, "task_points": shape.task_points,
            "iterations": iterations, "iterations_from": source, "n_init": n_init,
            "per_iteration_s": {**per, "total": total},
            "shares": {p: (v / total if total else 0.0) for p, v in per.items()},
            "bottleneck": bottleneck(per),
            "once_s": {p: phases[p] for p in KMC.ONCE}, "run_s": run}


def predict_kmeans(points: int, dims: int, clusters: int, dpus: int, hw: HardwareSpec,
                   iterations: int | None = None, n_init: int = 1, seed: int = 0) -> dict[str, Any]:
    """The model's K-means record; ``iterations`` None: the emulator's count on a synthetic sample."""
    shape = KM.KmeansShape(points, dims, clusters, dpus)
    _check(shape, hw)
    if iterations is None:
        iterations, updates = emulated_iterations(points, dims, clusters, hw, seed)
        source = f"emulator on {min(points, SAMPLE_POINTS):,} synthetic blob points"
    else:
        updates, source = None, "given"
    return kmeans_record(shape, hw, KMC.evaluate(shape, hw, updates), float(iterations), n_init, source)


def emulate_kmeans(data: Any, clusters: int, dpus: int, hw: HardwareSpec, n_init: int = 1, max_iter: int = 300,
                   tol: float = 1e-4, seed: int = 0, init: Any = None) -> dict[str, Any]:
    """Train on ``data`` in the emulator; its record beside the model's for the same iterations and updates
    (model vs emulator: consistency, not evidence about hardware)."""
    run = KME.train_kmeans(data, clusters, dpus, hw, init=init, n_init=n_init, max_iter=max_iter, tol=tol, seed=seed)
    _check(run.shape, hw)
    emulated = kmeans_record(run.shape, hw, run.phases, float(run.iterations), n_init, "emulator")
    model = kmeans_record(run.shape, hw, KMC.evaluate(run.shape, hw, run.events["updates_busiest_per_point"],
                                                      run.events["inertia_updates_busiest_per_point"]),
                          float(run.iterations), n_init, "emulator")
    return {"workload": "kmeans", "emulated": emulated, "model": model, "inertia": run.inertia,
            "iterations": run.iterations, "restarts": run.restarts, "empty_cluster_events": run.empty_events,
            "events": run.events, "scale": run.scale}
