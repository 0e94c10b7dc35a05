"""`pimmodel calibrate` on the tiny design: writes a file that `predict --calibration` reads."""

from __future__ import annotations

import json
from pathlib import Path

from support import CliResult, cli


def _run(*args: str) -> CliResult:
    return cli(*args)


def test_calibrate_tiny_then_predict(tmp_path: Path) -> None:
    out = tmp_path / "cal.json"
    res = _run("calibrate", "--design", "tiny", "--output", str(out), "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert record["output"] == str(out) and out.exists()
    assert set(record["errors"]) == {"before", "after"}
    pred = _run("predict", "--optimizer", "admm", "--calibration", str(out), "--interval", "--json")
    assert pred.returncode == 0, pred.stderr
    point = json.loads(pred.stdout)["points"][0]
    assert point["calibration"] == record["label"]
    lo, hi = point["interval"]["per_epoch_s"]["total"]
    assert lo <= point["per_epoch_s"]["total"] <= hi


def test_calibrate_bad_design_exit_2() -> None:
    res = _run("calibrate", "--design", "huge")
    assert res.returncode == 2 and res.stderr.count("\n") == 1
