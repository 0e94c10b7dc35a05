"""Validation figure: predicted vs reference (log-log). Left, the evidence about hardware: the test kernels' real
UPMEM kernel times (never fitted) with their tolerance band; right, every other case, one colour per group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .plots import new_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

GROUP_COLORS = {"published": "#DD8452", "emulator": "#4C72B0", "finding": "#55A868"}
GROUP_LABELS = {"published": "published", "emulator": "consistency (model vs emulator, not evidence)",
                "finding": "finding"}
KERNEL_COLORS = ("#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD")
KIND_MARKERS = {"within": "o", "below": "v", "above": "^"}
"""Two-sided cases sit on the diagonal; one-sided bounds (most findings) only need the right side of it."""


def _diagonal(ax: Axes, values: Sequence[float], band: float) -> None:
    """The perfect prediction and a +-``band`` shaded tolerance."""
    if not values:
        return
    grid = [min(values) / 2, max(values) * 2]
    ax.fill_between(grid, [g * (1 - band) for g in grid], [g * (1 + band) for g in grid], color="#cccccc",
                    alpha=0.5, label=f"±{band:.0%} band")
    ax.plot(grid, grid, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")


def _positive(cases: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [c for c in cases if c["reference"] > 0 and c["predicted"] > 0]


def _hardware_panel(ax: Axes, cases: Sequence[Mapping[str, Any]]) -> None:
    points = _positive([c for c in cases if c["group"] == "hardware" and c.get("kind", "within") == "within"])
    if not points:
        ax.text(0.5, 0.5, "no real-hardware cases in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    _diagonal(ax, [c["reference"] for c in points], max(c["tolerance"] for c in points))
    kernels = sorted({str(c.get("kernel")) for c in points})
    for i, kernel in enumerate(kernels):
        color = KERNEL_COLORS[i % len(KERNEL_COLORS)]
        for ok in (True, False):
            pts = [c for c in points if str(c.get("kernel")) == kernel and c["ok"] == ok]
            if pts:
                ax.scatter([c["reference"] for c in pts], [c["predicted"] for c in pts], color=color,
                           marker="o" if ok else "x", s=22 if ok else 36,
                           label=f"{kernel} ({'pass' if ok else 'fail'}, {len(pts)})")
    unit = points[0].get("unit", "ms")
    ax.set_xlabel(f"real UPMEM kernel time [{unit}]")
    ax.set_ylabel(f"predicted kernel time [{unit}]")
    ax.set_title("real hardware: test kernels, never fitted", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")


def _model_panel(ax: Axes, cases: Sequence[Mapping[str, Any]]) -> None:
    points = _positive([c for c in cases if c["group"] in GROUP_COLORS])
    _diagonal(ax, [c["reference"] for c in points], 0.10)
    for group, color in GROUP_COLORS.items():
        for ok, kind in ((ok, kind) for ok in (True, False) for kind in KIND_MARKERS):
            pts = [c for c in points if c["group"] == group and c["ok"] == ok and c.get("kind", "within") == kind]
            if pts:
                bound = "" if kind == "within" else f", {kind} bound"
                ax.scatter([c["reference"] for c in pts], [c["predicted"] for c in pts], color=color,
                           marker=KIND_MARKERS[kind] if ok else "x", s=22,
                           label=f"{GROUP_LABELS[group]} ({'pass' if ok else 'fail'}{bound}, {len(pts)})")
    ax.set_xlabel("reference (each case's unit)")
    ax.set_ylabel("predicted (each case's unit)")
    ax.set_title("published microbenchmarks, study findings, emulator", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")


def validation_plot(record: Mapping[str, Any], path: str | Path | None = None) -> Figure:
    """Two panels of predicted against reference; failing cases are drawn as crosses.

    Left: the hardware group's per-point kernel times of the test kernels (real UPMEM measurements the fit never
    saw), one colour per kernel, shaded by their tolerance. Right: the other groups, each case in its own unit
    (the diagonal is a perfect prediction, the band +-10 %, the published tolerance; findings are bounds, drawn
    as triangles). Saved to ``path`` if given (``plots.save``)."""
    fig = new_figure(12, 5.8)
    left, right = fig.subplots(1, 2)
    _hardware_panel(left, record["cases"])
    _model_panel(right, record["cases"])
    status = "all pass" if record["ok"] else f"{sum(not c['ok'] for c in record['cases'])} of " \
        f"{len(record['cases'])} cases fail"
    fig.suptitle(f"pimmodel validation on {record.get('hardware', '?')}: {status}", fontsize=11)
    fig.tight_layout()
    if path is not None:
        save(fig, path, dpi=100)
    return fig
