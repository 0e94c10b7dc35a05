"""Fixtures of the DSE tests: the small study and a fresh SQLite storage per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from pimmodel.dse.space import StudySpec, load_study

SMALL = Path(__file__).with_name("small.toml")


@pytest.fixture(scope="session")
def small() -> StudySpec:
    return load_study(SMALL)


@pytest.fixture
def storage(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'study.db'}"
