"""``pimmodel validate``: the model against the emulator, published measurements and the study's findings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import options as O

Groups = Annotated[str, typer.Option("--group", help="Comma-separated groups: emulator, published, finding, "
                                     "hardware (real UPMEM PrIM kernel times; not in the default).")]


def validate_command(
    hardware: O.Hardware = "upmem-2556",
    group: Groups = "emulator,published,finding",
    calibration: Annotated[Path | None, typer.Option("--calibration", help="Calibration file (default: the "
                                                     "shipped one; 'defaults' = unfitted).")] = None,
    failures_only: Annotated[bool, typer.Option("--failures", help="Show only the failing cases.")] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write predicted vs reference (log-log, with the "
                                              "tolerance band) to a .png/.svg/.pdf file.")] = None,
    json: O.Json = False,
) -> None:
    """Validate the cost model: every case with its reference, prediction, relative error and tolerance.

    Groups: emulator (model vs emulator on held-out configurations, 5 % per phase >= 1 % of the epoch),
    published (PrIM measurements of the real UPMEM system, evaluated as microbenchmark workloads), finding
    (the PIM-Opt study's qualitative findings at its configurations). Exit code 1 when any case fails.
    --json prints {"ok", "cases": [{"group", "name", "phase", "reference", "predicted", "rel_error",
    "tolerance", "ok", ...}]}.
    """
    # lazy imports keep the CLI's cold start fast
    from ..calibration.result import load_calibration
    from ..validation import validate

    if plot is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.plots import check_plot_path

        check_plot_path(plot)
    groups = [g.strip() for g in group.split(",") if g.strip()]
    report = validate(O.hardware(hardware), groups, load_calibration(calibration))
    record = report.to_record()
    if plot is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.validation_plot import validation_plot

        validation_plot(record, plot)
    if json:
        # lazy imports keep the CLI's cold start fast
        from ..report.json import emit

        emit(record)
    else:
        _print(record, failures_only)
        if plot is not None:
            typer.echo(f"plot written to {plot}", err=True)
    if not report.ok:
        raise typer.Exit(code=1)


def _print(record: dict, failures_only: bool) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    # lazy imports keep the CLI's cold start fast
    from ..report.tables import stdout_console

    cases = [c for c in record["cases"] if not (failures_only and c["ok"])]
    table = Table(title=f"validation on {record['hardware']} · calibration: {record['calibration']}")
    for col in ("group", "case", "phase", "reference", "predicted", "error", "tolerance", ""):
        table.add_column(col, justify="right" if col in ("reference", "predicted", "error", "tolerance") else "left")
    for c in cases:
        bound = {"within": "±", "below": "<", "above": ">"}[c["kind"]]
        table.add_row(c["group"], c["name"], c["phase"], f"{c['reference']:.4g} {c['unit']}",
                      f"{c['predicted']:.4g} {c['unit']}", f"{c['rel_error']:+.1%}", f"{bound}{c['tolerance']:.0%}",
                      "[green]ok[/]" if c["ok"] else "[red]FAIL[/]")
    console = stdout_console()
    console.print(table)
    failed = sum(not c["ok"] for c in record["cases"])
    console.print(f"{len(record['cases'])} cases, {failed} failed" + ("" if failed else " - all pass"))


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
