"""The typer application, its command modules and its single error boundary.

Each command module defines ``register(app)``; a module that is missing (a capability not built yet)
is skipped. Every ``PimModelError`` becomes one line on stderr and exit code 2, never a traceback; Ctrl-C
is one line and exit code 130.

The application's own options (``-q``, ``-v``, ``--log-file``, ``--version``, shell completion) may stand
anywhere on the command line (``pimmodel explore STUDY.toml -q`` is ``pimmodel -q explore STUDY.toml``).
Help text is shown as written (no rich markup: ``pip install 'pimmodel[postgres]'`` keeps its brackets).
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ..errors import PimModelError

COMMAND_MODULES = ("predict", "specs", "emulate", "calibrate", "validate", "explore", "baseline", "compare", "kernel",
                   "reproduce", "transfer", "compare_families")

FLAGS = ("-q", "--quiet", "-v", "--verbose", "-vv", "-vvv")
VALUED = ("--log-file",)
"""The application's options that may stand after the command (hoisted in front of it)."""


class _Group(TyperGroup):
    """The top-level group: the application's own options are taken wherever they stand, so that a batch
    script can append ``-q`` or ``--log-file FILE`` to any command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        front: list[str] = []
        rest: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                rest += args[i:]
                break
            if arg in FLAGS or arg.startswith(tuple(f"{v}=" for v in VALUED)):
                front.append(arg)
            elif arg in VALUED and i + 1 < len(args):
                front += [arg, args[i + 1]]
                i += 1
            else:
                rest.append(arg)
            i += 1
        return list(super().parse_args(ctx, front + rest))


app = typer.Typer(
    name="pimmodel",
    cls=_Group,
    help="Predict, explain and explore distributed ML training (LR, SVM with MA-SGD, GA-SGD, ADMM) on "
    "processing-in-memory hardware such as UPMEM. Every command takes --json for a machine-readable record. "
    "-q, -v and --log-file FILE may follow any command; $PIMMODEL_HARDWARE and $PIMMODEL_STORAGE set the "
    "defaults of --hardware and --storage.",
    no_args_is_help=False,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"pimmodel.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"pimmodel.cli.{name}":
                continue
            raise
        module.register(app)


def _print_version(value: bool) -> None:
    if value:
        # lazy imports keep the CLI's cold start fast
        from ..version import full_version

        typer.echo(f"pimmodel {full_version()}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                   help="Print pimmodel's version and exit.")] = False,
             quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Log warnings and errors only (no progress "
                                                 "lines).")] = False,
             verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="Log debug lines too.")] = 0,
             log_file: Annotated[Path | None, typer.Option("--log-file", help="Also append the log (progress lines "
                                                           "included, with times) to this file.")] = None) -> None:
    # the application's own options; each command's are its own
    # lazy imports keep the CLI's cold start fast
    from .logs import configure

    configure(verbose, quiet, log_file)


_register_all()


INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""


def fail(message: str, code: int = 2, at_once: bool = False) -> None:
    """Print one line to stderr and exit (the CLI's only error path). ``at_once`` (explore after Ctrl-C: every
    trial counted is stored and every worker stopped): the installed script skips the interpreter's teardown
    (``exit_now``)."""
    from ..redact import mask

    first = mask(" ".join(str(message).split()))
    typer.echo(f"error: {first}", err=True)
    if at_once:
        import traceback

        interrupted = sys.exc_info()[2]
        if interrupted is not None:
            traceback.clear_frames(interrupted)  # the frames the interrupt left hold the stopped workers' queues
        exit_now(code, collect=True)  # the collection finalizes those queues and locks: semaphores released
    raise SystemExit(code)


def exit_now(code: int = 0, collect: bool = False) -> None:
    """End the installed script with ``code`` without the interpreter's teardown, which frees every object one
    by one: seconds once sympy's caches are loaded, 0.4-0.7 s after a 4,000-trial study (``explore``, which
    ends here once its report is out). Both streams are flushed first, and the logs (the log file's last
    lines); ``collect`` runs a garbage collection before (finalizers of objects in reference cycles). pimmodel
    registers no exit handlers. Under a test runner's capture (streams not this process's own) it is a plain
    ``SystemExit`` after the flush."""
    sys.stdout.flush()
    sys.stderr.flush()
    if _own_process():
        import gc
        import logging

        if collect:
            gc.collect()
        logging.shutdown()  # flushes every handler's stream
        os._exit(code)
    raise SystemExit(code)


def _own_process() -> bool:
    """Whether stdout and stderr are this process's own (the console script), not a test runner's capture."""
    try:
        return sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


def as_flag(exc: PimModelError) -> str:
    """The message of a library error, with the parameter it names said as the command line's flag that gave it
    (``seed must be ...`` -> ``--seed must be ...``) when that flag is on the command line."""
    message = str(exc)
    parameter = getattr(exc, "parameter", None)
    if not parameter or parameter.startswith("-"):
        return message
    flag = "--" + parameter.replace("_", "-")
    given = any(a == flag or a.startswith(flag + "=") for a in sys.argv[1:])
    if given and message.startswith(parameter + " "):
        return flag + message[len(parameter):]
    return f"{flag}: {message}" if given else message


def main() -> None:
    """Console entry point: run the app behind the error boundary."""
    try:
        code = app(standalone_mode=False, prog_name="pimmodel")
        if code == INTERRUPTED:  # typer turns a Ctrl-C outside any on_interrupt block into a silent exit code
            raise KeyboardInterrupt
        sys.stdout.flush()
    except PimModelError as exc:
        fail(as_flag(exc))
    except KeyboardInterrupt:
        fail("interrupted; nothing was written", 130)
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    except OSError as exc:  # a full disk for stdout or a file, a permission: one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ("stdout: " if exc.errno == errno.ENOSPC else "")
        fail(f"{where}{exc.strerror or exc}")
    except SystemExit:
        raise
    except typer.Abort:
        fail("aborted", 1)
    except Exception as exc:  # click's usage errors (typer may vendor its own click) arrive here
        if type(exc).__name__ == "NoArgsIsHelpError":  # a command group run bare: its usage, as --help prints it
            typer.echo(exc.format_message() if hasattr(exc, "format_message") else str(exc))
            raise SystemExit(0) from None
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            fail(exc.format_message())
        raise
    sys.exit(code if isinstance(code, int) else 0)
