"""``pimmodel compare``: one workload on PIM (any spec), the study's CPU and its GPU, side by side - time per epoch,
the metric per epoch, time to a target - and the break-even point over DPU counts or batch sizes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..api import CalibrationLike, HardwareLike, hardware_of, predict
from ..baselines import BaselinePrediction, CpuSpec, GpuSpec, cpu_workload_of, gpu_workload_of
from ..errors import PimModelError, SpecError, check_choice
from ..specs import HardwareSpec, Workload
from .accuracy import StandIn, TrainingJob, curve, difference, untrained_epochs
from .platforms import cpu_epoch, cpu_job, gpu_epoch, gpu_job, pim_job
from .timeline import Run, default_target

PLATFORMS = ("pim", "cpu", "gpu")
BREAK_EVEN_AXES = ("dpus", "batch")


@dataclass(frozen=True)
class BreakEven:
    """Per-epoch time of PIM against CPU and GPU along one axis (DPU count or batch size), per optimizer."""

    axis: str
    points: tuple[dict[str, Any], ...]
    overtakes: dict[str, dict[str, int | None]]
    """optimizer -> {"cpu": v, "gpu": v}: the smallest swept value from which PIM's epoch is shorter at every
    larger swept value (None: never within the sweep)."""
    skipped: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        return {"axis": self.axis, "points": list(self.points), "pim_overtakes_at": self.overtakes,
                "skipped": list(self.skipped),
                "basis": "time per epoch, the same epochs on every platform (accuracy per epoch is in runs)"}

    def sentences(self) -> list[str]:
        out = []
        for optimizer, per in self.overtakes.items():
            for device, v in per.items():
                swept = [p[self.axis] for p in self.points if p["optimizer"] == optimizer
                         and p.get(f"speedup_over_{device}") is not None]
                if not swept:
                    continue
                what = "DPUs" if self.axis == "dpus" else "batch size"
                if v is None:
                    out.append(f"{optimizer}: PIM's epoch never beats the {device.upper()}'s within {what} "
                               f"{min(swept):,}..{max(swept):,}")
                elif v == min(swept):
                    out.append(f"{optimizer}: PIM's epoch beats the {device.upper()}'s at every swept {what} "
                               f"({min(swept):,}..{max(swept):,})")
                else:
                    out.append(f"{optimizer}: PIM's epoch beats the {device.upper()}'s from {v:,} {what} on")
        return out


@dataclass(frozen=True)
class Comparison:
    workloads: tuple[Workload, ...]
    hardware: str
    runs: tuple[Run, ...]
    target: float
    stand_in: StandIn
    break_even: BreakEven | None
    notes: tuple[str, ...]

    def accuracy_differences(self) -> list[dict[str, Any]]:
        """PIM's final metric against the CPU's and the GPU's run of each optimizer: the difference of the seeds'
        means and "higher"/"lower" only where it exceeds the seeds' spread, else "within noise"."""
        return [{"pim": pim.label, "other": other.label, **difference(pim.curve, other.curve)}
                for pim, other in self._pairs()]

    def _pairs(self) -> list[tuple[Run, Run]]:
        """Each PIM run with the CPU run of its optimizer and the single-device (GPU) run, which every PIM
        optimizer is compared with."""
        from ..baselines.workload import baseline_optimizer

        pims = [r for r in self.runs if r.platform == "pim"]
        return [(pim, other) for pim in pims for other in self.runs if other.platform != "pim"
                and (other.optimizer == pim.optimizer or baseline_optimizer(other.optimizer).one_device)]

    def speedups(self) -> list[dict[str, Any]]:
        """PIM against the CPU (or GPU) run of each optimizer, time to the target first (what a user waits for)
        and per epoch second (with its range where the other run's time rests on a ranged assumption); ``text``
        says which ratio is which."""
        out = []
        for pim, other in self._pairs():
            to_target = time_to_target(pim, other, self.target)
            out.append({"pim": pim.label, "other": other.label, "time_to_target": to_target,
                        "per_epoch": speedup_range(pim.total_s, other),
                        "text": f"{to_target['text']}; per epoch {speedup_text(pim.total_s, other)}"})
        return out

    def to_record(self) -> dict[str, Any]:
        w = self.workloads[0]
        return {
            "workload": {"dataset": w.dataset.name, "model": w.model, "dpus": w.dpus, "scaling": w.scaling,
                         "epochs": w.epochs, "rows": w.train_rows, "optimizers": [x.optimizer for x in self.workloads]},
            "hardware": self.hardware, "metric": self.runs[0].curve.metric if self.runs else None,
            "target": self.target, "runs": [r.to_record(self.target) for r in self.runs],
            "break_even": self.break_even.to_record() if self.break_even else None,
            "accuracy_differences": self.accuracy_differences(), "speedups": self.speedups(),
            "stand_in": {"workers": self.stand_in.workers, "dense_divisor": self.stand_in.dense_divisor,
                         "sparse_divisor": self.stand_in.sparse_divisor,
                         "dense_features": self.stand_in.dense_features,
                         "sparse_features": self.stand_in.sparse_features, "seeds": self.stand_in.seeds,
                         "first_seed": self.stand_in.seed},
            "notes": list(self.notes),
        }


