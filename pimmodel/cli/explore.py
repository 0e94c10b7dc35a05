"""``pimmodel explore`` (design-space search with Optuna) and ``pimmodel sensitivity``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import SEED_MAX, StudyError
from . import options as O

Storage = Annotated[str | None, typer.Option(
    "--storage", envvar="PIMMODEL_STORAGE", show_envvar=True,
    help="Where the study is stored, in the forms optuna and optuna-dashboard take: a journal file's path "
         "(default pimmodel-studies.log in the current directory; a file on a shared file system for many "
         "machines), sqlite:///file.db, postgresql+psycopg://user@host/db (pip install 'pimmodel[postgres]') or "
         "redis://host:port/db (pip install 'pimmodel[redis]'). journal://PATH (pimmodel <= 0.1) is still read.")]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Also write the record to a file: .json (as "
                                             "--json prints it), .csv or .parquet (one row per design on the "
                                             "front, with the provenance columns).")]
DEFAULT_PORT = 8080


def explore_command(
    study: Annotated[str, typer.Argument(help="Study file (studies/*.toml), or 'show' followed by the file.")],
    show_target: Annotated[str | None, typer.Argument(metavar="[STUDY.toml]", help="With 'show': the study.",
                                                      show_default=False)] = None,
    trials: Annotated[int | None, typer.Option("--trials", min=1, help="New trials to run (default: the "
                                               "study's 'trials').")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0.1, help="Stop after this many seconds.")] = None,
    storage: Storage = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Local worker processes on one storage.")] = 1,
    seed: Annotated[int | None, typer.Option("--seed", min=0, max=SEED_MAX,
                                             help="Sampler seed (default: the study's).")] = None,
    resume_anyway: Annotated[bool, typer.Option("--resume-anyway", help="Add trials to a stored study of the "
                                                "same name even though the study file's definition changed.")
                             ] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Directory for pareto_front.png, history.png, "
                                              "importances.png.")] = None,
    dashboard: Annotated[bool, typer.Option("--dashboard", help="With 'show': serve optuna-dashboard on the "
                                            "study's storage at http://127.0.0.1:PORT/dashboard/ until Ctrl-C "
                                            "(pip install 'pimmodel[dashboard]').")] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="With --dashboard: the port (0: a free "
                                           "one, printed on stderr).")]
    = DEFAULT_PORT,
    output: Output = None,
    json: Annotated[bool, typer.Option("--json", help="Print the study record as JSON.")] = False,
) -> None:
    """Search hypothetical PIM hardware for a study (objectives, constraints, parameters in STUDY.toml).

    Re-running a study name on the same storage resumes it when the study's definition is unchanged.
    Ctrl-C stops at once; every trial counted is stored (exit code 130). Without a terminal, progress is
    logged (one line per tenth of the trials or per minute; -q for none). `pimmodel explore show
    STUDY.toml --storage URL` reprints a stored study without running trials (--dashboard opens it in
    optuna-dashboard). --json prints {"study", "storage", "trials" (stored in all), "added" and
    "elapsed_s" (by this run), "feasible", "front": [{"params", "objectives", "improvement"}], "baseline",
    "importances", "dashboard", "optuna", "provenance"}.
    """
    from ..dse.space import load_study
    from ..dse.storage import DEFAULT_STORAGE, locate

    show = study == "show"
    path = show_target if show else study
    if path is None:
        raise StudyError("explore show needs the study file: pimmodel explore show STUDY.toml --storage URL")
    if not show and show_target is not None:
        raise StudyError(f"unexpected argument {show_target!r}; use 'pimmodel explore STUDY.toml [options]'")
    if dashboard and not show:
        raise StudyError("--dashboard serves a stored study: pimmodel explore show STUDY.toml --dashboard")
    if port != DEFAULT_PORT and not dashboard:
        raise StudyError("--port applies to --dashboard: pimmodel explore show STUDY.toml --dashboard --port N")
    O.check_output(output)
    spec = load_study(path)
    url = DEFAULT_STORAGE if storage is None else storage
    locate(url)
    seed = spec.seed if seed is None else seed
    from ..api import provenance

    prov = provenance(spec.baseline, None, seed).to_record()
    if dashboard:
        _serve(spec, url, port, quiet=json)
        return
    result = None if show else _run(spec, url, trials or spec.trials, timeout, seed, workers, resume_anyway, prov,
                                    quiet=json)
    _report(spec, url, plot, json, output, prov, result)
    from .app import exit_now

    exit_now(0)  # the study's trials and storage are not freed one by one on the way out


def _free_port() -> int:
    """A port no one listens on now (the system's choice for port 0), for the dashboard to bind next."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(spec: Any, url: str, port: int, quiet: bool) -> None:
    """optuna-dashboard on the stored study's storage, on the loopback interface only, until Ctrl-C."""
    from ..dse.storage import locate, open_storage
    from ..dse.study import stored_trials
    from ..report.records import require

    dashboard = require("optuna_dashboard", "--dashboard", "dashboard")
    stored_trials(spec, url)  # the storage and the study exist (one-line error otherwise)
    location = locate(url)
    storage = open_storage(url, must_exist=True)
    chosen = port == 0
    if chosen:
        port = _free_port()
    if not quiet or chosen:  # a port the system chose is printed even with --json: nothing else tells it
        typer.echo(f"optuna-dashboard on {location.shown}: http://127.0.0.1:{port}/dashboard/ (Ctrl-C stops it; "
                   f"the same: {location.dashboard_command()} --port {port})", err=True)
    stopped = "the dashboard stopped; the study is unchanged"
    with O.on_interrupt(lambda: stopped):
        try:
            dashboard.run_server(storage, host="127.0.0.1", port=port)
        except OSError as exc:
            raise StudyError(f"--port {port}: cannot serve on 127.0.0.1:{port} ({exc.strerror or exc}); choose "
                             "another port with --port N") from None
    from .app import fail

    fail(f"interrupted; {stopped}", 130)  # the server (bottle) returns when it takes the Ctrl-C itself


def _run(spec: Any, url: str, trials: int, timeout: float | None, seed: int | None, workers: int,
         resume_anyway: bool, provenance: dict[str, Any], quiet: bool) -> Any:
    """Run the trials with a progress bar (on a terminal) or progress lines (in a log); say where the results
    go, how long the run will take once the first batch is stored, and on Ctrl-C what was kept."""
    import logging
    import time

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..dse.study import OpenedStudy, StopRequest, run_workers
    from .logs import ProgressLog, duration

    log = logging.getLogger("pimmodel.explore")
    console = Console(stderr=True)
    out = Console(highlight=False, soft_wrap=True, markup=False)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("best {task.fields[best]}"))
    stored = [0]
    shown = [url]
    best_seen: list[float | None] = [None]
    started = [0.0]
    estimated = [False]
    name = spec.objectives[0].name

    def opened(study: OpenedStudy, count: int | None) -> None:
        shown[0] = study.location.shown
        started[0] = time.perf_counter()
        if workers > 1:
            _preload_report()
        processes = f"{workers} worker processes" if workers > 1 else "1 process"
        if study.existed:
            have = f"{count:,} trials stored, " if count is not None else ""
            line = f"{spec.name}: resuming the study in {shown[0]} ({have}{trials:,} more, {processes})"
        else:
            line = f"{spec.name}: new study in {shown[0]} ({trials:,} trials, {processes})"
        if quiet:
            log.info(line)
        else:
            out.print(line)

    def describe(done: int, total: int | None, elapsed_s: float) -> str:
        if started[0]:  # the trials' own time, not the study's opening
            elapsed_s = time.perf_counter() - started[0]
        left = max((total or 0) - done, 0)
        eta = f", about {duration(left * elapsed_s / done)} left" if done and left else ""
        best = "" if best_seen[0] is None else f"; best feasible {name} {best_seen[0]:.4g}"
        return (f"{done:,} of {total:,} new trials stored ({done / max(total or 1, 1):.0%}), {left:,} left, "
                f"{duration(elapsed_s)} elapsed{eta}{best}")

    def estimate(done: int) -> None:
        """Once the first trials are stored: how long the run will take at their rate, and how to shorten it."""
        elapsed = time.perf_counter() - started[0]
        if estimated[0] or done <= 0 or elapsed <= 0 or done >= trials:
            return
        estimated[0] = True
        rate = done / elapsed
        total_s = trials / rate
        if timeout is not None and timeout < total_s:
            total_s = timeout
        faster = ["--trials N or --timeout SECONDS to stop sooner"]
        if workers == 1 and (os.cpu_count() or 1) > 1:
            faster.append("--workers N to use more cores")
        if shown[0].startswith(("sqlite:", "postgresql", "mysql")):
            faster.append("a journal file (--storage studies.log) stores trials faster than SQL")
        log.info("%s: %s trials in %s (%.0f trials/s): about %s for %s trials; shorter: %s", spec.name,
                 f"{done:,}", duration(elapsed), rate, duration(total_s), f"{trials:,}", "; ".join(faster))

    from .logs import Rate, estimate_text, measured_rate, record_rate

    keys = (f"explore:{spec.name}:{workers}", f"explore:any-study:{workers}")
    rate = measured_rate(keys[0]) or measured_rate(keys[1], Rate(2.0e-3, 4000, "measured on a 2-core Intel Xeon, "
                                                               "2026-12-07: scalable-pim, 4,000 trials")
                                                  if workers == 1 else None)
    processes = f"{workers} worker processes" if workers > 1 else "1 process"
    upfront = estimate_text([(trials, f"trials in {processes}", rate)])
    with Progress(*columns, console=console, disable=not sys.stderr.isatty(), transient=False) as bar, \
            StopRequest() as stop, ProgressLog(spec.name, trials, describe, estimate=upfront) as lines:
        task = bar.add_task(f"{spec.name} ({name})", total=trials, best="-")

        def progress(done: int, best: float | None) -> None:
            stored[0] = done
            if best is not None:
                best_seen[0] = best
            estimate(done)
            lines.update(done)
            if best is None:
                bar.update(task, completed=min(done, trials))
            else:
                bar.update(task, completed=min(done, trials), best=f"{best:.4g}")

        try:
            result = run_workers(spec, url, trials, timeout, seed, workers, progress, resume_anyway, stop, opened,
                                 provenance)
            stored[0] = result.added
            lines.done = result.added
            if not result.interrupted and result.added >= spec.batch:  # a whole batch at least
                for key in keys:
                    record_rate(key, result.elapsed_s, result.added)
            if result.interrupted:
                lines.outcome = "interrupted"
        except KeyboardInterrupt:  # before the first trial (opening the study, compiling the equations)
            from .app import fail

            fail(f"interrupted; {stored[0]:,} new trials stored in {shown[0]}; re-run the same command to resume",
                 130, at_once=True)
    if result.interrupted:
        from .app import fail

        fail(f"interrupted; {result.added:,} new trials stored in {result.storage}; re-run the same command to "
             "resume", 130, at_once=True)
    return result


