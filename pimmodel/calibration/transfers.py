"""Host<->PIM transfers at scale: the upmem-scale fit files, one constant set per machine, the machine spread.

The fit files (``shared/data/upmem-scale/README.md`` gives their sources and roles) are host-transfer
microbenchmarks of two machines:

- ``bpforest``: ``bpforest-host-transfer.csv`` (plasgroup/bp-forest-exp, machine not stated), host->DPU only,
  8 B-1 MiB per DPU on 1-2,048 DPUs, parallel / serial / broadcast, MRAM and WRAM; one cold run per point, so only
  the rows of 64 KiB or more per DPU set bandwidths (the README's advice);
- ``upvec``: ``upvec-host-transfer.csv`` (derf/prim-benchmarks, SDK 2025.1.0), parallel MRAM transfers of 8 MiB
  per DPU on 1-40 whole ranks, both directions; the upstream SDK's rows are fitted (what applications run), the
  rows "without transformation" (no byte transposition) are reported beside them: how much the transposition
  costs at scale.

Per machine the fit sets the one-rank bandwidth(s), the share of one rank's bandwidth a further rank adds
(``*_rank_growth``) and the aggregate's ceiling (``*_saturation_bytes_per_s``) that ``primitives.rank_set_s``
uses; everything else (call overheads, the thread pool, the transfer lines) stays upmem-2556's. No test file
(PrIM runs, K-means, decision trees) is read here.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..primitives import host_transfer_s
from ..resources import data_dir
from ..specs import HardwareSpec

MIN_BANDWIDTH_BYTES = 64 * 1024
"""Rows with fewer bytes per DPU are one cold run of a call-dominated point: not used for bandwidths."""
MACHINES: tuple[str, ...] = ("bpforest", "upvec")
FIT_FILES = {"bpforest": "bpforest-host-transfer.csv", "upvec": "upvec-host-transfer.csv"}
_BP_MODES = {"parallel push": "parallel", "serial push (one DPU per call)": "serial", "broadcast": "broadcast"}
# (machine) -> fitted fields; the one-rank bandwidths are the spec's fields of the same name
_FREE = {
    "bpforest": ("serial_to_pim_bytes_per_s", "push_bytes_per_s_per_rank", "push_rank_growth",
                 "push_saturation_bytes_per_s"),
    "upvec": ("push_bytes_per_s_per_rank", "push_rank_growth", "push_saturation_bytes_per_s",
              "pull_bytes_per_s_per_rank", "pull_rank_growth", "pull_saturation_bytes_per_s"),
}
_GROWTH = ("push_rank_growth", "pull_rank_growth")


@dataclass(frozen=True, slots=True)
class TransferRow:
    """One measured transfer call: seconds for ``bytes_per_dpu`` to each of ``dpus`` DPUs."""

    machine: str
    direction: str  # "to-dpu" | "from-dpu"
    mode: str  # "parallel" | "serial" | "broadcast"
    memory: str  # "mram" | "wram"
    dpus: int
    bytes_per_dpu: int
    seconds: float
    variant: str = ""  # upvec: "upstream" | "no-transposition"

    @property
    def to_pim(self) -> bool:
        return self.direction == "to-dpu"


def scale_dir() -> Path:
    return data_dir("validation") / "upmem-scale"


@lru_cache(maxsize=2)
def load_rows(root: Path | None = None) -> tuple[TransferRow, ...]:
    """Every usable row of the two fit files (the bp-forest "1 DPU in 4" mode is the README's benchmark bug: left
    out), as seconds per call."""
    where = root or scale_dir()
    rows: list[TransferRow] = []
    with open(where / FIT_FILES["bpforest"], newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            mode = _BP_MODES.get(r["mode"])
            if mode is None:
                continue
            nbytes, dpus = int(r["bytes_per_dpu"]), int(r["dpus"])
            rate = float(r["mib_per_s"]) * 2**20
            if rate <= 0:
                continue
            rows.append(TransferRow("bpforest", "to-dpu", mode, r["memory"].lower(), dpus, nbytes,
                                    nbytes * dpus / rate))
    with open(where / FIT_FILES["upvec"], newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            direction = "from-dpu" if r["direction"].startswith("DPU->host") else "to-dpu"
            variant = "no-transposition" if "without" in r["sdk"] else "upstream"
            nbytes, dpus = int(r["bytes_per_dpu"]), int(r["dpus"])
            rows.append(TransferRow("upvec", direction, "parallel", "mram", dpus, nbytes,
                                    nbytes * dpus / (float(r["median_gb_s"]) * 1e9), variant))
    return tuple(rows)


def fit_rows(machine: str, rows: tuple[TransferRow, ...] | None = None) -> list[TransferRow]:
    """The rows a machine's bandwidths are fitted on: MRAM, 64 KiB or more per DPU, the upstream SDK."""
    return [r for r in (rows or load_rows()) if r.machine == machine and r.memory == "mram"
            and r.bytes_per_dpu >= MIN_BANDWIDTH_BYTES and r.variant in ("", "upstream")]