def _time_model(p: BaselinePrediction) -> dict[str, Any]:
    record = p.to_record()
    return {"spec": p.spec, "bottleneck": p.bottleneck, "validated": p.validated, "validation": p.validation,
            "per_epoch_s": dict(p.per_epoch_s), "structure": record["structure"],
            "assumed_constants": record["assumed_constants"], "interval": record["interval"]}


def time_to_target(pim: Run, other: Run, target: float) -> dict[str, Any]:
    """PIM's speed-up over ``other`` in time to ``target`` (None where either run does not reach it in its epochs),
    both times, and the sentence: '1.51x slower to accuracy 0.850 (PIM 80.8 s, CPU 53.4 s)'."""
    pim_s, other_s = pim.time_to(target), other.time_to(target)
    name = f"{pim.curve.metric.replace('auc', 'AUC')} {target:.3f}"
    out: dict[str, Any] = {"target": target, "pim_s": pim_s, "other_s": other_s, "speedup": None}
    if pim_s is None and other_s is None:
        text = f"neither reaches {name} in its epochs"
    elif pim_s is None:
        text = f"PIM does not reach {name} in {pim.epochs} epochs ({other.platform.upper()} at {other_s:,.3g} s)"
    elif other_s is None:
        text = f"only PIM reaches {name} (at {pim_s:,.3g} s; {other.platform.upper()} not in {other.epochs} epochs)"
    else:
        x = other_s / pim_s
        out["speedup"] = x
        head = f"{x:.3g}x faster" if x >= 1 else f"{1 / x:.3g}x slower"
        text = f"{head} to {name} (PIM {pim_s:,.3g} s, {other.platform.upper()} {other_s:,.3g} s)"
    return out | {"text": text}


def speedup_range(pim_s: float, other: Run) -> dict[str, Any]:
    """PIM's speed-up over ``other`` per epoch (total times of the same epochs), and its range over ``other``'s
    assumption interval (the CPU's all-reduce latency) when its time model has one."""
    out: dict[str, Any] = {"speedup": other.total_s / pim_s}
    interval = other.time_model.get("interval")
    if interval:
        low, high = (e * other.epochs / pim_s for e in interval["epoch_s"])
        out |= {"range": [low, high], "decided_by": "the CPU's all-reduce latency",
                "latency_range_us": list(interval["range"])}
    return out


def speedup_text(pim_s: float, other: Run) -> str:
    """'4.2x faster (1.5-13x, decided by the CPU's all-reduce latency)' or '2.5x slower'."""
    r = speedup_range(pim_s, other)
    x = r["speedup"]
    head = f"{x:.3g}x faster" if x >= 1 else f"{1 / x:.3g}x slower"
    if "range" not in r:
        return head
    low, high = r["range"]
    if max(low, high) / min(low, high) < 1.1:
        return f"{head} ({low:.3g}-{high:.3g}x: hardly moved by {r['decided_by']})"
    return f"{head} ({low:.2g}-{high:.2g}x, decided by {r['decided_by']})"


