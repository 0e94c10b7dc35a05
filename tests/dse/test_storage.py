"""Storage URLs, incremental reads that never miss another writer's trial, study definitions, and the
dashboard's view of a stored study."""

from __future__ import annotations

import dataclasses
import json
import sys
import wsgiref.util
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState, create_trial

from pimmodel.dse.space import Constraints
from pimmodel.dse.storage import TrialStore, locate, open_storage
from pimmodel.dse.study import is_feasible, open_study, run, stored_trials
from pimmodel.errors import StudyError

OPTUNA_CLI = [sys.executable, "-c", "import sys; from optuna.cli import main; sys.exit(main())"]
"""Optuna's own CLI (``optuna``) of this interpreter."""


def _two_views(url: str) -> tuple[TrialStore, TrialStore]:
    """Two stores on one study "s" at ``url``: two processes' views of it."""
    stores = []
    for _ in range(2):
        storage = open_storage(url)
        study = optuna.create_study(study_name="s", storage=storage, load_if_exists=True)
        stores.append(TrialStore(storage, storage.get_study_id_from_name(study.study_name), locate(url)))
    return stores[0], stores[1]


def test_storage_arguments_as_optuna_and_the_dashboard_take_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    monkeypatch.chdir(tmp_path)
    for journal in ("s.log", "journal://s.log", str(tmp_path / "s.log"), f"journal://{tmp_path / 's.log'}"):
        where = locate(journal)
        file = str(tmp_path / "s.log")
        assert (where.kind, where.path, where.shown, where.argument) == ("journal", tmp_path / "s.log", file, file)
    assert locate("journal:///srv/s.log").path == Path("/srv/s.log")
    assert locate("sqlite:///s.db").path == tmp_path / "s.db"
    assert locate("sqlite:////srv/s.db").shown == "sqlite:////srv/s.db"
    assert locate("redis://localhost:6379/0").kind == "redis"
    server = locate("postgresql+psycopg://me:secret@db.example:5432/studies")
    assert server.path is None and "secret" not in server.shown and server.shown.endswith("@db.example:5432/studies")
    assert server.argument == "postgresql+psycopg://me@db.example:5432/studies"  # the password from ~/.pgpass
    assert locate("s.log").dashboard_command() == f"optuna-dashboard {tmp_path / 's.log'}"
    assert locate("my dir/s.log").optuna_command("small") == \
        f"optuna best-trials --storage '{tmp_path / 'my dir' / 's.log'}' --study-name small"
    for bad in ("", "sqlite://", "sqlite:///:memory:", "journal://", "sqlite:///s.db?mode=ro"):
        with pytest.raises(StudyError):
            locate(bad)


@pytest.mark.parametrize("url", ["journal:///dev/full", "journal:///dev/null", "sqlite:////dev/full"])
def test_devices_are_refused(url: str) -> None:
    with pytest.raises(StudyError, match="not a regular file"):
        open_storage(url)


def test_missing_directory_and_missing_storage(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="does not exist"):
        open_storage(f"journal://{tmp_path / 'no' / 'such' / 's.log'}")
    for url in (f"journal://{tmp_path / 's.log'}", f"sqlite:///{tmp_path / 's.db'}"):
        with pytest.raises(StudyError, match="no storage at"):
            open_storage(url, must_exist=True)
    assert list(tmp_path.iterdir()) == []  # nothing was created


def _trial(x: float, state: TrialState = TrialState.COMPLETE) -> optuna.trial.FrozenTrial:
    return create_trial(state=state, params={"x": x}, distributions={"x": optuna.distributions.FloatDistribution(0, 1)},
                        values=[x] if state == TrialState.COMPLETE else None)


