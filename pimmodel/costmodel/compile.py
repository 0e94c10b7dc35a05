"""Compile the equations once into vectorized numpy functions (and a scalar ``math`` one), and cache them on disk.

``codegen.generate`` writes each configuration's terms as assignments in definition order, in two functions of
every model input (hardware fields, workload symbols, coefficients): ``vector`` (numpy, arrays broadcast: a
scaling curve or a whole batch of design points is one call) and ``scalar`` (floats, one design point). The
source is keyed by a hash of the model's own source files and looked up, in order, in the sources a wheel ships
(``pimmodel/_compiled/<hash>/``, written by ``setup.py`` through ``write_all``), in ``$PIMMODEL_CACHE_DIR`` (default
``~/.cache/pimmodel``), and only then generated (sympy loads only then): an installed model never compiles, and a
checkout compiles what its edits changed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..resources import cache_dir, source_digest

log = logging.getLogger(__name__)

_MODEL_SOURCES = ("costmodel/*.py", "kernels/vocabulary.py", "kernels/pricing.py", "kernels/study.py",
                  "primitives.py", "phases.py", "specs/hardware.py", "specs/optimizers.py", "kernels/exchange.py",
                  "specs/workload.py", "specs/__init__.py", "specs/bank_simd.py", "specs/architectures.py")
"""Every source file whose change can change the generated source (globs relative to the package)."""

SHIPPED = Path(__file__).resolve().parents[1] / "_compiled"
"""Where a wheel ships the generated sources of every configuration (``<source hash>/<configuration>.model``:
Python source under a suffix that linters and type checkers leave alone)."""

@dataclass(frozen=True)
class CompiledModel:
    """A configuration's compiled expressions: call with arrays (or scalars) by input name."""

    key: tuple[str, str, str, str, str]
    """(optimizer, model, layout, link topology, kernel variant)"""
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    function: Callable[..., list[Any]]
    """numpy, arrays broadcast"""
    scalar_function: Callable[..., list[Any]]
    """floats only (``math`` and builtins): one design point"""

    def __call__(self, values: Mapping[str, Any], outputs: tuple[str, ...] | None = None
                 ) -> dict[str, np.ndarray]:
        """Every output (or only ``outputs``) broadcast to the inputs' common shape."""
        try:
            args = [values[name] for name in self.inputs]
        except KeyError as exc:
            raise KeyError(f"cost model input {exc.args[0]!r} is missing") from None
        shape = np.broadcast_shapes(*(np.shape(a) for a in args if not isinstance(a, (int, float))))
        wanted = self.outputs if outputs is None else outputs
        index = self._index()
        rows = _rows_per_block(shape)
        if rows is None:
            results = self.function(*args)
            return {name: np.broadcast_to(np.asarray(results[index[name]], dtype=float), shape) for name in wanted}
        # a large batch in blocks of rows along its first axis: each block's temporaries stay in the CPU's cache
        # (every point is computed by the same operations as in one call, so the same bits)
        args = [a if isinstance(a, (int, float)) else np.asarray(a) for a in args]
        split = [isinstance(a, np.ndarray) and a.ndim == len(shape) and a.shape[0] != 1 for a in args]
        out: dict[str, np.ndarray] = {}
        for start in range(0, shape[0], rows):
            block = slice(start, start + rows)
            results = self.function(*(a[block] if s else a for a, s in zip(args, split, strict=True)))
            if not out:  # an output the blocked inputs do not reach is one value (or row), broadcast as above
                for name in wanted:
                    r = results[index[name]]
                    varies = np.ndim(r) == len(shape) and np.shape(r)[0] == min(rows, shape[0])
                    out[name] = np.empty(shape) if varies else np.broadcast_to(np.asarray(r, dtype=float), shape)
            for name in wanted:
                if out[name].flags.writeable:
                    out[name][block] = results[index[name]]
        return out

    def scalar(self, values: Mapping[str, Any]) -> dict[str, float]:
        """Every output at one design point (every input a number), as floats."""
        try:
            args = [float(values[name]) for name in self.inputs]
        except KeyError as exc:
            raise KeyError(f"cost model input {exc.args[0]!r} is missing") from None
        return dict(zip(self.outputs, map(float, self.scalar_function(*args)), strict=True))

    def _index(self) -> dict[str, int]:
        return _output_index(self.outputs)


BLOCK_POINTS = 32768
"""Points per block of a large vectorized call (a block's temporaries, 256 KiB each, stay in the CPU's cache; one
call over 10^6 points walked main memory once per operation: 2.5x slower)."""


def _rows_per_block(shape: tuple[int, ...]) -> int | None:
    """Rows of the first axis per block, or None where one call is best (a small or scalar batch)."""
    if not shape:
        return None
    per_row = math.prod(shape[1:])
    if per_row == 0 or shape[0] * per_row < 2 * BLOCK_POINTS:
        return None
    rows = BLOCK_POINTS // per_row
    return rows if 2 <= rows < shape[0] else None


