"""Study storage through Optuna's public storage API only, correct with many writers.

Two kinds of URL:

- ``journal://PATH`` (the default, ``journal://pimmodel-studies.log`` in the current directory): Optuna's
  ``JournalStorage`` on one append-only file. ``journal:///abs/path.log`` is absolute,
  ``journal://rel/path.log`` relative to the current directory. Writers on one machine or on a shared
  file system append under Optuna's file lock; each finished trial is one line, so a batch of 100 trials
  costs about 100 appends (hundreds of trials per second).
- any URL Optuna's ``RDBStorage`` takes: ``sqlite:///file.db``, ``postgresql+psycopg://user@host/db``
  (``pip install 'pimmodel[postgres]'``), ``mysql+pymysql://...``. Each trial goes through Optuna's own
  ``create_new_trial``, which numbers it under a lock on the study row (the fix of optuna issue 1488): much
  slower than a journal file (about 3 SQL statements per parameter and 2 per value or attribute, some 70
  for a scalable-pim trial; tens of trials per second for all writers together), but correct with any
  number of writers on any number of machines.

``TrialStore`` writes a batch of finished trials with ``create_new_trial(template_trial=...)`` and reads
the trials other writers added by trial number (``get_trial_id_from_study_id_trial_number``): numbers are
dense and assigned in commit order under Optuna's lock, so "the next number does not exist yet" means
"nothing newer is committed". No ``optuna.storages._*`` module is imported, and nothing here knows
Optuna's table layout.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from ..errors import StudyError

JOURNAL_PREFIX = "journal://"
DEFAULT_STORAGE = "journal://pimmodel-studies.log"
"""A journal file in the current directory."""
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
CREATE_RETRIES = 5
EXAMPLES = "journal://studies.log, sqlite:///studies.db or postgresql+psycopg://user@host/db"
_PRAGMAS_INSTALLED = False


@dataclass(frozen=True, slots=True)
class Location:
    """Where a storage URL keeps its data: the URL, its kind and, for files, the file."""

    url: str
    kind: str
    """"journal" or "rdb"."""
    path: Path | None
    """The journal file or SQLite database (absolute); None for database servers."""

    @property
    def shown(self) -> str:
        """The URL for messages: files absolute, passwords hidden."""
        if self.kind == "journal" and self.path is not None:
            return f"{JOURNAL_PREFIX}{self.path}"
        if self.path is not None:
            return f"sqlite:///{self.path}"
        return _hide_password(self.url)

    def dashboard_command(self) -> str:
        """The shell command that opens optuna-dashboard on this storage."""
        target = str(self.path) if self.kind == "journal" else self.shown
        return f"optuna-dashboard {_quote(target)}"


def locate(url: str) -> Location:
    """Parse and check a storage URL without opening it (one-line StudyError for anything wrong)."""
    if url.startswith(JOURNAL_PREFIX):
        raw = url[len(JOURNAL_PREFIX):]
        if not raw:
            raise StudyError(f"storage {url!r} names no file; use e.g. journal://studies.log")
        return Location(url, "journal", _absolute(raw))
    if "://" not in url:
        raise StudyError(f"storage {url!r} is not a URL; use e.g. {EXAMPLES}")
    if url.startswith("sqlite:"):
        raw = url.split("://", 1)[1].removeprefix("/").split("?", 1)[0]
        if raw in ("", ":memory:"):
            raise StudyError(f"storage {url!r} is an in-memory database that is lost at exit; "
                             "give a file, e.g. sqlite:///studies.db")
        return Location(url, "rdb", _absolute(raw))
    return Location(url, "rdb", None)


def _absolute(raw: str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(raw)))


def check_file(location: Location, must_exist: bool) -> None:
    """A storage file must be a regular file in an existing directory (``journal:///dev/full`` would
    otherwise be read as an endless line until memory runs out)."""
    path = location.path
    if path is None:
        return
    if path.exists():
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            example = "journal://studies.log" if location.kind == "journal" else "sqlite:///studies.db"
            raise StudyError(f"storage {location.shown}: {path} is {what}; give the path of a file, e.g. {example}")
        if not must_exist and not os.access(path, os.R_OK | os.W_OK):
            raise StudyError(f"storage {location.shown}: {path} is not readable and writable by this user")
        return
    if must_exist:
        raise StudyError(f"no storage at {location.shown}; run 'pimmodel explore STUDY.toml --storage "
                         f"{location.url}' first, or check the path")
    if not path.parent.is_dir():
        raise StudyError(f"storage {location.shown}: directory {path.parent} does not exist; create it "
                         "or choose another path")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StudyError(f"storage {location.shown}: cannot create files in {path.parent}")


def open_storage(url: str, must_exist: bool = False) -> optuna.storages.BaseStorage:
    """An Optuna storage for ``url``. ``must_exist`` (``explore show``, which only reads): a missing file is
    an error, not a new empty storage, and a journal is not repaired. A malformed URL, an unreachable
    database or a missing driver is a one-line StudyError."""
    location = locate(url)
    check_file(location, must_exist)
    if location.kind == "journal":
        return _open_journal(location, writing=not must_exist)
    return _open_rdb(location)


def _open_journal(location: Location, writing: bool) -> optuna.storages.BaseStorage:
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    with storage_errors(location):
        if writing:
            _drop_partial_record(location)
        try:
            return JournalStorage(JournalFileBackend(str(location.path)))
        except (ValueError, UnicodeDecodeError) as exc:  # json.JSONDecodeError is a ValueError
            raise StudyError(f"storage {location.shown} is not an Optuna journal file ({_reason(exc)}); "
                             "give another file") from None


def _open_rdb(location: Location) -> optuna.storages.BaseStorage:
    """Optuna's RDBStorage. Processes that open a fresh database at the same moment race to create
    Optuna's tables; the loser sees "already exists" and simply opens again."""
    _install_sqlite_pragmas()
    for attempt in range(CREATE_RETRIES):
        try:
            return optuna.storages.RDBStorage(location.url, heartbeat_interval=None)
        except Exception as exc:  # sqlalchemy raises many kinds: bad dialect, driver missing, unreachable
            reason = _reason(exc)
            if attempt + 1 < CREATE_RETRIES and ("already exists" in reason or "duplicate key" in reason):
                time.sleep(0.2 * (attempt + 1))
                continue
            hint = ""
            if isinstance(exc, ImportError) or type(exc).__name__ == "NoSuchModuleError":
                hint = "; install the database driver, e.g. pip install 'pimmodel[postgres]' for postgresql+psycopg://"
            raise StudyError(f"cannot open storage {location.shown}: {reason}{hint}") from None
    raise AssertionError("unreachable")


