"""Every command's --json record carries the same provenance (``api.provenance``: the version with the git commit
and dirty flag, hardware and calibration hashes, the seed, the libraries' versions and the command line), every
stored study too, and ``-o FILE.json`` writes the record --json prints. One table covers every command; a
command added without a row fails ``test_every_command_is_covered``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import cli

import pimmodel.version

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "tests" / "dse" / "small.toml")
KEYS = {"version", "git_commit", "git_dirty", "hardware", "hardware_sha256", "calibration", "calibration_sha256",
        "seed", "libraries", "command"}
LIBRARIES = {"numpy", "scipy", "sympy", "optuna", "python"}
slow = pytest.mark.slow

CASES: dict[str, Any] = {
    "predict": (["predict", "--json"], "upmem-2556"),
    "scale": (["scale", "--dpus", "256,512", "--json"], "upmem-2556"),
    "equations": (["equations", "--json"], None),
    "specs list": (["specs", "list", "--json"], None),
    "specs show": (["specs", "show", "upmem-640", "--json"], "upmem-640"),
    "specs schema": (["specs", "schema", "study", "--json"], None),
    "kernel": (["kernel", "--name", "VA", "--dpus", "1", "--size", "2048", "--json"], "upmem-2556"),
    "kernel --list": (["kernel", "--list", "--json"], None),
    "transfer": (["transfer", "--bytes-per-dpu", "64KiB", "--dpus", "2048", "--json"], "upmem-2556"),
    "transfer --fit": pytest.param(["transfer", "--fit", "--json"], "upmem-2556", marks=slow),
    "kernel --fit": pytest.param(["kernel", "--fit", "--no-cv", "--json"], "upmem-2556", marks=slow),
    "baseline predict": (["baseline", "predict", "--json"], None),
    "baseline measure": pytest.param(["baseline", "measure", "--quick", "--json"], None, marks=slow),
    "sensitivity": pytest.param(["sensitivity", "--json"], "upmem-2556", marks=slow),
    "emulate": pytest.param(["emulate", "--dpus", "4", "--epochs", "1", "--samples-per-dpu", "32", "--features",
                             "64", "--seed", "3", "--json"], "upmem-2556", marks=slow),
    "validate": pytest.param(["validate", "--group", "published", "--json"], "upmem-2556", marks=slow),
    "compare": pytest.param(["compare", "--break-even", "none", "--optimizer", "admm", "--json"], "upmem-2556",
                            marks=slow),
    "calibrate": pytest.param(["calibrate", "--design", "tiny", "--epochs", "1", "--output", "TMP/c.json",
                               "--json"], "upmem-2556", marks=slow),
    "explore": pytest.param(["explore", SMALL, "--trials", "40", "--storage", "TMP/s.log", "--json"], "upmem-2556",
                            marks=slow),
    "explore show": pytest.param(["explore", "show", SMALL, "--storage", "TMP/s.log", "--json"], "upmem-2556",
                                 marks=slow),
    "reproduce": pytest.param(["reproduce", "fig4", "--output", "TMP/figs", "--json"], "upmem-2556", marks=slow),
    "reproduce --list": (["reproduce", "--list", "--json"], None),
    "compare-families": (["compare-families", "--dataset", "criteo-1tb", "--hardware", "hbm-pim-aquabolt", "--json"],
                         None),
}
"""command -> (arguments, the hardware its record names); TMP is the test's folder."""
WRITES_OUTPUT = {"predict", "scale", "equations", "specs list", "specs show", "kernel", "kernel --list", "transfer",
                 "baseline predict", "baseline measure", "sensitivity", "emulate", "validate", "compare", "explore",
                 "explore show", "compare-families"}
"""Commands whose -o FILE.json is the --json record (calibrate's and kernel --fit's -o is the calibration,
reproduce's --output the folder of FIG.json files)."""


def _leaves(command: Any, prefix: tuple[str, ...] = ()) -> list[str]:
    if hasattr(command, "commands"):
        return [leaf for name, sub in command.commands.items() for leaf in _leaves(sub, (*prefix, name))]
    return [" ".join(prefix)]


def test_every_command_is_covered() -> None:
    import typer.main

    from pimmodel.cli.app import app

    assert set(_leaves(typer.main.get_command(app))) <= {name.split(" --")[0] for name in CASES}


def _check(prov: dict[str, Any], hardware: str | None, args: list[str]) -> None:
    assert set(prov) >= KEYS, sorted(KEYS - set(prov))
    assert prov["version"] == pimmodel.version.full_version() and set(prov["libraries"]) == LIBRARIES
    assert prov["git_commit"] == pimmodel.version.git_state()[0]
    assert args[0] in prov["command"]
    if hardware is not None:
        assert prov["hardware"] == hardware and len(prov["hardware_sha256"]) == 12


@pytest.mark.parametrize(("args", "hardware"), list(CASES.values()), ids=list(CASES))
def test_every_json_record_carries_provenance(args: list[str], hardware: str | None, tmp_path: Path,
                                              request: pytest.FixtureRequest) -> None:
    name = request.node.callspec.id
    args = [a.replace("TMP", str(tmp_path)) for a in args]
    if name == "explore show":
        assert cli(*CASES["explore"].values[0][:-1], "--storage", str(tmp_path / "s.log")).returncode == 0
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads(result.stdout)
    _check(record["provenance"], hardware, args)
    if name in WRITES_OUTPUT:
        again = cli(*args, "-o", str(tmp_path / "record.json"), cwd=tmp_path)
        assert again.returncode == 0, again.stderr[-2000:]
        written = json.loads((tmp_path / "record.json").read_text())
        assert set(written) == set(record) and written["provenance"]["version"] == record["provenance"]["version"]


@slow
def test_every_stored_study_carries_provenance(tmp_path: Path) -> None:
    import optuna

    from pimmodel.dse.storage import open_storage

    url = str(tmp_path / "s.log")
    for _ in range(2):
        assert cli("explore", SMALL, "--trials", "20", "--storage", url, "--seed", "4").returncode == 0
    study = optuna.load_study(study_name="small", storage=open_storage(url, must_exist=True))
    runs = {k: v for k, v in study.user_attrs.items() if k.startswith("run:")}
    assert len(runs) == 2 and {t.user_attrs["worker"] for t in study.trials} == {k[4:] for k in runs}
    for prov in [study.user_attrs["provenance"], *runs.values()]:
        _check(prov, "upmem-2556", ["explore"])
        assert prov["seed"] == 4
