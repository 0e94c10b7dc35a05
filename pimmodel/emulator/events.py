"""Turn one emulated local step into trace events, following the kernels' control flow
(``pimmodel.kernels.study.PROFILE``) plus the data-dependent counts measured by the kernels. Every count is
recorded in its section (``pimmodel.kernels.study.SECTIONS``), as the cost model's sections split the work.
``dma_max_bytes`` is the hardware's largest DMA: transfers larger than it are split, as the kernels built
for that hardware would."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..kernels.exchange import EXCHANGE_PROFILE as X
from ..kernels.study import ERROR, EXCHANGE, LAUNCH, SAMPLE, STEP, STEP_READS, UPDATE, ZERO
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import blocks
from .kernels import KernelStats
from .trace import Trace

SIGMOID_OPS = dict(K.sigmoid_ops)
"""Soft-float calls of the LR sigmoid (``kernels.study.KernelProfile.sigmoid_ops``)."""


Rows = NDArray[np.float64]
"""Samples each DPU processed in a step (shards may differ by a row; a last batch may be partial)."""


def serial_section(tr: Trace, model: str, samples: Rows) -> None:
    """Tasklet 0 between the two per-sample barriers (reduction, then sigmoid + LUT read or margin test)."""
    t = tr.tasklets
    tr.add("ops", "int64_add", samples * t, ERROR)
    extra = K.sigmoid_integer_instructions if model == "lr" else K.svm_margin_instructions
    tr.add("ops", "bookkeeping", samples * (t * K.reduce_instructions_per_tasklet + extra), ERROR)
    if model == "lr":
        for name, n in SIGMOID_OPS.items():
            tr.add("ops", name, samples * n, ERROR)
        tr.add("dmas", ("read", K.lut_read_bytes, 1), samples, ERROR)
    tr.add("events", "serial_sections", samples, ERROR)
    tr.add("events", "barriers", samples * K.barriers_per_sample, ERROR)
    tr.add("events", "samples", samples, ERROR)


def dense_step(tr: Trace, stats: KernelStats, rows: Rows, b: int, d: int, model: str, update: bool, admm: bool,
               dma_max_bytes: int, variant: str = "study") -> None:
    """One local step of the dense kernels on every DPU: ``rows`` samples of d features (the batch size b
    decides the label read); the corrected SVM kernel shifts the widened (int64) feature."""
    t, n = tr.tasklets, rows * d
    hits = stats.margin_hits.astype(np.float64)
    tr.add("ops", "mul64", n * (2 if model == "lr" else 1), SAMPLE)
    tr.add("ops", "int64_shift", n * (2 if model == "lr" else 1), SAMPLE)
    tr.add("ops", "int64_add", n, SAMPLE)
    book: float | NDArray[np.float64]
    if model == "lr":
        tr.add("ops", "int32_add", n, SAMPLE)
        book = n * (K.dot_loop_instructions + K.grad_lr_loop_instructions)
    else:
        tr.add("ops", "int32_shift" if variant == "study" else "int64_shift", n, SAMPLE)
        tr.add("ops", "int32_add", hits * d, SAMPLE)
        book = n * (K.dot_loop_instructions + K.grad_svm_loop_instructions) + hits * d * K.grad_svm_hit_instructions
    tr.add("ops", "bookkeeping", book + rows * t * K.sample_overhead_instructions, SAMPLE)
    tr.add("ops", "bookkeeping", d * K.zero_loop_instructions + t * K.step_overhead_instructions, ZERO)
    d_t = d // t
    x_n, x_b = blocks(d_t * K.value_bytes, dma_max_bytes)
    blk_n, blk_b = blocks(d_t * K.value_bytes, K.dense_block_bytes)
    tr.add("dmas", ("read", x_b, t), rows * x_n * t, SAMPLE)
    tr.add("dmas", ("read", blk_b, t), rows * 2 * blk_n * t, SAMPLE)
    tr.add("dmas", ("write", blk_b, t), rows * blk_n * t, SAMPLE)  # accumulators per sample
    tr.add("dmas", ("write", blk_b, t), blk_n * t, ZERO)
    _timed(tr, SAMPLE, rows * (x_n + 2 * blk_n), rows * blk_n)  # benchmark builds: a barrier timed per DMA
    _timed(tr, ZERO, 0, blk_n)
    _label_events(tr, "dense", update, b, dma_max_bytes)
    if update:
        _dense_update_events(tr, d, admm, blk_n, blk_b)
    serial_section(tr, model, rows)
    _step_events(tr, stats, "dense", update)


def _timed(tr: Trace, section: str, read: Rows | float, write: Rows | float) -> None:
    """The barriers the study's benchmark builds time inside the DMA categories (``kernels.study.INSTRUMENTED``)."""
    tr.add("events", "timed_barriers_read", read, section)
    tr.add("events", "timed_barriers_write", write, section)


