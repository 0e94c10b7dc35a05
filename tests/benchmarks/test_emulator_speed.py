"""Emulator speed (run on demand: ``pytest tests/benchmarks/test_emulator_speed.py -s``)."""

import resource
import time

import numpy as np

from pimmodel.emulator.data import SyntheticDense, shard, synthetic_sparse
from pimmodel.emulator.trainers import TrainConfig, train


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def test_dense_lr_ma_sgd_macs_per_s() -> None:
    rng = np.random.default_rng(0)
    x = (rng.random((16, 512, 4096)) * 2**31).astype(np.uint32)
    x[rng.random(x.shape) < 0.5] = 0
    sh = shard(x.reshape(-1, 4096), rng.integers(0, 2, 16 * 512), 16, "dense", 4096)
    t = time.perf_counter()
    train(sh, TrainConfig(model="lr", optimizer="ma-sgd", batch_size=8, epochs=1))
    macs = 2 * 16 * 512 * 4096  # dot product + gradient multiply per feature and sample
    rate = macs / (time.perf_counter() - t)
    print(f"\ndense LR MA-SGD: {rate / 1e6:.0f} M multiply-accumulates/s")
    assert rate >= 100e6


def test_yfcc_epoch_64_dpus() -> None:
    sh = SyntheticDense(64, 3328, 4096, seed=0)
    t = time.perf_counter()
    train(sh, TrainConfig(model="lr", optimizer="ma-sgd", batch_size=8, epochs=1))
    took = time.perf_counter() - t
    print(f"\nYFCC-like epoch, 64 DPUs x 3,328 x 4,096: {took:.1f} s, peak {_peak_gb():.2f} GB")
    assert took < 60 and _peak_gb() < 4


def test_criteo_epoch_1m_samples() -> None:
    idx, y = synthetic_sparse(64 * 16384, 1_000_000, seed=0)
    sh = shard(idx, y, 64, "sparse", 1_000_000)
    t = time.perf_counter()
    train(sh, TrainConfig(model="lr", optimizer="ma-sgd", batch_size=2048, learning_rate_shift=0, reg_shift=12))
    took = time.perf_counter() - t
    print(f"\nCriteo-like epoch, 1,048,576 samples on 64 DPUs: {took:.1f} s, peak {_peak_gb():.2f} GB")
    assert took < 30 and _peak_gb() < 4
