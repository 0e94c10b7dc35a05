"""Study wiring: seeds, the front, resume after a kill, two workers on one SQLite file."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import optuna

from pimmodel.dse.result import front, pareto_mask, summarize
from pimmodel.dse.study import is_feasible, run, run_workers, stored_trials

SMALL = Path(__file__).with_name("small.toml")


def _signature(trials: list[optuna.trial.FrozenTrial]) -> list[tuple]:
    return [(t.number, tuple(sorted(t.params.items())), tuple(t.values or ())) for t in trials]


def test_seeded_study_is_reproducible(small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = (f"sqlite:///{tmp_path / name}" for name in ("a.db", "b.db"))
    run(small, a, trials=60, seed=7)
    run(small, b, trials=60, seed=7)
    ta, tb = stored_trials(small, a), stored_trials(small, b)
    assert len(ta) == 60
    assert _signature(ta) == _signature(tb)
    c = f"sqlite:///{tmp_path / 'c.db'}"
    run(small, c, trials=60, seed=8)
    assert _signature(stored_trials(small, c)) != _signature(ta)


def test_stored_study_is_a_normal_optuna_study(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    run(small, storage, trials=40, seed=1)
    study = optuna.load_study(study_name=small.name, storage=storage)
    ours = stored_trials(small, storage)
    assert [t.number for t in study.trials] == list(range(40))
    assert [t.params for t in study.trials] == [t.params for t in ours]
    assert [t.values for t in study.trials] == [t.values for t in ours]
    assert all(set(t.constraints) == {"memory", "cost"} for t in study.trials if hasattr(t, "constraints"))


def test_infeasible_designs_never_on_the_front(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    run(small, storage, trials=100, seed=2)
    trials = stored_trials(small, storage)
    assert any(not is_feasible(t) for t in trials)  # mram = 1 MiB cannot hold the data
    best = front(small, trials)
    assert best and all(is_feasible(t) and t.params["mram"] == 64 for t in best)
    record = summarize(small, storage, trials=trials)
    assert record["feasible"] == sum(is_feasible(t) for t in trials)
    assert {d["number"] for d in record["front"]} == {t.number for t in best}


def test_pareto_mask_small_case() -> None:
    import numpy as np

    v = np.array([[1.0, 5.0], [2.0, 2.0], [3.0, 3.0], [5.0, 1.0], [6.0, 6.0]])
    assert pareto_mask(v, ["minimize", "minimize"]).tolist() == [True, True, False, True, False]
    assert pareto_mask(v, ["minimize", "maximize"]).tolist() == [True, False, False, False, True]


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            return conn.execute("select count(*) from trials where state = 'COMPLETE'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_killed_study_resumes_without_losing_trials(small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "kill.db"
    url = f"sqlite:///{db}"
    command = [sys.executable, "-c", "from pimmodel.cli import main; main()", "explore", str(SMALL),
               "--trials", "1000000", "--storage", url, "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while _count(db) < 200 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = stored_trials(small, url)
    assert len(before) >= 200
    with sqlite3.connect(db) as conn:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    run(small, url, trials=40, seed=11)
    after = stored_trials(small, url)
    assert len(after) == len(before) + 40
    assert _signature(after[:len(before)]) == _signature(before)
    assert [t.number for t in after] == list(range(len(after)))


def test_two_workers_share_one_sqlite_study(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    run_workers(small, storage, trials=200, timeout_s=None, seed=5, workers=2)
    trials = stored_trials(small, storage)
    assert len(trials) == 200
    assert sorted(t.number for t in trials) == list(range(200))
    assert len({t._trial_id for t in trials}) == 200
    per_worker: dict[str, int] = {}
    for t in trials:
        per_worker[t.user_attrs["worker"]] = per_worker.get(t.user_attrs["worker"], 0) + 1
    assert sorted(per_worker.values()) == [100, 100]  # each wrote its share once: no trial lost or doubled
    db = storage.removeprefix("sqlite:///")
    with sqlite3.connect(db) as conn:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert len(optuna.load_study(study_name=small.name, storage=storage).trials) == 200


def test_single_objective_tpe(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from pimmodel.dse.space import Objective

    spec = dataclasses.replace(small, name="tpe", sampler="tpe", objectives=(Objective("time_per_epoch"),))
    run(spec, storage, trials=40, seed=4)
    trials = stored_trials(spec, storage)
    best = front(spec, trials)
    assert len(trials) == 40 and 0 < len(best) <= 10
    values = [t.values[0] for t in best]
    assert values == sorted(values)
    assert values[0] == min(t.values[0] for t in trials if is_feasible(t))
