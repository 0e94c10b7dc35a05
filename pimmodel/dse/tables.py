"""Rich tables for study records and sensitivity records (rendering only; the records are plain data)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..report.tables import stdout_console

SHORT = {"dpu_compute": "compute", "mram_wram_dma": "dma", "host_to_pim": "to_pim", "pim_to_host": "to_host",
         "host_aggregate": "aggregate", "launch": "launch"}
FRONT_ROWS = 12
"""Designs shown in the tables (the JSON record has the whole front)."""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def front_table(record: Mapping[str, Any]) -> Table:
    """One row per design on the front: its objective values (units in the headers) and how many times
    better than the baseline each is."""
    objectives = record["objectives"]
    kind = "Pareto front" if len(objectives) > 1 else "best designs"
    shown = record["front"][:FRONT_ROWS]
    more = f", first {len(shown)} shown" if len(shown) < len(record["front"]) else ""
    t = Table(title=escape(f"{record['study']}: {kind} ({len(record['front'])} distinct designs{more}; "
                           f"{record['feasible']:,} feasible of {record['trials']:,} trials; baseline "
                           f"{record['baseline']['hardware']})"),
              caption="(Nx) = N times better than the baseline; 'same as' = other trials with the same "
                      "objective values")
    t.add_column("trial", justify="right", no_wrap=True)
    for o in objectives:
        t.add_column(escape(f"{o.get('label', o['name'])}\n({o['direction']})"), justify="right")
    t.add_column("same as", justify="right")
    base = record["baseline"]["objectives"]
    t.add_row("baseline", *("infeasible (no links)" if base[o["name"]] is None else _fmt(base[o["name"]])
                            for o in objectives), "", style="dim")
    for d in shown:
        cells = [_fmt(d["objectives"][o["name"]]) + ("" if d["improvement"][o["name"]] is None else
                                                     f" ({_fmt(d['improvement'][o['name']])}x)") for o in objectives]
        same = d.get("same_objectives", [])
        t.add_row(str(d["number"]), *cells, _same(same))
    return t


def _same(numbers: list[int]) -> str:
    if not numbers:
        return ""
    head = ", ".join(f"#{n}" for n in numbers[:2])
    return head + (f" +{len(numbers) - 2}" if len(numbers) > 2 else "")


def params_tables(record: Mapping[str, Any], width: int) -> list[Table]:
    """The parameters of the designs above (rows: parameters with their units; columns: designs), split
    into as many tables as needed so that no name or value is cut at ``width`` columns."""
    shown = record["front"][:FRONT_ROWS]
    labels = {name: p["label"] for name, p in record.get("parameters", {}).items()}
    params = list(labels) or sorted({p for d in shown for p in d["params"]})
    names = [labels.get(p, p) for p in params]
    cells = [[_fmt(d["params"].get(p, "")) for p in params] for d in shown]
    name_w = max((len(n) for n in names), default=9)
    col_w = max((len(c) for column in cells for c in column), default=4)
    col_w = max(col_w, max((len(f"#{d['number']}") for d in shown), default=4))
    per_table = max(1, (width - name_w - 4) // (col_w + 3))
    tables = []
    for first in range(0, len(shown), per_table):
        part = range(first, min(first + per_table, len(shown)))
        t = Table(title="parameters of the designs above (study units)" if first == 0 else None)
        t.add_column(escape("parameter [unit]"), no_wrap=True, min_width=name_w)
        for i in part:
            t.add_column(f"#{shown[i]['number']}", justify="right", no_wrap=True, min_width=col_w)
        for row, name in enumerate(names):
            t.add_row(escape(name), *(escape(cells[i][row]) for i in part))
        tables.append(t)
    return tables


def importance_table(record: Mapping[str, Any]) -> Table:
    imps = record["importances"]
    labels = {name: escape(p["label"]) for name, p in record.get("parameters", {}).items()}
    t = Table(title="parameter importance (PED-ANOVA, feasible designs)")
    t.add_column(escape("parameter [unit]"), no_wrap=True)
    for name in imps:
        t.add_column(name, justify="right")
    params = sorted({p for imp in imps.values() for p in imp},
                    key=lambda p: -max(imp.get(p, 0.0) for imp in imps.values()))
    for p in params:
        t.add_row(labels.get(p, p), *(f"{imps[n].get(p, 0.0):.3f}" for n in imps))
    return t


def print_study(record: Mapping[str, Any]) -> None:
    console = stdout_console()
    if not record["front"]:
        console.print(escape(f"{record['study']}: no feasible design among {record['trials']} trials"))
    else:
        console.print(front_table(record))
        for table in params_tables(record, console.width):
            console.print(table)
    if record["importances"]:
        console.print(importance_table(record))
    for p in record.get("plots", []):
        console.print(escape(f"wrote {p}"), highlight=False)
    console.print(escape(f"stored in {record['storage']}"), highlight=False)
    if record.get("dashboard"):
        console.print(escape(f"dashboard: {record['dashboard']}  (pip install 'pimmodel[dashboard]'; or "
                             f"pimmodel explore show STUDY.toml --dashboard)"), highlight=False)
    if record.get("optuna"):
        console.print(escape(f"optuna: {record['optuna']}"), highlight=False)


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
