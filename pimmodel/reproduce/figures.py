"""A figure's data, computed from the models: the record behind its PNG, JSON and table.

Time comes from the models: PIM from ``api.predict`` (the figure's view: ``breakdown`` for the study's benchmark
figures, ``wall`` for its time-to-accuracy figures), the CPU and GPU from the baseline models through
``comparison.platforms``. The metric after each epoch comes from ``comparison.accuracy`` (stand-in training),
trained beforehand (``run.train``) and passed in as ``curves``. Every record holds the study's finding beside
what the model says (``findings``), and notes on what the model cannot know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..api import CalibrationLike, HardwareLike, hardware_of, predict, provenance
from ..baselines import BaselinePrediction, CpuSpec, GpuSpec, cpu_workload_of, gpu_workload_of, load_cpu, load_gpu
from ..comparison import Curve, Run, StandIn, TrainingJob, cpu_job, gpu_job, pim_job
from ..comparison.platforms import cpu_epoch, gpu_epoch
from ..errors import PimModelError
from ..kernels.capacity import check
from ..phases import COMM_PHASES, PHASES
from ..specs import HardwareSpec, Workload, optimizer_info
from . import findings
from .spec import FOLDER, FigureSpec, folder


@dataclass(frozen=True)
class Setup:
    """What every figure is computed with: the PIM hardware, the CPU and GPU specs, the stand-in training and
    the calibration of the cost model."""

    hardware: HardwareSpec
    cpu: CpuSpec
    gpu: GpuSpec
    stand_in: StandIn = field(default_factory=StandIn)
    calibration: CalibrationLike = None

    @classmethod
    def default(cls, hardware: HardwareLike = "upmem-2556", stand_in: StandIn | None = None,
                calibration: CalibrationLike = None) -> Setup:
        """The study's setup: PIM ``hardware``, the study's CPU and GPU, ``comparison``'s default stand-in."""
        return cls(hardware_of(hardware), load_cpu(), load_gpu(), stand_in or StandIn(), calibration)


@dataclass(frozen=True)
class CurveTask:
    """One stand-in training: a job and the stand-in it is shrunk by (hashable: tasks shared by figures are
    trained once)."""

    job: TrainingJob
    stand_in: StandIn