def _label_events(tr: Trace, layout: str, update: bool, b: int, dma_max_bytes: int) -> None:
    """Tasklet 0 reads the local batch's labels: in one DMA (dense MA / ADMM) or in fixed blocks; a partial
    last batch reads the same b labels (the kernel's transfer sizes are fixed)."""
    block = K.label_block_bytes(layout, update)
    if block == 0:
        n, each = blocks(8 * math.ceil(b * K.label_bytes / 8), dma_max_bytes)
    else:
        n, each = -(-b // (block // K.label_bytes)), block
    tr.add("dmas", ("read", each, 1), n, STEP_READS)


def _dense_update_events(tr: Trace, d: int, admm: bool, blk_n: int, blk_b: int) -> None:
    t = tr.tasklets
    tr.add("ops", "int32_shift", d, UPDATE)
    tr.add("ops", "int64_shift", d, UPDATE)
    tr.add("ops", "int64_add", 2 * d, UPDATE)
    tr.add("ops", "bookkeeping", d * (K.update_loop_instructions + (K.admm_update_extra_instructions if admm else 0)),
           UPDATE)
    tr.add("dmas", ("read", blk_b, t), (3 if admm else 2) * blk_n * t, UPDATE)
    tr.add("dmas", ("write", blk_b, t), blk_n * t, UPDATE)
    _timed(tr, UPDATE, blk_n, blk_n)


def _step_events(tr: Trace, stats: KernelStats, layout: str, update: bool) -> None:
    tr.add("events", "barriers", K.step_barriers(layout, update), STEP)
    tr.add("events", "margin_hits", stats.margin_hits, SAMPLE)
    tr.add("events", "steps", 1, STEP)
    if stats.acc_writes.size:
        tr.add("events", "acc_writes", stats.acc_writes, SAMPLE)
        tr.add("events", "acc_skipped", stats.acc_skipped, SAMPLE)


def sparse_step(tr: Trace, stats: KernelStats, rows: Rows, b: int, z: int, d: int, bias_index: int, model: str,
                update: bool, admm: bool, dma_max_bytes: int) -> None:
    """One local step of the sparse kernels: ``rows`` samples of z active slots, model length d."""
    t = tr.tasklets
    hits = stats.margin_hits.astype(np.float64) if model == "svm" else rows
    tr.add("ops", "int64_add", rows * z + hits * z, SAMPLE)
    tr.add("ops", "bookkeeping", rows * z * K.sparse_slot_instructions + hits * z * K.sparse_grad_slot_instructions
           + rows * t * K.sample_overhead_instructions, SAMPLE)
    # the z slots are split ceil(z/T) / floor(z/T): the extra slot of the z mod T busier tasklets runs
    # while the others already wait at the barrier
    q_hi, n_hi = -(-z // t), z % t or t
    if q_hi > z // t:
        tr.add("tail_ops", ("int64_add", n_hi), (rows + hits) * n_hi, SAMPLE)
        tr.add("tail_ops", ("bookkeeping", n_hi), (rows * K.sparse_slot_instructions
                                                   + hits * K.sparse_grad_slot_instructions) * n_hi, SAMPLE)
    for q, n in ((q_hi, n_hi), (z // t, t - n_hi)):
        if n and q:
            tr.add("dmas", ("read", 8 * math.ceil(q * K.value_bytes / 8), t), rows * n, SAMPLE)
    conc = max(1, (2 * z + q_hi) // (2 * q_hi))  # z / q_hi concurrent random accesses, rounded half up
    tr.add("dmas", ("read", K.sparse_access_bytes, conc), rows * (2 * z + 1), SAMPLE)  # w gathers, accumulator reads
    # float64 mode has no -1 guards: every gradient term is written back
    writes = stats.acc_writes if stats.acc_writes.size else hits * z
    tr.add("dmas", ("write", K.sparse_access_bytes, conc), writes + rows, SAMPLE)  # + the bias accumulator
    tr.add("dmas", ("read", K.sparse_access_bytes, 1), 1, STEP_READS)  # the bias weight, once per step
    _label_events(tr, "sparse", update, b, dma_max_bytes)
    zero_n, zero_b = blocks(d * K.sparse_acc_bytes // t, K.sparse_dense_block_bytes)
    tr.add("dmas", ("write", zero_b, t), zero_n * t, ZERO)
    _timed(tr, SAMPLE, rows, 0)  # the X read; the 8-B accesses are timed without barriers
    _timed(tr, ZERO, 0, zero_n)
    tr.add("ops", "bookkeeping", zero_n * t * K.dma_loop_instructions
           + t * (K.sparse_dense_block_bytes // K.sparse_acc_bytes) * K.zero_loop_instructions
           + t * K.step_overhead_instructions, ZERO)
    if update:
        upd = -(-(bias_index + 1) // (K.dense_block_bytes // K.value_bytes))
        tr.add("ops", "int64_shift", 2 * (bias_index + 1), UPDATE)
        tr.add("ops", "int64_add", 2 * (bias_index + 1), UPDATE)
        tr.add("ops", "bookkeeping", (bias_index + 1) * (K.update_loop_instructions
                                                         + (K.admm_update_extra_instructions if admm else 0)), UPDATE)
        tr.add("dmas", ("read", K.dense_block_bytes, t), upd * (2 if admm else 1), UPDATE)
        tr.add("dmas", ("read", K.sparse_dense_block_bytes, t), upd, UPDATE)
        tr.add("dmas", ("write", K.dense_block_bytes, t), upd, UPDATE)
        _timed(tr, UPDATE, upd / t, upd / t)
    serial_section(tr, model, rows)
    _step_events(tr, stats, "sparse", update)


def launch(tr: Trace, dense: bool) -> None:
    """Kernel start/end barriers; the dense kernels' tasklet 15 reads and writes the int64 bias."""
    tr.launches += 1
    tr.add("events", "barriers", K.barriers_per_launch, LAUNCH)
    if dense:
        tr.add("dmas", ("read", K.bias_bytes, 1), 1, LAUNCH)
        tr.add("dmas", ("write", K.bias_bytes, 1), 1, LAUNCH)


def allreduce_exchange(tr: Trace, received: Rows, d: int, element_bytes: int, update_passes: int,
                       dma_max_bytes: int) -> None:
    """The DPU side of one all-reduce over links (``kernels/exchange.py``): each of the ``received`` elements of a
    partial sum (per DPU) is added into the DPU's own (two reads, one write), then ``update_passes`` sweeps over
    d; everything streams in DMAs of ``dma_max_bytes``, counted as bytes / ``dma_max_bytes``."""
    t = tr.tasklets
    tr.add("ops", "int64_add", received + update_passes * d, EXCHANGE)
    tr.add("ops", "int64_shift", update_passes * d, EXCHANGE)
    tr.add("ops", "bookkeeping", received * K.reduce_instructions_per_tasklet
           + update_passes * d * K.update_loop_instructions, EXCHANGE)
    read = 2 * received * element_bytes + update_passes * X.read_streams_per_update * 4 * d
    write = received * element_bytes + update_passes * 4 * d
    tr.add("dmas", ("read", dma_max_bytes, t), read / dma_max_bytes, EXCHANGE)
    tr.add("dmas", ("write", dma_max_bytes, t), write / dma_max_bytes, EXCHANGE)


def gossip_mix(tr: Trace, d: int, neighbours: int, dense: bool, dma_max_bytes: int) -> None:
    """The DPU side of one gossip round (``kernels/exchange.py``): per weight k + 1 shifts, k adds, a load per
    input and the loop; dense kernels mix the int64 bias too; own and k received models read, the mix written."""
    t, k = tr.tasklets, neighbours
    tr.add("ops", "int32_shift", (k + 1) * d, EXCHANGE)
    tr.add("ops", "int64_add", k * d + (k if dense else 0), EXCHANGE)
    tr.add("ops", "bookkeeping", d * ((k + 1) * X.mix_load_instructions + X.mix_loop_instructions), EXCHANGE)
    if dense:
        tr.add("ops", "int64_shift", k + 1, EXCHANGE)
    tr.add("dmas", ("read", dma_max_bytes, t), (k + 1) * 4 * d / dma_max_bytes, EXCHANGE)
    tr.add("dmas", ("write", dma_max_bytes, t), 4 * d / dma_max_bytes, EXCHANGE)
