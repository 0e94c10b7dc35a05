"""Rich tables for prediction records (the same dicts ``--json`` prints)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from ..phases import PHASE_LABELS, PHASES
from ..units import format_bytes, format_seconds

VIEW_NOTES = {
    "wall": "wall view: kernel wall time, DMA hidden behind compute where tasklets overlap, launches included",
    "breakdown": "breakdown view: the study's instrumented accounting, compute + DMA summed, launch excluded",
}


def _title(r: Mapping[str, Any]) -> str:
    units = f"{r['dpus']} {r['unit']}s" if "unit" in r else f"{r['dpus']} DPUs x {r['tasklets']} tasklets"
    return f"{r['dataset']} · {r['model'].upper()} · {r['hardware']} · {units} · {r['scaling']} scaling"


def _labels(r: Mapping[str, Any]) -> dict[str, str]:
    """The phases' names in a record's architecture family (its ``phase_labels``; UPMEM's by default)."""
    return {**PHASE_LABELS, **r.get("phase_labels", {})}


def comparison_table(records: Sequence[Mapping[str, Any]]) -> Table:
    """Phases per epoch (rows) for several predictions (columns), with shares, totals and bottlenecks."""
    first = records[0]
    table = Table(title=_title(first), caption=VIEW_NOTES[first["view"]] + f" · calibration: {first['calibration']}")
    table.add_column("phase (per epoch)")
    for r in records:
        table.add_column(f"{r['optimizer']}\n{r['rounds_per_epoch']} rounds/epoch", justify="right")
    for phase in PHASES:
        cells = []
        for r in records:
            value, total = r["per_epoch_s"][phase], r["per_epoch_s"]["total"]
            share = value / total if total else 0.0
            text = f"{format_seconds(value)} ({share:5.1%})"
            cells.append(f"[bold red]{text}[/]" if phase == r["bottleneck"] else text)
        table.add_row(_labels(first)[phase], *cells)
    table.add_section()
    table.add_row("epoch", *(format_seconds(r["per_epoch_s"]["total"]) for r in records))
    table.add_row(f"total ({first['epochs']} epochs)", *(f"[bold]{format_seconds(r['total_s'])}[/]" for r in records))
    table.add_row("host<->PIM bytes/epoch", *(format_bytes(r["per_epoch_bytes"]["host_to_pim"]
                                                           + r["per_epoch_bytes"]["pim_to_host"]) for r in records))
    table.add_row("MRAM<->WRAM bytes/epoch", *(format_bytes(r["per_epoch_bytes"]["mram_to_wram"]
                                                            + r["per_epoch_bytes"]["wram_to_mram"]) for r in records))
    table.add_row("bottleneck", *(_labels(r)[r["bottleneck"]] for r in records))
    return table


def scaling_table(records: Sequence[Mapping[str, Any]], metrics: Sequence[Mapping[str, float]]) -> Table:
    first = records[0]
    strong = first["scaling"] == "strong"
    table = Table(title=f"{first['optimizer']} · " + _title(first).replace(f"{first['dpus']} DPUs", "N DPUs"),
                  caption=VIEW_NOTES[first["view"]])
    table.add_column("DPUs", justify="right")
    for phase in PHASES:
        table.add_column(_labels(first)[phase], justify="right")
    table.add_column("epoch", justify="right")
    table.add_column("speedup" if strong else "time growth", justify="right")
    if strong:
        table.add_column("efficiency", justify="right")
    table.add_column("bottleneck")
    for r, m in zip(records, metrics, strict=True):
        row = [str(r["dpus"]), *(format_seconds(r["per_epoch_s"][p]) for p in PHASES),
               format_seconds(r["per_epoch_s"]["total"])]
        row += [f"{m['speedup']:.2f}x", f"{m['efficiency']:.0%}"] if strong else [f"{m['time_growth']:.2f}x"]
        table.add_row(*row, _labels(r)[r["bottleneck"]])
    return table


def stdout_console() -> Console:
    """The console for tables: the terminal's width, or 160 columns when piped (no wrapped cells in logs)."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def print_table(table: Table) -> None:
    stdout_console().print(table)
