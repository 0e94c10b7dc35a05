"""Helpers of the multi-writer tests (also used by the full-size benchmark): run `pimmodel explore
--workers 2` in two processes at once on one storage, then check the stored study."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import optuna

TINY = Path(__file__).with_name("tiny.toml")
PROCESSES = 2
WORKERS_PER_PROCESS = 2
WRITERS = PROCESSES * WORKERS_PER_PROCESS


def explore_concurrently(url: str, trials_per_process: int) -> list[dict]:
    """The --json records of two concurrent `explore --workers 2` runs of tests/dse/tiny.toml."""
    command = [sys.executable, "-c", "from pimmodel.cli import main; main()", "explore", str(TINY),
               "--workers", str(WORKERS_PER_PROCESS), "--trials", str(trials_per_process), "--storage", url,
               "--seed", "0", "--json"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(PROCESSES)]
    records = []
    for p in procs:
        out, err = p.communicate(timeout=1800)
        assert p.returncode == 0, err
        records.append(json.loads(out))
    return records


def check_study(storage: object, total: int, records: list[dict]) -> None:
    """Every trial stored once: numbers 0..total-1, each writer's share complete, all finished."""
    study = optuna.load_study(study_name="tiny", storage=storage)  # type: ignore[arg-type]
    trials = study.trials
    assert len(trials) == total
    assert sorted(t.number for t in trials) == list(range(total))  # distinct numbers, none lost
    assert all(t.state.is_finished() for t in trials)
    writers = Counter(t.user_attrs["worker"] for t in trials)
    assert sorted(writers.values()) == [total // WRITERS] * WRITERS  # every writer's share stored once
    assert all(r["trials"] >= total // PROCESSES and r["front"] for r in records)
    assert max(r["trials"] for r in records) == total  # the process that finished last saw everything
