"""A direct host path (the host maps each rank and moves the bytes itself, no SDK thread pool), fitted on the
fit rows of the real what-if data (``validation/whatifs``: upmem-sdk-light's direct interface at 2,048 DPUs,
1 KiB-1 MiB per DPU) and nothing else; ``primitives.direct_transfer_s`` is its equation.

Per direction, two constants: the call and the aggregate ceiling, least squares on the log of the direct
interface's measured times; one host thread's rate is the SDK model's own (``primitives.line_s_per_byte``). The
fit machine's host thread count is not stated by its source (parlay runs one worker per hardware thread): it is
an assumption, ``FIT_THREADS``, whose range enters every prediction's interval as a spread (each assumed count
has its own fit)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import least_squares

from ..primitives import direct_transfer_s
from ..specs import HardwareSpec
from .whatifs import WhatIfRow, load_whatifs

GIB = 2**30
FIT_THREADS = (16, 32)
"""A: host threads of the fit machine's direct copies. Its source does not state the CPU; both documented UPMEM
servers have two 8-core Xeon Silver CPUs (PrIM's 2,556-DPU system: 2 x 4110; PIM-Opt's: 2 x 4215, PIM-Opt
README.md:27): 16 cores, 32 hardware threads. The count whose fit has the smaller residual is the central one
(``fits``), the other widens the interval."""


@dataclass(frozen=True, slots=True)
class DirectPath:
    """One direction of the direct host path."""

    call_s: float
    ceiling_bytes_per_s: float


@dataclass(frozen=True, slots=True)
class DirectFit:
    """The direct path fitted with ``threads`` host threads assumed on the fit machine."""

    threads: int
    push: DirectPath
    pull: DirectPath
    log_residual_sd: float
    """RMS log residual of the fit rows (both directions)."""
    rows: int

    def path(self, to_pim: bool) -> DirectPath:
        return self.push if to_pim else self.pull


def fit_rows(rows: tuple[WhatIfRow, ...] | None = None) -> list[WhatIfRow]:
    """The transfer rows a fit may see: role ``fit`` only, of the SDK against the direct path."""
    return [r for r in (rows if rows is not None else load_whatifs()) if r.role == "fit" and r.pair == "sdk-direct"]


def changed_s(row: WhatIfRow) -> float:
    """The changed configuration's measured seconds per call (a throughput row: its bytes over the GiB/s)."""
    assert row.changed_value is not None and row.dpus and row.bytes_per_dpu
    if row.ratio_of == "time":
        return row.changed_value
    return row.dpus * row.bytes_per_dpu / (row.changed_value * GIB)


def fit_direct(hw: HardwareSpec, threads: int, rows: tuple[WhatIfRow, ...] | None = None) -> DirectFit:
    """Least squares of log time per direction over the fit rows, with ``threads`` host threads."""
    chosen = fit_rows(rows)
    paths: dict[bool, DirectPath] = {}
    residuals: list[float] = []
    for to_pim in (True, False):
        mine = [r for r in chosen if (r.direction == "to-dpu") == to_pim]
        sizes = np.array([float(r.bytes_per_dpu or 0) for r in mine])
        dpus = np.array([float(r.dpus or 0) for r in mine])
        seen = np.log([changed_s(r) for r in mine])

        def model(x: np.ndarray, sizes: np.ndarray = sizes, dpus: np.ndarray = dpus, to_pim: bool = to_pim
                  ) -> np.ndarray:
            path = DirectPath(*np.exp(x))
            return np.log(np.asarray(direct_transfer_s(sizes, dpus, hw, path, to_pim, threads), float))

        start = np.log([20e-6, 20e9])
        fit = least_squares(lambda x, seen=seen, model=model: model(x) - seen, start, method="lm")
        paths[to_pim] = DirectPath(*(float(v) for v in np.exp(fit.x)))
        residuals += list(fit.fun)
    sd = math.sqrt(float(np.mean(np.square(residuals)))) if residuals else 0.0
    return DirectFit(threads, paths[True], paths[False], sd, len(chosen))


@lru_cache(maxsize=4)
def fits(hw: HardwareSpec) -> tuple[DirectFit, ...]:
    """One fit per assumed thread count (``FIT_THREADS``), the best fit (smallest residual) first: the central
    prediction; the others widen its interval."""
    return tuple(sorted((fit_direct(hw, t) for t in FIT_THREADS), key=lambda f: f.log_residual_sd))
