"""Batch jobs: without a terminal, progress goes to standard logging (one line per tenth of the work or per
minute, with what is done and what is left); -q, -v and --log-file, which may follow any command."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from support import cli

from pimmodel.cli.logs import ProgressLog

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "tests" / "dse" / "small.toml")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (INFO|WARNING|DEBUG|ERROR) ")


def test_a_quiet_stretch_still_gets_a_line_per_interval(monkeypatch: pytest.MonkeyPatch,
                                                        progress_lines: list[str]) -> None:
    monkeypatch.setenv("PIMMODEL_LOG_INTERVAL_S", "0.2")
    with ProgressLog("job", 10) as lines:
        lines.update(0)
        time.sleep(1.3)  # a batch that takes longer than the interval: the timer writes the state
        lines.update(3)
    texts = progress_lines
    assert texts[0] == "job: started (10 to do)" and texts[-1].startswith("job: done: 3 of 10 done (30%), 7 left")
    assert sum("0 of 10 done" in t for t in texts) >= 3


def test_progress_steps_are_tenths(progress_lines: list[str]) -> None:
    with ProgressLog("job", 1000) as lines:
        for done in range(0, 1001, 50):
            lines.update(done)
    shown = [int(m.group(1).replace(",", "")) for line in progress_lines
             if (m := re.search(r": ([\d,]+) of 1,000 done", line))]
    assert shown == [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1000]  # the tenths, then "done"


@pytest.mark.slow
def test_quiet_and_log_file_anywhere_on_the_line(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    quiet = cli("explore", SMALL, "--trials", "20", "--storage", str(tmp_path / "s.log"), "-q", "--log-file",
                str(log))
    assert quiet.returncode == 0, quiet.stderr
    assert " INFO " not in quiet.stderr and " INFO " not in log.read_text()  # -q: warnings and errors only
    loud = cli("--log-file", str(log), "explore", SMALL, "--trials", "20", "--storage", str(tmp_path / "s.log"))
    assert loud.returncode == 0, loud.stderr
    lines = log.read_text().splitlines()
    assert lines and all(STAMP.match(line) for line in lines)
    assert any(re.search(r"small: done: 20 of 20 new trials stored \(100%\), 0 left", line) for line in lines)
    bad = cli("predict", "--log-file", str(tmp_path / "no" / "such" / "x.log"))
    assert bad.returncode == 2 and bad.stderr.startswith("error: cannot write --log-file")


@pytest.mark.slow
def test_a_batch_explore_of_2000_trials_logs_at_least_once_a_minute(tmp_path: Path) -> None:
    """issue 21: a 2,000-trial explore --json without a terminal wrote nothing to stderr until the end."""
    start = datetime.now().replace(microsecond=0)
    p = subprocess.run([sys.executable, "-c", "from pimmodel.cli import main; main()", "explore",
                        str(ROOT / "studies" / "scalable-pim.toml"), "--trials", "2000", "--storage",
                        str(tmp_path / "s.log"), "--json"], capture_output=True, text=True, timeout=1800)
    end = datetime.now()
    assert p.returncode == 0, p.stderr[-2000:]
    stamps = [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S") for line in p.stderr.splitlines()
              if (m := STAMP.match(line))]
    assert stamps, p.stderr
    gaps = [(b - a).total_seconds() for a, b in zip([start, *stamps], [*stamps, end], strict=True)]
    assert max(gaps) <= 61, (gaps, p.stderr)
    assert "scalable-pim: done: 2,000 of 2,000 new trials stored (100%), 0 left" in p.stderr
    assert re.search(r"about [\d.]+ (s|min|h) for 2,000 trials; shorter: --trials N or --timeout SECONDS", p.stderr)
    assert re.search(r"[\d,]+ of 2,000 new trials stored \(\d+%\), [\d,]+ left, .* elapsed", p.stderr)


@pytest.mark.parametrize("flags", [("-q", "-v"), ("--quiet", "-vv"), ("-v", "--quiet")])
def test_contradictory_log_levels_are_refused(flags: tuple[str, ...]) -> None:
    r = cli("specs", "list", *flags)
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.strip() == ("error: -q (warnings only) and -v (debug lines too) contradict each other; give one "
                                "of them"), r.stderr


@pytest.mark.parametrize("command", [
    ("specs", "list", "-o", "{f}"),
    ("predict", "-o", "{f}"),
    ("scale", "--dpus", "64,128", "--plot", "{f}"),
    ("transfer", "--bytes-per-dpu", "1MiB", "-o", "{f}"),
])
def test_a_record_or_plot_on_the_log_file_is_refused(command: tuple[str, ...], tmp_path: Path) -> None:
    """One file cannot hold the record and the log: the run is refused before it writes either."""
    log = tmp_path / "run.log"
    argv = [a.replace("{f}", str(log)) for a in command]
    r = cli(*argv, "--log-file", str(tmp_path / "." / "run.log"))  # another spelling of the same file
    option = argv[argv.index(str(log)) - 1]
    option = {"-o": "--output"}.get(option, option)
    assert r.returncode == 2, r
    assert r.stderr.strip() == f"error: {option} and --log-file name the same file {str(log)!r}; give each its own " \
                               "file", r.stderr
    assert not log.exists() or log.read_text() == ""
