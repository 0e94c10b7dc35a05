"""K-means trained for real in int16/int64 fixed point as ``upmem/dpu_kmeans @ df30f5c`` does, with its events.

What it reproduces (citations as in ``pimmodel.kernels.kmeans``):

- the host centres the data on its mean (K/py:401-405), quantizes it to int16 with ``scale = 32767 / max|x| /
  2.1`` and a truncating cast (``src/dpu_kmeans/_dimm.py:42-120``: ``LinearDiscretizer``), pads to 8 points per DPU and
  gives the first DPUs full blocks (``src/main.cpp:95-96``, K/dimm:112-119);
- each DPU assigns its points to the nearest int16 centroid with int16 differences (wrapping like the kernel's
  ``int_feature diff``), int32 squares and a uint64 distance, the first minimum winning (K/dpu:441-462), and sums
  its points per cluster in int64 (K/dpu:281-299);
- the host adds the DPUs' partials (K/iter:167-178), floor-divides (K/py:120-125), stops when the squared centroid
  shift over ``scale**2`` is within sklearn's tolerance (``tol`` times the mean feature variance, K/py:127-131, 245),
  keeps the best of ``n_init`` restarts and computes the inertia with one more launch (K/py:263-264).

Empty clusters keep their previous centroid (the reference relocates them with scikit-learn's float routine,
K/py:75-118); ``KmeansRun.empty_events`` says how often that happened.

Events are counted per DPU (points, tasks, running-minimum updates) and priced with the same kernel description
(``kernels.kmeans``) and pricing (``kernels.pricing``) the cost model uses; all DPUs run in this one process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import primitives as P
from ..errors import DataError
from ..kernels import kmeans as KM
from ..kernels import pricing as PR

INT16_MAX = 32767
SAFETY = 2.1
"""The quantizer's margin (``_dimm.py``: ``np.iinfo(dtype).max / max_feature / 2.1``)."""


@dataclass
class KmeansRun:
    """One emulated fit: the best restart's centroids, inertia and iteration count, and every restart's events."""

    centers: NDArray[np.float64]
    inertia: float
    iterations: int
    scale: float
    shape: KM.KmeansShape
    phases: dict[str, float]
    """seconds: ``ITERATION_PHASES`` per Lloyd iteration (mean over the best restart's iterations) and the
    one-off phases (``load``, ``inertia_kernel``, ``inertia_before``, ``inertia_after``)."""
    events: dict[str, float] = field(default_factory=dict)
    """counts over the best restart: launches, products (point x cluster x feature terms), updates (running-minimum
    improvements), tasks, bytes to and from the DPUs."""
    restarts: list[dict[str, float]] = field(default_factory=list)
    empty_events: int = 0
    labels: NDArray[np.int64] | None = None

    @property
    def run_times(self) -> dict[str, float]:
        return KM.run_times(self.phases, self.iterations)


def quantize(x: NDArray[np.float64], scale: float) -> NDArray[np.int16]:
    """``np.multiply(X, scale, out=int16, casting="unsafe")``: truncation toward zero."""
    return np.trunc(x * scale).astype(np.int16)


CHUNK_POINTS = 8192
"""Points assigned at once (a chunk's points x clusters x features int32 squares stay a few tens of MB)."""


def _assign(block: NDArray[np.int16], centers: NDArray[np.int16]) -> tuple[NDArray[np.int64], NDArray[np.uint64],
                                                                            NDArray[np.int64]]:
    """(labels, min distances, running-minimum updates per point) of one DPU's points, as the kernel computes
    them: int16 differences, int32 squares, uint64 sums, first minimum."""
    if len(block) > CHUNK_POINTS:
        parts = [_assign(block[i:i + CHUNK_POINTS], centers) for i in range(0, len(block), CHUNK_POINTS)]
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]))
    diff = (block[:, None, :].astype(np.int32) - centers[None, :, :].astype(np.int32)).astype(np.int16)
    sq = diff.astype(np.int32) * diff.astype(np.int32)
    dist = sq.astype(np.int64).sum(axis=2).astype(np.uint64)
    labels = np.argmin(dist, axis=1).astype(np.int64)
    running = np.minimum.accumulate(dist, axis=1)
    updates = 1 + (dist[:, 1:] < running[:, :-1]).sum(axis=1)
    return labels, dist[np.arange(len(labels)), labels], updates.astype(np.int64)


def _blocks(n: int, shape: KM.KmeansShape) -> list[slice]:
    per = shape.points_per_dpu
    return [slice(min(n, i * per), min(n, (i + 1) * per)) for i in range(shape.dpus)]


