"""``pimmodel baseline measure``: train the numpy reference for real on this machine and compare every case
with the CPU model's prediction from the machine probe.

Cases: MA-SGD, GA-SGD and ADMM x LR and SVM x 1 and 2 processes x three data sizes chosen so that a process's
shard sits in L2, in the last-level cache, or in DRAM. Hyper-parameters are the study's YFCC CPU ones (batch 8
for MA-SGD and ADMM, 64 per process for GA-SGD). Like the study, only the training loop is timed (data
generation and warm-up epochs excluded), and a p-process epoch lasts until its slowest process is done.

The probe (``probe.py``) and the cases run in the same team of processes, and the model sees only the probe's
spec records, never a case's time. A shared machine changes speed as other tenants' jobs come and go (on this
virtual machine by up to 2x within seconds), so every case runs in several passes, and right before each pass
the primitives it depends on are probed again and the model predicts it from those readings. Both sides use
the same statistic (the low quantile of ~1 ms samples, ``worker_tasks.LOW_QUANTILE``) and keep their best
pass: the machine as undisturbed as it was seen, like the study's exclusive node (``srun --exclusive``). Each
case also reports its plain wall-clock epoch (``wall_s``, median over the epochs of its best pass).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from ..specs.workload import MODELS
from .cpu import predict_cpu
from .parallel import Team
from .probe import MachineProber, kind_of, machine_spec
from .reference import OPTIMIZERS, study_config
from .specs import cpu_to_mapping
from .worker_tasks import low_quantile
from .workload import BaselineWorkload, baseline_optimizer

Progress = Callable[[str, int, int], None]
"""progress(message, done, total)"""

FULL_PASSES = 5
QUICK_PASSES = 1


@dataclass(frozen=True, slots=True)
class Size:
    """A data size of the measured cases and how many epochs each pass times."""

    label: str
    rows: int
    features: int
    epochs: int
    warmup_epochs: int


FULL_SIZES = (Size("l2", 4096, 64, 10, 1), Size("llc", 2048, 1024, 5, 1), Size("dram", 32768, 4096, 1, 0))
QUICK_SIZES = (Size("l2", 1024, 64, 6, 1), Size("llc", 1024, 1024, 3, 1))
SEED = 2024


@dataclass(frozen=True, slots=True)
class Case:
    size: Size
    optimizer: str
    model: str
    processes: int

    def workload(self) -> BaselineWorkload:
        config = study_config(self.model, self.optimizer)
        return BaselineWorkload(rows=self.size.rows, features=self.size.features, model=self.model,
                                optimizer=self.optimizer, batch_size=config.batch_size, processes=self.processes,
                                epochs=self.size.epochs, name=f"measure-{self.size.label}")

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.size.label, self.optimizer, self.model, self.processes)


def cases(quick: bool, processes: tuple[int, ...]) -> list[Case]:
    """The measured cases, grouped by size then process count (each group shares one generated data set)."""
    sizes = QUICK_SIZES if quick else FULL_SIZES
    models = ("lr",) if quick else MODELS
    return [Case(size, optimizer, model, p) for size in sizes for p in processes for optimizer in OPTIMIZERS
            for model in models]


def robust_epoch_s(payloads: list[dict[str, Any]]) -> float:
    """A pass's epoch with other tenants' interruptions rejected: steps x the low quantile of the per-step time
    over every chunk of every epoch (the probe's statistic; chunk-wise slowest rank, as lockstep ranks wait for
    it), plus the low quantile of the end-of-epoch exchange as the last rank to arrive sees it (the others'
    time there includes their wait for it)."""
    steps = payloads[0]["steps"]
    chunk_steps = payloads[0]["chunk_steps"]
    per_step: list[float] = []
    for epoch in range(len(payloads[0]["chunk_s"])):
        slowest = [max(chunk) for chunk in zip(*(p["chunk_s"][epoch] for p in payloads), strict=True)]
        per_step += [t / n for t, n in zip(slowest, chunk_steps, strict=True)]
    finish = [min(times) for times in zip(*(p["finish_s"] for p in payloads), strict=True)]
    return steps * low_quantile(per_step) + low_quantile(finish)


def run_case(team: Team, case: Case) -> dict[str, Any]:
    """Train one case for one pass on ``case.processes`` workers."""
    config = study_config(case.model, case.optimizer)
    payloads = team.run("train", case.processes, rows=case.size.rows, features=case.size.features,
                        model=case.model, optimizer=case.optimizer, batch_size=config.batch_size,
                        lr_shift=config.lr_shift, wd_shift=config.wd_shift, alpha_shift=config.alpha_shift,
                        epochs=case.size.epochs, warmup_epochs=case.size.warmup_epochs, seed=SEED)
    walls = [max(times) for times in zip(*(p["epoch_s"] for p in payloads), strict=True)]
    return {"measured_s": robust_epoch_s(payloads), "wall_s": statistics.median(walls),
            "steps": payloads[0]["steps"]}


def refresh_probe(prober: MachineProber, case: Case) -> None:
    """Probe again, right before ``case``, the primitives that dominate it (the machine's speed drifts): its
    step's fixed cost, the exchange for lockstep optimizers, DRAM bandwidth for DRAM cases. The per-core
    rates are re-probed once per pass."""
    p = case.processes
    if case.size.label == "dram":
        prober.dram(p)
    kind = kind_of(case.optimizer, case.model)
    prober.steps(p, (kind,))
    if not baseline_optimizer(case.optimizer).epoch_round:  # ADMM's local steps exchange nothing
        prober.exchange(p, kind)


def predicted_epoch_s(case: Case, readings: dict[str, float], team_size: int, l2_bytes: int) -> float:
    """The model's epoch for ``case`` from probe readings (the model sees nothing else)."""
    spec = machine_spec(case.processes, team_size, readings, l2_bytes, kind_of(case.optimizer, case.model))
    return predict_cpu(case.workload(), spec).epoch_s


def compare(case: Case, passes: list[dict[str, Any]], readings: dict[str, float], team_size: int,
            l2_bytes: int) -> dict[str, Any]:
    """One row of the report. Each pass pairs a prediction (from the probe taken right before the case) with
    the case's time; both sides keep their best pass, so both describe the machine as undisturbed as seen."""
    best = min(passes, key=lambda m: m["measured_s"])
    predicted = min(m["predicted_s"] for m in passes)
    spec = machine_spec(case.processes, team_size, readings, l2_bytes, kind_of(case.optimizer, case.model))
    prediction = predict_cpu(case.workload(), spec)
    rel_error = (predicted - best["measured_s"]) / best["measured_s"]
    phases = {k: v for k, v in prediction.per_epoch_s.items() if k != "total"}
    return {"optimizer": case.optimizer, "model": case.model, "processes": case.processes,
            "rows": case.size.rows, "features": case.size.features, "size": case.size.label,
            "steps_per_epoch": prediction.steps_per_epoch, "measured_s": best["measured_s"],
            "predicted_s": predicted, "rel_error": rel_error, "wall_s": best["wall_s"],
            "passes_measured_s": [m["measured_s"] for m in passes],
            "passes_predicted_s": [m["predicted_s"] for m in passes], "bottleneck": prediction.bottleneck,
            "predicted_phases_s": phases}


def run_measurement(quick: bool = False, progress: Progress | None = None) -> dict[str, Any]:
    """Probe the machine and train every case, in passes; return ``{"machine": ..., "cases": [...],
    "summary": ...}``."""
    cores = os.cpu_count() or 1
    team_size = min(2, cores)
    plan = cases(quick, tuple(sorted({1, team_size})))
    passes = QUICK_PASSES if quick else FULL_PASSES
    report = progress or (lambda _message, _done, _total: None)
    total = passes * len(plan) + 1
    done = 0
    max_features = max(c.size.features for c in plan)
    measured: dict[tuple[str, str, str, int], list[dict[str, Any]]] = {c.key: [] for c in plan}
    with Team(team_size, shared_floats=max(65536, max_features + 1)) as team:
        prober = MachineProber(team, quick=quick, progress=lambda message: report(message, done, total))
        report("probing the machine", done, total)
        prober.probe_all()
        first_readings = dict(prober.readings)
        done += 1
        for index in range(passes):
            for p in sorted({1, team_size}):
                if index > 0:
                    prober.rates(p, random_access=False)
            for case in plan:
                report(f"pass {index + 1}/{passes}: {case.size.label} {case.optimizer} {case.model} "
                       f"x{case.processes}", done, total)
                refresh_probe(prober, case)
                predicted = predicted_epoch_s(case, prober.readings, team_size, prober.l2_bytes)
                measured[case.key].append({**run_case(team, case), "predicted_s": predicted})
                done += 1
        l2_bytes = prober.l2_bytes
        last_readings = dict(prober.readings)
    rows = [compare(case, measured[case.key], last_readings, team_size, l2_bytes) for case in plan]
    for row in rows:
        if not math.isfinite(row["rel_error"]):
            raise SpecError(f"case {row['optimizer']} {row['model']} x{row['processes']} gave a non-finite error")
    machine = {"cores": cores, "team_processes": team_size, "quick": quick, "passes": passes,
               "l2_bytes": l2_bytes, "llc_effective_bytes": first_readings["llc_effective_bytes"],
               "readings": first_readings,
               "specs": {str(p): cpu_to_mapping(machine_spec(p, team_size, first_readings, l2_bytes))
                         for p in sorted({1, team_size})}}
    return {"machine": machine, "cases": rows, "summary": summarize(rows)}


def summarize(rows: list[dict[str, Any]]) -> dict[str, float]:
    errors = [abs(r["rel_error"]) for r in rows]
    return {"cases": float(len(rows)), "max_abs_rel_error": max(errors), "median_abs_rel_error":
            statistics.median(errors), "within_25_percent": float(sum(e <= 0.25 for e in errors))}
