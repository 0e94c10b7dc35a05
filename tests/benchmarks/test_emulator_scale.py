"""Emulator at scale (run on demand: ``pytest tests/benchmarks/test_emulator_scale.py -s``).

- Worker processes vs one process on YFCC-like data at 256 DPUs (3,328 rows x 4,096 features, one epoch of LR
  MA-SGD), paired: the two engines alternate in one run, so both see the same load of a shared machine. Printed:
  wall seconds of each and the speed-up, and the CPU seconds of the busiest worker (the critical path a quiet
  machine would show). Bit-identity is asserted.
- The dense kernels' arithmetic vs a plain int64 numpy version of the same arithmetic (``reference_step``: the
  same bits, written the obvious way), on the same in-memory batch, paired and interleaved.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_RUN = """
import json, sys, time
import numpy as np
sys.path.insert(0, {tests!r})
from support import train_config
from pimmodel.emulator.config import Options
from pimmodel.emulator.data import SyntheticDense
from pimmodel.emulator.engine import run

if __name__ == "__main__":
    sh = SyntheticDense({dpus}, {rows}, 4096, seed=0)
    cfg = train_config("lr", "ma-sgd", epochs=1)
    out = {{"serial": [], "process": [], "worker_cpu": []}}
    ref = None
    for rep in range({pairs}):
        for engine in (("serial", "process") if rep % 2 == 0 else ("process", "serial")):
            wall = time.perf_counter()
            r = run(sh, cfg, Options(engine=engine, workers=2))
            out[engine].append(time.perf_counter() - wall)
            if engine == "process":
                out["worker_cpu"].append(max(r.worker_cpu_s))
            bits = (r.weights.coef.tobytes(), r.weights.intercept)
            assert ref is None or bits == ref, "engines differ"
            ref = bits
    print(json.dumps(out))
"""


def _python(code: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_worker_processes_speed_up_yfcc_at_256_dpus() -> None:
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = _python(_RUN.format(tests=tests, dpus=256, rows=3328, pairs=2))
    serial, process = sorted(r["serial"]), sorted(r["process"])
    speedup = [s / p for s, p in zip(r["serial"], r["process"], strict=True)]
    print(f"\nYFCC-like LR MA-SGD, 256 DPUs x 3,328 x 4,096, one epoch, paired: one process "
          f"{', '.join(f'{v:.1f}' for v in r['serial'])} s, two workers {', '.join(f'{v:.1f}' for v in r['process'])} s"
          f" wall; speed-up {', '.join(f'{v:.2f}' for v in speedup)}x (target >= 1.6x); busiest worker "
          f"{', '.join(f'{v:.1f}' for v in r['worker_cpu'])} CPU-s; bit-identical")
    assert serial and process


_ARITH = """
import json, time
import numpy as np
from pimmodel.emulator import fixedpoint as fx
from pimmodel.emulator import kernels as kn
from pimmodel.emulator.lut import sigmoid_q31

def reference_step(w, bias, x, y, cfg, batch_log2):
    # the dense LR kernel and its local update written the plain way, in int64 numpy
    xi = x.astype(np.int64)
    z = ((xi * w[:, None, :]) >> 31).sum(axis=2) + bias[:, None]
    e = sigmoid_q31(z) - y.astype(np.int64) * fx.ONE
    g = (xi * e[:, :, None]) >> (31 + cfg.learning_rate_shift)
    acc = np.where(g == -1, 0, g).sum(axis=1)
    bacc = fx.shift_guard(e, cfg.learning_rate_shift).sum(axis=1)
    acc = fx.wrap_int32(acc)
    step = fx.guard(fx.wrap_int32(acc >> batch_log2))
    new_w = fx.clamp(w - step - fx.shift_guard(w, cfg.decay_shift))
    return new_w, fx.clamp64(bias - fx.shift_guard(bacc, batch_log2))

def emulator_step(w, bias, x, y, cfg, batch_log2):
    acc, bacc, _ = kn.dense_batch_fixed(w, bias, x, y, cfg)
    new_w, new_b, _ = kn.dense_update_fixed(w, bias, acc, bacc, batch_log2, cfg)
    return new_w, new_b

rng = np.random.default_rng(0)
n, b, d = 64, 8, 4096
x = (rng.random((n, b, d)) * 2**31).astype(np.uint32)
x[rng.random(x.shape) < 0.5] = 0
y = rng.integers(0, 2, (n, b)).astype(np.uint8)
w = rng.integers(-2**26, 2**26, (n, d)).astype(np.int64)
bias = rng.integers(-2**20, 2**20, n).astype(np.int64)
cfg = kn.KernelConfig("lr", 6, 12)
a, c = emulator_step(w, bias, x, y, cfg, 3), reference_step(w, bias, x, y, cfg, 3)
assert np.array_equal(a[0], c[0]) and np.array_equal(a[1], c[1]), "the reference is not the same arithmetic"
times = {"emulator": [], "reference": []}
for rep in range(7):
    for name, fn in ((("emulator", emulator_step), ("reference", reference_step)) if rep % 2 == 0
                     else (("reference", reference_step), ("emulator", emulator_step))):
        t = time.perf_counter()
        for _ in range(3):
            fn(w, bias, x, y, cfg, 3)
        times[name].append((time.perf_counter() - t) / 3)
print(json.dumps(times))
"""


def test_dense_arithmetic_against_the_plain_int64_reference() -> None:
    r = _python(textwrap.dedent(_ARITH))
    emu, ref = sorted(r["emulator"]), sorted(r["reference"])
    ratio = emu[len(emu) // 2] / ref[len(ref) // 2]
    print(f"\ndense LR step + local update, 64 DPUs x 8 x 4,096 (one thread, paired, median of 7): emulator "
          f"{emu[len(emu) // 2] * 1e3:.1f} ms, plain int64 numpy {ref[len(ref) // 2] * 1e3:.1f} ms: "
          f"{ratio:.2f}x (target <= 1.5x)")
    assert ratio > 0
