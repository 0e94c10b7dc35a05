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
- ``time_to_target``: epochs to ``target`` x MA-SGD's stand-in metric (``convergence.py``, a stored table of
  emulated training) x the epoch time at ``dpus`` DPUs, weak scaling [s].
Constraints (Optuna convention, <= 0 is feasible): data and buffers fit MRAM and WRAM for every workload,
system power <= ``max_power_w``, cost <= ``max_cost``; with a searched optimizer, ``links`` (the design has the
links the picked optimizer needs); with ``time_to_target``, ``target`` (the pick reaches the target within the
stand-in's epochs). An infeasible point's times are finite penalties (the feasible front never shows them).

A study with a family axis (``space.FAMILY_FIELD``) is scored by one evaluator per family (``parts``): each builds
its points' arrays from its own baseline spec and ``costmodel.evaluate`` prices them with the family's pricing
(``HardwareInputs.family``); memory is the family's own rule (UPMEM: MRAM/WRAM footprint; a family with a pricing
module: its ``memory_excess``), cost is per unit in units of the study's baseline family's unit (``cost.py``), and
speedup is over the study's baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from ..baselines import cpu_workload_of, gpu_workload_of, load_cpu, load_gpu, predict_cpu, predict_gpu
from ..calibration.result import load_calibration
from ..costmodel import HardwareInputs, evaluate
from ..costmodel.evaluate import family_pricing
from ..errors import PimModelError, StudyError
from ..kernels.capacity import footprint
from ..phases import COMM_PHASES, PHASES, in_view, total
from ..specs import DATASETS, REGISTRY, HardwareSpec, Workload, load_hardware
from ..specs.architectures import architecture_of
from .convergence import GRAPHS, Convergence, Variant, load_table
from .cost import CostWeights, load_costs
from .space import (
    FAMILY_FIELD,
    OPTIMIZER_FIELD,
    STRUCTURAL_FIELD,
    SYNC_FIELD,
    WORKLOAD_FIELD,
    Objective,
    Parameter,
    StudySpec,
    WorkloadCase,
)

DEFAULT_TASKLETS = 16
INFEASIBLE_EPOCH_S = 1e6
"""The epoch time a point gets for a workload it cannot run (its optimizer lacks links): a finite penalty, the point
being infeasible (constraint ``links``)."""


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
    """A batch of design points as cost-model inputs (``optimizer`` None: the workloads' own)."""

    values: dict[str, np.ndarray]
    topology: np.ndarray
    tasklets: np.ndarray
    optimizer: np.ndarray | None = None
    sync_every: np.ndarray | None = None

    def picks(self, case: WorkloadCase) -> np.ndarray:
        """Which points score ``case`` (all of them unless the optimizer is searched)."""
        if self.optimizer is None:
            return np.ones(len(self.topology), dtype=bool)
        return np.asarray(self.optimizer == case.optimizer, dtype=bool)


@lru_cache(maxsize=256)
def _calibrated(case: WorkloadCase, dpus: int, scaling: str) -> tuple[Workload, dict[str, float]]:
    """A study workload and its coefficients from the shipped calibration."""
    w = Workload(DATASETS[case.dataset], case.model, case.optimizer, dpus, scaling=scaling, epochs=1)
    return w, load_calibration(None).coefficients_for(w)


