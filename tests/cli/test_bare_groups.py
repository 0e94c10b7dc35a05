"""A command group run without a sub-command (``pimmodel specs``) prints its usage and exits 0, never nothing; a
Ctrl-C anywhere says so in one line."""

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


def test_ctrl_c_in_a_command_without_its_own_block_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """typer turns a KeyboardInterrupt into exit code 130 without a word; the CLI says it (issue 31)."""
    import pimmodel.validation as validation

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(validation, "validate", interrupted)
    r = cli("validate")
    assert r.returncode == 130 and r.stderr.strip() == "error: interrupted; nothing was written"
