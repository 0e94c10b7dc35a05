"""Option groups (``cli.options.option_groups``): a group's options stand in its parameter's place, as typer
declares them, and the command receives the group built from what was given."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from pimmodel.cli import options as O


def test_a_group_stands_for_its_options_in_place_and_arrives_built() -> None:
    seen: dict[str, object] = {}

    def command(view: O.View = "wall", deployment: O.Deployment = O.Deployment(), json: O.Json = False) -> None:
        seen.update(view=view, deployment=deployment, json=json)

    app = typer.Typer(add_completion=False)
    app.command()(O.option_groups(command))
    params = [p.name for p in typer.main.get_command(app).params]
    assert params == ["view", "tasklets", "scaling", "epochs", "batch_size", "global_batch_size", "json"]
    result = CliRunner().invoke(app, ["--tasklets", "12", "--global-batch-size", "4096", "--json"])
    assert result.exit_code == 0, result.output
    assert seen == {"view": "wall", "deployment": O.Deployment(tasklets=12, global_batch_size=4096), "json": True}