class Evaluator:
    """Scores batches of design points for one study."""

    def __init__(self, spec: StudySpec, costs: CostWeights | None = None, convergence: Convergence | None = None
                 ) -> None:
        self.spec = spec
        self.base: HardwareSpec = load_hardware(spec.baseline)
        self.family = architecture_of(self.base).name
        self.currency: Any = None
        """The spec whose family's unit the cost is counted in (None: ``base``'s, 1.0 = ``base``)."""
        self.costs = costs or load_costs()
        self.parameters: tuple[Parameter, ...] = spec.parameters
        self.max_dpus = max(max(o.dpus for o in spec.objectives), 1)
        self._cases: dict[tuple[WorkloadCase, int, str], tuple[Workload, dict[str, float]]] = {}
        self._memo: dict[tuple[WorkloadCase, int, str], dict[str, np.ndarray]] = {}
        self.searched = any(p.field == OPTIMIZER_FIELD for p in spec.parameters)
        wants_table = any(o.kind == "time_to_target" for o in spec.objectives)
        self.convergence: Convergence | None = (convergence or load_table()) if wants_table else None
        for case in spec.workloads:
            for obj in spec.objectives:
                for dpus, scaling in self._needs(obj.kind, obj.dpus, obj.low_dpus):
                    self._case(case, dpus, scaling)
        self._links_bad = np.zeros(0, dtype=bool)
        self._target_bad = np.zeros(0, dtype=bool)
        self._check_runnable(spec)
        picker = next((p.name for p in spec.parameters if p.field == OPTIMIZER_FIELD), None)
        self.baseline_epoch_s = {}
        for k in self._cases:  # the baseline hardware running the case's own optimizer
            self._memo = {}
            base_design = self.design([{picker: k[0].optimizer}] if picker else [{}])
            self._links_bad = np.zeros(1, dtype=bool)
            self.baseline_epoch_s[k] = float(self._epoch_s(k, base_design)[0])
        self._memo = {}
        self.versus_epoch_s = {(obj.kind, case): self._versus_epoch_s(obj, case)
                               for obj in spec.objectives if obj.kind.startswith("speedup_over_")
                               for case in spec.workloads}
        self.parts: dict[str, Evaluator] = {}
        """A family axis: one evaluator per family (its baseline, its parameters), scoring that family's points."""
        for family, baseline in spec.families:
            own = tuple(p for p in spec.parameters
                        if p.field != FAMILY_FIELD and getattr(p, "family", family) == family)
            part = Evaluator(replace(spec, baseline=baseline, parameters=own, families=()), self.costs,
                             self.convergence)
            part.baseline_epoch_s, part.currency = self.baseline_epoch_s, self.base  # speedup and cost: the study's
            self.parts[family] = part

    def _check_runnable(self, spec: StudySpec) -> None:
        """A workload whose optimizer no design of the space can run (it needs links, the baseline has none and
        no parameter searches the topology or the optimizer) is an error, not a study of penalty values: the
        penalty epoch must never stand for the baseline's time or a front design's."""
        if self.searched:
            return
        topologies = {self.base.link_topology}
        for p in spec.parameters:
            if p.field == STRUCTURAL_FIELD:
                topologies |= {str(c) for c in p.choices}
            for _choice, fields in p.sets:
                topologies |= {str(v) for k, v in fields if k == "link_topology"}
        for case in spec.workloads:
            runs_on = REGISTRY[case.optimizer].topologies
            if not topologies & set(runs_on):
                raise StudyError(f"study {spec.name!r}: {case.optimizer} needs direct DPU links "
                                 f"({', '.join(t for t in runs_on if t != 'none')}); the baseline "
                                 f"{self.base.name} has {self.base.link_topology} and no parameter searches the "
                                 "topology, so no design can run it: add a topology parameter, a baseline with "
                                 "links, or drop the optimizer")

    @staticmethod
    def _needs(kind: str, dpus: int, low: int) -> list[tuple[int, str]]:
        if kind == "strong_scaling_efficiency":
            return [(low, "strong"), (dpus, "strong")]
        if kind == "weak_scaling_growth":
            return [(low, "weak"), (dpus, "weak")]
        return [(dpus, "weak")]  # time_to_target included: epochs x the weak-scaling epoch time

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
        optimizer: np.ndarray | None = None
        sync_every: np.ndarray | None = None
        for p in self.parameters:
            if p.field == OPTIMIZER_FIELD:  # a point without a pick (the baseline) takes the first choice
                optimizer = np.asarray([pt.get(p.name, p.choices[0]) for pt in points], dtype=object)
                continue
            if p.field == SYNC_FIELD:
                first = p.choices[0] if p.choices else p.low
                sync_every = np.asarray([pt.get(p.name, first) for pt in points], dtype=float)
                continue
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
        return Design(values, topology, tasklets, optimizer, sync_every)

    # ------------------------------------------------------------ cost model
    def _raw(self, key: tuple[WorkloadCase, int, str], design: Design) -> dict[str, np.ndarray]:
        """Per-epoch phase seconds (study view) plus ``link`` for every design point that scores the case (the
        others: NaN; a point lacking the links the case's optimizer needs: ``INFEASIBLE_EPOCH_S``), memoized per
        batch."""
        if key in self._memo:
            return self._memo[key]
        w, coefficients = self._cases[key]
        picked = design.picks(key[0])
        out = {name: np.where(picked, 0.0, np.nan) for name in (*PHASES, "link")}
        runs_on = REGISTRY[w.optimizer].topologies
        for topo in np.unique(design.topology[picked]):
            idx = np.nonzero(picked & (design.topology == topo))[0]
            if topo not in runs_on:
                out["dpu_compute"][idx] = INFEASIBLE_EPOCH_S
                self._links_bad[idx] = True
                continue
            hw = HardwareInputs({k: v[idx] for k, v in design.values.items()}, str(topo), self.family)
            workload = {"tasklets": design.tasklets[idx]}
            if design.sync_every is not None and "sync_every" in REGISTRY[w.optimizer].takes:
                workload["sync_every"] = design.sync_every[idx]
            raw = evaluate(w, hw, coefficients, workload=workload)
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
        if self.parts:
            return self._by_family(points)
        self._memo = {}
        design = self.design(points)
        n = len(points)
        self._links_bad = np.zeros(n, dtype=bool)
        self._target_bad = np.zeros(n, dtype=bool)
        cost = self.costs.per_unit(design.values, design.topology, self.base, self.currency)
        columns, epoch = [], []
        for obj in self.spec.objectives:
            if obj.kind == "cost":
                columns.append(cost)
                continue
            per_slot: dict[Any, np.ndarray] = {}  # a searched optimizer: each point takes its pick's value
            for case in self.spec.workloads:
                value = self._objective(obj.kind, case, obj.dpus, obj.low_dpus, design, obj.target)
                if obj.kind in ("time_per_epoch", "energy_per_epoch"):
                    value = value * obj.epochs
                slot = case.slot if self.searched else case
                per_slot[slot] = np.where(design.picks(case), value, per_slot.get(slot, np.full(n, np.nan)))
            columns.append(_geomean(list(per_slot.values())))
        first = self.spec.objectives[0]
        for case in self.spec.workloads:
            epoch.append(self._epoch_s((case, first.dpus, "weak"), design)
                         if (case, first.dpus, "weak") in self._cases else np.full(n, np.nan))
        return Scores(np.column_stack(columns), self._constraints(design, cost), np.column_stack(epoch))

    def _by_family(self, points: Sequence[Mapping[str, Any]]) -> Scores:
        """Each point scored by its family's evaluator (a point without a pick: the baseline's family)."""
        axis = self.spec.family_axis
        assert axis is not None  # parts exist only with a family axis
        picks = np.asarray([pt.get(axis.name, self.family) for pt in points], dtype=object)
        n = len(points)
        values = np.full((n, len(self.spec.objectives)), np.nan)
        constraints = np.zeros((n, len(self.constraint_names)))
        epoch = np.full((n, len(self.spec.workloads)), np.nan)
        for family, part in self.parts.items():
            idx = np.nonzero(picks == family)[0]
            if len(idx):
                scores = part.evaluate([points[int(i)] for i in idx])
                values[idx], constraints[idx], epoch[idx] = scores.values, scores.constraints, scores.epoch_s
        return Scores(values, constraints, epoch)

    def _objective(self, kind: str, case: WorkloadCase, dpus: int, low: int, design: Design,
                   target: float = 0.99) -> np.ndarray:
        return SCORES[kind](self, case, dpus, low, design, target)

    def _epochs_to_target(self, key: tuple[WorkloadCase, int, str], design: Design, target: float) -> np.ndarray:
        """Per point: the stand-in's epochs until the case's optimizer (with the point's H, and for decentralized
        SGD the gossip graph of its topology) reaches ``target`` x MA-SGD's metric (``convergence.py``); a pick
        that never does gets twice the stand-in's epochs and violates ``target``."""
        assert self.convergence is not None  # loaded when a time_to_target objective exists
        case, table = key[0], self.convergence
        goal = table.target(case.dataset, case.model, target)
        info, w = REGISTRY[case.optimizer], self._cases[key][0]
        n = len(design.topology)
        sync = (design.sync_every if design.sync_every is not None and "sync_every" in info.takes
                else np.full(n, float(w.sync_every)))
        graph = (np.asarray([GRAPHS.get(str(t), "") for t in design.topology], dtype=object)
                 if info.gossips else np.full(n, "", dtype=object))
        out = np.full(n, np.nan)
        picked = design.picks(case)
        penalty = 2.0 * table.stand_in.epochs
        for h, g in {(float(h), str(g)) for h, g in zip(sync[picked], graph[picked], strict=True)}:
            mask = picked & (sync == h) & (graph == g)
            if info.gossips and not g:
                out[mask] = penalty  # no gossip graph: infeasible already (constraint links)
                continue
            epochs = table.epochs_to(Variant(case.dataset, case.model, case.optimizer, int(h), g), goal)
            out[mask] = epochs if math.isfinite(epochs) else penalty
            self._target_bad[mask] |= not math.isfinite(epochs)
        return out

    def _dpu_power_w(self, design: Design) -> np.ndarray:
        """Power per DPU, scaled with the clock (dynamic power at a fixed voltage)."""
        return design.values["power_per_dpu_w"] * design.values["dpu_clock_hz"] / self.base.dpu_clock_hz

    @property
    def links_constrained(self) -> bool:
        """Whether a design can lack the links a workload needs (a searched optimizer, or one that needs links):
        such a design is infeasible (constraint ``links``), its penalty epoch never a feasible value."""
        return self.searched or any("none" not in REGISTRY[case.optimizer].topologies
                                    for case in self.spec.workloads)

    @property
    def constraint_names(self) -> list[str]:
        c = self.spec.constraints
        return [name for name, on in (("memory", c.fit_memory), ("power", c.max_power_w is not None),
                                      ("cost", c.max_cost is not None), ("links", self.links_constrained),
                                      ("target", self.convergence is not None)) if on]

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
        if self.links_constrained:
            cols.append(np.where(self._links_bad, 1.0, -1.0))
        if self.convergence is not None:
            cols.append(np.where(self._target_bad, 1.0, -1.0))
        return np.column_stack(cols) if cols else np.zeros((len(design.topology), 0))

    def _memory_excess(self, design: Design) -> np.ndarray:
        """max over workloads of (needed / available - 1) for MRAM and WRAM (a family with its own pricing: its
        ``memory_excess``)."""
        worst = np.full(len(design.topology), -1.0)
        pricing = family_pricing(self.base)
        runs = {n for o in self.spec.objectives if o.kind != "cost" for n in (o.dpus, o.low_dpus)}
        for (case, dpus, _), (w, _) in self._cases.items():
            picked = design.picks(case)
            if pricing is not None:
                if dpus in runs:  # the units a scored objective runs on (cost runs none)
                    excess = pricing.memory_excess(w, {k: v[picked] for k, v in design.values.items()})
                    worst[picked] = np.maximum(worst[picked], excess)
                continue
            for t in np.unique(design.tasklets[picked]):
                mask = picked & (design.tasklets == t)
                fp = footprint(w.with_(tasklets=int(t)))
                excess = np.maximum(fp.mram_bytes / design.values["mram_bytes"][mask],
                                    fp.wram_bytes / design.values["wram_bytes"][mask]) - 1.0
                worst[mask] = np.maximum(worst[mask], excess)
        return worst


