"""``pimmodel explore`` (design-space search with Optuna) and ``pimmodel sensitivity``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import StudyError
from . import options as O

Storage = Annotated[str | None, typer.Option("--storage", help="Optuna storage URL. Default: journal://"
                                             "pimmodel-studies.log (a journal file in the current directory; "
                                             "journal:///abs/path.log, or a file on a shared file system for "
                                             "many machines); sqlite:///file.db; postgresql+psycopg://user@host/db "
                                             "for many machines (pip install 'pimmodel[postgres]').")]


def explore_command(
    study: Annotated[str, typer.Argument(help="Study file (studies/*.toml), or 'show' followed by the file.")],
    show_target: Annotated[str | None, typer.Argument(metavar="[STUDY.toml]", help="With 'show': the study.",
                                                      show_default=False)] = None,
    trials: Annotated[int | None, typer.Option("--trials", min=1, help="New trials to run (default: the "
                                               "study's 'trials').")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0.1, help="Stop after this many seconds.")] = None,
    storage: Storage = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Local worker processes on one storage.")] = 1,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Sampler seed (default: the study's).")] = None,
    resume_anyway: Annotated[bool, typer.Option("--resume-anyway", help="Add trials to a stored study of the "
                                                "same name even though the study file's definition changed.")
                             ] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Directory for pareto_front.png, history.png, "
                                              "importances.png.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the study record as JSON.")] = False,
) -> None:
    """Search hypothetical PIM hardware for a study (objectives, constraints, parameters in STUDY.toml).

    Re-running a study name on the same storage resumes it when the study's definition is unchanged.
    Ctrl-C stops after the current batch is stored. `pimmodel explore show STUDY.toml --storage URL`
    reprints a stored study without running trials. --json prints {"study", "storage", "trials",
    "feasible", "front": [{"params", "objectives", "improvement"}], "baseline", "importances",
    "dashboard"}.
    """
    from ..dse.space import load_study
    from ..dse.storage import DEFAULT_STORAGE

    show = study == "show"
    path = show_target if show else study
    if path is None:
        raise StudyError("explore show needs the study file: pimmodel explore show STUDY.toml --storage URL")
    if not show and show_target is not None:
        raise StudyError(f"unexpected argument {show_target!r}; use 'pimmodel explore STUDY.toml [options]'")
    spec = load_study(path)
    url = storage or DEFAULT_STORAGE
    if not show:
        _run(spec, url, trials or spec.trials, timeout, seed, workers, resume_anyway, quiet=json)
    _report(spec, url, plot, json)


def _run(spec: Any, url: str, trials: int, timeout: float | None, seed: int | None, workers: int,
         resume_anyway: bool, quiet: bool) -> None:
    """Run the trials with a progress bar (on a terminal); say where the results go, and on Ctrl-C what
    was kept."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..dse.study import OpenedStudy, StopRequest, run_workers

    console = Console(stderr=True)
    out = Console(highlight=False, soft_wrap=True, markup=False)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("best {task.fields[best]}"))
    stored = [0]
    shown = [url]

    def opened(study: OpenedStudy, count: int | None) -> None:
        shown[0] = study.location.shown
        if quiet:
            return
        processes = f"{workers} worker processes" if workers > 1 else "1 process"
        if study.existed:
            have = f"{count:,} trials stored, " if count is not None else ""
            out.print(f"{spec.name}: resuming the study in {shown[0]} ({have}{trials:,} more, {processes})")
        else:
            out.print(f"{spec.name}: new study in {shown[0]} ({trials:,} trials, {processes})")

    with Progress(*columns, console=console, disable=not sys.stderr.isatty(), transient=False) as bar, \
            StopRequest() as stop:
        task = bar.add_task(f"{spec.name} ({spec.objectives[0].name})", total=trials, best="-")

        def progress(done: int, best: float | None) -> None:
            stored[0] = done
            if best is None:
                bar.update(task, completed=min(done, trials))
            else:
                bar.update(task, completed=min(done, trials), best=f"{best:.4g}")

        try:
            result = run_workers(spec, url, trials, timeout, seed, workers, progress, resume_anyway, stop, opened)
        except KeyboardInterrupt:  # a second Ctrl-C: stopped at once
            raise StudyError(f"interrupted; at least {stored[0]:,} new trials stored in {shown[0]}; re-run the "
                             "same command to resume") from None
    if result.interrupted:
        raise StudyError(f"interrupted; {result.added:,} new trials stored in {result.storage}; re-run the same "
                         "command to resume")


def _report(spec: Any, url: str, plot: Path | None, as_json: bool) -> None:
    from ..dse.result import summarize
    from ..dse.study import stored_trials

    trials = stored_trials(spec, url)
    record = summarize(spec, url, trials=trials)
    if plot is not None:
        from ..dse.plots import write_plots

        record["plots"] = [str(p) for p in write_plots(spec, record, trials, plot)]
    if as_json:
        from ..report.json import emit

        emit(record)
        return
    from ..dse.tables import print_study

    print_study(record)


def sensitivity_command(
    hardware: O.Hardware = "upmem-2556",
    dataset: O.Dataset = "yfcc100m-hnfc6",
    model: O.Model = "lr",
    optimizer: O.Optimizer = "ma-sgd",
    dpus: Annotated[int, typer.Option("--dpus", help="Number of DPUs.")] = 2048,
    tasklets: O.Tasklets = 16,
    scaling: O.Scaling = "weak",
    batch_size: O.BatchSize = None,
    global_batch_size: O.GlobalBatch = None,
    view: O.View = "wall",
    features: O.Features = None,
    nonzeros: O.Nonzeros = None,
    rows_per_dpu: O.RowsPerDpu = None,
    layout: O.Layout = None,
    calibration: O.Calibration = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Parameters listed.")] = 12,
    json: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
) -> None:
    """Elasticities d ln T / d ln p of the epoch time and of each phase w.r.t. every hardware parameter
    (exact symbolic derivatives), ranked, plus what-if lines for all three optimizers. Takes the same workload
    options as `pimmodel predict`."""
    # lazy imports keep the CLI's cold start fast
    from ..calibration.result import load_calibration
    from ..dse.sensitivity import sensitivity

    hw = O.hardware(hardware)
    ds = O.dataset_from_options(dataset, features, nonzeros, rows_per_dpu, layout)
    w = O.make_workload(ds, model, optimizer, dpus, tasklets, scaling, 1, batch_size, global_batch_size)
    record = sensitivity(w, hw, view, load_calibration(calibration))
    if json:
        # lazy imports keep the CLI's cold start fast
        from ..report.json import emit

        emit(record)
        return
    # lazy imports keep the CLI's cold start fast
    from ..dse.tables import print_sensitivity

    print_sensitivity(record, top)


def register(app: typer.Typer) -> None:
    app.command("explore")(explore_command)
    app.command("sensitivity")(sensitivity_command)