def predict_row(row: TransferRow, hw: Any) -> float:
    return float(host_transfer_s(row.bytes_per_dpu, row.dpus, hw, row.to_pim, row.mode, row.memory))


def _values(names: tuple[str, ...], x: np.ndarray) -> dict[str, float]:
    return {name: float(1 / (1 + math.exp(-v))) if name in _GROWTH else float(math.exp(v))
            for name, v in zip(names, x, strict=True)}


def _with(hw: HardwareSpec, names: tuple[str, ...], x: np.ndarray) -> Any:
    """The spec's numbers with some changed, as a plain namespace (no re-validation inside the fit's loop)."""
    from types import SimpleNamespace

    return SimpleNamespace(**{**hw.numeric(), **_values(names, x)})


def fit_machine(machine: str, base: HardwareSpec, rows: tuple[TransferRow, ...] | None = None) -> dict[str, float]:
    """The machine's constant set: robust least squares (soft L1, scale 5 %) on the relative error of the time of
    its fit rows, the criterion the 20 % MAPE target measures (one cold run per bp-forest point: its 64 KiB and
    1 MiB rows differ by up to 1.6x at one DPU count, and a robust loss keeps either from pulling the constants
    alone); growth shares through a logistic, bandwidths through a log, from several starts."""
    from scipy.optimize import least_squares

    data = fit_rows(machine, rows)
    names = _FREE[machine]
    measured = np.array([r.seconds for r in data])

    def residual(x: np.ndarray) -> np.ndarray:
        hw = _with(base, names, x)
        return np.array([predict_row(r, hw) for r in data]) / measured - 1

    best = None
    for growth0 in (-3.0, -1.0, 1.0):
        for sat0 in (math.log(8e9), math.log(15e9), math.log(40e9)):
            x0 = np.array([growth0 if n in _GROWTH else sat0 if "saturation" in n else math.log(getattr(base, n))
                           for n in names])
            lo = np.array([-8.0 if n in _GROWTH else math.log(1e7) for n in names])
            hi = np.array([8.0 if n in _GROWTH else math.log(1e12) for n in names])
            res = least_squares(residual, np.clip(x0, lo + 1e-6, hi - 1e-6), bounds=(lo, hi), loss="soft_l1",
                                f_scale=0.05, max_nfev=400)
            if best is None or res.cost < best.cost:
                best = res
    assert best is not None
    return _values(names, best.x)


def machine_spec(base: HardwareSpec, machine: str, constants: dict[str, float] | None = None) -> HardwareSpec:
    """``base`` with a fitted machine's constant set (the stored one unless ``constants`` is given)."""
    values = constants if constants is not None else stored_sets()[machine]
    return base.replace(machine=machine, **values)


def stored_path() -> Path:
    return data_dir("calibration") / "transfers-upmem-scale.json"


@lru_cache(maxsize=1)
def stored_sets() -> dict[str, dict[str, float]]:
    """The shipped per-machine constant sets (``pimmodel transfer --fit`` writes them)."""
    import json

    with open(stored_path(), encoding="utf-8") as f:
        return {k: {n: float(v) for n, v in d.items()} for k, d in json.load(f)["machines"].items()}


