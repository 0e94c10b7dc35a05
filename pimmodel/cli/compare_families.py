"""``pimmodel compare-families``: the study's three findings on each architecture family."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from . import options as O

VERDICT_STYLE = {"holds": "green", "flips": "red", "vanishes": "yellow", "cannot run": "dim"}


def compare_families_command(
    hardware: Annotated[str, typer.Option("--hardware", help="Comma-separated hardware specs, one per family to "
                                          "compare (names in hardware_specs/ or TOML files).")
                        ] = "upmem-2556,hbm-pim-aquabolt",
    dataset: Annotated[str, typer.Option("--dataset", help="Comma-separated datasets of the study "
                                         "(yfcc100m-hnfc6, criteo-1tb).")] = "yfcc100m-hnfc6,criteo-1tb",
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the phase split of each spec side by side "
                                              "(.png/.svg/.pdf).")] = None,
    output: O.Output = None,
    json: O.Json = False,
) -> None:
    """Do the PIM-Opt study's findings hold, flip or vanish on another kind of PIM?

    For each spec and dataset: (1) the optimizer decides (ADMM communicates an order of magnitude less than
    MA-SGD, MA-SGD less than GA-SGD), (2) host communication + sync is the bottleneck of MA-SGD and GA-SGD, (3) no
    near-linear weak scaling from N/8 to N units, with the criteria `pimmodel validate --group finding` checks on
    UPMEM (validation/findings.toml), at the study's configurations on N = 2,048 units or the system's largest
    power of two. --json prints {"comparisons": [{"hardware", "family", "dataset", "units", "rows_per_unit",
    "findings": {"optimizer", "communication", "scaling"}, ...}], "provenance"}.
    """
    # lazy imports keep the CLI's cold start fast
    from ..comparison.families import findings_on
    from ..specs import DATASETS

    O.check_output(output)
    O.check_plot(plot)
    specs = [O.hardware(name, "compare-families") for name in O.parse_name_list(hardware, "--hardware",
                                                                                 _names(hardware))]
    datasets = O.parse_name_list(dataset, "--dataset", tuple(DATASETS))
    records = [findings_on(hw, ds) for ds in datasets for hw in specs]
    if plot is not None:
        from ..report.plots import family_split_plot  # lazy imports keep the CLI's cold start fast

        family_split_plot(records, plot)
        typer.echo(f"plot written to {plot}", err=True)
    if O.finish({"comparisons": records, "provenance": O.provenance()}, output, "comparisons", json):
        return
    _print(records)


def _names(text: str) -> tuple[str, ...]:
    """Every entry is accepted here; ``O.hardware`` refuses an unknown one with its own one-line error."""
    return tuple(part.strip() for part in text.split(","))


def _print(records: list[dict[str, Any]]) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    from ..report.tables import print_table

    table = Table(title="the study's findings per architecture family")
    for col in ("dataset", "hardware", "family", "units", "the optimizer decides", "comm. is the bottleneck",
                "no near-linear scaling"):
        table.add_column(col, overflow="fold")
    for r in records:
        f = r["findings"]
        cells = [_cell(f[k], r) for k in ("optimizer", "communication", "scaling")]
        table.add_row(r["dataset"], r["hardware"], r["family"], f"{r['units']:,} {r['unit']}s", *cells)
    print_table(table)
    for r in records:
        if "note" in r:
            typer.echo(f"note: {r['hardware']}, {r['dataset']}: {r['note']}", err=True)
        if not r["runs"]:
            typer.echo(f"cannot run: {r['hardware']}, {r['dataset']}: {r['findings']['optimizer']['why']}", err=True)


def _cell(finding: dict[str, Any], record: dict[str, Any]) -> str:
    verdict = finding["verdict"]
    style = VERDICT_STYLE.get(verdict, "")
    if "why" in finding:
        return f"[{style}]{verdict}[/] (below)"
    if "admm_over_ma_sgd" in finding:
        detail = (f"comm. ADMM/MA-SGD {finding['admm_over_ma_sgd']:.2g}x, MA-SGD/GA-SGD "
                  f"{finding['ma_sgd_over_ga_sgd']:.2g}x")
    elif "comm_over_pim_side" in finding:
        values = finding["comm_over_pim_side"]
        detail = f"comm./PIM side {min(values.values()):.2g}-{max(values.values()):.2g}x"
    else:
        values = finding["efficiency"]
        detail = f"efficiency {min(values.values()):.0%}-{max(values.values()):.0%}"
    return f"[{style}]{verdict}[/] ({detail})"


def register(app: typer.Typer) -> None:
    app.command("compare-families")(compare_families_command)
