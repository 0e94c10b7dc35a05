"""Shared fixtures: the shipped hardware and small workloads."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

# Keep bytecode (and pytest's rewritten test modules) cached even where PYTHONDONTWRITEBYTECODE is set, as on
# these machines: otherwise every run re-parses and re-rewrites every module, which alone takes seconds.
sys.dont_write_bytecode = False

from pimmodel.specs import CRITEO, YFCC, HardwareSpec, Workload, load_hardware  # noqa: E402 (after the bytecode switch)


@pytest.fixture(scope="session")
def upmem() -> HardwareSpec:
    return load_hardware("upmem-2556")


@pytest.fixture(params=[(ds, m, o) for ds in (YFCC, CRITEO) for m in ("lr", "svm")
                        for o in ("ma-sgd", "ga-sgd", "admm")],
                ids=lambda p: f"{p[0].name}-{p[1]}-{p[2]}")
def study_workload(request: pytest.FixtureRequest) -> Workload:
    ds, model, optimizer = request.param
    return Workload(ds, model, optimizer, dpus=2048)


@pytest.fixture
def progress_lines() -> Iterator[list[str]]:
    """The progress logger's lines (a handler of its own: the CLI's configuration, made by earlier in-process
    commands, stops them from reaching the root logger)."""
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    logger = logging.getLogger("pimmodel.progress")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
