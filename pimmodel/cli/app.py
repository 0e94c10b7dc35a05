"""The typer application, its command modules and its single error boundary.

Each command module defines ``register(app)``; a module that is missing (a capability not built yet)
is skipped. Every ``PimModelError`` becomes one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import Annotated

import typer

from ..errors import PimModelError

COMMAND_MODULES = ("predict", "specs", "emulate", "calibrate", "validate", "explore", "baseline", "compare", "kernel",
                   "reproduce")

app = typer.Typer(
    name="pimmodel",
    help="Predict, explain and explore distributed ML training (LR, SVM with MA-SGD, GA-SGD, ADMM) on "
    "processing-in-memory hardware such as UPMEM. Every command takes --json for a machine-readable record.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
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
        from ..version import __version__

        typer.echo(f"pimmodel {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                   help="Print pimmodel's version and exit.")] = False) -> None:
    # the application's own options; each command's are its own
    pass


_register_all()


def fail(message: str, code: int = 2) -> None:
    """Print one line to stderr and exit (the CLI's only error path)."""
    first = " ".join(str(message).split())
    typer.echo(f"error: {first}", err=True)
    raise SystemExit(code)


def main() -> None:
    """Console entry point: run the app behind the error boundary."""
    try:
        code = app(standalone_mode=False)
        sys.stdout.flush()
    except PimModelError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted", 130)
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
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise SystemExit(0) from None
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            fail(exc.format_message())
        raise
    sys.exit(code if isinstance(code, int) else 0)
