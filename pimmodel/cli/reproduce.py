"""``pimmodel reproduce``: the PIM-Opt study's figures (Figs. 2 and 4-13) computed from the models."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import StudyError
from . import options as O

if TYPE_CHECKING:
    from ..reproduce import FigureSpec

ALL = "all"


def _specs(figure: str | None) -> list[FigureSpec]:
    from ..reproduce import load_all, load_figure

    if figure is None:
        raise StudyError("give a figure (e.g. fig5), 'all', or --list to see them")
    return load_all() if figure.lower() == ALL else [load_figure(figure)]


def _list(json: bool) -> None:
    from ..reproduce import load_all

    specs = load_all()
    rows = [{"id": s.id, "title": s.title, "shows": s.shows, "kind": s.kind, "dataset": s.dataset,
             "trains": s.trains, "study_file": s.path} for s in specs]
    if json:
        from ..report.json import emit

        emit({"figures": rows, "provenance": O.provenance()})
        return
    from rich.table import Table

    from ..report.tables import print_table

    table = Table(title="The PIM-Opt study's figures with data (pimmodel reproduce FIGURE | all)",
                  caption="studies/pim-opt/figNN.toml describe them")
    for name in ("id", "title", "what it shows"):
        table.add_column(name, overflow="fold")
    for r in rows:
        table.add_row(str(r["id"]), str(r["title"]), str(r["shows"]))
    print_table(table)


def _print(records: list[dict[str, Any]], output: Path) -> None:
    from ..report.study_figures import rich_table
    from ..report.tables import print_table

    if len(records) == 1:
        r = records[0]
        print_table(rich_table(r))
        typer.echo(f"study found: {r['study_finding']}")
        for line in r["model_says"]:
            typer.echo(f"model says: {line}")
        for note in r["notes"]:
            typer.echo(f"note: {note}", err=True)
    else:
        from rich.table import Table

        table = Table(title="Reproduced figures of the PIM-Opt study", caption=f"PNG, JSON and Markdown in {output}")
        for name in ("figure", "study found", "model says (first of several, see the .md)"):
            table.add_column(name, overflow="fold")
        for r in records:
            table.add_row(r["figure"]["id"], r["study_finding"], r["model_says"][0] if r["model_says"] else "")
        print_table(table)


def reproduce_command(
    figure: Annotated[str | None, typer.Argument(help="fig2, fig4 ... fig13 (or 5, fig05), 'all', or a figure "
                                                 "file (studies/pim-opt/*.toml).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the figures: id, title, what each shows.")] = False,
    output: Annotated[Path, typer.Option("--output", help="Folder for FIG.png, FIG.json and FIG.md (created if "
                                         "missing).")] = Path("pim-opt-figures"),
    hardware: O.Hardware = "upmem-2556",
    workers: Annotated[int, typer.Option("--workers", help="Processes that train the accuracy stand-ins.")] = 2,
    json: O.Json = False,
) -> None:
    """Reproduce the study's figures from the models: PIM time from the cost model, CPU and GPU time from the
    baseline models, accuracy or AUC per epoch from stand-in training (cached after the first run).

    Writes FIG.png (the figure), FIG.json (the data behind it) and FIG.md (a short table, the study's finding
    next to what the model says, and what the model cannot know) for each figure, and prints the table.
    --json prints the record (for 'all': {"output", "figures": [...]}).
    """
    if list_:
        if figure is not None:
            raise StudyError(f"--list lists every figure and takes no figure; drop {figure!r} (or drop --list to "
                             "reproduce it)")
        _list(json)
        return
    specs = _specs(figure)
    if workers < 1:
        raise StudyError(f"--workers must be a positive whole number, got {workers}")
    from ..reproduce import check_output_dir  # lazy imports keep the CLI's cold start fast

    made = [p for p in (output, *output.parents) if not p.exists()]  # the folders check_output_dir creates
    folder = check_output_dir(output)  # before any work
    try:
        records, todo, setup, elapsed = _run(specs, folder, hardware, workers)
    except BaseException:
        _remove_empty(made)  # an error before the first figure leaves no empty folder behind
        raise
    if json:
        from ..report.json import emit

        every = {"output": str(folder), "figures": records,
                 "provenance": O.provenance(setup.hardware, setup.calibration)}
        emit(records[0] if len(specs) == 1 and figure and figure.lower() != ALL else every)
    else:
        _print(records, folder)
    typer.echo(f"wrote {len(records)} figure(s) (PNG, JSON, Markdown) to {folder} in {elapsed:.0f} s; "
               f"{len(todo.missing)} stand-in curve(s) trained", err=True)


def _remove_empty(folders: list[Path]) -> None:
    import contextlib

    for folder in folders:  # the deepest first
        with contextlib.suppress(OSError):
            folder.rmdir()  # only an empty folder goes


def _run(specs: list[Any], folder: Path, hardware: str, workers: int) -> tuple[list[dict[str, Any]], Any, Any,
                                                                                 float]:
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from ..reproduce import Setup, plan, reproduce
    from .logs import Task, estimate_text, measured_rate, record_rate

    setup = Setup.default(O.hardware(hardware, "reproduce"))
    todo = plan(specs, setup)
    curve_key, figure_key = f"reproduce:curve:{workers}-workers", "reproduce:figure"
    figure_rate = measured_rate(figure_key)
    estimate = estimate_text([(len(todo.missing), f"stand-in curves to train ({workers} workers)",
                               measured_rate(curve_key)),
                              (len(specs), "figure(s) from cached curves", figure_rate)])
    start = time.perf_counter()
    what = f"training {len(todo.missing)} stand-ins (cached afterwards)" if todo.missing else "computing figures"
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    noun = "figure" if len(specs) == 1 else "figures"
    with Task(f"reproducing {len(specs)} {noun}", todo.steps, columns, label=what, unit="steps",
              estimate=estimate) as task:

        def step(text: str) -> None:
            task.update(advance=1, description=text)

        def status(text: str) -> None:
            task.update(description=text, say=True)

        with O.on_interrupt(lambda: "the stand-in curves trained so far are cached; rerun to go on"):
            records = reproduce(specs, setup, folder, workers, step, status)
    elapsed = time.perf_counter() - start
    if todo.missing:
        figures_s = 0.0 if figure_rate is None else figure_rate.s_per_unit * len(specs)
        record_rate(curve_key, max(elapsed - figures_s, 1e-3), len(todo.missing))
    else:
        record_rate(figure_key, elapsed, len(specs))
    return records, todo, setup, elapsed


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce_command)
