"""Issue 27: the direct host path's equation by hand, its fit blind to the test rows, the thread term able to
flip a what-if's direction, and ``validate --group whatif`` listing every real row with its interval."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from support import cli

from pimmodel.calibration import direct_path, whatifs
from pimmodel.calibration.direct_path import DirectPath, fit_direct
from pimmodel.primitives import direct_transfer_s
from pimmodel.specs import load_hardware
from pimmodel.validation import whatif_cases
from pimmodel.validation.data import validation_dir


def test_direct_transfer_by_hand() -> None:
    hw = load_hardware("upmem-2556")
    path = DirectPath(call_s=10e-6, ceiling_bytes_per_s=20e9)
    line_s_per_byte = 1 / 0.33e9 + 7 * 0.036e-9  # the SDK's thread alone on a line of 8 DPUs (serial + 7 extra)
    one_rank_s = 8 * 4096 * line_s_per_byte  # 8 lines of a full rank
    # 256 DPUs = 4 ranks: one thread takes them one after another; four threads at once
    assert direct_transfer_s(4096, 256, hw, path, True, 1) == pytest.approx(10e-6 + 4 * one_rank_s, rel=1e-12)
    assert direct_transfer_s(4096, 256, hw, path, True, 4) == pytest.approx(10e-6 + one_rank_s, rel=1e-12)
    assert direct_transfer_s(4096, 256, hw, path, True, 3) == pytest.approx(10e-6 + 2 * one_rank_s, rel=1e-12)
    # 2,048 DPUs on 32 threads: one round, but 8 MiB at 20 GB/s is longer: the ceiling
    assert direct_transfer_s(4096, 2048, hw, path, True, 32) == pytest.approx(10e-6 + 2048 * 4096 / 20e9, rel=1e-12)


def _rows_scaled(tmp_path: Path, role: str, factor: float) -> Path:
    folder = tmp_path / f"validation-{role}"
    shutil.copytree(validation_dir(), folder)
    path = folder / "whatifs" / "whatifs.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for r in rows:
        chosen = (r["role"] == "fit" and r["pair"] != "sdk-direct") if role == "other-fit" else (
            r["role"] == role and (role != "fit" or r["pair"] == "sdk-direct"))
        if chosen and r["baseline_value"] and r["changed_value"]:
            r["baseline_value"] = repr(float(r["baseline_value"]) * factor)
            r["changed_value"] = repr(float(r["changed_value"]) * factor)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return folder


@pytest.mark.parametrize("threads", direct_path.FIT_THREADS)
def test_the_test_rows_never_reach_the_fit(threads: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test row's values x 10: the direct path's fitted constants stay bit-identical; so they do with the
    other pairs' fit rows x 10 (not its rows); its own fit rows x 10 change them (the check can fail)."""
    hw = load_hardware("upmem-2556")
    base = fit_direct(hw, threads)
    for role, changes in (("test", False), ("other-fit", False), ("fit", True)):
        monkeypatch.setenv("PIMMODEL_VALIDATION_DIR", str(_rows_scaled(tmp_path, role, 10.0)))
        whatifs.load_whatifs.cache_clear()
        try:
            again = fit_direct(hw, threads)
        finally:
            whatifs.load_whatifs.cache_clear()
        assert (again != base) is changes, role  # frozen dataclasses: bit-identical floats or not


def test_the_stated_single_thread_decides_the_direction_of_a_what_if(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 64 KiB per DPU the single-threaded direct copy of the 2023 sheet is 2.4x slower than the SDK's pool.
    The model says slower too; without the thread term (the fit machine's threads instead of the stated one) it
    says faster, and the check fails."""
    hw = load_hardware("upmem-2556")
    row = next(r for r in whatifs.load_whatifs() if r.id == "direct2023-send-256dpu-65536B")
    assert row.changed_threads == 1 and row.time_ratio > 1
    assert whatif_cases.predicted(row, hw)["ratio"] > 1
    monkeypatch.setattr(whatif_cases, "_threads", lambda row, fit_threads: fit_threads)
    assert whatif_cases.predicted(row, hw)["ratio"] < 1


def test_validate_whatif_lists_every_row_with_its_interval_and_the_fit_error() -> None:
    r = cli("validate", "--group", "whatif", "--json")
    assert r.returncode in (0, 1), r.stderr
    record = json.loads(r.stdout)
    group = record["groups"]["whatif"]
    listed = group["rows"] + group["bounds"] + group["unexpressed"]
    everything = whatifs.load_whatifs()
    assert len(listed) == len(everything) >= 15
    assert len({row.source for row in everything if row.id in {x["id"] for x in listed}}) >= 3
    for x in group["rows"]:
        assert x["low"] < x["ratio"] < x["high"] and x["inside"] == (x["low"] <= x["measured_ratio"] <= x["high"])
    cases = [c for c in record["cases"] if c["group"] == "whatif"]
    assert {c["name"] for c in cases} == {x["id"] for x in group["rows"] + group["bounds"]}
    assert group["evidence_cases"] == group["test_rows"] == sum(x["role"] == "test" for x in group["rows"])
    # per source and role: rows, MAPE and coverage, adding up to the rows
    sources = group["sources"]
    assert len({s["source"] for s in sources}) >= 4 and sum(s["rows"] for s in sources) == len(group["rows"])
    for s in sources:
        mine = [x for x in group["rows"] if (x["source"], x["role"], x["direction"]) == (s["source"], s["role"],
                                                                                      s["direction"])]
        assert s["inside"] == sum(x["inside"] for x in mine) and s["mape"] >= 0
    assert [b["id"] for b in group["bounds"]] == ["unleashed-numa-xfer-max"] and group["bounds"][0]["inside"]
    names = [t["name"] for t in record["targets"] if t["group"] == "whatif"]
    assert any("test rows (never fitted): time-ratio MAPE" in n and "fit rows:" in n for n in names)
    assert any("inside" in n for n in names)


@pytest.mark.parametrize("broken", ["none", "inverted"])
def test_a_broken_placement_term_fails_the_placement_check(broken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The placement context row (NUMA-aware allocation gains up to 2.9x) is checked as a bound on the model's
    remote/local ratio: it passes with the term, and fails with the term removed (1.0) or inverted."""
    from pimmodel import primitives

    hw = load_hardware("upmem-2556")

    def bound_cases() -> list:
        cases, _, record = whatif_cases.whatif_cases(hw)
        return [c for c in cases if c.name == "unleashed-numa-xfer-max"]

    assert all(c.ok for c in bound_cases()) and 1 < whatif_cases.placement_gain(hw) <= 2.9
    real = primitives.placement_factor
    fake = (lambda dpus, hw: 1.0) if broken == "none" else (lambda dpus, hw: 1 / real(dpus, hw))
    monkeypatch.setattr(primitives, "placement_factor", fake)
    assert not all(c.ok for c in bound_cases())
