"""Matplotlib figures from plain records, and saving them.

Figures are ``matplotlib.figure.Figure`` objects built directly, never through pyplot: a library must not
switch the caller's backend or leave figures in pyplot's registry (a notebook shows a returned Figure as it
is; ``save`` writes PNG, SVG or PDF whole or not at all). matplotlib is imported only when a plot is asked for
(the CLI's cold start).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..atomic import check_writable, replacing
from ..errors import PimModelError
from ..phases import PHASE_LABELS, PHASES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PHASE_COLORS = {"dpu_compute": "#4C72B0", "mram_wram_dma": "#8172B2", "host_to_pim": "#DD8452",
                "pim_to_host": "#C44E52", "host_aggregate": "#937860", "launch": "#8C8C8C"}
PLOT_FORMATS = (".png", ".svg", ".pdf")


def new_figure(width_in: float, height_in: float, layout: Literal["constrained"] | None = None) -> Figure:
    """A detached figure (no pyplot, no backend switch); ``save`` or a notebook renders it. ``layout``
    "constrained" makes room for legends placed outside the axes (``loc="outside ..."``)."""
    from matplotlib.figure import Figure  # matplotlib loads only when a plot is asked for

    return Figure(figsize=(width_in, height_in), layout=layout)


def check_plot_path(path: str | Path) -> Path:
    """``path`` if a plot can be written there (a .png/.svg/.pdf name in a writable folder), checked before any
    work starts; else a one-line error."""
    target = Path(path)
    if target.suffix.lower() not in PLOT_FORMATS:
        raise PimModelError(f"cannot write a plot to {str(target)!r}: use a .png, .svg or .pdf file name")
    return check_writable(target, "plot")


def save(fig: Figure, path: str | Path, dpi: int = 120) -> Path:
    """Write ``fig`` to ``path`` in the format of its suffix, atomically."""
    target = check_plot_path(path)
    with replacing(target, "wb") as handle:
        fig.savefig(handle, format=target.suffix.lower().lstrip("."), dpi=dpi)
    return target


def scaling_plot(records: Sequence[Mapping[str, Any]], path: str | Path | None = None) -> Figure:
    """Stacked per-epoch phases per DPU count (the records of ``pimmodel scale``); saved to ``path`` if given."""
    fig = new_figure(7.5, 4.5)
    ax = fig.add_subplot()
    labels = [str(r["dpus"]) for r in records]
    bottom = [0.0] * len(records)
    for phase in PHASES:
        values = [r["per_epoch_s"][phase] for r in records]
        ax.bar(labels, values, bottom=bottom, label=PHASE_LABELS[phase], color=PHASE_COLORS[phase])
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    first = records[0]
    ax.set_xlabel("DPUs")
    ax.set_ylabel("time per epoch (s)")
    ax.set_title(f"{first['dataset']} {first['model'].upper()} {first['optimizer']}, {first['scaling']} scaling "
                 f"({first['view']} view, {first['hardware']})", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    if path is not None:
        save(fig, path)
    return fig


def family_split_plot(records: Sequence[Mapping[str, Any]], path: str | Path | None = None) -> Figure:
    """The same job's phase split on each architecture family, side by side (the records of ``pimmodel
    compare-families`` that ran): one panel per (dataset, spec), a stacked bar of phase shares per optimizer and
    model, the epoch time on top; saved to ``path`` if given."""
    ran = [r for r in records if r.get("runs")]
    if not ran:
        raise PimModelError("no comparison ran, so there is no phase split to plot; give a dataset every spec runs")
    fig = new_figure(3.2 * len(ran) + 1.8, 4.2, layout="constrained")
    axes = fig.subplots(1, len(ran), sharey=True, squeeze=False)[0]
    for ax, r in zip(axes, ran, strict=True):
        keys = list(r["phase_share"])
        bottom = [0.0] * len(keys)
        labels = {**PHASE_LABELS, **r.get("phase_labels", {})}
        for phase in PHASES:
            values = [100 * r["phase_share"][k][phase] for k in keys]
            ax.bar(keys, values, bottom=bottom, color=PHASE_COLORS[phase],
                   label=PHASE_LABELS[phase] if labels[phase] == PHASE_LABELS[phase]
                   else f"{PHASE_LABELS[phase]} / {labels[phase]}")
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        for i, k in enumerate(keys):
            ax.text(i, 101, _seconds(r["epoch_s"][k]), ha="center", va="bottom", fontsize=7, rotation=90)
        ax.set_title(f"{r['hardware']} ({r['family']})\n{r['dataset']}, {r['units']:,} {r['unit']}s", fontsize=9)
        ax.tick_params(axis="x", labelrotation=90, labelsize=8)
        ax.set_ylim(0, 125)
        ax.set_yticks(range(0, 101, 20))  # the room above 100 % holds the epoch times, not a share
    axes[0].set_ylabel("share of the epoch (%)")
    fig.suptitle(f"the same job on each family: phase shares, {ran[0]['view']} view (the study's accounting; "
                 "epoch time above each bar)", fontsize=9)
    handles, names = axes[-1].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=3, fontsize=8)
    if path is not None:
        save(fig, path)
    return fig


def _seconds(value: float) -> str:
    return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"
