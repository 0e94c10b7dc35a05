"""Ctrl-C in every long command: exit code 130 within 2 s of the signal, one line saying what was kept, and no
traceback from the command or any of its worker processes. Real processes (signals), cold caches where the
first thing a command does is compile or train: the slow tier."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "dse" / "small.toml"
COMMAND = [sys.executable, "-c", "from pimmodel.cli import main; main()"]
COMPILING = [sys.executable, "-c", "import pathlib, pimmodel.costmodel.compile as c; c.SHIPPED = pathlib.Path("
             "'/nonexistent'); from pimmodel.cli import main; main()"]
"""A process that finds no shipped model sources (a checkout whose edits changed the model): with an empty cache
its first seconds compile the equations."""
EXIT_WITHIN_S = 2.0

pytestmark = pytest.mark.slow  # real processes and signals


def _interrupt(args: list[str], tmp_path: Path, ready: object, cold: bool = True,
               command: list[str] = COMMAND) -> tuple[str, float]:
    """Start ``pimmodel ARGS`` (a fresh cache when ``cold``), wait until ``ready()`` (or for that many seconds),
    send SIGINT to it alone, and return its stderr and the seconds it took to exit after the signal."""
    env = {**os.environ}
    if cold:
        env["PIMMODEL_CACHE_DIR"] = str(tmp_path / "cache")
    proc = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=env)
    deadline = time.monotonic() + 180
    if callable(ready):
        while not ready() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
    else:
        time.sleep(float(ready))  # type: ignore[arg-type]
    assert proc.poll() is None, f"finished before the interrupt: {proc.communicate()[1][-2000:]}"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - sent
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "Exception ignored" not in err, err[-3000:]
    lines = [line for line in err.strip().splitlines() if " INFO " not in line and not line.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: interrupted; "), err[-3000:]
    return lines[0], took


def _stored(url: Path) -> int:
    """Trials stored so far (0 before the journal has a study)."""
    from pimmodel.dse.storage import open_storage

    try:
        return len(open_storage(str(url), must_exist=True).get_all_trials(0, deepcopy=False))
    except Exception:
        return 0


@pytest.mark.parametrize("workers", [1, 2])
def test_explore_on_a_cold_cache_while_compiling(workers: int, tmp_path: Path) -> None:
    """The first seconds on a cold cache compile the equations (once, in the parent, before any worker)."""
    line, took = _interrupt(["explore", str(ROOT / "studies" / "codesign.toml"), "--trials", "100000", "--workers",
                             str(workers), "--storage", str(tmp_path / "s.log")], tmp_path, 4.0, command=COMPILING)
    assert took < EXIT_WITHIN_S, took
    assert re.fullmatch(r"error: interrupted; 0 new trials stored in .*s\.log; re-run the same command to resume",
                        line), line


@pytest.mark.parametrize("workers", [1, 2])
def test_explore_mid_run_keeps_every_counted_trial(workers: int, tmp_path: Path) -> None:
    from pimmodel.dse.space import load_study
    from pimmodel.dse.study import stored_trials

    url = tmp_path / "s.log"
    line, took = _interrupt(["explore", str(SMALL), "--trials", "1000000", "--workers", str(workers), "--storage",
                             str(url)], tmp_path, lambda: _stored(url) >= 100)
    assert took < EXIT_WITHIN_S, took
    found = re.fullmatch(r"error: interrupted; ([\d,]+) new trials stored in .*; re-run the same command to resume",
                         line)
    assert found, line
    assert int(found.group(1).replace(",", "")) == len(stored_trials(load_study(SMALL), str(url))) >= 100


def test_reproduce(tmp_path: Path) -> None:
    line, took = _interrupt(["reproduce", "fig5", "--output", str(tmp_path / "figs")], tmp_path, 6.0)
    assert took < EXIT_WITHIN_S and "cached" in line, (took, line)


def test_calibrate(tmp_path: Path) -> None:
    """Five epochs a point (8 s here): the default design's two (2 s, its equations shipped) end before 6 s."""
    line, took = _interrupt(["calibrate", "--output", str(tmp_path / "c.json"), "--epochs", "5"], tmp_path, 3.0)
    assert took < EXIT_WITHIN_S and "nothing was written" in line, (took, line)
    assert not (tmp_path / "c.json").exists()


def test_baseline_measure(tmp_path: Path) -> None:
    """Its worker processes printed two tracebacks on Ctrl-C."""
    line, took = _interrupt(["baseline", "measure"], tmp_path, 6.0, cold=False)
    assert took < EXIT_WITHIN_S and "nothing was written" in line, (took, line)


def test_emulate(tmp_path: Path) -> None:
    line, took = _interrupt(["emulate", "--dpus", "64", "--epochs", "200"], tmp_path, 6.0)
    assert took < EXIT_WITHIN_S and "nothing was kept" in line, (took, line)


def test_compare(tmp_path: Path) -> None:
    line, took = _interrupt(["compare", "--break-even", "none"], tmp_path, 6.0)
    assert took < EXIT_WITHIN_S and "cached" in line, (took, line)


def test_validate(tmp_path: Path) -> None:
    """validate has no interrupt block of its own: typer's silent exit code 130 became the one line (issue 31)."""
    line, took = _interrupt(["validate"], tmp_path, 1.0)
    assert took < EXIT_WITHIN_S and "nothing was written" in line, (took, line)


def test_emulate_kmeans(tmp_path: Path) -> None:
    line, took = _interrupt(["emulate", "--workload", "kmeans", "--clusters", "8", "--points", "20M", "--dims", "16",
                             "--dpus", "64"], tmp_path, 3.0, cold=False)
    assert took < EXIT_WITHIN_S and "nothing was written" in line, (took, line)