def _price(shape: KM.KmeansShape, points: NDArray[np.float64], updates: NDArray[np.float64], hw: Any,
           reduce: bool) -> tuple[float, float]:
    """(compute, exposed DMA) seconds of one launch: the busiest DPU of the per-DPU counts."""
    tasks = np.ceil(points / shape.task_points)
    per_point = np.where(points > 0, updates / np.maximum(points, 1), 0.0)
    sections = KM.lloyd_sections(points, tasks, shape.task_bytes, shape.task_points, shape.dims, shape.clusters,
                                 per_point, reduce)
    compute = np.zeros(shape.dpus)
    dma = np.zeros(shape.dpus)
    for s in sections:
        c = PR.compute_cycles(s.work, s.parallel, KM.TASKLETS, hw, s.tasklets)
        compute = compute + s.count * c
        dma = dma + s.count * PR.exposed_dma_cycles(s.parallel, c, PR.dma_cycles(s.work, hw), hw)
    busiest = int(np.argmax(compute + dma))
    return float(P.cycles_to_s(compute[busiest], hw)), float(P.cycles_to_s(dma[busiest], hw))


def _calls_s(calls: tuple[Any, ...], shape: KM.KmeansShape, hw: Any, to_pim: bool) -> float:
    return float(PR.host_calls_s(calls, shape.dpus, hw, to_pim))


def _random_init(x: NDArray[np.float64], k: int, rng: np.random.RandomState) -> NDArray[np.float64]:
    """scikit-learn's ``init="random"``: k distinct rows (``random_state.permutation(n)[:k]``)."""
    return x[rng.permutation(x.shape[0])[:k]].copy()


def train_kmeans(x: ArrayLike, clusters: int, dpus: int, hw: Any, init: ArrayLike | None = None, n_init: int = 1,
                 max_iter: int = 300, tol: float = 1e-4, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None) -> KmeansRun:
    """Fit K-means on ``dpus`` emulated DPUs; ``init``: the starting centroids (then ``n_init`` = 1), else
    ``n_init`` random restarts from ``seed``. ``progress(restarts_done, iterations)`` after every Lloyd launch
    (``iterations``: of the running restart)."""
    data = np.asarray(x, dtype=np.float64)
    if data.ndim != 2 or not np.isfinite(data).all():
        raise DataError("K-means needs a finite 2-D array of points")
    n, d = data.shape
    shape = KM.KmeansShape(n, d, clusters, dpus)
    why = KM.fits(shape)
    if why:
        raise DataError(f"the dpu_kmeans kernel cannot run this problem: {why}")
    if n < clusters:
        raise DataError(f"{n} points cannot make {clusters} clusters")
    mean = data.mean(axis=0)
    rows = _row_blocks(n)
    top = 0.0
    squares = np.zeros(d)
    for r in rows:  # one pass for the largest |x - mean| and the variance's sums (np.var's arithmetic per block)
        centred = data[r] - mean
        top = max(top, float(np.max(np.abs(centred))))
        squares += np.sum(np.square(centred), axis=0)
    scale = INT16_MAX / top / SAFETY if top > 0 else 1.0
    xq = np.empty(data.shape, dtype=np.int16)
    for r in rows:  # elementwise: the same array as quantizing the whole centred array at once
        xq[r] = quantize(data[r] - mean, scale)
    tol_abs = float(np.mean(squares / n)) * tol  # scikit-learn's _tolerance, mean(var(X, axis=0)) * tol
    blocks = _blocks(n, shape)
    points = np.array([b.stop - b.start for b in blocks], dtype=np.float64)
    rng = np.random.RandomState(seed)
    starts = [np.asarray(init, dtype=np.float64)] if init is not None else \
        [_random_init(data, clusters, rng) for _ in range(n_init)]
    best: KmeansRun | None = None
    restarts = []
    for done, start in enumerate(starts):
        if start.shape != (clusters, d):
            raise DataError(f"init must have shape ({clusters}, {d}), got {start.shape}")
        tick = None if progress is None else (lambda it, done=done: progress(done, it))  # type: ignore[misc]
        run = _single(xq, start - mean, scale, shape, blocks, points, hw, max_iter, tol_abs, tick)
        run.centers = (run.centers + 0.5) / scale + mean  # inverse_transform at df30f5c (_dimm.py:120)
        restarts.append({"inertia": run.inertia, "iterations": run.iterations})
        if best is None or run.inertia < best.inertia:
            best = run
    assert best is not None
    best.restarts = restarts
    best.phases["load"] = _calls_s(KM.load_calls(shape), shape, hw, True)
    return best


