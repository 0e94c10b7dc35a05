"""Emulator speed (run on demand: ``pytest tests/benchmarks/test_emulator_speed.py -s``).

Each measurement runs in a fresh Python process so its peak memory (``ru_maxrss`` of that process: data,
training and everything else) is not inflated by earlier tests. Timed is ``train`` only (data that is held
in memory is built before the clock starts; the YFCC-like source generates its rows lazily, so that epoch
includes data generation). Wall and CPU seconds are both printed: the YFCC-like source prefetches its next
block on a second thread, so its CPU time can exceed its wall time; the dense and Criteo-like runs are
single-threaded (BLAS threads pinned to 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_PRELUDE = """
import json, resource, sys, time
import numpy as np
sys.path.insert(0, {tests!r})
from support import train_config as TrainConfig
from pimmodel.emulator.data import SyntheticDense, shard, synthetic_sparse
from pimmodel.emulator.trainers import train

def timed(sh, cfg):
    wall, cpu = time.perf_counter(), time.process_time()
    train(sh, cfg)
    return time.perf_counter() - wall, time.process_time() - cpu

def report(**kw):
    kw["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(json.dumps(kw))
"""


def _run(body: str) -> dict[str, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _PRELUDE.replace("{tests!r}", repr(tests)) + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_dense_lr_ma_sgd_macs_per_s() -> None:
    r = _run("""
        rng = np.random.default_rng(0)
        x = (rng.random((16, 512, 4096)) * 2**31).astype(np.uint32)
        x[rng.random(x.shape) < 0.5] = 0
        sh = shard(x.reshape(-1, 4096), rng.integers(0, 2, 16 * 512), 16, "dense", 4096)
        macs = 2 * 16 * 512 * 4096  # dot product + gradient multiply per feature and sample
        runs = [timed(sh, TrainConfig(model="lr", optimizer="ma-sgd", batch_size=8, epochs=1)) for _ in range(3)]
        report(rates=[macs / w for w, _ in runs], cpu_rates=[macs / c for _, c in runs])
    """)
    rates = sorted(r["rates"])
    print(f"\ndense LR MA-SGD, 16 DPUs x 512 x 4,096, one thread: "
          f"{', '.join(f'{v / 1e6:.0f}' for v in r['rates'])} M multiply-accumulates/s (wall; first run cold), "
          f"{', '.join(f'{v / 1e6:.0f}' for v in r['cpu_rates'])} per CPU second; median {rates[1] / 1e6:.0f} M/s "
          f"(target >= 100 M/s)")
    assert rates[1] >= 100e6


def test_yfcc_epoch_64_dpus() -> None:
    r = _run("""
        sh = SyntheticDense(64, 3328, 4096, seed=0)
        wall, cpu = timed(sh, TrainConfig(model="lr", optimizer="ma-sgd", batch_size=8, epochs=1))
        report(wall=wall, cpu=cpu)
    """)
    print(f"\nYFCC-like epoch, 64 DPUs x 3,328 x 4,096 (data generated lazily, 1-block prefetch thread): "
          f"{r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, peak {r['peak_gb']:.2f} GB (targets < 60 s, < 4 GB)")
    assert r["wall"] < 60 and r["peak_gb"] < 4


def test_criteo_epoch_1m_samples() -> None:
    r = _run("""
        idx, y = synthetic_sparse(64 * 16384, 1_000_000, seed=0)
        sh = shard(idx, y, 64, "sparse", 1_000_000)
        cfg = TrainConfig(model="lr", optimizer="ma-sgd", batch_size=2048, learning_rate_shift=0, reg_shift=12)
        wall, cpu = timed(sh, cfg)
        report(wall=wall, cpu=cpu)
    """)
    print(f"\nCriteo-like epoch, 1,048,576 samples on 64 DPUs (b = 2048, l = 0, r = 12): {r['wall']:.1f} s wall, "
          f"{r['cpu']:.1f} s CPU, peak {r['peak_gb']:.2f} GB (targets < 30 s, < 4 GB)")
    assert r["wall"] < 30 and r["peak_gb"] < 4
