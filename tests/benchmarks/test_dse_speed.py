"""DSE speed (run on demand: ``python -m pytest tests/benchmarks/test_dse_speed.py -q -s``).

Targets: one process explores studies/scalable-pim.toml at >= 3,000 trials/min on the default storage
(a journal file), and 2 worker processes are not slower than 1. Also measured and printed, not asserted:
the rate on Optuna's RDB storage (SQLite, and PostgreSQL where the server is installed), and the
full-size multi-writer run on PostgreSQL (4 writers in 2 processes, 4,000 trials).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dse"))

import multiwriter  # noqa: E402
import pgcluster  # noqa: E402

from pimmodel.dse.space import load_study  # noqa: E402
from pimmodel.dse.study import run, run_workers, stored_trials  # noqa: E402

STUDY = Path(__file__).resolve().parents[2] / "studies" / "scalable-pim.toml"


def _rate(url: str, trials: int, workers: int = 1) -> float:
    """Trials per minute (wall clock) of a fresh study at ``url``; prints this process's CPU time and the
    machine's load, since on a shared machine the wall-clock rate mostly measures the other processes."""
    spec = load_study(STUDY)
    start, cpu = time.perf_counter(), time.process_time()
    result = run_workers(spec, url, trials, None, 1, workers)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert result.added == trials and len(stored_trials(spec, url)) == trials
    if workers == 1:
        print(f"\n  {trials:,} trials in {elapsed:.1f} s wall, {cpu:.1f} s CPU ({trials / cpu * 60:,.0f} trials per "
              f"CPU-minute); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", end="")
    return trials / elapsed * 60


@pytest.fixture(scope="module", autouse=True)
def warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compile the cost models and import everything once, outside the timings."""
    run(load_study(STUDY), f"journal://{tmp_path_factory.mktemp('warm') / 'w.log'}", trials=100, seed=0)


def test_one_process_default_storage(tmp_path: Path) -> None:
    rate = _rate(f"journal://{tmp_path / 'one.log'}", 3000)
    print(f"\nscalable-pim, journal file, 1 process: {rate:,.0f} trials/min (target >= 3,000)")
    assert rate >= 3000


def test_two_workers_not_slower_than_one(tmp_path: Path) -> None:
    """Issue 29 item 4: the trials of 4,000 (``run_workers``, no CLI start or report), 1 and 2 workers interleaved
    three times; the medians' ratio."""
    rates: dict[int, list[float]] = {1: [], 2: []}
    for r in range(3):
        for w in (1, 2):
            rates[w].append(_rate(f"journal://{tmp_path / f'r{r}w{w}.log'}", 4000, workers=w))
    one, two = (sorted(rates[w])[1] for w in (1, 2))
    print(f"\nscalable-pim, journal file, 4,000 trials: 1 worker {one:,.0f}/min, 2 workers {two:,.0f}/min "
          f"({two / one:.2f}x; per pair {', '.join(f'{b / a:.2f}x' for a, b in zip(*rates.values(), strict=True))})")
    assert two >= one


def test_rdb_rate_sqlite(tmp_path: Path) -> None:
    rate = _rate(f"sqlite:///{tmp_path / 'rdb.db'}", 300)
    print(f"\nscalable-pim, Optuna RDBStorage on SQLite, 1 process: {rate:,.0f} trials/min")


@pytest.fixture(scope="module")
def cluster() -> pgcluster.Cluster:
    bin_dir = pgcluster.server_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server programs (initdb, pg_ctl) installed")
    c = pgcluster.start(bin_dir)
    yield c  # type: ignore[misc]
    c.stop()


def test_rdb_rate_postgres(cluster: pgcluster.Cluster) -> None:
    rate = _rate(cluster.create_database("rate"), 300)
    print(f"\nscalable-pim, Optuna RDBStorage on PostgreSQL, 1 process: {rate:,.0f} trials/min")


def test_postgres_4000_trials_4_writers(cluster: pgcluster.Cluster) -> None:
    url = cluster.create_database("full")
    start = time.perf_counter()
    records = multiwriter.explore_concurrently(url, 2000)
    elapsed = time.perf_counter() - start
    multiwriter.check_study(url, 4000, records)
    print(f"\ntiny study, PostgreSQL, 4 writers in 2 processes: 4,000 trials in {elapsed:.0f} s "
          f"({4000 / elapsed * 60:,.0f} trials/min), 4,000 distinct numbers")


def _per_trial_ms(spec, url: str, trials: int, seed: int, window: tuple[int, int]) -> float:  # type: ignore[no-untyped-def]
    """Milliseconds per trial (wall) between the ``window`` counts of trials this ``run`` stored."""
    marks: dict[int, float] = {}
    run(spec, url, trials=trials, seed=seed, progress=lambda done, _best: marks.setdefault(done, time.perf_counter()))
    lo = min(k for k in marks if k >= window[0])
    hi = max(k for k in marks if k <= window[1])
    return (marks[hi] - marks[lo]) / (hi - lo) * 1e3


@pytest.mark.parametrize("bounded", [True, False], ids=["trimmed-shadow", "whole-history-reference"])
def test_per_trial_cost_stays_flat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bounded: bool) -> None:
    """Issue 29 item 3: at 20k trials no more than 1.25x the per-trial cost at 2k, in one process and resumed.
    The reference keeps NSGA-II's whole history in the shadow (the build before the trimmed shadow)."""
    import pimmodel.dse.study as study_module

    if not bounded:
        monkeypatch.setattr(study_module, "SHADOW_POPULATIONS", 10**9)
    spec = load_study(STUDY)
    url = f"journal://{tmp_path / 'flat.log'}"
    early = _per_trial_ms(spec, url, 2000, 1, (1000, 2000))
    run(spec, url, trials=16000, seed=2)
    resumed = _per_trial_ms(spec, url, 2000, 3, (1000, 2000))  # the run's own count: trials 19,000-20,000
    ratio = resumed / early
    print(f"\nscalable-pim, {'trimmed shadow' if bounded else 'whole history (reference)'}: {early:.2f} ms/trial at "
          f"1-2k, {resumed:.2f} ms/trial at 19-20k resumed: {ratio:.2f}x (target <= 1.25)")
    assert len(stored_trials(spec, url)) == 20000
