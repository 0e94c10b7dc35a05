"""Logging for batch jobs: pimmodel's modules log to the ``pimmodel`` logger and never configure it; the CLI sends
it to stderr and, with ``--log-file``, to a file. ``-q`` keeps warnings and errors only, ``-v`` adds debug lines.

Progress of long commands goes to the ``pimmodel.progress`` logger as one line per tenth (``STEPS``) of the work
or per ``interval_s()`` seconds (whichever comes first; a quiet stretch still gets a line a minute), saying what
is done and what is left. On a terminal rich's progress bars show it instead, so those lines go to the log file
only; without a terminal (a Slurm job, a pipe) they go to stderr too.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ..errors import PimModelError

ROOT = "pimmodel"
PROGRESS = "pimmodel.progress"
INTERVAL_ENV = "PIMMODEL_LOG_INTERVAL_S"
"""Seconds between two progress lines at most (default ``INTERVAL_S``)."""
INTERVAL_S = 60.0
STEPS = 10
"""A progress line at least every tenth of the work."""
FIRST_ESTIMATE_S = 5.0
"""A line with the first estimate of the time left once the work has run this long."""
START_DELAY_S = 1.0
"""A deferred "started" line waits for the work's first news or this long: input refused at once stays one line."""
FORMAT = "%(asctime)s %(levelname)s %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_OURS = "_pimmodel_cli"


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler on whatever ``sys.stderr`` is when a line is written (rich's live bar swaps it to print above
    the bar)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def _not_on_terminal(record: logging.LogRecord) -> bool:
    """Progress lines reach stderr only where no progress bar is drawn."""
    return not (record.name == PROGRESS and sys.stderr.isatty())


def _masked(record: logging.LogRecord) -> bool:
    """Every line written has its URLs' passwords masked (a storage or an address in a message)."""
    from ..redact import mask

    text = record.getMessage()
    shown = mask(text)
    if shown != text:
        record.msg, record.args = shown, ()
    return True


def configure(verbose: int = 0, quiet: bool = False, log_file: Path | None = None) -> None:
    """Send the ``pimmodel`` logger to stderr (and ``log_file``, appended to) at INFO, WARNING with ``quiet``,
    DEBUG with ``verbose``. Called once per command by the CLI; a library user's logging is never touched."""
    global _log_path
    if quiet and verbose:
        raise PimModelError("-q (warnings only) and -v (debug lines too) contradict each other; give one of them")
    _log_path = None if log_file is None else _identity(log_file)
    logger = logging.getLogger(ROOT)
    for handler in [h for h in logger.handlers if getattr(h, _OURS, False)]:
        logger.removeHandler(handler)
        handler.close()
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    logger.setLevel(level)
    logger.propagate = False
    formatter = logging.Formatter(FORMAT, DATE_FORMAT)
    stderr = _Stderr()
    stderr.addFilter(_not_on_terminal)
    stderr.addFilter(_masked)
    handlers: list[logging.Handler] = [stderr]
    if log_file is not None:
        handlers.append(_file_handler(log_file))
        handlers[-1].addFilter(_masked)
    for handler in handlers:
        handler.setFormatter(formatter)
        setattr(handler, _OURS, True)
        logger.addHandler(handler)


_log_path: Path | None = None
"""The resolved ``--log-file`` of the running command (None: none)."""


def _identity(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser())).resolve()


def not_the_log(path: Path, option: str) -> None:
    """Refuse an output file that is the running command's ``--log-file`` (one file would hold one of them)."""
    if _log_path is not None and _identity(path) == _log_path:
        raise PimModelError(f"{option} and --log-file name the same file {str(path)!r}; give each its own file")


def _file_handler(path: Path) -> logging.Handler:
    from ..atomic import check_writable

    if path.exists() and path.is_file() and not os.access(path, os.W_OK):
        raise PimModelError(f"--log-file {str(path)!r} is not writable by this user")
    check_writable(path, "--log-file")
    try:
        return logging.FileHandler(path, mode="a", encoding="utf-8")
    except OSError as exc:
        raise PimModelError(f"cannot open --log-file {str(path)!r}: {exc.strerror or exc}") from None


def interval_s() -> float:
    try:
        value = float(os.environ.get(INTERVAL_ENV, INTERVAL_S))
    except ValueError:
        raise PimModelError(f"${INTERVAL_ENV} must be a number of seconds, got "
                            f"{os.environ.get(INTERVAL_ENV)!r}") from None
    return value if value > 0 else INTERVAL_S


