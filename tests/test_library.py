"""Library use: DataFrames of predictions, --output files (CSV / JSON / parquet), figures that leave matplotlib's
global state alone, --version, the provenance every JSON record carries, and what a wheel ships (py.typed,
package data). Commands run in-process where only the output matters (fast), in a subprocess where the exit
code and the one-line error boundary matter."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import support
from support import CliResult

import pimmodel
import pimmodel.version
from pimmodel.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
PROVENANCE_KEYS = {"version", "git_commit", "git_dirty", "hardware", "hardware_sha256", "calibration",
                   "calibration_sha256", "seed", "libraries", "command"}
VERSION = pimmodel.version.full_version()
"""The version with the git commit and dirty flag (``0.1.1.dev333+gc9504e9f9.d20261207``)."""


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run a command in-process; its stdout."""
    capsys.readouterr()
    app(list(args), standalone_mode=False)
    return capsys.readouterr().out


def run(*args: str) -> CliResult:
    return support.cli(*args)


@pytest.fixture(scope="module")
def prediction() -> Any:
    w = pimmodel.Workload(pimmodel.load_dataset("criteo-1tb"), "svm", "admm", dpus=1024)
    return pimmodel.predict(w, "upmem-2556", view="breakdown")


# ---------------------------------------------------------------- DataFrames
def test_prediction_to_dataframe(prediction: Any) -> None:
    pytest.importorskip("pandas")
    frame = prediction.to_dataframe()
    record = prediction.to_record()
    assert frame.shape[0] == 1
    assert {"per_epoch_s.dpu_compute", "per_epoch_s.total", "per_epoch_bytes.host_to_pim", "total_s", "dpus",
            "bottleneck"} <= set(frame.columns)
    assert frame.loc[0, "per_epoch_s.dpu_compute"] == pytest.approx(record["per_epoch_s"]["dpu_compute"])
    assert frame.loc[0, "dpus"] == 1024 and frame.loc[0, "view"] == "breakdown"
    several = pimmodel.to_dataframe([prediction, record])  # Predictions or their records
    assert several.shape == (2, frame.shape[1]) and list(several.columns) == list(frame.columns)