def _drop_partial_record(location: Location) -> None:
    """Cut an unfinished last line (a write that failed on a full disk) off the journal, under Optuna's
    lock file: every writer appends whole lines under that lock, so a last line without its newline is
    never still being written, and a later append would otherwise glue a record to it and make the file
    unreadable."""
    from optuna.storages.journal import JournalFileSymlinkLock

    path = location.path
    if path is None or not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
    lock = JournalFileSymlinkLock(str(path))
    lock.acquire()
    try:
        with path.open("r+b") as f:
            size = f.seek(0, os.SEEK_END)
            end = size
            while end > 0:
                start = max(0, end - 65536)
                f.seek(start)
                newline = f.read(end - start).rfind(b"\n")
                if newline >= 0:
                    end = start + newline + 1
                    break
                end = start
            if end < size:
                f.truncate(end)
    finally:
        lock.release()


@contextmanager
def storage_errors(location: Location) -> Iterator[None]:
    """Turn the I/O and database errors of a storage call into one-line StudyErrors."""
    try:
        yield
    except StudyError:
        raise
    except OSError as exc:
        raise StudyError(f"cannot write to storage {location.shown}: {exc.strerror or _reason(exc)}; "
                         "free space or choose another --storage, then re-run to resume") from None
    except optuna.exceptions.StorageInternalError as exc:
        raise StudyError(f"storage {location.shown} failed: {_reason(exc)}") from None
    except Exception as exc:
        if type(exc).__module__.startswith("sqlalchemy"):
            raise StudyError(f"storage {location.shown} failed: {_reason(exc)}") from None
        raise


