"""Every option some workload family reads and another does not (``specs.families``' table) is refused where it does
not apply - one line naming it and the family that reads it, exit 2 - never ignored. The (option, family, command)
cases are derived from the table and the commands' own parameters, so a new option or family is covered as added."""

from __future__ import annotations

import pytest
import typer
from support import cli

from pimmodel.cli.app import app
from pimmodel.specs.families import FAMILIES, family_options, reads

COMMANDS = ("predict", "scale", "emulate")
VALUE = {"optimizer": "ga-sgd", "dataset": "criteo", "model": "svm", "scaling": "strong", "view": "wall",
         "calibration": "default", "layout": "dense", "plot": "x.png", "kernels": "study", "svm_margin": "0.5",
         "class_weights": "1:1", "arithmetic": "float64", "engine": "serial", "address": "auto", "points": "1000",
         "dims": "4", "clusters": "4", "iterations": "3", "n_init": "2", "sync_every": "2", "tasklets": "16"}
"""A value of the right type per option (the refusal comes before any value is checked)."""


def _params(command: str) -> dict[str, tuple[str, bool]]:
    group = typer.main.get_command(app)
    cmd = group.commands[command]  # type: ignore[attr-defined]
    return {p.name: (p.opts[0], bool(getattr(p, "is_flag", False))) for p in cmd.params if p.name}


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for command in COMMANDS:
        params = _params(command)
        for family in FAMILIES:
            cases += [(command, family, o) for o in sorted(family_options()) if o in params
                      and not reads(family, command, o)]
    return cases


CASES = _cases()


def test_the_table_yields_cases_for_every_family_and_command() -> None:
    assert {(c, f) for c, f, _ in CASES} == {(c, f) for c in COMMANDS for f in FAMILIES}
    assert ("emulate", "kmeans", "model") in CASES and ("predict", "linear", "clusters") in CASES
    assert ("emulate", "kmeans", "dataset") not in CASES and ("predict", "kmeans", "dataset") in CASES


@pytest.mark.parametrize("command, family, option", CASES)
def test_an_option_where_it_does_not_apply_is_refused(command: str, family: str, option: str) -> None:
    flag, is_flag = _params(command)[option]
    args = [command, "--workload", family, flag] + ([] if is_flag else [VALUE.get(option, "1")])
    r = cli(*args)
    assert r.returncode == 2, (args, r.stdout[-300:])
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and flag in err and f"--workload {family}" in err and "drop it" in err


def test_an_option_the_family_reads_is_taken() -> None:
    """The refusal names only foreign options: K-means' own sizes pass it (and the prediction runs)."""
    r = cli("predict", "--workload", "kmeans", "--points", "100k", "--dims", "16", "--clusters", "16",
            "--iterations", "5", "--json")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("engine, option", [("serial", ("--workers", "2")), ("process", ("--address", "auto")),
                                            ("serial", ("--address", "auto"))])
def test_an_engine_option_another_engine_does_not_read_is_refused(engine: str, option: tuple[str, str]) -> None:
    r = cli("emulate", "--dpus", "4", "--epochs", "1", "--engine", engine, *option)
    assert r.returncode == 2 and option[0] in r.stderr and len(r.stderr.strip().splitlines()) == 1
