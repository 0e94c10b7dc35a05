"""Real what-if rows (``validation/whatifs/whatifs.csv``): a baseline and a changed configuration of the host
path, both measured on real UPMEM servers, with each row's source and role (fit / test / context; the folder's
README says how the roles were split). A change the model predicts (a faster host path, placement, collectives)
is checked as a ratio, changed over baseline, against these rows."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache

from ..errors import DataError
from ..resources import data_dir

KINDS = ("collective", "placement", "transfer-engine", "transfer-mode", "application")
ROLES = ("fit", "test", "context")
RATIOS = ("time", "throughput", "speedup")
VALUE_KINDS = ("table", "text", "figure-read")
PAIRS = ("sdk-direct", "parallel-serial", "transposition", "")
"""How the model expresses a row's two configurations (``validation/whatif_cases.py``): the SDK's parallel transfer
against a direct host path; a parallel push against one DPU per call on the machine's fitted constants; with and
without the byte transposition (no term: priced alike); empty for a context row (not scored)."""
RATIO_TOLERANCE = 0.005
"""Relative rounding a stored ratio may carry against its two stored values."""


@dataclass(frozen=True)
class WhatIfRow:
    """One measured change: ``measured_ratio`` is changed over baseline in ``ratio_of`` (time, throughput, or a
    speed-up as the source reports it)."""

    id: str
    source: str
    where: str
    kind: str
    quantity: str
    dpus: int | None
    bytes_per_dpu: int | None
    baseline_value: float | None
    changed_value: float | None
    measured_ratio: float
    ratio_of: str
    value_kind: str
    role: str
    baseline_config: str
    changed_config: str
    changed_threads: int | None = None
    """Host threads of the changed configuration, where the source states them."""
    pair: str = ""
    """How the model expresses the two configurations (``PAIRS``)."""

    @property
    def time_ratio(self) -> float:
        """Changed time over baseline time (a throughput ratio or a speed-up inverted)."""
        return self.measured_ratio if self.ratio_of == "time" else 1 / self.measured_ratio

    @property
    def direction(self) -> str:
        """``to-dpu`` or ``from-dpu`` for a transfer row (from its quantity), else empty."""
        text = self.quantity.lower()
        return "to-dpu" if "cpu->dpu" in text else "from-dpu" if "dpu->cpu" in text else ""


def _count(text: str, row: str, column: str) -> int | None:
    value = _number(text, row, column, int)
    return None if value is None else int(value)


def _number(text: str, row: str, column: str, kind: type = float) -> float | int | None:
    if not text.strip():
        return None
    try:
        return kind(text)
    except ValueError:
        raise DataError(f"whatifs.csv row {row}: {column} {text!r} is not a number") from None


@lru_cache(maxsize=1)
def load_whatifs() -> tuple[WhatIfRow, ...]:
    """The rows, checked: known kinds, roles and ratio kinds, a source and a place in it for every row, and each
    stored ratio equal to its two stored values."""
    path = data_dir("validation") / "whatifs" / "whatifs.csv"
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            raw = list(csv.DictReader(handle))
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    rows = []
    for r in raw:
        name = r.get("id", "?")
        for column, allowed in (("kind", KINDS), ("role", ROLES), ("ratio_of", RATIOS), ("value_kind", VALUE_KINDS),
                                ("pair", PAIRS)):
            if r.get(column, "") not in allowed:
                raise DataError(f"whatifs.csv row {name}: {column} {r.get(column)!r} is not one of "
                                f"{', '.join(allowed)}")
        if not r["source"].strip() or not r["where"].strip():
            raise DataError(f"whatifs.csv row {name}: every row names its source and where in it")
        row = WhatIfRow(name, r["source"], r["where"], r["kind"], r["quantity"], _count(r["dpus"], name, "dpus"),
                        _count(r["bytes_per_dpu"], name, "bytes_per_dpu"),
                        _number(r["baseline_value"], name, "baseline_value"),
                        _number(r["changed_value"], name, "changed_value"),
                        float(_number(r["measured_ratio"], name, "measured_ratio") or "nan"), r["ratio_of"],
                        r["value_kind"], r["role"], r["baseline_config"], r["changed_config"],
                        _count(r.get("changed_threads", ""), name, "changed_threads"), r.get("pair", ""))
        if not row.measured_ratio > 0:
            raise DataError(f"whatifs.csv row {name}: measured_ratio must be a positive number")
        if row.baseline_value and row.changed_value:
            stored = row.changed_value / row.baseline_value
            if row.ratio_of == "speedup":
                stored = 1 / stored
            if abs(stored / row.measured_ratio - 1) > RATIO_TOLERANCE:
                raise DataError(f"whatifs.csv row {name}: measured_ratio {row.measured_ratio} is not its values' "
                                f"{stored:.4g}")
        rows.append(row)
    return tuple(rows)
