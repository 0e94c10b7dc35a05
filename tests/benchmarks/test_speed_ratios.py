"""Issue 24's and 29's ratios, all from one run (on demand: python -m pytest tests/benchmarks/test_speed_ratios.py -s;
issue 29's: ``-k "vectorized or single_prediction"``: points/s per preset against the older build, one design
point's latency against the plain printing of the terms).

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
    plain_vector, plain_scalar = comp._load(codegen.generate(model.key, optimize=False)[2])
    n = 3000
    api_s, scalar_s, vector_s, plain_s, plain_v = [], [], [], [], []
    for _ in range(7):  # interleaved
        api_s.append(_best_per_call(lambda: predict(w, hw), n))
        scalar_s.append(_best_per_call(lambda: model.scalar_function(*args), n))
        vector_s.append(_best_per_call(lambda: model.function(*args), n // 3))
        plain_s.append(_best_per_call(lambda: plain_scalar(*args), n))
        plain_v.append(_best_per_call(lambda: plain_vector(*args), n // 3))
    a, s, v, ps, pv = (statistics.median(x) for x in (api_s, scalar_s, vector_s, plain_s, plain_v))
    print(f"\npimmodel.predict(w, hw) {a * 1e6:.1f} us; the compiled scalar function {s * 1e6:.1f} us "
          f"(ratio {a / s:.2f}, target <= 2); the numpy function on scalars {v * 1e6:.1f} us "
          f"(predict / numpy function {a / v:.2f}); the plain printing (before issue 29): scalar function "
          f"{ps * 1e6:.1f} us, numpy function on scalars {pv * 1e6:.1f} us")
    assert a > s


PRESETS = {"YFCC": (YFCC, ("ma-sgd", "lr", "dense", "none", "study")),
           "Criteo": (CRITEO, ("ga-sgd", "svm", "sparse", "none", "study"))}


def _batch(preset: str, n: int) -> tuple[comp.CompiledModel, dict[str, object]]:
    """A preset's configuration on upmem-2556 with five hardware fields drawn for ``n`` design points."""
    dataset, key = PRESETS[preset]
    hw = load_hardware("upmem-2556")
    w = Workload(dataset, key[1], key[0], 2048)
    rng = np.random.default_rng(0)
    values = {**hw.numeric(), **load_calibration().coefficients_for(w), **workload_inputs(w),
              "dpu_clock_hz": rng.uniform(200e6, 800e6, n), "push_bytes_per_s_per_rank": rng.uniform(1e9, 50e9, n),
              "pull_bytes_per_s_per_rank": rng.uniform(1e9, 50e9, n),
              "dma_read_latency_cycles": rng.uniform(20, 200, n), "launch_overhead_s": rng.uniform(1e-5, 1e-3, n)}
    return comp.compiled(*key), values


