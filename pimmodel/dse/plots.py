"""Study plots: Pareto front, optimization history, parameter importances, as PNGs.

The Pareto plot shows every objective: one panel per pair of objectives (three objectives: three panels),
infeasible designs as grey crosses, feasible ones as blue dots, the front in red and the baseline as a
black star. A single-objective study gets the distribution of its objective instead. Every axis is titled
with its unit.

The figures are detached ``matplotlib.figure.Figure`` objects (``report.plots.new_figure``), never pyplot: the
caller's backend (a notebook's inline one) and pyplot's figure registry are left alone, and ``figures`` returns
them for a notebook to show. Legends sit outside the axes in a constrained layout, so they never cover or clip
data.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.trial import FrozenTrial, TrialState

from ..report.plots import new_figure, save
from .result import objective_label
from .space import StudySpec
from .study import constraints_of, is_feasible

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOG_KINDS = ("time_per_epoch", "energy_per_epoch")
"""Objectives spanning orders of magnitude: log axes."""
PANEL_IN = 4.2
"""Width and height of one panel [inch]."""


FILES = ("pareto_front.png", "history.png", "importances.png")
DPI = 110


def figures(spec: StudySpec, record: Mapping[str, Any], trials: Sequence[FrozenTrial]) -> dict[str, Figure]:
    """The Pareto front, the optimization history and the importances as figures, by file name."""
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.values]
    names = list(record.get("constraints", []))
    if "links" in names:  # a design without the links its optimizer needs has a penalty, not a time: not drawn
        i = names.index("links")
        done = [t for t in done if not (len(constraints_of(t)) > i and constraints_of(t)[i] > 0)]
    feasible = np.array([is_feasible(t) for t in done], dtype=bool)
    values = np.array([t.values for t in done], dtype=float).reshape(len(done), len(spec.objectives))
    made = (_front(spec, record, values, feasible), _history(spec, done, values, feasible), _importances(record))
    return dict(zip(FILES, made, strict=True))


def write_plots(spec: StudySpec, record: Mapping[str, Any], trials: Sequence[FrozenTrial], out_dir: Path) -> list[Path]:
    """Write pareto_front.png, history.png and importances.png into ``out_dir`` (each whole or not at all);
    return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [save(fig, out_dir / name, dpi=DPI) for name, fig in figures(spec, record, trials).items()]


def _label(spec: StudySpec, k: int) -> str:
    o = spec.objectives[k]
    return objective_label(o.name, o.kind, o.direction)


