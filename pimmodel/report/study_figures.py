"""Figures, tables and Markdown of the study's reproduced figures (the records ``pimmodel reproduce`` writes as
JSON): one drawing per kind of figure (data movement, time breakdown, metric over time, batch-size sweep,
DPU-count sweep), each with labelled axes and units, a legend, a title and a footnote on what the model cannot
know. Figures are detached (``plots.new_figure``), saved atomically (``plots.save``)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from ..units import format_seconds
from .plots import new_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Record = Mapping[str, Any]
OPTIMIZER_NAMES = {"ma-sgd": "MA-SGD", "ga-sgd": "GA-SGD", "admm": "ADMM", "sgd": "mini-batch SGD"}
OPTIMIZER_COLORS = {"ma-sgd": "#4C72B0", "ga-sgd": "#DD8452", "admm": "#55A868", "sgd": "#C44E52"}
OPTIMIZER_MARKERS = {"ma-sgd": "o", "ga-sgd": "s", "admm": "^", "sgd": "D"}
PLATFORM_NAMES = {"pim": "PIM", "cpu": "CPU", "gpu": "GPU"}
PLATFORM_COLORS = {"cpu": "#4C72B0", "pim": "#55A868", "gpu": "#C44E52"}
DPU_COLORS = ("#9ecae1", "#4292c6", "#2171b5", "#08306b", "#041a3a")
BREAKDOWN = (("comm_sync_s", "comm./sync. with\nparameter server"), ("pim_compute_s", "PIM compute"),
             ("pim_data_movement_s", "PIM data\nmovement"), ("epoch_s", "total"))
FOOTER_FONT = 7.0
LOG_RANGE = 20.0
"""A time axis spanning more than this factor is drawn on a log scale (values that differ 100x stay legible)."""


def _metric_label(record: Record) -> str:
    return "test accuracy (%)" if record["metric"] == "accuracy" else "test AUC (%)"


def _configuration_line(record: Record) -> str:
    c = record["configuration"]
    dpus = c["dpus"]
    where = f"{dpus[0]:,} DPUs" if len(dpus) == 1 else f"{dpus[0]:,}-{dpus[-1]:,} DPUs"
    parts = [f"{c['dataset']}", f"PIM: {c['hardware']}, {where}, {c['scaling']} scaling"]
    if c.get("cpu"):
        parts.append("CPU: 128 processes")
    if c.get("gpu"):
        parts.append("GPU: 1 x A100")
    batches = []
    kinds = c.get("batch_kinds", {})  # each optimizer's batch: "local" (b per DPU) or "global" (B per round)
    labels = c.get("labels", OPTIMIZER_NAMES)
    local = "/".join(labels[o] for o in c["optimizers"] if kinds.get(o) == "local")
    whole = "/".join(labels[o] for o in c["optimizers"] if kinds.get(o) == "global")
    if c.get("batch_size") and local:
        batches.append(f"{local} b = {c['batch_size']:,} per DPU")
    if c.get("global_batch_size") and whole:
        batches.append(f"{whole} B = {c['global_batch_size']:,}")
    epochs = f"{c['epochs']} epoch" + ("s" if c["epochs"] > 1 else "")
    return " · ".join(parts + batches + [epochs, f"{c['view']} view"])


def _frame(record: Record, width_in: float, height_in: float) -> Figure:
    """A figure with the title, the configuration line and the footnote, room kept for them."""
    fig = new_figure(width_in, height_in)
    f = record["figure"]
    title = textwrap.fill(f"Fig. {f['number']} reproduced by the model: {f['title']}", width=int(width_in * 11))
    config = textwrap.fill(_configuration_line(record), width=int(width_in * 12))
    fig.suptitle(f"{title}\n{config}", fontsize=10)
    footer = textwrap.fill(f"Note: {record['footer']}", width=int(width_in * 19))
    fig.supxlabel(footer, x=0.01, ha="left", fontsize=FOOTER_FONT, color="0.3")
    fig.set_layout_engine("constrained")
    return fig


def _grid(fig: Figure, nrows: int, ncols: int, share_x_by_column: bool = False) -> tuple[list[list[Axes]], Axes]:
    """``nrows`` x ``ncols`` axes under a thin row that holds the figure's legend (``_legend``): a legend in its
    own row never covers data or the title."""
    gs = fig.add_gridspec(nrows + 1, ncols, height_ratios=[0.05 * max(2, nrows)] + [1.0] * nrows)
    axes: list[list[Axes]] = []
    for i in range(nrows):
        axes.append([fig.add_subplot(gs[i + 1, j], sharex=axes[0][j] if share_x_by_column and i > 0 else None)
                     for j in range(ncols)])
    legend_ax = fig.add_subplot(gs[0, :])
    legend_ax.axis("off")
    return axes, legend_ax


def _legend(legend_ax: Axes, axes: Sequence[Sequence[Axes]], rename: Callable[[str], str] = str) -> None:
    """One legend of every label drawn in ``axes`` (first handle of each), in the legend row."""
    shown: dict[str, Any] = {}
    for row in axes:
        for ax in row:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                shown.setdefault(label, handle)
    legend_ax.legend(list(shown.values()), [rename(x) for x in shown], loc="center", ncols=len(shown), fontsize=8,
                     frameon=True)


def _log_if_wide(ax: Axes, values: Sequence[float]) -> None:
    positive = [v for v in values if v and v > 0]
    if positive and max(positive) / min(positive) > LOG_RANGE:
        ax.set_yscale("log")


def _label_bars(ax: Axes, bars: Any, text: Callable[[float], str]) -> None:
    for bar in bars:
        height = bar.get_height()
        if height > 0:
            ax.annotate(text(height), (bar.get_x() + bar.get_width() / 2, height), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=6, rotation=90)


def _headroom(ax: Axes) -> None:
    """Room above the tallest bar for its rotated label."""
    low, high = ax.get_ylim()
    if ax.get_yscale() == "log":
        ax.set_ylim(low, high * 3)
    else:
        ax.set_ylim(low, high * 1.25)


def _grouped_bars(ax: Axes, groups: Sequence[str], series: Sequence[tuple[str, str, Sequence[float]]],
                  text: Callable[[float], str] | None = None,
                  ranges: Sequence[Sequence[tuple[float, float]] | None] | None = None) -> None:
    """Bars per group (x) and series (hue): ``series`` = (label, color, one value per group); ``ranges``: per
    series, (low, high) per group drawn as an error bar (the seeds' range), or None."""
    width = 0.8 / max(1, len(series))
    for k, (label, color, values) in enumerate(series):
        xs = [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups))]
        span = ranges[k] if ranges else None
        yerr = None if not span else [[v - lo for v, (lo, _) in zip(values, span, strict=True)],
                                      [hi - v for v, (_, hi) in zip(values, span, strict=True)]]
        bars = ax.bar(xs, values, width * 0.95, label=label, color=color, edgecolor="black", linewidth=0.5,
                      yerr=yerr, capsize=2 if yerr else 0, error_kw={"linewidth": 0.8})
        if text is not None:
            _label_bars(ax, bars, text)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_axisbelow(True)


