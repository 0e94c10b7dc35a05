"""`pimmodel validate`: JSON record, exit codes, plot, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

KEYS = {"group", "name", "phase", "reference", "predicted", "rel_error", "tolerance", "ok"}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pimmodel", *args], capture_output=True, text=True, timeout=300)


def test_validate_json_finding_group_passes() -> None:
    res = _run("validate", "--group", "finding", "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert record["ok"] is True
    assert record["cases"] and all(set(c) >= KEYS for c in record["cases"])
    assert {c["group"] for c in record["cases"]} == {"finding"}


def test_validate_exit_code_follows_failures(tmp_path: Path) -> None:
    plot = tmp_path / "validation.png"
    res = _run("validate", "--group", "published", "--json", "--plot", str(plot))
    record = json.loads(res.stdout)
    assert res.returncode == (0 if record["ok"] else 1)
    assert all(c["ok"] == _within(c) for c in record["cases"])
    assert plot.stat().st_size > 0


def _within(c: dict) -> bool:
    err, tol = c["rel_error"], c["tolerance"]
    return {"within": abs(err) <= tol, "below": err < tol, "above": err > -tol}[c["kind"]]


def test_validate_bad_group_is_one_line_exit_2() -> None:
    res = _run("validate", "--group", "nonsense")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "nonsense" in res.stderr