def stand_in_for(spec: FigureSpec, dpus: int, base: StandIn) -> StandIn:
    """The stand-in of a point. Scaling figures give the stand-in workers in proportion to the DPUs (``base``'s
    workers at the largest count, at least one), so that the stand-in's training set grows with N in weak scaling
    and stays fixed in strong scaling, as the study's does; every other figure uses ``base``."""
    if spec.kind != "scaling":
        return base
    return replace(base, workers=max(1, base.workers * dpus // max(spec.dpus)))


def _gpu_workload(spec: FigureSpec, model: str) -> Workload:
    """The PIM workload whose rows the GPU run trains (its job depends on the model and the rows only)."""
    return spec.workload(model, spec.optimizers[0], spec.dpus[0])


def curve_tasks(spec: FigureSpec, setup: Setup) -> list[CurveTask]:
    """Every stand-in training the figure needs, without repeats."""
    if not spec.trains:
        return []
    tasks: list[CurveTask] = []
    for model, optimizer, dpus, batch in spec.points():
        w = spec.workload(model, optimizer, dpus, batch)
        s = stand_in_for(spec, dpus, setup.stand_in)
        tasks.append(CurveTask(pim_job(w), s))
        if "cpu" in spec.platforms:
            tasks.append(CurveTask(cpu_job(w, cpu_workload_of(w)), s))
    if "gpu" in spec.platforms:
        for model in spec.models:
            w = _gpu_workload(spec, model)
            tasks.append(CurveTask(gpu_job(w, gpu_workload_of(w)), setup.stand_in))
    return list(dict.fromkeys(tasks))


def check_fits(spec: FigureSpec, setup: Setup) -> None:
    """A one-line error naming the figure if any of its points does not run on the hardware (too few DPUs, the
    data does not fit MRAM/WRAM), before any training."""
    for model, optimizer, dpus, batch in spec.points():
        try:
            check(spec.workload(model, optimizer, dpus, batch), setup.hardware)
        except PimModelError as exc:
            raise type(exc)(f"{spec.id} on {setup.hardware.name}: {exc}") from None


def study_file(spec: FigureSpec) -> str:
    """The figure's file as a reader finds it: ``studies/pim-opt/figNN.toml`` when shipped, else its path."""
    path = Path(spec.path)
    return f"studies/{FOLDER}/{path.name}" if path.parent.resolve() == folder().resolve() else spec.path


# ---------------------------------------------------------------- runs (time per epoch x curve)
def _batch_of(w: Workload) -> int:
    """The batch as the study labels it: per DPU for MA-SGD and ADMM, global for GA-SGD."""
    return w.hp.global_batch_size if w.info.batch == "global" else w.hp.batch_size


def _baseline_model(p: BaselinePrediction) -> dict[str, Any]:
    record = p.to_record()
    return {"spec": p.spec, "bottleneck": p.bottleneck, "validated": p.validated, "validation": p.validation,
            "per_epoch_s": dict(p.per_epoch_s), "structure": record["structure"],
            "assumed_constants": record["assumed_constants"], "interval": record["interval"]}


def _pim_run(w: Workload, setup: Setup, curves: Mapping[CurveTask, Curve], s: StandIn) -> tuple[Run, dict[str, Any]]:
    p = predict(w, setup.hardware, view="wall", calibration=setup.calibration)
    job = pim_job(w)
    rec = p.to_record()
    model = {"spec": setup.hardware.name, "bottleneck": p.bottleneck, "calibration": p.calibration,
             "validation": "cost model (see `pimmodel validate`)", "per_epoch_s": rec["per_epoch_s"]}
    extra = {"batch_size": _batch_of(w), "rounds_per_epoch": p.rounds_per_epoch, "rows_per_dpu": w.rows_per_dpu,
             "per_epoch_bytes": rec["per_epoch_bytes"]}
    return Run("pim", w.optimizer, p.per_epoch_total_s, curves[CurveTask(job, s)], job, model), extra


def _cpu_run(w: Workload, setup: Setup, curves: Mapping[CurveTask, Curve], s: StandIn) -> tuple[Run, dict[str, Any]]:
    bw = cpu_workload_of(w)
    p = cpu_epoch(w, setup.cpu)
    job = cpu_job(w, bw)
    extra = {"batch_size": _batch_of(w), "batch_per_process": bw.batch_size, "processes": bw.processes}
    return Run("cpu", w.optimizer, p.epoch_s, curves[CurveTask(job, s)], job, _baseline_model(p)), extra


def _gpu_run(w: Workload, setup: Setup, curves: Mapping[CurveTask, Curve]) -> tuple[Run, dict[str, Any]]:
    bw = gpu_workload_of(w)
    p = gpu_epoch(w, setup.gpu)
    job = gpu_job(w, bw)
    return (Run("gpu", "sgd", p.epoch_s, curves[CurveTask(job, setup.stand_in)], job, _baseline_model(p)),
            {"batch_size": bw.batch_size})


def _run_row(model: str, run: Run, extra: Mapping[str, Any]) -> dict[str, Any]:
    return {"model": model, **run.to_record(), **extra}


# ---------------------------------------------------------------- one function per kind
def _benchmark_rows(spec: FigureSpec, setup: Setup) -> list[dict[str, Any]]:
    rows = []
    for model, optimizer, dpus, _ in spec.points():
        w = spec.workload(model, optimizer, dpus)
        p = predict(w, setup.hardware, view=spec.view, calibration=setup.calibration)
        s, b = p.per_epoch_s, p.per_epoch_bytes
        host_bytes = b["host_to_pim"] + b["pim_to_host"]
        dma_bytes = b["mram_to_wram"] + b["wram_to_mram"]
        host_s = s["host_to_pim"] + s["pim_to_host"]
        comm_s = sum(s[k] for k in COMM_PHASES)
        rows.append({
            "model": model, "optimizer": optimizer, "dpus": dpus, "batch_size": _batch_of(w),
            "rounds_per_epoch": p.rounds_per_epoch,
            "comm_sync_s": comm_s, "pim_compute_s": s["dpu_compute"], "pim_data_movement_s": s["mram_wram_dma"],
            "epoch_s": p.per_epoch_total_s,
            "host_pim_bytes": host_bytes, "host_pim_s": host_s,
            "host_pim_bytes_per_s": host_bytes / host_s if host_s > 0 else None,
            "mram_wram_bytes": dma_bytes, "mram_wram_s": s["mram_wram_dma"],
            "mram_wram_bytes_per_s": dma_bytes / s["mram_wram_dma"] if s["mram_wram_dma"] > 0 else None,
            "per_epoch_s": {**{k: float(s[k]) for k in PHASES}, "total": p.per_epoch_total_s},
            "per_epoch_bytes": {k: float(v) for k, v in b.items()},
        })
    return rows


def _accuracy_rows(spec: FigureSpec, setup: Setup, curves: Mapping[CurveTask, Curve]) -> list[dict[str, Any]]:
    rows = []
    for model in spec.models:
        for optimizer in spec.optimizers:
            w = spec.workload(model, optimizer, spec.dpus[0])
            rows.append(_run_row(model, *_pim_run(w, setup, curves, setup.stand_in)))
            if "cpu" in spec.platforms:
                rows.append(_run_row(model, *_cpu_run(w, setup, curves, setup.stand_in)))
        if "gpu" in spec.platforms:
            rows.append(_run_row(model, *_gpu_run(_gpu_workload(spec, model), setup, curves)))
    return rows


def _sweep_rows(spec: FigureSpec, setup: Setup, curves: Mapping[CurveTask, Curve]) -> list[dict[str, Any]]:
    rows = []
    for sweep in spec.sweeps:
        for value in sweep.batch_sizes:
            w = spec.workload(sweep.model, sweep.optimizer, spec.dpus[0], value)
            for platform in spec.platforms:
                run, extra = (_pim_run if platform == "pim" else _cpu_run)(w, setup, curves, setup.stand_in)
                rows.append({"panel": sweep.label, **_run_row(sweep.model, run, extra), "batch_size": value})
    return rows


def _scaling_rows(spec: FigureSpec, setup: Setup, curves: Mapping[CurveTask, Curve]) -> list[dict[str, Any]]:
    rows = []
    for model, optimizer, dpus, _ in spec.points():
        w = spec.workload(model, optimizer, dpus)
        s = stand_in_for(spec, dpus, setup.stand_in)
        run, extra = _pim_run(w, setup, curves, s)
        rows.append({**_run_row(model, run, extra), "dpus": dpus, "stand_in_workers": s.workers})
    return rows


# ---------------------------------------------------------------- the record
def _notes(spec: FigureSpec, setup: Setup) -> list[str]:
    hw = setup.hardware.name
    view = ("the breakdown view (the benchmark builds' accounting)" if spec.view == "breakdown" else
            "the wall view (kernel wall time, launches included, as the production runs' clocks)")
    out = [f"times are predictions, not measurements: PIM from pimmodel's cost model on {hw} in {view}; the study "
           "measured them on the real machine, whose run-to-run variation the model cannot know"]
    if "cpu" in spec.platforms:
        out.append(f"CPU: the baseline model of the study's 128-process PyTorch runs ({setup.cpu.name}); it is "
                   "checked against real runs on this machine only (`pimmodel baseline measure`), not on the "
                   "study's CPU")
    if "gpu" in spec.platforms:
        out.append(f"GPU: the baseline model of the study's single-A100 run ({setup.gpu.name}); unvalidated, no GPU "
                   "here")
    if spec.trains:
        data = "synthetic-yfcc" if spec.layout == "dense" else "synthetic-criteo"
        metric = "test accuracy" if spec.metric == "accuracy" else "test AUC"
        s = setup.stand_in
        shrink = (f"{s.workers} workers, 1/{s.divisor(spec.layout)} of each worker's rows (at most "
                  f"{s.dense_max_rows if spec.layout == 'dense' else s.sparse_max_rows:,}), "
                  f"{s.features(spec.layout):,} features")
        default = "" if s == StandIn() else " (a smaller stand-in than `pimmodel compare`'s default)"
        out.append(f"{metric} comes from training synthetic stand-ins ({data}), not the real data set: {shrink}"
                   f"{default}; it orders optimizers and platforms, it does not reproduce the study's absolute "
                   "values")
    if spec.kind == "scaling":
        counts = ", ".join(f"{stand_in_for(spec, n, setup.stand_in).workers} at {n:,}" for n in spec.dpus)
        out.append(f"stand-in workers grow with the DPU count ({counts} DPUs), so the stand-in's training set "
                   f"{'grows with N' if spec.scaling == 'weak' else 'stays fixed'} as in the study's "
                   f"{spec.scaling} scaling")
    return out + list(spec.notes)


def _footer(spec: FigureSpec, setup: Setup) -> str:
    """The PNG's footnote: what the figure cannot show of the study's measurement."""
    parts = [f"Predicted by pimmodel ({setup.hardware.name}, {spec.view} view), not measured: the study's "
             "run-to-run variation is unknown to the model."]
    if spec.trains:
        workers = (f"{setup.stand_in.workers} workers" if spec.kind != "scaling" else
                   f"{stand_in_for(spec, min(spec.dpus), setup.stand_in).workers}-{setup.stand_in.workers} workers, "
                   "growing with the DPU count")
        parts.append(f"{'Accuracy' if spec.metric == 'accuracy' else 'AUC'} from synthetic stand-ins "
                     f"({workers}, reduced rows and features), not the real data set: compare optimizers and "
                     f"platforms, not absolute values. Curves: mean of {setup.stand_in.seeds} seeds, band and "
                     "bars: their range; a difference inside it is noise.")
    if "cpu" in spec.platforms:
        parts.append("CPU: baseline model of the study's 128-process runs.")
    if "gpu" in spec.platforms:
        parts.append("GPU: baseline model, unvalidated (no GPU here).")
    return " ".join(parts)


def _configuration(spec: FigureSpec, setup: Setup) -> dict[str, Any]:
    out: dict[str, Any] = {
        "dataset": spec.dataset, "models": list(spec.models), "optimizers": list(spec.optimizers),
        "dpus": list(spec.dpus), "scaling": spec.scaling, "epochs": spec.epochs, "view": spec.view,
        "batch_size": spec.batch_size, "global_batch_size": spec.global_batch_size,
        "platforms": list(spec.platforms), "hardware": setup.hardware.name,
        "sweeps": [{"model": s.model, "optimizer": s.optimizer, "batch_sizes": list(s.batch_sizes)}
                   for s in spec.sweeps],
        "batch_kinds": {o: optimizer_info(o).batch for o in (*spec.optimizers, *(s.optimizer for s in spec.sweeps))},
        "labels": {o: optimizer_info(o).label for o in (*spec.optimizers, *(s.optimizer for s in spec.sweeps))},
    }
    if "cpu" in spec.platforms:
        out["cpu"] = setup.cpu.name
    if "gpu" in spec.platforms:
        out["gpu"] = setup.gpu.name
    return out


def compute(spec: FigureSpec, setup: Setup, curves: Mapping[CurveTask, Curve] | None = None) -> dict[str, Any]:
    """The record of one figure. ``curves`` must hold every task of ``curve_tasks(spec, setup)`` (figures without
    training need none)."""
    have = curves or {}
    missing = [t for t in curve_tasks(spec, setup) if t not in have]
    if missing:
        raise ValueError(f"{spec.id}: {len(missing)} curves not trained; train curve_tasks(spec, setup) first")
    if spec.kind in ("data-movement", "breakdown"):
        rows = _benchmark_rows(spec, setup)
    elif spec.kind == "time-to-accuracy":
        rows = _accuracy_rows(spec, setup, have)
    elif spec.kind == "batch-sweep":
        rows = _sweep_rows(spec, setup, have)
    else:
        rows = _scaling_rows(spec, setup, have)
    s = setup.stand_in
    record: dict[str, Any] = {
        "figure": {"id": spec.id, "number": spec.number, "title": spec.title, "shows": spec.shows,
                   "kind": spec.kind, "source": spec.source, "study_file": study_file(spec)},
        "configuration": _configuration(spec, setup),
        "metric": spec.metric if spec.trains else None,
        "data": rows,
        "study_finding": spec.finding,
        "finding_basis": spec.finding_basis,
        "model_says": [],
        "notes": _notes(spec, setup),
        "footer": _footer(spec, setup),
        "stand_in": None if not spec.trains else {
            "workers": s.workers, "dense_divisor": s.dense_divisor, "sparse_divisor": s.sparse_divisor,
            "dense_features": s.dense_features, "sparse_features": s.sparse_features,
            "dense_max_rows": s.dense_max_rows, "sparse_max_rows": s.sparse_max_rows, "seed": s.seed},
        "provenance": provenance(setup.hardware, setup.calibration).to_record(),
    }
    record["model_says"] = findings.model_says(record)
    return record
