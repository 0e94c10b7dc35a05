"""Does a workload fit the hardware? MRAM per DPU (data, labels, model, accumulators, LUT) and WRAM per
tasklet (the kernels' buffers), following the study's memory layout (reference §2.3 and §3.1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..errors import CapacityError, SpecError
from ..specs import HardwareSpec, Workload
from ..specs.optimizers import require_links
from ..units import MiB
from .study import PROFILE as K

LUT_BYTES = (1 << 20) * 4
"""The LR kernels' exp table: 2^20 float32 entries in MRAM."""
STACK_BYTES_PER_TASKLET = 256
"""Default UPMEM tasklet stack (STACK_SIZE_DEFAULT = 256 B)."""
SHARED_WRAM_BYTES = 1024
"""Shared WRAM: partial dot products, label cache, flags."""


@dataclass(frozen=True, slots=True)
class Footprint:
    mram_fixed_bytes: int
    """Per DPU, independent of the rows it holds."""
    mram_per_row_bytes: int
    mram_bytes: int
    wram_bytes: int


def footprint(w: Workload) -> Footprint:
    ds = w.dataset
    d = ds.features
    model = d * 4 + (8 if ds.bias_separate else 0)
    accumulators = d * (4 if ds.layout == "dense" else 8)
    admm_c = d * 4 if w.optimizer == "admm" else 0
    lut = LUT_BYTES if w.model == "lr" else 0
    # link exchanges (received models, partial sums) reuse the accumulators once a step's update is done
    exchange = max(0, d * w.info.exchange_bytes_per_weight - accumulators)
    fixed = model + accumulators + admm_c + lut + exchange
    per_row = ds.row_bytes + ds.label_bytes
    if ds.layout == "dense":
        d_t = -(-d // w.tasklets)
        block = min(K.dense_block_bytes, d_t * 4)
        per_tasklet = d_t * ds.bytes_per_value + (3 if w.optimizer == "admm" else 2) * block + 16
    else:
        q = -(-ds.nonzeros_per_row // w.tasklets)
        per_tasklet = 8 * -(-q * 4 // 8) + 8 + K.dense_block_bytes + K.sparse_dense_block_bytes + 8
        per_tasklet += K.dense_block_bytes if w.optimizer == "admm" else 0
    wram = w.tasklets * (per_tasklet + STACK_BYTES_PER_TASKLET) + SHARED_WRAM_BYTES
    return Footprint(fixed, per_row, fixed + per_row * w.rows_per_dpu, wram)


def check(w: Workload, hw: HardwareSpec) -> Footprint:
    """Raise a one-line error naming the numbers (and the smallest DPU count that fits) if ``w`` does not
    fit ``hw`` (or ``hw`` lacks the links its optimizer needs); return the footprint otherwise."""
    require_links(w.optimizer, hw.link_topology, hw.name)
    check_exchange(w, hw)
    if w.dpus > hw.dpus_available:
        raise SpecError(f"--dpus {w.dpus} exceeds the {hw.dpus_available} DPUs of {hw.name}; "
                        f"use at most {hw.dpus_available}")
    if w.tasklets > hw.max_tasklets:
        raise SpecError(f"--tasklets {w.tasklets} exceeds the {hw.max_tasklets} hardware threads of {hw.name}")
    fp = footprint(w)
    if fp.wram_bytes > hw.wram_bytes:
        raise CapacityError(_wram_message(w, hw, fp))
    if fp.mram_bytes > hw.mram_bytes:
        raise CapacityError(_mram_message(w, hw, fp))
    return fp


def check_exchange(w: Workload, hw: HardwareSpec) -> None:
    """The exchange kernels divide with shifts: hier-sgd's in-rank average over links needs equal power-of-two
    groups; allreduce-sgd's update on every DPU divides the gradient sum by a power-of-two global batch."""
    if w.optimizer == "hier-sgd" and hw.link_topology != "none":
        group = min(w.dpus, hw.dpus_per_rank)
        if group & (group - 1) or w.dpus % group:
            raise SpecError(f"hier-sgd averages each rank's models over links with a shift, so the {w.dpus:,} DPUs "
                            f"must form equal power-of-two groups of min(DPUs, {hw.dpus_per_rank} per rank); use "
                            f"a power-of-two --dpus below {hw.dpus_per_rank} or a multiple of {hw.dpus_per_rank}")
    if w.optimizer == "dpsgd" and w.dpus < 2:
        raise SpecError("dpsgd averages each DPU's model with its neighbours' over links: one DPU has none to "
                        "gossip with; use --dpus 2 or more (or ma-sgd for one DPU)")
    if w.optimizer == "allreduce-sgd":
        big_b = w.hp.global_batch_size
        if big_b & (big_b - 1):
            lower = 1 << (big_b.bit_length() - 1)
            raise SpecError(f"allreduce-sgd divides the gradient sum by the global batch {big_b:,} with a shift on "
                            f"every DPU; use a power-of-two --global-batch-size (e.g. {lower:,}) and --dpus")


def _wram_message(w: Workload, hw: HardwareSpec, fp: Footprint) -> str:
    """What overflows WRAM and the fix that works: fewer tasklets if some count fits, else a smaller model (dense:
    each tasklet holds its slice of the model) or fewer active features per row (sparse)."""
    tasklets = "tasklet" if w.tasklets == 1 else "tasklets"
    have = (f"WRAM buffers of {w.tasklets} {tasklets} need {fp.wram_bytes:,} B but a DPU of {hw.name} has "
            f"{hw.wram_bytes:,} B")
    room = hw.wram_bytes
    fewer = next((t for t in range(w.tasklets - 1, 0, -1) if _wram(w, tasklets=t) <= room), None)
    if fewer is not None:
        return f"{have}; use --tasklets {fewer} or fewer"
    ds = w.dataset
    if ds.layout == "dense":
        most = _largest(ds.features, lambda d: _wram(w, dataset=replace(
            ds, features=d, nonzeros_per_row=min(ds.nonzeros_per_row, d), slots_per_row=d, bias_index=None)) <= room)
        fix = (f"at most {most:,} features fit at {w.tasklets} {tasklets} (a smaller model: --features, or fewer "
               "columns in the file)" if most else "no model fits")
    else:
        most = _largest(ds.nonzeros_per_row, lambda z: _wram(w, dataset=replace(ds, nonzeros_per_row=z)) <= room)
        fix = (f"at most {most:,} active features per row fit at {w.tasklets} {tasklets} (--nonzeros, or fewer per "
               "row in the file)" if most else "no row fits")
    fewer_fail = "" if w.tasklets == 1 else "no tasklet count fits; "
    return f"{have}; {fewer_fail}{fix}, or use hardware with more WRAM"


def _wram(w: Workload, **changes: Any) -> int:
    return footprint(replace(w, **changes)).wram_bytes


def _largest(high: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [1, high] with fits(n) (monotone), 0 if none."""
    if not fits(1):
        return 0
    lo, hi = 1, high
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def _mram_message(w: Workload, hw: HardwareSpec, fp: Footprint) -> str:
    have = f"{fp.mram_bytes / MiB:.1f} MiB per DPU but a DPU of {hw.name} has {hw.mram_bytes / MiB:.0f} MiB"
    room = hw.mram_bytes - fp.mram_fixed_bytes
    if room <= 0:
        return f"the model and buffers alone need {have}; a smaller model is needed"
    max_rows = room // fp.mram_per_row_bytes
    if w.scaling == "weak":
        return f"{w.rows_per_dpu:,} rows need {have}; at most {max_rows:,} rows per DPU fit"
    rows = w.train_rows
    n = -(-rows // max_rows)
    while n <= hw.dpus_available and rows % n:
        n += 1
    fix = f"use --dpus {n} or more" if n <= hw.dpus_available else "no DPU count of this system fits"
    return f"{w.rows_per_dpu:,} rows per DPU need {have}; {fix}"