def _final_ranges(rows: Sequence[Record]) -> list[tuple[float, float]] | None:
    """(lowest, highest) seed's final metric in % per row, or None when a row has no spread."""
    if not all(r.get("per_epoch_metric_low") for r in rows):
        return None
    return [(100 * r["per_epoch_metric_low"][-1], 100 * r["per_epoch_metric_high"][-1]) for r in rows]


MIN_METRIC_SPAN = 10.0
"""The narrowest range (percentage points) of an accuracy axis: a narrower one magnifies seed noise into
apparent differences."""


def _metric_range(values: Sequence[float]) -> tuple[float, float]:
    """(low, high) in % of a metric axis: the values with a margin, at least ``MIN_METRIC_SPAN`` wide."""
    low, high = min(values), max(values)
    pad = max(0.5, (high - low) * 0.25, (MIN_METRIC_SPAN - (high - low)) / 2)
    low, high = max(0.0, low - pad), min(100.0, high + pad)
    if high - low < MIN_METRIC_SPAN:  # clipped at 0 or 100: extend the other side
        low, high = (0.0, MIN_METRIC_SPAN) if low == 0.0 else (100.0 - MIN_METRIC_SPAN, 100.0)
    return low, high


def _percent_axis(ax: Axes, values: Sequence[float]) -> None:
    """A metric axis (in %) around the values (bars start below the lowest value), never narrower than
    ``MIN_METRIC_SPAN`` points (the seeds' spread is drawn as error bars)."""
    ax.set_ylim(*_metric_range([100 * v for v in values]))


