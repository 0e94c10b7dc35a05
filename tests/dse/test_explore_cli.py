"""`pimmodel explore`: the contract JSON, show, plots, and bad input (one line on stderr, exit 2, no
traceback, bounded memory and time), including a full disk and Ctrl-C."""

from __future__ import annotations

import json
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from multiwriter import stored_count

from pimmodel.dse.study import stored_trials

pytestmark = pytest.mark.slow  # servers, processes and end-to-end runs: the slow tier

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).with_name("small.toml")
COMMAND = [sys.executable, "-c", "from pimmodel.cli import main; main()"]
MEMORY_LIMIT_B = 4 * 1024**3
"""Address space a bad-input run may use (reading /dev/full as a journal grew to 23.8 GB)."""


def pimmodel(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_B, MEMORY_LIMIT_B))


def _one_line_error(p: subprocess.CompletedProcess[str]) -> str:
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in p.stderr + p.stdout, p.stderr
    return lines[0]


def test_contract_json_and_show(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    p = pimmodel("explore", str(ROOT / "studies" / "scalable-pim.toml"), "--trials", "40", "--storage", url,
                 "--seed", "1", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert {"study", "trials", "feasible", "front", "baseline", "importances"} <= set(r)
    assert r["study"] == "scalable-pim" and r["trials"] == 40 and r["front"]
    assert all({"params", "objectives"} <= set(d) for d in r["front"])
    shown = pimmodel("explore", "show", str(ROOT / "studies" / "scalable-pim.toml"), "--storage", url, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["front"] == r["front"]
    table = pimmodel("explore", "show", str(ROOT / "studies" / "scalable-pim.toml"), "--storage", url)
    assert "Pareto front" in table.stdout and "importance" in table.stdout


def test_default_storage_in_current_directory_and_plots(small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = pimmodel("explore", str(SMALL), "--trials", "40", "--plot", str(tmp_path / "plots"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    journal = tmp_path / "pimmodel-studies.log"
    assert journal.exists()
    assert f"small: new study in journal://{journal} (40 trials, 1 process)" in p.stdout
    assert f"dashboard: optuna-dashboard {journal}" in p.stdout
    for name in ("pareto_front.png", "history.png", "importances.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 5000
    again = pimmodel("explore", str(SMALL), "--trials", "20", cwd=tmp_path)
    assert f"small: resuming the study in journal://{journal} (40 trials stored, 20 more, 1 process)" in again.stdout
    assert len(stored_trials(small, f"journal://{journal}")) == 60


@pytest.mark.parametrize("args, message", [
    (["explore", "BAD"], "unknown hardware field"),
    (["explore", "MISSING"], "missing.toml"),
    (["explore", str(SMALL), "--storage", "not-a-url"], "is not a URL"),
    (["explore", str(SMALL), "--storage", "nosuchdb://x/y"], "cannot open storage"),
    (["explore", "show", str(SMALL), "--storage", "sqlite:///EMPTY.db"], "no storage at"),
    (["explore", "show", str(SMALL), "--storage", "journal://EMPTY.log"], "no storage at"),
    (["explore", "show"], "needs the study file"),
    (["explore", str(SMALL), "--storage", "journal:///dev/full"], "/dev/full is not a regular file"),
    (["explore", str(SMALL), "--storage", "journal://TMP/no/such/dir/s.log"], "no/such/dir does not exist"),
    (["explore", str(SMALL), "--storage", "sqlite:///TMP/no/such/dir/s.db"], "no/such/dir does not exist"),
    (["explore", str(SMALL), "--storage", "journal://TMP"], "is a directory"),
])
def test_bad_input_is_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('[study]\nname = "x"\n[parameters]\nclock = { low = 2, high = 1 }\n')
    args = [a.replace("BAD", str(tmp_path / "bad.toml")).replace("MISSING", str(tmp_path / "missing.toml"))
            .replace("EMPTY", str(tmp_path / "empty")).replace("TMP", str(tmp_path)) for a in args]
    start = time.perf_counter()
    p = subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory)
    assert message in _one_line_error(p)
    assert time.perf_counter() - start < 30
    assert not (tmp_path / "empty.db").exists() and not (tmp_path / "empty.log").exists()  # show creates nothing


@pytest.mark.parametrize("workers", [1, 2])
def test_full_disk_stops_with_one_line(workers: int, small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A file-size limit makes the journal's append fail with EFBIG as a full disk fails with ENOSPC."""

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))
        _limit_memory()

    url = f"journal://{tmp_path / 's.log'}"
    p = subprocess.run([*COMMAND, "explore", str(SMALL), "--trials", "100000", "--workers", str(workers), "--storage",
                        url], capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    line = _one_line_error(p)
    assert f"cannot write to storage {url}: File too large" in line
    assert (tmp_path / "s.log").stat().st_size <= 256 * 1024
    kept = len(stored_trials(small, url))
    assert kept > 0
    assert pimmodel("explore", str(SMALL), "--trials", "20", "--storage", url).returncode == 0  # space again
    assert len(stored_trials(small, url)) == kept + 20


def test_changed_study_is_not_resumed_silently(tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 's.log'}"
    assert pimmodel("explore", str(SMALL), "--trials", "20", "--storage", url).returncode == 0
    changed = tmp_path / "small.toml"
    changed.write_text(SMALL.read_text().replace("max_cost = 2.0", "max_cost = 1.5"))
    line = _one_line_error(pimmodel("explore", str(changed), "--trials", "20", "--storage", url))
    assert "defined differently (constraints changed)" in line and "--resume-anyway" in line
    p = pimmodel("explore", str(changed), "--trials", "20", "--storage", url, "--resume-anyway", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["trials"] == 40


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_says_what_was_kept(workers: int, small, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"journal://{tmp_path / 's.log'}"
    proc = subprocess.Popen([*COMMAND, "explore", str(SMALL), "--trials", "1000000", "--workers", str(workers),
                             "--storage", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while stored_count(url) < 100 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    line = _one_line_error(subprocess.CompletedProcess(proc.args, proc.returncode, "", err))
    found = re.fullmatch(rf"error: interrupted; ([\d,]+) new trials stored in {re.escape(url)}; re-run the same "
                         r"command to resume", line)
    assert found, line
    kept = int(found.group(1).replace(",", ""))
    assert kept >= 100 and kept == len(stored_trials(small, url))
    assert pimmodel("explore", str(SMALL), "--trials", "20", "--storage", url).returncode == 0
    assert len(stored_trials(small, url)) == kept + 20
