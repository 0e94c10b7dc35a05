"""The PrIM runs of the upmem-scale TEST files (real UPMEM machines other than the fitted one, 1-480 DPUs), read as
(kernel, DPUs, size, shape) points the kernel descriptions can price, or with the reason they cannot.

Files (copied verbatim from ``../shared/data/upmem-scale/``, roles in its README: both are **test** files, never
fitted, never tuned against):

- ``vpim-prim-native.csv``: native runs of the PrIM benchmarks (the vPIM paper's baseline, brisco007/vPIM @ 768b745),
  1, 60, 64, 320 and 480 DPUs, 16 tasklets, BL = 10; PrIM's timers (``kernel_ms``, ``cpu_dpu_ms``, ``dpu_cpu_ms``);
- ``memclave-prim.csv``: PrIM defaults at 1 and 64 DPUs on another machine; only the ``native_*`` columns (the
  ``memclave_*`` ones are a secure runtime); its VA row was built -O0 with BL = 8 and its MLP row with BL = 8 and a
  modified host (not PrIM builds), its HST-L row with BL = 8.

The shape comes from the row's ``size_meaning`` as the log printed it (``size`` where it is the total element
count). Nothing here reads a measured time to decide anything.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import SpecError
from ..kernels.prim import kernels
from ..resources import data_dir

SOURCES: dict[str, str] = {
    "vpim": "vpim-prim-native.csv",
    "memclave": "memclave-prim.csv",
}
"""Source id -> file under ``data/validation/``."""


@dataclass(frozen=True)
class PrimRun:
    """One measured PrIM run: the point the model prices (``shape`` holds the kernel's shape parameters), its
    measured times (ms; None where the file has none), and ``why_not`` (empty when the model can express it)."""

    source: str
    subset: str
    kernel: str
    dpus: int
    size: int | None
    shape: dict[str, int | str] = field(default_factory=dict)
    kernel_ms: float | None = None
    cpu_to_dpu_ms: float | None = None
    dpu_to_cpu_ms: float | None = None
    why_not: str = ""
    note: str = ""
    origin: str = ""

    @property
    def expressible(self) -> bool:
        return not self.why_not

    def to_record(self) -> dict[str, Any]:
        return {"source": self.source, "subset": self.subset, "kernel": self.kernel, "dpus": self.dpus,
                "size": self.size, "shape": dict(self.shape), "measured_kernel_ms": self.kernel_ms,
                "expressible": self.expressible, "why_not": self.why_not, "note": self.note, "origin": self.origin}


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _float(text: str | None) -> float | None:
    return float(text) if text not in (None, "") else None


_TRNS = re.compile(r"M_=([\d,]+), m=([\d,]+), N_=([\d,]+), n=([\d,]+)")
_MN = re.compile(r"m=([\d,]+)\D+?n=([\d,]+)")
_TS = re.compile(r"n=([\d,]+)\D+?m=([\d,]+)")
_BS = re.compile(r"([\d,]+)-element.*?([\d,]+) queries")


def shape_of(kernel: str, size: str, meaning: str) -> tuple[int | None, dict[str, int | str], str]:
    """(size, shape, why not) of a row from its ``size`` and ``size_meaning`` columns."""
    if kernel not in kernels():
        return None, {}, (f"{kernel} has no description (the model describes the 13 kernels of uPIMulator's data set; "
                          "PrIM's BFS, SpMV and NW are not among them)")
    if "not printed" in meaning:
        return None, {}, "the run's input size was not printed in its log"
    if kernel == "TRNS":
        if m := _TRNS.search(meaning):
            big_m, rows, blocks, cols = (_int(g) for g in m.groups())
            return big_m, {"rows": rows, "blocks": blocks, "cols": cols}, ""
        return None, {}, "only TRNS's total element count was printed, not its shape (M_, m, N_, n)"
    if kernel in ("GEMV", "MLP") and (m := _MN.search(meaning)):
        return _int(m.group(1)), {"cols": _int(m.group(2))}, ""
    if kernel == "TS" and (m := _TS.search(meaning)):
        return _int(m.group(1)), {"query_length": _int(m.group(2))}, ""
    if kernel == "BS" and (m := _BS.search(meaning)):
        return _int(m.group(1)), {"queries": _int(m.group(2))}, ""
    if size and "total" in meaning:
        return _int(size), {}, ""
    return None, {}, f"no size the description takes in {meaning!r}"


_NOT_PRIM_BUILD = {
    ("memclave", "VA"): "built -O0 with BL = 8 (not PrIM's -O2, BL = 10): the description counts the -O2 code",
    ("memclave", "MLP"): "built with BL = 8 and a modified host program (not a PrIM build)",
    ("memclave", "HST-L"): "built with BL = 8 (256-B DMA blocks; the description has PrIM's BL = 10)",
}


@lru_cache(maxsize=2)
def load_prim_runs() -> tuple[PrimRun, ...]:
    """Every row of both files, expressible or with the reason it is not."""
    out: list[PrimRun] = []
    for source, name in SOURCES.items():
        path = data_dir("validation") / "upmem-scale" / name
        try:
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
        except OSError as exc:
            raise SpecError(f"cannot read {path}: {exc.strerror or exc}") from None
        for r in rows:
            kernel, dpus = r["kernel"], int(r["dpus"])
            size, shape, why = shape_of(kernel, r.get("size", ""), r.get("size_meaning", ""))
            prefix = "native_" if source == "memclave" else ""
            k_ms = _float(r.get(f"{prefix}kernel_ms"))
            if source == "memclave" and r.get("system"):
                why = f"a total time only ({r['system']} in the paper's comparison table): no kernel timer"
                size, shape, k_ms = None, {}, None
            elif kernel in kernels():
                why = _NOT_PRIM_BUILD.get((source, kernel), why)
            if not why and k_ms is None:
                why = "no kernel time in the row"
            out.append(PrimRun(source, r.get("subset", "defaults"), kernel, dpus, size, shape, k_ms,
                               _float(r.get(f"{prefix}cpu_dpu_ms")), _float(r.get(f"{prefix}dpu_cpu_ms")), why,
                               r.get("note", ""), r["source"]))
    return tuple(out)
