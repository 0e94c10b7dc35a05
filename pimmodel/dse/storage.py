"""Study storage through Optuna's public storage API only, correct with many writers, in the forms Optuna's own
CLI and optuna-dashboard take.

Storage arguments (``--storage``, ``$PIMMODEL_STORAGE``), as ``optuna`` and ``optuna-dashboard`` read them:

- a file path (the default, ``pimmodel-studies.log`` in the current directory): Optuna's ``JournalStorage`` on
  one append-only journal file. Writers on one machine or on a shared file system append under the journal's
  lock file (``FILE.lock``, the one Optuna's own writers take); each finished trial is one line.
  ``journal://PATH``, the form pimmodel <= 0.1 printed, is still read and written (``journal:///abs/path.log``
  absolute, ``journal://rel/path.log`` relative to the current directory).
- ``sqlite:///file.db``, ``postgresql+psycopg://user@host/db`` (``pip install 'pimmodel[postgres]'``),
  ``mysql+pymysql://...``: Optuna's ``RDBStorage``. Each trial goes through Optuna's own ``create_new_trial``,
  which numbers it under a lock on the study row: slower than a journal file, correct with any number of
  writers on any number of machines.
- ``redis://host:port/db`` (``pip install 'pimmodel[redis]'``): a journal kept in Redis (Optuna's
  ``JournalRedisBackend``).

Nothing is written before it is checked: a journal file must hold Optuna journal records (a SQLite database, a
text file or random bytes given as a journal are refused untouched), a SQLite file must be a SQLite database, and
the only repair ever made is cutting a torn last record (a write cut off by a full disk or a kill) off a journal.
A lock file left by a killed writer on this machine is recognised by its process id and broken at once.

``TrialStore`` writes a batch of finished trials with ``create_new_trial(template_trial=...)`` and reads
the trials other writers added by trial number (``get_trial_id_from_study_id_trial_number``): numbers are
dense and assigned in commit order under Optuna's lock, so "the next number does not exist yet" means
"nothing newer is committed". No ``optuna.storages._*`` module is imported, and nothing here knows
Optuna's table layout.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import shlex
import socket
import sqlite3
import stat
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock
from optuna.trial import FrozenTrial, TrialState

from ..errors import StudyError
from ..redact import drop_password, mask

log = logging.getLogger(__name__)

JOURNAL_PREFIX = "journal://"
"""pimmodel's own journal URL form (<= 0.1): still read and written; the bare path is what is printed now."""
REDIS_PREFIXES = ("redis://", "rediss://")
DEFAULT_STORAGE = "pimmodel-studies.log"
"""A journal file in the current directory."""
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
CREATE_ATTEMPTS = 12
"""Tries to create Optuna's tables when other writers create them at the same moment."""
EXAMPLES = "studies.log (a journal file), sqlite:///studies.db, postgresql+psycopg://user@host/db or redis://host/0"
SQLITE_HEADER = b"SQLite format 3\x00"
RECORD_START = b'{"op_code":'
"""How every record of an Optuna journal starts (``JournalStorage`` writes ``{"op_code": ..., ...}`` compactly)."""
HEAD_BYTES = 1 << 16
"""Bytes read to check that a file is a journal (its first record, a study's creation, is far shorter)."""
SQLITE_TIMEOUT_S = 60
"""How long a SQLite connection waits for another writer's lock (SQLite's busy timeout)."""
LOCK_GRACE_S = 30
"""A lock whose holder cannot be checked (another machine, Optuna's own writers) is broken after this long
unchanged, as Optuna does."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where a storage argument keeps its data: the argument, its kind and, for files, the file."""

    url: str
    kind: str
    """"journal" (a journal file), "rdb" (SQLAlchemy: SQLite, PostgreSQL, MySQL) or "redis"."""
    path: Path | None
    """The journal file or SQLite database (absolute); None for database servers."""

    @property
    def shown(self) -> str:
        """The storage for messages and records: files absolute, passwords hidden."""
        if self.kind == "journal" and self.path is not None:
            return str(self.path)
        if self.path is not None:
            return f"sqlite:///{self.path}"
        return mask(self.url)

    @property
    def argument(self) -> str:
        """The storage as ``optuna --storage`` and ``optuna-dashboard`` take it unchanged: a journal by its
        absolute path, a database by its URL without the password (give it in ~/.pgpass or PGPASSWORD)."""
        if self.path is not None:
            return self.shown
        return drop_password(self.url)

    def dashboard_command(self) -> str:
        """The shell command that opens optuna-dashboard on this storage."""
        return f"optuna-dashboard {shlex.quote(self.argument)}"

    def optuna_command(self, study: str) -> str:
        """The shell command that lists the study's best trials with Optuna's own CLI."""
        return f"optuna best-trials --storage {shlex.quote(self.argument)} --study-name {shlex.quote(study)}"


