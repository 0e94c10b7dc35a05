"""The data readers as a library calls them: memory budgets are checked before the rows are held, and bad
arrays or labels are ``DataError`` (one line) rather than numpy's exceptions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pimmodel.emulator.data import check_labels, read_npy, read_svmlight_data
from pimmodel.errors import DataError


def _table(rows: int = 64, columns: int = 9) -> np.ndarray:
    x = np.random.default_rng(1).random((rows, columns))
    x[:, -1] = np.arange(rows) % 2
    return x


def test_npy_over_the_memory_budget_is_refused_before_it_is_read(tmp_path: Path) -> None:
    f = tmp_path / "big.npy"
    np.save(f, _table())
    with pytest.raises(DataError, match="needs about .* GB, more than the .* GB of memory free"):
        read_npy(f, budget_bytes=1000)
    x, y = read_npy(f, budget_bytes=1e9)
    assert x.shape == (64, 8) and x.dtype == np.uint32 and y.tolist() == [0, 1] * 32


def test_svmlight_stops_reading_at_the_memory_budget(tmp_path: Path) -> None:
    f = tmp_path / "big.svm"
    f.write_text("".join(f"{i % 2} 1:0.5 2:0.25\n" for i in range(10_000)))
    with pytest.raises(DataError, match="reading more than"):
        read_svmlight_data(f, budget_bytes=100_000)
    data = read_svmlight_data(f)
    with pytest.raises(DataError, match="dense 10,000 x 3 matrix"):
        data.dense(budget_bytes=1000)
    assert data.dense().shape == (10_000, 3)


def test_svmlight_range_error_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "range.svm"
    f.write_text("1 1:0.5\n0 1:0.2 2:1.5\n")
    with pytest.raises(DataError, match=r"range.svm:2: feature value 1.5 is outside \[0, 1\]"):
        read_svmlight_data(f).dense()


@pytest.mark.parametrize("labels", [np.array([1 + 1j, 0j]), np.array(["1", "0"]), np.array([0.0, np.nan])])
def test_labels_that_are_not_two_classes_of_numbers(labels: np.ndarray) -> None:
    with pytest.raises(DataError, match="binary"):
        check_labels(labels)


def test_npy_with_labels_outside_two_classes(tmp_path: Path) -> None:
    x = _table()
    x[0, -1] = 2
    np.save(tmp_path / "l.npy", x)
    with pytest.raises(DataError, match="labels must be binary"):
        read_npy(tmp_path / "l.npy")
