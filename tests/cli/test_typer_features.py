"""typer's features switched on: shell completion, environment variables for the defaults of --hardware and
--storage, and help text shown as written (rich markup swallowed the '[postgres]' of an install hint)."""

from __future__ import annotations

import json

from support import cli


def test_help_shows_extras_names_and_completion() -> None:
    shown = cli("explore", "--help").stdout
    assert "pimmodel[postgres]" in shown and "pimmodel[dashboard]" in shown and "PIMMODEL_STORAGE" in shown
    top = cli("--help").stdout
    assert "--install-completion" in top and "--log-file" in top


def test_hardware_default_from_the_environment() -> None:
    r = cli("predict", "--dpus", "64", "--json", env={"PIMMODEL_HARDWARE": "upmem-640"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["provenance"]["hardware"] == "upmem-640"
    assert json.loads(cli("predict", "--dpus", "64", "--json").stdout)["provenance"]["hardware"] == "upmem-2556"


def test_storage_default_from_the_environment(tmp_path: object) -> None:
    from pathlib import Path

    journal = Path(str(tmp_path)) / "env.log"
    small = Path(__file__).resolve().parents[1] / "dse" / "small.toml"
    r = cli("explore", "show", str(small), env={"PIMMODEL_STORAGE": str(journal)})
    assert r.returncode == 2 and f"no storage at {journal}" in r.stderr  # read from the variable, not the default