def errors(hw: HardwareSpec, machine: str, rows: tuple[TransferRow, ...] | None = None,
           min_bytes: int = MIN_BANDWIDTH_BYTES) -> dict[str, dict[str, Any]]:
    """MAPE (%) of ``hw``'s predictions per (direction, mode, memory, variant) group of a machine's rows of at
    least ``min_bytes`` per DPU, with the number of points and the DPU range."""
    groups: dict[str, list[tuple[float, float, int]]] = {}
    for r in rows or load_rows():
        if r.machine != machine or r.bytes_per_dpu < min_bytes:
            continue
        key = f"{r.direction} {r.mode} {r.memory}" + (f" ({r.variant})" if r.variant else "")
        groups.setdefault(key, []).append((predict_row(r, hw), r.seconds, r.dpus))
    return {k: {"points": len(v), "mape_pct": 100 * float(np.mean([abs(p / m - 1) for p, m, _ in v])),
                "dpus": [min(d for *_, d in v), max(d for *_, d in v)]} for k, v in sorted(groups.items())}


def log_residual_sd(hw: HardwareSpec, machine: str) -> float:
    """Standard deviation of log(predicted / measured) over a machine's fit rows."""
    res = [math.log(predict_row(r, hw) / r.seconds) for r in fit_rows(machine)]
    return float(np.sqrt(np.mean(np.square(res)))) if res else 0.0


def fit_all(base: HardwareSpec) -> dict[str, Any]:
    """Every machine's constant set, its errors on its own rows, and the residual spread: what the stored file
    holds."""
    machines: dict[str, dict[str, float]] = {}
    report: dict[str, Any] = {}
    for m in MACHINES:
        machines[m] = fit_machine(m, base)
        hw = machine_spec(base, m, machines[m])
        report[m] = {"errors": errors(hw, m), "log_residual_sd": log_residual_sd(hw, m)}
    return {"machines": machines, "fit": report, "base": base.name, "launch": fit_launch(base.dpus_per_rank),
            "rule": "fit rows only: bpforest-host-transfer.csv and upvec-host-transfer.csv (upmem-scale README)"}


LAUNCH_FILE = "simplepim-figures.csv"
LAUNCH_WORKLOADS = ("Vector Addition", "Reduction", "Histogram")
"""The launch-growth fit rows (the README's role): the other SimplePIM workloads are test rows, never read here."""


def launch_rows(root: Path | None = None) -> list[dict[str, Any]]:
    """The weak-scaling SimplePIM rows of the launch-growth workloads: the same work per DPU at 608, 1,216 and
    2,432 DPUs, so what grows is the launch and its completion polling."""
    where = root or scale_dir()
    with open(where / LAUNCH_FILE, newline="", encoding="utf-8") as f:
        return [{"group": f"{r['workload']} ({r['implementation']})", "dpus": int(r["dpus"]),
                 "kernel_s": float(r["kernel_ms"]) * 1e-3}
                for r in csv.DictReader(f) if r["workload"] in LAUNCH_WORKLOADS and r["scaling"] == "weak"]


