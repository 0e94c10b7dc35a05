"""Reproducing figures: train the stand-in curves they need (once each, shared between figures, in a pool of
processes), compute each figure's record, and write its PNG, JSON and Markdown table.

Each curve is deterministic and cached on disk by ``comparison.accuracy`` (``$PIMMODEL_CACHE_DIR``), so the
order in which the pool finishes them changes nothing, and a second run trains nothing.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import WriteError, write_text
from ..comparison import Curve, cached, curve
from ..errors import PimModelError
from .figures import CurveTask, Setup, check_fits, compute, curve_tasks
from .spec import FigureSpec

DEFAULT_OUTPUT = "pim-opt-figures"
DEFAULT_WORKERS = 2
Step = Callable[[str], None]
"""Told what was just done, once per curve trained and once per figure written (a progress bar's advance)."""


@dataclass(frozen=True)
class Plan:
    """What a reproduction will do: the figures, every curve they need, and which of those are not cached."""

    specs: tuple[FigureSpec, ...]
    tasks: tuple[CurveTask, ...]
    missing: tuple[CurveTask, ...]

    @property
    def steps(self) -> int:
        """Units of work a progress bar counts: curves to train, then figures to write."""
        return len(self.missing) + len(self.specs)


def plan(specs: Sequence[FigureSpec], setup: Setup) -> Plan:
    tasks = tuple(dict.fromkeys(t for s in specs for t in curve_tasks(s, setup)))
    missing = tuple(t for t in tasks if cached(t.job, t.stand_in) is None)
    return Plan(tuple(specs), tasks, missing)


def check_output_dir(path: str | Path) -> Path:
    """``path`` as a folder figures can be written to (created if missing), checked before any work; else a
    one-line ``WriteError``."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise WriteError(f"--output {str(out)!r} is a file, not a folder; give a folder for the figures")
    if not out.exists():
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise WriteError(f"cannot create the output folder {str(out)!r}: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise WriteError(f"cannot write figures to {str(out)!r}: the folder is not writable")
    return out


def _cost(task: CurveTask) -> tuple[int, int, int]:
    """A rough size of a stand-in training, to start the longest first (sparse, then float baselines, then by
    rows): the pool's last curve then finishes soonest."""
    workers, rows, _ = task.stand_in.shape(task.job)
    return (task.job.layout == "sparse", task.job.platform != "pim", workers * rows * task.job.epochs)


def _describe(task: CurveTask) -> str:
    j = task.job
    return f"{j.platform.upper()} {j.model.upper()} {j.optimizer} ({j.layout}, batch {j.batch_per_worker:,})"


def train_one(task: CurveTask) -> Curve:
    """One curve (in a pool process: a module-level function)."""
    return curve(task.job, task.stand_in)


def _ignore_sigint() -> None:
    """A pool process ignores Ctrl-C (a terminal sends it to the whole process group): the parent decides when
    the pool stops (``_stop``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool now: queued curves are dropped and running ones cut short (a cut curve was never cached:
    the cache is written whole or not at all)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    # before 3.14 the executor has no public way to stop running work; its process table is the only handle
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    # waited for: the executor's manager thread sees its processes gone and ends here, not in the interpreter's
    # exit hook, which would write to its closed wake-up pipe ("Exception ignored ... Bad file descriptor")
    pool.shutdown(wait=True, cancel_futures=True)


def train(tasks: Sequence[CurveTask], workers: int = DEFAULT_WORKERS, step: Step | None = None
          ) -> dict[CurveTask, Curve]:
    """Every task's curve: cached ones read, the others trained in ``workers`` processes (in this process when
    there is one worker or one curve), longest first."""
    done: dict[CurveTask, Curve] = {}
    todo: list[CurveTask] = []
    for t in dict.fromkeys(tasks):
        hit = cached(t.job, t.stand_in)
        if hit is None:
            todo.append(t)
        else:
            done[t] = hit
    todo.sort(key=_cost, reverse=True)
    tell = step or (lambda _text: None)
    if workers <= 1 or len(todo) <= 1:
        for t in todo:
            done[t] = train_one(t)
            tell(f"trained {_describe(t)}")
        return done
    pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_sigint)
    try:
        pending: dict[Future[Curve], CurveTask] = {pool.submit(train_one, t): t for t in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                t = pending.pop(future)
                try:
                    done[t] = future.result()
                except BrokenProcessPool:
                    raise PimModelError(f"a training process died while training {_describe(t)} (out of memory?); "
                                        "rerun: curves trained so far are cached") from None
                tell(f"trained {_describe(t)}")
    except BaseException:
        _stop(pool)  # Ctrl-C or an error: nothing more runs
        raise
    pool.shutdown()
    return done


def write(record: dict[str, Any], output: Path) -> dict[str, str]:
    """The figure's PNG, JSON (the record, with the files' names) and Markdown table in ``output``."""
    from ..report.json import dumps
    from ..report.study_figures import figure_plot, markdown  # matplotlib loads only when a figure is written

    fid = record["figure"]["id"]
    files = {"png": str(output / f"{fid}.png"), "json": str(output / f"{fid}.json"), "md": str(output / f"{fid}.md")}
    record["files"] = files
    figure_plot(record, files["png"])
    write_text(files["json"], dumps(record) + "\n")
    write_text(files["md"], markdown(record))
    return files


def reproduce(specs: Sequence[FigureSpec], setup: Setup, output: str | Path | None = DEFAULT_OUTPUT,
              workers: int = DEFAULT_WORKERS, step: Step | None = None, status: Step | None = None
              ) -> list[dict[str, Any]]:
    """Every figure's record, written to ``output`` (None: nothing written). ``step`` is told after each curve
    trained and each figure done (``plan(specs, setup).steps`` calls in all); ``status`` what starts next."""
    folder = None if output is None else check_output_dir(output)
    for spec in specs:
        check_fits(spec, setup)
    tell = step or (lambda _text: None)
    say = status or (lambda _text: None)
    curves = train([t for s in specs for t in curve_tasks(s, setup)], workers, tell)
    records = []
    for spec in specs:
        say(f"computing and drawing {spec.id}")
        try:
            record = compute(spec, setup, curves)
        except PimModelError as exc:
            raise type(exc)(f"{spec.id}: {exc}") from None
        if folder is not None:
            write(record, folder)
        records.append(record)
        tell(f"{spec.id} done")
    return records