def test_dataframe_without_pandas_is_one_line(prediction: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from pimmodel.report import records

    real = records.importlib.util.find_spec
    monkeypatch.setattr(records.importlib.util, "find_spec", lambda name: None if name == "pandas" else real(name))
    with pytest.raises(ImportError, match=r"needs pandas, which is not installed; pip install 'pimmodel\[pandas\]'"
                       ) as info:
        prediction.to_dataframe()
    assert isinstance(info.value, pimmodel.PimModelError) and "\n" not in str(info.value)


def test_flatten_lists_and_nesting() -> None:
    from pimmodel.report.records import flatten

    flat = flatten({"a": {"b": 1, "c": [0.5, 1.5]}, "chosen": ["x", "y"], "none": [], "n": None})
    assert flat == {"a.b": 1, "a.c.0": 0.5, "a.c.1": 1.5, "chosen": "x; y", "none": "", "n": None}


# ---------------------------------------------------------------- --output
def test_output_csv_and_json_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    printed = json.loads(cli(capsys, "predict", "--json", "--output", str(tmp_path / "p.csv")))
    cli(capsys, "predict", "--output", str(tmp_path / "p.json"))
    assert json.loads((tmp_path / "p.json").read_text()) == printed  # the file is what --json prints
    with open(tmp_path / "p.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["optimizer"] for r in rows] == [p["optimizer"] for p in printed["points"]]
    for row, point in zip(rows, printed["points"], strict=True):
        for phase, seconds in point["per_epoch_s"].items():
            assert float(row[f"per_epoch_s.{phase}"]) == pytest.approx(seconds, rel=1e-12)
        assert int(row["dpus"]) == point["dpus"] and row["bottleneck"] == point["bottleneck"]
        assert row["provenance.hardware_sha256"] == printed["provenance"]["hardware_sha256"]
        assert row["provenance.version"] == VERSION and row["provenance.libraries.numpy"]


def test_scale_output_has_one_row_per_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli(capsys, "scale", "--dpus", "256,512", "--scaling", "strong", "-o", str(tmp_path / "s.csv"))
    with open(tmp_path / "s.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["dpus"]) for r in rows] == [256, 512]
    assert float(rows[0]["scaling_metrics.speedup"]) == 1.0


def test_output_parquet(tmp_path: Path) -> None:
    target = tmp_path / "p.parquet"
    p = run("predict", "--optimizer", "admm", "--output", str(target))
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "pip install 'pimmodel[parquet]'" in p.stderr and not target.exists()
        return
    import pandas as pd

    assert p.returncode == 0, p.stderr
    frame = pd.read_parquet(target)
    assert frame.loc[0, "optimizer"] == "admm" and "per_epoch_s.dpu_compute" in frame.columns


@pytest.mark.parametrize(("name", "fragment"), [("p.xlsx", "use a .csv, .json or .parquet file name"),
                                                ("missing/p.csv", "does not exist")])
def test_bad_output_is_one_line_before_any_work(tmp_path: Path, name: str, fragment: str) -> None:
    p = run("scale", "--output", str(tmp_path / name))
    assert p.returncode == 2 and fragment in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- figures
def _validation_record() -> dict[str, Any]:
    cases = [("emulator", True, "within", 1.0, 1.02), ("published", False, "within", 3e-3, 1.4),
             ("finding", True, "below", 5.0, 0.5)]
    cases = [{"group": g, "ok": ok, "kind": k, "reference": ref, "predicted": ref * f} for g, ok, k, ref, f in cases]
    return {"ok": False, "hardware": "upmem-2556", "cases": cases}


def test_figures_are_returned_and_leave_the_backend_alone(tmp_path: Path) -> None:
    import matplotlib
    from matplotlib.figure import Figure

    from pimmodel.report.plots import save, scaling_plot
    from pimmodel.report.validation_plot import validation_plot

    backend = matplotlib.get_backend()
    yfcc = pimmodel.load_dataset("yfcc100m-hnfc6")
    points = [pimmodel.predict(pimmodel.Workload(yfcc, "lr", "ma-sgd", dpus=n)).to_record() for n in (256, 512)]
    figures = [scaling_plot(points), validation_plot(_validation_record())]
    assert all(isinstance(f, Figure) for f in figures)
    for fig, suffix, magic in zip(figures * 2, (".png", ".svg", ".pdf", ".png"),
                                  (b"\x89PNG", b"<?xml", b"%PDF", b"\x89PNG"), strict=True):
        path = save(fig, tmp_path / f"figure{suffix}")
        assert path.read_bytes().startswith(magic)
    assert matplotlib.get_backend() == backend
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_figures_never_load_pyplot() -> None:
    code = ("import sys, matplotlib\n"
            "before = matplotlib.rcParams._get_backend_or_none()\n"
            "from pimmodel.report.validation_plot import validation_plot\n"
            f"fig = validation_plot({_validation_record()!r})\n"
            "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'\n"
            "assert matplotlib.rcParams._get_backend_or_none() == before, 'backend switched'\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]


def test_bad_plot_name_is_one_line(tmp_path: Path) -> None:
    from pimmodel.report.plots import check_plot_path

    with pytest.raises(pimmodel.PimModelError, match="use a .png, .svg or .pdf file name"):
        check_plot_path(tmp_path / "plot.jpg")


# ---------------------------------------------------------------- version and provenance
def test_version_is_single_sourced() -> None:
    """setuptools-scm is the one source: pyproject names no version and reads none from a module; the installed
    metadata, the generated _version.py and pimmodel.__version__ agree; --version prints the running code's."""
    from importlib import metadata

    p = run("--version")
    assert p.returncode == 0 and p.stdout == f"pimmodel {VERSION}\n"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"] and "version" not in project["project"]
    assert "dynamic" not in project["tool"]["setuptools"]
    assert any(r.startswith("setuptools-scm") for r in project["build-system"]["requires"])
    scm = project["tool"]["setuptools_scm"]
    assert scm["version_file"] == "pimmodel/_version.py" and scm["fallback_version"] == "0.1.0"
    from pimmodel import _version  # type: ignore[attr-defined]

    assert pimmodel.__version__ == _version.__version__ == metadata.version("pimmodel")
    assert _version.__commit_id__ == "g" + pimmodel.version.state_of(pimmodel.__version__)[0]
    assert "/pimmodel/_version.py" in (ROOT / ".gitignore").read_text().splitlines()


def test_predict_and_equations_json_carry_provenance(capsys: pytest.CaptureFixture[str]) -> None:
    record = json.loads(cli(capsys, "predict", "--calibration", "defaults", "--json"))
    prov = record["provenance"]
    assert set(prov) == PROVENANCE_KEYS
    assert prov["version"] == VERSION and prov["hardware"] == "upmem-2556"
    assert prov["calibration"] == "defaults" and len(prov["hardware_sha256"]) == 12
    assert json.loads(cli(capsys, "equations", "--json"))["provenance"]["version"] == VERSION
    shown = json.loads(cli(capsys, "specs", "show", "upmem-640", "--json"))["provenance"]
    assert shown["hardware"] == "upmem-640" and shown["calibration"] is None


def test_validate_json_carries_provenance() -> None:
    p = run("validate", "--group", "finding", "--json")
    prov = json.loads(p.stdout)["provenance"]
    assert set(prov) == PROVENANCE_KEYS and prov["hardware"] == "upmem-2556" and prov["calibration_sha256"]


def test_emulate_json_carries_provenance_with_the_seed() -> None:
    p = run("emulate", "--dpus", "4", "--epochs", "1", "--samples-per-dpu", "32", "--features", "64", "--seed", "7",
            "--json")
    assert p.returncode == 0, p.stderr
    prov = json.loads(p.stdout)["provenance"]
    assert set(prov) == PROVENANCE_KEYS and prov["seed"] == 7 and prov["version"] == VERSION
    assert prov["calibration_sha256"] == pimmodel.provenance(calibration=None).calibration_sha256


def test_hashes(tmp_path: Path) -> None:
    from dataclasses import replace

    from pimmodel.api import calibration_hash, spec_hash
    from pimmodel.calibration.result import SHIPPED_PATH, load_calibration
    from pimmodel.specs import load_hardware, to_toml

    hw = load_hardware("upmem-2556")
    copy = tmp_path / "copy.toml"
    copy.write_text(to_toml(hw))
    assert spec_hash(str(copy)) == spec_hash(hw) == spec_hash("upmem-2556")  # the spec, not its file
    assert spec_hash(replace(hw, dpu_clock_hz=hw.dpu_clock_hz * 2)) != spec_hash(hw)
    shipped = hashlib.sha256(SHIPPED_PATH.read_bytes()).hexdigest()[:12]
    assert calibration_hash(None) == calibration_hash(str(SHIPPED_PATH)) == shipped
    in_memory = load_calibration(None)
    canonical = json.dumps(in_memory.to_json(), sort_keys=True, separators=(",", ":")).encode()
    assert calibration_hash(in_memory) == hashlib.sha256(canonical).hexdigest()[:12]
    assert calibration_hash("defaults") != shipped


# ---------------------------------------------------------------- what a wheel ships
def test_package_data_patterns_match_the_shipped_files() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["pimmodel"]
    package = ROOT / "pimmodel"
    assert "py.typed" in patterns and (package / "py.typed").is_file()
    for pattern in patterns:
        assert list(package.glob(pattern)), f"{pattern} matches no file"
    data = {p.relative_to(package) for p in (package / "data").rglob("*") if p.is_file()}
    shipped = {p.relative_to(package) for pattern in patterns for p in package.glob(pattern) if p.is_file()}
    assert data <= shipped, f"not shipped: {sorted(map(str, data - shipped))}"


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    import os

    from pimmodel.atomic import write_text

    umask = os.umask(0o022)
    os.umask(umask)
    fresh = write_text(tmp_path / "new.txt", "a")
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o640)
    write_text(kept, "new")
    assert kept.stat().st_mode & 0o777 == 0o640 and kept.read_text() == "new"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_version_names_the_commit_and_local_edits() -> None:
    """In this checkout the version is setuptools-scm's now (not the one frozen at pip install -e): it names
    HEAD's commit and flags edits to tracked files, as git sees them."""
    pytest.importorskip("setuptools_scm")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    from pimmodel.version import full_version, git_state

    full_version.cache_clear()  # HEAD may have moved since this process first asked
    version = full_version()
    commit, dirty = git_state()
    head, short = _git(ROOT, "rev-parse", "HEAD"), _git(ROOT, "rev-parse", "--short", "HEAD")
    edited = bool(_git(ROOT, "status", "--porcelain", "--untracked-files=no"))
    assert commit is not None and commit.startswith(short) and head.startswith(commit)
    assert f"+g{commit}" in version and dirty is edited
    assert (re.search(r"\.d\d{8}$", version) is not None) is edited
    assert re.fullmatch(r"0\.1\.1\.dev\d+\+g[0-9a-f]{7,40}(\.d\d{8})?", version), version  # no tag: 0.1.0 + N commits


def test_version_of_a_fresh_repository_and_of_a_tree_without_git(tmp_path: Path) -> None:
    """setuptools-scm with the project's settings: one commit gives 0.1.1.dev1+gHASH, an edit adds the date
    (the dirty flag); the same pyproject without git metadata (an unpacked source archive) gives the fallback."""
    pytest.importorskip("setuptools_scm")
    from pimmodel.version import scm_version, state_of

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    _git(repo, "init", "-q")
    _git(repo, "add", "pyproject.toml")
    _git(repo, "commit", "-qm", "x")
    head = _git(repo, "rev-parse", "HEAD")
    clean = scm_version(repo)
    assert clean is not None and re.fullmatch(r"0\.1\.1\.dev1\+g[0-9a-f]{7,40}", clean), clean
    commit, dirty = state_of(clean)
    assert commit is not None and head.startswith(commit) and dirty is False
    with (repo / "pyproject.toml").open("a") as f:
        f.write("# an edit\n")
    edited = scm_version(repo)
    assert edited is not None and edited.startswith(clean + ".d") and state_of(edited) == (commit, True)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    assert scm_version(bare) == "0.1.0" and state_of("0.1.0") == (None, None)


def test_version_without_a_checkout_is_the_frozen_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the code is no git checkout (a wheel), the version, commit and dirty flag are those setuptools-scm
    froze at build time (_version.py), with no git run."""
    from pimmodel import _version  # type: ignore[attr-defined]
    from pimmodel import version as v

    monkeypatch.setattr(v, "_checkout", lambda: None)
    monkeypatch.setattr(subprocess, "run", None)  # nothing may shell out
    v.full_version.cache_clear()
    try:
        assert v.full_version() == v.__version__ == _version.__version__
        commit, dirty = v.git_state()
        assert commit == _version.__commit_id__.removeprefix("g")
        assert dirty is (re.search(r"\.d\d{8}$", v.__version__) is not None)
        assert v.environment()["git_commit"] == commit
    finally:
        v.full_version.cache_clear()


def test_version_local_label_gives_commit_and_dirty_flag() -> None:
    from pimmodel.version import state_of

    assert state_of("0.1.1.dev3+gc9504e9f9") == ("c9504e9f9", False)
    assert state_of("0.1.1.dev3+gc9504e9f9.d20261207") == ("c9504e9f9", True)
    assert state_of("0.2.0+d20261207") == (None, True)  # a release tag with edits
    assert state_of("0.2.0") == state_of("0+unknown") == state_of("0.1.0") == (None, None)  # nothing known


def test_dataframe_attrs_parquet_metadata_and_consistent_types(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    """CSV and Parquet agree on every column's type (the issue: 'chosen' NaN in one and '' in the other, whole
    counts written as floats), and both carry the provenance: Parquet in its schema metadata too."""
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    printed = json.loads(cli(capsys, "predict", "--dpus", "100", "--json", "-o", str(tmp_path / "p.parquet")))
    cli(capsys, "predict", "--dpus", "100", "-o", str(tmp_path / "p.csv"))
    parquet = pd.read_parquet(tmp_path / "p.parquet")
    text = pd.read_csv(tmp_path / "p.csv")
    assert list(parquet.columns) == list(text.columns)
    for column in ("dpus", "rounds_per_epoch", "epochs"):
        assert str(parquet[column].dtype) == "Int64" and str(text[column].dtype) == "int64", column
        assert (tmp_path / "p.csv").read_text().count(f",{printed['points'][0][column]}.0,") == 0
    assert str(parquet["per_epoch_s.total"].dtype) == "float64"
    assert str(parquet["provenance.git_dirty"].dtype) == "boolean"
    chosen = [p.get("chosen") for p in printed["points"]]
    assert [("" if c is None else "; ".join(c)) for c in chosen] == [
        "" if pd.isna(v) else v for v in parquet["chosen"]] == ["" if pd.isna(v) else v for v in text["chosen"]]
    meta = pq.read_schema(tmp_path / "p.parquet").metadata
    assert json.loads(meta[b"pimmodel"])["provenance"] == printed["provenance"]
    frame = pimmodel.to_dataframe(printed["points"])
    assert str(frame["dpus"].dtype) == "Int64"