@functools.cache
def _output_index(outputs: tuple[str, ...]) -> dict[str, int]:
    return {name: i for i, name in enumerate(outputs)}


@lru_cache(maxsize=1)
def source_key() -> str:
    """The hash of the model's source files that keys every generated source."""
    return source_digest(_MODEL_SOURCES)


_source_key = source_key  # the name an older caller knows


def _load(source: str) -> tuple[Callable[..., list[Any]], Callable[..., list[Any]]]:
    code = compile(source, "<pimmodel-compiled>", "exec")
    vector: dict[str, Any] = {**np.__dict__, "numpy": np}
    scalar: dict[str, Any] = {**math.__dict__, "math": math}
    exec(code, vector)  # noqa: S102 - our own generated code
    exec(code, scalar)  # noqa: S102 - the same source; its scalar function sees math, not numpy
    return vector["vector"], scalar["scalar"]


def _file(folder: Path, key: tuple[str, str, str, str, str]) -> Path:
    return folder / f"{'-'.join(key)}.model"


def write_source(folder: Path, key: tuple[str, str, str, str, str], inputs: tuple[str, ...],
                 outputs: tuple[str, ...], source: str) -> None:
    """Write one generated source atomically (header: inputs, outputs)."""
    path = _file(folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(f"# {','.join(inputs)}\n# {','.join(outputs)}\n# sha256 {_digest(source)}\n#---\n{source}",
                   encoding="utf-8")
    tmp.replace(path)


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _read(path: Path) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
    """The (inputs, outputs, source) stored at ``path``; None when there is none, or (with one warning line) when
    the entry is damaged: its header, its checksum over the source or its format does not hold."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        log.warning("compiled-equation cache entry %s is damaged (cannot be read: %s); rebuilding it", path, exc)
        return None
    header, sep, source = text.partition("\n#---\n")
    from .codegen import FORMAT

    lines = header.splitlines()
    if not sep or len(lines) != 3 or not lines[2].startswith("# sha256 "):
        why = "its header is incomplete"
    elif lines[2][len("# sha256 "):] != _digest(source):
        why = "its checksum does not match (truncated or changed)"
    elif f"format {FORMAT}," not in source.partition("\n")[0]:
        return None  # an older format: regenerated without a word, as a changed source would be
    else:
        return tuple(lines[0][2:].split(",")), tuple(lines[1][2:].split(",")), source
    log.warning("compiled-equation cache entry %s is damaged (%s); rebuilding it", path, why)
    return None


def where(key: tuple[str, str, str, str, str]) -> str:
    """Where ``key``'s source would come from now: ``shipped``, ``cache`` or ``generate``."""
    if _file(SHIPPED / source_key(), key).exists():
        return "shipped"
    if _file(cache_dir("compiled") / source_key(), key).exists():
        return "cache"
    return "generate"


@functools.cache
def compiled(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study"
             ) -> CompiledModel:
    """The compiled model of one configuration, link topology and kernel variant (shipped with the package or
    cached on disk when the sources are unchanged; generated otherwise). A cache entry that cannot be read whole
    (truncated by a full disk, edited, from another version) is rebuilt with one line of notice: the cache only
    ever costs time."""
    key = (optimizer, model, layout, topology, kernels)
    cached = cache_dir("compiled") / source_key()
    for folder in (SHIPPED / source_key(), cached):
        found = _read(_file(folder, key))
        if found is not None:
            inputs, outputs, source = found
            return CompiledModel(key, inputs, outputs, *_load(source))
    # sympy and the equations load only here: a shipped or cached model runs without them (the CLI's cold start)
    from .codegen import generate

    log.info("generating the cost model's equations for %s (once; cached in %s)", "/".join(key), cached)
    inputs, outputs, source = generate(key)
    with contextlib.suppress(OSError):  # a read-only home only costs speed
        write_source(cached, key, inputs, outputs, source)
    return CompiledModel(key, inputs, outputs, *_load(source))


def _write_one(target: Path, key: tuple[str, str, str, str, str]) -> None:
    write_source(target / source_key(), key, *generate_source(key))


def generate_source(key: tuple[str, str, str, str, str]) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    from .codegen import generate

    return generate(key)


def write_all(target: Path, processes: int = 1) -> int:
    """Write every configuration's generated source under ``target/<source hash>/`` (what a wheel ships, and what
    an editable install keeps in the checkout), on ``processes`` processes; returns how many."""
    from .codegen import configurations

    keys = configurations()
    if processes <= 1:
        for key in keys:
            _write_one(target, key)
        return len(keys)
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(processes) as pool:  # sympy is single-threaded: one configuration per process
        list(pool.map(_write_one, [target] * len(keys), keys, chunksize=4))
    return len(keys)
