"""Time to accuracy of every optimizer on given hardware: which algorithm wins where.

For each workload of the study (YFCC-like / Criteo-like, LR / SVM) and each optimizer (each H it can take, the
gossip graph its hardware offers) this joins the two halves pimmodel has: the *statistical* half, the stand-in
metric after every eighth of an epoch from emulated training (``convergence.py``: accuracy, or AUC for the
imbalanced Criteo-like data), and the *hardware* half, the cost model's epoch time at 2,048 DPUs (weak scaling,
wall view, shipped calibration). Time to target = epochs until the stand-in reaches ``target`` x MA-SGD's
10-epoch metric x the epoch time. Optimizers that need links the hardware lacks are listed as such.

``python -m pimmodel.dse.codesign [PLOT_DIR]`` prints the markdown table of ``studies/README.md`` and draws the
time-to-accuracy curves (``time_to_accuracy.png``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..calibration.result import load_calibration
from ..costmodel import predict
from ..specs import DATASETS, REGISTRY, HardwareSpec, Workload, load_hardware
from .convergence import GRAPHS, SYNC_CHOICES, Convergence, Variant, load_table

HARDWARE = ("upmem-2556", "pim-torus-hypothetical")
WORKLOADS = tuple((d, m) for d in ("yfcc100m-hnfc6", "criteo-1tb") for m in ("lr", "svm"))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One optimizer (with one H) on one hardware for one workload."""

    hardware: str
    dataset: str
    model: str
    optimizer: str
    sync_every: int
    runs: bool
    """False: the hardware lacks the links the optimizer needs."""
    epoch_s: float = math.nan
    epochs_to_target: float = math.nan
    time_to_target_s: float = math.nan

    @property
    def label(self) -> str:
        h = f" H={self.sync_every}" if "sync_every" in REGISTRY[self.optimizer].takes else ""
        return f"{self.optimizer}{h}"


def outcomes(hardware: Sequence[str | HardwareSpec] = HARDWARE, workloads: Sequence[tuple[str, str]] = WORKLOADS,
             target: float = 0.99, dpus: int = 2048, table: Convergence | None = None) -> list[Outcome]:
    """Every (hardware, workload, optimizer, H) outcome."""
    table = table or load_table()
    calibration = load_calibration(None)
    out = []
    for hw_name in hardware:
        hw = hw_name if isinstance(hw_name, HardwareSpec) else load_hardware(hw_name)
        for dataset, model in workloads:
            goal = table.target(dataset, model, target)
            for name, info in REGISTRY.items():
                if hw.link_topology not in info.topologies:
                    out.append(Outcome(hw.name, dataset, model, name, 1, False))
                    continue
                for h in (SYNC_CHOICES[1:] if "sync_every" in info.takes else (1,)):
                    w = Workload(DATASETS[dataset], model, name, dpus, epochs=1)
                    w = w.with_(hyper=replace(w.hp, sync_every=h))
                    epoch = predict(w, hw, calibration.coefficients_for(w), "wall").per_epoch_total_s
                    graph = GRAPHS.get(hw.link_topology, "") if name == "dpsgd" else ""
                    epochs = table.epochs_to(Variant(dataset, model, name, h, graph), goal)
                    out.append(Outcome(hw.name, dataset, model, name, h, True, epoch, epochs, epochs * epoch))
    return out


def best(results: Sequence[Outcome]) -> dict[tuple[str, str, str, str], Outcome]:
    """Per (hardware, dataset, model, optimizer): its fastest H (the outcome that reaches the target first)."""
    picked: dict[tuple[str, str, str, str], Outcome] = {}
    for r in results:
        key = (r.hardware, r.dataset, r.model, r.optimizer)
        if key not in picked or (r.runs and not picked[key].time_to_target_s <= r.time_to_target_s):
            picked[key] = r
    return picked


def markdown(results: Sequence[Outcome], hardware: Sequence[str] = HARDWARE) -> str:
    """One row per optimizer, per workload and hardware its time to target (its fastest H), the winner bold."""
    top = best(results)
    head = "| optimizer | " + " | ".join(f"{d.split('-')[0]} {m.upper()} {hw}" for d, m in WORKLOADS
                                          for hw in hardware) + " |"
    lines = [head, "|" + "---|" * (1 + len(WORKLOADS) * len(hardware))]
    winners = {(hw, d, m): min((o for o in top.values() if (o.hardware, o.dataset, o.model) == (hw, d, m) and o.runs),
                               key=lambda o: o.time_to_target_s) for d, m in WORKLOADS for hw in hardware}
    for name in REGISTRY:
        cells = []
        for d, m in WORKLOADS:
            for hw in hardware:
                o = top[(hw, d, m, name)]
                cells.append(_cell(o, winners[(hw, d, m)] is o))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(o: Outcome, winner: bool) -> str:
    if not o.runs:
        return "needs links"
    if not math.isfinite(o.time_to_target_s):
        return f"not in {10} epochs"
    h = f" (H={o.sync_every})" if "sync_every" in REGISTRY[o.optimizer].takes else ""
    text = f"{_seconds(o.time_to_target_s)}{h}"
    return f"**{text}**" if winner else text