def locate(url: str) -> Location:
    """Parse and check a storage argument without opening it (one-line StudyError for anything wrong)."""
    if not url.strip():
        raise StudyError(f"storage {url!r} is empty; give e.g. {EXAMPLES}")
    if url.startswith(JOURNAL_PREFIX):
        raw = url[len(JOURNAL_PREFIX):]
        if not raw:
            raise StudyError(f"storage {url!r} names no file; give the journal's path, e.g. studies.log")
        return Location(url, "journal", _absolute(raw))
    if url.startswith(REDIS_PREFIXES):
        return Location(url, "redis", None)
    if "://" not in url:
        return Location(url, "journal", _absolute(url))
    if url.startswith("sqlite:"):
        raw, _, query = url.split("://", 1)[1].removeprefix("/").partition("?")
        if raw in ("", ":memory:"):
            raise StudyError(f"storage {url!r} is an in-memory database that is lost at exit; "
                             "give a file, e.g. sqlite:///studies.db")
        if query:
            raise StudyError(f"storage {url!r}: options after '?' ({query}) are not applied by pimmodel; give "
                             f"sqlite:///{raw}")
        return Location(url, "rdb", _absolute(raw))
    return Location(url, "rdb", None)


def _absolute(raw: str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(raw)))


def check_file(location: Location, must_exist: bool) -> None:
    """A storage file must be a regular file in an existing directory (``/dev/full`` would otherwise be read as
    an endless line until memory runs out), and hold what its kind says: nothing is written to it otherwise."""
    path = location.path
    if path is None:
        return
    if path.exists():
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            example = "studies.log" if location.kind == "journal" else "sqlite:///studies.db"
            raise StudyError(f"storage {location.shown}: {path} is {what}; give the path of a file, e.g. {example}")
        if not must_exist and not os.access(path, os.R_OK | os.W_OK):
            raise StudyError(f"storage {location.shown}: {path} is not readable and writable by this user")
        problem = _journal_problem(path) if location.kind == "journal" else _sqlite_problem(path)
        if problem:
            raise StudyError(f"storage {location.shown}: {problem}; the file was not changed")
        return
    if must_exist:
        raise StudyError(f"no storage at {location.shown}; run 'pimmodel explore STUDY.toml --storage "
                         f"{location.url}' first, or check the path")
    if not path.parent.is_dir():
        raise StudyError(f"storage {location.shown}: directory {path.parent} does not exist; create it "
                         "or choose another path")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StudyError(f"storage {location.shown}: cannot create files in {path.parent}")


def _journal_problem(path: Path) -> str | None:
    """Why ``path`` is not an Optuna journal file (None: it is one, or empty). Reads its first record only;
    the records after it are checked by Optuna's reader when the storage opens, before anything is written."""
    with path.open("rb") as f:
        head = f.read(HEAD_BYTES)
    if not head:
        return None
    if head.startswith(SQLITE_HEADER):
        return f"{path} is a SQLite database, not an Optuna journal; give sqlite:///{path}"
    if not head.startswith(RECORD_START):
        return f"{path} is not an Optuna journal file (it does not start with a journal record)"
    first, newline, _ = head.partition(b"\n")
    if newline:
        try:
            record = json.loads(first)
        except (ValueError, UnicodeDecodeError):
            return f"{path} is not an Optuna journal file (its first line is not a journal record)"
        if not isinstance(record, dict) or not isinstance(record.get("op_code"), int):
            return f"{path} is not an Optuna journal file (its first line is not a journal record)"
    return None


