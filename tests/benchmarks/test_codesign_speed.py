"""Co-design study speed: trials per minute of ``studies/codesign.toml`` in one process (run on demand:
``pytest tests/benchmarks/test_codesign_speed.py -s``). Target: >= 2,000 trials/min on the default storage (a
journal file); the rate on SQLite (Optuna's RDB storage) is printed, not asserted. Each trial picks an optimizer,
its H or gossip topology and hardware; its time to target is the stored convergence table's epochs (a lookup) x
the compiled cost model's epoch time, four workloads."""

from __future__ import annotations

import time
from pathlib import Path

from pimmodel.dse.space import load_study
from pimmodel.dse.study import run, stored_trials
from pimmodel.resources import data_dir


def _rate(url: str, trials: int) -> float:
    spec = load_study(data_dir("studies") / "codesign.toml")  # evaluated with the shipped convergence table
    start = time.perf_counter()
    result = run(spec, url, trials=trials, seed=1)
    elapsed = time.perf_counter() - start
    assert result.added == trials and len(stored_trials(spec, url)) == trials
    return result.added / elapsed * 60


def test_codesign_trials_per_minute(tmp_path: Path) -> None:
    spec = load_study(data_dir("studies") / "codesign.toml")
    run(spec, f"journal://{tmp_path / 'warm.log'}", trials=200, seed=0)  # the compiled models, the table, imports
    journal = _rate(f"journal://{tmp_path / 'codesign.log'}", 3000)
    sqlite = _rate(f"sqlite:///{tmp_path / 'codesign.db'}", 1000)
    print(f"\ncodesign, 1 process: {journal:,.0f} trials/min on a journal file (target >= 2,000), "
          f"{sqlite:,.0f} trials/min on SQLite")
    assert journal >= 2000
