"""`pimmodel kernel`: the --json record of the cross product, --list, --fit, bad input as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import CliResult, cli

KEYS = {"kernel", "dpus", "size", "shape", "feasible", "reason", "kernel_ms", "low_ms", "high_ms", "cpu_to_dpu_ms",
        "dpu_to_cpu_ms"}


def run(*args: str) -> CliResult:
    return cli("kernel", *args)


def test_json_is_the_cross_product() -> None:
    res = run("--name", "VA", "--dpus", "1,4,16,64", "--size", "524288,2097152", "--json")
    assert res.returncode == 0, res.stderr
    points = json.loads(res.stdout)["points"]
    assert [(p["dpus"], p["size"]) for p in points] == [(n, s) for n in (1, 4, 16, 64) for s in (524288, 2097152)]
    assert all(set(p) == KEYS and p["kernel"] == "VA" and p["kernel_ms"] > 0 for p in points)
    # strong scaling: more DPUs, less time per kernel
    assert points[0]["kernel_ms"] > points[2]["kernel_ms"] > points[4]["kernel_ms"] > points[6]["kernel_ms"]


def test_shape_options_and_an_infeasible_point_in_the_grid() -> None:
    res = run("--name", "GEMV", "--dpus", "1,64,2556", "--size", "8192", "--cols", "8192", "--json")
    assert res.returncode == 0, res.stderr
    points = json.loads(res.stdout)["points"]
    assert all(set(p) == KEYS and p["shape"] == {"cols": 8192} for p in points)
    assert [p["feasible"] for p in points] == [False, True, True]  # 8,192 x 8,192 uint32 on one DPU: 256 MiB
    assert "MiB of MRAM" in points[0]["reason"] and points[0]["kernel_ms"] is None
    assert all(p["low_ms"] < p["kernel_ms"] < p["high_ms"] for p in points[1:])
    table = run("--name", "RED", "--dpus", "64", "--size", "1048576", "--type", "int32")
    assert table.returncode == 0 and "RED (--type int32)" in table.stdout


@pytest.mark.parametrize(("args", "needle"), [
    (("--name", "VA", "--size", "64", "--cols", "4"), "--cols: VA does not take it"),
    (("--name", "TS", "--size", "4096", "--query-length", "100"), "multiple of 64"),
    (("--name", "TS", "--size", "100", "--query-length", "256"), "query_length 256 is longer than the series"),
    (("--name", "RED", "--size", "4096", "--type", "float"), "RED elem must be one of"),
])
def test_bad_shape_is_one_line_exit_2(args: tuple[str, ...], needle: str) -> None:
    res = run(*args)
    assert res.returncode == 2 and needle in res.stderr and "Traceback" not in res.stderr


def test_a_lone_point_that_does_not_fit_is_reported_not_refused() -> None:
    res = run("--name", "BS", "--size", "2147483648", "--dpus", "64")  # the whole 16 GiB array on every DPU
    assert res.returncode == 0 and "infeasible" in res.stdout and "MRAM" in res.stdout


def test_table_and_hardware_option() -> None:
    res = run("--name", "GEMV", "--dpus", "4", "--size", "8192", "--hardware", "upmem-640")
    assert res.returncode == 0 and "GEMV on upmem-640" in res.stdout


def test_list_names_the_kernels() -> None:
    res = run("--list", "--json")
    assert res.returncode == 0
    rows = json.loads(res.stdout)["kernels"]
    assert len(rows) == 13 and {r["kernel"] for r in rows if r["test"]} == {"VA", "GEMV", "RED"}
    assert "SCAN-RSS" in run("--list").stdout


@pytest.mark.parametrize("args,needle", [
    (("--name", "VX", "--size", "4"), "VA"),
    (("--name", "VA", "--size", "0"), "size"),
    (("--name", "VA", "--size", "12,x"), "--size"),
    (("--name", "VA", "--size", "1024", "--dpus", "0"), "--dpus"),
    (("--name", "VA",), "--size"),
])
def test_bad_input_is_one_line_exit_2(args: tuple[str, ...], needle: str) -> None:
    res = run(*args)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and needle in res.stderr and "Traceback" not in res.stderr


def test_fit_writes_a_calibration(tmp_path: Path) -> None:
    out = tmp_path / "hw.json"
    res = run("--fit", "--no-cv", "--fit-bandwidths", "--output", str(out), "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert set(record["fits"]) == {"kernel", "host"}
    assert "pull_bytes_per_s_per_rank" in record["fits"]["host"]["constants"]
    assert json.loads(out.read_text())["fits"]["kernel"]["constants"].keys() == record["fits"]["kernel"][
        "constants"].keys()
    assert not any(p[0] in ("VA", "GEMV", "RED") for p in record["fits"]["kernel"]["points"])