def _seconds(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 120 else f"{s:.1f} s"


def curves_figure(results: Sequence[Outcome], table: Convergence | None = None, hardware: Sequence[str] = HARDWARE
                  ) -> Any:
    """Metric vs training time (log) per workload, each optimizer at its fastest H: solid on the first hardware,
    dashed on the second; the dotted line is the target."""
    from ..report.plots import new_figure

    table = table or load_table()
    top = best(results)
    fig = new_figure(12, 11)
    axes = fig.subplots(2, 2)
    per = table.stand_in.checkpoints
    for ax, (dataset, model) in zip(axes.ravel(), WORKLOADS, strict=True):
        for i, name in enumerate(REGISTRY):
            for hw, style in zip(hardware, ("-", "--"), strict=False):
                o = top[(hw, dataset, model, name)]
                if not o.runs:
                    continue
                graph = GRAPHS.get(load_hardware(hw).link_topology, "") if name == "dpsgd" else ""
                curve = table.curve(Variant(dataset, model, name, o.sync_every, graph))
                times = [(k + 1) / per * o.epoch_s for k in range(len(curve))]
                ax.plot(times, curve, style, color=f"C{i}", lw=1.1, label=f"{o.label}, {hw}")
        ax.axhline(table.target(dataset, model, 0.99), color="0.4", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_title(f"{dataset} {model.upper()}, 2,048 DPUs\n(solid: {hardware[0]}, dashed: {hardware[-1]})",
                     fontsize=9)
        ax.set_xlabel("training time [s]: stand-in epochs x the cost model's epoch time")
        ax.set_ylabel(f"stand-in test {table.metric.get(dataset, 'metric')}")
        # below the axes: inside, it covered the curves' rise from 0.5 (ADMM, the first checkpoints)
        ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    fig.tight_layout()
    return fig


def study_figure(trials: Sequence[Any], front_values: set[tuple[float, ...]], baseline: tuple[float, float]) -> Any:
    """The feasible designs of a co-design study: time to target (log) vs cost, coloured by the optimizer they
    pick, the Pareto front ringed, upmem-2556 (running MA-SGD) starred."""
    from matplotlib.ticker import ScalarFormatter

    from ..report.plots import new_figure

    fig = new_figure(10, 5.5)
    ax = fig.subplots()
    for i, name in enumerate(REGISTRY):
        picked = [t for t in trials if t.params.get("optimizer") == name]
        if picked:
            ax.scatter([t.values[0] for t in picked], [t.values[1] for t in picked], s=5, color=f"C{i}", alpha=0.35,
                       label=f"{name} ({len(picked)})")
    front = [t for t in trials if tuple(t.values) in front_values]
    ax.scatter([t.values[0] for t in front], [t.values[1] for t in front], s=28, facecolors="none",
               edgecolors="k", lw=0.7, label=f"Pareto front ({len(front_values)} designs)")
    ax.scatter([baseline[0]], [baseline[1]], marker="*", s=220, c="k", label="upmem-2556, MA-SGD")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(ScalarFormatter())
    ax.set_xlabel("time to 99 % of MA-SGD's stand-in metric [s] (geometric mean of 4 workloads, 2,048 DPUs)")
    ax.set_ylabel("cost per DPU [x upmem-2556]")
    ax.set_title("codesign: feasible designs by the optimizer they pick", fontsize=10)
    legend = ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: no design hidden
    for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):  # one marker size in the legend
        if handle is not None and hasattr(handle, "set_sizes"):
            handle.set_sizes([60 if text.get_text().startswith("upmem-2556") else 24])
            handle.set_alpha(0.9)
    fig.tight_layout()
    return fig


def main() -> None:
    """``python -m pimmodel.dse.codesign [PLOT_DIR [STORAGE_URL]]``: the time-to-accuracy table (stdout) and curves;
    with a storage holding the run codesign study, its figure too."""
    import argparse
    import sys

    from ..report.plots import save

    parser = argparse.ArgumentParser(prog="python -m pimmodel.dse.codesign",
                                     description="The codesign study's time-to-accuracy table (stdout); with "
                                     "PLOT_DIR its curves, with STORAGE_URL (a storage holding the run codesign "
                                     "study) its figure of designs too.")
    parser.add_argument("plot_dir", nargs="?", metavar="PLOT_DIR", help="existing folder for the PNG files")
    parser.add_argument("storage", nargs="?", metavar="STORAGE_URL", help="e.g. sqlite:///codesign.db")
    args = parser.parse_args()  # --help prints and exits 0; an unknown option exits 2 with one line
    if args.plot_dir is not None and not Path(args.plot_dir).is_dir():
        parser.error(f"PLOT_DIR {args.plot_dir!r} is not an existing folder")
    results = outcomes()
    print(markdown(results))
    if args.plot_dir is not None:
        print(save(curves_figure(results), Path(args.plot_dir) / "time_to_accuracy.png"), file=sys.stderr)
    if args.storage is not None:
        from ..resources import data_dir
        from .objective import Evaluator
        from .result import front
        from .space import load_study
        from .study import is_feasible, stored_trials

        spec = load_study(data_dir("studies") / "codesign.toml")
        trials = [t for t in stored_trials(spec, args.storage) if t.values and is_feasible(t)]
        base = Evaluator(spec).evaluate([{}]).values[0]
        # the front by its objective values (``front`` re-numbers the trials it is given)
        fig = study_figure(trials, {tuple(t.values) for group in front(spec, trials) for t in group},
                           (float(base[0]), float(base[1])))
        print(save(fig, Path(args.plot_dir) / "codesign_designs.png"), file=sys.stderr)


if __name__ == "__main__":
    main()
