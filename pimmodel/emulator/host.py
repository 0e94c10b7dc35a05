"""The parameter server on the host CPU, as the study's ``host/app.c`` computes it (and a float64 twin).

All fixed-point functions take int64 arrays holding int32 (Q31) values with a leading DPU axis where
per-DPU vectors are involved, and reproduce the C code's truncating division, clamps and -1 guards.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import fixedpoint as fx
from .group import Group
from .kernels import SharedLocal

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]


def average_fixed(local: I64, group: Group | None = None) -> I64:
    """MA-SGD: sum N int32 vectors in int64, truncating division by N, clamp (axis 0 = DPUs; ``group``: these are
    one group's rows of the run's N, summed with the others' exactly)."""
    g = group or Group.alone(local.shape[0])
    return fx.clamp(fx.trunc_div(g.total(local), g.n))


def average_shared_fixed(local: SharedLocal, group: Group | None = None) -> I64:
    """``average_fixed(local.dense())`` without building the N x d array: N times the shared row plus,
    per index, the differences of the DPUs that changed it (float64 bincount of integers below 2^53:
    exact)."""
    g = group or Group.alone(local.n_dpus)
    total = local.row.astype(np.int64) * local.n_dpus
    index = local.keys % local.row.shape[0]
    delta = local.values.astype(np.float64) - local.row[index]
    total += np.bincount(index, weights=delta, minlength=total.shape[0]).astype(np.int64)
    return fx.clamp(fx.trunc_div(g.comm.sum(total), g.n))


def average_bias_fixed(local: I64, group: Group | None = None) -> np.int64:
    g = group or Group.alone(local.shape[0])
    return np.int64(fx.clamp64(fx.trunc_div(g.scalar_total(local), g.n)))


def batch_mean(total: ArrayLike, global_batch: int) -> I64:
    """The host's mean of a gradient sum over B samples: D(A >> log2 B) as the study's host code (B a power of
    two), else C's truncating division D(A / B) (any DPU count: B = N x b)."""
    if global_batch & (global_batch - 1) == 0:
        return fx.shift_guard(total, global_batch.bit_length() - 1)
    return fx.guard(fx.trunc_div(total, global_batch))


def ga_update_fixed(w: I64, grad_sum: I64, global_batch: int, decay_shift: int,
                    no_decay: slice | None = None) -> I64:
    """GA-SGD host update: w <- clamp(w - mean(A) - D(w >> (l + r))) (``batch_mean``); ``no_decay`` marks the
    sparse layout's bias slot (updated without regularization)."""
    g = batch_mean(grad_sum, global_batch)
    dec = fx.shift_guard(w, decay_shift)
    if no_decay is not None:
        dec[no_decay] = 0
    return fx.clamp(w - g - dec)


def admm_kappa(dpus: int, reg_shift: int, alpha_shift: int) -> int:
    """Soft threshold in Q31: 2^31 >> (log2 N + r - alpha) (the artifact hard-codes log2 N for 256-2048)."""
    shift = int(math.log2(dpus)) + reg_shift - alpha_shift
    return fx.ONE >> shift if shift >= 0 else fx.ONE << -shift


def admm_svm_scale(dpus: int, reg_shift: int, alpha_shift: int, intended: bool = False) -> int:
    """The SVM consensus scale s = 2^-r / (2^alpha + 2^(log2 N - r)) in Q31 with the artifact's integer
    steps; ``intended`` multiplies by N (z from the sum of the N local models, not their mean)."""
    k = int(math.log2(dpus))
    numerator = (fx.ONE >> reg_shift) << fx.SHIFT
    denominator = (fx.ONE << alpha_shift) + (fx.ONE >> (reg_shift - k) if reg_shift > k else fx.ONE << (k - reg_shift))
    scale = numerator // denominator
    return scale * dpus if intended else scale


def soft_threshold_fixed(v: I64, kappa: int) -> I64:
    mag = np.abs(v)
    out = np.where(mag <= kappa, 0, np.where(v < 0, v + kappa, v - kappa))
    return fx.clamp(out)


def admm_fixed(w_local: NDArray, u_local: NDArray, model: str, kappa: int, scale: int, chunk_rows: int = 8,
               group: Group | None = None) -> tuple[I64, I64, NDArray, NDArray]:
    """One ADMM host round on (N, d) local models and duals (any int dtype holding int32 values; ``group``: one
    group's rows). Returns (w_mean, z, u_local, c_local); the dual updates run over DPU chunks to bound memory."""
    w_mean = average_fixed(w_local, group)
    u_mean = average_fixed(u_local, group)
    v = fx.clamp64(w_mean + u_mean)
    z = soft_threshold_fixed(v, kappa) if model == "lr" else fx.clamp((scale * v) >> fx.SHIFT)
    u_new = np.empty_like(u_local)
    c_new = np.empty_like(u_local)
    for lo in range(0, w_local.shape[0], chunk_rows):
        sl = slice(lo, lo + chunk_rows)
        u = fx.clamp(u_local[sl].astype(np.int64) + (w_local[sl].astype(np.int64) - z[None, :]))
        u_new[sl] = u
        c_new[sl] = fx.clamp(u - z[None, :])
    return w_mean, z, u_new, c_new


# ---------------------------------------------------------------- float64 twins
def admm_float(w_local: F64, u_local: F64, model: str, dpus: int, reg_shift: int, alpha_shift: int,
               intended: bool = False, group: Group | None = None) -> tuple[F64, F64, F64, F64]:
    g = group or Group.alone(w_local.shape[0])
    w_mean, u_mean = g.mean(w_local), g.mean(u_local)
    v = w_mean + u_mean
    if model == "lr":
        kappa = 2.0 ** (alpha_shift - reg_shift) / dpus
        z = np.sign(v) * np.maximum(np.abs(v) - kappa, 0.0)
    else:
        scale = 2.0 ** -reg_shift / (2.0 ** alpha_shift + dpus * 2.0 ** -reg_shift)
        z = scale * v * (dpus if intended else 1)
    u_new = u_local + w_local - z[None, :]
    return w_mean, z, u_new, u_new - z[None, :]