def _reason(exc: BaseException) -> str:
    return _hide_password(" ".join(str(exc).split()))[:200] or type(exc).__name__


def _hide_password(text: str) -> str:
    """``user:secret@host`` -> ``user:***@host`` (URLs end up in messages and JSON records)."""
    import re

    return re.sub(r"(://[^:/@\s]+:)[^@\s]*@", r"\1***@", text)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _install_sqlite_pragmas() -> None:
    """SQLite files in WAL mode with ``synchronous=NORMAL`` and a busy timeout: several worker processes
    can write one file, and a committed trial survives the process being killed (SQLAlchemy's public
    connect event; Optuna's engine is otherwise untouched)."""
    global _PRAGMAS_INSTALLED
    if _PRAGMAS_INSTALLED:
        return
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "connect")
    def _pragmas(connection: Any, _record: Any) -> None:
        if isinstance(connection, sqlite3.Connection):
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()

    _PRAGMAS_INSTALLED = True


class TrialStore:
    """One study in one storage: batched writes of finished trials and incremental reads of the trials
    other writers added, both through Optuna's public storage API."""

    def __init__(self, storage: optuna.storages.BaseStorage, study_id: int, location: Location) -> None:
        self.storage = storage
        self.study_id = study_id
        self.location = location
        self._next_number: int | None = None
        """The first trial number not read yet (None: nothing read yet)."""
        self._pending: set[int] = set()
        """Numbers of trials read while still running (another client's), read again until finished."""
        self._own: set[int] = set()
        """Trial ids this store wrote that the number scan has not passed yet."""

    def append(self, trials: Sequence[FrozenTrial]) -> list[int]:
        """Persist finished trials; Optuna numbers each one under its lock. Returns their trial ids."""
        ids = []
        with storage_errors(self.location):
            for t in trials:
                ids.append(self.storage.create_new_trial(self.study_id, template_trial=t))
        self._own.update(ids)
        return ids

    def read_all(self) -> list[FrozenTrial]:
        """All finished trials in number order, in one bulk read; later ``read_new`` calls continue after
        them. A study whose numbers are not 0..n-1 (written by pimmodel <= 0.1 with several workers,
        which numbered trials without Optuna's lock) is refused."""
        with storage_errors(self.location):
            trials = self.storage.get_all_trials(self.study_id, deepcopy=False)
        numbers = sorted(t.number for t in trials)
        if numbers != list(range(len(numbers))):
            repeated = len(numbers) - len(set(numbers))
            raise StudyError(f"study in {self.location.shown} has {repeated} repeated trial numbers among "
                             f"{len(numbers)} trials (written without Optuna's lock by an older pimmodel); "
                             "start a new study name")
        self._next_number = len(trials)
        self._pending = {t.number for t in trials if not t.state.is_finished()}
        self._own.clear()
        return sorted((t for t in trials if t.state.is_finished()), key=lambda t: t.number)

    def read_new(self) -> list[FrozenTrial]:
        """Finished trials added by others since the last read (all of them on the first call), in
        number order; the trials this store wrote are skipped."""
        if self._next_number is None:
            return self.read_all()
        out = []
        with storage_errors(self.location):
            for number in sorted(self._pending):
                trial = self.storage.get_trial(
                    self.storage.get_trial_id_from_study_id_trial_number(self.study_id, number))
                if trial.state.is_finished():
                    self._pending.discard(number)
                    out.append(trial)
            while True:
                try:
                    trial_id = self.storage.get_trial_id_from_study_id_trial_number(self.study_id,
                                                                                    self._next_number)
                except KeyError:
                    break
                self._next_number += 1
                if trial_id in self._own:
                    self._own.discard(trial_id)
                    continue
                trial = self.storage.get_trial(trial_id)
                if trial.state.is_finished():
                    out.append(trial)
                else:
                    self._pending.add(trial.number)
        return sorted(out, key=lambda t: t.number)
