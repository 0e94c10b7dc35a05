"""Q31 fixed-point arithmetic exactly as the PIM-Opt kernels and host driver compute it.

Conventions (``shared/reference/pim-opt-study.md`` §3.1): features are unsigned Q1.31 (``uint32``, 1.0 is
2^31), weights signed Q31 held in ``int32``, products, partial sums and the bias in ``int64``. Every array
here is ``numpy.int64`` holding the C value; helpers reproduce the C semantics that differ from plain
integer arithmetic:

- ``>>`` on a signed value is an arithmetic shift (floor division by a power of two), as numpy's ``>>``;
- ``guard`` is the kernels' "-1 guard" D(v): a shifted value equal to exactly -1 counts as 0;
- ``clamp`` is the saturation test ``v > 2^31 or v < -2^31 -> +-(2^31 - 1)``; ``v = 2^31`` passes the test
  and wraps to ``-2^31`` when stored into an ``int32``;
- ``wrap_int32`` is the two's-complement cast of an ``int64`` to ``int32``;
- ``trunc_div`` is C's integer division (truncation toward zero), used for the host averages.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import DataError

I64 = NDArray[np.int64]

SHIFT = 31
ONE = 1 << SHIFT
"""1.0 in Q31 (``CAST`` in the kernels); as a feature it is the largest Q1.31 value."""
HIGHEST = ONE - 1
LOWEST = -(ONE - 1)
_MASK32 = (1 << 32) - 1


def wrap_int32(v: ArrayLike) -> I64:
    """Two's-complement cast of an int64 to int32 (the value kept in an ``S`` variable)."""
    a = np.asarray(v, dtype=np.int64)
    return ((a + ONE) & _MASK32) - ONE


def guard(v: ArrayLike) -> I64:
    """D(v): 0 if v == -1 else v (the arithmetic-shift residue of a tiny negative is dropped)."""
    a = np.asarray(v, dtype=np.int64)
    return np.where(a == -1, np.int64(0), a)


def clamp(v: ArrayLike) -> I64:
    """Saturate as the kernels do, then store into an int32 (so v = 2^31 wraps to -2^31)."""
    a = np.asarray(v, dtype=np.int64)
    out = np.where(a > ONE, np.int64(HIGHEST), np.where(a < -ONE, np.int64(LOWEST), a))
    return wrap_int32(out)


def clamp64(v: ArrayLike) -> I64:
    """Saturate an int64 that stays int64 (the YFCC bias): no wrap at 2^31."""
    a = np.asarray(v, dtype=np.int64)
    return np.where(a > ONE, np.int64(HIGHEST), np.where(a < -ONE, np.int64(LOWEST), a))


def trunc_div(v: ArrayLike, n: int) -> I64:
    """C integer division ``v / n`` for n > 0: rounds toward zero."""
    a = np.asarray(v, dtype=np.int64)
    q = np.abs(a) // n
    return np.where(a < 0, -q, q)


def shift_guard(v: ArrayLike, shift: int) -> I64:
    """D(v >> shift): an arithmetic shift followed by the -1 guard."""
    return guard(np.asarray(v, dtype=np.int64) >> shift)


def sgd_step(w: ArrayLike, grad_sum: ArrayLike, batch_log2: int, decay_shift: int,
             decay_base: ArrayLike | None = None) -> I64:
    """The local/host update of every weight: ``clamp(w - D(a >> log2 b) - D((w [+ c]) >> (l + r)))``.

    ``grad_sum`` is the accumulator a (already in weight units, the learning rate folded in);
    ``decay_base`` is ``w + c`` for ADMM (defaults to w).
    """
    wa = np.asarray(w, dtype=np.int64)
    base = wa if decay_base is None else np.asarray(decay_base, dtype=np.int64)
    step = shift_guard(grad_sum, batch_log2) + shift_guard(base, decay_shift)
    return clamp(wa - step)


def significant_bytes(v: ArrayLike) -> NDArray[np.int64]:
    """ceil(bit_length(|v|) / 8): the bytes a software multiply has to process (0 for v = 0)."""
    a = np.abs(np.asarray(v, dtype=np.int64))
    return sum(((a >= (1 << (8 * k))).astype(np.int64) for k in range(8)), start=np.zeros(a.shape, np.int64))


BYTE_THRESHOLDS = tuple((1 << (8 * k)) - 1 for k in range(4))
"""|v| > threshold[k] means v has more than k significant bytes (for values below 2^32)."""


def quantize_unit(x: ArrayLike) -> NDArray[np.uint32]:
    """Real features in [0, 1] to unsigned Q1.31: floor(v * 2^31) (1.0 becomes 2^31)."""
    a = np.asarray(x, dtype=np.float64)
    tol = 1e-9  # rounding residue of min-max scaling
    if a.size and (not np.isfinite(a).all() or a.min() < -tol or a.max() > 1.0 + tol):
        bad = a[~(np.isfinite(a) & (a >= -tol) & (a <= 1.0 + tol))].ravel()[0]
        raise DataError(f"feature value {bad!r} is outside [0, 1], the range of unsigned Q1.31; "
                        "min-max scale the features first")
    return np.floor(np.clip(a, 0.0, 1.0) * ONE).astype(np.uint32)


def to_real(v: ArrayLike) -> NDArray[np.float64]:
    """Q31 integers to real numbers."""
    return np.asarray(v, dtype=np.float64) / ONE


def from_real(v: ArrayLike) -> I64:
    """Real weights to Q31 (truncation toward zero, saturated)."""
    return clamp(np.trunc(np.asarray(v, dtype=np.float64) * ONE).astype(np.int64))