def _sqlite_problem(path: Path) -> str | None:
    with path.open("rb") as f:
        head = f.read(len(SQLITE_HEADER))
    if not head or head == SQLITE_HEADER:
        return None
    if head.startswith(RECORD_START[:len(head)]):
        return f"{path} is an Optuna journal file, not a SQLite database; give the path alone: {path}"
    return f"{path} is not a SQLite database"


def _torn_tail(path: Path) -> tuple[int, bool] | None:
    """Where an unfinished last line of the journal starts, and whether it is a torn record (the start of one);
    None when the file ends with a whole line."""
    size = path.stat().st_size
    if size == 0:
        return None
    with path.open("rb") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return None
        end = size
        while end > 0:
            start = max(0, end - HEAD_BYTES)
            f.seek(start)
            newline = f.read(end - start).rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        f.seek(end)
        tail = f.read(len(RECORD_START))
    return end, tail.startswith(RECORD_START) or RECORD_START.startswith(tail)


def open_storage(url: str, must_exist: bool = False) -> optuna.storages.BaseStorage:
    """An Optuna storage for ``url``. ``must_exist`` (``explore show``, which only reads): a missing file is
    an error, not a new empty storage, and a journal is not repaired. A malformed URL, a file of another kind,
    an unreachable database or a missing driver is a one-line StudyError."""
    location = locate(url)
    check_file(location, must_exist)
    if location.kind == "journal":
        return _open_journal(location, writing=not must_exist)
    if location.kind == "redis":
        return _open_redis(location)
    return _open_rdb(location)


def _open_journal(location: Location, writing: bool) -> optuna.storages.BaseStorage:
    from optuna.storages.journal import JournalStorage

    assert location.path is not None
    path = str(location.path)
    with storage_errors(location):
        try:  # Optuna's reader checks every record and skips a torn last one: nothing is changed yet
            backend = JournalFile(path, PidLock(path))
            storage = JournalStorage(backend)
            _BATCHES[storage] = backend.batch
        except (ValueError, UnicodeDecodeError) as exc:  # json.JSONDecodeError is a ValueError
            raise StudyError(f"storage {location.shown} is not an Optuna journal file ({_reason(exc)}); the file "
                             "was not changed; give another file") from None
        if writing:
            tail = _torn_tail(location.path)
            if tail is not None and not tail[1]:
                raise StudyError(f"storage {location.shown}: its last line is not a journal record (a record "
                                 "would be glued to it); the file was not changed; give another file")
            if tail is not None:
                _drop_torn_record(location)
    return storage


class Depth:
    """A re-entrant block's depth: true while one is open (``with depth.entered():``); ``on_exit`` runs when the
    outermost block ends, also by an exception."""

    def __init__(self, on_exit: Callable[[], None] | None = None) -> None:
        self.count = 0
        self._on_exit = on_exit

    def __bool__(self) -> bool:
        return self.count > 0

    @contextmanager
    def entered(self) -> Iterator[None]:
        self.count += 1
        try:
            yield
        finally:
            self.count -= 1
            if not self.count and self._on_exit is not None:
                self._on_exit()


class JournalFile(JournalFileBackend):
    """Optuna's journal file backend, with one ``fsync`` per batch of trials: inside ``batch()`` each record is
    appended under the lock as Optuna does (so readers and other writers see it at once, and numbering is
    unchanged; a write that fails, on a full disk, is cut off again, so no torn record is left for the next
    writer to find), and the file is made durable once, when the batch ends, outside the lock. Optuna's backend
    fsyncs every record under the lock, which serialises every writer behind the disk (0.3-3 ms a trial here,
    the largest cost of a second worker process). Outside ``batch()`` it is Optuna's backend unchanged."""

    def __init__(self, path: str, lock: PidLock) -> None:
        super().__init__(path, lock_obj=lock)
        self._path = path
        self._records_lock = lock
        self._batching = Depth(on_exit=self._sync)

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        if not self._batching:
            super().append_logs(logs)
            return
        data = ("\n".join(json.dumps(log, separators=(",", ":")) for log in logs) + "\n").encode("utf-8")
        self._records_lock.acquire()
        try:
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                end = os.lseek(fd, 0, os.SEEK_END)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                except BaseException:  # a full disk: the records go whole or not at all (no torn record left)
                    os.ftruncate(fd, end)
                    raise
            finally:
                os.close(fd)
        finally:
            self._records_lock.release()

    def batch(self) -> AbstractContextManager[None]:
        """Records appended in the block are fsynced once, at its end (also when it ends by an exception)."""
        return self._batching.entered()

    def _sync(self) -> None:
        with open(self._path, "ab") as f:
            os.fsync(f.fileno())