def training_jobs(workloads: Sequence[Workload], cpu: CpuSpec | None, gpu: GpuSpec | None) -> list[TrainingJob]:
    """The stand-in curves ``runs_of`` trains, in its order."""
    jobs = []
    for w in workloads:
        jobs.append(pim_job(w))
        if cpu is not None:
            jobs.append(cpu_job(w, cpu_workload_of(w)))
    if gpu is not None:
        jobs.append(gpu_job(workloads[0], gpu_workload_of(workloads[0])))
    return jobs


def untrained(workloads: Sequence[Workload], cpu: CpuSpec | None, gpu: GpuSpec | None,
              stand_in: StandIn = StandIn()) -> int:
    """Stand-in epochs a comparison of ``workloads`` would train (the seeds not cached yet)."""
    return sum(untrained_epochs(j, stand_in) for j in training_jobs(workloads, cpu, gpu))


def runs_of(workloads: Sequence[Workload], hw: HardwareSpec, cpu: CpuSpec | None, gpu: GpuSpec | None,
            stand_in: StandIn = StandIn(), calibration: CalibrationLike = None,
            progress: Callable[[str], None] | None = None, steps: Any = None) -> list[Run]:
    """Every platform's run of the workloads (one GPU run per model: it runs mini-batch SGD whatever the PIM
    optimizer). ``progress`` is told what is being trained before each curve; ``steps`` (the emulator's
    ``progress(steps, steps_per_epoch)``) is passed to each curve's training."""
    say = progress or (lambda _text: None)
    runs: list[Run] = []
    for w in workloads:
        job = pim_job(w)
        say(f"PIM {w.optimizer}")
        p = predict(w, hw, calibration=calibration)
        runs.append(Run("pim", w.optimizer, p.per_epoch_total_s, curve(job, stand_in, steps), job,
                        {"spec": hw.name, "bottleneck": p.bottleneck, "calibration": p.calibration,
                         "validation": "cost model (see `pimmodel validate`)",
                         "per_epoch_s": p.to_record()["per_epoch_s"]}))
        if cpu is not None:
            bw = cpu_workload_of(w)
            say(f"CPU {w.optimizer}")
            cp = cpu_epoch(w, cpu)
            runs.append(Run("cpu", w.optimizer, cp.epoch_s, curve(cpu_job(w, bw), stand_in, steps), cpu_job(w, bw),
                            _time_model(cp)))
    if gpu is not None:
        w = workloads[0]
        bw = gpu_workload_of(w)
        say("GPU mini-batch SGD")
        gp = gpu_epoch(w, gpu)
        runs.append(Run("gpu", "sgd", gp.epoch_s, curve(gpu_job(w, bw), stand_in, steps), gpu_job(w, bw),
                        _time_model(gp)))
    return runs


def _overtakes(values: list[int], speedups: list[float | None]) -> int | None:
    """The smallest value from which every speedup is >= 1 (values ascending), else None."""
    first: int | None = None
    for v, s in zip(values, speedups, strict=True):
        if s is None:
            continue
        first = (v if first is None else first) if s >= 1.0 else None
    return first


