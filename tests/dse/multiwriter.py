"""Helpers of the tests that run `pimmodel explore` processes on a storage (also used by the full-size
benchmark): two `explore --workers 2` processes at once, the check of the stored study, and a count of
the trials stored so far while a process is running."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import optuna

from pimmodel.dse.storage import open_storage

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


def stored_count(url: str) -> int:
    """Trials of the first study in ``url`` so far (0 while the storage does not exist yet)."""
    try:
        return len(open_storage(url, must_exist=True).get_all_trials(0, deepcopy=False))
    except Exception:  # not created yet, or created but still empty of studies
        return 0
