"""Study wiring: seeds, the front, resume after a kill, two workers on one SQLite file."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import pytest
from multiwriter import stored_count

from pimmodel.dse.result import front, summarize
from pimmodel.dse.study import is_feasible, run, run_workers, stored_trials

SMALL = Path(__file__).with_name("small.toml")


def _signature(trials: list[optuna.trial.FrozenTrial]) -> list[tuple]:
    return [(t.number, tuple(sorted(t.params.items())), tuple(t.values or ())) for t in trials]


def test_seeded_study_is_reproducible(small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = (f"journal://{tmp_path / name}" for name in ("a.log", "b.log"))
    run(small, a, trials=60, seed=7)
    run(small, b, trials=60, seed=7)
    ta, tb = stored_trials(small, a), stored_trials(small, b)
    assert len(ta) == 60
    assert _signature(ta) == _signature(tb)
    c = f"journal://{tmp_path / 'c.log'}"
    run(small, c, trials=60, seed=8)
    assert _signature(stored_trials(small, c)) != _signature(ta)


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_stored_study_is_a_normal_optuna_study(kind: str, small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"journal://{tmp_path / 's.log'}" if kind == "journal" else f"sqlite:///{tmp_path / 's.db'}"
    run(small, url, trials=40, seed=1)
    plain = url if kind == "sqlite" else optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(tmp_path / "s.log")))
    study = optuna.load_study(study_name=small.name, storage=plain)
    ours = stored_trials(small, url)
    assert [t.number for t in study.trials] == list(range(40))
    assert [t.params for t in study.trials] == [t.params for t in ours]
    assert [t.values for t in study.trials] == [t.values for t in ours]
    assert study.metric_names == ["time_per_epoch [s]", "cost [x baseline DPU]"]
    assert study.user_attrs["constraint_names"] == ["memory", "cost"]
    # Optuna's list format (what constraints_func writes and optuna-dashboard reads), one value per name
    assert all(len(t.system_attrs["constraints"]) == 2 for t in study.trials)
    assert all(set(t.constraints) == {"0", "1"} for t in study.trials)


def test_infeasible_designs_never_on_the_front(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    run(small, storage, trials=100, seed=2)
    trials = stored_trials(small, storage)
    assert any(not is_feasible(t) for t in trials)  # mram = 1 MiB cannot hold the data
    groups = front(small, trials)
    best = [t for g in groups for t in g]
    assert best and all(is_feasible(t) and t.params["mram"] == 64 for t in best)
    record = summarize(small, storage, trials=trials)
    assert record["feasible"] == sum(is_feasible(t) for t in trials)
    assert [d["number"] for d in record["front"]] == [g[0].number for g in groups]
    assert sorted(n for d in record["front"] for n in [d["number"], *d["same_objectives"]]) == \
        sorted(t.number for t in best)


def test_front_is_every_feasible_non_dominated_design_once(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    """Checked against a brute-force dominance test: nothing dominated, nothing missing, no two designs
    with the same objective values."""
    run(small, storage, trials=160, seed=4)
    trials = stored_trials(small, storage)
    ok = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE and is_feasible(t)]
    v = np.array([t.values for t in ok])  # both objectives are minimized

    def dominated(i: int) -> bool:
        return bool(np.any(np.all(v <= v[i], axis=1) & np.any(v < v[i], axis=1)))

    expected = {t.number for i, t in enumerate(ok) if not dominated(i)}
    groups = front(small, trials)
    assert {t.number for g in groups for t in g} == expected
    firsts = [tuple(g[0].values) for g in groups]
    assert len(set(firsts)) == len(firsts)
    assert all(tuple(t.values) == tuple(g[0].values) and t.number > g[0].number for g in groups for t in g[1:])
    assert [f[0] for f in firsts] == sorted(f[0] for f in firsts)


@pytest.mark.slow
def test_killed_study_resumes_without_losing_trials(small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """kill -9 mid-study: every stored trial survives and the study resumes. The kill is aimed between two
    appends: a writer killed while holding the journal's lock file leaves it for Optuna to break after its
    30 s grace period, which would only make this test slow."""
    url = f"journal://{tmp_path / 'kill.log'}"
    lock = tmp_path / "kill.log.lock"
    command = [sys.executable, "-c", "from pimmodel.cli import main; main()", "explore", str(SMALL),
               "--trials", "1000000", "--storage", url, "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while stored_count(url) < 200 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    while os.path.lexists(lock) and time.time() < deadline:
        pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = stored_trials(small, url)
    assert len(before) >= 200
    run(small, url, trials=40, seed=11)
    after = stored_trials(small, url)
    assert len(after) == len(before) + 40
    assert _signature(after[:len(before)]) == _signature(before)
    assert [t.number for t in after] == list(range(len(after)))


@pytest.mark.slow
def test_two_workers_share_one_sqlite_study(small, sqlite_storage: str) -> None:  # type: ignore[no-untyped-def]
    result = run_workers(small, sqlite_storage, trials=120, timeout_s=None, seed=5, workers=2)
    assert result.added == 120 and not result.interrupted
    trials = stored_trials(small, sqlite_storage)
    assert len(trials) == 120
    assert sorted(t.number for t in trials) == list(range(120))
    per_worker: dict[str, int] = {}
    for t in trials:
        per_worker[t.user_attrs["worker"]] = per_worker.get(t.user_attrs["worker"], 0) + 1
    assert sum(per_worker.values()) == 120 and len(per_worker) <= 2  # the two shared the budget: none lost or doubled
    db = sqlite_storage.removeprefix("sqlite:///")
    with sqlite3.connect(db) as conn:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert len(optuna.load_study(study_name=small.name, storage=sqlite_storage).trials) == 120


def test_single_objective_tpe(small, storage: str) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from pimmodel.dse.space import Objective

    spec = dataclasses.replace(small, name="tpe", sampler="tpe", objectives=(Objective("time_per_epoch"),))
    run(spec, storage, trials=40, seed=4)
    trials = stored_trials(spec, storage)
    best = [g[0] for g in front(spec, trials)]
    assert len(trials) == 40 and 0 < len(best) <= 10
    values = [t.values[0] for t in best]
    assert values == sorted(values)
    assert values[0] == min(t.values[0] for t in trials if is_feasible(t))


@pytest.mark.parametrize("after_writes", [1, 7, 20, 23])
def test_interrupt_between_two_writes_counts_every_stored_trial(after_writes: int, small,  # type: ignore[no-untyped-def]
                                                                tmp_path: Path) -> None:
    """A Ctrl-C (or a worker's SIGTERM) that lands between two writes of a batch, or just after a batch's last
    write, interrupts ``append``: the run's count is still every trial stored (CI once saw 82 said, 102 stored)."""
    url = f"journal://{tmp_path / 's.log'}"
    calls = [0]

    def stop() -> bool:  # asked after every write: the signal arrives there
        calls[0] += 1
        if calls[0] == after_writes:
            raise KeyboardInterrupt
        return False

    seen: list[int] = []
    result = run(small, url, trials=60, seed=4, progress=lambda done, _best: seen.append(done), stop=stop)
    assert result.interrupted
    assert result.added == len(stored_trials(small, url)) == seen[-1]
    assert result.added > 0 or after_writes == 1  # the first ask comes before any write


def test_the_progress_best_is_the_stored_studys_best_also_when_resumed(small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The progress line's best value is folded in batch by batch (never a rescan): after a run and after a
    resumed one it equals the best feasible first objective of everything stored."""
    url = f"journal://{tmp_path / 's.log'}"
    sign = 1.0 if small.directions[0] == "minimize" else -1.0
    for seed in (3, 4):  # the second run resumes the study: its best starts from the stored trials
        seen: list[float | None] = []
        run(small, url, trials=30, seed=seed, progress=lambda _done, best, seen=seen: seen.append(best))
        feasible = [t.values[0] for t in stored_trials(small, url)
                    if t.state == optuna.trial.TrialState.COMPLETE and is_feasible(t)]
        assert feasible and seen[-1] == min(feasible, key=lambda v: sign * v)


def test_the_shadow_is_trimmed_to_nsga2s_last_generations_and_keeps_learning(small, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                              monkeypatch) -> None:
    """Past SHADOW_POPULATIONS populations the sampler's shadow is rebuilt from NSGA-II's last two generations
    and their parents; the run stays seeded-reproducible and the sampler still breeds from the elite (later
    generations improve on the first's best time)."""
    import pimmodel.dse.study as study_module

    monkeypatch.setattr(study_module, "SHADOW_POPULATIONS", 3)
    sizes: list[int] = []
    real_trim = study_module.Shadow.trim

    def trim(self) -> None:  # type: ignore[no-untyped-def]
        real_trim(self)
        sizes.append(len(self.study.get_trials(deepcopy=False)))

    monkeypatch.setattr(study_module.Shadow, "trim", trim)
    a, b = (f"journal://{tmp_path / name}" for name in ("a.log", "b.log"))
    run(small, a, trials=200, seed=5)
    population = study_module.population_size(small)
    # bounded: trimmed before it holds 3 populations more than the last rebuild kept (at most 3: two generations and
    # the parents of the last, which come from the one before) and a batch
    assert max(sizes) < (3 + 3) * population + small.batch
    assert min(sizes[3:]) >= population  # never below the generations NSGA-II reads
    run(small, b, trials=200, seed=5)
    assert _signature(stored_trials(small, a)) == _signature(stored_trials(small, b))
    times = [t.values[0] for t in stored_trials(small, a) if is_feasible(t) and t.values]
    assert min(times[-population:]) <= min(times[:population])


def test_worker_claims_share_the_last_trials_and_sum_to_the_budget() -> None:
    """Whole batches while at least one per process is left, then half of what is left (rounded up, at least
    TAIL_TRIALS), then nothing: by hand for a budget of 250, batches of 100, two processes: 250 left takes 100,
    150 takes 75, 75 takes 38, 37 takes 19, 18 takes 10, 8 takes 8."""
    import multiprocessing

    from pimmodel.dse.study import TAIL_TRIALS, _Claims

    assert TAIL_TRIALS == 10
    claims = _Claims(multiprocessing.get_context("spawn"), 250, 2)
    grants = [claims(100) for _ in range(8)]
    assert grants == [100, 75, 38, 19, 10, 8, 0, 0]
    one = _Claims(multiprocessing.get_context("spawn"), 130, 1)
    assert [one(100) for _ in range(3)] == [100, 30, 0]