_BATCHES: weakref.WeakKeyDictionary[optuna.storages.BaseStorage, Callable[[], AbstractContextManager[None]]] = (
    weakref.WeakKeyDictionary())
"""The ``batch`` of each journal file storage opened here (``TrialStore.append`` writes a batch inside it)."""


def _drop_torn_record(location: Location) -> None:
    """Cut a torn last record (a write that failed on a full disk, or a kill) off the journal, under its lock:
    every writer appends whole lines under that lock, so a last line without its newline is never still being
    written, and a later append would otherwise glue a record to it and make the file unreadable."""
    path = location.path
    assert path is not None
    lock = PidLock(str(path))
    lock.acquire()
    try:
        tail = _torn_tail(path)
        if tail is not None and tail[1]:
            end = tail[0]
            cut = path.stat().st_size - end
            with path.open("r+b") as f:
                f.truncate(end)
            log.warning("storage %s: cut off a torn last record (%s bytes) left by an interrupted write",
                        location.shown, f"{cut:,}")
    finally:
        lock.release()


def _open_redis(location: Location) -> optuna.storages.BaseStorage:
    from optuna.storages.journal import JournalRedisBackend, JournalStorage

    try:
        import redis  # noqa: F401 - Optuna's JournalRedisBackend needs it
    except ImportError:
        raise StudyError(f"storage {location.shown} needs the redis package; pip install 'pimmodel[redis]'") from None
    with storage_errors(location), _quiet(optuna.exceptions.ExperimentalWarning):
        try:
            return JournalStorage(JournalRedisBackend(location.url))
        except Exception as exc:
            if type(exc).__module__.startswith("redis"):
                raise StudyError(f"cannot open storage {location.shown}: {_reason(exc)}") from None
            raise


def _open_rdb(location: Location) -> optuna.storages.BaseStorage:
    """Optuna's RDBStorage. Processes that open a fresh database at the same moment race to create Optuna's
    tables and version rows; a writer that loses sees the database's own error for it (a table or row that
    already exists, a lock held by another) and opens again."""
    sqlite = location.path is not None
    kwargs: dict[str, Any] = {"connect_args": {"timeout": SQLITE_TIMEOUT_S}} if sqlite else {}
    for attempt in range(CREATE_ATTEMPTS):
        try:
            storage = optuna.storages.RDBStorage(location.url, engine_kwargs=kwargs, heartbeat_interval=None)
        except Exception as exc:  # sqlalchemy raises many kinds: bad dialect, driver missing, unreachable
            if attempt + 1 < CREATE_ATTEMPTS and _creation_race(exc):
                time.sleep(random.uniform(0.05, 0.1) * (attempt + 1))
                continue
            hint = ""
            if isinstance(exc, ImportError) or type(exc).__name__ == "NoSuchModuleError":
                hint = "; install the database driver, e.g. pip install 'pimmodel[postgres]' for postgresql+psycopg://"
            raise StudyError(f"cannot open storage {location.shown}: {_reason(exc)}{hint}") from None
        if sqlite:
            _sqlite_pragmas(storage)
        return storage
    raise AssertionError("unreachable")