def _older_build(key: tuple[str, str, str, str, str], outputs: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """The build of 2026-11-30 (compile.py before 60dd5c9): sympy's lambdify of the expanded expressions, cse=True,
    called as its CompiledModel called it (one call, outputs broadcast)."""
    import sympy

    from pimmodel.costmodel.registry import expressions
    from pimmodel.costmodel.symbols import all_symbols

    exprs = expressions(*key)
    symbols = all_symbols()
    function = sympy.lambdify(list(symbols.values()), [exprs[o] for o in outputs],
                              modules=[{"reduce": functools.reduce}, "numpy"], cse=True, docstring_limit=0)

    def call(values):  # type: ignore[no-untyped-def]
        args = [values[name] for name in symbols]
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        return {name: np.broadcast_to(np.asarray(r, dtype=float), shape) for name, r in
                zip(outputs, function(*args), strict=True)}

    return call


def _plain_source(key: tuple[str, str, str, str, str]):  # type: ignore[no-untyped-def]
    """The generated numpy function as printed before issue 29 (every term as it stands, no shared
    subexpressions), called in one piece."""
    inputs, _, source = codegen.generate(key, optimize=False)
    vector, _ = comp._load(source)
    return lambda values: vector(*(values[name] for name in inputs))


def _calls(source: str) -> dict[str, int]:
    import re

    body = source.split("def scalar")[0]
    return {f: len(re.findall(rf"\b{f}\(", body)) for f in ("minimum", "maximum", "ceil", "floor", "heaviside")}


def test_vectorized_throughput_against_the_older_build() -> None:
    """Per preset, 1,000,000 design points through ``CompiledModel.__call__`` (what evaluate, the DSE and scale
    call) against the older build (expanded lambdify) and the plain printing of the terms, interleaved in one run;
    every output agrees with the older build to rounding and with the plain printing exactly."""
    for preset in PRESETS:
        _throughput(preset, 1_000_000)


def _throughput(preset: str, n: int) -> None:
    key = PRESETS[preset][1]
    model, values = _batch(preset, n)
    older, plain = _older_build(key, model.outputs), _plain_source(key)
    new_out, old_out, plain_out = model(values), older(values), plain(values)
    raw_out = model.function(*(values[name] for name in model.inputs))
    for i, name in enumerate(model.outputs):
        np.testing.assert_allclose(new_out[name], old_out[name], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(new_out[name], np.broadcast_to(np.asarray(plain_out[i], dtype=float),
                                                                      new_out[name].shape))
        np.testing.assert_array_equal(new_out[name], np.broadcast_to(np.asarray(raw_out[i], dtype=float),
                                                                      new_out[name].shape))

    def t(f) -> float:  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        f(values)
        return time.perf_counter() - start

    def unblocked(v) -> object:  # type: ignore[no-untyped-def]
        return model.function(*(v[name] for name in model.inputs))

    times = {"generated": [], "one call": [], "older": [], "plain": []}
    for _ in range(7):  # interleaved: a loaded machine slows every side alike
        times["generated"].append(t(model))
        times["older"].append(t(older))
        times["one call"].append(t(unblocked))
        times["plain"].append(t(plain))
    m = {k: statistics.median(v) for k, v in times.items()}
    rate = {k: n / s / 1e6 for k, s in m.items()}
    print(f"\n{preset} ({'/'.join(key)}), {n:,} points: generated {rate['generated']:.1f} M points/s, "
          f"older build (expanded lambdify) {rate['older']:.1f} M/s: ratio {m['older'] / m['generated']:.2f} "
          f"(target >= 1; goal >= 10 M/s); the generated function in one call (no blocks) "
          f"{rate['one call']:.1f} M/s (ratio {m['older'] / m['one call']:.2f}); the plain printing "
          f"{rate['plain']:.1f} M/s (ratio {m['older'] / m['plain']:.2f})")
    _, _, plain_source = codegen.generate(key, optimize=False)
    print(f"  numpy calls in the generated function: {_calls(codegen.generate(key)[2])}, plain printing "
          f"{_calls(plain_source)}")
    assert all(v > 0 for v in m.values())


def test_validate_time() -> None:
    env = {**os.environ}
    cmd = [sys.executable, "-m", "pimmodel", "validate", "--json"]
    subprocess.run(cmd, capture_output=True, env=env)
    times = [_timed_any(cmd, env) for _ in range(3)]
    print(f"\npimmodel validate: median {statistics.median(times):.2f} s (target <= 2 s)")


def test_collection_time() -> None:
    """Issue 29's test-collection figure (goal 3 s): collecting the default tier, paired with the interpreter's bare
    pytest start (``--version``) in the same run."""
    env = {**os.environ}
    root = Path(__file__).resolve().parents[2]
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(root / "tests")]
    bare = [sys.executable, "-m", "pytest", "--version"]
    subprocess.run(collect, capture_output=True, env=env, cwd=root)
    t_collect, t_bare = _paired(lambda: _timed_any(collect, env), lambda: _timed_any(bare, env), 3)
    print(f"\ntest collection: median {t_collect:.2f} s (goal <= 3 s); pytest's bare start {t_bare:.2f} s "
          f"(ratio {t_collect / t_bare:.1f})")
    assert t_collect > t_bare


def _timed_any(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env)
    return time.perf_counter() - t


def test_shipped_folder_is_where_the_package_looks() -> None:
    assert Path(comp.__file__).resolve().parents[1] / "_compiled" == comp.SHIPPED
