"""The bank-simd family's one fitted constant: the share of its pins' rate a host's own memory-bound kernel
streams at, fitted on the fit rows of ``validation/bank-pim/silicon.csv`` only (the test rows never reach it).

The published speed-up of a memory-bound micro-kernel (GEMV, vector ADD) is the units' streaming rate over the
host's, so one fit row gives the host's share in closed form: ``share = channel_stream / (pins x speed-up)``
(``kernels.bank_simd.streaming_speedup`` inverted). A share above 1 would be a host reading faster than its pins:
the device constants cannot explain the row (``physical``)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any

from ..resources import data_dir

FIT_KINDS = ("micro-kernel speed-up",)
"""The fit rows a host share is read from (memory-bound micro-kernels; an application mixes in unknown work)."""


@dataclass(frozen=True, slots=True)
class SiliconRow:
    id: str
    source: str
    where: str
    kind: str
    kernel: str
    host: str
    configuration: str
    baseline: str
    value: float | None
    unit: str
    value_kind: str
    notes: str
    role: str


def load_rows() -> list[SiliconRow]:
    """Every row of ``silicon.csv`` (values as published; a row without a number has ``value`` None)."""
    path = data_dir("validation") / "bank-pim" / "silicon.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for r in rows:
        try:
            value: float | None = float(r["measured_value"])
        except ValueError:
            value = None
        out.append(SiliconRow(r["id"], r["source"], r["where"], r["kind"], r["kernel_or_application"], r["host"],
                              r["configuration"], r["baseline"], value, r["unit"], r["value_kind"], r["notes"],
                              r["role"]))
    return out


def host_kind(row: SiliconRow) -> str:
    """``FPGA``, ``GPU`` or ``other``: the first word of the row's host."""
    return row.host.split(" ", 1)[0]


@dataclass(frozen=True, slots=True)
class HostShare:
    host: str
    share: float
    """the host's streaming rate over its pins' rate."""
    row: str
    physical: bool
    """share <= 1."""


def fit_host_shares(hw: Any, rows: list[SiliconRow] | None = None) -> dict[str, HostShare]:
    """Per host kind, the share fitted on its fit rows (the mean over them; every one a micro-kernel speed-up)."""
    from ..kernels.bank_simd import streaming_speedup

    at_pins = streaming_speedup(hw, 1.0)
    out: dict[str, HostShare] = {}
    for row in rows if rows is not None else load_rows():
        if row.role != "fit" or row.kind not in FIT_KINDS or row.value is None:
            continue
        share = at_pins / row.value
        out[host_kind(row)] = HostShare(host_kind(row), share, row.id, share <= 1.0)
    return out