def _single(xq: NDArray[np.int16], start: NDArray[np.float64], scale: float, shape: KM.KmeansShape,
            blocks: list[slice], points: NDArray[np.float64], hw: Any, max_iter: int, tol_abs: float,
            tick: Callable[[int], None] | None = None) -> KmeansRun:
    """One restart: Lloyd launches until the shift is within tolerance, then the inertia launch."""
    k, d = shape.clusters, shape.dims
    centers = quantize(start, scale)
    compute_s = dma_s = 0.0
    updates_total = 0.0
    empty = 0
    iterations = 0
    for _ in range(max_iter):
        iterations += 1
        counts = np.zeros(k, dtype=np.int64)
        sums = np.zeros((k, d), dtype=np.int64)
        updates = np.zeros(shape.dpus)
        for i, b in enumerate(blocks):  # each DPU's partials, added by the host in DPU order
            if b.stop <= b.start:
                continue
            labels, _, up = _assign(xq[b], centers)
            updates[i] = float(up.sum())
            counts += np.bincount(labels, minlength=k)
            for j in range(d):
                sums[:, j] += np.bincount(labels, weights=xq[b, j].astype(np.float64), minlength=k).astype(np.int64)
        c, m = _price(shape, points, updates, hw, True)
        compute_s += c
        dma_s += m
        updates_total += float(updates.max())
        new = centers.copy()
        full = counts > 0
        empty += int((~full).sum())
        new[full] = np.floor_divide(sums[full], counts[full, None]).astype(np.int16)
        shift = float(np.sum((new.astype(np.int64) - centers.astype(np.int64)) ** 2)) / scale ** 2
        centers = new
        if tick is not None:
            tick(iterations)
        if shift <= tol_abs:
            break
    inertia_int = 0
    updates = np.zeros(shape.dpus)
    labels_all = np.empty(xq.shape[0], dtype=np.int64)
    for i, b in enumerate(blocks):
        if b.stop <= b.start:
            continue
        labels, dist, up = _assign(xq[b], centers)
        labels_all[b] = labels
        updates[i] = float(up.sum())
        inertia_int += int(dist.astype(np.uint64).sum())
    ic, im = _price(shape, points, updates, hw, False)
    iteration_calls = KM.iteration_calls(shape)
    launch = float(P.launch_s(hw, shape.dpus))
    phases = {
        "dpu_compute": compute_s / iterations, "mram_wram_dma": dma_s / iterations, "launch": launch,
        "host_to_pim": _calls_s(iteration_calls, shape, hw, True),
        "pim_to_host": _calls_s(iteration_calls, shape, hw, False),
        "host_aggregate": float(PR.host_reduce_s(KM.host_reduce_bytes(shape), 1, 0, hw)),
        "inertia_kernel": launch + ic + im,
        "inertia_before": _calls_s(KM.inertia_calls(shape)[:2], shape, hw, True),
        "inertia_after": _calls_s(KM.inertia_calls(shape)[2:], shape, hw, True)
        + _calls_s(KM.inertia_calls(shape)[2:], shape, hw, False),
    }
    products = float(points.sum()) * k * d
    events = {"launches": iterations + 1.0, "products": products * (iterations + 1),
              "updates_busiest_per_point": updates_total / iterations / max(points.max(), 1),
              "inertia_updates_busiest_per_point": float(updates.max()) / max(points.max(), 1),
              "tasks": float(np.ceil(points / shape.task_points).sum()) * (iterations + 1),
              "bytes_to_pim": float(PR.host_calls_bytes(iteration_calls, shape.dpus, True)) * iterations,
              "bytes_from_pim": float(PR.host_calls_bytes(iteration_calls, shape.dpus, False)) * iterations}
    return KmeansRun(centers.astype(np.float64), inertia_int / scale ** 2, iterations, scale, shape, phases, events,
                     empty_events=empty, labels=labels_all)


def blobs(points: int, dims: int, clusters: int, seed: int = 0) -> NDArray[np.float64]:
    """Gaussian blobs as ``sklearn.datasets.make_blobs`` draws them by default (the benchmarks' data,
    ``benchmarks/strong_scaling/CPU+DPU.py:59-65``): centres uniform in (-10, 10), standard deviation 1, points
    spread evenly over the centres. Not bit-identical to scikit-learn's draw."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10.0, 10.0, size=(clusters, dims))
    out = np.empty((points, dims))
    for r in _row_blocks(points):  # the same stream as one draw
        rng.standard_normal((r.stop - r.start, dims), out=out[r])
        out[r] += centres[np.arange(r.start, r.stop) % clusters]
    return out


_BLOB_ROWS = 1 << 18
"""Rows per block of the host-side passes over all points (a few MB: a long pass still answers Ctrl-C within a
fraction of a second)."""


def _row_blocks(n: int) -> list[slice]:
    """``n`` rows in blocks of ``_BLOB_ROWS``: Ctrl-C is seen between two blocks."""
    return [slice(a, min(n, a + _BLOB_ROWS)) for a in range(0, n, _BLOB_ROWS)]
