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
    C.compiled.cache_clear()
    try:
        first = C.compiled("ma-sgd", "lr", "dense")
        entry = next((tmp_path / "compiled").rglob("ma-sgd-lr-dense-none-study.py"))
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
