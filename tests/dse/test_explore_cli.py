"""`pimmodel explore`: the contract JSON, show, plots, and bad input (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).with_name("small.toml")


def pimmodel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from pimmodel.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=600, cwd=cwd)


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


def test_default_storage_in_current_directory_and_plots(tmp_path: Path) -> None:
    p = pimmodel("explore", str(SMALL), "--trials", "40", "--plot", str(tmp_path / "plots"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "pimmodel-studies.db").exists()
    for name in ("pareto_front.png", "history.png", "importances.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 5000


@pytest.mark.parametrize("args", [
    ["explore", "BAD"],
    ["explore", "MISSING"],
    ["explore", str(SMALL), "--storage", "not-a-url"],
    ["explore", str(SMALL), "--storage", "nosuchdb://x/y"],
    ["explore", "show", str(SMALL), "--storage", "sqlite:///EMPTY"],
    ["explore", "show"],
])
def test_bad_input_is_one_line_exit_2(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('[study]\nname = "x"\n[parameters]\nclock = { low = 2, high = 1 }\n')
    args = [a.replace("BAD", str(tmp_path / "bad.toml")).replace("MISSING", str(tmp_path / "missing.toml"))
            .replace("EMPTY", str(tmp_path / "empty.db")) for a in args]
    p = pimmodel(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in p.stderr