def duration(seconds: float) -> str:
    """'45 s', '12 min', '3.2 h'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class ProgressLog:
    """Progress lines of one piece of work of ``total`` units (``update(done)``): one per tenth of the work or per
    ``interval_s()`` (a background timer writes the last state when nothing else did for that long), and one at
    the end. ``describe(done, total, elapsed_s)`` makes the line's text. ``defer_start`` holds the "started" line
    back until the first update, a stage said or ``START_DELAY_S``, and drops it if the work fails before that (a
    command that refuses its input at once prints its one-line error and nothing else)."""

    def __init__(self, what: str, total: int | None, describe: Callable[[int, int | None, float], str] | None = None,
                 unit: str = "", defer_start: bool = False, estimate: str = "") -> None:
        self.what = what
        self.estimate = estimate
        """An up-front estimate of the work's time (``estimate_text``), logged with the "started" line (so a
        refusal at once stays one line); it reaches stderr also where a progress bar is drawn."""
        self.unit = f" {unit}" if unit else ""
        self.total = total
        self.describe = describe or self._describe
        self.log = logging.getLogger(PROGRESS)
        self.interval = interval_s()
        self.start = time.monotonic()
        self.done = 0
        self.outcome = "done"
        """The last line's first word: what the caller says happened ("done", "interrupted")."""
        self._written_at = self.start
        self._next_step = 1
        self._estimated = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self._started = False
        self._defer = defer_start

    def __enter__(self) -> ProgressLog:
        if not self._defer:
            self._announce()
        self._timer = threading.Thread(target=self._tick, name="pimmodel-progress", daemon=True)
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, _exc: BaseException | None,
                 _tb: TracebackType | None) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join(timeout=1)
        if kind is None:
            self._write(self.outcome)

    def _announce(self) -> None:
        """The "started" line, once."""
        with self._lock:
            if self._started:
                return
            self._started = True
            total = "" if self.total is None else f" ({self.total:,}{self.unit} to do)"
        self.log.info("%s: started%s", self.what, total)
        if self.estimate:
            say_estimate(self.what, self.estimate)

    def update(self, done: int) -> None:
        self._announce()
        with self._lock:
            self.done = done
            step = self.total and done * STEPS // self.total
        now = time.monotonic()
        if step and step >= self._next_step:
            self._next_step = step + 1
            self._write()
        elif now - self._written_at >= self.interval:
            self._write()
        elif not self._estimated and done and self.total and now - self.start >= FIRST_ESTIMATE_S:
            self._write()  # the first estimate of what is left, once the work has run a few seconds
        if done and self.total:
            self._estimated = self._estimated or now - self.start >= FIRST_ESTIMATE_S

    def say(self, text: str) -> None:
        """A line saying what the work is doing now (a new stage of it)."""
        self._announce()
        with self._lock:
            self._written_at = time.monotonic()
        self.log.info("%s: %s", self.what, text)

    def _tick(self) -> None:
        if self._defer and not self._stop.wait(START_DELAY_S):
            self._announce()
        while not self._stop.wait(min(self.interval, 1.0)):
            if time.monotonic() - self._written_at >= self.interval:
                self._write()

    def _write(self, prefix: str = "") -> None:
        self._announce()
        with self._lock:
            self._written_at = time.monotonic()
            text = self.describe(self.done, self.total, self._written_at - self.start)
        self.log.info("%s: %s%s", self.what, f"{prefix}: " if prefix else "", text)

    def _describe(self, done: int, total: int | None, elapsed_s: float) -> str:
        if total is None:
            return f"{done:,}{self.unit} done in {duration(elapsed_s)}" if done else f"{duration(elapsed_s)} elapsed"
        left = max(total - done, 0)
        eta = f", about {duration(left * elapsed_s / done)} left" if done and left else ""
        return (f"{done:,} of {total:,}{self.unit} done ({done / total:.0%}), {left:,} left, {duration(elapsed_s)} "
                f"elapsed{eta}")