def _creation_race(exc: BaseException) -> bool:
    """Whether ``exc`` is what a writer sees when another creates the same tables or rows at the same moment,
    told by the exception's class, never by its message: an integrity error (a version row or a type that
    already exists), SQLite's operational error (a table that already exists, a database locked by another
    writer: SQLite has one class for both), PostgreSQL's duplicate table or object, or a deadlock between two
    creators. Optuna wraps some of them in ``StorageInternalError``; its cause is looked at then."""
    import sqlalchemy.exc

    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, sqlalchemy.exc.IntegrityError):
            return True
        if isinstance(exc, sqlalchemy.exc.DBAPIError):
            orig = exc.orig
            if isinstance(orig, sqlite3.OperationalError | sqlite3.IntegrityError):
                return True
            return _postgres_race(orig)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return False


def _postgres_race(orig: BaseException | None) -> bool:
    try:
        from psycopg import errors
    except ImportError:
        return False
    return isinstance(orig, errors.DuplicateTable | errors.DuplicateObject | errors.UniqueViolation
                      | errors.TransactionRollback | errors.DeadlockDetected)


def _sqlite_pragmas(storage: optuna.storages.RDBStorage) -> None:
    """This storage's SQLite connections (its own engine only, never another engine of the process) in WAL mode
    with ``synchronous=NORMAL``: several worker processes can write one file, and a committed trial survives the
    process being killed. The busy timeout is the connection's own (``connect_args``).

    Every transaction begins ``IMMEDIATE`` (SQLAlchemy's recipe for pysqlite: the driver's own implicit BEGIN off,
    the engine's ``begin`` event emitting it). A deferred transaction that reads and then writes must upgrade its
    lock, and SQLite refuses an upgrade at once with "database is locked", without waiting for the busy timeout,
    when another writer holds the lock; that broke one of 8 writers starting together now and then. An immediate
    transaction takes the write lock when it begins, and waits for it there."""
    from sqlalchemy import event

    def pragmas(connection: Any, _record: Any) -> None:
        connection.isolation_level = None  # pysqlite emits no BEGIN of its own; the "begin" event below does
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    def begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    engine = storage.engine
    event.listen(engine, "connect", pragmas)
    event.listen(engine, "begin", begin)
    engine.dispose()  # the connections made while creating the tables reconnect with the pragmas


# ---------------------------------------------------------------- the journal's lock file
def _host() -> str:
    return socket.gethostname().replace("@", "_") or "localhost"


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), '' where it cannot be read: with the pid it
    names one process, even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


