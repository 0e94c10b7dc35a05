"""Issue 31: every long command says from its first second what it is doing where no bar is drawn (stderr not a
terminal: a batch job, a pipe, CI): a "started" line, lines as it goes, and a "done" line; ``Task`` is the one
place that makes both the bar and the lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import cli

from pimmodel.cli import logs
from pimmodel.cli.logs import Task

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO (.+?): (started|done)\b(.*)$")


def _progress(stderr: str) -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2), m.group(3)) for line in stderr.splitlines() if (m := LINE.match(line))]


@pytest.mark.parametrize(("args", "what"), [
    (("emulate", "--dpus", "8", "--epochs", "1"), "emulating synthetic-yfcc on 8 DPUs (ma-sgd, 1 epochs)"),
    pytest.param(("emulate", "--workload", "kmeans", "--dataset", "iris", "--clusters", "3", "--dpus", "4"),
                 "emulating K-means (k = 3) on 4 DPUs", marks=pytest.mark.slow),  # 2 s each: the slow tier
    pytest.param(("baseline", "measure", "--quick"), "measuring this machine's CPU baselines", marks=pytest.mark.slow),
    (("reproduce", "fig2"), "reproducing 1 figure"),
    (("calibrate", "--design", "tiny", "--epochs", "1"), "calibrating: emulating the design's points"),
])
def test_a_long_command_without_a_terminal_says_started_and_done(args: tuple[str, ...], what: str,
                                                                  tmp_path: Path) -> None:
    extra = ("--output", str(tmp_path / "out")) if args[0] in ("reproduce", "calibrate") else ()
    if args[0] == "baseline":
        extra = ("--output", str(tmp_path / "baselines.json"))
    result = cli(*args, *extra, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = _progress(result.stderr)
    assert lines, result.stderr[-2000:]
    assert lines[0][:2] == (what, "started"), lines
    assert lines[-1][:2] == (what, "done"), lines  # the last line of the task: what it did in how long
    assert "elapsed" in lines[-1][2] or " done in " in lines[-1][2], lines[-1]


def test_a_task_says_each_new_stage_once_and_counts_in_its_unit(progress_lines: list[str]) -> None:
    with Task("job", 4, unit="steps") as task:
        task.update(advance=1, description="loading", say=True)
        task.update(advance=1, description="loading", say=True)  # the same stage: no second line
        task.update(advance=1, description="fitting", say=True)
        task.update(advance=1, description="fitting")
    assert progress_lines[0] == "job: started (4 steps to do)"
    assert progress_lines.count("job: loading") == 1 and progress_lines.count("job: fitting") == 1
    assert progress_lines[-1].startswith("job: done: 4 of 4 steps done (100%), 0 left")
    assert progress_lines.index("job: loading") < progress_lines.index("job: fitting")


def test_the_first_estimate_comes_after_a_few_seconds_not_a_tenth(progress_lines: list[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """1 of 1,000 done is under a tenth: without the first estimate a slow start would say nothing for minutes."""
    clock = [100.0]
    monkeypatch.setattr(logs.time, "monotonic", lambda: clock[0])
    with Task("job", 1000) as task:
        task.update(advance=1)
        assert len(progress_lines) == 1  # only "started": one second in
        clock[0] += logs.FIRST_ESTIMATE_S
        task.update(advance=1)
        line = progress_lines[-1]
        assert re.fullmatch(r"job: 2 of 1,000 done \(0%\), 998 left, .* elapsed, about .* left", line), line
        clock[0] += 1.0
        task.update(advance=1)  # one estimate, then tenths or the interval again
        assert len(progress_lines) == 2, progress_lines


def test_a_task_without_a_total_says_how_long_it_has_run(progress_lines: list[str]) -> None:
    with Task("job") as task:
        task.update(description="first stage", say=True)
    assert progress_lines[0] == "job: started" and progress_lines[1] == "job: first stage"
    assert re.fullmatch(r"job: done: [\d.]+ (ms|s) elapsed", progress_lines[-1]), progress_lines
