"""Issue 29 items 4-6: the README's timing table, each figure against a reference measured in the same run (on
demand: ``python -m pytest tests/benchmarks/test_cli_speed.py -q -s``; the rows print as Markdown).

- explore: ``pimmodel explore studies/scalable-pim.toml --trials 4000 --workers 2`` against ``--workers 1``, both
  through the CLI (study report included), interleaved; the trials' own time (the record's ``elapsed_s``) and the
  rest (start, opening, report) are split out, and each run's CPU seconds (the command and its workers) printed.
  On a machine whose cores other work also uses, the wall ratio falls by however much of the second core was taken.
- compare (warm: stand-in curves cached), validate (warm) and reproduce fig2 (warm), each against the CLI's
  own start (``pimmodel --version``) measured in the same run.

Printed, not asserted beyond the stored trial counts: on a shared machine a timing is a measurement to report.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "pimmodel"]
STUDY = str(ROOT / "studies" / "scalable-pim.toml")
REPEATS = 3


def _run(args: list[str], cwd: Path | None = None) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds (the process and its children) of ``pimmodel ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert p.returncode == 0, p.stderr[-2000:]
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, p


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown CPU")
    return f"{os.cpu_count()} CPUs (nproc), {model}"


def _row(*cells: str) -> None:
    print("| " + " | ".join(cells) + " |")


def test_explore_two_workers_against_one() -> None:
    tmp = Path(tempfile.mkdtemp())
    _run(["-q", "explore", STUDY, "--trials", "100", "--storage", str(tmp / "warm.log"), "--json"])  # compile
    walls: dict[int, list[float]] = {1: [], 2: []}
    cpus: dict[int, list[float]] = {1: [], 2: []}
    trials_s: dict[int, list[float]] = {1: [], 2: []}
    for r in range(REPEATS):
        for w in (1, 2):
            wall, cpu, p = _run(["-q", "explore", STUDY, "--trials", "4000", "--workers", str(w), "--storage",
                                 str(tmp / f"r{r}w{w}.log"), "--json"])
            record = json.loads(p.stdout)
            assert record["trials"] == 4000  # the same trial count stored
            walls[w].append(wall)
            cpus[w].append(cpu)
            trials_s[w].append(record["elapsed_s"])  # the run's trials, as the command measured them
        print(f"\n  rep {r}: 1 process {walls[1][-1]:.2f} s ({cpus[1][-1]:.2f} CPU-s), 2 workers {walls[2][-1]:.2f} s "
              f"({cpus[2][-1]:.2f} CPU-s): {walls[1][-1] / walls[2][-1]:.2f}x; load {os.getloadavg()[0]:.1f}", end="")
    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    # outside the trials: the CLI's start, opening the study and the report (``explore show`` is a start, a
    # replay of the journal and the report: what a second process cannot shorten when the run does not overlap it)
    outside = {w: statistics.median(a - b for a, b in zip(walls[w], trials_s[w], strict=True)) for w in (1, 2)}
    trials_ratio = statistics.median(trials_s[1]) / statistics.median(trials_s[2])
    show = statistics.median(_run(["-q", "explore", "show", STUDY, "--storage", str(tmp / "r0w1.log"), "--json"])[0]
                             for _ in range(REPEATS))
    print(f"\n  outside the trials (start, opening, report): 1 process {outside[1]:.2f} s, 2 workers "
          f"{outside[2]:.2f} s (the report's imports load while the trials run); `explore show`: {show:.2f} s; "
          f"the trials alone: {trials_ratio:.2f}x; CPU-s {statistics.median(cpus[1]):.1f} (1) and "
          f"{statistics.median(cpus[2]):.1f} (2)")
    _row("`explore scalable-pim --trials 4000 --workers 2`", f"{two:.1f} s", f"`--workers 1`: {one:.1f} s",
         f"{one / two:.2f}x (the trials alone {trials_ratio:.2f}x; outside them {outside[1]:.1f} s and "
         f"{outside[2]:.1f} s)", "4,000 trials stored by each")


def _against_start(label: str, args: list[str], cwd: Path | None = None, warm_up: bool = True) -> None:
    if warm_up:
        _run(args, cwd)
    start, command = [], []
    for _ in range(REPEATS):  # interleaved: a load that comes and goes slows both sides alike
        start.append(_run(["--version"])[0])
        command.append(_run(args, cwd)[0])
    s, c = statistics.median(start), statistics.median(command)
    print()
    _row(f"`{label}` (warm)", f"{c:.2f} s", f"`pimmodel --version`: {s:.2f} s", f"{c / s:.1f}x the CLI's start", "")


def test_compare_warm() -> None:
    _against_start("compare --dataset criteo-1tb --model lr --optimizer ma-sgd",
                   ["compare", "--dataset", "criteo-1tb", "--model", "lr", "--optimizer", "ma-sgd", "--json"])


def test_validate_warm() -> None:
    _against_start("validate", ["validate", "--json"])


def test_reproduce_fig2_warm() -> None:
    out = Path(tempfile.mkdtemp())
    _against_start("reproduce fig2", ["reproduce", "fig2", "--output", str(out / "figs")])


def test_machine() -> None:
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {machine()}, load average "
          f"{os.getloadavg()[0]:.1f}")
