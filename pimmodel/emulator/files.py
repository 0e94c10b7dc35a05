"""A user's data set as the DPUs read it, in O(one step) memory: rows from a memory-mapped array, sharded by index.

- ``.npy`` (rows x (features + label), features in [0, 1]): memory-mapped where it lies, checked once in blocks
  (finite, in [0, 1], binary labels); each step quantizes the rows it reads to Q1.31.
- svmlight/LIBSVM text: split ONCE into a binary copy under ``$PIMMODEL_CACHE_DIR/shards`` (39-slot ELL indices for
  binary data, Q1.31 rows for real values; keyed by the file's path, size and modification time), two streamed
  passes (check and count, then write), which every later run (and every worker or Ray actor on a machine that
  sees the cache) memory-maps.

The train/test split, the shuffle and the contiguous per-DPU shards are index arrays over the file's rows (8 bytes
per row); the test rows are read in blocks when the metrics are computed."""

from __future__ import annotations

import array
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataError
from ..resources import cache_dir
from ..specs._toml import SNIFF_BYTES, looks_binary
from . import fixedpoint as fx
from .data import (
    CRITEO_ACTIVE,
    UNIT_TOLERANCE,
    _check_finite_unit,
    check_labels,
    load_npy_table,
    shard_sizes,
    sklearn_csr,
    svmlight_lines,
    train_test_split,
)

SPLIT_VERSION = 1
"""Layout of the split svmlight copies (part of their cache key)."""
BLOCK_ROWS = 1 << 14
"""Rows read at once when a file is checked, split or scored."""


@dataclass
class _MappedIndex:
    """Rows of the memory-mapped ``(rows, columns)`` array at ``path`` picked by the file-row ``index``, with their
    labels ``y``. ``quantize``: the array holds real values in [0, 1] (a user's .npy) turned into Q1.31 as they are
    read, else the kernels' values (ELL indices, Q1.31)."""

    path: str
    index: NDArray[np.int64]
    y: NDArray[np.uint8]
    layout: str
    columns: int
    quantize: bool

    def _read(self, arr: NDArray, rows: NDArray[np.int64]) -> NDArray:
        """File rows ``rows`` of the mapped ``arr`` as the kernels read them."""
        data = np.asarray(arr[rows, : self.columns])
        return fx.quantize_unit(data) if self.quantize else data


@dataclass
class MappedShards(_MappedIndex):
    """Training rows of a memory-mapped array, sharded: ``index[k, r]`` is the file row of row r of DPU k (-1:
    padding of a shorter shard). Dense rows are zero-padded to ``features``."""

    features: int
    counts: NDArray[np.int64] | None = None
    global_rows: int = 0
    """rows of the largest shard of the whole run (a part's own may be one fewer)."""

    def __post_init__(self) -> None:
        self._map: NDArray | None = None
        self.global_rows = self.global_rows or int(self.index.shape[1])

    @property
    def n_dpus(self) -> int:
        return int(self.index.shape[0])

    @property
    def rows_per_dpu(self) -> int:
        return self.global_rows

    def _array(self) -> NDArray:
        if self._map is None:
            self._map = np.load(self.path, mmap_mode="r", allow_pickle=False)
        return self._map

    def rows(self, start: int, stop: int) -> tuple[NDArray, NDArray[np.uint8]]:
        stop = min(stop, self.rows_per_dpu)
        idx = self.index[:, start:stop]
        take = idx.reshape(-1) >= 0
        data = self._read(self._array(), idx.reshape(-1)[take])
        width = self.features if self.layout == "dense" else self.columns
        x = np.zeros((idx.shape[0] * idx.shape[1], width), np.uint32 if self.layout == "dense" else np.int32)
        x[take, : self.columns] = data
        y = self.y[:, start:stop]
        return x.reshape(idx.shape[0], idx.shape[1], width), y

    def valid(self, start: int, stop: int) -> NDArray[np.bool_] | None:
        if self.counts is None or int(self.counts.min()) >= min(stop, self.rows_per_dpu):
            return None
        return np.arange(start, min(stop, self.rows_per_dpu))[None, :] < self.counts[:, None]

    def part(self, lo: int, hi: int) -> MappedShards:
        counts = None if self.counts is None else self.counts[lo:hi]
        return replace(self, index=self.index[lo:hi], y=self.y[lo:hi], counts=counts, global_rows=self.rows_per_dpu)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_map"] = None  # a worker maps the file itself
        return state


@dataclass
class MappedRows(_MappedIndex):
    """Rows of a memory-mapped array picked by ``index`` (a test set), read in blocks."""

    def blocks(self, rows: int = BLOCK_ROWS) -> Iterator[NDArray]:
        arr = np.load(self.path, mmap_mode="r", allow_pickle=False)
        for lo in range(0, self.index.size, rows):
            yield self._read(arr, self.index[lo:lo + rows])

    def __len__(self) -> int:
        return int(self.index.size)


