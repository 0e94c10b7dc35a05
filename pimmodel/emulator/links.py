"""Exchanges over direct DPU links (hypothetical hardware), computed for real and counted.

- ``group_sum``: the all-reduce of each group of G consecutive DPUs. Integer partial sums are exact, so the
  result does not depend on the order a reduce-scatter adds them in; the elements each DPU receives and adds are
  counted from the chunks a ring reduce-scatter uses (d split into G chunks, ``numpy.array_split``; the DPU at
  position p of its group receives every chunk but chunk p: d - |chunk p|, i.e. (G - 1) d / G when G divides d).
- ``gossip_graph`` / ``mix``: a gossip round of decentralized SGD on a ring or a 2-D torus
  (``specs.optimizers.torus_shape``): ``w <- clamp((w >> 1) + sum_n (w_n >> log2 2k))`` in Q31, the same weights
  in float64 (``kernels/exchange.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..kernels.exchange import EXCHANGE_PROFILE as X
from ..specs.optimizers import gossip_neighbours, torus_shape
from . import fixedpoint as fx


def received_elements(n_dpus: int, group: int, d: int) -> NDArray[np.float64]:
    """Elements each DPU receives (and adds) in the reduce-scatter of an all-reduce over groups of ``group``."""
    chunks = np.array([len(c) for c in np.array_split(np.arange(d), group)], dtype=np.float64)
    return d - np.tile(chunks, -(-n_dpus // group))[:n_dpus]


def group_sum(values: NDArray[Any], group: int) -> NDArray[Any]:
    """(N, ...) -> (N / group, ...): the exact sum of each group of ``group`` consecutive DPUs' vectors (int64 for
    integers)."""
    n = values.shape[0]
    dtype = np.int64 if np.issubdtype(values.dtype, np.integer) else np.float64
    return values.reshape(n // group, group, *values.shape[1:]).sum(axis=1, dtype=dtype)


def gossip_graph(topology: str, n_dpus: int) -> NDArray[np.int64]:
    """(N, k): the neighbours each DPU mixes with: left and right on a ring; up, down, left and right on the
    2-D torus (all-to-all links gossip on the torus)."""
    idx = np.arange(n_dpus)
    if gossip_neighbours(topology) == 2:
        return np.stack(((idx - 1) % n_dpus, (idx + 1) % n_dpus), axis=1)
    rows, cols = torus_shape(n_dpus)
    r, c = np.divmod(idx, cols)
    return np.stack((((r - 1) % rows) * cols + c, ((r + 1) % rows) * cols + c,
                     r * cols + (c - 1) % cols, r * cols + (c + 1) % cols), axis=1)


def mix(values: NDArray[Any], graph: NDArray[np.int64], fixed: bool, wide: bool = False,
        source: NDArray[Any] | None = None) -> NDArray[Any]:
    """One gossip round on (N, ...) models: the DPU's own model with weight 1/2, each of its k neighbours with
    1/(2k). Fixed point: arithmetic shifts summed in int64, then the kernels' clamp (``wide``: the int64 bias,
    saturated without the int32 wrap); float64: the same weights exactly. ``source``: the rows ``graph`` indexes
    (default ``values``; a group of DPUs passes its neighbours' rows)."""
    k = graph.shape[1]
    src = values if source is None else source
    if not fixed:
        return 0.5 * values + src[graph].sum(axis=1) / (2 * k)
    v = np.asarray(values, dtype=np.int64)
    s = v if source is None else np.asarray(source, dtype=np.int64)
    shift = X.neighbour_shift(k)
    out = v >> X.self_shift
    for j in range(k):
        out = out + (s[graph[:, j]] >> shift)
    return (fx.clamp64(out) if wide else fx.clamp(out)).astype(values.dtype)