class PidLock(JournalFileSymlinkLock):
    """The journal's lock file ``FILE.lock`` (the symlink Optuna's own writers and optuna-dashboard create), with
    its holder named: it points at an owner file ``.FILE.lock-owner@HOST@PID@START`` beside the journal, which
    exists while the lock is held. A lock whose holder is a process of this machine that is gone (kill -9) is
    broken at once; a lock held by a process of another machine, or by Optuna's own writers (they link to the
    journal itself), is broken after ``LOCK_GRACE_S`` unchanged, as Optuna does."""

    def __init__(self, filepath: str) -> None:
        super().__init__(filepath, grace_period=LOCK_GRACE_S)
        self._dir = os.path.dirname(self._lock_file) or "."
        self._owner_name = (f".{os.path.basename(filepath)}.lock-owner@{_host()}@{os.getpid()}@"
                            f"{_start_time(os.getpid())}")
        self._owner = os.path.join(self._dir, self._owner_name)

    def acquire(self) -> bool:
        sleep_s = 0.001
        seen: str | None = None
        since = time.monotonic()
        with open(self._owner, "ab"):
            pass
        try:
            while True:
                try:
                    os.symlink(self._owner_name, self._lock_file)
                    return True
                except FileExistsError:
                    pass
                holder = _readlink(self._lock_file)
                if holder is None:  # released meanwhile
                    continue
                if holder != seen:
                    seen, since = holder, time.monotonic()
                if self._dead(holder):
                    self._break(holder, "its holder, process {pid} on this machine, is gone")
                    continue
                if time.monotonic() - since > LOCK_GRACE_S and self._pid_of(holder) is None:
                    self._break(holder, f"it has not changed for {LOCK_GRACE_S} s")
                    continue
                time.sleep(sleep_s)
                sleep_s = min(sleep_s * 2, 0.05)
        except BaseException:
            _unlink(self._owner)
            raise

    def release(self) -> None:
        moved = f"{self._lock_file}{uuid.uuid4().hex}.rename"
        try:
            os.rename(self._lock_file, moved)
            os.unlink(moved)
        except OSError:
            raise RuntimeError("Error: did not possess lock") from None
        finally:
            _unlink(self._owner)

    def _pid_of(self, holder: str) -> tuple[str, int, str] | None:
        """(host, pid, start time) of a pimmodel holder of this journal's lock, None for any other link."""
        prefix = f".{os.path.basename(self._lock_target_file)}.lock-owner@"
        if not holder.startswith(prefix):
            return None
        parts = holder[len(prefix):].split("@")
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        return parts[0], int(parts[1]), parts[2]

    def _dead(self, holder: str) -> bool:
        owner = self._pid_of(holder)
        if owner is None:
            return False
        host, pid, started = owner
        if host != _host() or pid == os.getpid():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        return bool(started) and _start_time(pid) not in ("", started)

    def _break(self, holder: str, why: str) -> None:
        """Remove the lock if it still names ``holder``, under a second lock so that two writers breaking the
        same stale lock cannot remove the lock the first of them then takes."""
        breaker = f"{self._lock_file}.break"
        try:
            os.symlink(self._owner_name, breaker)
        except FileExistsError:
            other = _readlink(breaker)
            if other is not None and self._dead(other):
                _unlink(breaker)
            time.sleep(0.001)
            return
        try:
            if _readlink(self._lock_file) == holder:
                _unlink(self._lock_file)
                if self._pid_of(holder) is not None:
                    _unlink(os.path.join(self._dir, holder))
                owner = self._pid_of(holder)
                log.warning("broke the lock file %s: %s", self._lock_file,
                            why.format(pid=owner[1] if owner else "?"))
        finally:
            _unlink(breaker)


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise


# ---------------------------------------------------------------- errors
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
        raise StudyError(f"storage {location.shown} failed: {_reason(exc.__cause__ or exc)}") from None
    except Exception as exc:
        if type(exc).__module__.startswith(("sqlalchemy", "redis")):
            raise StudyError(f"storage {location.shown} failed: {_reason(exc)}") from None
        raise


def _reason(exc: BaseException) -> str:
    """The database's own message of ``exc`` (for SQLAlchemy errors: the driver's, without SQLAlchemy's echo of
    the statement and its parameters), on one line, passwords hidden, never cut mid-sentence."""
    orig = getattr(exc, "orig", None)
    text = str(orig) if orig is not None and str(orig) else str(exc)
    text = text.split("\n[SQL:", 1)[0].split("\n(Background on", 1)[0]
    text = mask(" ".join(text.split()))
    if len(text) > 300:  # a driver's message with a long statement in it: keep its first sentence whole
        first = text.split(". ", 1)[0]
        text = first if len(first) <= 300 else first[:297] + "..."
    return text or type(exc).__name__




@contextmanager
def _quiet(category: type[Warning]) -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category)
        yield


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
        self.written = 0
        """Trials this store has written, counted inside the same deferred-signal block as each write (a Ctrl-C
        or SIGTERM between two writes of a batch leaves the count exact)."""

    def append(self, trials: Sequence[FrozenTrial], stop: Callable[[], bool] | None = None) -> list[int]:
        """Persist finished trials; Optuna numbers each one under its lock. Returns the ids of the trials
        stored: ``stop()`` true ends the batch after the trial being written, and a ``stop`` with a
        ``deferring()`` context (``study.StopRequest``) holds a Ctrl-C until that trial is written whole."""
        ids: list[int] = []
        guard: Callable[[], AbstractContextManager[Any]] = getattr(stop, "deferring", nullcontext)
        try:
            with storage_errors(self.location), _BATCHES.get(self.storage, nullcontext)():
                for t in trials:
                    with guard():
                        ids.append(self.storage.create_new_trial(self.study_id, template_trial=t))
                        self.written += 1
                    if stop is not None and stop():
                        break
        finally:
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
