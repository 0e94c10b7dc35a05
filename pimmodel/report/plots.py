"""Matplotlib figures from plain records (Agg backend; imported only when a plot is asked for)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import PimModelError
from ..phases import PHASE_LABELS, PHASES

PHASE_COLORS = {"dpu_compute": "#4C72B0", "mram_wram_dma": "#8172B2", "host_to_pim": "#DD8452",
                "pim_to_host": "#C44E52", "host_aggregate": "#937860", "launch": "#8C8C8C"}


def _pyplot() -> Any:
    # matplotlib loads only when a plot is asked for (the CLI's cold start)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_plot_path(path: Path) -> None:
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise PimModelError(f"cannot write a plot to {str(path)!r}: use a .png, .svg or .pdf file name")
    if not path.parent.exists():
        raise PimModelError(f"cannot write a plot to {str(path)!r}: folder {str(path.parent)!r} does not exist")


def scaling_plot(records: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Stacked per-epoch phases per DPU count."""
    check_plot_path(path)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
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
    fig.savefig(path, dpi=120)
    plt.close(fig)
