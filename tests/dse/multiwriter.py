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
    """Every trial stored once: numbers 0..total-1, each process's budget complete (its workers share it: each
    claims its next batch), all finished."""
    study = optuna.load_study(study_name="tiny", storage=storage)  # type: ignore[arg-type]
    trials = study.trials
    assert len(trials) == total
    assert sorted(t.number for t in trials) == list(range(total))  # distinct numbers, none lost
    assert all(t.state.is_finished() for t in trials)
    writers = Counter(t.user_attrs["worker"] for t in trials)
    assert sum(writers.values()) == total and len(writers) <= WRITERS  # each trial by one of the writers
    assert [r["added"] for r in records] == [total // PROCESSES] * PROCESSES  # every process's budget stored once
    assert all(r["trials"] >= total // PROCESSES and r["front"] for r in records)
    assert max(r["trials"] for r in records) == total  # the process that finished last saw everything


def stored_count(url: str) -> int:
    """Trials of the first study in ``url`` so far (0 while the storage does not exist yet)."""
    try:
        return len(open_storage(url, must_exist=True).get_all_trials(0, deepcopy=False))
    except Exception:  # not created yet, or created but still empty of studies
        return 0


TOGETHER = 8
"""Writers started at the same moment on a fresh storage."""
WAIT_THEN_RUN = ("import os, sys, time\n"
                 "import pimmodel.dse.study, pimmodel.dse.objective, pimmodel.cli.explore  # the imports first\n"
                 "go = sys.argv.pop(1)\n"
                 "while not os.path.exists(go):\n"
                 "    time.sleep(0.001)\n"
                 "from pimmodel.cli import main\n"
                 "main()\n")
"""A process that imports everything, waits for the go file, then runs pimmodel: all of them open the storage
within a few milliseconds of each other."""


def start_together(url: str, trials_each: int, go: Path, writers: int = TOGETHER) -> list[tuple[int, str, str]]:
    """``writers`` single-process `explore` runs of tiny.toml on ``url``, released at once: (rc, stdout, stderr)."""
    import time

    procs = [subprocess.Popen([sys.executable, "-c", WAIT_THEN_RUN, str(go), "explore", str(TINY), "--trials",
                               str(trials_each), "--storage", url, "--seed", str(i), "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(writers)]
    time.sleep(3.0 + 0.5 * writers)  # every process has imported and waits (on 2 cores)
    go.touch()
    outputs = [p.communicate(timeout=1800) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]


def check_together(storage: object, trials_each: int, results: list[tuple[int, str, str]]) -> None:
    """Every writer rc 0 and its record says it added its own trials; every trial stored once."""
    finished = results
    assert [c for c, _, _ in finished] == [0] * len(finished), [e[-800:] for c, _, e in finished if c]
    records = [json.loads(out) for _, out, _ in finished]
    assert [r["added"] for r in records] == [trials_each] * len(records)
    assert all(r["elapsed_s"] > 0 and r["trials"] >= trials_each for r in records)
    study = optuna.load_study(study_name="tiny", storage=storage)  # type: ignore[arg-type]
    total = trials_each * len(records)
    assert sorted(t.number for t in study.trials) == list(range(total))
    assert sorted(Counter(t.user_attrs["worker"] for t in study.trials).values()) == [trials_each] * len(records)
    runs = {k for k in study.user_attrs if k.startswith("run:")}
    assert len(runs) == len(records) and "provenance" in study.user_attrs  # each writer's provenance stored
