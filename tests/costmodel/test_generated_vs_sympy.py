"""The generated model source against sympy's own reference, bit for bit, on random points (hypothesis).

The reference is sympy's ``lambdify`` (its numpy printer) of every term's definition and every output, evaluated
term by term in definition order: the equations as written, with none of the generator's sharing or folding. The
generated ``vector`` function (one call, and through ``CompiledModel.__call__`` in blocks) and the ``scalar``
function must give exactly the same numbers at every point.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import model_inputs

from pimmodel.costmodel import codegen
from pimmodel.costmodel import compile as comp

KEYS = [("ma-sgd", "lr", "dense", "none", "study"), ("ga-sgd", "svm", "sparse", "none", "study"),
        ("admm", "svm", "sparse", "none", "corrected"), ("ma-sgd", "lr", "sparse", "ring", "study")]
POINTS = 6
"""Design points per example (the vector function takes them as one batch)."""


@functools.cache
def _reference(key: tuple[str, str, str, str, str]) -> tuple[tuple[str, ...], Callable[..., list[Any]]]:
    """(inputs, f): f(*inputs) evaluates sympy's lambdify of each term, then of each output."""
    import sympy

    from pimmodel.costmodel.registry import equation_set
    from pimmodel.costmodel.symbols import all_symbols

    terms, outs = equation_set(*key).outputs()
    symbols = all_symbols()
    term_list = list(terms)
    args = list(symbols.values()) + [t.symbol for t in term_list]
    steps = [sympy.lambdify(args, t.definition, modules="numpy") for t in term_list]
    outputs = comp.compiled(*key).outputs
    final = sympy.lambdify(args, [outs[o] for o in outputs], modules="numpy")

    def f(*inputs: Any) -> list[Any]:
        values = list(inputs) + [0.0] * len(term_list)
        for i, step in enumerate(steps):
            values[len(inputs) + i] = step(*values)
        return list(final(*values))

    return tuple(symbols), f


def _base() -> dict[str, float]:
    return model_inputs(dpus=2048, tasklets=16, rows_per_dpu=1000, local_batch=32, sync_every=4, torus_rows=32)


def _same(a: Any, b: Any) -> bool:
    """Equal numbers (NaN equals NaN), broadcast to one shape."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return bool(np.array_equal(a, b, equal_nan=True))


factors = st.lists(st.floats(0.25, 4.0, allow_nan=False), min_size=POINTS, max_size=POINTS)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(KEYS), st.data())
def test_vector_and_scalar_functions_are_the_sympy_reference(key, data) -> None:
    """Every input scaled by its own random factor per point (integers such as DPU and tasklet counts drawn as
    integers): the generated functions agree with the reference exactly."""
    inputs, reference = _reference(key)
    model = comp.compiled(*key)
    assert model.inputs == inputs
    base = _base()
    integers = {"dpus": (1, 4096), "tasklets": (1, 24), "rows_per_dpu": (1, 100_000), "local_batch": (1, 1024),
                "features": (1, 2_000_000), "nonzeros": (1, 200), "sync_every": (1, 64), "torus_rows": (1, 64),
                "dpus_per_rank": (1, 128), "chips_per_rank": (1, 16), "transfer_threads": (1, 64),
                "host_cores": (1, 256)}
    columns: dict[str, np.ndarray] = {}
    for name in inputs:
        if name in integers:
            lo, hi = integers[name]
            drawn = data.draw(st.lists(st.integers(lo, hi), min_size=POINTS, max_size=POINTS), label=name)
            columns[name] = np.asarray(drawn, dtype=float)
        else:
            columns[name] = base[name] * np.asarray(data.draw(factors, label=name))
    with np.errstate(all="ignore"):
        expected = reference(*(columns[name] for name in inputs))
        got = model.function(*(columns[name] for name in inputs))
        for name, e, g in zip(model.outputs, expected, got, strict=True):
            assert _same(g, e), (name, g, e)
        for p in range(POINTS):
            point = [float(columns[name][p]) for name in inputs]
            try:
                scalar = model.scalar_function(*point)
            except ZeroDivisionError:  # math raises where numpy divides to inf: no number to compare
                continue
            at_p = reference(*(np.float64(v) for v in point))
            for name, e, s in zip(model.outputs, at_p, scalar, strict=True):
                assert _same(s, e), (name, p, s, e)


@pytest.mark.parametrize("key", KEYS[:2])
def test_a_blocked_batch_is_the_same_as_one_call(key, monkeypatch) -> None:
    """``CompiledModel.__call__`` splits a large batch into blocks of rows; every output, varying or not, is the
    one call's, and a 2-D batch blocks along its first axis."""
    model = comp.compiled(*key)
    base = _base()
    rng = np.random.default_rng(1)
    batch = {**base, "dpu_clock_hz": rng.uniform(2e8, 8e8, (37, 1)), "dpus": rng.integers(1, 4096, (1, 5)) * 1.0,
             "launch_overhead_s": rng.uniform(1e-5, 1e-3, (37, 5))}
    one = {name: np.broadcast_to(np.asarray(r, dtype=float), (37, 5)) for name, r in
           zip(model.outputs, model.function(*(batch[n] for n in model.inputs)), strict=True)}
    monkeypatch.setattr(comp, "BLOCK_POINTS", 20)  # 4 rows of 5 per block
    assert comp._rows_per_block((37, 5)) == 4
    blocked = model(batch)
    for name in model.outputs:
        assert blocked[name].shape == (37, 5)
        np.testing.assert_array_equal(blocked[name], one[name])
    some = model(batch, outputs=("dpu_compute", "rounds"))
    assert set(some) == {"dpu_compute", "rounds"}
    np.testing.assert_array_equal(some["rounds"], one["rounds"])


def test_the_generator_shares_and_folds_what_the_plain_printing_repeats() -> None:
    """Fewer numpy calls than the plain printing (every repeated subexpression once), the same outputs."""
    import re

    key = KEYS[0]
    plain, shared = codegen.generate(key, optimize=False)[2], codegen.generate(key)[2]

    def calls(source: str, name: str) -> int:
        return len(re.findall(rf"\b{name}\(", source.split("def scalar")[0]))

    for name in ("minimum", "ceil", "heaviside"):
        assert calls(shared, name) < calls(plain, name)
    assert "(1 / 128)" not in shared and "(1 / 128)" in plain.replace("(1/128)", "(1 / 128)")