def _preload_report() -> None:
    """Import what the study's report needs, in a thread, while the trials run: with worker processes sharing
    the trials, the time it takes from this process's share goes to theirs, instead of coming after the last
    trial. Its largest part: ``optuna.importance`` (its fANOVA evaluator imports scikit-learn, 1.3 s here, though
    the report uses PED-ANOVA). A failed import is left for the report to meet."""
    import threading

    def load() -> None:
        try:
            import optuna.importance  # noqa: F401

            from ..dse import result, tables  # noqa: F401
        except Exception:  # noqa: BLE001 - the report imports it again and says what is wrong
            pass

    threading.Thread(target=load, name="pimmodel-report-imports", daemon=True).start()


def _report(spec: Any, url: str, plot: Path | None, as_json: bool, output: Path | None, provenance: dict[str, Any],
            result: Any) -> None:
    import gc

    from ..dse.result import summarize
    from ..dse.study import stored_trials

    trials = None if result is None else result.stored_trials()  # read back through the run's own storage
    if trials is None:
        trials = stored_trials(spec, url)
    gc.freeze()  # the run's objects (its storage holds every trial) are not walked again by each collection
    try:
        record = summarize(spec, url, trials=trials)
    finally:
        gc.unfreeze()
    record["added"] = 0 if result is None else result.added
    record["elapsed_s"] = 0.0 if result is None else round(result.elapsed_s, 3)
    record["provenance"] = provenance
    if plot is not None:
        from ..dse.plots import write_plots

        record["plots"] = [str(p) for p in write_plots(spec, record, trials, plot)]
    if output is not None:
        from ..report.records import write_record

        write_record(output, record, "front")
        if not as_json:
            typer.echo(f"record written to {output}", err=True)
    if as_json:
        from ..report.json import emit

        emit(record)
        return
    from ..dse.tables import print_study

    print_study(record)