@dataclass(frozen=True)
class FileData:
    """A file, ready to shard: where its rows are mapped, their labels, and what the kernels see."""

    path: str
    layout: str
    columns: int
    """feature columns of the mapped array (dense: features before padding; sparse: the 39 ELL slots)."""
    features: int
    """dense: features; sparse: largest index + 1 (the bias slot)."""
    labels: NDArray[np.uint8]
    quantize: bool
    ones: NDArray[np.int32] | None = None
    """dense: per row, the features equal to exactly 1.0 (the study's SVM kernels cast them to -1.0)."""

    def shards(self, dpus: int, seed: int, shuffle: bool, pad_multiple: int
               ) -> tuple[MappedShards, MappedRows, NDArray[np.int64]]:
        """80 % training rows (shuffled unless ``shuffle`` is off) in contiguous per-DPU shards, 20 % test rows
        (``train_test_split`` with ``seed``, as before rows were mapped); and the training rows' file indices."""
        y = self.labels
        if len(np.unique(y)) < 2:
            raise DataError(f"{self.path}: every label is {int(y[0])}; a classifier needs both classes")
        rng = np.random.default_rng(seed)
        train_idx, test_idx = train_test_split(y.size, 0.2, rng)
        if shuffle:
            train_idx = rng.permutation(train_idx)
        if test_idx.size == 0 or len(np.unique(y[train_idx])) < 2:
            raise DataError(f"{self.path}: {y.size:,} rows leave {test_idx.size:,} test rows (20 %) and "
                            f"{len(np.unique(y[train_idx]))} class(es) among the {train_idx.size:,} training rows; "
                            "accuracy needs test rows and training needs both classes: give more rows")
        if train_idx.size < dpus:
            raise DataError(f"{self.path}: {train_idx.size:,} training rows cannot feed {dpus:,} DPUs; use at most "
                            f"{train_idx.size:,} --dpus")
        counts = shard_sizes(train_idx.size, dpus)
        longest = int(counts[0])
        index = np.full((dpus, longest), -1, np.int64)
        ys = np.zeros((dpus, longest), np.uint8)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        for k, (lo, n) in enumerate(zip(starts, counts, strict=True)):
            index[k, :n] = train_idx[lo:lo + n]
            ys[k, :n] = y[train_idx[lo:lo + n]]
        features = self.columns + (-self.columns) % pad_multiple if self.layout == "dense" else self.features
        sh = MappedShards(self.path, index, ys, self.layout, self.columns, self.quantize, features,
                          None if counts[-1] == longest else counts)
        test = MappedRows(self.path, test_idx, y[test_idx], self.layout, self.columns, self.quantize)
        return sh, test, train_idx


# ---------------------------------------------------------------- .npy
def open_npy(path: str | Path) -> FileData:
    """A dense ``.npy`` array whose last column is the label, memory-mapped and checked in blocks (finite values,
    features in [0, 1], two classes); errors as ``data.read_npy``'s, without reading the array into memory."""
    arr = load_npy_table(path)
    _check_finite_unit(arr, path)
    ones = np.empty(arr.shape[0], np.int32)
    for lo in range(0, arr.shape[0], BLOCK_ROWS):
        ones[lo:lo + BLOCK_ROWS] = np.count_nonzero(np.asarray(arr[lo:lo + BLOCK_ROWS, :-1]) >= 1.0, axis=1)
    labels = check_labels(np.asarray(arr[:, -1]))
    return FileData(str(path), "dense", arr.shape[1] - 1, arr.shape[1] - 1, labels, True, ones)


# ---------------------------------------------------------------- svmlight, split once
def _key(path: Path) -> str:
    st = path.stat()
    text = f"{SPLIT_VERSION}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def open_svmlight(path: str | Path, max_dense_features: int) -> FileData:
    """An svmlight/LIBSVM file as a memory-mapped binary copy (made on first use, see the module docstring)."""
    path = Path(path)
    folder = cache_dir("shards") / _key(path)
    meta_file = folder / "meta.json"
    if not meta_file.is_file():
        _split(path, folder, max_dense_features)
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    labels = np.load(folder / "y.npy")
    ones = np.load(folder / "ones.npy") if meta["layout"] == "dense" else None
    return FileData(str(folder / "x.npy"), meta["layout"], int(meta["columns"]), int(meta["features"]), labels,
                    False, ones)