class Task:
    """One long piece of work of a command: a rich bar on stderr where it is a terminal, and ``ProgressLog`` lines
    from the first second (``started``), which reach stderr where no bar is drawn and ``--log-file`` always.
    ``update`` takes rich's keywords (``advance``, ``completed``, ``total``, ``description``); ``say=True`` makes a
    new description a line of its own too (a new stage of the work)."""

    def __init__(self, what: str, total: int | None = None, columns: tuple = (), label: str = "", unit: str = "",
                 estimate: str = "") -> None:
        from rich.console import Console
        from rich.progress import Progress

        console = Console(stderr=True)
        self.bar = Progress(*columns, console=console, transient=True, disable=not console.is_terminal)
        self.lines = ProgressLog(what, total, unit=unit, defer_start=True, estimate=estimate)
        self.label = label
        self.done = 0
        self._said = ""

    def __enter__(self) -> Task:
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=self.lines.total)
        self.lines.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
                 ) -> None:
        self.lines.__exit__(kind, exc, tb)
        self.bar.stop()

    def update(self, advance: int = 0, completed: int | None = None, total: int | None = None,
               description: str | None = None, say: bool = False) -> None:
        self.done = completed if completed is not None else self.done + advance
        if total is not None:
            self.lines.total = total
        fields: dict = {"completed": self.done}
        if total is not None:
            fields["total"] = total
        if description is not None:
            fields["description"] = description
        self.bar.update(self.task, **fields)
        if say and description is not None and description != self._said:
            self._said = description
            self.lines.say(description)
        self.lines.update(self.done)


# ---------------------------------------------------------------- up-front estimates from measured rates
RATES_FILE = "rates.json"
"""Seconds per unit of work as each command last measured them on this machine (``$PIMMODEL_CACHE_DIR/timings``;
deleting it only loses the estimates until the next run)."""
ESTIMATE = "pimmodel.estimate"


@dataclass(frozen=True, slots=True)
class Rate:
    s_per_unit: float
    units: float
    """How many units the measurement covered."""
    measured: str
    """Where it comes from, e.g. 'this machine's last run, 2026-12-07'."""


def _rates_path() -> Path:
    from ..resources import cache_dir

    return cache_dir("timings") / RATES_FILE


def _read_rates() -> dict[str, dict[str, float | str]]:
    import json

    try:
        raw = json.loads(_rates_path().read_text())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def measured_rate(key: str, default: Rate | None = None) -> Rate | None:
    """The last rate measured on this machine for ``key`` (seconds per unit), else ``default`` (a shipped
    measurement, which says where it was made), else None."""
    entry = _read_rates().get(key)
    if isinstance(entry, dict):
        try:
            return Rate(float(entry["s_per_unit"]), float(entry["units"]),
                        f"this machine's last run, {entry['date']}")
        except (KeyError, TypeError, ValueError):
            pass
    return default


def record_rate(key: str, seconds: float, units: float) -> None:
    """Keep ``seconds / units`` as ``key``'s rate for the next estimate (nothing on too small a measurement; an
    unwritable cache only loses the estimate)."""
    import datetime
    import json

    if units <= 0 or seconds <= 0:
        return
    rates = _read_rates()
    rates[key] = {"s_per_unit": seconds / units, "units": units, "date": datetime.date.today().isoformat()}
    path = _rates_path()
    try:
        from ..atomic import WriteError, write_text

        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(rates, indent=1, sort_keys=True))
    except (OSError, WriteError):
        pass


def estimate_text(parts: list[tuple[float, str, Rate | None]], base: tuple[float, str] | None = None) -> str:
    """'estimated 40 s (9 stand-in seed-epochs x 4.1 s, this machine's last run, 2026-12-07; ...)': each part is
    (units, what a unit is, its rate); a part without a rate is named as not estimated. ``base``: seconds of
    fixed work measured the same way, and what it is."""
    total, known, unknown = 0.0, [], []
    for units, unit, rate in parts:
        if not units:
            known.append(f"no {unit}")
            continue
        if rate is None:
            unknown.append(f"{units:,.0f} {unit} (no run on this machine has measured their rate yet)")
            continue
        total += units * rate.s_per_unit
        known.append(f"{units:,.0f} {unit} x {_short(rate.s_per_unit)} ({rate.measured})")
    if base is not None:
        total += base[0]
        known.append(f"{_short(base[0])} {base[1]}")
    head = ("no estimate" if not known or (unknown and not total) else
            f"estimated {duration(total)}" if total >= 1 else "estimated under 1 s")
    if unknown and total:
        head += " and more"
    return f"{head} ({'; '.join(known + unknown) or 'nothing to do'})"


def _short(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def say_estimate(what: str, text: str) -> None:
    """The estimate as a log line (stderr and --log-file; never stdout, which --json owns)."""
    logging.getLogger(ESTIMATE).info("%s: %s", what, text)