@pytest.mark.parametrize("kind", ["journal", "sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def test_every_other_writers_trial_is_read_once(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Two stores on one study (two processes' views) write in turns; each reads exactly the other's
    trials, once, in number order; a trial another client leaves running shows up once it finishes."""
    url = {"journal": f"journal://{tmp_path / 's.log'}", "sqlite": f"sqlite:///{tmp_path / 's.db'}"}.get(kind)
    if url is None:
        url = request.getfixturevalue("postgres_storage")
    a, b = _two_views(url)
    assert a.read_new() == [] and b.read_new() == []
    seen_by_a: list[optuna.trial.FrozenTrial] = []
    seen_by_b: list[optuna.trial.FrozenTrial] = []
    for turn in range(6):
        writer = a if turn % 2 == 0 else b
        assert len(writer.append([_trial((turn * 3 + i) / 20) for i in range(3)])) == 3
        seen_by_a += a.read_new()
        seen_by_b += b.read_new()
    assert [t.params["x"] for t in seen_by_a] == [(turn * 3 + i) / 20 for turn in (1, 3, 5) for i in range(3)]
    assert [t.params["x"] for t in seen_by_b] == [(turn * 3 + i) / 20 for turn in (0, 2, 4) for i in range(3)]
    numbers = [t.number for t in seen_by_a + seen_by_b]
    assert sorted(numbers) == list(range(18))
    # another client's trial, still running when first seen
    running_id = a.storage.create_new_trial(a.study_id)
    b.append([_trial(0.99)])
    assert [t.params["x"] for t in a.read_new()] == [0.99]
    a.storage.set_trial_param(running_id, "x", 0.5, optuna.distributions.FloatDistribution(0, 1))
    a.storage.set_trial_state_values(running_id, TrialState.COMPLETE, [0.5])
    late = a.read_new()
    assert [(t.number, t.params["x"]) for t in late] == [(18, 0.5)]
    assert a.read_new() == []


def test_a_journal_batch_is_fsynced_once_and_each_record_is_seen_at_once(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: a batch of trials is written record by record under the lock (another client reads each one at
    once) and made durable by one fsync at its end, not one per record under the lock."""
    import os

    url = f"journal://{tmp_path / 's.log'}"
    a, b = _two_views(url)
    syncs: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real(fd))[1])
    seen_mid_batch: list[int] = []
    trials = [_trial(i / 10) for i in range(5)]

    def stop() -> bool:  # called after each record: the other client already reads it
        seen_mid_batch.append(len(b.read_new()))
        return False

    assert len(a.append(trials, stop)) == 5
    assert len(syncs) == 1 and seen_mid_batch == [1, 1, 1, 1, 1]
    assert [t.params["x"] for t in stored_trials_of(url)] == [i / 10 for i in range(5)]


def stored_trials_of(url: str) -> list[optuna.trial.FrozenTrial]:
    storage = open_storage(url, must_exist=True)
    return storage.get_all_trials(storage.get_study_id_from_name("s"))


