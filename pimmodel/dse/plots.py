"""Study plots (matplotlib, Agg): Pareto front, optimization history, parameter importances, as PNGs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from optuna.trial import FrozenTrial, TrialState

from .space import StudySpec
from .study import is_feasible


def write_plots(spec: StudySpec, record: Mapping[str, Any], trials: Sequence[FrozenTrial], out_dir: Path) -> list[Path]:
    """Write pareto_front.png, history.png and importances.png into ``out_dir``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.values]
    feasible = np.array([is_feasible(t) for t in done], dtype=bool)
    values = np.array([t.values for t in done], dtype=float).reshape(len(done), len(spec.objectives))
    paths = [_front(plt, spec, record, values, feasible, out_dir / "pareto_front.png"),
             _history(plt, spec, done, values, feasible, out_dir / "history.png"),
             _importances(plt, record, out_dir / "importances.png")]
    return paths


def _label(spec: StudySpec, k: int) -> str:
    o = spec.objectives[k]
    units = {"time_per_epoch": " [s]", "energy_per_epoch": " [J]", "cost": " [x baseline DPU]"}
    return f"{o.name}{units.get(o.kind, '')} ({o.direction})"


def _front(plt: Any, spec: StudySpec, record: Mapping[str, Any], values: np.ndarray, feasible: np.ndarray,
           path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 5))
    x, y = (0, 1) if values.shape[1] > 1 else (0, 0)
    ax.scatter(values[~feasible, x], values[~feasible, y] if y != x else np.arange((~feasible).sum()), s=6,
               c="0.8", label="infeasible")
    ax.scatter(values[feasible, x], values[feasible, y] if y != x else np.arange(feasible.sum()), s=8, c="C0",
               alpha=0.5, label="feasible")
    names = [o.name for o in spec.objectives]
    front = np.array([[d["objectives"][names[x]], d["objectives"][names[y]]] for d in record["front"]])
    if len(front) and y != x:
        ax.scatter(front[:, 0], front[:, 1], s=24, c="C3", label="Pareto front")
        b = record["baseline"]["objectives"]
        ax.scatter([b[names[x]]], [b[names[y]]], marker="*", s=200, c="k", label=record["baseline"]["hardware"])
    ax.set_xlabel(_label(spec, x))
    ax.set_ylabel(_label(spec, y) if y != x else "trial")
    if spec.objectives[x].kind in ("time_per_epoch", "energy_per_epoch"):
        ax.set_xscale("log")
    ax.set_title(f"{spec.name}: {len(values)} designs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _history(plt: Any, spec: StudySpec, done: Sequence[FrozenTrial], values: np.ndarray, feasible: np.ndarray,
             path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4))
    numbers = np.array([t.number for t in done])
    sign = 1.0 if spec.directions[0] == "minimize" else -1.0
    v = np.where(feasible, values[:, 0] * sign, np.inf)
    best = np.minimum.accumulate(v) * sign
    ax.scatter(numbers[feasible], values[feasible, 0], s=4, c="C0", alpha=0.3, label="feasible design")
    ax.plot(numbers, best, c="C3", label="best so far")
    ax.set_xlabel("trial")
    ax.set_ylabel(_label(spec, 0))
    if spec.objectives[0].kind in ("time_per_epoch", "energy_per_epoch"):
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title(f"{spec.name}: optimization history")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _importances(plt: Any, record: Mapping[str, Any], path: Path) -> Path:
    imps: Mapping[str, Mapping[str, float]] = record["importances"]
    fig, axes = plt.subplots(1, max(len(imps), 1), figsize=(5 * max(len(imps), 1), 5), squeeze=False)
    for ax, (objective, imp) in zip(axes[0], imps.items(), strict=False):
        items = sorted(imp.items(), key=lambda kv: kv[1])
        ax.barh([k for k, _ in items], [v for _, v in items], color="C0")
        ax.set_title(f"importance for {objective}", fontsize=9)
        ax.tick_params(labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
