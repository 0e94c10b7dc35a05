"""``pimmodel transfer``: the cross product, its JSON record and one-line errors."""

from __future__ import annotations

import json

import pytest
from support import cli

from pimmodel import primitives as P
from pimmodel.specs import load_hardware


def test_cross_product_json() -> None:
    r = cli("transfer", "--direction", "to-dpu,from-dpu", "--bytes-per-dpu", "8,65536,1MiB", "--dpus", "1,64,2048",
            "--json")
    assert r.returncode == 0, r.stderr
    points = json.loads(r.stdout)["points"]
    assert len(points) == 2 * 3 * 3
    hw = load_hardware("upmem-2556")
    for p in points:
        assert set(p) == {"direction", "mode", "memory", "dpus", "bytes_per_dpu", "seconds", "gb_per_s", "low_s",
                          "high_s", "placement", "remote_share"}
        assert p["placement"] == "local" and p["remote_share"] == 0.0
        expected = float(P.host_transfer_s(p["bytes_per_dpu"], p["dpus"], hw, p["direction"] == "to-dpu"))
        assert p["seconds"] == pytest.approx(expected, rel=1e-12)
        assert p["gb_per_s"] == pytest.approx(p["bytes_per_dpu"] * p["dpus"] / p["seconds"] / 1e9)
        assert p["low_s"] < p["seconds"] < p["high_s"]
    assert {p["bytes_per_dpu"] for p in points} == {8, 65536, 1 << 20}


def test_outside_the_fit_the_interval_widens() -> None:
    r = cli("transfer", "--bytes-per-dpu", "64KiB,8", "--dpus", "2048", "--json")
    inside, outside = json.loads(r.stdout)["points"]
    assert outside["high_s"] / outside["seconds"] > inside["high_s"] / inside["seconds"]


def test_placement_changes_the_transfer_in_the_direction_numa_does() -> None:
    """Remote host buffers are slower, local ones the default; one node is local up to 20 ranks (1,280 DPUs) and
    12 of 32 ranks remote at 2,048; the assumed penalty's range widens the interval; predict takes it too."""
    seconds = {}
    for where in ("local", "remote", "interleaved", "one-node"):
        r = cli("transfer", "--bytes-per-dpu", "1MiB", "--dpus", "1024,2048", "--placement", where, "--json")
        assert r.returncode == 0, r.stderr
        points = json.loads(r.stdout)["points"]
        assert {p["placement"] for p in points} == {where}
        seconds[where] = [p["seconds"] for p in points]
        if where == "remote":
            assert all(p["high_s"] / p["seconds"] > 1.5 for p in points)
    assert seconds["local"] < seconds["interleaved"] < seconds["remote"]
    assert seconds["one-node"][0] == seconds["local"][0] and seconds["local"][1] < seconds["one-node"][1]
    totals = {}
    for where in ("local", "remote"):
        r = cli("predict", "--optimizer", "ma-sgd", "--placement", where, "--json")
        assert r.returncode == 0, r.stderr
        totals[where] = json.loads(r.stdout)["points"][0]["per_epoch_s"]["host_to_pim"]
    assert totals["remote"] > totals["local"]
    r = cli("transfer", "--placement", "nearby")
    assert r.returncode == 2 and "placement" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [("--bytes-per-dpu", "1XB"), ("--dpus", "0"), ("--direction", "up"),
                                  ("--mode", "broadcast", "--direction", "from-dpu"),
                                  ("--memory", "wram", "--bytes-per-dpu", "1MiB"),
                                  ("--bytes-per-dpu", "nan"), ("--bytes-per-dpu", "inf"), ("--bytes-per-dpu", "-inf"),
                                  ("--bytes-per-dpu", "7"), ("--bytes-per-dpu", "12"), ("--bytes-per-dpu", "128MiB"),
                                  ("--memory", "wram", "--bytes-per-dpu", "6")])
def test_bad_input_is_one_line(args) -> None:  # type: ignore[no-untyped-def]
    r = cli("transfer", *args)
    assert r.returncode == 2, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: ")


@pytest.mark.parametrize("size, memory, accepted", [(8, "mram", True), (64 << 20, "mram", True),
                                                    ((64 << 20) + 8, "mram", False), (12, "mram", False),
                                                    (4, "mram", False), (4, "wram", True), (6, "wram", False),
                                                    (64 << 10, "wram", True), ((64 << 10) + 4, "wram", False),
                                                    (float("nan"), "mram", False), (float("inf"), "mram", False),
                                                    (0, "mram", False), (8.5, "mram", False)])
def test_the_api_refuses_a_call_the_sdk_refuses(size: float, memory: str, accepted: bool) -> None:
    """Alignment (MRAM 8 B, WRAM 4 B) and one DPU's capacity (64 MiB MRAM, 64 KiB WRAM) bound a transfer call in
    the Python API as in the CLI."""
    from pimmodel.calibration.transfers import transfer_interval
    from pimmodel.errors import SpecError

    hw = load_hardware("upmem-2556")
    if accepted:
        assert transfer_interval(size, 64, hw, "to-dpu", "parallel", memory)[0] > 0
    else:
        with pytest.raises(SpecError):
            transfer_interval(size, 64, hw, "to-dpu", "parallel", memory)


def test_predict_and_scale_records_carry_the_epoch_interval() -> None:
    """low_s / high_s: the transfer spread on the two transfer phases and the kernel residuals on the rest."""
    import math

    from pimmodel.calibration.kernel_interval import read_residuals
    from pimmodel.calibration.transfers import Z_95

    r = cli("scale", "--dataset", "yfcc100m-hnfc6", "--model", "lr", "--optimizer", "admm", "--dpus", "64,2048",
            "--json")
    assert r.returncode == 0, r.stderr
    for p in json.loads(r.stdout)["points"]:
        total = p["per_epoch_s"]["total"]
        assert p["low_s"] < total < p["high_s"]
        # ADMM on YFCC is DPU-bound: the interval is about the kernel residuals' alone
        h = read_residuals().half_log()
        assert math.log(p["high_s"] / total) == pytest.approx(h, rel=0.05)
        assert Z_95 > 1.9