def _front(spec: StudySpec, record: Mapping[str, Any], values: np.ndarray, feasible: np.ndarray) -> Figure:
    k = len(spec.objectives)
    if k == 1:
        return _single(spec, record, values, feasible)
    pairs = list(itertools.combinations(range(k), 2))
    cols = min(len(pairs), 3)
    rows = -(-len(pairs) // cols)
    fig = new_figure(max(PANEL_IN * cols, 5.6), PANEL_IN * rows + 1.0, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    names = [o.name for o in spec.objectives]
    front = np.array([[d["objectives"][n] for n in names] for d in record["front"]]).reshape(-1, k)
    base = record["baseline"]["objectives"]
    for ax, (x, y) in zip(axes.flat, pairs, strict=False):
        ax.scatter(values[~feasible, x], values[~feasible, y], s=8, c="0.65", marker="x", linewidths=0.6,
                   label=f"infeasible ({(~feasible).sum()})")
        ax.scatter(values[feasible, x], values[feasible, y], s=6, c="C0", alpha=0.35,
                   label=f"feasible ({feasible.sum()})")
        if len(front):
            ax.scatter(front[:, x], front[:, y], s=18, c="C3", label=f"Pareto front ({len(front)})")
        if base[names[x]] is not None and base[names[y]] is not None:  # None: the baseline cannot run it
            ax.scatter([base[names[x]]], [base[names[y]]], marker="*", s=220, c="k", zorder=5,
                       label=record["baseline"]["hardware"])
        ax.set_xlabel(_label(spec, x), fontsize=8)
        ax.set_ylabel(_label(spec, y), fontsize=8)
        if spec.objectives[x].kind in LOG_KINDS:
            _log_axis(ax.xaxis, ax.set_xscale)
        if spec.objectives[y].kind in LOG_KINDS:
            _log_axis(ax.yaxis, ax.set_yscale)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(pairs):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2 if cols == 1 else 4, fontsize=8, frameon=False)
    fig.suptitle(f"{spec.name}: {len(values)} designs, every pair of objectives", fontsize=10)
    return fig


def _log_axis(axis: Any, set_scale: Any) -> None:
    """A log axis labelled 1, 2, 5, 10, 20, ... in plain numbers (no overlapping 3x10^0 minor labels)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    set_scale("log")
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _single(spec: StudySpec, record: Mapping[str, Any], values: np.ndarray, feasible: np.ndarray) -> Figure:
    """One objective: histograms of the feasible and infeasible designs, best designs and baseline marked."""
    fig = new_figure(7, 4.8, layout="constrained")
    ax = fig.add_subplot()
    v = values[:, 0]
    log = bool(spec.objectives[0].kind in LOG_KINDS and v.size and np.all(v > 0))
    bins: Any = 40
    if log and v.size:
        bins = np.geomspace(v.min(), v.max() * 1.0001, 41)
    ax.hist(v[~feasible], bins=bins, color="0.7", label=f"infeasible ({(~feasible).sum()})")
    ax.hist(v[feasible], bins=bins, color="C0", alpha=0.7, label=f"feasible ({feasible.sum()})")
    name = spec.objectives[0].name
    for i, d in enumerate(record["front"]):
        ax.axvline(d["objectives"][name], c="C3", lw=0.8, label="best designs" if i == 0 else None)
    if record["baseline"]["objectives"][name] is not None:  # None: the baseline cannot run it
        ax.axvline(record["baseline"]["objectives"][name], c="k", lw=1.5, ls="--",
                   label=record["baseline"]["hardware"])
    if log:
        _log_axis(ax.xaxis, ax.set_xscale)
    ax.set_xlabel(_label(spec, 0))
    ax.set_ylabel("designs [count]")
    fig.legend(loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    ax.set_title(f"{spec.name}: {len(values)} designs")
    return fig


def _history(spec: StudySpec, done: Sequence[FrozenTrial], values: np.ndarray, feasible: np.ndarray) -> Figure:
    fig = new_figure(7, 4.4, layout="constrained")
    ax = fig.add_subplot()
    numbers = np.array([t.number for t in done])
    order = np.argsort(numbers)
    numbers, values, feasible = numbers[order], values[order], feasible[order]
    sign = 1.0 if spec.directions[0] == "minimize" else -1.0
    v = np.where(feasible, values[:, 0] * sign, np.inf)
    best = np.minimum.accumulate(v) * sign if len(v) else v
    ax.scatter(numbers[~feasible], values[~feasible, 0], s=4, c="0.7", marker="x", linewidths=0.5,
               label="infeasible design")
    ax.scatter(numbers[feasible], values[feasible, 0], s=4, c="C0", alpha=0.3, label="feasible design")
    ax.plot(numbers, best, c="C3", label="best feasible so far")
    ax.set_xlabel("trial [number, in storage order]")
    ax.set_ylabel(_label(spec, 0))
    if spec.objectives[0].kind in LOG_KINDS:
        _log_axis(ax.yaxis, ax.set_yscale)
    fig.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    ax.set_title(f"{spec.name}: optimization history")
    return fig


def _importances(record: Mapping[str, Any]) -> Figure:
    imps: Mapping[str, Mapping[str, float]] = record["importances"]
    labels = {name: p["label"] for name, p in record.get("parameters", {}).items()}
    fig = new_figure(5.5 * max(len(imps), 1), 5, layout="constrained")
    axes = fig.subplots(1, max(len(imps), 1), squeeze=False)
    for ax, (objective, imp) in zip(axes[0], imps.items(), strict=False):
        items = sorted(imp.items(), key=lambda kv: kv[1])
        ax.barh([labels.get(k, k) for k, _ in items], [v for _, v in items], color="C0")
        ax.set_title(f"importance for {objective} (PED-ANOVA)", fontsize=9)
        ax.set_xlabel("importance [share of 1]", fontsize=8)
        ax.tick_params(labelsize=8)
    if not imps:
        axes[0][0].text(0.5, 0.5, "fewer than 10 feasible designs: no importances", ha="center", va="center")
        axes[0][0].set_axis_off()
    return fig