def _geomean(columns: Sequence[np.ndarray]) -> np.ndarray:
    stacked = np.maximum(np.column_stack(columns), 1e-300)
    return np.exp(np.mean(np.log(stacked), axis=1))


__all__ = ["Design", "Evaluator", "Scores"]


# ---------------------------------------------------------------- the objectives' registry
Score = Callable[["Evaluator", WorkloadCase, int, int, Design, float], np.ndarray]
"""How one objective scores one workload case for a batch of design points: (evaluator, case, dpus, low dpus,
design, target) -> one value per point (before the geometric mean over the workloads)."""


def _cost(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    return np.ones(len(design.topology))  # the cost column is the design's, not a workload's (``evaluate``)


def _strong(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    t_low = ev._epoch_s((case, low, "strong"), design)
    return t_low / ((dpus / low) * ev._epoch_s((case, dpus, "strong"), design))


def _weak(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    return ev._epoch_s((case, dpus, "weak"), design) / ev._epoch_s((case, low, "weak"), design)


def _versus(kind: str) -> Score:
    def score(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
        return ev.versus_epoch_s[(kind, case)] / ev._epoch_s((case, dpus, "weak"), design)
    return score


def _speedup(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    key = (case, dpus, "weak")
    return ev.baseline_epoch_s[key] / ev._epoch_s(key, design)


def _energy(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    raw = ev._raw((case, dpus, "weak"), design)
    host = sum((raw[p] for p in COMM_PHASES), np.zeros(len(design.topology))) - raw["link"]
    return dpus * ev._dpu_power_w(design) * total(raw) + design.values["host_power_w"] * np.maximum(host, 0.0)


def _to_target(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    key = (case, dpus, "weak")
    return ev._epochs_to_target(key, design, target) * ev._epoch_s(key, design)


def _epoch(ev: Evaluator, case: WorkloadCase, dpus: int, low: int, design: Design, target: float) -> np.ndarray:
    return ev._epoch_s((case, dpus, "weak"), design)


SCORES: dict[str, Score] = {
    "time_per_epoch": _epoch, "strong_scaling_efficiency": _strong, "weak_scaling_growth": _weak,
    "speedup": _speedup, "energy_per_epoch": _energy, "cost": _cost,
    "speedup_over_cpu": _versus("speedup_over_cpu"), "speedup_over_gpu": _versus("speedup_over_gpu"),
    "time_to_target": _to_target,
}
"""THE objectives: kind -> its score (the kinds, directions and units a study file may name are
``space.OBJECTIVES``/``OBJECTIVE_UNITS``; ``tests/dse`` checks both name the same kinds). Adding one: a score here,
its direction and unit there."""
