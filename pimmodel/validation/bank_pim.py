"""``validate --group bank-pim``: the bank-simd family's device constants against Samsung HBM-PIM's published silicon
numbers (``validation/bank-pim/silicon.csv``, roles assigned from the sources before any prediction).

What is expressed: a memory-bound kernel's speed-up over the host running it alone, as the units' streaming rate
over the host's (``kernels.bank_simd.streaming_speedup``), at a large size (no source read gives the sizes). The
host's share of its pins' rate is the one fitted constant, set on the fit row of its host
(``calibration.bank_pim``); a host without a fit row is assumed to stream at the share of the host that has one (an
assumption, in every case's note). An application is priced as all memory-bound GEMV (an upper bound: its layers are
not published). A published ratio of the device's internal to its off-chip bandwidth is the constants' own ratio.
Energy rows are not expressed (no energy constant was found), nor a throughput whose dataflow is not published;
context rows (press, other devices, "up to") are listed, never scored."""

from __future__ import annotations

from typing import Any

from ..calibration.bank_pim import HostShare, SiliconRow, fit_host_shares, host_kind, load_rows
from .cases import Case, Target

TOLERANCE = 0.20
"""Issue 28's goal: each test number within 20 %."""
SPEEDUP_KINDS = ("micro-kernel speed-up", "GEMV speed-up", "application speed-up")
NOT_EXPRESSED = {
    "energy": "no energy constant of the device was found (constants.md: NF), so no energy is predicted",
    "throughput": "the kernel's dataflow, tile sizes and host are not published (abstract only)",
}


def _share(row: SiliconRow, shares: dict[str, HostShare]) -> tuple[HostShare | None, str]:
    own = shares.get(host_kind(row))
    if own is not None:
        return own, f"host share {own.share:.3f} fitted on {own.row}"
    if not shares:
        return None, "no fit row"
    first = next(iter(shares.values()))
    return first, (f"A: the {host_kind(row)} host has no fit row; taken to stream at the {first.host} host's "
                   f"share {first.share:.3f} (fitted on {first.row})")


def bank_pim_cases(hw: Any) -> tuple[list[Case], list[Target], dict[str, Any]]:
    """The cases (a fit row and every scorable test row), the targets (test MAPE; the fitted share's physical
    bound) and the detail record (every row, with why it is or is not scored)."""
    from ..kernels.bank_simd import peak_internal_over_pins, streaming_speedup

    rows = load_rows()
    shares = fit_host_shares(hw, rows)
    RATIO_KINDS = {"bandwidth ratio": peak_internal_over_pins}
    cases: list[Case] = []
    listed: list[dict[str, Any]] = []
    for row in rows:
        entry: dict[str, Any] = {"id": row.id, "role": row.role, "kind": row.kind, "host": row.host,
                                 "measured": row.value, "unit": row.unit, "source": row.source, "where": row.where}
        if row.role == "context":
            listed.append({**entry, "scored": False, "why": "context: no measured configuration (shown, not scored)"})
            continue
        if row.kind in RATIO_KINDS and row.value is not None:
            predicted = RATIO_KINDS[row.kind](hw)
            cases.append(Case("bank-pim", row.id, "ratio", row.value, predicted, TOLERANCE, unit="x",
                              source=f"{row.source}: {row.where}",
                              note=f"{row.role} row; the units' command rate over the pins' rate"))
            listed.append({**entry, "scored": True, "predicted": predicted, "error": predicted / row.value - 1,
                           "how": "units x lanes x 2 B per command_s over channel_gb_per_s"})
            continue
        if row.kind not in SPEEDUP_KINDS or row.value is None:
            listed.append({**entry, "scored": False, "why": NOT_EXPRESSED.get(row.kind, "not expressed yet")})
            continue
        share, how = _share(row, shares)
        if share is None:
            listed.append({**entry, "scored": False, "why": "no host share fitted"})
            continue
        predicted = streaming_speedup(hw, share.share)
        application = "; A: priced as all memory-bound GEMV" if row.kind == "application speed-up" else ""
        restates = "the host share was fitted on this row" if row.id == share.row else ""
        cases.append(Case("bank-pim", row.id, "speedup", row.value, predicted, TOLERANCE, unit="x",
                          source=f"{row.source}: {row.where}", restates=restates,
                          note=f"{row.role} row, {row.host}; {how}{application}"))
        listed.append({**entry, "scored": True, "predicted": predicted, "error": predicted / row.value - 1,
                       "how": how + application})
    # the fitted shares' physical bound: a host cannot stream faster than its pins
    for share in shares.values():
        cases.append(Case("bank-pim", f"{share.host} host share of its pins' rate <= 1 ({share.row})", "share",
                          1.0, share.share, 0.0, "below", "x",
                          note="a share above 1 means the device constants cannot reach the measured speed-up"))
    tests = [d for d in listed if d["scored"] and d["role"] == "test"]
    mape = 100 * sum(abs(d["error"]) for d in tests) / len(tests) if tests else float("nan")
    targets = [Target("bank-pim", "test rows MAPE", "all", "speedup", mape, 100 * TOLERANCE,
                      note=f"{len(tests)} test rows, each goal within {TOLERANCE:.0%}; misses: "
                           + (", ".join(f"{d['id']} {d['error']:+.0%}" for d in tests
                                        if abs(d["error"]) > TOLERANCE) or "none"))]
    details = {"rows": listed, "host_shares": {k: {"share": v.share, "row": v.row, "physical": v.physical}
                                               for k, v in shares.items()},
               "peak_internal_over_pins": peak_internal_over_pins(hw),
               "peak_note": "ISSCC'21 states 4x the off-chip bandwidth (a consistency check of the constants)",
               "fit_rows": sum(d["scored"] and d["role"] == "fit" for d in listed), "test_rows": len(tests),
               "test_mape_pct": mape}
    return cases, targets, details
