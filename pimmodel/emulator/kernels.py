"""The DPU kernels of the PIM-Opt study, vectorized across a DPU axis (and across the samples of a batch).

Arrays carry a leading DPU axis D. A local batch is ``(D, b, d)`` uint32 Q1.31 features (dense layout) or
``(D, b, z)`` feature indices (sparse ELL layout; the byte offset the DPU uses is 4 x index), with labels
``(D, b)`` in {0, 1}. The weights are fixed during a local step, so the dot products of a whole batch are
computed at once; the gradient accumulators are sums over the batch (int32 sums wrap modulo 2^32 exactly
as the sequential C loop does). The only order-dependent rule, the sparse kernels' "skip an accumulator
that currently equals -1", is reproduced with per-index prefix sums in sample order.

Each function returns, besides the numbers, the data-dependent event counts per DPU (``KernelStats``): SVM
margin hits, accumulator writes and skips. (The software 64-bit multiply, ``__muldi3``, is straight-line code
whose cost does not depend on its operands: nothing about it is data dependent.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError
from ..specs.workload import STUDY_CLASS_WEIGHTS
from . import fixedpoint as fx
from .lut import sigmoid, sigmoid_q31

CHUNK_ELEMENTS = 1 << 21
"""Dense work is done in sample chunks of at most this many D x b x d elements (memory bound)."""
SPARSE_STEP_ENTRIES = 1 << 22
"""A sparse batch is accumulated in DPU chunks of at most this many (DPU, sample, slot) entries (the sort's
scratch stays below ~200 MB whatever the DPU count; DPUs never share an accumulator, so chunks change nothing)."""
SVM_MARGIN_Q31 = 1 << 16
"""The artifact's CONSTRAINT: 2^-15 in real units (the comments say 0.5)."""
SVM_MARGIN_INTENDED_Q31 = 1 << 30
# STUDY_CLASS_WEIGHTS (specs): the artifact's Criteo kernels weigh negatives x 0.5 (a shift), positives x 15 (16 s - s)


@dataclass(frozen=True)
class ClassWeights:
    """Per-class factors of the sparse kernels' per-sample gradient scalar, each ``num / 2^shift`` (what the DPU
    computes with a multiply and a shift; the study's 0.5 and 15 are ``1 >> 1`` and ``15 >> 0``)."""

    negative: tuple[int, int] = (1, 0)
    positive: tuple[int, int] = (1, 0)

    @classmethod
    def of(cls, negative: float, positive: float) -> ClassWeights:
        return cls(_dyadic(negative), _dyadic(positive))

    @property
    def values(self) -> tuple[float, float]:
        return tuple(n / 2**k for n, k in (self.negative, self.positive))  # type: ignore[return-value]

    @property
    def neutral(self) -> bool:
        return self.negative == (1, 0) and self.positive == (1, 0)


def _dyadic(weight: float) -> tuple[int, int]:
    """``weight`` as num / 2^shift with num < 2^16 and shift <= 16, exactly (else a one-line error)."""
    for shift in range(17):
        num = weight * 2**shift
        if num == int(num) and 0 < num < 1 << 16:
            return int(num), shift
    raise DataError(f"class weight {weight!r} is not a positive multiple of 2^-16 below 2^16 (the DPU applies it "
                    "with a multiply and a shift); use e.g. 0.5, 1, 15")


@dataclass(frozen=True)
class KernelConfig:
    """What a kernel needs besides the data: model, arithmetic, the shift hyper-parameters and the variant.

    ``variant`` "study" is the artifact bit for bit: the SVM kernels cast the unsigned Q1.31 feature to a signed
    int32 (a feature of exactly 1.0, 2^31, becomes -1.0); "corrected" widens it to int64 first. The SVM margin
    (Q31) and the sparse kernels' class weights are separate settings, defaulting per variant (``TrainConfig``)."""

    model: str
    learning_rate_shift: int
    reg_shift: int
    fixed: bool = True
    svm_margin_q31: int = SVM_MARGIN_Q31
    variant: str = "study"
    class_weights: ClassWeights = ClassWeights.of(*STUDY_CLASS_WEIGHTS)

    @property
    def eta(self) -> float:
        return 2.0 ** -self.learning_rate_shift

    @property
    def decay_shift(self) -> int:
        return self.learning_rate_shift + self.reg_shift


@dataclass
class KernelStats:
    """Data-dependent counts of one local batch, per DPU (arrays of shape (D,))."""

    margin_hits: NDArray[np.int64]
    acc_writes: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    acc_skipped: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    acc_overflows: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    """dense fixed point: weights whose batch sum left the int32 accumulator's range (and wrapped)."""


