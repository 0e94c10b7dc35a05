"""Co-design study speed: trials per minute of ``studies/codesign.toml`` in one process (run on demand:
``pytest tests/benchmarks/test_codesign_speed.py -s``). Target: >= 2,000 trials/min, default SQLite storage. Each
trial picks an optimizer, its H or gossip topology and hardware; its time to target is the stored convergence
table's epochs (a lookup) x the compiled cost model's epoch time, four workloads."""

from __future__ import annotations

import time
from pathlib import Path

from pimmodel.dse.space import load_study
from pimmodel.dse.study import run, stored_trials
from pimmodel.resources import data_dir


def test_codesign_trials_per_minute(tmp_path: Path) -> None:
    spec = load_study(data_dir("studies") / "codesign.toml")  # evaluated with the shipped convergence table
    url = f"sqlite:///{tmp_path / 'codesign.db'}"
    run(spec, url, trials=200, seed=0)  # warm the compiled-model cache, the table and imports
    start = time.perf_counter()
    result = run(spec, url, trials=3000, seed=1)
    elapsed = time.perf_counter() - start
    rate = result.added / elapsed * 60
    print(f"\ncodesign speed: {result.added} trials in {elapsed:.1f} s = {rate:,.0f} trials/min (SQLite, one process)")
    assert len(stored_trials(spec, url)) == 3200
    assert rate >= 2000