def test_changed_definition_is_refused_unless_resume_anyway(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    run(small, storage, trials=20, seed=1)
    run(dataclasses.replace(small, trials=999, seed=5, batch=10), storage, trials=20)  # not part of the definition
    assert len(stored_trials(small, storage)) == 40
    changed = dataclasses.replace(small, constraints=Constraints(fit_memory=True, max_cost=1.2))
    with pytest.raises(StudyError, match=r"defined differently \(constraints changed\).*--resume-anyway"):
        open_study(changed, storage)
    run(changed, storage, trials=20, resume_anyway=True)
    assert len(stored_trials(small, storage)) == 60
    bounds = dataclasses.replace(small.parameters[0], high=900.0)
    moved = dataclasses.replace(small, parameters=(bounds, *small.parameters[1:]))
    with pytest.raises(StudyError, match=r"parameters dpu_clock changed"):
        open_study(moved, storage)


def _get(app: Any, path: str) -> Any:
    environ: dict[str, Any] = {"PATH_INFO": path, "REQUEST_METHOD": "GET"}
    wsgiref.util.setup_testing_defaults(environ)
    status: list[str] = []
    body = b"".join(app(environ, lambda s, _headers, *_: status.append(s)))
    assert status[0].startswith("200"), status
    return json.loads(body)


def test_dashboard_shows_named_objectives_and_feasibility(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    import optuna_dashboard  # the 'test' extra installs the 'dashboard' extra: no silent skip

    run(small, storage, trials=60, seed=2)
    app = optuna_dashboard.wsgi(open_storage(storage))
    studies = _get(app, "/api/studies")["study_summaries"]
    assert [s["study_name"] for s in studies] == ["small"]
    detail = _get(app, f"/api/studies/{studies[0]['study_id']}")
    assert detail["objective_names"] == ["time_per_epoch [s]", "cost [x baseline DPU]"]  # axis titles with units
    constraints = [t["constraints"] for t in detail["trials"]]
    assert all(len(c) == 2 for c in constraints)  # memory, cost
    feasible = [all(v <= 0 for v in c) for c in constraints]
    ours = [is_feasible(t) for t in stored_trials(small, storage)]
    assert feasible == ours and any(feasible) and not all(feasible)  # mram = 1 MiB never fits


def test_best_trials_are_feasible_and_our_front(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    from pimmodel.dse.result import front

    run(small, storage, trials=100, seed=2)
    study = optuna.load_study(study_name="small", storage=open_storage(storage))
    assert study.metric_names == ["time_per_epoch [s]", "cost [x baseline DPU]"]
    assert study.user_attrs["constraint_names"] == ["memory", "cost"]
    best = study.best_trials
    assert best and all(is_feasible(t) for t in best)
    assert any(not is_feasible(t) for t in study.trials)
    assert {t.number for group in front(small, study.trials) for t in group} == {t.number for t in best}


def test_partial_last_journal_record_is_dropped_before_writing(tmp_path: Path) -> None:
    """A write cut off by a full disk leaves half a line; the next writer must not glue its record to it."""
    url = f"journal://{tmp_path / 's.log'}"
    study = optuna.create_study(study_name="s", storage=open_storage(url))
    study.add_trials([_trial(0.1), _trial(0.2)])
    whole = (tmp_path / "s.log").read_bytes()
    with (tmp_path / "s.log").open("ab") as f:
        f.write(b'{"op_code":4,"worker_id":"x","study_id":0,"datetime_st')
    again = optuna.load_study(study_name="s", storage=open_storage(url))
    assert (tmp_path / "s.log").read_bytes() == whole
    again.add_trials([_trial(0.3)])
    reread = optuna.load_study(study_name="s", storage=open_storage(url, must_exist=True))
    assert [t.params["x"] for t in reread.trials] == [0.1, 0.2, 0.3]


def test_no_private_optuna_module_is_used() -> None:
    """Optuna's private modules (``optuna.storages._rdb`` ...) change across releases: none is imported or
    reached through attributes anywhere in the package."""
    import ast

    package = Path(__file__).resolve().parents[2] / "pimmodel"
    offenders = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Attribute):
                parts = []
                value: ast.expr = node
                while isinstance(value, ast.Attribute):
                    parts.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name):
                    names = [".".join([value.id, *reversed(parts)])]
            for name in names:
                if name.startswith("optuna.") and any(p.startswith("_") for p in name.split(".")[1:]):
                    offenders.append(f"{path.relative_to(package)}:{node.lineno}: {name}")
    assert offenders == []


# ---------------------------------------------------------------- nothing written before it is checked
def _sqlite_file(path: Path) -> None:
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("create table studies (x)")
        conn.execute("insert into studies values (1)")


@pytest.mark.parametrize("content", ["sqlite", "text", "random", "text-one-line"])
@pytest.mark.parametrize("form", ["bare", "journal://"])
def test_a_file_that_is_no_journal_is_refused_unchanged(content: str, form: str, tmp_path: Path) -> None:
    """issue 19: a SQLite study, a text file or random bytes given as a journal were "repaired" (truncated)
    before being refused."""
    import random

    path = tmp_path / "studies.db"
    if content == "sqlite":
        _sqlite_file(path)
    elif content == "text":
        path.write_text("first line\nsecond line\nlast line without newline")
    elif content == "text-one-line":
        path.write_text("no newline at all")
    else:
        path.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(4096)))
    before = path.read_bytes()
    url = str(path) if form == "bare" else f"journal://{path}"
    with pytest.raises(StudyError, match="SQLite database, not an Optuna journal; give sqlite:///" if content ==
                       "sqlite" else "not an Optuna journal") as info:
        open_storage(url)
    assert "the file was not changed" in str(info.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["studies.db"]  # no lock or owner file left


def test_a_journal_given_as_sqlite_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    optuna.create_study(study_name="s", storage=open_storage(str(path))).add_trials([_trial(0.1)])
    before = path.read_bytes()
    with pytest.raises(StudyError, match="is an Optuna journal file, not a SQLite database"):
        open_storage(f"sqlite:///{path}")
    assert path.read_bytes() == before


def test_only_a_torn_last_record_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    optuna.create_study(study_name="s", storage=open_storage(str(path))).add_trials([_trial(0.1)])
    whole = path.read_bytes()
    path.write_bytes(whole + b"garbage that is no record")  # not the start of a record: refused, not cut
    with pytest.raises(StudyError):
        open_storage(str(path))
    assert path.read_bytes() == whole + b"garbage that is no record"
    for torn in (b"{", b'{"op_c', b'{"op_code":5,"worker_id":"ab'):
        path.write_bytes(whole + torn)
        open_storage(str(path))
        assert path.read_bytes() == whole
    path.write_bytes(whole + b'{"op_code":5')
    open_storage(str(path), must_exist=True)  # reading never repairs
    assert path.read_bytes() == whole + b'{"op_code":5'


# ---------------------------------------------------------------- the journal's lock file
def _dead_pid() -> int:
    import os

    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_a_lock_left_by_a_dead_process_is_broken_at_once(tmp_path: Path) -> None:
    """issue 19: after kill -9 the next run waited Optuna's 30 s grace period for the stale lock."""
    import os
    import socket
    import time

    path = tmp_path / "s.log"
    study = optuna.create_study(study_name="s", storage=open_storage(str(path)))
    owner = f".s.log.lock-owner@{socket.gethostname()}@{_dead_pid()}@1"
    (tmp_path / owner).touch()
    os.symlink(owner, tmp_path / "s.log.lock")
    start = time.monotonic()
    study.add_trials([_trial(0.5)])
    assert time.monotonic() - start < 2
    assert not os.path.lexists(tmp_path / "s.log.lock") and not (tmp_path / owner).exists()
    reread = optuna.load_study(study_name="s", storage=open_storage(str(path), must_exist=True))
    assert [t.params["x"] for t in reread.trials] == [0.5]


def test_a_live_holder_is_waited_for(tmp_path: Path) -> None:
    import os
    import socket
    import threading
    import time

    path = tmp_path / "s.log"
    study = optuna.create_study(study_name="s", storage=open_storage(str(path)))
    owner = f".s.log.lock-owner@{socket.gethostname()}@{os.getppid()}@"  # alive (pytest's parent)
    (tmp_path / owner).touch()
    os.symlink(owner, tmp_path / "s.log.lock")
    released = []

    def release() -> None:
        time.sleep(0.5)
        released.append(time.monotonic())
        os.unlink(tmp_path / "s.log.lock")

    threading.Thread(target=release).start()
    study.add_trials([_trial(0.5)])
    assert released and time.monotonic() >= released[0]


def test_the_lock_is_the_one_optuna_takes(tmp_path: Path) -> None:
    """pimmodel's writers and Optuna's own (optuna-dashboard's notes, a user's script) exclude each other: both
    take FILE.lock, and Optuna's reader follows pimmodel's link to a file that exists while it is held."""
    from optuna.storages.journal import JournalFileSymlinkLock

    from pimmodel.dse.storage import PidLock

    lock = PidLock(str(tmp_path / "s.log"))
    assert lock._lock_file == JournalFileSymlinkLock(str(tmp_path / "s.log"))._lock_file
    lock.acquire()
    try:
        assert (tmp_path / "s.log.lock").resolve().exists()
    finally:
        lock.release()
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- SQLAlchemy: own engines, errors by class
def test_sqlite_pragmas_only_on_pimmodel_engines(tmp_path: Path) -> None:
    import sqlalchemy

    ours = open_storage(f"sqlite:///{tmp_path / 'ours.db'}")
    other = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'other.db'}")
    with other.connect() as conn:
        assert conn.exec_driver_sql("pragma journal_mode").scalar() == "delete"  # the user's engine untouched
    with ours.engine.connect() as conn:  # type: ignore[attr-defined]
        assert conn.exec_driver_sql("pragma journal_mode").scalar() == "wal"


