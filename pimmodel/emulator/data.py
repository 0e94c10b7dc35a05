"""Training data as the DPUs hold it: contiguous per-DPU shards of Q1.31 dense rows or 39-slot ELL rows.

A data source gives rows ``[start, stop)`` of every DPU's shard at once (leading DPU axis). Synthetic
sources are seeded and generated in fixed blocks, so the whole dataset is never materialized as int64.
Readers: svmlight/LIBSVM text (the format Criteo is distributed in) and dense ``.npy``.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Protocol, Self

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError
from ..resources import cache_dir
from ..specs._toml import SNIFF_BYTES, looks_binary
from . import fixedpoint as fx

CRITEO_ACTIVE = 39
CRITEO_POSITIVE_FRACTION = 0.0342
MAX_FEATURE_INDEX = 1 << 31
"""Feature indices are int32 in the ELL rows."""


class Shards(Protocol):
    """Per-DPU training rows, in memory or generated on demand. Shards may differ by one row (the remainder of
    the rows is spread over the first DPUs); ``rows`` pads the shorter ones and ``valid`` says which rows are
    real."""

    @property
    def layout(self) -> str: ...

    @property
    def n_dpus(self) -> int: ...

    @property
    def rows_per_dpu(self) -> int:
        """Rows of the largest shard."""

    @property
    def features(self) -> int:
        """dense: features per row (padded); sparse: hashed features (the bias slot sits at this index)."""

    def rows(self, start: int, stop: int) -> tuple[NDArray, NDArray[np.uint8]]: ...

    def valid(self, start: int, stop: int) -> NDArray[np.bool_] | None:
        """(DPUs, stop - start) mask of real rows, or None when every row is real."""

    def part(self, lo: int, hi: int) -> Shards:
        """DPUs [lo, hi) as a source of their own (the same rows; cheap to send to another process)."""


@dataclass
class ArrayShards:
    """In-memory shards: x (D, rows, d) uint32 or (D, rows, z) int32 indices; y (D, rows) uint8; ``counts``: the
    real rows of each DPU (None: all ``rows``); padded rows are zeros."""

    x: NDArray
    y: NDArray[np.uint8]
    layout: str
    features: int
    counts: NDArray[np.int64] | None = None

    @property
    def n_dpus(self) -> int:
        return int(self.x.shape[0])

    @property
    def rows_per_dpu(self) -> int:
        return int(self.x.shape[1])

    def rows(self, start: int, stop: int) -> tuple[NDArray, NDArray[np.uint8]]:
        return self.x[:, start:stop], self.y[:, start:stop]

    def part(self, lo: int, hi: int) -> ArrayShards:
        """DPUs [lo, hi) (views; a part keeps the run's longest shard as its padded length)."""
        return ArrayShards(self.x[lo:hi], self.y[lo:hi], self.layout, self.features,
                           None if self.counts is None else self.counts[lo:hi])

    def valid(self, start: int, stop: int) -> NDArray[np.bool_] | None:
        if self.counts is None or int(self.counts.min()) >= min(stop, self.rows_per_dpu):
            return None
        return np.arange(start, min(stop, self.rows_per_dpu))[None, :] < self.counts[:, None]


def pad_features(x: NDArray[np.uint32], multiple: int) -> NDArray[np.uint32]:
    """Zero-pad the feature axis to a multiple (the kernels need d divisible by tasklets x 128)."""
    d = x.shape[-1]
    pad = (-d) % multiple
    return x if pad == 0 else np.concatenate([x, np.zeros((*x.shape[:-1], pad), np.uint32)], axis=-1)


def shard_sizes(rows: int, n_dpus: int) -> NDArray[np.int64]:
    """Rows per DPU as a host splits them: contiguous blocks, the remainder spread over the first DPUs."""
    if rows < n_dpus:
        raise DataError(f"{rows:,} rows cannot feed {n_dpus:,} DPUs; use at most {rows:,} --dpus")
    q, r = divmod(rows, n_dpus)
    return np.array([q + 1] * r + [q] * (n_dpus - r), dtype=np.int64)


def shard(x: NDArray, y: NDArray, n_dpus: int, layout: str, features: int, pad_multiple: int = 2048
          ) -> ArrayShards:
    """Contiguous blocks per DPU, the remainder spread over the first DPUs (nothing dropped); shorter shards
    are padded with zero rows that ``ArrayShards.valid`` marks."""
    counts = shard_sizes(x.shape[0], n_dpus)
    longest = int(counts[0])
    xs = np.zeros((n_dpus, longest, *x.shape[1:]), dtype=x.dtype)
    ys = np.zeros((n_dpus, longest), dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for k, (lo, n) in enumerate(zip(starts, counts, strict=True)):
        xs[k, :n] = x[lo:lo + n]
        ys[k, :n] = np.asarray(y[lo:lo + n], np.uint8)
    if layout == "dense":
        xs = pad_features(xs, pad_multiple)
        features = xs.shape[-1]
    return ArrayShards(xs, ys, layout, features, None if counts[-1] == longest else counts)


def check_labels(y: NDArray) -> NDArray[np.uint8]:
    """Labels must be binary: {0, 1} or {-1, +1}."""
    y = np.asarray(y)
    if y.dtype.kind not in REAL_KINDS:
        raise DataError(f"labels must be binary numbers (0/1 or -1/+1), got an array of dtype {y.dtype}")
    values = set(np.unique(y).tolist())
    if not values <= {0, 1} and not values <= {-1, 1}:
        raise DataError(f"labels must be binary (0/1 or -1/+1), found {sorted(values)[:5]}; map them to two classes")
    return (np.asarray(y) > 0).astype(np.uint8)


# ---------------------------------------------------------------- synthetic YFCC-like (dense)
DENSE_CHUNK = 8
"""Rows per DPU of one generated chunk of the YFCC-like source (one seeded stream each)."""
SPARSE_CHUNK = 256
"""Rows per DPU of one generated chunk of the Criteo-like source."""
DATA_VERSION = 2
"""Version of the synthetic generators' streams (2: one seeded stream per DPU and chunk of rows, so that any group
of DPUs generates its own rows alone; 1 generated blocks of every DPU's rows from one stream)."""


def _aligned(start: int, stop: int, chunk: int, rows: int) -> tuple[int, int]:
    """[start, stop) widened to whole chunks (and cut at the shard's end)."""
    return start // chunk * chunk, min(rows, -(-stop // chunk) * chunk)


@dataclass
class _Chunked:
    """Rows generated in chunks of ``block`` rows per DPU, each from its own seeded stream ``(seed, kind, stream,
    dpu, chunk)``, so a DPU's rows do not depend on which other DPUs the same process generates (``part``). The
    rows asked for are generated widened to whole chunks and kept, and the next range of the same length is
    generated on a background thread while the current one is trained on (numpy's generators release the GIL),
    so memory holds two steps' rows of this process's DPUs. A source sets the defaults of ``features``, ``block``
    and ``layout``."""

    n_dpus: int
    rows_per_dpu: int
    features: int
    seed: int = 0
    block: int = 1
    """rows per DPU and chunk (each chunk its own stream; the data depend on it)."""
    stream: int = 0
    """rows of another split (e.g. 1 = test set) from the same feature model."""
    layout: str = ""
    prefetch: bool = True
    first_dpu: int = 0
    """the global index of this source's first DPU (``part``)."""

    def part(self, lo: int, hi: int) -> Self:
        """DPUs [lo, hi) as a source of their own (the same rows)."""
        return replace(self, n_dpus=hi - lo, first_dpu=self.first_dpu + lo)

    def _init_cache(self) -> None:
        self._cache: dict[tuple[int, int], tuple[NDArray, NDArray[np.uint8]] | Future] = {}

    def _generate(self, lo: int, hi: int) -> tuple[NDArray, NDArray[np.uint8]]:
        raise NotImplementedError

    def valid(self, start: int, stop: int) -> NDArray[np.bool_] | None:
        return None  # every DPU gets rows_per_dpu rows

    def _range(self, lo: int, hi: int) -> tuple[NDArray, NDArray[np.uint8]]:
        got = self._cache.get((lo, hi))
        if got is None:
            return self._generate(lo, hi)
        return got.result() if isinstance(got, Future) else got

    def rows(self, start: int, stop: int) -> tuple[NDArray, NDArray[np.uint8]]:
        stop = min(stop, self.rows_per_dpu)  # a partial last batch, as array shards slice it
        lo, hi = _aligned(start, stop, self.block, self.rows_per_dpu)
        x, y = self._range(lo, hi)
        cache: dict[tuple[int, int], tuple[NDArray, NDArray[np.uint8]] | Future] = {(lo, hi): (x, y)}
        nxt = (hi, min(self.rows_per_dpu, hi + (hi - lo)))
        if self.prefetch and nxt[0] < self.rows_per_dpu:  # at most one range ahead
            cache[nxt] = self._cache.get(nxt) or _prefetcher().submit(self._generate, *nxt)
        self._cache = cache
        return x[:, start - lo:stop - lo], y[:, start - lo:stop - lo]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = {}  # a part sent to a worker generates its own rows
        return state


@dataclass
class SyntheticDense(_Chunked):
    """YFCC-like ReLU features: x_j = max(0, a_j + (2y-1) u_j + s e), min-max scaled by a fixed per-feature
    cap (values clipped to [0, 1], so exact 0s and 1s both occur), balanced labels per chunk, 5 % label noise."""

    features: int = 4096
    block: int = DENSE_CHUNK
    layout: str = "dense"

    def __post_init__(self) -> None:
        rng = np.random.default_rng([self.seed, 1])
        self._a = rng.normal(-0.4, 0.5, self.features).astype(np.float32)
        self._u = (rng.normal(0.0, 1.0, self.features) * 0.9 / np.sqrt(self.features) * 2.5).astype(np.float32)
        self._cap = (np.maximum(self._a, 0) + np.abs(self._u) + 2.5).astype(np.float32)
        self._init_cache()

    def _generate(self, lo: int, hi: int) -> tuple[NDArray[np.uint32], NDArray[np.uint8]]:
        x = np.empty((self.n_dpus, hi - lo, self.features), np.uint32)
        y = np.empty((self.n_dpus, hi - lo), np.uint8)
        for k in range(self.n_dpus):
            for c in range(lo // self.block, -(-hi // self.block)):
                a = c * self.block - lo
                n = min(self.block, self.rows_per_dpu - c * self.block)
                self._chunk(self.first_dpu + k, c, x[k, a:a + n], y[k, a:a + n])
        return x, y

    def _chunk(self, dpu: int, chunk: int, out_x: NDArray[np.uint32], out_y: NDArray[np.uint8]) -> None:
        rng = np.random.default_rng([self.seed, 2, self.stream, dpu, chunk])
        n = out_x.shape[0]
        y = rng.permuted(np.arange(n) % 2).astype(np.uint8)
        pos = (y ^ (rng.random(n) < 0.05)).astype(bool)[:, None]
        h = rng.standard_normal((n, self.features), dtype=np.float32)
        h += self._a
        # h += (2 (y ^ flip) - 1) u, in place: adding -u is subtracting u (IEEE), so the values are the same
        np.add(h, self._u, out=h, where=pos)
        np.subtract(h, self._u, out=h, where=~pos)
        np.maximum(h, 0, out=h)
        h /= self._cap
        np.minimum(h, 1.0, out=h)
        h *= np.float32(fx.ONE)  # exact: a power of two, h in [0, 1]; float32 -> uint32 truncates as float64 does
        np.copyto(out_x, h, casting="unsafe")
        out_y[:] = y


@lru_cache(maxsize=1)
def _prefetcher() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="pimmodel-data")


# ---------------------------------------------------------------- synthetic Criteo-like (sparse)
CUT_SAMPLE_ROWS = 200_000
"""Rows of the generator's own calibration stream whose score quantile sets the label threshold."""


@dataclass
class SyntheticSparse(_Chunked):
    """Criteo-like rows: 39 categorical fields hashed into disjoint index ranges of [1, features) (so the 39
    indices of a row are distinct), Zipf-distributed values, labels from a logistic model whose threshold (the
    score quantile of a calibration sample of the same model) gives the requested positive rate."""

    features: int = 1_000_000
    block: int = SPARSE_CHUNK
    layout: str = "sparse"
    positive_fraction: float = CRITEO_POSITIVE_FRACTION

    def __post_init__(self) -> None:
        self._width = (self.features - 1) // CRITEO_ACTIVE
        if self._width < 2:
            raise DataError(f"--features {self.features} is too small for {CRITEO_ACTIVE} distinct active features")
        self._theta, self._mult, self._offsets, self._cut = _sparse_model(self.seed, self.features,
                                                                         self.positive_fraction)
        self._init_cache()

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        return _draw_sparse(rng, n, self._width, self._offsets, self._mult, self._theta)

    def _generate(self, lo: int, hi: int) -> tuple[NDArray[np.int32], NDArray[np.uint8]]:
        x = np.empty((self.n_dpus, hi - lo, CRITEO_ACTIVE), np.int32)
        y = np.empty((self.n_dpus, hi - lo), np.uint8)
        for k in range(self.n_dpus):
            for c in range(lo // self.block, -(-hi // self.block)):
                a = c * self.block - lo
                n = min(self.block, self.rows_per_dpu - c * self.block)
                idx, score = self._draw(np.random.default_rng([self.seed, 4, self.stream, self.first_dpu + k, c]), n)
                x[k, a:a + n] = idx
                y[k, a:a + n] = score > self._cut
        return x, y


ZIPF_EXPONENT = 1.3
"""The Criteo-like fields' value ranks are Zipf-distributed with this exponent, truncated at the field's width."""


def distinct_share(rows: int, features: int) -> float:
    """The expected share of one DPU's ``rows`` x 39 sparse entries that are distinct (index, DPU) pairs in the
    Criteo-like generator: per field, sum over ranks of P(drawn at least once in ``rows`` draws), over ``rows``
    (the truncated Zipf law of ``_draw_sparse``; the rank-to-index hash is one-to-one within a field)."""
    from scipy.special import zeta

    width = (features - 1) // CRITEO_ACTIVE
    p = np.arange(1, width, dtype=np.float64) ** -ZIPF_EXPONENT / zeta(ZIPF_EXPONENT)
    p = np.append(p, max(1.0 - p.sum(), 0.0))  # every rank past the width is drawn as the width
    return float(-np.expm1(rows * np.log1p(-np.minimum(p, 1.0 - 1e-16))).sum() / rows)


def _draw_sparse(rng: np.random.Generator, n: int, width: int, offsets: NDArray, mult: NDArray, theta: NDArray
                 ) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
    rank = np.minimum(rng.zipf(ZIPF_EXPONENT, (n, CRITEO_ACTIVE)), width)
    idx = (offsets + (rank * mult) % width).astype(np.int32)
    return idx, theta[idx].sum(axis=1) + rng.logistic(0, 0.6, n).astype(np.float32)


@lru_cache(maxsize=8)
def _sparse_model(seed: int, features: int, positive_fraction: float) -> tuple[NDArray, NDArray, NDArray, float]:
    """The Criteo-like feature model of a seed (weights, hash multipliers, field offsets) and the label threshold
    from its calibration stream (made once per process)."""
    rng = np.random.default_rng([seed, 3])
    width = (features - 1) // CRITEO_ACTIVE
    theta = rng.normal(0.0, 0.35, features).astype(np.float32)
    mult = rng.integers(1, width, CRITEO_ACTIVE) | 1
    offsets = 1 + np.arange(CRITEO_ACTIVE) * width
    stored = cache_dir("sparse-cut") / f"v{DATA_VERSION}-{seed}-{features}-{positive_fraction!r}.txt"
    with contextlib.suppress(OSError, ValueError):
        return theta, mult, offsets, float(stored.read_text(encoding="ascii"))
    _, score = _draw_sparse(np.random.default_rng([seed, 5]), CUT_SAMPLE_ROWS, width, offsets, mult, theta)
    cut = float(np.quantile(score, 1.0 - positive_fraction))
    with contextlib.suppress(OSError):  # the threshold is a pure function of the arguments: the cache only saves
        stored.parent.mkdir(parents=True, exist_ok=True)  # its 1.6 s of zipf draws (a read-only home costs time)
        tmp = stored.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(repr(cut), encoding="ascii")
        tmp.replace(stored)
    return theta, mult, offsets, cut


def synthetic_sparse(n_rows: int, features: int = 1_000_000, seed: int = 0,
                     positive_fraction: float = CRITEO_POSITIVE_FRACTION
                     ) -> tuple[NDArray[np.int32], NDArray[np.uint8]]:
    """``n_rows`` Criteo-like rows in memory (``SyntheticSparse``'s stream of one DPU)."""
    x, y = SyntheticSparse(1, n_rows, features, seed, positive_fraction=positive_fraction, prefetch=False
                           ).rows(0, n_rows)
    return x[0], y[0]


# ---------------------------------------------------------------- readers
REAL_KINDS = "biuf"
"""numpy dtype kinds that hold real numbers (bool, signed, unsigned, float); complex, strings, objects and
records are not features."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest svmlight line read (a row of 2^16 real features is about 1.5 MB); longer: not an svmlight file."""
SVMLIGHT_ROW_BYTES = 400
"""Memory of one parsed svmlight row besides its pairs (two arrays, a label, a line number)."""
SVMLIGHT_PAIR_BYTES = 16
DENSE_COPY_FACTOR = 4
"""Peak float64 copies of a dense matrix while it is checked and quantized to Q1.31."""
UNIT_TOLERANCE = 1e-9
"""Rounding residue of min-max scaling that ``fixedpoint.quantize_unit`` accepts outside [0, 1]."""
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK"


def _too_big(path: str | Path, what: str, need_bytes: float, budget_bytes: float) -> DataError:
    return DataError(f"{path}: {what} needs about {need_bytes / 1e9:.1f} GB, more than the {budget_bytes / 1e9:.1f} GB "
                     "of memory free; use a smaller file (fewer rows or features)")


def _not_text(path: str | Path, head: bytes, number: int = 0, detail: str = "") -> DataError:
    """A file (or its line ``number``) the svmlight reader cannot read as text, with the advice that fits what the
    file seems to be."""
    if head.startswith(_NPY_MAGIC):
        return DataError(f"{path} is a numpy .npy array, not svmlight text; name it *.npy")
    if head.startswith(_ZIP_MAGIC):
        return DataError(f"{path} is a zip archive (.npz?), not svmlight text; save one array with numpy.save to a "
                         ".npy file")
    if not number:
        return DataError(f"{path} is a binary file, not svmlight text; expected lines like '1 3:1 17:1'")
    return DataError(f"{path}:{number}: {detail}; expected svmlight text lines like '1 3:1 17:1'")


@dataclass(frozen=True)
class SvmlightData:
    """An svmlight/LIBSVM file as read: per-row indices and values, binary labels, largest index + 1."""

    rows: list[NDArray]
    values: list[NDArray]
    labels: NDArray[np.uint8]
    features: int
    lines: list[int]
    path: str = ""

    @property
    def binary(self) -> bool:
        """True when every stored value is the same constant (the study's Criteo: 0.16013 everywhere), so
        the rows are index sets for the sparse binary kernels."""
        distinct = {float(v) for vals in self.values for v in np.unique(vals)}
        return len(distinct) <= 1

    def dense_bytes(self) -> float:
        """Peak memory of ``dense()`` and its quantization."""
        return float(len(self.rows)) * self.features * 8 * DENSE_COPY_FACTOR

    def dense(self, budget_bytes: float = float("inf")) -> NDArray[np.float64]:
        """The rows as a dense real matrix (for non-binary data, which takes the dense kernels); values must lie
        in [0, 1] (unsigned Q1.31), checked here so that the error names the line."""
        if self.dense_bytes() > budget_bytes:
            raise _too_big(self.path, f"a dense {len(self.rows):,} x {self.features:,} matrix", self.dense_bytes(),
                           budget_bytes)
        out = np.zeros((len(self.rows), self.features))
        for i, (idx, vals) in enumerate(zip(self.rows, self.values, strict=True)):
            outside = (vals < -UNIT_TOLERANCE) | (vals > 1 + UNIT_TOLERANCE)
            if outside.any():
                bad = float(vals[outside][0])
                raise DataError(f"{self.path}:{self.lines[i]}: feature value {bad:g} is outside [0, 1], the range "
                                "of unsigned Q1.31; min-max scale the features first")
            out[i, idx] = vals
        return out

    def check_ell(self, max_active: int) -> None:
        for idx, line in zip(self.rows, self.lines, strict=True):
            if idx.size > max_active:
                raise DataError(f"line {line}: {idx.size} active features but the ELL layout holds {max_active} "
                                "per row")


def read_svmlight_data(path: str | Path, budget_bytes: float = float("inf")) -> SvmlightData:
    """Read an svmlight/LIBSVM file: ``label idx:value ...`` with 1-based or 0-based integer indices. Errors
    name the line; a binary or non-UTF-8 file, a file without samples or without a single feature, and a file
    whose rows would take more than ``budget_bytes`` of memory are one-line errors."""
    rows: list[NDArray] = []
    values: list[NDArray] = []
    labels: list[float] = []
    lines: list[int] = []
    used = 0.0
    for number, idx, vals, label in svmlight_lines(path):
        used += SVMLIGHT_ROW_BYTES + SVMLIGHT_PAIR_BYTES * idx.size
        if used > budget_bytes:
            raise _too_big(path, f"reading more than {len(rows):,} rows", used, budget_bytes)
        rows.append(idx)
        values.append(vals)
        labels.append(label)
        lines.append(number)
    if not rows:
        raise DataError(f"{path}: no samples found; expected lines like '1 3:1 17:1'")
    top = max((int(r.max()) + 1 for r in rows if r.size), default=0)
    if top == 0:
        raise DataError(f"{path}: no line has a feature (only labels); expected lines like '1 3:1 17:1'")
    return SvmlightData(rows, values, check_labels(np.asarray(labels)), top, lines, str(path))


FAST_SVMLIGHT_BYTES = 256 * 2**20
"""Files up to this size are parsed by scikit-learn's compiled reader where it is installed (it holds the whole
file in memory); larger files, and any file it refuses or reads differently, line by line here."""


def svmlight_lines(path: str | Path) -> Iterator[tuple[int, NDArray, NDArray, float]]:
    """(line number, indices, values, label) of every sample line of an svmlight file; errors name the line."""
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}; check the path") from None
    with handle:
        head = handle.read(SNIFF_BYTES)
        if looks_binary(head):
            raise _not_text(path, head)
        fast = _sklearn_rows(handle)
        if fast is not None:
            yield from fast
            return
        handle.seek(0)
        for number, text in enumerate(_text_lines(handle, path, head), start=1):
            text = text.split("#", 1)[0].strip()
            if text:
                idx, vals, label = _parse_svmlight_line(text, number, path)
                yield number, idx, vals, label


def sklearn_csr(handle: IO[bytes]) -> tuple[Any, NDArray[np.float64]] | None:
    """The file as ``sklearn.datasets.load_svmlight_file`` parses it (a CSR matrix of float64, its labels), or
    None where the line parser must read it: scikit-learn is not installed, the file is larger than
    ``FAST_SVMLIGHT_BYTES``, it has lines without a sample (blank, comment: rows would not be line numbers),
    ``qid:`` fields, anything scikit-learn refuses (unsorted indices) or drops (a stored zero), or a row fails
    the line parser's checks (the line parser then names the line)."""
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        return None
    handle.seek(0, os.SEEK_END)
    if handle.tell() > FAST_SVMLIGHT_BYTES:
        return None
    handle.seek(0)
    text = handle.read()
    lines = text.count(b"\n") + (not text.endswith(b"\n"))
    if not text or b"qid" in text or b"#" in text or b"\n\n" in text or text.startswith(b"\n") or b"\r" in text:
        return None
    try:
        x, y = load_svmlight_file(io.BytesIO(text), zero_based=True, dtype=np.float64)
    except (ValueError, OverflowError):
        return None
    indices = x.indices
    if (x.shape[0] != lines or text.count(b":") != indices.size or not np.isfinite(y).all()
            or (indices.size and (indices.min() < 0 or indices.max() >= MAX_FEATURE_INDEX))
            or not np.isfinite(x.data).all()):
        return None
    return x, y


def _sklearn_rows(handle: IO[bytes]) -> Iterator[tuple[int, NDArray, NDArray, float]] | None:
    """``svmlight_lines`` from ``sklearn_csr`` (None where the line parser must read the file)."""
    parsed = sklearn_csr(handle)
    if parsed is None:
        return None
    x, y = parsed
    indices, values, starts = x.indices.astype(np.int64), x.data, x.indptr
    return ((i + 1, indices[starts[i]:starts[i + 1]], values[starts[i]:starts[i + 1]], float(y[i]))
            for i in range(y.size))


def _text_lines(handle: IO[bytes], path: str | Path, head: bytes) -> Iterator[str]:
    """The file's lines as text; a NUL byte, invalid UTF-8 or an endless line is an error naming the line."""
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise _not_text(path, head, number, f"line longer than {MAX_LINE_BYTES // 2**20} MiB")
        if b"\x00" in raw:
            raise _not_text(path, head, number, "binary data (a NUL byte)")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_text(path, head, number, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None


def read_svmlight(path: str | Path, max_active: int = CRITEO_ACTIVE) -> tuple[list[NDArray], NDArray[np.uint8], int]:
    """Rows of a binary svmlight file as index sets for the ELL layout: (indices per row, labels, largest
    index + 1)."""
    data = read_svmlight_data(path)
    data.check_ell(max_active)
    return data.rows, data.labels, data.features


def _parse_svmlight_line(text: str, number: int, path: str | Path) -> tuple[NDArray, NDArray, float]:
    parts = text.split()
    try:
        label = float(parts[0])
        pairs = [p.split(":", 1) for p in parts[1:]]
        idx = np.array([int(i) for i, _ in pairs], dtype=np.int64)
        vals = np.array([float(v) for _, v in pairs], dtype=np.float64)
    except (ValueError, IndexError, OverflowError):
        raise DataError(f"{path}:{number}: malformed svmlight line; expected 'label index:value ...'") from None
    if idx.size and idx.min() < 0:
        raise DataError(f"{path}:{number}: negative feature index {int(idx.min())}")
    if idx.size and idx.max() >= MAX_FEATURE_INDEX:
        raise DataError(f"{path}:{number}: feature index {int(idx.max()):,} is too large; the kernels index at most "
                        f"{MAX_FEATURE_INDEX - 1:,} features (hash the features into a smaller range)")
    if not np.isfinite(vals).all():
        raise DataError(f"{path}:{number}: feature value {vals[~np.isfinite(vals)][0]} is not a finite number; "
                        "replace NaN and inf values")
    if len(set(idx.tolist())) != idx.size:
        raise DataError(f"{path}:{number}: repeated feature index; the kernels need distinct indices per row")
    return idx, vals, label


def ell_from_rows(rows: list[NDArray], slots: int = CRITEO_ACTIVE) -> NDArray[np.int32]:
    """Fixed-width ELL rows; short rows are padded with index 0 (w[0] is kept at 0 by the host)."""
    out = np.zeros((len(rows), slots), np.int32)
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out


def load_npy_table(path: str | Path) -> NDArray[Any]:
    """A ``.npy`` file as a 2-D array of real numbers (rows x (features + label)), memory-mapped where it can be;
    a one-line error otherwise."""
    arr = _load_npy(path)
    if arr.dtype.kind not in REAL_KINDS:
        raise DataError(f"{path}: an array of dtype {arr.dtype} ({_KIND_NAMES.get(arr.dtype.kind, 'not numbers')}); "
                        "save the features and the label as real numbers (float or int)")
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise DataError(f"{path}: expected a 2-D array (rows x (features + label)), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise DataError(f"{path}: the array has no rows")
    return arr


def read_npy(path: str | Path, budget_bytes: float = float("inf")) -> tuple[NDArray[np.uint32], NDArray[np.uint8]]:
    """A dense ``.npy`` array of real numbers whose last column is the label; features must lie in [0, 1].
    Anything else (a ``.npz`` archive, a pickle, strings, objects, complex numbers, a 1-D array, NaN or inf, more
    rows than memory holds) is a one-line error that says what to give instead."""
    arr = load_npy_table(path)
    need = float(arr.shape[0]) * arr.shape[1] * 8 * DENSE_COPY_FACTOR
    if need > budget_bytes:
        raise _too_big(path, f"a {arr.shape[0]:,} x {arr.shape[1]:,} array", need, budget_bytes)
    _check_finite_unit(arr, path)
    return fx.quantize_unit(arr[:, :-1]), check_labels(np.asarray(arr[:, -1]))


_KIND_NAMES = {"c": "complex numbers", "U": "strings", "S": "byte strings", "O": "Python objects",
               "V": "records", "M": "dates", "m": "time spans"}


def _load_npy(path: str | Path) -> NDArray:
    """The array of a ``.npy`` file, memory-mapped (its size is known before it is read)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_NPY_MAGIC))
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}; check the path") from None
    if head.startswith(_ZIP_MAGIC):
        raise DataError(f"{path} is a .npz archive, not a .npy array; save one array with numpy.save")
    if head != _NPY_MAGIC:
        raise DataError(f"{path} is not a .npy file (no NUMPY header{', it is empty' if not head else ''}); save "
                        "the array with numpy.save, or give svmlight text under another name")
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        if "object" in str(exc) or "pickle" in str(exc):
            raise DataError(f"{path}: an array of Python objects; save the features and the label as real numbers "
                            "(float or int)") from None
        raise DataError(f"{path}: not a readable .npy array ({exc})") from None
    except (OSError, EOFError) as exc:  # a truncated file
        raise DataError(f"{path}: not a readable .npy array ({exc or 'truncated'}); save it again with numpy.save"
                        ) from None
    return arr


def _check_finite_unit(arr: NDArray, path: str | Path, block_rows: int = 1 << 14) -> None:
    """Every value finite and every feature in [0, 1] (unsigned Q1.31), scanned in blocks of rows so that the
    error names the first bad row and column."""
    for lo in range(0, arr.shape[0], block_rows):
        block = np.asarray(arr[lo:lo + block_rows], dtype=np.float64)
        bad = ~np.isfinite(block)
        what = "is not a finite number; replace NaN and inf values"
        if not bad.any():
            features = block[:, :-1]
            bad = np.zeros_like(block, dtype=bool)
            bad[:, :-1] = (features < -UNIT_TOLERANCE) | (features > 1 + UNIT_TOLERANCE)
            what = "is outside [0, 1], the range of unsigned Q1.31; min-max scale the features first"
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise DataError(f"{path}: row {lo + int(r)}, column {int(c)}: value {block[r, c]:g} {what}")


def train_test_split(n_rows: int, test_fraction: float, rng: np.random.Generator) -> tuple[NDArray, NDArray]:
    order = rng.permutation(n_rows)
    n_test = int(round(n_rows * test_fraction))
    return np.sort(order[n_test:]), np.sort(order[:n_test])
