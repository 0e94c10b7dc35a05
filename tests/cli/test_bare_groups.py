"""A command group run without a sub-command (``pimmodel specs``) prints its usage and exits 0, never nothing."""

from __future__ import annotations

import pytest
import typer
from support import cli

from pimmodel.cli.app import app


def _groups() -> list[str]:
    group = typer.main.get_command(app)
    return sorted(name for name, cmd in group.commands.items()  # type: ignore[attr-defined]
                  if hasattr(cmd, "commands") and not getattr(cmd, "invoke_without_command", False))


def test_there_are_groups() -> None:
    assert {"baseline", "specs"} <= set(_groups())


@pytest.mark.parametrize("name", _groups())
def test_a_bare_group_prints_its_usage(name: str) -> None:
    r = cli(name)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Usage: pimmodel {name} ") and "Commands:" in r.stdout, r.stdout[:300]
