"""TransPimLib's lookup-table exponential and the LR kernels' sigmoid, bit-exact and vectorized.

What the DPU computes for ``p = trunc(2^31 / (1.0 + expf(-((float) z / 2^31))))`` (study §3.1):

1. ``x = -(float32(z) / 2^31)`` in float32 (int64 -> float32 rounds to nearest; the division is exact);
2. ``t = x * 1.44269504089f`` in float32;
3. t to two's-complement fixed point with 23 fractional bits by shifting the mantissa (uint32 arithmetic:
   for |t| >= 256 the shift overflows and wraps, as on the DPU, unguarded);
4. ``k = fixed >> 23``, ``f = fixed - (k << 23)`` in [0, 2^23), ``r = float32(f / 2^23) * 0.69314718056f``;
5. table index ``((int)(r * 2^21) + 1) >> 1`` (round half up on the 2^-20 grid); entry
   ``T[i] = float32(exp(i * 2^-20))`` of the 2^20-entry table the host broadcasts;
6. ``ldexpf(T[i], k)``: exponent overflow gives FLT_MAX, underflow a denormal (any value that small makes
   ``1.0 + e`` equal 1.0 exactly in double, so it is represented by 0 here);
7. the division ``2^31 / (1.0 + e)`` in double, truncated to int64.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .fixedpoint import ONE

TABLE_BITS = 20
GRID_EXPONENT = -20
"""frexpf(ln 2 / 2^20) has exponent -20, so the table step is 2^-20."""
LOG2_E = np.float32(1.44269504089)
LN_2 = np.float32(0.69314718056)
_FLT_MAX_BITS = np.uint32(0x7F7FFFFF)


@lru_cache(maxsize=1)
def exp_table() -> NDArray[np.float32]:
    """The host-built table: ``float32(exp(i * 2^-20))`` for i < 2^20."""
    grid = np.arange(1 << TABLE_BITS, dtype=np.float64) * 2.0**GRID_EXPONENT
    return np.exp(grid).astype(np.float32)


def _float_to_fixed23(t: NDArray[np.float32]) -> NDArray[np.int64]:
    """``floating_to_fixed_exp_helper``: mantissa shifted by the exponent, two's complement, as int32."""
    bits = t.view(np.uint32).astype(np.int64)
    exponent = (bits >> 23) & 0xFF
    mantissa = (bits & 0x7FFFFF) | 0x800000
    right = np.clip(127 - exponent, 0, 63)
    left = np.clip(exponent - 127, 0, 40)
    value = np.where(exponent < 127, mantissa >> right, (mantissa << left) & 0xFFFFFFFF)
    value = np.where(bits >> 31 != 0, (-value) & 0xFFFFFFFF, value)
    return np.where(value >= 1 << 31, value - (1 << 32), value)


def lut_exp(x: ArrayLike) -> NDArray[np.float32]:
    """TransPimLib ``expf`` (range extension + LUT + ``ldexpf``) on float32 inputs."""
    xf = np.asarray(x, dtype=np.float32)
    t = (xf * LOG2_E).astype(np.float32)
    fixed = _float_to_fixed23(t)
    k = fixed >> 23
    frac = fixed - (k << 23)
    r = (frac.astype(np.float32) * np.float32(2.0**-23) * LN_2).astype(np.float32)
    index = ((r * np.float32(2.0 ** (1 - GRID_EXPONENT))).astype(np.int64) + 1) >> 1
    entry = exp_table()[index]
    new_exponent = ((entry.view(np.uint32).astype(np.int64) >> 23) & 0xFF) + k
    scaled_bits = entry.view(np.uint32).astype(np.int64) + (k << 23)
    bits = np.where(new_exponent >= 255, np.int64(_FLT_MAX_BITS), np.where(new_exponent < 1, 0, scaled_bits))
    return bits.astype(np.uint32).view(np.float32)


def sigmoid_q31(z: ArrayLike) -> NDArray[np.int64]:
    """The LR kernels' sigmoid of an int64 Q31 dot product, as an int64 Q31 probability."""
    zf = np.asarray(z, dtype=np.int64).astype(np.float32)
    x = -(zf / np.float32(ONE))
    e = lut_exp(x).astype(np.float64)
    return np.trunc(float(ONE) / (1.0 + e)).astype(np.int64)


def sigmoid(z: ArrayLike) -> NDArray[np.float64]:
    """The exact logistic function (float64 mode), overflow-free."""
    a = np.asarray(z, dtype=np.float64)
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-a[pos]))
    ea = np.exp(a[~pos])
    out[~pos] = ea / (1.0 + ea)
    return out
