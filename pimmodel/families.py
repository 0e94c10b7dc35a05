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


def kernel_interval_s(shape: KM.KmeansShape, kernel_s: float, hw: HardwareSpec) -> dict[str, float] | None:
    """The 95 % interval of the scale issue (``calibration.kernel_interval``) around the run's kernel time: the PrIM
    kernels' leave-one-kernel-out error, widened outside their fitted DPU counts and footprints. Applying the PrIM
    kernels' error to dpu_kmeans' kernel is an assumption (A): it was measured on other kernels. None on any
    machine but the one the residuals were measured on (they say nothing about another)."""
    # lazy import: the residual file is read only for records
    from .calibration.kernel_interval import interval_from, outside_doublings, read_residuals

    res = read_residuals()
    if hw.name != res.hardware:
        return None
    d = outside_doublings(res, shape.dpus, float(shape.points_per_dpu * shape.dims * KM.FEATURE_BYTES))
    low, high = interval_from(res, kernel_s, d)
    return {"low_s": low, "high_s": high, "half_width": (high - low) / 2 / kernel_s, "outside_doublings": d}


def kmeans_record(shape: KM.KmeansShape, hw: HardwareSpec, phases: dict[str, float], iterations: float,
                  n_init: int, source: str) -> dict[str, Any]:
    per = {p: phases[p] for p in PHASES}
    total = sum(per.values())
    run = KM.run_times(phases, iterations)
    run["total"] = n_init * (run["kernel"] + run["inter_core"]) + run["cpu_pim"]
    interval = kernel_interval_s(shape, run["kernel"], hw)
    return {"workload": "kmeans", "family": family_info("kmeans").label, "hardware": hw.name,
            "points": shape.points, "dims": shape.dims, "clusters": shape.clusters, "dpus": shape.dpus,
            "points_per_dpu": shape.points_per_dpu, "task_points": shape.task_points,
            "iterations": iterations, "iterations_from": source, "n_init": n_init,
            "per_iteration_s": {**per, "total": total},
            "shares": {p: (v / total if total else 0.0) for p, v in per.items()},
            "bottleneck": bottleneck(per),
            "once_s": {p: phases[p] for p in KMC.ONCE}, "run_s": run,
            "interval": {"kernel_s": interval, "method": "PrIM kernels' leave-one-kernel-out residuals (A for this "
                         "kernel); only on upmem-2556, the machine they were measured on"}}


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
                   tol: float = 1e-4, seed: int = 0, init: Any = None, progress: Any = None) -> dict[str, Any]:
    """Train on ``data`` in the emulator; its record beside the model's for the same iterations and updates
    (model vs emulator: consistency, not evidence about hardware). ``progress(restarts_done, iterations)`` after
    every Lloyd launch."""
    run = KME.train_kmeans(data, clusters, dpus, hw, init=init, n_init=n_init, max_iter=max_iter, tol=tol, seed=seed,
                           progress=progress)
    _check(run.shape, hw)
    emulated = kmeans_record(run.shape, hw, run.phases, float(run.iterations), n_init, "emulator")
    model = kmeans_record(run.shape, hw, KMC.evaluate(run.shape, hw, run.events["updates_busiest_per_point"],
                                                      run.events["inertia_updates_busiest_per_point"]),
                          float(run.iterations), n_init, "emulator")
    return {"workload": "kmeans", "emulated": emulated, "model": model, "inertia": run.inertia,
            "iterations": run.iterations, "restarts": run.restarts, "empty_cluster_events": run.empty_events,
            "events": run.events, "scale": run.scale}


def scaling_study(path: Any) -> dict[str, Any]:
    """A K-means what-if study (``studies/families/kmeans-scaling.toml``): each hardware change alone, the time per
    Lloyd iteration at each DPU count in strong and weak scaling, the strong-scaling efficiency and the weak-scaling
    time growth from the first count to the last."""
    # lazy imports keep this module's import light
    from pathlib import Path

    from .errors import SpecError
    from .specs import load_hardware
    from .specs._toml import read_toml

    spec = read_toml(Path(path), "K-means study")
    try:
        w, counts = spec["workload"], [int(c) for c in spec["dpus"]]
        w = {k: int(w[k]) for k in ("points", "weak_points_per_dpu", "dims", "clusters", "iterations")}
        base = load_hardware(str(spec.get("hardware", "upmem-2556")))
        changes = [("baseline", {})] + [(c["name"], dict(c["scale"])) for c in spec.get("change", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"{path}: not a K-means study ({exc})") from None
    rows = []
    for name, scale in changes:
        unknown_fields = [f for f in scale if f not in base.numeric()]
        if unknown_fields:
            raise SpecError(f"{path}: change {name!r} scales unknown fields {unknown_fields}")
        hw = base.replace(**{f: getattr(base, f) * float(v) for f, v in scale.items()}) if scale else base
        strong, weak = [], []
        for c in counts:
            strong.append(predict_kmeans(w["points"], w["dims"], w["clusters"], c, hw,
                                         w["iterations"])["run_s"]["per_iteration"])
            weak.append(predict_kmeans(w["weak_points_per_dpu"] * c, w["dims"], w["clusters"], c,
                                       hw, w["iterations"])["run_s"]["per_iteration"])
        rows.append({"change": name, "strong_per_iteration_s": strong, "weak_per_iteration_s": weak,
                     "strong_efficiency": strong[0] / strong[-1] / (counts[-1] / counts[0]),
                     "weak_growth": weak[-1] / weak[0]})
    return {"study": spec.get("name", str(path)), "hardware": base.name, "dpus": counts, "rows": rows}


def study_markdown(result: dict[str, Any]) -> str:
    counts = result["dpus"]
    lines = [f"| change | strong: s per iteration at {counts[0]:,} -> {counts[-1]:,} DPUs | strong efficiency | "
             f"weak: s per iteration at {counts[-1]:,} DPUs | weak growth |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['change']} | {r['strong_per_iteration_s'][0]:.3f} -> {r['strong_per_iteration_s'][-1]:.4f} "
                     f"| {r['strong_efficiency']:.1%} | {r['weak_per_iteration_s'][-1]:.3f} | {r['weak_growth']:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m pimmodel.families studies/families/kmeans-scaling.toml [--json]
    import json
    import sys

    out = scaling_study(sys.argv[1])
    sys.stdout.write(json.dumps(out, indent=2) + "\n" if "--json" in sys.argv else study_markdown(out))
