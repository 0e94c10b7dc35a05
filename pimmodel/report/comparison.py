"""Tables and figures of ``pimmodel compare`` records (the dict ``--json`` prints): time to accuracy per platform
and the break-even sweep."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from ..units import format_seconds
from .plots import new_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLATFORM_COLORS = {"pim": "#4C72B0", "cpu": "#DD8452", "gpu": "#55A868"}
OPTIMIZER_MARKERS = {"ma-sgd": "o", "ga-sgd": "s", "admm": "^", "sgd": "D"}
METRIC_LABELS = {"accuracy": "test accuracy", "auc": "test AUC"}


def runs_table(record: Mapping[str, Any]) -> Table:
    """One row per run: time per epoch, total, final metric (± half the seeds' range), time to the target."""
    w = record["workload"]
    metric = METRIC_LABELS.get(record["metric"], record["metric"])
    table = Table(title=f"{w['dataset']} · {w['model'].upper()} · PIM: {record['hardware']}, {w['dpus']:,} DPUs "
                        f"({w['scaling']}) · {w['epochs']} epochs",
                  caption=f"target {metric} {record['target']:.3f}")
    for name, justify in (("run", "left"), ("per epoch", "right"), (f"{w['epochs']} epochs", "right"),
                          (f"final {metric}", "right"), ("time to target", "right"), ("epoch bound by", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    best = min((r["time_to_target_s"] for r in record["runs"] if r["time_to_target_s"] is not None), default=None)
    for r in record["runs"]:
        t = r["time_to_target_s"]
        cell = "not reached" if t is None else f"{format_seconds(t)} (epoch {r['epochs_to_target']})"
        if t is not None and t == best:
            cell = f"[bold green]{cell}[/]"
        model = r["time_model"]
        bound = str(model.get("bottleneck", "")) + (" (model unvalidated)" if model.get("validated") is False else "")
        total = format_seconds(r["total_s"])
        if r.get("total_s_range"):
            total += f" ({format_seconds(r['total_s_range'][0])}-{format_seconds(r['total_s_range'][1])})"
        table.add_row(r["label"], format_seconds(r["epoch_s"]), total,
                      f"{r['final_metric']:.3f} ± {r['final_metric_spread'] / 2:.3f}"
                      if r.get("final_metric_spread") is not None else f"{r['final_metric']:.3f}", cell, bound)
    return table


def break_even_table(record: Mapping[str, Any]) -> Table:
    be = record["break_even"]
    axis = be["axis"]
    table = Table(title=f"break-even over {'DPU count' if axis == 'dpus' else 'batch size'} (time per epoch)",
                  caption="speedup = the other platform's epoch / PIM's epoch (> 1: PIM faster)")
    has_gpu = any("gpu_epoch_s" in p for p in be["points"])
    for name in ["optimizer", "DPUs" if axis == "dpus" else "batch", "PIM epoch", "CPU epoch", "vs CPU"] + (
            ["GPU epoch", "vs GPU"] if has_gpu else []):
        table.add_column(name, justify="left" if name == "optimizer" else "right")
    for p in be["points"]:
        cells = [p["optimizer"], f"{p[axis]:,}", format_seconds(p["pim_epoch_s"])]
        for device in ("cpu", "gpu") if has_gpu else ("cpu",):
            s = p.get(f"speedup_over_{device}")
            cells += [format_seconds(p[f"{device}_epoch_s"]) if s is not None else "-",
                      ("-" if s is None else (f"[green]{s:.2f}x[/]" if s >= 1 else f"{s:.2f}x"))]
        table.add_row(*cells)
    return table


def _metric_axes(ax: Axes, record: Mapping[str, Any]) -> None:
    for r in record["runs"]:
        color = PLATFORM_COLORS[r["platform"]]
        marker = OPTIMIZER_MARKERS.get(r["optimizer"], "o")
        ax.plot(r["times_s"], r["per_epoch_metric"], marker=marker, color=color, label=r["label"],
                linestyle="-" if r["platform"] == "pim" else "--", markersize=4)
        if r.get("per_epoch_metric_low"):  # the seeds' range
            ax.fill_between(r["times_s"], r["per_epoch_metric_low"], r["per_epoch_metric_high"], color=color,
                            alpha=0.15, linewidth=0)
        if r.get("total_s_range"):  # the time over the assumption's range (the CPU's all-reduce latency)
            low, high = r["total_s_range"]
            ax.errorbar([r["total_s"]], [r["per_epoch_metric"][-1]], xerr=[[r["total_s"] - low], [high - r["total_s"]]],
                        color=color, linewidth=0.8, capsize=3)
    ax.axhline(record["target"], color="0.5", linewidth=0.8, linestyle=":")
    ax.annotate(f"target {record['target']:.3f}", (0.01, record["target"]), xycoords=("axes fraction", "data"),
                fontsize=7, color="0.4", va="bottom")
    ax.set_xscale("log")
    ax.set_xlabel("training time (s, log scale; markers at the end of each epoch)")
    ax.set_ylabel(METRIC_LABELS.get(record["metric"], record["metric"]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def _break_even_axes(ax: Axes, record: Mapping[str, Any]) -> None:
    be = record["break_even"]
    axis = be["axis"]
    for optimizer in dict.fromkeys(p["optimizer"] for p in be["points"]):
        pts = [p for p in be["points"] if p["optimizer"] == optimizer]
        for device, style in (("cpu", "-"), ("gpu", "--")):
            ys = [p.get(f"speedup_over_{device}") for p in pts]
            if all(y is None for y in ys):
                continue
            ax.plot([p[axis] for p in pts], ys, style, marker=OPTIMIZER_MARKERS.get(optimizer, "o"),
                    label=f"{optimizer} vs {device.upper()}", markersize=4)
    ax.axhline(1.0, color="0.3", linewidth=0.8)
    ax.set_xscale("log", base=2)
    swept = sorted({p[axis] for p in be["points"]})
    ax.set_xticks(swept, [f"{v:,}" for v in swept], fontsize=7, rotation=45 if len(swept) > 6 else 0)
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("DPUs" if axis == "dpus" else "batch size (rows)")
    ax.set_ylabel("PIM speedup per epoch (x, log)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def comparison_plot(record: Mapping[str, Any], path: str | Path | None = None) -> Figure:
    """Metric against time per run (left) and the break-even sweep (right, if any)."""
    has_sweep = bool(record.get("break_even") and record["break_even"]["points"])
    fig = new_figure(12.0 if has_sweep else 7.0, 4.6)
    axes = fig.subplots(1, 2 if has_sweep else 1, squeeze=False)[0]
    _metric_axes(axes[0], record)
    w = record["workload"]
    axes[0].set_title(f"{w['dataset']} {w['model'].upper()}: {METRIC_LABELS.get(record['metric'])} over time",
                      fontsize=10)
    if has_sweep:
        _break_even_axes(axes[1], record)
        axes[1].set_title("where PIM overtakes (time per epoch)", fontsize=10)
    fig.tight_layout()
    if path is not None:
        save(fig, path)
    return fig
