"""Issue 30: svmlight files are parsed by scikit-learn's compiled reader where it is installed, and the split
binary copy is made from its CSR with array operations; the line parser stays for what scikit-learn cannot read
the same way (comments, blank lines, unsorted indices, qid, bad values), so that its errors still name the line.
The two paths must give the same rows, the same copy, and the same errors."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pimmodel.emulator import data, files
from pimmodel.errors import DataError

# found, not imported: importing scikit-learn costs about a second of every run's collection, and the tests that
# need it import it through the reader, when they run
if importlib.util.find_spec("sklearn") is None:
    pytest.skip("scikit-learn is not installed (the 'test' extra)", allow_module_level=True)

LABELS = st.sampled_from(["1", "0", "-1", "+1", "1e0", "2", "x"])
PAIRS = st.lists(st.integers(0, 40), max_size=6, unique=True).map(sorted).map(
    lambda idx: " ".join(f"{i}:{(i % 5) / 4:g}" for i in idx))
ODD = st.sampled_from(["", "#c", "qid:2", "-2:1", "9:nan", "4:inf", "3.0:1", "6:", ":1", "3:1.5", "99999999999:1",
                       "5:1 3:1", "7:1 7:1", "\t", "  "])
VALID = st.tuples(LABELS, PAIRS).map(" ".join)
LINES = st.lists(st.one_of(VALID, VALID, VALID, st.tuples(LABELS, PAIRS, ODD).map(" ".join), ODD),
                 min_size=0, max_size=8)


def _line_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(data, "sklearn_csr", lambda handle: None)
    monkeypatch.setattr(files, "sklearn_csr", lambda handle: None)


def _rows(path: Path) -> list | str:
    try:
        return [(n, i.tolist(), v.tolist(), y) for n, i, v, y in data.svmlight_lines(path)]
    except DataError as exc:
        return f"error: {exc}"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=LINES, end=st.sampled_from(["\n", ""]))
def test_both_parsers_read_the_same_rows_or_the_same_error(lines: list[str], end: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.svm"
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    fast = _rows(path)
    with monkeypatch.context() as m:
        _line_parser(m)
        slow = _rows(path)
    assert fast == slow, (lines, fast, slow)
    with open(path, "rb") as handle:
        event("scikit-learn parsed it" if data.sklearn_csr(handle) is not None else "the line parser read it")


def _write(path: Path, rows: int, binary: bool, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as out:
        for _ in range(rows):
            idx = np.sort(rng.choice(200, int(rng.integers(1, 39)), replace=False)) + 1
            vals = np.full(idx.size, 0.16013) if binary else rng.choice([0.0, 0.3, 1.0, 0.75], idx.size)
            out.write(f"{int(rng.integers(0, 2))} " + " ".join(f"{i}:{v:g}" for i, v in zip(idx, vals, strict=True))
                      + "\n")


def _split_by_each(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """``open_svmlight`` on ``source`` with scikit-learn's parser, then with the line parser (a cache each); an
    error is returned as its message."""
    out: list = []
    for parser in ("sklearn", "lines"):
        monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path / parser))
        with monkeypatch.context() as m:
            if parser == "lines":
                _line_parser(m)
            try:
                out.append(files.open_svmlight(source, 4096))
            except DataError as exc:
                out.append(str(exc))
    return out


@pytest.mark.parametrize("binary", [True, False])
def test_the_split_copy_is_the_same_from_either_parser(binary: bool, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "d.svm"
    _write(source, 500, binary)
    (xa, *ra), (xb, *rb) = [(np.load(c.path), c.layout, c.columns, c.features, c.labels, c.ones)
                            for c in _split_by_each(source, tmp_path, monkeypatch)]
    assert np.array_equal(xa, xb) and xa.dtype == xb.dtype
    assert ra[:3] == rb[:3] and np.array_equal(ra[3], rb[3])
    assert (ra[4] is None and rb[4] is None) or np.array_equal(ra[4], rb[4])
    assert ra[0] == ("sparse" if binary else "dense")


def test_a_value_outside_the_unit_range_names_its_line_on_either_path(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "d.svm"
    source.write_text("1 3:0.5 4:1\n0 2:0.25\n1 3:1.5\n", encoding="utf-8")
    messages = _split_by_each(source, tmp_path, monkeypatch)
    assert messages[0] == messages[1] and f"{source}:3: feature value 1.5" in messages[0]


def test_a_large_file_is_read_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "d.svm"
    _write(source, 50, True)
    monkeypatch.setattr(data, "FAST_SVMLIGHT_BYTES", os.path.getsize(source) - 1)
    with open(source, "rb") as handle:
        assert data.sklearn_csr(handle) is None
    monkeypatch.setattr(data, "FAST_SVMLIGHT_BYTES", os.path.getsize(source))
    with open(source, "rb") as handle:
        assert data.sklearn_csr(handle) is not None