def break_even(axis: str, make: Callable[[str, int], Workload], optimizers: Sequence[str],
               values_of: Callable[[str], Sequence[int]], hw: HardwareSpec, cpu: CpuSpec | None, gpu: GpuSpec | None,
               calibration: CalibrationLike = None) -> BreakEven:
    """PIM's time per epoch against CPU and GPU for ``make(optimizer, value)`` at every value of
    ``values_of(optimizer)``; a value the workload or the hardware refuses is skipped with its reason."""
    check_choice("--break-even", axis, BREAK_EVEN_AXES, SpecError)
    points: list[dict[str, Any]] = []
    skipped: list[str] = []
    overtakes: dict[str, dict[str, int | None]] = {}
    for optimizer in optimizers:
        rows: list[dict[str, Any]] = []
        for v in sorted(set(values_of(optimizer))):
            try:
                w = make(optimizer, v)
                pim_s = predict(w, hw, calibration=calibration).per_epoch_total_s
            except PimModelError as exc:
                skipped.append(f"{optimizer} at {axis} {v:,}: {exc}")
                continue
            point: dict[str, Any] = {"optimizer": optimizer, axis: v, "pim_epoch_s": pim_s,
                                     "rows": w.train_rows}
            others = {"cpu": cpu_epoch(w, cpu).epoch_s if cpu else None,
                      "gpu": gpu_epoch(w, gpu).epoch_s if gpu else None}
            for device, other in others.items():
                if other is not None:
                    point[f"{device}_epoch_s"] = other
                    point[f"speedup_over_{device}"] = other / pim_s
            rows.append(point)
        points += rows
        swept = [r[axis] for r in rows]
        overtakes[optimizer] = {d: _overtakes(swept, [r.get(f"speedup_over_{d}") for r in rows])
                                for d, spec in (("cpu", cpu), ("gpu", gpu)) if spec is not None}
    return BreakEven(axis, tuple(points), overtakes, tuple(skipped))


def compare(workloads: Sequence[Workload], hardware: HardwareLike, cpu: CpuSpec | None, gpu: GpuSpec | None,
            stand_in: StandIn = StandIn(), target: float | None = None, calibration: CalibrationLike = None,
            break_even_of: BreakEven | None = None, progress: Callable[[str], None] | None = None,
            steps: Any = None) -> Comparison:
    """The whole comparison (``break_even_of``: computed by the caller with ``break_even``, or None; ``steps``:
    see ``runs_of``)."""
    if not workloads:
        raise SpecError("compare needs at least one optimizer")
    hw = hardware_of(hardware)
    jobs = [pim_job(w) for w in workloads]
    k = stand_in.divisor(workloads[0].dataset.layout)
    fewest = min(j.rows_per_worker for j in jobs)
    if k > fewest:
        raise SpecError(f"--stand-in-divisor {k:,} would train the stand-ins on less than one row of the "
                        f"{fewest:,} rows per worker; use at most {fewest:,}")
    runs = runs_of(workloads, hw, cpu, gpu, stand_in, calibration, progress, steps)
    if target is not None and not 0.0 < target < 1.0:
        raise SpecError(f"--target {target:g} must be between 0 and 1 (a test accuracy or an AUC), e.g. 0.85")
    chosen = default_target(runs) if target is None else target
    notes = [
        "time = predicted time per epoch x epochs (data loading and evaluation left out, as in the study's "
        "time-to-accuracy figures)",
        f"{runs[0].curve.metric} per epoch from stand-in training (pimmodel.comparison.accuracy): "
        f"{stand_in.workers} workers, 1/{stand_in.divisor(workloads[0].dataset.layout)} of each worker's rows; "
        "it orders optimizers and platforms, it does not reproduce the study's absolute accuracy",
        f"each curve is the mean of {stand_in.seeds} seeds (low/high: their range); a platform's accuracy "
        "differs from another's only where the final ranges do not overlap, else it is within noise",
    ]
    short = [j for j in jobs if j.rows_per_worker // k < j.batch_per_worker]
    if short:
        notes.append(f"1/{k:,} of a worker's rows is less than its local batch of {short[0].batch_per_worker:,} "
                     f"({short[0].optimizer}): that stand-in trains one local batch per worker instead")
    if target is None:
        notes.append(f"target {chosen:.3f}: the highest {runs[0].curve.metric} every run reaches (--target sets "
                     "another)")
    if gpu is not None:
        notes.append("GPU: single-GPU mini-batch SGD, batch 4,096, whatever the PIM optimizer; its time model is "
                     "unvalidated (no GPU here)")
        if workloads[0].dataset.layout == "sparse":
            notes.append("the study ran no GPU baseline on sparse data; the GPU run here is this tool's extension")
    return Comparison(tuple(workloads), hw.name, tuple(runs), chosen, stand_in, break_even_of, tuple(notes))