def _zeros(n: int) -> NDArray[np.int64]:
    return np.zeros(n, dtype=np.int64)


# ---------------------------------------------------------------- dense (YFCC-like) layout
BLOCK_ELEMENTS = 1 << 18
"""Dense work runs in (DPU, sample) blocks of about this many elements (int64 scratch of 2 MiB: cache
resident, and large enough that the per-block Python overhead is small; measured best of 2^14..2^21)."""


def _dense_dot(xi: NDArray[np.integer], w: NDArray[np.int64], out: NDArray[np.int64] | None = None
               ) -> NDArray[np.int64]:
    """sum_j floor(x_ij * w_j / 2^31) per sample: (D, c, d) x (D, d) -> (D, c) (``out`` is scratch)."""
    prod = np.multiply(xi, w[:, None, :], out=out, dtype=np.int64)
    prod >>= fx.SHIFT
    return np.add.reduce(prod, axis=2)


def _lane_group(words: int) -> int:
    """The largest divisor of ``words`` not above 255 (byte lanes of a uint64 sum cannot overflow)."""
    return next(g for g in range(min(255, words), 0, -1) if words % g == 0)


def _count_cols(mask: NDArray[np.bool_]) -> NDArray[np.uint8]:
    """(D, c, d) bool with c <= 255 and d % 8 == 0 -> per (D, d) count over c, summing 8 bytes per add."""
    n, c, d = mask.shape
    return np.add.reduce(mask.view(np.uint64), axis=1).view(np.uint8).reshape(n, d)