def _split(path: Path, folder: Path, max_dense_features: int) -> None:
    """Pass 1: check every line and count (rows, largest index, one value everywhere?, most active features);
    pass 2: write the rows into a memory-mapped .npy in a temporary folder, renamed into place when complete.
    Where scikit-learn parses the file (``data.sklearn_csr``), both passes are array operations on its CSR."""
    with open(path, "rb") as handle:
        parsed = None if looks_binary(handle.read(SNIFF_BYTES)) else sklearn_csr(handle)
    labels, top, most, binary, outside = _scan_lines(path) if parsed is None else _scan_csr(*parsed)
    if not len(labels):
        raise DataError(f"{path}: no samples found; expected lines like '1 3:1 17:1'")
    if top == 0:
        raise DataError(f"{path}: no line has a feature (only labels); expected lines like '1 3:1 17:1'")
    y = check_labels(np.asarray(labels, np.float64))
    n = y.size
    dtype: np.dtype[Any]
    if binary:
        if most > CRITEO_ACTIVE:
            raise DataError(f"{path}: a line has {most} active features but the ELL layout holds {CRITEO_ACTIVE} "
                            "per row")
        layout, columns, dtype = "sparse", CRITEO_ACTIVE, np.dtype(np.int32)
    else:
        if top > max_dense_features:
            raise DataError(f"{path}: {top:,} real-valued features; the dense kernels take at most "
                            f"{max_dense_features:,} (binary data, one value everywhere, takes the sparse kernels)")
        if outside is not None:
            raise DataError(f"{path}:{outside[0]}: feature value {outside[1]:g} is outside [0, 1], the range of "
                            "unsigned Q1.31; min-max scale the features first")
        layout, columns, dtype = "dense", top, np.dtype(np.uint32)
    need = float(n) * columns * 4 + n * 6
    folder.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder.parent).free
    if need > free:
        raise DataError(f"{path}: its binary copy needs {need / 1e9:.1f} GB of disk under {folder.parent}, more "
                        f"than the {free / 1e9:.1f} GB free; set PIMMODEL_CACHE_DIR to a larger disk")
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        x = np.lib.format.open_memmap(tmp / "x.npy", mode="w+", dtype=dtype, shape=(n, columns))
        ones = np.zeros(n, np.int32)
        if parsed is None:
            _fill_lines(path, binary, x, ones)
        else:
            _fill_csr(parsed[0], binary, x, ones)
        x.flush()
        del x
        np.save(tmp / "y.npy", y)
        if not binary:
            np.save(tmp / "ones.npy", ones)
        (tmp / "meta.json").write_text(json.dumps({"layout": layout, "columns": columns, "features": top,
                                                   "rows": n, "source": str(path)}), encoding="utf-8")
        try:
            os.rename(tmp, folder)
        except OSError:  # another process made it first
            if not (folder / "meta.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


Scan = tuple[Any, int, int, bool, "tuple[int, float] | None"]
"""What pass 1 finds: labels, largest index + 1, most active features in a row, one value everywhere?, the first
(line, value) outside [0, 1]."""


def _scan_lines(path: Path) -> Scan:
    labels = array.array("d")
    top, most, first_value, binary, outside = 0, 0, None, True, None
    for number, idx, vals, label in svmlight_lines(path):
        labels.append(label)
        if idx.size:
            top = max(top, int(idx.max()) + 1)
            most = max(most, idx.size)
            if first_value is None:
                first_value = float(vals[0])
            if binary and (vals != first_value).any():
                binary = False
            if outside is None and ((vals < -UNIT_TOLERANCE) | (vals > 1 + UNIT_TOLERANCE)).any():
                outside = (number, float(vals[(vals < -UNIT_TOLERANCE) | (vals > 1 + UNIT_TOLERANCE)][0]))
    return labels, top, most, binary, outside


def _scan_csr(x: Any, y: NDArray[np.float64]) -> Scan:
    values = x.data
    top = int(x.indices.max()) + 1 if x.indices.size else 0
    most = int(np.diff(x.indptr).max()) if y.size else 0
    binary = not values.size or bool((values == values[0]).all())
    bad = np.flatnonzero((values < -UNIT_TOLERANCE) | (values > 1 + UNIT_TOLERANCE))
    outside = None
    if bad.size:
        line = int(np.searchsorted(x.indptr, bad[0], side="right"))  # the row holding the value, 1-based
        outside = (line, float(values[bad[0]]))
    return y, top, most, binary, outside


def _fill_lines(path: Path, binary: bool, x: NDArray[Any], ones: NDArray[np.int32]) -> None:
    for row, (_, idx, vals, _) in enumerate(svmlight_lines(path)):
        if binary:
            x[row, : idx.size] = idx  # short rows padded with index 0 (w[0] is kept at 0 by the host)
        else:
            q = fx.quantize_unit(vals)
            x[row, idx] = q
            ones[row] = int(np.count_nonzero(q == fx.ONE))


def _fill_csr(csr: Any, binary: bool, x: NDArray[Any], ones: NDArray[np.int32]) -> None:
    """``_fill_lines`` as array operations: the row and slot of every stored pair from the CSR row pointers."""
    counts = np.diff(csr.indptr)
    rows = np.repeat(np.arange(counts.size), counts)
    if binary:
        slots = np.arange(csr.indices.size) - np.repeat(csr.indptr[:-1], counts)
        x[rows, slots] = csr.indices  # short rows padded with index 0, as above
    else:
        q = fx.quantize_unit(csr.data)
        x[rows, csr.indices] = q
        ones[:] = np.bincount(rows[q == fx.ONE], minlength=counts.size)
