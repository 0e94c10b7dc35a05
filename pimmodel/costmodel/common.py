"""Terms shared by the three optimizers' equation sets.

A DPU's work is a list of ``Section``s, each executed ``count`` times per epoch: the per-sample work of
all tasklets (parallel), the serial section of tasklet 0, the dense sweeps of a local step. Each has
compute cycles and DMA cycles per occurrence, following the kernels in ``pimmodel.kernelspec``; the
host side is a set of transfer calls per round and a reduction over N x d values. Everything here is a
sympy expression of the symbols in ``symbols.py`` built with the shared primitives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from sympy import Expr

from .. import primitives as P
from ..kernelspec import ERROR, LAUNCH, SAMPLE, STEP, STEP_READS, UPDATE, ZERO, is_parallel
from ..kernelspec import PROFILE as K
from .interconnect import Exchange
from .symbols import COEF, HW, WL

PHASES = ("dpu_compute", "mram_wram_dma", "host_to_pim", "pim_to_host", "host_aggregate", "launch")
BYTE_KEYS = ("host_to_pim", "pim_to_host", "mram_to_wram", "wram_to_mram")

T = WL.tasklets
N = WL.dpus
D = WL.features


@dataclass(frozen=True)
class Section:
    """One piece of DPU work, run ``count`` times per epoch on every DPU."""

    name: str
    count: Expr
    compute_cycles: Expr
    read_cycles: Expr = sympy.Integer(0)
    write_cycles: Expr = sympy.Integer(0)
    read_bytes: Expr = sympy.Integer(0)
    write_bytes: Expr = sympy.Integer(0)
    read_dmas: Expr = sympy.Integer(0)
    write_dmas: Expr = sympy.Integer(0)

    @property
    def parallel(self) -> bool:
        """True: tasklets interleave, so DMA can hide behind compute in the wall view (``kernelspec.SECTIONS``)."""
        return is_parallel(self.name)


@dataclass(frozen=True)
class HostCall:
    """One host transfer call per round: bytes per DPU, direction and mode (``primitives.host_transfer_s``;
    ``identical`` = the same buffer to every DPU, broadcast if the hardware does so)."""

    name: str
    bytes_per_dpu: Expr
    to_pim: bool
    mode: str = "parallel"


@dataclass(frozen=True)
class EquationSet:
    """Everything one optimizer x model x layout costs per epoch."""

    sections: list[Section]
    rounds: Expr
    launches: Expr
    calls_per_round: list[HostCall]
    calls_per_epoch: list[HostCall] = field(default_factory=list)
    host_aggregate_s: Expr = sympy.Integer(0)
    exchange: Exchange | None = None
    """The averaging step as an all-reduce over direct DPU links (``interconnect.py``)."""
    link_gather_s: Expr = sympy.Integer(0)
    link_distribute_s: Expr = sympy.Integer(0)
    link_s: Expr = sympy.Integer(0)
    link_bytes_per_dpu: Expr = sympy.Integer(0)

    # ------------------------------------------------------------ per-epoch phase expressions
    def phase_expressions(self) -> dict[str, Expr]:
        """Per-epoch seconds and bytes. Keys: the phases, ``mram_wram_dma_exposed`` (wall view),
        ``rounds`` and ``bytes_*``."""
        f = HW.dpu_clock_hz
        compute = sum((s.count * s.compute_cycles for s in self.sections), sympy.Integer(0))
        dma = sum((s.count * (s.read_cycles + s.write_cycles) for s in self.sections), sympy.Integer(0))
        exposed = sum((s.count * _exposed(s) for s in self.sections), sympy.Integer(0))

        def calls_s(to_pim: bool) -> Expr:
            per_round = sum((P.host_transfer_s(c.bytes_per_dpu, N, HW, c.to_pim, c.mode)
                             for c in self.calls_per_round if c.to_pim == to_pim), sympy.Integer(0))
            per_epoch = sum((P.host_transfer_s(c.bytes_per_dpu, N, HW, c.to_pim, c.mode)
                             for c in self.calls_per_epoch if c.to_pim == to_pim), sympy.Integer(0))
            return self.rounds * per_round + per_epoch

        def calls_bytes(to_pim: bool) -> Expr:
            per_round = sum((c.bytes_per_dpu for c in self.calls_per_round if c.to_pim == to_pim), sympy.Integer(0))
            per_epoch = sum((c.bytes_per_dpu for c in self.calls_per_epoch if c.to_pim == to_pim), sympy.Integer(0))
            return N * (self.rounds * per_round + per_epoch)

        return {
            "dpu_compute": compute / f,
            "mram_wram_dma": dma / f,
            "mram_wram_dma_exposed": exposed / f,
            "host_to_pim": calls_s(True) + self.rounds * self.link_distribute_s,
            "pim_to_host": calls_s(False) + self.rounds * self.link_gather_s,
            "host_aggregate": self.host_aggregate_s,
            "launch": self.launches * P.launch_s(HW),
            "rounds": self.rounds,
            "bytes_host_to_pim": calls_bytes(True),
            "bytes_pim_to_host": calls_bytes(False),
            "bytes_mram_to_wram": N * sum((s.count * s.read_bytes for s in self.sections), sympy.Integer(0)),
            "bytes_wram_to_mram": N * sum((s.count * s.write_bytes for s in self.sections), sympy.Integer(0)),
            "dmas_read": sum((s.count * s.read_dmas for s in self.sections), sympy.Integer(0)),
            "dmas_write": sum((s.count * s.write_dmas for s in self.sections), sympy.Integer(0)),
            "link": self.rounds * self.link_s,
            "bytes_link": N * self.rounds * self.link_bytes_per_dpu,
        }


def _exposed(s: Section) -> Expr:
    dma = s.read_cycles + s.write_cycles
    return P.maximum(dma - s.compute_cycles, 0) if s.parallel else dma


# ---------------------------------------------------------------- DMA helpers
def _blocks(total_bytes: Expr, block_bytes: int | Expr) -> tuple[Expr, Expr]:
    """(transfers, bytes each) to move ``total_bytes`` in blocks of at most ``block_bytes``."""
    n = sympy.ceiling(total_bytes / block_bytes)
    return n, total_bytes / n


def concurrent_dmas(transfers_per_tasklet: Expr, bytes_each: Expr, write: bool = False) -> tuple[Expr, Expr]:
    """All T tasklets move ``transfers_per_tasklet`` DMAs each, in lockstep bursts: (cycles, DMAs)."""
    cycles = transfers_per_tasklet * P.dma_burst_cycles(bytes_each, T, HW, write)
    return cycles, transfers_per_tasklet * T


def scattered_dmas(total: Expr, rounds: Expr, bytes_each: Expr, write: bool = False) -> Expr:
    """``total`` small DMAs issued over ``rounds`` bursts (the busiest tasklet issues ``rounds``)."""
    return rounds * P.dma_burst_cycles(bytes_each, total / rounds, HW, write)


# ---------------------------------------------------------------- DPU serial section (tasklet 0)
def error_section(model: str, count: Expr) -> Section:
    """Tasklet 0 between the two per-sample barriers: reduce partial dot products, then the LR sigmoid
    (LUT exp with soft-float, one 8-B MRAM LUT read, a double divide) or the SVM margin test."""
    reduce = T * (HW.int64_add_instructions + K.reduce_instructions_per_tasklet)
    barriers = K.barriers_per_sample * P.barrier_cycles(T, HW)
    if model == "svm":
        return Section(ERROR, count, P.serial_cycles(reduce + K.svm_margin_instructions, HW) + barriers)
    sigmoid = sum((n * getattr(HW, f"{op}_instructions") for op, n in K.sigmoid_ops),
                  sympy.Integer(0)) + K.sigmoid_integer_instructions
    lut = P.dma_burst_cycles(K.lut_read_bytes, 1, HW)
    return Section(ERROR, count, P.serial_cycles(reduce + sigmoid, HW) + barriers, read_cycles=lut,
                   read_bytes=sympy.Integer(K.lut_read_bytes), read_dmas=sympy.Integer(1))


# ---------------------------------------------------------------- dense (YFCC-like) kernels
def dense_features_per_tasklet() -> Expr:
    return D / T


def dense_sample(model: str, count: Expr) -> Section:
    """Per sample, every tasklet: dot product over its feature slice, then the gradient term into the
    int32 accumulators. DMAs: the X slice, w blocks, accumulator blocks read and written."""
    d_t = dense_features_per_tasklet()
    dot = d_t * (P.mul64_instructions(COEF.dot_mul_bytes, HW) + HW.int64_shift_instructions
                 + HW.int64_add_instructions + K.dot_loop_instructions)
    if model == "lr":
        grad = d_t * (P.mul64_instructions(COEF.grad_mul_bytes, HW) + HW.int64_shift_instructions
                      + HW.int32_add_instructions + K.grad_lr_loop_instructions)
    else:
        grad = d_t * (HW.int32_shift_instructions + K.grad_svm_loop_instructions
                      + COEF.svm_hit_fraction * (HW.int32_add_instructions + K.grad_svm_hit_instructions))
    compute = P.issue_cycles(dot + grad + K.sample_overhead_instructions, T, HW)
    x_n, x_bytes = _blocks(d_t * WL.bytes_per_value, HW.dma_max_bytes)
    blk_n, blk_bytes = _blocks(d_t * K.value_bytes, K.dense_block_bytes)
    x_cycles, x_dmas = concurrent_dmas(x_n, x_bytes)
    r_cycles, r_dmas = concurrent_dmas(2 * blk_n, blk_bytes)  # w blocks, then accumulator blocks
    w_cycles, w_dmas = concurrent_dmas(blk_n, blk_bytes, write=True)
    return Section(SAMPLE, count, compute, read_cycles=x_cycles + r_cycles, write_cycles=w_cycles,
                   read_bytes=D * WL.bytes_per_value + 2 * D * K.value_bytes, write_bytes=D * K.value_bytes,
                   read_dmas=x_dmas + r_dmas, write_dmas=w_dmas)


def dense_zero(count: Expr) -> Section:
    """Start of a local step: every tasklet zeroes its int32 accumulator slice in MRAM (the WRAM block is
    re-zeroed before each of its DMAs, so every accumulator element costs one zeroing iteration)."""
    d_t = dense_features_per_tasklet()
    blk_n, blk_bytes = _blocks(d_t * K.value_bytes, K.dense_block_bytes)
    cycles, dmas = concurrent_dmas(blk_n, blk_bytes, write=True)
    compute = P.issue_cycles(K.zero_loop_instructions * d_t + K.step_overhead_instructions, T, HW)
    return Section(ZERO, count, compute, write_cycles=cycles, write_bytes=D * K.value_bytes, write_dmas=dmas)


def dense_update(count: Expr, admm: bool) -> Section:
    """End of a local step: w <- clamp(w - D(a >> log2 b) - D((w [+ c]) >> (l + r))) per weight."""
    d_t = dense_features_per_tasklet()
    per_weight = (HW.int32_shift_instructions + HW.int64_shift_instructions + 2 * HW.int64_add_instructions
                  + K.update_loop_instructions + (K.admm_update_extra_instructions if admm else 0))
    blk_n, blk_bytes = _blocks(d_t * K.value_bytes, K.dense_block_bytes)
    reads = 3 if admm else 2  # w, accumulators [, c = u - z]
    r_cycles, r_dmas = concurrent_dmas(reads * blk_n, blk_bytes)
    w_cycles, w_dmas = concurrent_dmas(blk_n, blk_bytes, write=True)
    return Section(UPDATE, count, P.issue_cycles(d_t * per_weight, T, HW), read_cycles=r_cycles,
                   write_cycles=w_cycles, read_bytes=reads * D * K.value_bytes, write_bytes=D * K.value_bytes,
                   read_dmas=r_dmas,
                   write_dmas=w_dmas)


def step_reads(count: Expr, layout: str, update: bool) -> Section:
    """Small reads once per local step: tasklet 0's labels (dense MA / ADMM: the whole local batch in one
    DMA; otherwise fixed blocks, ``kernelspec.label_block_bytes``) and, sparse, tasklet T-1's read of the
    bias weight at the step's first sample."""
    block = K.label_block_bytes(layout, update)
    if block == 0:
        n, each = _blocks(8 * sympy.ceiling(WL.local_batch * K.label_bytes / 8), HW.dma_max_bytes)
    else:
        n, each = sympy.ceiling(WL.local_batch / (block // K.label_bytes)), sympy.Integer(block)
    cycles, read_bytes, dmas = n * P.dma_burst_cycles(each, 1, HW), n * each, n
    if layout == "sparse":
        b = K.sparse_access_bytes
        cycles, read_bytes, dmas = cycles + P.dma_burst_cycles(b, 1, HW), read_bytes + b, dmas + 1
    return Section(STEP_READS, count, sympy.Integer(0), read_cycles=cycles, read_bytes=read_bytes, read_dmas=dmas)


# ---------------------------------------------------------------- sparse (Criteo-like) kernels
def sparse_split() -> tuple[Expr, Expr, Expr]:
    """(q_hi, q_lo, r): the z active slots split over T tasklets, r = z mod T tasklets take q_hi =
    ceil(z/T) slots and the others q_lo = floor(z/T) (Criteo: 7 x 3 + 9 x 2)."""
    z = WL.nonzeros
    q_lo = sympy.floor(z / T)
    return sympy.ceiling(z / T), q_lo, z - T * q_lo


def _x_bytes(slots: Expr) -> Expr:
    """One tasklet's slice of an ELL row, read in one DMA rounded up to 8 B."""
    return 8 * sympy.ceiling(slots * WL.bytes_per_value / 8)


def sparse_sample(model: str, count: Expr) -> Section:
    """Per sample: tasklets split the z active slots (``sparse_split``); every weight and accumulator
    access is a random 8-B DMA (read-modify-write for the int64 accumulators); tasklet T-1 also reads and
    writes the bias accumulator. The extra slot of the r busier tasklets runs with only r tasklets issuing."""
    z = WL.nonzeros
    q_hi, q_lo, r = sparse_split()
    hit = 1 if model == "lr" else COEF.svm_hit_fraction
    per_slot = (K.sparse_slot_instructions + HW.int64_add_instructions
                + hit * (K.sparse_grad_slot_instructions + HW.int64_add_instructions))
    compute = (P.issue_cycles(q_lo * per_slot + K.sample_overhead_instructions, T, HW)
               + (q_hi - q_lo) * P.issue_cycles(per_slot, r, HW))
    # data-dependent write-backs of the z accumulators (LR: the -1 guards; SVM: margin hits), + the bias
    writes = hit * COEF.sparse_write_fraction * z + 1
    b = K.sparse_access_bytes
    conc = P.maximum(1, sympy.floor(z / q_hi + sympy.Rational(1, 2)))  # concurrent random accesses
    x_lo_dmas = (T - r) * sympy.Min(q_lo, 1)
    x_cycles = (r * P.dma_burst_cycles(_x_bytes(q_hi), T, HW)
                + x_lo_dmas * P.dma_burst_cycles(_x_bytes(q_lo), T, HW)) / T
    gathers = 2 * z + 1  # w gathers, accumulator reads (+ the bias accumulator)
    read_cycles = x_cycles + gathers / conc * P.dma_burst_cycles(b, conc, HW)
    write_cycles = writes / conc * P.dma_burst_cycles(b, conc, HW, write=True)
    read_bytes = r * _x_bytes(q_hi) + (T - r) * _x_bytes(q_lo) + b * gathers
    return Section(SAMPLE, count, compute, read_cycles=read_cycles, write_cycles=write_cycles,
                   read_bytes=read_bytes, write_bytes=b * writes, read_dmas=r + x_lo_dmas + gathers,
                   write_dmas=writes)


def sparse_zero(count: Expr) -> Section:
    """Zero the int64 accumulators (d x 8 B) in 1 KiB blocks: 8 MB per local step for Criteo."""
    blk_n, blk_bytes = _blocks(D * K.sparse_acc_bytes / T, K.sparse_dense_block_bytes)
    cycles, dmas = concurrent_dmas(blk_n, blk_bytes, write=True)
    compute = P.issue_cycles(K.zero_loop_instructions * K.sparse_dense_block_bytes / K.sparse_acc_bytes
                             + K.dma_loop_instructions * blk_n + K.step_overhead_instructions, T, HW)
    return Section(ZERO, count, compute, write_cycles=cycles, write_bytes=D * K.sparse_acc_bytes,
                   write_dmas=dmas)


def sparse_update(count: Expr, admm: bool) -> Section:
    """Update sweep over the weights [0, bias_slot] (the kernels stop at the bias: Criteo 15 x 489 + 478
    = 7,813 blocks of 128 weights, not 16 x 489): read w (4 B) and the int64 accumulators (8 B) [and c],
    write w. The tasklets below the bias slot sweep full slices, so the DPU issues the average stream."""
    swept = WL.bias_slot + 1
    per_weight = (HW.int64_shift_instructions * 2 + 2 * HW.int64_add_instructions + K.update_loop_instructions
                  + (K.admm_update_extra_instructions if admm else 0))
    w_b = K.dense_block_bytes
    a_b = K.sparse_dense_block_bytes
    blocks = sympy.ceiling(swept / (w_b // K.value_bytes))
    reads_w = 2 if admm else 1
    rw_cycles, rw_dmas = concurrent_dmas(reads_w * blocks / T, w_b)
    ra_cycles, ra_dmas = concurrent_dmas(blocks / T, a_b)
    ww_cycles, ww_dmas = concurrent_dmas(blocks / T, w_b, write=True)
    return Section(UPDATE, count, P.issue_cycles(swept / T * per_weight, T, HW), read_cycles=rw_cycles + ra_cycles,
                   write_cycles=ww_cycles, read_bytes=blocks * (reads_w * w_b + a_b), write_bytes=blocks * w_b,
                   read_dmas=rw_dmas + ra_dmas, write_dmas=ww_dmas)


def launch_section(count: Expr, layout: str) -> Section:
    """Kernel start and end barriers; dense: tasklet T-1 reads the int64 bias at the start and writes it
    (GA: the bias gradient) at the end."""
    cycles = K.barriers_per_launch * P.barrier_cycles(T, HW)
    if layout != "dense":
        return Section(LAUNCH, count, cycles)
    b = K.bias_bytes
    return Section(LAUNCH, count, cycles, read_cycles=P.dma_burst_cycles(b, 1, HW),
                   write_cycles=P.dma_burst_cycles(b, 1, HW, write=True), read_bytes=sympy.Integer(b),
                   write_bytes=sympy.Integer(b), read_dmas=sympy.Integer(1), write_dmas=sympy.Integer(1))


def step_barriers(count: Expr, layout: str, update: bool) -> Section:
    """``barrier_wait`` calls per local step besides the per-sample ones (``kernelspec.step_barriers``)."""
    return Section(STEP, count, K.step_barriers(layout, update) * P.barrier_cycles(T, HW))


# ---------------------------------------------------------------- host side
def model_bytes(layout: str) -> Expr:
    """The int32 model vector per DPU."""
    return D * 4


def bias_calls(layout: str, to_pim: bool, mode: str = "parallel") -> list[HostCall]:
    """Dense kernels keep an int64 bias outside w: one more transfer call each way."""
    return [HostCall("bias", sympy.Integer(8), to_pim, mode)] if layout == "dense" else []


def host_threads(layout: str) -> int:
    return K.dense_host_threads if layout == "dense" else K.sparse_host_threads


def host_reduce(passes: Expr | int, element_bytes: int, layout: str, thread_rounds: int = 1) -> Expr:
    """``passes`` streams over the N x d values on the host, plus pthread create/join per round."""
    threads = host_threads(layout)
    return (P.host_reduce_s(passes * N * D * element_bytes, threads, HW)
            + thread_rounds * P.thread_start_s(threads, HW))


def dpu_sections(model: str, layout: str, samples: Expr, steps: Expr, launches: Expr,
                 update: bool, admm: bool) -> list[Section]:
    """The DPU work of an epoch: ``samples`` rows, ``steps`` local steps (zeroing [+ update]),
    ``launches`` kernel launches."""
    if layout == "dense":
        sections = [dense_sample(model, samples), dense_zero(steps)]
        if update:
            sections.append(dense_update(steps, admm))
    else:
        sections = [sparse_sample(model, samples), sparse_zero(steps)]
        if update:
            sections.append(sparse_update(steps, admm))
    return [*sections, step_reads(steps, layout, update), error_section(model, samples),
            step_barriers(steps, layout, update), launch_section(launches, layout)]