def test_creation_races_are_told_by_class_not_message() -> None:
    import sqlite3

    import sqlalchemy.exc

    from pimmodel.dse.storage import _creation_race, _reason

    unique = sqlalchemy.exc.IntegrityError("INSERT INTO alembic_version ...", {}, sqlite3.IntegrityError(
        "UNIQUE constraint failed: alembic_version.version_num"))
    exists = sqlalchemy.exc.OperationalError("CREATE TABLE studies", {}, sqlite3.OperationalError("anything"))
    wrapped = optuna.exceptions.StorageInternalError("An exception is raised during the commit.")
    wrapped.__cause__ = unique
    assert _creation_race(unique) and _creation_race(exists) and _creation_race(wrapped)
    assert not _creation_race(ValueError("UNIQUE constraint failed"))  # the words alone are not the class
    refused = sqlalchemy.exc.OperationalError("connect", {}, ConnectionRefusedError("already exists"))
    assert not _creation_race(refused)
    long = sqlalchemy.exc.IntegrityError("INSERT " + "x" * 500, {"p": 1}, sqlite3.IntegrityError(
        "UNIQUE constraint failed: alembic_version.version_num"))
    assert _reason(long) == "UNIQUE constraint failed: alembic_version.version_num"  # whole, without the SQL


@pytest.mark.slow
def test_redis_storage(tmp_path: Path) -> None:
    """redis:// through Optuna's JournalRedisBackend, on a throw-away redis-server on loopback."""
    import shutil
    import socket
    import subprocess
    import time

    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server on PATH (Debian: apt-get install redis-server); the redis test needs one")
    pytest.importorskip("redis", reason="the redis extra is not installed (pip install 'pimmodel[redis]')")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 20
        while True:
            try:
                storage = open_storage(url)
                break
            except StudyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        from pimmodel.dse.space import load_study

        small = load_study(Path(__file__).with_name("small.toml"))
        run(small, url, trials=40, seed=1)
        assert len(stored_trials(small, url)) == 40
        assert len(optuna.load_study(study_name="small", storage=storage).trials) == 40
        p = subprocess.run([*OPTUNA_CLI, "best-trials", "--storage", url, "--study-name", "small", "-f", "json"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and json.loads(p.stdout), p.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=10)