def _blocks(n_dpus: int, b: int, d: int) -> list[tuple[slice, slice]]:
    """(DPU, sample) blocks of about ``BLOCK_ELEMENTS`` elements (at most 255 samples)."""
    rows = max(1, BLOCK_ELEMENTS // max(1, d))
    cs = min(b, rows, 255)
    ds = max(1, rows // cs)
    return [(slice(lo, min(n_dpus, lo + ds)), slice(s, min(b, s + cs)))
            for lo in range(0, n_dpus, ds) for s in range(0, b, cs)]


def dense_batch_fixed(w: NDArray[np.int64], bias: NDArray[np.int64], x: NDArray[np.uint32],
                      y: NDArray[np.uint8], cfg: KernelConfig, valid: NDArray[np.bool_] | None = None
                      ) -> tuple[NDArray[np.int64], NDArray[np.int64], KernelStats]:
    """One local batch of the dense kernels: the int32 accumulators a (D, d) and the int64 bias
    accumulator (D,), both already eta-scaled (before the division by b). ``valid`` (D, b): the rows a DPU
    really holds (a shorter shard's padding rows contribute nothing).

    Two passes over cache-sized blocks: the dot products of the whole batch (the weights are fixed during
    a step), then the per-sample scalars at once, then the gradient terms."""
    n_dpus, b, d = x.shape
    w = np.asarray(w, dtype=np.int64)
    acc = np.zeros((n_dpus, d), dtype=np.int64)
    stats = KernelStats(_zeros(n_dpus))
    blocks = _blocks(n_dpus, b, d)
    size = max((ds.stop - ds.start) * (cs.stop - cs.start) * d for ds, cs in blocks)
    buf = np.empty(size, dtype=np.int64)
    mask = np.empty(size, dtype=np.bool_)
    packed = d % 8 == 0

    def scratch(a: NDArray, ds: slice, cs: slice) -> NDArray:
        return a[: (ds.stop - ds.start) * (cs.stop - cs.start) * d].reshape(ds.stop - ds.start, cs.stop - cs.start, d)

    z = np.empty((n_dpus, b), dtype=np.int64)
    for ds, cs in blocks:
        z[ds, cs] = _dense_dot(x[ds, cs], w[ds], out=scratch(buf, ds, cs))
    z += bias[:, None]
    yc = y.astype(np.int64)
    if cfg.model == "lr":
        e = sigmoid_q31(z) - yc * fx.ONE
        if valid is not None:
            e = np.where(valid, e, 0)
        shift = fx.SHIFT + cfg.learning_rate_shift
        # the int32 store only changes a term equal to 2^31 (x = e = 2^31 with no learning-rate shift)
        wrap = cfg.learning_rate_shift == 0 and bool((e >= fx.ONE).any())
        for ds, cs in blocks:
            xb = x[ds, cs]
            g = np.multiply(xb, e[ds, cs, None], out=scratch(buf, ds, cs), dtype=np.int64)
            g >>= shift
            if wrap:
                g += fx.ONE
                g &= fx._MASK32
                g -= fx.ONE
            acc[ds] += np.add.reduce(g, axis=1)
            minus1 = np.equal(g, -1, out=scratch(mask, ds, cs))  # the -1 guard: those terms count as 0
            acc[ds] += _count_cols(minus1) if packed else np.count_nonzero(minus1, axis=1)
        bias_acc = fx.shift_guard(e, cfg.learning_rate_shift).sum(axis=1)
    else:
        hit, sign = _svm_hits(z, yc, cfg, valid)
        coeff = (hit * sign).astype(np.float64)  # exact in float64: |sum| < 2^53
        # the study's kernel casts the unsigned feature to a signed int32 (2^31 becomes -2^31); corrected widens it
        cast = fx.wrap_int32 if cfg.variant == "study" else (lambda v: np.asarray(v, dtype=np.int64))
        for ds, cs in blocks:
            xb = x[ds, cs]
            term = fx.shift_guard(cast(xb), cfg.learning_rate_shift).astype(np.float64)
            acc[ds] += np.matmul(coeff[ds, None, cs], term)[:, 0, :].astype(np.int64)
        bias_acc = (hit * sign).sum(axis=1) * int(fx.shift_guard(fx.ONE >> cfg.learning_rate_shift, 0))
        stats.margin_hits += hit.sum(axis=1)
    stats.acc_overflows = np.count_nonzero((acc >= fx.ONE) | (acc < -fx.ONE), axis=1)
    return fx.wrap_int32(acc), bias_acc, stats


def _svm_hits(z: NDArray[np.int64], y: NDArray[np.int64], cfg: KernelConfig, valid: NDArray[np.bool_] | None
              ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Margin test on y*z (z negated for y = -1) and the gradient sign (-1 for y = +1, +1 for y = -1); padding
    rows never hit."""
    yz = np.where(y == 1, z, -z)
    hit = yz < cfg.svm_margin_q31
    if valid is not None:
        hit &= valid
    return hit.astype(np.int64), np.where(y == 1, -1, 1)


def dense_update_fixed(w: NDArray[np.int64], bias: NDArray[np.int64], acc: NDArray[np.int64],
                       bias_acc: NDArray[np.int64], batch_log2: int, cfg: KernelConfig,
                       c: NDArray[np.int64] | None = None
                       ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The DPU's local update (MA-SGD, ADMM). The int32 accumulator is shifted as int32; the bias gets no
    decay. Returns (w, bias, saturated weights per DPU)."""
    base = w if c is None else w + c
    g = fx.guard(fx.wrap_int32(acc >> batch_log2))
    raw = w - g - fx.shift_guard(base, cfg.decay_shift)
    new_w = fx.clamp(raw)
    new_bias = fx.clamp64(bias - fx.shift_guard(bias_acc, batch_log2))
    saturated = np.count_nonzero((raw > fx.ONE) | (raw < -fx.ONE), axis=1)
    return new_w, new_bias, saturated.astype(np.int64)


def dense_batch_float(w: NDArray[np.float64], bias: NDArray[np.float64], x: NDArray[np.uint32],
                      y: NDArray[np.uint8], cfg: KernelConfig, valid: NDArray[np.bool_] | None = None
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64], KernelStats]:
    """float64 mode: the same batch without quantization (eta-scaled sums, real units)."""
    n_dpus = x.shape[0]
    xr = x.astype(np.float64) / fx.ONE
    z = np.matmul(xr, w[:, :, None])[:, :, 0] + bias[:, None]
    yf = y.astype(np.float64)
    stats = KernelStats(_zeros(n_dpus))
    if cfg.model == "lr":
        coeff = cfg.eta * (sigmoid(z) - yf)
    else:
        sign = np.where(y == 1, 1.0, -1.0)
        hit = sign * z < cfg.svm_margin_q31 / fx.ONE
        if valid is not None:
            hit &= valid
        coeff = -cfg.eta * sign * hit
        stats.margin_hits += hit.sum(axis=1)
    if valid is not None:
        coeff = np.where(valid, coeff, 0.0)
    acc = np.matmul(coeff[:, None, :], xr)[:, 0, :]
    return acc, coeff.sum(axis=1), stats


def update_float(w: NDArray[np.float64], acc: NDArray[np.float64], batch: int, cfg: KernelConfig,
                 c: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """w - a / b - eta * lambda * (w [+ c]) in real arithmetic."""
    base = w if c is None else w + c
    return w - acc / batch - 2.0 ** -cfg.decay_shift * base


# ---------------------------------------------------------------- sparse (Criteo-like) ELL layout
@dataclass
class SparseAcc:
    """Int64 accumulators of a sparse batch, stored sparsely: flat keys ``dpu * d + index`` -> value."""

    keys: NDArray[np.int64]
    values: NDArray[np.int64]
    bias: NDArray[np.int64]
    """the bias slot's accumulator per DPU (the kernels treat it separately: no -1 skip)."""


def _sparse_dot(w: NDArray, idx: NDArray, bias_index: int) -> NDArray:
    rows = np.arange(w.shape[0])[:, None, None]
    return w[rows, idx].astype(w.dtype if w.dtype == np.float64 else np.int64).sum(axis=2) + w[:, bias_index][:, None]


def _sparse_scalars_fixed(z: NDArray[np.int64], y: NDArray[np.int64], cfg: KernelConfig,
                          valid: NDArray[np.bool_] | None
                          ) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.int64]]:
    """Per sample: the class-weighted value added to each active accumulator, whether the accumulator
    is written, and the SVM margin hits (padding rows write nothing)."""
    if cfg.model == "lr":
        s0 = (sigmoid_q31(z) - y * fx.ONE) >> cfg.learning_rate_shift
        hit = np.ones(z.shape, dtype=np.int64) if valid is None else valid.astype(np.int64)
    else:
        s0 = np.full(z.shape, fx.ONE >> cfg.learning_rate_shift, dtype=np.int64)
        hit, _ = _svm_hits(z, y, cfg, valid)
    (n_num, n_shift), (p_num, p_shift) = cfg.class_weights.negative, cfg.class_weights.positive
    weighted = np.where(y == 0, (s0 * n_num) >> n_shift, (s0 * p_num) >> p_shift)
    s = np.where(s0 == -1, s0, np.where(weighted == -1, s0, weighted))
    if cfg.model == "lr":
        return s, (s != -1) & hit.astype(bool), hit
    value = np.where(s == -1, 0, np.where(y == 1, -s, s))
    return value, hit.astype(bool), hit


def _stable_key_order(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(sorted keys, stable sort order). Non-negative keys are packed with their position into one int64
    and value-sorted (much faster than a stable argsort; equal keys keep their execution order)."""
    n = keys.size
    pos_bits = max(1, (n - 1).bit_length())
    if n and int(keys.min()) >= 0 and int(keys.max()) < 1 << (62 - pos_bits):
        packed = keys << pos_bits
        packed |= np.arange(n, dtype=np.int64)
        packed.sort()
        order = packed & ((1 << pos_bits) - 1)
        packed >>= pos_bits
        return packed, order
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def _absorbing_sums(keys: NDArray[np.int64], values: NDArray[np.int64]
                    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Sequential accumulation where an accumulator equal to -1 is never written again.

    ``keys``/``values`` are in execution order. Returns (unique keys, final values, written mask in sorted
    order, sort order)."""
    ks, order = _stable_key_order(keys)
    vs = values[order]
    start = np.ones(ks.size, dtype=bool)
    np.not_equal(ks[1:], ks[:-1], out=start[1:])
    first = np.flatnonzero(start)
    cs = np.cumsum(vs)
    ends = np.empty_like(first)
    ends[:-1] = first[1:] - 1
    ends[-1:] = ks.size - 1
    before = cs[first] - vs[first]  # the running sum before each segment
    prefix = cs
    prefix -= np.repeat(before, np.diff(np.append(first, ks.size)))
    is_m1 = prefix == -1
    if not is_m1.any():  # nothing ever reached -1: every entry is written
        return ks[first], prefix[ends], np.ones(ks.size, dtype=bool), order
    seg = np.cumsum(start) - 1
    # an entry is skipped when an earlier entry of its segment left the accumulator at -1
    seen = np.cumsum(is_m1) - np.concatenate(([0], np.cumsum(is_m1)[first[1:] - 1]))[seg]
    written = ~((seen - is_m1) > 0)
    totals = np.where(np.add.reduceat(is_m1, first) > 0, -1, prefix[ends])
    return ks[first], totals, written, order


def sparse_batch_fixed(w: NDArray[np.int32], idx: NDArray[np.integer], y: NDArray[np.uint8], bias_index: int,
                       cfg: KernelConfig, valid: NDArray[np.bool_] | None = None) -> tuple[SparseAcc, KernelStats]:
    """One local batch of the sparse kernels (class-weighted LR or SVM, int64 accumulators), in DPU chunks of at
    most ``SPARSE_STEP_ENTRIES`` entries."""
    n_dpus, b, z_slots = idx.shape
    per = max(1, SPARSE_STEP_ENTRIES // max(1, b * z_slots))
    if n_dpus > per:
        parts = [sparse_batch_fixed(w[lo:lo + per], idx[lo:lo + per], y[lo:lo + per], bias_index, cfg,
                                    None if valid is None else valid[lo:lo + per]) for lo in range(0, n_dpus, per)]
        d = w.shape[1]
        keys = np.concatenate([acc.keys + lo * d for (acc, _), lo in zip(parts, range(0, n_dpus, per), strict=True)])
        acc = SparseAcc(keys, np.concatenate([a.values for a, _ in parts]), np.concatenate([a.bias for a, _ in parts]))
        stats = KernelStats(*(np.concatenate([getattr(st, f) for _, st in parts])
                              for f in ("margin_hits", "acc_writes", "acc_skipped")))
        return acc, stats
    d = w.shape[1]
    yi = y.astype(np.int64)
    z = _sparse_dot(w, idx, bias_index)
    value, active, hit = _sparse_scalars_fixed(z, yi, cfg, valid)
    per_dpu = idx.astype(np.int64).reshape(n_dpus, -1)
    per_dpu += np.arange(n_dpus, dtype=np.int64)[:, None] * d
    flat = per_dpu.reshape(-1)
    if active.all():
        keys_in, vals = flat, np.repeat(value.reshape(-1), z_slots)
    else:
        mask = np.repeat(active.reshape(-1), z_slots)
        keys_in, vals = flat[mask], np.repeat(value[active], z_slots)
    keys, totals, written, order = _absorbing_sums(keys_in, vals)
    attempted = np.count_nonzero(active, axis=1) * z_slots
    if written.all():
        writes = attempted.astype(np.int64)
    else:
        skipped_dpu = keys_in[order[~written]] // d
        writes = attempted - np.bincount(skipped_dpu, minlength=n_dpus).astype(np.int64)
    bias_add = np.where(active | (cfg.model == "svm"), np.where(active, value, 0), 0).sum(axis=1)
    slots = (b if valid is None else valid.sum(axis=1)) * z_slots  # the real rows' slots
    stats = KernelStats(hit.sum(axis=1),
                        acc_writes=writes, acc_skipped=slots - writes)
    stats.acc_skipped = stats.acc_skipped - (slots - attempted) * (cfg.model == "svm")
    return SparseAcc(keys, totals, bias_add.astype(np.int64)), stats


def _saturate_int32(raw: NDArray[np.int64]) -> tuple[NDArray[np.int32], NDArray[np.bool_]]:
    """``fx.clamp(raw)`` as int32 (the int32 cast wraps 2^31 to -2^31 exactly as ``fx.wrap_int32``) and
    the mask of saturated entries (raw > 2^31 or raw < -2^31)."""
    out = raw.astype(np.int32)
    over = raw > fx.ONE
    under = raw < -fx.ONE
    if over.any():
        out[over] = fx.HIGHEST
    if under.any():
        out[under] = fx.LOWEST
    over |= under
    return out, over


def sparse_update_fixed(w: NDArray[np.int32], acc: SparseAcc, batch_log2: int, bias_index: int,
                        cfg: KernelConfig, c: NDArray[np.int32] | None = None
                        ) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
    """The DPU's dense update sweep over weights [0, bias_index] (the bias without decay); weights past
    the bias slot are not touched. Processed in DPU chunks to bound memory."""
    n_dpus, d = w.shape
    out = w.copy()
    saturated = _zeros(n_dpus)
    step = max(1, CHUNK_ELEMENTS * 4 // d)
    g_all = fx.shift_guard(acc.values, batch_log2)
    bi = bias_index
    for lo in range(0, n_dpus, step):
        hi = min(n_dpus, lo + step)
        raw = w[lo:hi, :bi + 1].astype(np.int64)
        dec = raw + c[lo:hi, :bi + 1] if c is not None else raw.copy()
        dec >>= cfg.decay_shift
        dec[dec == -1] = 0
        dec[:, bi] = 0
        raw -= dec
        del dec
        a, z = np.searchsorted(acc.keys, [lo * d, hi * d])
        k = acc.keys[a:z] - lo * d
        rows, cols = np.divmod(k, d)
        keep = cols != bi  # the bias slot's gradient comes from the bias accumulator
        raw[rows[keep], cols[keep]] -= g_all[a:z][keep]
        raw[:, bi] -= fx.shift_guard(acc.bias[lo:hi], batch_log2)
        out[lo:hi, :bi + 1], sat = _saturate_int32(raw)
        saturated[lo:hi] = np.count_nonzero(sat, axis=1)
    return out, saturated


@dataclass
class SharedLocal:
    """Local models after a step that started from ONE model shared by all DPUs (MA-SGD): every DPU's row
    equals ``row`` except at the flat keys ``dpu * d + index`` (unique), where it holds ``values``."""

    row: NDArray[np.int32]
    keys: NDArray[np.int64]
    values: NDArray[np.int32]
    n_dpus: int

    def dense(self) -> NDArray[np.int32]:
        out = np.repeat(self.row[None, :], self.n_dpus, axis=0)
        out.reshape(-1)[self.keys] = self.values
        return out


def sparse_update_shared(w_row: NDArray[np.int32], acc: SparseAcc, batch_log2: int, bias_index: int,
                         cfg: KernelConfig) -> tuple[SharedLocal, NDArray[np.int64]]:
    """``sparse_update_fixed`` when every DPU starts from the same model ``w_row``: the update of the
    entries no DPU touched is computed once; same values and saturation counts, without the N x d sweep."""
    n_dpus, d, bi = acc.bias.shape[0], w_row.shape[0], bias_index
    wc = w_row[:bi + 1].astype(np.int64)
    base_raw = wc - fx.shift_guard(wc, cfg.decay_shift)
    base_raw[bi] = wc[bi]  # the bias slot gets no decay
    base_out, base_sat = _saturate_int32(base_raw)
    row = w_row.copy()
    row[:bi + 1] = base_out
    dpu, col = np.divmod(acc.keys, d)
    keep = col != bi  # the bias slot's gradient comes from the bias accumulator
    dpu, col = dpu[keep], col[keep]
    out_t, sat_t = _saturate_int32(base_raw[col] - fx.shift_guard(acc.values[keep], batch_log2))
    out_b, sat_b = _saturate_int32(wc[bi] - fx.shift_guard(acc.bias, batch_log2))
    saturated = (np.int64(np.count_nonzero(base_sat[:bi])) + sat_b
                 + np.bincount(dpu, weights=sat_t.astype(np.float64) - base_sat[col], minlength=n_dpus
                               ).astype(np.int64))
    keys = np.concatenate((acc.keys[keep], np.arange(n_dpus, dtype=np.int64) * d + bi))
    return SharedLocal(row, keys, np.concatenate((out_t, out_b)), n_dpus), saturated


def sparse_batch_float(w: NDArray[np.float64], idx: NDArray[np.integer], y: NDArray[np.uint8], bias_index: int,
                       cfg: KernelConfig, valid: NDArray[np.bool_] | None = None
                       ) -> tuple[NDArray[np.float64], KernelStats]:
    """float64 mode of the sparse kernels: dense (D, d) eta-scaled accumulators, bias slot included."""
    n_dpus, b, _ = idx.shape
    z = _sparse_dot(w, idx, bias_index)
    negative, positive = cfg.class_weights.values
    weight = np.where(y == 1, positive, negative)
    hit = np.ones(z.shape, dtype=bool) if valid is None else valid.copy()
    if cfg.model == "lr":
        value = cfg.eta * weight * (sigmoid(z) - y) * hit
    else:
        sign = np.where(y == 1, 1.0, -1.0)
        hit &= sign * z < cfg.svm_margin_q31 / fx.ONE
        value = -cfg.eta * weight * sign * hit
    acc = np.zeros_like(w)
    rows = np.broadcast_to(np.arange(n_dpus)[:, None, None], idx.shape)
    np.add.at(acc, (rows, idx), np.broadcast_to(value[:, :, None], idx.shape))
    acc[:, bias_index] += value.sum(axis=1)
    stats = KernelStats(hit.sum(axis=1).astype(np.int64))
    return acc, stats


def sparse_update_float(w: NDArray[np.float64], acc: NDArray[np.float64], batch: int, bias_index: int,
                        cfg: KernelConfig, c: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    base = w if c is None else w + c
    dec = 2.0 ** -cfg.decay_shift * base
    dec[:, bias_index:] = 0.0
    out = w - acc / batch - dec
    out[:, bias_index + 1:] = w[:, bias_index + 1:]
    return out
