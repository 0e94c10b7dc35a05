"""Storage URLs, incremental reads that never miss another writer's trial, study definitions, and the
dashboard's view of a stored study."""

from __future__ import annotations

import dataclasses
import json
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


def test_urls_are_parsed_into_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert locate("journal:///srv/s.log").path == Path("/srv/s.log")
    assert locate("journal://s.log").path == tmp_path / "s.log"
    assert locate("sqlite:///s.db").path == tmp_path / "s.db"
    assert locate("sqlite:////srv/s.db").shown == "sqlite:////srv/s.db"
    server = locate("postgresql+psycopg://me:secret@db.example:5432/studies")
    assert server.path is None and "secret" not in server.shown and server.shown.endswith("@db.example:5432/studies")
    assert locate("journal://s.log").dashboard_command() == f"optuna-dashboard {tmp_path / 's.log'}"
    for bad in ("not-a-url", "sqlite://", "sqlite:///:memory:", "journal://"):
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
    stores = []
    for _ in range(2):
        storage = open_storage(url)
        study = optuna.create_study(study_name="s", storage=storage, load_if_exists=True)
        stores.append(TrialStore(storage, storage.get_study_id_from_name(study.study_name), locate(url)))
    a, b = stores
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
    assert detail["objective_names"] == ["time_per_epoch", "cost"]
    constraints = [t["constraints"] for t in detail["trials"]]
    assert all(len(c) == 2 for c in constraints)  # memory, cost
    feasible = [all(v <= 0 for v in c) for c in constraints]
    ours = [is_feasible(t) for t in stored_trials(small, storage)]
    assert feasible == ours and any(feasible) and not all(feasible)  # mram = 1 MiB never fits


def test_best_trials_are_feasible_and_our_front(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    from pimmodel.dse.result import front

    run(small, storage, trials=100, seed=2)
    study = optuna.load_study(study_name="small", storage=open_storage(storage))
    assert study.metric_names == ["time_per_epoch", "cost"]
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