def sensitivity_command(
    ctx: typer.Context,
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
    output: O.Output = None,
    json: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
) -> None:
    """Elasticities d ln T / d ln p of the epoch time and of each phase w.r.t. every hardware parameter
    (exact symbolic derivatives), ranked, plus what-if lines for all three optimizers. Takes the same workload
    options as `pimmodel predict`."""
    # lazy imports keep the CLI's cold start fast
    from ..calibration.result import load_calibration
    from ..dse.sensitivity import sensitivity

    O.check_output(output)
    from .families import given_options

    hw = O.hardware(hardware, "sensitivity", given=given_options(ctx))
    ds = O.dataset_from_options(dataset, features, nonzeros, rows_per_dpu, layout)
    w = O.make_workload(ds, model, optimizer, dpus, tasklets, scaling, 1, batch_size, global_batch_size)
    record = {**sensitivity(w, hw, view, load_calibration(calibration)), "provenance": O.provenance(hw, calibration)}
    if O.finish(record, output, "elasticities", json):
        return
    # lazy imports keep the CLI's cold start fast
    from ..dse.tables import print_sensitivity

    print_sensitivity(record, top)


def register(app: typer.Typer) -> None:
    app.command("explore")(explore_command)
    app.command("sensitivity")(sensitivity_command)
