"""The CLI contract: help for every command, real --json runs, bad input as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import CliResult, cli

from pimmodel.cli.app import app

PHASES = ("dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host", "host_aggregate", "launch")
RECORD_KEYS = ("hardware", "dataset", "model", "optimizer", "dpus", "tasklets", "scaling", "epochs", "view",
               "rounds_per_epoch", "per_epoch_s", "per_epoch_bytes", "total_s", "bottleneck")


def run(*args: str) -> CliResult:
    return cli(*args)


def _commands() -> list[list[str]]:
    names = [[c.name or c.callback.__name__] for c in app.registered_commands]
    names += [[g.name, c.name] for g in app.registered_groups for c in g.typer_instance.registered_commands
              if g.name]
    return names


def test_every_command_is_documented() -> None:
    for cmd in app.registered_commands:
        assert cmd.callback is not None and (cmd.callback.__doc__ or "").strip(), cmd.name


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c))
def test_help(command: list[str]) -> None:
    p = run(*command, "--help")
    assert p.returncode == 0 and "Usage" in p.stdout


def test_predict_json_record() -> None:
    p = run("predict", "--dataset", "criteo-1tb", "--model", "svm", "--optimizer", "admm", "--dpus", "1024",
            "--view", "breakdown", "--json")
    assert p.returncode == 0, p.stderr
    (r,) = json.loads(p.stdout)["points"]
    assert all(k in r for k in RECORD_KEYS)
    assert set(PHASES) | {"total"} <= set(r["per_epoch_s"])
    assert set(r["per_epoch_bytes"]) >= {"host_to_pim", "pim_to_host", "mram_to_wram", "wram_to_mram"}
    assert r["dpus"] == 1024 and r["rounds_per_epoch"] == 1 and r["view"] == "breakdown"
    assert sum(r["per_epoch_s"][k] for k in PHASES) == pytest.approx(r["per_epoch_s"]["total"])
    assert r["total_s"] == pytest.approx(10 * r["per_epoch_s"]["total"])
    assert r["bottleneck"] == max(PHASES, key=lambda k: r["per_epoch_s"][k])


def test_bare_predict_compares_three_optimizers() -> None:
    p = run("predict", "--json")
    assert p.returncode == 0, p.stderr
    assert sorted(r["optimizer"] for r in json.loads(p.stdout)["points"]) == ["admm", "ga-sgd", "ma-sgd"]
    table = run("predict")
    assert table.returncode == 0 and "bottleneck" in table.stdout and "wall view" in table.stdout


def test_scale_json_and_plot(tmp_path: Path) -> None:
    p = run("scale", "--dataset", "yfcc100m-hnfc6", "--optimizer", "ga-sgd", "--scaling", "strong",
            "--dpus", "256,512,1024,2048", "--json")
    pts = json.loads(p.stdout)["points"]
    assert [r["dpus"] for r in pts] == [256, 512, 1024, 2048]
    assert pts[0]["scaling_metrics"]["speedup"] == 1.0
    assert all(0 < r["scaling_metrics"]["efficiency"] <= 1 for r in pts)
    png = tmp_path / "s.png"
    p = run("scale", "--optimizer", "ma-sgd", "--plot", str(png))
    assert p.returncode == 0 and png.stat().st_size > 1000


def test_equations_and_specs() -> None:
    p = run("equations", "--optimizer", "admm", "--model", "lr", "--json")
    record = json.loads(p.stdout)
    assert set(PHASES) <= set(record["phases"])
    assert "dpu_clock_hz" in record["phases"]["dpu_compute"]["equation"]
    assert all(t in record["terms"] for eq in record["phases"].values() for t in eq["terms"])
    assert "\\frac" in run("equations", "--latex").stdout
    names = [h["name"] for h in json.loads(run("specs", "list", "--json").stdout)["hardware"]]
    assert "upmem-2556" in names
    shown = json.loads(run("specs", "show", "upmem-640", "--json").stdout)
    clock = next(f for f in shown["fields"] if f["key"] == "clock_mhz")
    assert clock["value"] == 267 and "PrIM" in clock["source"]


def test_custom_dataset_toml(tmp_path: Path) -> None:
    f = tmp_path / "mine.toml"
    f.write_text('[dataset]\nlayout = "dense"\nfeatures = 512\nrows_per_dpu_weak = 1024\n')
    p = run("predict", "--dataset", str(f), "--optimizer", "ma-sgd", "--dpus", "64", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["points"][0]["rounds_per_epoch"] == 128


@pytest.mark.parametrize("args, fragment", [
    (["predict", "--dpus", "0"], "positive"),
    (["predict", "--dpus", "-5"], "positive"),
    (["predict", "--dpus", "1.5"], "integer"),
    (["predict", "--hardware", "upmem-2555"], "did you mean"),
    (["predict", "--optimizer", "adam"], 'did you mean "admm"'),
    (["predict", "--dpus", "100000"], "use at most 2556"),
    (["predict", "--dataset", "criteo-1tb", "--scaling", "strong", "--dpus", "64"], "use --dpus"),
    (["predict", "--hardware", "/dev/null"], "empty"),
    (["predict", "--batch-size", "7"], "power of two"),
    (["predict", "--optimizer", "ga-sgd", "--global-batch-size", "1000"], "multiple"),
    (["predict", "--view", "fast"], "unknown view"),
    (["scale", "--dpus", "256,x"], "whole numbers"),
    (["specs", "show", "nope"], "unknown hardware"),
])
def test_bad_input_is_one_line_exit_2(args: list[str], fragment: str) -> None:
    p = run(*args)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr + p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0]


def test_malformed_and_unknown_toml_keys(tmp_path: Path) -> None:
    bad = tmp_path / "hw.toml"
    spec = (Path(__file__).parents[2] / "hardware_specs/upmem-2556.toml").read_text()
    bad.write_text(spec.replace("[dma]", "[dma]\nfoo_cycles = 3"))
    p = run("predict", "--hardware", str(bad))
    assert p.returncode == 2 and "unknown key dma.foo_cycles" in p.stderr
    bad.write_text("name = [\n")
    p = run("predict", "--hardware", str(bad))
    assert p.returncode == 2 and "not valid TOML" in p.stderr


def test_validate_help_names_every_group() -> None:
    from pimmodel.validation.cases import GROUPS

    out = " ".join(cli("validate", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert all(g in out for g in GROUPS), [g for g in GROUPS if g not in out]
