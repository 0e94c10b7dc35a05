"""Study storage: any Optuna storage URL, with a fast batched path for relational databases.

Optuna's RDB storage writes every parameter of every trial in its own transaction (about 30 commits per
trial here), which caps a study at a few hundred trials per minute. A DSE batch is evaluated in one
vectorized call, so ``TrialStore`` writes a whole batch of finished trials in ONE transaction into
Optuna's own schema (the tables ``optuna.storages.RDBStorage`` creates; numbers assigned as Optuna does,
under the writer lock), and reads back only the trials added since it last looked. The database stays
a normal Optuna study: ``optuna.load_study``, the dashboard and ``pimmodel explore show`` read it.
SQLite files are opened in WAL mode with ``synchronous=NORMAL``: a committed batch survives the process
being killed, and several worker processes can write one file. Other storages (``journal:///path``
for Optuna's journal file) go through Optuna's public API.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import optuna
from optuna.distributions import json_to_distribution
from optuna.trial import FrozenTrial, TrialState

from ..errors import StudyError

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
_PRAGMAS_INSTALLED = False


def _install_sqlite_pragmas() -> None:
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


def open_storage(url: str) -> optuna.storages.BaseStorage:
    """An Optuna storage for ``url``; a malformed URL or unreachable database is a one-line StudyError."""
    if url.startswith("journal:///"):
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        return JournalStorage(JournalFileBackend(url[len("journal:///") - 1:]))
    if "://" not in url:
        raise StudyError(f"storage {url!r} is not a URL; use e.g. sqlite:///studies.db, "
                         "postgresql://user@host/db or journal:///path/to/file.log")
    _install_sqlite_pragmas()
    try:
        return optuna.storages.RDBStorage(url, heartbeat_interval=None, skip_compatibility_check=False)
    except Exception as exc:  # sqlalchemy raises many kinds: bad dialect, driver missing, unreachable
        reason = " ".join(str(exc).split())[:200]
        raise StudyError(f"cannot open storage {url!r}: {reason}") from None


class TrialStore:
    """Batched trial writes and incremental reads for one study in one storage."""

    def __init__(self, storage: optuna.storages.BaseStorage, study_id: int) -> None:
        self.storage = storage
        self.study_id = study_id
        self.engine = getattr(storage, "engine", None)
        self._last_trial_id = -1
        self._last_number = -1

    # ------------------------------------------------------------ writes
    def append(self, trials: Sequence[FrozenTrial]) -> None:
        """Persist finished trials (one transaction on relational databases)."""
        if not trials:
            return
        if self.engine is None:
            for t in trials:
                self.storage.create_new_trial(self.study_id, template_trial=t)
            return
        for attempt in range(8):
            try:
                with self.engine.begin() as conn:
                    self._insert(conn, trials)
                return
            except Exception as exc:  # database locked / deadlock: retry like Optuna does
                if attempt == 7 or "locked" not in str(exc).lower() and "deadlock" not in str(exc).lower():
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _insert(self, conn: Any, trials: Sequence[FrozenTrial]) -> None:
        from optuna.storages._rdb import models
        from sqlalchemy import func, insert, select

        t_trials = models.TrialModel.__table__
        now = datetime.now(UTC).replace(tzinfo=None)
        ids = []
        for t in trials:
            start = _utc(t.datetime_start) or now
            res = conn.execute(insert(t_trials).values(study_id=self.study_id, number=None, state=t.state,
                                                       datetime_start=start,
                                                       datetime_complete=_utc(t.datetime_complete) or now))
            ids.append(int(res.inserted_primary_key[0]))
        base = conn.execute(select(func.count()).select_from(t_trials).where(
            t_trials.c.study_id == self.study_id, t_trials.c.trial_id < ids[0])).scalar_one()
        from sqlalchemy import update

        conn.execute(update(t_trials).where(t_trials.c.trial_id.in_(ids)).values(
            number=t_trials.c.trial_id - ids[0] + base))
        params, values, user, system = [], [], [], []
        for trial_id, t in zip(ids, trials, strict=True):
            for name, value in t.params.items():
                dist = t.distributions[name]
                params.append({"trial_id": trial_id, "param_name": name, "param_value": dist.to_internal_repr(value),
                               "distribution_json": optuna.distributions.distribution_to_json(dist)})
            for k, v in enumerate(t.values or []):
                stored, kind = models.TrialValueModel.value_to_stored_repr(v)
                values.append({"trial_id": trial_id, "objective": k, "value": stored, "value_type": kind})
            user += [{"trial_id": trial_id, "key": k, "value_json": json.dumps(v)} for k, v in t.user_attrs.items()]
            system += [{"trial_id": trial_id, "key": k, "value_json": json.dumps(v)}
                       for k, v in t.system_attrs.items()]
        for model, rows in ((models.TrialParamModel, params), (models.TrialValueModel, values),
                            (models.TrialUserAttributeModel, user), (models.TrialSystemAttributeModel, system)):
            if rows:
                conn.execute(insert(model.__table__), rows)

    # ------------------------------------------------------------ reads
    def read_new(self) -> list[FrozenTrial]:
        """Finished trials added since the last call (all of them on the first call), in number order."""
        if self.engine is None:
            trials = [t for t in self.storage.get_all_trials(self.study_id, deepcopy=False, states=FINISHED)
                      if t.number > self._last_number]
            if trials:
                self._last_number = max(t.number for t in trials)
            return sorted(trials, key=lambda t: t.number)
        with self.engine.connect() as conn:
            trials = self._select(conn)
        if trials:
            self._last_trial_id = max(t._trial_id for t in trials)
        return trials

    def _select(self, conn: Any) -> list[FrozenTrial]:
        from optuna.storages._rdb import models
        from sqlalchemy import select

        tt = models.TrialModel.__table__
        rows = conn.execute(select(tt).where(tt.c.study_id == self.study_id, tt.c.trial_id > self._last_trial_id,
                                             tt.c.state.in_([s.name for s in FINISHED]))
                            .order_by(tt.c.trial_id)).mappings().all()
        if not rows:
            return []
        ids = [r["trial_id"] for r in rows]
        low, high = min(ids), max(ids)
        parts: dict[str, dict[int, list[Any]]] = {}
        for name, model in (("params", models.TrialParamModel), ("values", models.TrialValueModel),
                            ("user", models.TrialUserAttributeModel), ("system", models.TrialSystemAttributeModel)):
            table = model.__table__
            bucket: dict[int, list[Any]] = {}
            for r in conn.execute(select(table).where(table.c.trial_id >= low, table.c.trial_id <= high)).mappings():
                bucket.setdefault(r["trial_id"], []).append(r)
            parts[name] = bucket
        return [_frozen(r, parts) for r in rows]


def _frozen(row: Any, parts: dict[str, dict[int, list[Any]]]) -> FrozenTrial:
    from optuna.storages._rdb import models

    tid = row["trial_id"]
    params, dists = {}, {}
    for p in parts["params"].get(tid, []):
        dist = json_to_distribution(p["distribution_json"])
        dists[p["param_name"]] = dist
        params[p["param_name"]] = dist.to_external_repr(p["param_value"])
    vals = sorted(parts["values"].get(tid, []), key=lambda v: v["objective"])
    values = [models.TrialValueModel.stored_repr_to_value(v["value"], _value_type(v["value_type"])) for v in vals]
    state = row["state"] if isinstance(row["state"], TrialState) else TrialState[str(row["state"])]
    return FrozenTrial(
        number=int(row["number"]), state=state, value=None, values=values or None,
        datetime_start=_local(row["datetime_start"]), datetime_complete=_local(row["datetime_complete"]),
        params=params, distributions=dists,
        user_attrs={a["key"]: json.loads(a["value_json"]) for a in parts["user"].get(tid, [])},
        system_attrs={a["key"]: json.loads(a["value_json"]) for a in parts["system"].get(tid, [])},
        intermediate_values={}, trial_id=tid)


def _value_type(raw: Any) -> Any:
    from optuna.storages._rdb import models

    kinds = models.TrialValueModel.TrialValueType
    return raw if isinstance(raw, kinds) else kinds[str(raw)]


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None)


def _local(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(tzinfo=UTC).astimezone().replace(tzinfo=None)
