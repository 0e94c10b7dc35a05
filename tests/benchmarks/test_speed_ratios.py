"""Issue 24's ratios, all from one run (on demand: python -m pytest tests/benchmarks/test_speed_ratios.py -s).

Every ratio is measured in paired, interleaved runs (A, B, A, B, ...; the median of each side), so a machine
loaded by other work slows both sides alike. Printed, not asserted beyond sanity: on a shared machine a timing
is a measurement to report, not a test to pass.
"""

from __future__ import annotations

import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pimmodel.api import predict
from pimmodel.calibration.result import load_calibration
from pimmodel.costmodel import codegen
from pimmodel.costmodel import compile as comp
from pimmodel.costmodel.evaluate import workload_inputs
from pimmodel.specs import CRITEO, YFCC, Workload, load_hardware

PREDICT = [sys.executable, "-m", "pimmodel", "predict", "--json"]
DEFAULT_KEYS = [(o, "lr", "dense", "none", "study") for o in ("ma-sgd", "ga-sgd", "admm")]


def _timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - t


def _paired(a, b, rounds: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(a())
        tb.append(b())
    return statistics.median(ta), statistics.median(tb)


def _best_per_call(f, n: int) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n


def test_cold_predict_against_warm() -> None:
    """Cold: an empty compile cache, the package's shipped sources as the README's own install command left them
    (``pip install -e '.[test]'`` writes every configuration into the checkout; a wheel holds the same); warm: a
    filled cache. Also a cold run with neither (a checkout whose edits changed the model: a local compile)."""
    shipped = comp.SHIPPED / comp.source_key()
    missing = [key for key in DEFAULT_KEYS if comp.where(key) != "shipped"]
    print(f"\nshipped by the install: {'every default configuration' if not missing else f'missing {missing}'}")
    for key in missing:  # a checkout edited since its install: write what the install would have
        comp.write_source(shipped, key, *codegen.generate(key))
    warm_dir = tempfile.mkdtemp(prefix="pim-warm-")
    env = {**os.environ, "PIMMODEL_CACHE_DIR": warm_dir}
    subprocess.run(PREDICT, check=True, capture_output=True, env=env)

    def cold() -> float:
        fresh = tempfile.mkdtemp(prefix="pim-cold-")
        try:
            return _timed(PREDICT, {**os.environ, "PIMMODEL_CACHE_DIR": fresh})
        finally:
            shutil.rmtree(fresh, ignore_errors=True)

    cold_s, warm_s = _paired(cold, lambda: _timed(PREDICT, env), 7)
    print(f"\ncold predict --json (shipped sources, empty cache) {cold_s:.3f} s, warm {warm_s:.3f} s: "
          f"ratio {cold_s / warm_s:.2f} (target <= 1.5)")
    moved = shipped.with_name(shipped.name + ".off")
    shipped.rename(moved)
    try:
        local_s, warm2_s = _paired(cold, lambda: _timed(PREDICT, env), 3)
    finally:
        moved.rename(shipped)
        shutil.rmtree(warm_dir, ignore_errors=True)
    print(f"cold predict --json with a local compile (no shipped source) {local_s:.3f} s, warm {warm2_s:.3f} s: "
          f"ratio {local_s / warm2_s:.2f}")
    assert cold_s > 0 and warm_s > 0


def test_single_prediction_against_the_compiled_call() -> None:
    hw = load_hardware("upmem-2556")
    w = Workload(YFCC, "lr", "ma-sgd", 2048)
    predict(w, hw)
    model = comp.compiled("ma-sgd", "lr", "dense", "none", "study")
    values = {**hw.numeric(), **load_calibration().coefficients_for(w), **workload_inputs(w)}
    args = [float(values[n]) for n in model.inputs]
    n = 3000
    api_s, scalar_s, vector_s = [], [], []
    for _ in range(7):  # interleaved
        api_s.append(_best_per_call(lambda: predict(w, hw), n))
        scalar_s.append(_best_per_call(lambda: model.scalar_function(*args), n))
        vector_s.append(_best_per_call(lambda: model.function(*args), n // 3))
    a, s, v = (statistics.median(x) for x in (api_s, scalar_s, vector_s))
    print(f"\npimmodel.predict(w, hw) {a * 1e6:.1f} us; the compiled scalar function {s * 1e6:.1f} us "
          f"(ratio {a / s:.2f}, target <= 2); the numpy function on scalars {v * 1e6:.1f} us "
          f"(predict / numpy function {a / v:.2f})")
    assert a > s


def test_vectorized_throughput_against_the_expanded_lambdify() -> None:
    """The generated numpy function against the previous build (sympy's lambdify of the expanded expressions,
    cse=True), on the same 1,000,000 design points; numbers agree to rounding."""
    import sympy

    from pimmodel.costmodel.registry import expressions
    from pimmodel.costmodel.symbols import all_symbols

    hw = load_hardware("upmem-2556")
    w = Workload(CRITEO, "svm", "ga-sgd", 2048)
    key = ("ga-sgd", "svm", "sparse", "none", "study")
    model = comp.compiled(*key)
    exprs = expressions(*key)
    old = sympy.lambdify(list(all_symbols().values()), [exprs[o] for o in model.outputs],
                         modules=[{"reduce": functools.reduce}, "numpy"], cse=True)
    rng = np.random.default_rng(0)
    n = 1_000_000
    values = {**hw.numeric(), **load_calibration().coefficients_for(w), **workload_inputs(w),
              "dpu_clock_hz": rng.uniform(200e6, 800e6, n), "push_bytes_per_s_per_rank": rng.uniform(1e9, 50e9, n),
              "pull_bytes_per_s_per_rank": rng.uniform(1e9, 50e9, n),
              "dma_read_latency_cycles": rng.uniform(20, 200, n), "launch_overhead_s": rng.uniform(1e-5, 1e-3, n)}
    args = [values[name] for name in model.inputs]
    new_out, old_out = model.function(*args), old(*args)
    for a, b in zip(new_out, old_out, strict=True):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=0)

    def t(f) -> float:  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        f(*args)
        return time.perf_counter() - start

    new_s, old_s = _paired(lambda: t(model.function), lambda: t(old), 5)
    print(f"\nvectorized {n:,} points: generated {n / new_s / 1e6:.1f} M points/s, expanded lambdify "
          f"{n / old_s / 1e6:.1f} M points/s (ratio {old_s / new_s:.2f}, target >= 1)")


def test_validate_time() -> None:
    env = {**os.environ}
    cmd = [sys.executable, "-m", "pimmodel", "validate", "--json"]
    subprocess.run(cmd, capture_output=True, env=env)
    times = [_timed_any(cmd, env) for _ in range(3)]
    print(f"\npimmodel validate: median {statistics.median(times):.2f} s (target <= 2 s)")


def _timed_any(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env)
    return time.perf_counter() - t


def test_shipped_folder_is_where_the_package_looks() -> None:
    assert Path(comp.__file__).resolve().parents[1] / "_compiled" == comp.SHIPPED
