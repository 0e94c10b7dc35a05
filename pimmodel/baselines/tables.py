"""Rich tables for the baseline records (the same dicts ``--json`` prints). Rendering only, no computation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from ..units import format_seconds
from .phases import CPU_PHASES, GPU_PHASES, PHASE_LABELS

ERROR_BOUND = 0.25
"""The CPU model's acceptance bound against the measurements (issue #12)."""


def prediction_table(records: Sequence[Mapping[str, Any]]) -> Table:
    """Phases per epoch (rows) for several predictions (columns) of one device."""
    first = records[0]
    w = first["workload"]
    phases = CPU_PHASES if first["device"] == "cpu" else GPU_PHASES
    combine = "phases add up" if first["combine"] == "sum" else "concurrent stages: the slowest sets the epoch"
    title = (f"{first['device'].upper()} baseline · {first['spec']} · {w['name']} · {w['model'].upper()} · "
             f"{w['rows']:,} rows x {w['features']:,} features · {w['processes']} process(es)")
    caption = f"{combine} · {'validated' if first['validated'] else 'UNVALIDATED'}: {first['validation']}"
    table = Table(title=title, caption=caption)
    table.add_column("phase (per epoch)")
    for r in records:
        table.add_column(f"{r['workload']['optimizer']}\nbatch {r['workload']['batch_size']}, "
                         f"{r['steps_per_epoch']:,} steps", justify="right")
    for phase in phases:
        cells = []
        for r in records:
            value, total = r["per_epoch_s"][phase], r["per_epoch_s"]["total"]
            text = f"{format_seconds(value)} ({value / total:5.1%})" if total else format_seconds(value)
            cells.append(f"[bold red]{text}[/]" if phase == r["bottleneck"] else text)
        table.add_row(PHASE_LABELS.get(phase, phase), *cells)
    table.add_section()
    table.add_row("epoch", *(format_seconds(r["per_epoch_s"]["total"]) for r in records))
    ranged = [r.get("interval") for r in records]
    if any(ranged):
        lo_hi = next(i for i in ranged if i)["range"]
        table.add_row(f"epoch, {lo_hi[0]:g}-{lo_hi[1]:g} us all-reduce latency (A)",
                      *("-" if not i else f"{format_seconds(i['epoch_s'][0])} - {format_seconds(i['epoch_s'][1])}"
                        for i in ranged))
    table.add_row(f"total ({first['epochs']} epochs)", *(f"[bold]{format_seconds(r['total_s'])}[/]" for r in records))
    table.add_row("bottleneck", *(PHASE_LABELS.get(r["bottleneck"], r["bottleneck"]) for r in records))
    return table


def measure_table(report: Mapping[str, Any]) -> Table:
    """Measured against predicted epoch for every case of ``baseline measure``."""
    machine, summary = report["machine"], report["summary"]
    table = Table(title=f"CPU model vs real numpy training on this machine ({machine['cores']} cores, "
                        f"{machine['passes']} pass(es){', quick' if machine['quick'] else ''})",
                  caption=f"{int(summary['within_25_percent'])}/{int(summary['cases'])} cases within "
                          f"{ERROR_BOUND:.0%} · median |error| {summary['median_abs_rel_error']:.1%} · max "
                          f"{summary['max_abs_rel_error']:.1%} · measured = best pass, low quantile of ~1 ms chunks "
                          "(other tenants' interruptions rejected); wall = plain median epoch of that pass")
    for col in ("size", "optimizer", "model", "procs", "rows x features", "measured", "predicted", "error",
                "wall", "bottleneck"):
        table.add_column(col, justify="right" if col not in ("size", "optimizer", "model", "bottleneck") else "left")
    for c in report["cases"]:
        err = c["rel_error"]
        err_text = f"{err:+.1%}"
        table.add_row(c["size"], c["optimizer"], c["model"], str(c["processes"]), f"{c['rows']:,} x {c['features']:,}",
                      format_seconds(c["measured_s"]), format_seconds(c["predicted_s"]),
                      err_text if abs(err) <= ERROR_BOUND else f"[bold red]{err_text}[/]",
                      format_seconds(c["wall_s"]), c["bottleneck"])
    return table


def torch_table(report: Mapping[str, Any]) -> Table:
    """Measured against predicted epoch of the PyTorch/gloo cases (``torch_measure``)."""
    summary, spec = report["summary"], report["spec"]
    table = Table(title=f"CPU model vs PyTorch + gloo training on this machine ({report['processes']} processes)",
                  caption=f"{summary['within_25_percent']}/{summary['cases']} cases within {ERROR_BOUND:.0%} · "
                          f"median |error| {summary['median_abs_rel_error']:.1%} · error on the "
                          f"{summary['error_on']} · probed: call {spec['call_us']:.1f} us, indexing "
                          f"{spec['index_op_us']:.1f} us, ring step {spec['sync_latency_us']:.1f} us, "
                          f"{spec['sync_gb_per_s']:.2f} GB/s")
    for col in ("optimizer", "model", "procs", "measured", "predicted", "error", "bottleneck"):
        table.add_column(col, justify="left" if col in ("optimizer", "model", "bottleneck") else "right")
    for c in report["cases"]:
        err_text = f"{c['rel_error']:+.1%}"
        table.add_row(c["optimizer"], c["model"], str(c["processes"]), format_seconds(c["measured_s"]),
                      format_seconds(c["predicted_s"]),
                      err_text if abs(c["rel_error"]) <= ERROR_BOUND else f"[bold red]{err_text}[/]", c["bottleneck"])
    return table
