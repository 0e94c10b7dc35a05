"""The CLI with the optimizers outside the study (typer's CliRunner behind the CLI's one error boundary): hardware
without the links an optimizer needs, and a bad --sync-every, are one line on stderr with exit 2; the new
optimizers predict, scale, emulate and show their equations."""

from __future__ import annotations

import json

import pytest
from support import cli


def invoke(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``pimmodel ARGS`` run in-process through the CLI's error boundary."""
    r = cli(*args)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("args", [
    ["predict", "--optimizer", "dpsgd"],
    ["scale", "--optimizer", "allreduce-sgd", "--dpus", "256,512"],
    ["emulate", "--optimizer", "dpsgd", "--dpus", "4", "--samples-per-dpu", "8", "--features", "64"],
    ["predict", "--optimizer", "dpsgd", "--hardware", "pim-next-hypothetical"],
])
def test_hardware_without_the_links_is_refused_in_one_line(args: list[str]) -> None:
    code, out, err = invoke(*args)
    optimizer = args[args.index("--optimizer") + 1]
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"error: {optimizer} needs direct links between all DPUs")
    assert "--hardware pim-torus-hypothetical" in err
    if "pim-next-hypothetical" in args:
        assert "pim-next-hypothetical has only in-rank links (they stop at the rank)" in err
    else:
        assert "upmem-2556 has no direct DPU links" in err


@pytest.mark.parametrize("args, fragment", [
    (["predict", "--optimizer", "local-sgd", "--sync-every", "0"], "--sync-every must be a positive whole number"),
    (["emulate", "--optimizer", "hier-sgd", "--sync-every", "-3", "--dpus", "4"], "--sync-every must be a positive"),
    (["predict", "--optimizer", "ga-sgd", "--sync-every", "4"], "--sync-every applies to local-sgd and hier-sgd"),
    (["predict", "--optimizer", "local-sgd", "--sync-every", "two"], "Invalid value for '--sync-every'"),
    (["equations", "--optimizer", "dpsgd", "--topology", "none"], "use --topology ring or torus or all-to-all"),
    (["predict", "--optimizer", "hier-sgd", "--hardware", "pim-next-hypothetical", "--dpus", "96"],
     "equal power-of-two groups"),
])
def test_bad_sync_every_and_topologies_are_one_line(args: list[str], fragment: str) -> None:
    code, out, err = invoke(*args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and fragment in err and "Traceback" not in err


def test_predict_dpsgd_on_the_torus_and_local_sgd_with_h() -> None:
    code, out, _ = invoke("predict", "--optimizer", "dpsgd", "--hardware", "pim-torus-hypothetical", "--json")
    assert code == 0
    (r,) = json.loads(out)["points"]
    assert r["optimizer"] == "dpsgd" and r["rounds_per_epoch"] == 416
    assert r["per_epoch_bytes"]["host_to_pim"] == r["per_epoch_bytes"]["pim_to_host"] == 0
    assert r["per_epoch_s"]["host_aggregate"] == 0 and r["per_epoch_s"]["host_to_pim"] > 0  # the gossip links
    code, out, _ = invoke("predict", "--optimizer", "local-sgd", "--sync-every", "4", "--json")
    assert code == 0 and json.loads(out)["points"][0]["rounds_per_epoch"] == 104  # 416 steps / 4


def test_scale_hier_sgd_over_in_rank_links() -> None:
    code, out, _ = invoke("scale", "--optimizer", "hier-sgd", "--hardware", "pim-next-hypothetical", "--dpus",
                          "64,128", "--json")
    points = json.loads(out)["points"]
    assert code == 0 and [p["dpus"] for p in points] == [64, 128]
    # one rank: no host at all; two ranks: the host joins every H = 8 steps with 264-B shards per DPU
    assert points[0]["per_epoch_bytes"]["pim_to_host"] == 0
    assert points[1]["per_epoch_bytes"]["pim_to_host"] == 52 * 128 * (4 * 64 + 8)


def test_emulate_dpsgd_and_the_equations_of_local_sgd() -> None:
    code, out, err = invoke("emulate", "--optimizer", "dpsgd", "--hardware", "pim-torus-hypothetical", "--dpus", "4",
                            "--samples-per-dpu", "16", "--features", "64", "--epochs", "2", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert len(r["history"]) == 2 and r["trace"]["links"]["exchanges"][0]["kind"] == "gossip"
    assert r["trace"]["links"]["seconds"] > 0 and r["trace"]["pim_to_host"]["bytes"] == 0
    code, out, _ = invoke("equations", "--optimizer", "local-sgd")
    assert code == 0 and "R         = ceiling(n_steps/sync_every)" in out
    code, out, _ = invoke("equations", "--optimizer", "dpsgd", "--json")
    record = json.loads(out)
    assert code == 0 and record["topology"] == "ring" and "t_gossip_ring_distribute" in record["terms"]
