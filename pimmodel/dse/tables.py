"""Rich tables for study records and sensitivity records (rendering only; the records are plain data)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..report.tables import stdout_console

SHORT = {"dpu_compute": "compute", "mram_wram_dma": "dma", "host_to_pim": "to_pim", "pim_to_host": "to_host",
         "host_aggregate": "aggregate", "launch": "launch"}
FRONT_ROWS = 12
"""Designs shown in the table (the JSON record has the whole front)."""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def front_table(record: Mapping[str, Any]) -> Table:
    names = [o["name"] for o in record["objectives"]]
    kind = "Pareto front" if len(names) > 1 else "best designs"
    shown = record["front"][:FRONT_ROWS]
    t = Table(title=f"{record['study']}: {kind} ({len(record['front'])} designs, {record['feasible']} feasible of "
              f"{record['trials']} trials; baseline {record['baseline']['hardware']})")
    t.add_column("trial", justify="right")
    for o in record["objectives"]:
        t.add_column(f"{o['name']}\n({o['direction']})", justify="right")
    base = record["baseline"]["objectives"]
    t.add_row("baseline", *(_fmt(base[n]) for n in names), style="dim")
    for d in shown:
        cells = [f"{_fmt(d['objectives'][n])} ({_fmt(d['improvement'][n])}x)" for n in names]
        t.add_row(str(d["number"]), *cells)
    return t


def params_table(record: Mapping[str, Any]) -> Table:
    shown = record["front"][:FRONT_ROWS]
    t = Table(title="parameters of the designs above (study units)")
    t.add_column("parameter")
    for d in shown:
        t.add_column(f"#{d['number']}", justify="right")
    params = sorted({p for d in shown for p in d["params"]})
    for p in params:
        t.add_row(p, *(_fmt(d["params"].get(p, "")) for d in shown))
    return t


def importance_table(record: Mapping[str, Any]) -> Table:
    imps = record["importances"]
    t = Table(title="parameter importance (PED-ANOVA, feasible designs)")
    t.add_column("parameter")
    for name in imps:
        t.add_column(name, justify="right")
    params = sorted({p for imp in imps.values() for p in imp},
                    key=lambda p: -max(imp.get(p, 0.0) for imp in imps.values()))
    for p in params:
        t.add_row(p, *(f"{imps[n].get(p, 0.0):.3f}" for n in imps))
    return t


def print_study(record: Mapping[str, Any]) -> None:
    console = stdout_console()
    if not record["front"]:
        console.print(f"{record['study']}: no feasible design among {record['trials']} trials")
    else:
        console.print(front_table(record))
        console.print(params_table(record))
    if record["importances"]:
        console.print(importance_table(record))
    for p in record.get("plots", []):
        console.print(f"wrote {p}")


def print_sensitivity(record: Mapping[str, Any], top: int) -> None:
    console = stdout_console()
    phases = list(record["phases_s"])
    t = Table(title=f"elasticity d ln T / d ln p: {record['workload']} on {record['hardware']} "
              f"({record['view']} view, epoch {record['epoch_s']:.4g} s)")
    t.add_column("parameter", no_wrap=True)
    t.add_column("value", justify="right", no_wrap=True)
    t.add_column("epoch", justify="right", style="bold", no_wrap=True)
    for ph in phases:
        t.add_column(SHORT.get(ph, ph), justify="right", no_wrap=True)
    for row in record["elasticities"][:top]:
        t.add_row(row["parameter"], f"{row['value']:.4g}", f"{row['epoch']:+.3f}",
                  *(f"{row['phases'][ph]:+.3f}" for ph in phases))
    console.print(t)
    for line in record["what_if"]:
        console.print(line["text"])
