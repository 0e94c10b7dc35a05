"""``pimmodel validate``: the model against the emulator, published measurements and the study's findings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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
    "tolerance", "ok", ...}], "provenance"}.
    """
    # lazy imports keep the CLI's cold start fast
    from ..calibration.result import load_calibration
    from ..validation import GROUPS, validate

    if plot is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.plots import check_plot_path

        check_plot_path(plot)
    groups = O.parse_name_list(group, "--group", GROUPS)
    report = validate(O.hardware(hardware), groups, load_calibration(calibration))
    record = report.to_record()
    if plot is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.validation_plot import validation_plot

        validation_plot(record, plot)
    if json:
        # lazy imports keep the CLI's cold start fast
        from ..api import provenance
        from ..report.json import emit

        emit({**record, "provenance": provenance(hardware, calibration).to_record()})
    else:
        _print(record, failures_only)
        if plot is not None:
            typer.echo(f"plot written to {plot}", err=True)
    if not report.ok:
        raise typer.Exit(code=1)


TABLE_COLUMNS = 80
"""The table's widest line: it fits a classic terminal, and logs (no terminal: 160 columns) stay readable."""
LEGEND = "ref.: emulator, PrIM measurement or the study's number; error = model / ref. - 1"
GROUP_TITLES = {"emulator": "model vs emulator (held-out configurations)",
                "published": "model vs PrIM measurements of UPMEM",
                "finding": "the PIM-Opt study's findings"}


def _print(record: dict, failures_only: bool) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich.text import Text

    from ..report.tables import stdout_console

    console = stdout_console()
    width = min(console.width, TABLE_COLUMNS)
    console.print(Text(f"validation on {record['hardware']} · calibration: {record['calibration']}"), width=width)
    console.print(Text(LEGEND), width=width)
    cases = [c for c in record["cases"] if not (failures_only and c["ok"])]
    for group in dict.fromkeys(c["group"] for c in cases):
        console.print(_group_table(group, [c for c in cases if c["group"] == group], width))
    failed = sum(not c["ok"] for c in record["cases"])
    console.print(Text(f"{len(record['cases'])} cases, {failed} failed" + ("" if failed else " - all pass")))


def _group_table(group: str, cases: list[dict], width: int) -> Any:
    """One group's cases. A case with several phases: its name on a row, then one row per phase; one phase: one
    row. The unit follows the phase; the error is signed (predicted / reference - 1)."""
    # lazy imports keep the CLI's cold start fast
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{group}: {GROUP_TITLES.get(group, '')}", title_justify="left", box=box.SIMPLE_HEAD,
                  show_edge=False, padding=(0, 0), width=width)
    table.add_column("case · phase [unit]", ratio=1, overflow="fold")
    for col in ("ref.", "model", "error", "tol", ""):
        table.add_column(col, justify="right", no_wrap=True)
    phases: dict[str, int] = {}
    for c in cases:
        phases[c["name"]] = phases.get(c["name"], 0) + 1
    previous = None
    for c in cases:
        phase = f"{c['phase']} [{c['unit']}]" if c["unit"] else c["phase"]
        if phases[c["name"]] == 1:
            label = f"{c['name']} · {phase}"
        else:
            if c["name"] != previous:
                table.add_row(Text(c["name"]))
            label = f"  {phase}"
        previous = c["name"]
        bound = {"within": "±", "below": "<", "above": ">"}[c["kind"]]
        table.add_row(Text(label), f"{c['reference']:.3g}", f"{c['predicted']:.3g}", _signed(c["rel_error"]),
                      f"{bound}{c['tolerance']:.0%}", Text("ok", "green") if c["ok"] else Text("FAIL", "red"))
    return table


def _signed(error: float) -> str:
    """A signed percentage; an error that rounds to zero shows no sign."""
    text = f"{error:+.1%}"
    return text[1:] if text in ("+0.0%", "-0.0%") else text


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
