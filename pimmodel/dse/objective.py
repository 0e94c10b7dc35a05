"""Objectives and constraints of a study, evaluated for a whole batch of design points in one pass.

A design point is a dict parameter name -> suggested value (in the study's units). ``Evaluator`` turns a
batch of them into hardware arrays (SI, one entry per design point) and calls each workload's compiled
cost model once per link topology present in the batch: no expression is rebuilt per trial.

Objectives (each workload scored, then combined over the workloads by geometric mean):
- ``time_per_epoch``: epoch time (``epochs`` x it) at ``dpus`` DPUs, weak scaling [s].
- ``strong_scaling_efficiency``: T(low) / ((dpus / low) x T(dpus)) with the dataset split over the DPUs.
- ``weak_scaling_growth``: T(dpus) / T(low) with a fixed shard per DPU (1 = perfect weak scaling).
- ``speedup``: baseline T(dpus) / design T(dpus), the baseline being the study's ``baseline`` spec.
- ``energy_per_epoch``: dpus x power per DPU x (clock / baseline clock) x T + host power x host time [J],
  host time = host transfers + host aggregation (link time excluded: the host idles during it).
- ``cost``: hardware cost proxy per DPU (``cost.py``; 1.0 = baseline DPU).
- ``speedup_over_cpu`` / ``speedup_over_gpu``: the study's CPU (128 processes) or GPU (single-GPU SGD) epoch on the
  same rows (``baselines.cpu_workload_of`` / ``gpu_workload_of``) / the design's epoch at ``dpus`` (weak): > 1 is a
  PIM design that beats it per epoch. The CPU or GPU is the objective's ``versus`` spec (default: the study's).
  Over the same workloads the two differ by a constant factor (a geometric mean of ratios), so a study takes one.
Constraints (Optuna convention, <= 0 is feasible): data and buffers fit MRAM and WRAM for every workload,
system power <= ``max_power_w``, cost <= ``max_cost``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..baselines import cpu_workload_of, gpu_workload_of, load_cpu, load_gpu, predict_cpu, predict_gpu
from ..calibration.result import load_calibration
from ..costmodel import HardwareInputs, evaluate
from ..errors import PimModelError, StudyError
from ..kernels.capacity import footprint
from ..phases import COMM_PHASES, PHASES, in_view, total
from ..specs import DATASETS, HardwareSpec, Workload, load_hardware
from .cost import CostWeights, load_costs
from .space import STRUCTURAL_FIELD, WORKLOAD_FIELD, Objective, Parameter, StudySpec, WorkloadCase

DEFAULT_TASKLETS = 16


@dataclass(frozen=True, slots=True)
class Scores:
    """Objective values (n, k), constraint values (n, c) and the per-workload epoch time at the objective's
    DPU count (n, w) of a batch of design points."""

    values: np.ndarray
    constraints: np.ndarray
    epoch_s: np.ndarray

    def feasible(self) -> np.ndarray:
        return np.all(self.constraints <= 0, axis=1) if self.constraints.size else np.ones(len(self.values), bool)


@dataclass(frozen=True, slots=True)
class Design:
    """A batch of design points as cost-model inputs."""

    values: dict[str, np.ndarray]
    topology: np.ndarray
    tasklets: np.ndarray


@lru_cache(maxsize=256)
def _calibrated(case: WorkloadCase, dpus: int, scaling: str) -> tuple[Workload, dict[str, float]]:
    """A study workload and its coefficients from the shipped calibration."""
    w = Workload(DATASETS[case.dataset], case.model, case.optimizer, dpus, scaling=scaling, epochs=1)
    return w, load_calibration(None).coefficients_for(w)


class Evaluator:
    """Scores batches of design points for one study."""

    def __init__(self, spec: StudySpec, costs: CostWeights | None = None) -> None:
        self.spec = spec
        self.base: HardwareSpec = load_hardware(spec.baseline)
        self.costs = costs or load_costs()
        self.parameters: tuple[Parameter, ...] = spec.parameters
        self.max_dpus = max(max(o.dpus for o in spec.objectives), 1)
        self._cases: dict[tuple[WorkloadCase, int, str], tuple[Workload, dict[str, float]]] = {}
        self._memo: dict[tuple[WorkloadCase, int, str], dict[str, np.ndarray]] = {}
        for case in spec.workloads:
            for obj in spec.objectives:
                for dpus, scaling in self._needs(obj.kind, obj.dpus, obj.low_dpus):
                    self._case(case, dpus, scaling)
        base_design = self.design([{}])
        self._memo = {}
        self.baseline_epoch_s = {k: float(self._epoch_s(k, base_design)[0]) for k in self._cases}
        self.versus_epoch_s = {(obj.kind, case): self._versus_epoch_s(obj, case)
                               for obj in spec.objectives if obj.kind.startswith("speedup_over_")
                               for case in spec.workloads}

    @staticmethod
    def _needs(kind: str, dpus: int, low: int) -> list[tuple[int, str]]:
        if kind == "strong_scaling_efficiency":
            return [(low, "strong"), (dpus, "strong")]
        if kind == "weak_scaling_growth":
            return [(low, "weak"), (dpus, "weak")]
        return [(dpus, "weak")]

    def _case(self, case: WorkloadCase, dpus: int, scaling: str) -> tuple[Workload, dict[str, float]]:
        key = (case, dpus, scaling)
        if key not in self._cases:
            try:
                self._cases[key] = _calibrated(case, dpus, scaling)
            except PimModelError as exc:
                raise StudyError(f"{self.spec.path}: workload {case.label} at {dpus} DPUs ({scaling}): {exc}") from None
        return self._cases[key]

    def _versus_epoch_s(self, obj: Objective, case: WorkloadCase) -> float:
        """The CPU's or GPU's epoch on the rows of ``case`` at the objective's DPU count (computed once)."""
        w, _ = self._case(case, obj.dpus, "weak")
        try:
            if obj.kind == "speedup_over_cpu":
                spec = load_cpu(obj.versus) if obj.versus else load_cpu()
                return predict_cpu(cpu_workload_of(w), spec).epoch_s
            gpu = load_gpu(obj.versus) if obj.versus else load_gpu()
            return predict_gpu(gpu_workload_of(w), gpu).epoch_s
        except PimModelError as exc:
            raise StudyError(f"{self.spec.path}: objective {obj.kind}: {exc}") from None

    # ------------------------------------------------------------ design points -> arrays
    def design(self, points: Sequence[Mapping[str, Any]]) -> Design:
        n = len(points)
        values = {k: np.full(n, v) for k, v in self.base.numeric().items()}
        topology = np.full(n, self.base.link_topology, dtype=object)
        tasklets = np.full(n, float(DEFAULT_TASKLETS))
        for p in self.parameters:
            if not points or p.name not in points[0]:
                continue
            column = [pt[p.name] for pt in points]
            if p.sets:
                chosen = np.asarray(column, dtype=object)
                for choice, fields in p.sets:
                    mask = chosen == choice
                    for name, value in fields:
                        values[name] = np.where(mask, value, values[name])
            elif p.field == STRUCTURAL_FIELD:
                topology = np.asarray(column, dtype=object)
            elif p.field == WORKLOAD_FIELD:
                tasklets = np.asarray(column, dtype=float)
                values["max_tasklets"] = tasklets.copy()
            else:
                values[p.field] = np.asarray(column, dtype=float) * p.scale
        if self.spec.highest("dpus_available") is not None:
            # a searched system size below the objectives' DPU count is raised to it (the objectives run there);
            # without the search, loading the study checked that the baseline has the DPUs
            values["dpus_available"] = np.maximum(values["dpus_available"], self.max_dpus)
        return Design(values, topology, tasklets)

    # ------------------------------------------------------------ cost model
    def _raw(self, key: tuple[WorkloadCase, int, str], design: Design) -> dict[str, np.ndarray]:
        """Per-epoch phase seconds (study view) plus ``link`` for every design point (memoized per batch)."""
        if key in self._memo:
            return self._memo[key]
        w, coefficients = self._cases[key]
        n = len(design.topology)
        out = {name: np.zeros(n) for name in (*PHASES, "link")}
        for topo in np.unique(design.topology):
            idx = np.nonzero(design.topology == topo)[0]
            hw = HardwareInputs({k: v[idx] for k, v in design.values.items()}, str(topo))
            raw = evaluate(w, hw, coefficients, workload={"tasklets": design.tasklets[idx]})
            phases = in_view(raw, self.spec.view, zero=np.zeros(len(idx)))
            for name in PHASES:
                out[name][idx] = phases[name]
            out["link"][idx] = raw["link"]
        self._memo[key] = out
        return out

    def _epoch_s(self, key: tuple[WorkloadCase, int, str], design: Design) -> np.ndarray:
        return np.asarray(total(self._raw(key, design)))

    # ------------------------------------------------------------ objectives and constraints
    def evaluate(self, points: Sequence[Mapping[str, Any]]) -> Scores:
        self._memo = {}
        design = self.design(points)
        cost = self.costs.per_dpu(design.values, design.topology, self.base)
        columns, epoch = [], []
        for obj in self.spec.objectives:
            per_workload = []
            for case in self.spec.workloads:
                per_workload.append(self._objective(obj.kind, case, obj.dpus, obj.low_dpus, design) * obj.epochs
                                    if obj.kind in ("time_per_epoch", "energy_per_epoch")
                                    else self._objective(obj.kind, case, obj.dpus, obj.low_dpus, design))
            columns.append(cost if obj.kind == "cost" else _geomean(per_workload))
        first = self.spec.objectives[0]
        for case in self.spec.workloads:
            epoch.append(self._epoch_s((case, first.dpus, "weak"), design)
                         if (case, first.dpus, "weak") in self._cases else np.full(len(points), np.nan))
        return Scores(np.column_stack(columns), self._constraints(design, cost), np.column_stack(epoch))

    def _objective(self, kind: str, case: WorkloadCase, dpus: int, low: int, design: Design) -> np.ndarray:
        n = len(design.topology)
        if kind == "cost":
            return np.ones(n)
        if kind == "strong_scaling_efficiency":
            t_low = self._epoch_s((case, low, "strong"), design)
            return t_low / ((dpus / low) * self._epoch_s((case, dpus, "strong"), design))
        if kind == "weak_scaling_growth":
            return self._epoch_s((case, dpus, "weak"), design) / self._epoch_s((case, low, "weak"), design)
        key = (case, dpus, "weak")
        if kind in ("speedup_over_cpu", "speedup_over_gpu"):
            return self.versus_epoch_s[(kind, case)] / self._epoch_s(key, design)
        if kind == "speedup":
            return self.baseline_epoch_s[key] / self._epoch_s(key, design)
        if kind == "energy_per_epoch":
            raw = self._raw(key, design)
            host = sum((raw[p] for p in COMM_PHASES), np.zeros(n)) - raw["link"]
            return (dpus * self._dpu_power_w(design) * total(raw)
                    + design.values["host_power_w"] * np.maximum(host, 0.0))
        return self._epoch_s(key, design)

    def _dpu_power_w(self, design: Design) -> np.ndarray:
        """Power per DPU, scaled with the clock (dynamic power at a fixed voltage)."""
        return design.values["power_per_dpu_w"] * design.values["dpu_clock_hz"] / self.base.dpu_clock_hz

    @property
    def constraint_names(self) -> list[str]:
        c = self.spec.constraints
        return [name for name, on in (("memory", c.fit_memory), ("power", c.max_power_w is not None),
                                      ("cost", c.max_cost is not None)) if on]

    def _constraints(self, design: Design, cost: np.ndarray) -> np.ndarray:
        c = self.spec.constraints
        cols = []
        if c.fit_memory:
            cols.append(self._memory_excess(design))
        if c.max_power_w is not None:
            power = self.max_dpus * self._dpu_power_w(design) + design.values["host_power_w"]
            cols.append(power / c.max_power_w - 1.0)
        if c.max_cost is not None:
            cols.append(cost / c.max_cost - 1.0)
        return np.column_stack(cols) if cols else np.zeros((len(design.topology), 0))

    def _memory_excess(self, design: Design) -> np.ndarray:
        """max over workloads of (needed / available - 1) for MRAM and WRAM."""
        worst = np.full(len(design.topology), -1.0)
        for w, _ in self._cases.values():
            for t in np.unique(design.tasklets):
                mask = design.tasklets == t
                fp = footprint(w.with_(tasklets=int(t)))
                excess = np.maximum(fp.mram_bytes / design.values["mram_bytes"][mask],
                                    fp.wram_bytes / design.values["wram_bytes"][mask]) - 1.0
                worst[mask] = np.maximum(worst[mask], excess)
        return worst


def _geomean(columns: Sequence[np.ndarray]) -> np.ndarray:
    stacked = np.maximum(np.column_stack(columns), 1e-300)
    return np.exp(np.mean(np.log(stacked), axis=1))


__all__ = ["Design", "Evaluator", "Scores"]