def _gb(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _seconds(value: float) -> str:
    """Seconds as a reader takes them in: 360.1 s, 17,490 s (never 1.749e+04 s)."""
    return f"{value:,.0f} s" if value >= 1000 else format_seconds(value)


def _seconds_text(value: float) -> str:
    """A bar label: the full number with its unit after a space ("1,196 s"), so a rotated "1,196s" is never read
    as 1.196 s."""
    return _seconds(value)


# ---------------------------------------------------------------- one drawing per kind
def _data_movement(record: Record) -> Figure:
    fig = _frame(record, 10.0, 5.2)
    grid, legend_ax = _grid(fig, 1, 2)
    axes = grid[0]
    rows = record["data"]
    paths = ("host <-> PIM", "MRAM <-> WRAM\n(all DPUs)")
    rate = [(OPTIMIZER_NAMES[r["optimizer"]], OPTIMIZER_COLORS[r["optimizer"]],
             [(r["host_pim_bytes_per_s"] or 0) / 1e9, (r["mram_wram_bytes_per_s"] or 0) / 1e9]) for r in rows]
    moved = [(OPTIMIZER_NAMES[r["optimizer"]], OPTIMIZER_COLORS[r["optimizer"]],
              [r["host_pim_bytes"] / 1e9, r["mram_wram_bytes"] / 1e9]) for r in rows]
    _grouped_bars(axes[0], paths, rate, _gb)
    axes[0].set_ylabel("throughput per epoch (GB/s)")
    axes[0].set_title("(a) throughput = bytes / time of the path", fontsize=9)
    _grouped_bars(axes[1], paths, moved, _gb)
    axes[1].set_yscale("log")
    axes[1].set_ylabel("data moved per epoch (GB, log scale)")
    axes[1].set_title("(b) total data movement", fontsize=9)
    for ax in axes:
        _headroom(ax)
        ax.set_xlabel("data path (per epoch, all DPUs)", fontsize=8)
    _legend(legend_ax, grid)
    return fig


def _breakdown(record: Record) -> Figure:
    models = list(dict.fromkeys(r["model"] for r in record["data"]))
    fig = _frame(record, 6.0 * len(models), 5.4)
    grid, legend_ax = _grid(fig, 1, len(models))
    axes = grid[0]
    for ax, model in zip(axes, models, strict=True):
        rows = [r for r in record["data"] if r["model"] == model]
        series = [(OPTIMIZER_NAMES[r["optimizer"]], OPTIMIZER_COLORS[r["optimizer"]], [r[k] for k, _ in BREAKDOWN])
                  for r in rows]
        _grouped_bars(ax, [label for _, label in BREAKDOWN], series, _seconds_text)
        ax.set_yscale("log")
        _headroom(ax)
        ax.set_ylabel("time per epoch (s, log scale)")
        ax.set_title(f"{model.upper()}", fontsize=10, fontweight="bold")
        ax.set_xlabel("the study's time categories (total = their sum; launches excluded)", fontsize=8)
    _legend(legend_ax, grid)
    return fig


def _time_to_accuracy(record: Record) -> Figure:
    rows = record["data"]
    models = list(dict.fromkeys(r["model"] for r in rows))
    platforms = list(dict.fromkeys(r["platform"] for r in rows))
    fig = _frame(record, 5.2 * len(models), 2.6 * len(platforms) + 1.6)
    axes, legend_ax = _grid(fig, len(platforms), len(models), share_x_by_column=True)
    for j, model in enumerate(models):
        runs = [r for r in rows if r["model"] == model]
        for i, platform in enumerate(platforms):
            ax = axes[i][j]
            for r in (r for r in runs if r["platform"] == platform):
                ax.plot(r["times_s"], [100 * v for v in r["per_epoch_metric"]], color=OPTIMIZER_COLORS[r["optimizer"]],
                        marker=OPTIMIZER_MARKERS[r["optimizer"]], markersize=4, linewidth=1.2,
                        label=OPTIMIZER_NAMES[r["optimizer"]])
                if r.get("total_s_range"):  # the time over the CPU's all-reduce latency range
                    low, high = r["total_s_range"]
                    ax.errorbar([r["total_s"]], [100 * r["per_epoch_metric"][-1]],
                                xerr=[[r["total_s"] - low], [high - r["total_s"]]],
                                color=OPTIMIZER_COLORS[r["optimizer"]], linewidth=0.8, capsize=3)
                if r.get("per_epoch_metric_low"):  # the seeds' range
                    ax.fill_between(r["times_s"], [100 * v for v in r["per_epoch_metric_low"]],
                                    [100 * v for v in r["per_epoch_metric_high"]],
                                    color=OPTIMIZER_COLORS[r["optimizer"]], alpha=0.18, linewidth=0)
                ax.annotate(_seconds(r["total_s"]), (r["times_s"][-1], 100 * r["per_epoch_metric"][-1]),
                            xytext=(3, 0), textcoords="offset points", fontsize=6,
                            color=OPTIMIZER_COLORS[r["optimizer"]], va="center")
            ax.set_xscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_ylabel(f"{PLATFORM_NAMES[platform]}\n{_metric_label(record)}", fontsize=8)
            if i == 0:
                ax.set_title(model.upper(), fontsize=10, fontweight="bold")
            if i == len(platforms) - 1:
                ax.set_xlabel("total training time (s, log scale; a marker per epoch, the last labelled)", fontsize=8)
        column = [100 * v for r in runs
                  for key in ("per_epoch_metric", "per_epoch_metric_low", "per_epoch_metric_high")
                  for v in r.get(key) or ()]
        low, high = _metric_range(column)
        for i in range(len(platforms)):
            axes[i][j].set_ylim(low, high)
        times = [t for r in runs for t in (*r["times_s"], *(r.get("total_s_range") or ()))]
        axes[0][j].set_xlim(min(times) / 1.5, max(times) * 2.5)
    _legend(legend_ax, axes)
    return fig


def _sweep_label(value: int) -> str:
    return f"{value // 1024:,}K" if value >= 1024 and value % 1024 == 0 else f"{value:,}"


def _batch_sweep(record: Record) -> Figure:
    rows = record["data"]
    panels = list(dict.fromkeys(r["panel"] for r in rows))
    platforms = [p for p in ("cpu", "pim", "gpu") if any(r["platform"] == p for r in rows)]
    fig = _frame(record, 4.2 * len(panels), 6.6)
    axes, legend_ax = _grid(fig, 2, len(panels))
    for j, panel in enumerate(panels):
        pts = [r for r in rows if r["panel"] == panel]
        batches = sorted({r["batch_size"] for r in pts})

        def value(platform: str, batch: int, key: str, pts: list[Any] = pts) -> float:
            return next(r[key] for r in pts if r["platform"] == platform and r["batch_size"] == batch)

        groups = [_sweep_label(b) for b in batches]
        times = [(PLATFORM_NAMES[p], PLATFORM_COLORS[p], [value(p, b, "total_s") for b in batches]) for p in platforms]
        metric = [(PLATFORM_NAMES[p], PLATFORM_COLORS[p], [100 * value(p, b, "final_metric") for b in batches])
                  for p in platforms]
        _grouped_bars(axes[0][j], groups, times, _seconds_text)
        _log_if_wide(axes[0][j], [v for _, _, vs in times for v in vs])
        _headroom(axes[0][j])
        scale = ", log scale" if axes[0][j].get_yscale() == "log" else ""
        axes[0][j].set_ylabel(f"time of {pts[0]['epochs']} epochs (s{scale})", fontsize=8)
        axes[0][j].set_title(panel, fontsize=10, fontweight="bold")
        spans = [_final_ranges([next(r for r in pts if r["platform"] == p and r["batch_size"] == b)
                                for b in batches]) for p in platforms]
        _grouped_bars(axes[1][j], groups, metric, ranges=spans)
        _percent_axis(axes[1][j], [v / 100 for _, _, vs in metric for v in vs] +
                      [v / 100 for sp in spans if sp for lo_hi in sp for v in lo_hi])
        axes[1][j].set_ylabel(f"final {_metric_label(record)}", fontsize=8)
        kind = ("global batch B (rows per round)" if record["configuration"]["batch_kinds"][pts[0]["optimizer"]] ==
                "global" else "batch b per DPU / process")
        axes[1][j].set_xlabel(kind, fontsize=8)
    _legend(legend_ax, axes[:1])
    return fig


def _scaling(record: Record) -> Figure:
    rows = record["data"]
    models = list(dict.fromkeys(r["model"] for r in rows))
    optimizers = list(dict.fromkeys(r["optimizer"] for r in rows))
    counts = sorted({r["dpus"] for r in rows})
    colors = [DPU_COLORS[min(k, len(DPU_COLORS) - 1)] for k in range(len(counts))]
    fig = _frame(record, 5.4 * len(models), 6.6)
    axes, legend_ax = _grid(fig, 2, len(models))
    for j, model in enumerate(models):
        pts = {(r["optimizer"], r["dpus"]): r for r in rows if r["model"] == model}
        groups = [OPTIMIZER_NAMES[o] for o in optimizers]
        times = [(f"{n:,} DPUs", c, [pts[(o, n)]["total_s"] for o in optimizers])
                 for n, c in zip(counts, colors, strict=True)]
        metric = [(f"{n:,} DPUs", c, [100 * pts[(o, n)]["final_metric"] for o in optimizers])
                  for n, c in zip(counts, colors, strict=True)]
        _grouped_bars(axes[0][j], groups, times, _seconds_text)
        _log_if_wide(axes[0][j], [v for _, _, vs in times for v in vs])
        _headroom(axes[0][j])
        scale = ", log scale" if axes[0][j].get_yscale() == "log" else ""
        epochs = next(iter(pts.values()))["epochs"]
        axes[0][j].set_ylabel(f"time of {epochs} epochs (s{scale})", fontsize=8)
        axes[0][j].set_title(f"{model.upper()} ({record['configuration']['scaling']} scaling)", fontsize=10,
                             fontweight="bold")
        spans = [_final_ranges([pts[(o, n)] for o in optimizers]) for n in counts]
        _grouped_bars(axes[1][j], groups, metric, ranges=spans)
        _percent_axis(axes[1][j], [v / 100 for _, _, vs in metric for v in vs] +
                      [v / 100 for sp in spans if sp for lo_hi in sp for v in lo_hi])
        axes[1][j].set_ylabel(f"final {_metric_label(record)}", fontsize=8)
        axes[1][j].set_xlabel("optimizer", fontsize=8)
    _legend(legend_ax, axes[:1], lambda label: f"PIM, {label}")
    return fig


DRAWINGS: dict[str, Callable[[Record], Figure]] = {
    "data-movement": _data_movement, "breakdown": _breakdown, "time-to-accuracy": _time_to_accuracy,
    "batch-sweep": _batch_sweep, "scaling": _scaling,
}


def figure_plot(record: Record, path: str | Path | None = None) -> Figure:
    """The figure of a reproduced-figure record; saved to ``path`` (PNG, SVG or PDF) if given."""
    fig = DRAWINGS[record["figure"]["kind"]](record)
    if path is not None:
        save(fig, path, dpi=130)
    return fig


# ---------------------------------------------------------------- tables
def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def table(record: Record) -> tuple[list[str], list[list[str]]]:
    """The figure's numbers as a short table: column names and rows of text."""
    kind = record["figure"]["kind"]
    rows = record["data"]
    metric = "accuracy" if record["metric"] == "accuracy" else "AUC"
    if kind == "data-movement":
        return (["model", "optimizer", "host<->PIM (GB)", "host<->PIM (GB/s)", "MRAM<->WRAM (GB)",
                 "MRAM<->WRAM (GB/s)"],
                [[r["model"].upper(), OPTIMIZER_NAMES[r["optimizer"]], _gb(r["host_pim_bytes"] / 1e9),
                  _gb((r["host_pim_bytes_per_s"] or 0) / 1e9), _gb(r["mram_wram_bytes"] / 1e9),
                  _gb((r["mram_wram_bytes_per_s"] or 0) / 1e9)] for r in rows])
    if kind == "breakdown":
        return (["model", "optimizer", "comm./sync.", "PIM compute", "PIM data movement", "total per epoch"],
                [[r["model"].upper(), OPTIMIZER_NAMES[r["optimizer"]]] + [_seconds(r[k]) for k, _ in BREAKDOWN]
                 for r in rows])
    if kind == "time-to-accuracy":
        return (["model", "run", "batch", "per epoch", f"{rows[0]['epochs']} epochs", f"final {metric}"],
                [[r["model"].upper(), r["label"], f"{r['batch_size']:,}", _seconds(r["epoch_s"]),
                  _seconds(r["total_s"]), _pct(r["final_metric"])] for r in rows])
    if kind == "batch-sweep":
        return (["panel", "batch", "platform", "per epoch", f"{rows[0]['epochs']} epochs", f"final {metric}"],
                [[r["panel"], f"{r['batch_size']:,}", PLATFORM_NAMES[r["platform"]], _seconds(r["epoch_s"]),
                  _seconds(r["total_s"]), _pct(r["final_metric"])] for r in rows])
    base = {(r["model"], r["optimizer"]): r for r in rows if r["dpus"] == min(x["dpus"] for x in rows)}
    return (["model", "optimizer", "DPUs", "per epoch", f"{rows[0]['epochs']} epochs", "vs fewest DPUs",
             f"final {metric}"],
            [[r["model"].upper(), OPTIMIZER_NAMES[r["optimizer"]], f"{r['dpus']:,}", _seconds(r["epoch_s"]),
              _seconds(r["total_s"]), f"{r['total_s'] / base[(r['model'], r['optimizer'])]['total_s']:.2f}x",
              _pct(r["final_metric"])] for r in rows])


def rich_table(record: Record) -> Table:
    columns, rows = table(record)
    f = record["figure"]
    out = Table(title=f"Fig. {f['number']}: {f['title']}", caption=_configuration_line(record))
    for k, name in enumerate(columns):
        out.add_column(name, justify="left" if k < 2 else "right")
    for row in rows:
        out.add_row(*row)
    return out


def markdown(record: Record) -> str:
    """The figure's Markdown page: what it shows, the table, the study's finding beside the model's, notes."""
    f = record["figure"]
    columns, rows = table(record)
    lines = [f"# Fig. {f['number']}: {f['title']}", "",
             f"What it shows: {f['shows']} ({f['source']}; configuration in `{f['study_file']}`).", "",
             f"Configuration: {_configuration_line(record)}.", "",
             "| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", f"**Study found:** {record['study_finding']} ({record['finding_basis']})", "", "**Model says:**", ""]
    lines += [f"- {s}" for s in record["model_says"]]
    lines += ["", "**What the model cannot know:**", ""]
    lines += [f"- {n}" for n in record["notes"]]
    files = record.get("files", {})
    if files:
        lines += ["", f"Files: `{Path(files['png']).name}` (the figure), `{Path(files['json']).name}` (the data behind "
                  "it)."]
    return "\n".join(lines) + "\n"
