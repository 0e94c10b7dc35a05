"""``pimmodel calibrate``: fit the cost model's data-dependent coefficients to emulator runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from . import options as O

DESIGNS = ("default", "tiny")


def calibrate_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the calibration file (JSON).")]
    = Path("calibration.json"),
    design: Annotated[str, typer.Option("--design", help="default (48 emulator runs, about a minute) or tiny "
                                        "(24 small runs, seconds).")] = "default",
    hardware: O.Hardware = "upmem-2556",
    epochs: Annotated[int, typer.Option("--epochs", help="Emulated epochs per run (the mean epoch is fitted).")] = 2,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap refits for a second estimate of the "
                                           "standard errors (0 = off).")] = 0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthetic data and the bootstrap.")] = 0,
    json: O.Json = False,
) -> None:
    """Emulate a design of runs per optimizer x model x layout, fit the free coefficients (least squares;
    hardware constants are never fitted), show the error per phase before and after, and write the file.

    Use the result with `pimmodel predict --calibration FILE`. --json prints the calibration record.
    """
    # lazy imports keep the CLI's cold start fast
    from ..atomic import check_writable
    from ..errors import SpecError, check_known, check_seed
    from .logs import not_the_log

    check_known("design", design, DESIGNS)
    if epochs < 1:
        raise SpecError(f"--epochs must be at least 1, got {epochs}")
    if bootstrap < 0:
        raise SpecError(f"--bootstrap must be at least 0 (0 = off), got {bootstrap}")
    check_seed("--seed", seed)
    not_the_log(output, "--output")
    check_writable(output, "--output")  # before a minute of emulation, not after
    hw = O.hardware(hardware, "calibrate")
    before = _identity(output)
    with O.on_interrupt(lambda: _kept(output, before)):
        # lazy imports keep the CLI's cold start fast (and a bad option fails before scipy loads)
        from ..calibration import EmulatorSettings, calibrate, default_design, tiny_design

        points = default_design(seed) if design == "default" else tiny_design(seed)
        settings = EmulatorSettings(epochs=epochs)
        with _progress(len(points)) as advance:
            result = calibrate(points, hw, settings, bootstrap, seed,
                               label=f"{output.name} ({design} design, seed {seed})", progress=advance)
        result.write(output)
        # still inside: a Ctrl-C while the result prints says the new file was written, as it was
        record = {"output": str(output), **result.to_json()}
        record["provenance"] = {**record.get("provenance", {}), **O.provenance(hw, output, seed)}
        record.pop("design")
        if json:
            # lazy imports keep the CLI's cold start fast
            from ..report.json import emit

            emit(record)
            return
        _print(record)
        typer.echo(f"calibration written to {output}", err=True)


def _identity(path: Path) -> tuple[int, int] | None:
    """What identifies the file at ``path`` (inode, modification time), None if there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _kept(output: Path, before: tuple[int, int] | None) -> str:
    """What Ctrl-C left: the file is replaced whole or not at all, so it is the old one, the new one or none."""
    now = _identity(output)
    if now != before:
        return f"the new calibration was written to {str(output)!r}"
    if before is None:
        return f"nothing was written to {str(output)!r}"
    return f"{str(output)!r} is unchanged"


class _progress:
    """The bar on a terminal and the log lines without one (``logs.Task``); yields the per-point callback."""

    def __init__(self, total: int) -> None:
        # lazy imports keep the CLI's cold start fast
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

        from .logs import Task

        self.task = Task("calibrating: emulating the design's points", total,
                         (TextColumn("emulating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TextColumn("{task.description}")), unit="points")

    def __enter__(self) -> Any:
        task = self.task.__enter__()
        return lambda point: task.update(advance=1, description=point.name)

    def __exit__(self, *exc: Any) -> None:
        self.task.__exit__(*exc)


def _print(record: dict) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    # lazy imports keep the CLI's cold start fast
    from ..report.tables import stdout_console

    console = stdout_console()
    errors = Table(title="model vs emulator on the design: |relative error| per phase (phases >= 1 % of the epoch)")
    for col in ("phase", "before mean", "before max", "after mean", "after max", "n"):
        errors.add_column(col, justify="left" if col == "phase" else "right")
    for phase, before in record["errors"]["before"].items():
        after = record["errors"]["after"][phase]
        errors.add_row(phase, f"{before['mean_abs']:.2%}", f"{before['max_abs']:.2%}", f"{after['mean_abs']:.2%}",
                       f"{after['max_abs']:.2%}", str(after["count"]))
    console.print(errors)
    fits = Table(title="fitted coefficients (± standard error)")
    for col in ("group", "coefficient", "value", "std error", "note"):
        fits.add_column(col)
    for key, fit in record["fits"].items():
        for name, value in fit["coefficients"].items():
            tied = [t for t, twin in fit.get("ties", {}).items() if twin == name]
            fits.add_row(key, name, f"{value:.4g}", f"{fit['std_errors'][name]:.2g}",
                         f"also {', '.join(tied)}" if tied else "")
    console.print(fits)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
