"""Issue 19, "no silent wrong answer, no lost file": each case the issue names, as it was reported."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest
from support import cli

import pimmodel
from pimmodel.errors import SEED_MAX, ArgumentError, PimModelError


# ---------------------------------------------------------------- files: symlinks, the compiled cache
def test_output_through_a_symlink_writes_through_the_link(tmp_path: Path) -> None:
    real = tmp_path / "runs" / "real.json"
    real.parent.mkdir()
    real.write_text("{}", encoding="utf-8")
    link = tmp_path / "out.json"
    link.symlink_to(real)
    r = cli("predict", "--optimizer", "ma-sgd", "-o", str(link), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and link.resolve() == real
    assert json.loads(real.read_text(encoding="utf-8"))["points"][0]["optimizer"] == "ma-sgd"


def test_a_dangling_symlink_is_written_at_its_target(tmp_path: Path) -> None:
    from pimmodel.atomic import write_text

    link = tmp_path / "out.txt"
    link.symlink_to(tmp_path / "target.txt")
    write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "target.txt").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("damage", ["truncate", "garbage", "header"])
def test_a_damaged_compiled_cache_entry_is_rebuilt_with_one_notice(damage: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from pimmodel.costmodel import compile as C

    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(C, "SHIPPED", tmp_path / "nothing-shipped")  # an install's shipped source would be used first
    C.compiled.cache_clear()
    try:
        first = C.compiled("ma-sgd", "lr", "dense")
        entry = next((tmp_path / "compiled").rglob("ma-sgd-lr-dense-none-study.*"))
        text = entry.read_text(encoding="utf-8")
        entry.write_text({"truncate": text[: len(text) // 2], "garbage": "\x00\x01 not python",
                          "header": text.split("\n", 1)[1]}[damage], encoding="utf-8")
        C.compiled.cache_clear()
        warnings: list[str] = []
        monkeypatch.setattr(C.log, "warning", lambda message, *args: warnings.append(message % args))
        again = C.compiled("ma-sgd", "lr", "dense")
        assert len(warnings) == 1 and "damaged" in warnings[0] and "rebuilding" in warnings[0]
        assert again.outputs == first.outputs
        C.compiled.cache_clear()
        warnings.clear()
        C.compiled("ma-sgd", "lr", "dense")  # the rebuilt entry reads cleanly
        assert warnings == []
    finally:
        C.compiled.cache_clear()


# ---------------------------------------------------------------- tracebacks
def test_codesign_module_help_prints_usage_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["codesign", "--help"])
    with pytest.raises(SystemExit) as info:
        runpy.run_module("pimmodel.dse.codesign", run_name="__main__")
    assert info.value.code == 0
    assert "usage:" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["emulate", "--dpus", "2", "--epochs", "1"], ["calibrate"],
                                     ["explore", "studies/codesign.toml", "--trials", "1"]])
def test_a_seed_above_32_bits_is_one_line(command: list[str], tmp_path: Path) -> None:
    args = [a if not a.startswith("studies/") else str(Path(pimmodel.__file__).parent / "data" / a) for a in command]
    r = cli(*args, "--seed", str(SEED_MAX + 1), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error:") and "--seed" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("call", "parameter"), [
    (lambda: pimmodel.predict(None), "workload"),  # type: ignore[arg-type]
    (lambda: pimmodel.predict_interval(None), "workload"),  # type: ignore[arg-type]
    (lambda: pimmodel.load_dataset(None), "name_or_path"),  # type: ignore[arg-type]
    (lambda: pimmodel.load_hardware(123), "name_or_path"),  # type: ignore[arg-type]
    (lambda: pimmodel.load_calibration(5), "name_or_path"),  # type: ignore[arg-type]
    (lambda: pimmodel.emulate(None, 2, "lr", "ma-sgd"), "dataset"),  # type: ignore[arg-type]
    (lambda: pimmodel.emulate("synthetic-yfcc", 2.5, "lr", "ma-sgd"), "dpus"),  # type: ignore[arg-type]
    (lambda: pimmodel.provenance(123), "hardware"),  # type: ignore[arg-type]
])
def test_the_api_raises_pimmodel_errors_naming_the_parameter(call: object, parameter: str) -> None:
    with pytest.raises(PimModelError) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, ArgumentError) and info.value.parameter == parameter
    assert parameter in str(info.value) and "--" not in str(info.value)


# ---------------------------------------------------------------- every option takes effect or is refused
def _npy(path: Path, rows: int, seed: int = 0) -> Path:
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.random((rows, 4))
    y = (x[:, 0] > 0.5).astype(float)
    y[:2] = [0, 1]
    np.save(path, np.column_stack([x, y]))
    return path


def _one_error(r: object, *fragments: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)  # type: ignore[attr-defined]
    lines = r.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr  # type: ignore[attr-defined]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_refusals_name_the_option(tmp_path: Path) -> None:
    data = _npy(tmp_path / "d.npy", 200)
    hw = tmp_path / "hw.toml"
    import re

    from pimmodel.resources import data_dir

    text = (data_dir("hardware_specs") / "upmem-2556.toml").read_text(encoding="utf-8")
    hw.write_text(re.sub(r"(?m)^max_tasklets = .*$", "max_tasklets = 2.5", text), encoding="utf-8")
    assert "max_tasklets = 2.5" in hw.read_text(encoding="utf-8")
    ds = tmp_path / "ds.toml"
    ds.write_text('name = "mine"\nlayout = "dense"\nfeatures = 100\nnonzeros_per_row = 100\nbytes_per_value = 3\n'
                  'rows_per_dpu_weak = 1000\nstrong_rows = 100000\n', encoding="utf-8")
    before = {p: p.read_bytes() for p in (data, hw, ds)}
    cases = [
        (("sensitivity", "--dpus", "3000"), ("--dpus 3000", "2556")),
        (("kernel", "--fit", "--hardware", "pim-next-hypothetical"), ("--fit", "upmem-2556")),
        (("kernel", "--fit", "--hardware", "upmem-640"), ("--fit", "upmem-2556")),
        (("predict", "--optimizer", "dpsgd", "--dpus", "1", "--hardware", "pim-torus-hypothetical"),
         ("dpsgd", "--dpus 2")),
        (("emulate", "--dataset", str(data), "--dpus", "2", "--epochs", "1", "--svm-margin", "0.5"),
         ("--svm-margin", "lr")),
        (("emulate", "--dataset", str(data), "--dpus", "2", "--epochs", "1", "--class-weights", "1:1"),
         ("--class-weights", "dense")),
        (("emulate", "--dpus", "2", "--epochs", "1", "--class-weights", "1:1"), ("--class-weights", "dense")),
        (("emulate", "--dataset", str(data), "--dpus", "2", "--epochs", "1", "--samples-per-dpu", "10"),
         ("--samples-per-dpu", "file")),
        (("reproduce", "--list", "extra"), ("--list", "extra")),
        (("predict", "--hardware", str(hw)), ("max_tasklets", "whole number")),
        (("predict", "--dataset", str(ds)), ("bytes_per_value", "3")),
        (("scale", "--dpus", "2048,256"), ("--dpus", "256,2048")),
        (("scale", "--dpus", "256,256"), ("--dpus", "256")),
    ]
    for args, fragments in cases:
        _one_error(cli(*args, cwd=tmp_path), *fragments)
    assert {p: p.read_bytes() for p in before} == before


def test_sync_every_beyond_an_epoch_is_clamped_with_a_note() -> None:
    r = cli("predict", "--optimizer", "local-sgd", "--sync-every", "100000000", "--json")
    point = json.loads(r.stdout)["points"][0]
    assert point["rounds_per_epoch"] == 1
    assert any("--sync-every 100,000,000 exceeds" in n for n in point["chosen"])
    steps = int(point["chosen"][-1].split("H = ")[1].split(" ")[0].replace(",", ""))
    assert point["sync_every"] == steps
    shown = cli("predict", "--optimizer", "local-sgd", "--sync-every", "100000000")
    assert "note: H = " in shown.stderr and "1 rounds/epoch" in shown.stdout


def test_a_file_too_small_to_split_is_refused(tmp_path: Path) -> None:
    import numpy as np

    np.save(tmp_path / "two.npy", np.array([[0.1, 0.2, 0.0], [0.9, 0.8, 1.0]]))
    _one_error(cli("emulate", "--dataset", str(tmp_path / "two.npy"), "--dpus", "1", "--epochs", "1"),
               "test rows", "give more rows")


def test_stand_in_divisor_below_one_row_is_refused() -> None:
    _one_error(cli("compare", "--optimizer", "ma-sgd", "--break-even", "none", "--stand-in-divisor", "100000000"),
               "--stand-in-divisor", "less than one row")


def test_reproduce_leaves_no_empty_folder_on_an_error(tmp_path: Path) -> None:
    _one_error(cli("reproduce", "fig5", "--hardware", "nosuch", "--output", str(tmp_path / "a" / "b")), "nosuch")
    assert not (tmp_path / "a").exists()


# ---------------------------------------------------------------- no sentinel in a table, a record or a front
def _dpsgd_study(tmp_path: Path, topology_searched: bool) -> Path:
    text = (Path(__file__).parents[1] / "dse" / "tiny.toml").read_text(encoding="utf-8")
    text = (text.replace('optimizers = ["ma-sgd"]', 'optimizers = ["dpsgd"]').replace("trials = 1000", "trials = 20")
            .replace("batch = 50", "batch = 10"))
    if topology_searched:
        text += 'topology = { field = "link_topology", choices = ["none", "ring"] }\n'
    path = tmp_path / "dp.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_study_no_design_can_run_is_refused_before_storage(tmp_path: Path) -> None:
    study = _dpsgd_study(tmp_path, topology_searched=False)
    _one_error(cli("explore", str(study), "-q", "--storage", str(tmp_path / "s.log")), "dpsgd", "links")
    assert not (tmp_path / "s.log").exists()


def test_the_penalty_epoch_is_infeasible_never_a_time(tmp_path: Path) -> None:
    from pimmodel.dse.objective import INFEASIBLE_EPOCH_S

    study = _dpsgd_study(tmp_path, topology_searched=True)
    url = str(tmp_path / "s.log")
    r = cli("explore", str(study), "--storage", url, "--json")
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)
    base = record["baseline"]
    assert base["objectives"]["time_per_epoch"] is None and "links" in base["infeasible"]
    assert all(v is None for v in base["epoch_s"].values())
    assert record["front"] and record["feasible"] < record["trials"]
    for d in record["front"]:
        assert d["objectives"]["time_per_epoch"] < INFEASIBLE_EPOCH_S and d["constraints"]["links"] < 0
    shown = cli("explore", "show", str(study), "--storage", url, "--plot", str(tmp_path / "plots"))
    assert "infeasible (no links)" in shown.stdout and "1e+06" not in shown.stdout, shown.stderr
    assert (tmp_path / "plots" / "pareto_front.png").stat().st_size > 0


def test_a_calibration_of_another_machine_is_said_in_the_record(tmp_path: Path) -> None:
    import dataclasses

    from pimmodel.calibration.result import load_calibration

    shipped = load_calibration(None)
    other = dataclasses.replace(shipped, provenance={**shipped.provenance, "hardware": "upmem-640"})
    w = pimmodel.Workload(pimmodel.load_dataset("yfcc100m-hnfc6"), "lr", "ma-sgd", dpus=64)
    record = pimmodel.predict(w, "upmem-2556", calibration=other).to_record()
    assert "fitted on upmem-640" in record["calibration_note"] and "upmem-2556" in record["calibration_note"]
    assert "calibration_note" not in pimmodel.predict(w, "upmem-2556", calibration=shipped).to_record()
    path = other.write(tmp_path / "c640.json")
    r = cli("predict", "--optimizer", "ma-sgd", "--calibration", str(path))
    assert r.returncode == 0 and "note: calibration" in r.stderr and "fitted on upmem-640" in r.stderr
