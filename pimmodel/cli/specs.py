"""``pimmodel specs list``, ``pimmodel specs show NAME`` and ``pimmodel specs schema KIND``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from . import options as O

specs_app = typer.Typer(help="List and show hardware specifications (hardware_specs/*.toml); print the "
                                 "schema of every input file kind.",
                        no_args_is_help=True, rich_markup_mode=None)


@specs_app.command("list")
def list_command(output: O.Output = None, json: O.Json = False) -> None:
    """The shipped hardware specs, one line each."""
    # lazy imports keep the CLI's cold start fast
    from ..specs import hardware_names, load_hardware
    from ..specs.architectures import architecture_of

    O.check_output(output)
    rows: list[dict[str, Any]] = []
    for name in hardware_names():
        hw = load_hardware(name)
        info = architecture_of(hw)
        rows.append({"name": name, "family": info.name, "description": hw.description, "dpus": hw.dpus_available,
                     "unit": info.unit, "clock_hz": getattr(hw, info.clock)})
    if O.finish({"hardware": rows, "provenance": O.provenance()}, output, "hardware", json):
        return
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    # lazy imports keep the CLI's cold start fast
    from ..report.tables import print_table

    table = Table(title="hardware specs")
    for col in ("name", "family", "units", "clock", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["family"], f"{r['dpus']:,} {r['unit']}s", f"{r['clock_hz'] / 1e6:g} MHz",
                      r["description"])
    print_table(table)


@specs_app.command("show")
def show_command(name: Annotated[str, typer.Argument(help="A spec name or a TOML file.")], json: O.Json = False,
                 toml: Annotated[bool, typer.Option("--toml", help="Print the spec as TOML.")] = False,
                 output: O.Output = None) -> None:
    """Every constant of one spec with its unit and source."""
    # lazy imports keep the CLI's cold start fast
    from ..specs import load_hardware, to_toml
    from ..specs.architectures import architecture_of, fields_of

    O.check_output(output)
    hw = load_hardware(name)
    if toml:
        typer.echo(to_toml(hw), nl=False)
        return
    fields: list[dict[str, Any]] = [{"section": f.section, "key": f.key, "value": getattr(hw, f.name) / f.scale,
               "si_name": f.name, "si_value": getattr(hw, f.name), "source": hw.sources.get(f.name, "")}
              for f in fields_of(hw)]
    record = {"name": hw.name, "family": architecture_of(hw).name, "description": hw.description,
              "link_topology": hw.link_topology, "fields": fields}
    if O.finish({**record, "provenance": O.provenance(hw)}, output, "fields", json):
        return
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    # lazy imports keep the CLI's cold start fast
    from ..report.tables import print_table

    table = Table(title=f"{hw.name}: {hw.description}", caption=f"inter-DPU links: {hw.link_topology}")
    for col in ("section", "key", "value", "source"):
        table.add_column(col, overflow="fold")
    for f in fields:
        table.add_row(f["section"], f["key"], f"{f['value']:g}", f["source"])
    print_table(table)


SCHEMA_KINDS: dict[str, tuple[str, str]] = {
    "hardware": ("pimmodel.specs.hardware:schema", "UPMEM-like hardware spec (hardware_specs/*.toml)"),
    "bank-simd": ("pimmodel.specs.bank_simd:schema", "bank-level SIMD PIM hardware spec (family = \"bank-simd\")"),
    "cpu": ("pimmodel.baselines.specs:cpu_schema", "CPU baseline spec (hardware_specs/cpu/*.toml)"),
    "gpu": ("pimmodel.baselines.specs:gpu_schema", "GPU baseline spec (hardware_specs/gpu/*.toml)"),
    "dataset": ("pimmodel.specs.workload:dataset_schema", "dataset file (--dataset FILE.toml)"),
    "study": ("pimmodel.dse.space:study_schema", "design-space study (pimmodel explore STUDY.toml)"),
    "figure": ("pimmodel.reproduce.spec:figure_schema", "figure of the study (studies/pim-opt/figNN.toml)"),
}
"""Every input file kind: where its schema is built (``specs.schema``) and what it describes."""
_KIND_HELP = "The input file kind: " + "; ".join(f"{k} = {d}" for k, (_, d) in SCHEMA_KINDS.items()) + "."


@specs_app.command("schema", help="Print the schema of an input file kind: its keys, what each takes and whether "
                                  "it is required (--json: its JSON Schema). " + _KIND_HELP)
def schema_command(kind: Annotated[str, typer.Argument(metavar="KIND", help=_KIND_HELP, show_default=False)],
                   json: Annotated[bool, typer.Option("--json", help="Print the kind's JSON Schema.")] = False
                   ) -> None:
    # lazy imports keep the CLI's cold start fast
    from ..errors import check_known
    from ..specs.architectures import resolve

    check_known("schema kind", kind, SCHEMA_KINDS)
    struct = resolve(SCHEMA_KINDS[kind][0])()
    if json:
        # lazy imports keep the CLI's cold start fast
        from ..report.json import emit

        if kind == "dataset":
            from ..specs.workload import dataset_json_schema

            document = dataset_json_schema()
        else:
            from ..specs.schema import json_schema

            document = json_schema(struct)
        emit({**document, "provenance": O.provenance()})  # an unknown keyword, which JSON Schema ignores
        return
    from ..specs.schema import outline

    typer.echo(f"# {kind}: {SCHEMA_KINDS[kind][1]}")
    for key, takes, required, doc in outline(struct):
        typer.echo(f"{key}: {takes}{'' if required else ' (optional)'}{f'  # {doc}' if doc else ''}")


def register(app: typer.Typer) -> None:
    app.add_typer(specs_app, name="specs")
