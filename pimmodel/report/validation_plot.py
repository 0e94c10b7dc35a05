"""Validation figure: predicted vs reference (log-log), tolerance band, one colour per group."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .plots import new_figure, save

if TYPE_CHECKING:
    from matplotlib.figure import Figure

GROUP_COLORS = {"emulator": "#4C72B0", "published": "#DD8452", "finding": "#55A868"}
KIND_MARKERS = {"within": "o", "below": "v", "above": "^"}
"""Two-sided cases sit on the diagonal; one-sided bounds (most findings) only need the right side of it."""


def validation_plot(record: Mapping[str, Any], path: str | Path | None = None) -> Figure:
    """Scatter of every case with positive values; failing cases are drawn as crosses.

    Cases are normalised by their reference (x: reference, y: predicted, each in the case's own unit), so
    the diagonal is a perfect prediction and the shaded band is +-10 % (the published tolerance); the
    emulator cases' band is 5 % and the findings are bounds, which the legend notes. Saved to ``path`` if
    given (``plots.save``)."""
    fig = new_figure(6.5, 6)
    ax = fig.add_subplot()
    xs = [c["reference"] for c in record["cases"] if c["reference"] > 0 and c["predicted"] > 0]
    if xs:
        lo, hi = min(xs) / 3, max(xs) * 3
        grid = [lo, hi]
        ax.fill_between(grid, [g * 0.9 for g in grid], [g * 1.1 for g in grid], color="#cccccc", alpha=0.5,
                        label="±10 % band")
        ax.plot(grid, grid, color="black", lw=0.8)
    for group, color in GROUP_COLORS.items():
        for ok, kind in ((ok, kind) for ok in (True, False) for kind in KIND_MARKERS):
            pts = [(c["reference"], c["predicted"]) for c in record["cases"]
                   if c["group"] == group and c["ok"] == ok and c.get("kind", "within") == kind
                   and c["reference"] > 0 and c["predicted"] > 0]
            if pts:
                bound = "" if kind == "within" else f", {kind} bound"
                ax.scatter([x for x, _ in pts], [y for _, y in pts], color=color,
                           marker=KIND_MARKERS[kind] if ok else "x", s=22,
                           label=f"{group} ({'pass' if ok else 'fail'}{bound}, {len(pts)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("reference (case unit)")
    ax.set_ylabel("predicted (case unit)")
    status = "all pass" if record["ok"] else f"{sum(not c['ok'] for c in record['cases'])} fail"
    ax.set_title(f"pimmodel validation on {record.get('hardware', '?')}: {status}")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    if path is not None:
        save(fig, path, dpi=100)
    return fig
