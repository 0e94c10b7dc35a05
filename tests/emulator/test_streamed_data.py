"""Data in O(one step) memory: synthetic rows per DPU and chunk (a group of DPUs generates its own rows alone),
memory-mapped files sharded by index, and the memory pre-check's estimate (no term grows with the rows per DPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pimmodel.emulator import api
from pimmodel.emulator.config import Options
from pimmodel.emulator.data import SyntheticDense, SyntheticSparse, read_npy, read_svmlight_data, shard
from pimmodel.emulator.files import open_npy, open_svmlight
from pimmodel.specs import CRITEO, YFCC, Workload


@pytest.mark.parametrize("source", [SyntheticDense(6, 21, 32, seed=2), SyntheticSparse(6, 300, 2_000, seed=2)])
def test_a_part_generates_the_same_rows_as_the_whole(source) -> None:
    whole = source.rows(0, source.rows_per_dpu)
    part = source.part(2, 5)
    for lo, hi in ((0, 4), (4, 9), (9, source.rows_per_dpu)):  # ranges across chunk bounds, prefetched ahead
        x, y = part.rows(lo, hi)
        assert np.array_equal(x, whole[0][2:5, lo:hi]) and np.array_equal(y, whole[1][2:5, lo:hi])


def test_synthetic_dense_labels_are_balanced() -> None:
    _, y = SyntheticDense(4, 64, 16, prefetch=False).rows(0, 64)
    assert 0.4 < y.mean() < 0.6


@pytest.mark.slow
def test_synthetic_sparse_rows_hit_the_positive_rate() -> None:
    idx, ys = SyntheticSparse(1, 50_000, 100_000, prefetch=False).rows(0, 50_000)
    assert abs(ys.mean() - CRITEO.positive_fraction) < 0.005
    assert (np.sort(idx[0], axis=1)[:, 1:] != np.sort(idx[0], axis=1)[:, :-1]).all()  # 39 distinct indices a row


def test_npy_is_mapped_and_its_shards_equal_the_in_memory_ones(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arr = np.column_stack([rng.random((203, 20)), rng.integers(0, 2, 203)])
    arr[5, 3] = 1.0
    path = tmp_path / "rows.npy"
    np.save(path, arr)
    data = open_npy(path)
    sh, test, train_idx = data.shards(4, seed=1, shuffle=True, pad_multiple=32)
    xq, y = read_npy(path)
    expected = shard(xq[train_idx], y[train_idx], 4, "dense", 20, pad_multiple=32)
    x, ys = sh.rows(0, sh.rows_per_dpu)
    assert np.array_equal(x, expected.x) and np.array_equal(ys, expected.y)
    assert np.array_equal(sh.valid(0, sh.rows_per_dpu), expected.valid(0, expected.rows_per_dpu))
    assert np.array_equal(np.concatenate(list(test.blocks())), xq[test.index])
    part = sh.part(1, 3)
    assert np.array_equal(part.rows(10, 30)[0], x[1:3, 10:30])


def test_svmlight_is_split_once_into_a_mapped_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(1)
    lines = [f"{rng.integers(0, 2)} " + " ".join(f"{j}:1" for j in sorted(rng.choice(500, 10, replace=False)))
             for _ in range(120)]
    path = tmp_path / "rows.svm"
    path.write_text("\n".join(lines) + "\n")
    data = open_svmlight(path, 1 << 16)
    copies = list((tmp_path / "cache" / "shards").iterdir())
    assert data.layout == "sparse" and len(copies) == 1
    read = read_svmlight_data(path)
    assert data.features == read.features and np.array_equal(data.labels, read.labels)
    mapped = np.load(data.path, mmap_mode="r")
    assert all(set(mapped[i][mapped[i] > 0].tolist()) == set(read.rows[i].tolist()) for i in range(120))
    again = open_svmlight(path, 1 << 16)  # the copy is reused, not made again
    assert again.path == data.path and list((tmp_path / "cache" / "shards").iterdir()) == copies


def test_memory_estimate_does_not_grow_with_rows_and_full_yfcc_fits_a_few_gb() -> None:
    def estimate(spec, dpus: int, rows: int, optimizer: str = "ma-sgd") -> float:
        from dataclasses import replace

        w = Workload(replace(spec, rows_per_dpu_weak=rows), "lr", optimizer, dpus)
        return api.memory_estimate_bytes(w, Options(), processes=1)

    assert estimate(YFCC, 2048, 3328) == estimate(YFCC, 2048, 33280)
    assert estimate(YFCC, 2048, 3328) < 3e9  # the study's YFCC at 2,048 DPUs: it was refused at ~8.7 GB
    assert estimate(CRITEO, 2048, 196_608) == estimate(CRITEO, 2048, 2 * 196_608)
    # MA-SGD's DPUs start every step from the host's model (no N distinct models, it was 255.7 GB): the batch's
    # touched entries, 2,048 rows x 39 fields a DPU, each distinct in a file (whose law is not known), an int64
    # accumulator (16 B) and the shared update's keys, values, guards and clamps (52 B) each
    touched = 2048 * 2048 * 39 * (16 + 52)  # 11.1 GB
    assert touched < estimate(CRITEO, 2048, 196_608) < touched + 2e9
    # ADMM keeps N local int32 models, duals and corrections, and the update makes new models and duals: five
    state = 2048 * CRITEO.features * 4
    assert 5 * state < estimate(CRITEO, 2048, 196_608, "admm") < 5 * state + 8e9


def test_pre_check_reads_mem_available(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "MemTotal:       100 kB\nMemFree:          1 kB\nMemAvailable:    50 kB\n"
    import builtins
    import io

    real_open = builtins.open

    def fake_open(file, *args, **kwargs):
        return io.StringIO(text) if file == "/proc/meminfo" else real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    assert api._mem_available() == 50 * 1024