def fit_launch(dpus_per_rank: int = 64) -> dict[str, Any]:
    """``launch_per_rank_s`` by linear least squares over the weak-scaling rows: one intercept per (workload,
    implementation), one common slope per rank beyond the first; with its standard error and the groups' own
    slopes (their spread)."""
    rows = launch_rows()
    groups = sorted({r["group"] for r in rows})
    a = np.zeros((len(rows), len(groups) + 1))
    y = np.array([r["kernel_s"] for r in rows])
    for i, r in enumerate(rows):
        a[i, groups.index(r["group"])] = 1.0
        a[i, -1] = -(-r["dpus"] // dpus_per_rank) - 1
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    resid = y - a @ coef
    dof = max(len(rows) - a.shape[1], 1)
    cov = float(resid @ resid / dof) * np.linalg.inv(a.T @ a)
    own = {}
    for g in groups:
        sel = [r for r in rows if r["group"] == g]
        x = np.array([-(-r["dpus"] // dpus_per_rank) - 1 for r in sel], dtype=float)
        own[g] = float(np.polyfit(x, [r["kernel_s"] for r in sel], 1)[0])
    return {"launch_per_rank_s": float(coef[-1]), "standard_error_s": float(np.sqrt(cov[-1, -1])),
            "group_slopes_s": own, "rows": len(rows), "source": LAUNCH_FILE + " (weak scaling, VA/RED/Histogram)"}


@lru_cache(maxsize=1)
def stored_launch() -> dict[str, Any]:
    """The shipped launch-growth fit."""
    import json

    with open(stored_path(), encoding="utf-8") as f:
        return dict(json.load(f)["launch"])


# ---------------------------------------------------------------- intervals from the machine-to-machine spread
Z_95 = 1.959964
FITTED_DPUS = (1, 2560)
FITTED_BYTES = (MIN_BANDWIDTH_BYTES, 8 * 2**20)
OUTSIDE_WIDENING = 2.0
"""Outside the fitted range (DPUs, bytes per DPU, WRAM, broadcast: no fit row of 64 KiB or more) the log
half-width doubles."""
_COVERS = {"bpforest": ("to-dpu",), "upvec": ("to-dpu", "from-dpu")}


def inside_fit(direction: str, mode: str, memory: str, dpus: int, bytes_per_dpu: float) -> bool:
    """Whether a point lies where fit rows of 64 KiB or more exist (MRAM parallel both ways, serial to the DPUs)."""
    covered = memory == "mram" and (mode == "parallel" or (mode == "serial" and direction == "to-dpu"))
    return (covered and FITTED_DPUS[0] <= dpus <= FITTED_DPUS[1]
            and FITTED_BYTES[0] <= bytes_per_dpu <= FITTED_BYTES[1])


@lru_cache(maxsize=16)
def _machine_variants(hw: HardwareSpec) -> tuple[tuple[str, HardwareSpec], ...]:
    return tuple((m, machine_spec(hw, m)) for m in MACHINES)


@lru_cache(maxsize=4)
def _residual_sd(direction: str) -> float:
    """RMS over the machines covering ``direction`` of each machine's log residual on its own fit rows."""
    with open(stored_path(), encoding="utf-8") as f:
        fit = json.load(f)["fit"]
    sds = [fit[m]["log_residual_sd"] for m in MACHINES if direction in _COVERS[m]]
    return float(np.sqrt(np.mean(np.square(sds))))


REMOTE_FACTOR_RANGE = (1.0, 2.9)
"""The range the assumed ``remote_transfer_factor`` (A) may take: no penalty, up to UPMEM Unleashed's reported
maximum NUMA-aware gain (arXiv 2510.15927v1 abstract, the what-if context row ``unleashed-numa-xfer-max``)."""


def placement_log_sd(bytes_per_dpu: float, dpus: int, hw: HardwareSpec, direction: str, mode: str = "parallel",
                     memory: str = "mram") -> float:
    """The log spread of one call's time over the assumed remote penalty's range (``REMOTE_FACTOR_RANGE`` and the
    spec's own factor); 0 when every host buffer is local (``primitives.remote_rank_share``)."""
    from ..primitives import remote_rank_share

    if not float(remote_rank_share(dpus, hw)) > 0:
        return 0.0
    to_pim = direction == "to-dpu"
    preds = [float(host_transfer_s(bytes_per_dpu, dpus, v, to_pim, mode, memory))
             for v in (hw, *(hw.replace(remote_transfer_factor=f) for f in REMOTE_FACTOR_RANGE))]
    return float(np.std(np.log(preds), ddof=1))


def transfer_log_sd(bytes_per_dpu: float, dpus: int, hw: HardwareSpec, direction: str, mode: str = "parallel",
                    memory: str = "mram") -> float:
    """The log standard deviation of one call's time: the spread of the predictions of ``hw`` and of ``hw`` with
    each fitted machine's constants (that cover the direction), combined with the machines' fit residual; doubled
    outside the fitted range; with remote host buffers, combined with the assumed remote penalty's spread
    (``placement_log_sd``)."""
    to_pim = direction == "to-dpu"
    preds = [float(host_transfer_s(bytes_per_dpu, dpus, hw, to_pim, mode, memory))]
    preds += [float(host_transfer_s(bytes_per_dpu, dpus, v, to_pim, mode, memory))
              for m, v in _machine_variants(hw) if direction in _COVERS[m]]
    spread = float(np.std(np.log(preds), ddof=1)) if len(preds) > 1 else 0.0
    sd = math.hypot(spread, _residual_sd(direction))
    sd = sd if inside_fit(direction, mode, memory, dpus, bytes_per_dpu) else OUTSIDE_WIDENING * sd
    placement = placement_log_sd(bytes_per_dpu, dpus, hw, direction, mode, memory)
    return math.hypot(sd, placement) if placement else sd


ALIGN_BYTES = {"mram": 8, "wram": 4}
"""A host transfer's address and length alignment per memory: MRAM 8 B, WRAM 4 B (UPMEM SDK documentation, host
API, as listed in the reference's host-transfer table)."""


def check_call(bytes_per_dpu: float, hw: HardwareSpec, memory: str = "mram", option: str = "bytes_per_dpu") -> None:
    """Refuse a transfer call the SDK would refuse: a size that is not a finite whole number of bytes of at least
    one alignment unit, not a multiple of the memory's alignment, or larger than that memory of one DPU."""
    from ..errors import SpecError

    if memory not in ALIGN_BYTES:
        raise SpecError(f"memory {memory!r} is not one of {', '.join(ALIGN_BYTES)}")
    align = ALIGN_BYTES[memory]
    capacity = hw.mram_bytes if memory == "mram" else hw.wram_bytes
    if not math.isfinite(bytes_per_dpu) or bytes_per_dpu != int(bytes_per_dpu) or bytes_per_dpu < 1:
        raise SpecError(f"{option}: {bytes_per_dpu!r} is not a whole number of bytes of at least 1")
    size = int(bytes_per_dpu)
    if size % align:
        down, up = size - size % align, size - size % align + align
        fix = f"round it to {down:,} or {up:,}" if down else f"use {up:,}"
        raise SpecError(f"{option}: {size:,} B is not a multiple of {align} B, the alignment of a host transfer to "
                        f"{memory.upper()}; {fix}")
    if size > capacity:
        raise SpecError(f"{option}: {size:,} B is more than the {capacity:,}-B {memory.upper()} of one DPU of "
                        f"{hw.name}")


def transfer_interval(bytes_per_dpu: float, dpus: int, hw: HardwareSpec, direction: str, mode: str = "parallel",
                      memory: str = "mram") -> tuple[float, float, float]:
    """(seconds, low_s, high_s): the prediction and its 95 % interval, log-normal with ``transfer_log_sd``.
    A call the SDK would refuse (``check_call``) is refused."""
    check_call(bytes_per_dpu, hw, memory)
    seconds = float(host_transfer_s(bytes_per_dpu, dpus, hw, direction == "to-dpu", mode, memory))
    half = Z_95 * transfer_log_sd(bytes_per_dpu, dpus, hw, direction, mode, memory)
    return seconds, seconds * math.exp(-half), seconds * math.exp(half)


def epoch_interval(record: dict[str, Any], hw: HardwareSpec) -> tuple[float, float]:
    """A 95 % interval of a prediction record's epoch (``per_epoch_s``): the host transfers' log spread
    (``transfer_log_sd`` at the record's mean bytes per DPU per round) on the two transfer phases, the kernel
    residuals' conformal half-width (``kernel_interval``, leave one kernel out) on every other phase, composed as
    independent errors of the phases' seconds."""
    from .kernel_interval import read_residuals

    sd_dpu = read_residuals().half_log() / Z_95
    per = record["per_epoch_s"]
    rounds = max(float(record.get("rounds_per_epoch") or 1), 1.0)
    n = int(record["dpus"])
    var = 0.0
    for phase, direction, key in (("host_to_pim", "to-dpu", "host_to_pim"), ("pim_to_host", "from-dpu",
                                                                                 "pim_to_host")):
        per_dpu = max(float(record["per_epoch_bytes"].get(key, 0.0)) / rounds / n, 8.0)
        var += (float(per[phase]) * transfer_log_sd(per_dpu, n, hw, direction)) ** 2
    rest = float(per["total"]) - float(per["host_to_pim"]) - float(per["pim_to_host"])
    var += (rest * sd_dpu) ** 2
    total = float(per["total"])
    rel = math.sqrt(var) / total if total > 0 else 0.0
    return total * math.exp(-Z_95 * rel), total * math.exp(Z_95 * rel)
