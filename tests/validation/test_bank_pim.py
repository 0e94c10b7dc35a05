"""``validate --group bank-pim``: the bank-simd family's constants against HBM-PIM's published silicon numbers.
The test rows never reach the fit, a broken constant makes a silicon check fail, and the streaming model is the
closed form written out here."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import cli

from pimmodel.calibration.bank_pim import fit_host_shares, load_rows
from pimmodel.kernels.bank_simd import peak_internal_over_pins, streaming_speedup
from pimmodel.specs import load_hardware
from pimmodel.validation.bank_pim import bank_pim_cases

HW = "hbm-pim-aquabolt"


def test_streaming_speedup_by_hand() -> None:
    hw = load_hardware(HW)
    # 8 units a channel; per unit and byte: 3.33 ns per 32-B command + one 39.17 ns activate per 1 KiB row
    per_byte = (4 / 1.2e9) / 32 + (47 / 1.2e9) / 1024
    assert streaming_speedup(hw, 0.5) == pytest.approx(8 / per_byte / (0.5 * 19.2e9), rel=1e-9)
    assert peak_internal_over_pins(hw) == pytest.approx(8 * 32 / (4 / 1.2e9) / 19.2e9, rel=1e-9)  # 4.0


def test_the_test_rows_never_reach_the_fit() -> None:
    hw = load_hardware(HW)
    rows = load_rows()
    scaled = [dataclasses.replace(r, value=r.value * 10) if r.role == "test" and r.value is not None else r
              for r in rows]
    assert fit_host_shares(hw, scaled) == fit_host_shares(hw, rows)
    assert any(r.role == "test" and r.value is not None for r in rows)


def test_the_fit_reproduces_its_own_row_only() -> None:
    hw = load_hardware(HW)
    share = fit_host_shares(hw)["FPGA"]
    assert streaming_speedup(hw, share.share) == pytest.approx(2.8, rel=1e-12)


def _case(hw, name: str):  # type: ignore[no-untyped-def]
    cases, _, _ = bank_pim_cases(hw)
    return next(c for c in cases if c.name == name)


def test_a_broken_constant_fails_a_silicon_check() -> None:
    hw = load_hardware(HW)
    assert _case(hw, "isscc21-internal-bandwidth").ok
    assert not _case(hw.replace(lanes=32), "isscc21-internal-bandwidth").ok  # 8x instead of ISSCC'21's 4x
    assert not _case(hw.replace(command_s=2 * hw.command_s), "isscc21-internal-bandwidth").ok


def test_cli_scores_at_least_four_numbers_and_lists_the_rest() -> None:
    result = cli("validate", "--group", "bank-pim", "--json")
    assert result.returncode in (0, 1), result.stderr
    record = json.loads(result.stdout)
    assert record["hardware"] == HW
    group = record["groups"]["bank-pim"]
    scored = [r for r in group["rows"] if r["scored"]]
    assert len(scored) >= 4 and group["scored"]
    assert all("why" in r for r in group["rows"] if not r["scored"])
    assert {r["role"] for r in group["rows"] if r["role"] == "context" and r["scored"]} == set()


def test_upmem_groups_refuse_a_bank_spec_in_one_line() -> None:
    result = cli("validate", "--hardware", HW, "--group", "hardware")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "use --group bank-pim" in result.stderr
