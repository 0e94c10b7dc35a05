"""Where the data shipped inside the package lives (hardware specs, validation data, studies, calibration), and
where pimmodel caches what it computed (compiled equations, accuracy curves).

Everything a command needs is package data under ``pimmodel/data/`` (so a wheel works from any directory);
the project's top-level ``hardware_specs/``, ``validation/`` and ``studies/`` are links to these folders.
Environment variables point a folder elsewhere (e.g. a user's own specs).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
_OVERRIDES = {"hardware_specs": "PIMMODEL_HARDWARE_DIR", "validation": "PIMMODEL_VALIDATION_DIR",
              "studies": "PIMMODEL_STUDIES_DIR"}


def data_dir(name: str) -> Path:
    """The shipped folder ``name`` (``hardware_specs``, ``validation``, ``studies``, ``calibration``), or the
    folder its environment variable names."""
    env = _OVERRIDES.get(name)
    if env and os.environ.get(env):
        return Path(os.environ[env])
    return DATA_DIR / name


def cache_dir(name: str) -> Path:
    """The cache folder ``name`` (``compiled``, ``curves``) under ``$PIMMODEL_CACHE_DIR`` (default
    ``~/.cache/pimmodel``); deleting it only costs time."""
    base = os.environ.get("PIMMODEL_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "pimmodel")
    return Path(base) / name


SINGLE_THREAD_ENV = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                            "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}
"""One BLAS / OpenMP thread per worker process: the workers are the parallelism (one per core)."""


@contextmanager
def single_threaded_children() -> Iterator[None]:
    """Within the block, processes started inherit ``SINGLE_THREAD_ENV``; this process's environment is restored
    after it (a variable that was unset is unset again)."""
    saved = {k: os.environ.get(k) for k in SINGLE_THREAD_ENV}
    os.environ.update(SINGLE_THREAD_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def source_digest(patterns: tuple[str, ...]) -> str:
    """A 16-hex-digit hash of the package's source files matching ``patterns`` (globs relative to the package;
    names and contents, line endings normalized): the key of a cache whose entries those files decide."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            digest.update(path.name.encode())
            digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]
