"""Compile the symbolic equations once into vectorized numpy functions, and cache them on disk.

``lambdify(..., cse=True)`` turns each configuration's expressions into one numpy function of every
model input (hardware fields, workload symbols, coefficients), so a scaling curve or a whole batch of
design points is one call. Building and lambdifying the expressions costs about a second, so the
generated source is cached under ``$PIMMODEL_CACHE_DIR`` (default ``~/.cache/pimmodel``), keyed by a
hash of the model's own source files: a later process loads it without importing sympy.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..resources import cache_dir

log = logging.getLogger(__name__)

_MODEL_SOURCES = ("costmodel/*.py", "kernels/vocabulary.py", "kernels/pricing.py", "kernels/study.py",
                  "primitives.py", "phases.py", "specs/hardware.py", "specs/optimizers.py", "kernels/exchange.py")
"""Every source file whose change can change the compiled expressions (globs relative to the package)."""


@dataclass(frozen=True)
class CompiledModel:
    """A configuration's compiled expressions: call with arrays (or scalars) by input name."""

    key: tuple[str, str, str, str, str]
    """(optimizer, model, layout, link topology, kernel variant)"""
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    function: Callable[..., list[Any]]

    def __call__(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        try:
            args = [values[name] for name in self.inputs]
        except KeyError as exc:
            raise KeyError(f"cost model input {exc.args[0]!r} is missing") from None
        results = self.function(*args)
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        return {name: np.broadcast_to(np.asarray(r, dtype=float), shape) for name, r in zip(self.outputs, results,
                                                                                           strict=True)}


@lru_cache(maxsize=1)
def _source_key() -> str:
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for pattern in _MODEL_SOURCES:
        for path in sorted(root.glob(pattern)):
            digest.update(path.read_bytes())
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        digest.update(importlib.metadata.version("sympy").encode())
    return digest.hexdigest()[:16]


def _namespace() -> dict[str, Any]:
    return {**np.__dict__, "reduce": functools.reduce, "numpy": np}


def _generate(key: tuple[str, str, str, str, str]) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    # sympy and the equations load only on a cache miss: a cached model runs without them (the CLI's cold start)
    import inspect

    import sympy

    from .registry import expressions
    from .symbols import all_symbols

    exprs = expressions(*key)
    symbols = all_symbols()
    outputs = tuple(exprs)
    function = sympy.lambdify(list(symbols.values()), [exprs[o] for o in outputs], modules="numpy", cse=True,
                              docstring_limit=0)
    return tuple(symbols), outputs, inspect.getsource(function)


def _load(source: str) -> Callable[..., list[Any]]:
    namespace = _namespace()
    exec(compile(source, "<pimmodel-compiled>", "exec"), namespace)  # noqa: S102 - our own generated code
    return namespace["_lambdifygenerated"]


@functools.cache
def compiled(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
             ) -> CompiledModel:
    """The compiled model of one configuration, link topology and kernel variant (from the disk cache when the
    sources are unchanged). A cache entry that cannot be read whole (truncated by a full disk, edited, from
    another version) is rebuilt with one line of notice: the cache only ever costs time."""
    key = (optimizer, model, layout, topology, kernels)
    path = cache_dir("compiled") / _source_key() / f"{optimizer}-{model}-{layout}-{topology}-{kernels}.py"
    if path.exists():
        cached = _read_entry(path, key)
        if cached is not None:
            return cached
    log.info("compiling the cost model's equations for %s (about a second, once; cached in %s)",
             "/".join(key), path.parent)
    inputs, outputs, source = _generate(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(f"# {','.join(inputs)}\n# {','.join(outputs)}\n# sha256 {_digest(source)}\n#---\n{source}",
                       encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only home only costs speed
    return CompiledModel(key, inputs, outputs, _load(source))


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _read_entry(path: Path, key: tuple[str, str, str, str, str]) -> CompiledModel | None:
    """The cached model at ``path``, or None (with one warning line) when the entry is damaged: its header,
    its checksum over the source, or the source itself does not hold."""
    try:
        header, sep, source = path.read_text(encoding="utf-8").partition("\n#---\n")
        lines = header.splitlines()
        if not sep or len(lines) != 3 or not lines[2].startswith("# sha256 "):
            raise ValueError("its header is incomplete")
        if lines[2][len("# sha256 "):] != _digest(source):
            raise ValueError("its checksum does not match (truncated or changed)")
        inputs, outputs = tuple(lines[0][2:].split(",")), tuple(lines[1][2:].split(","))
        return CompiledModel(key, inputs, outputs, _load(source))
    except (OSError, ValueError, SyntaxError, KeyError) as exc:  # UnicodeDecodeError is a ValueError
        log.warning("compiled-equation cache entry %s is damaged (%s); rebuilding it", path, exc)
        return None
