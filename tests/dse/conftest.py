"""Fixtures of the DSE tests: the small study, a fresh storage per test, and a throw-away PostgreSQL
cluster (skipped only where no PostgreSQL server programs are installed)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pgcluster
import pytest

from pimmodel.dse.space import StudySpec, load_study

SMALL = Path(__file__).with_name("small.toml")
TINY = Path(__file__).with_name("tiny.toml")


@pytest.fixture(scope="session")
def small() -> StudySpec:
    return load_study(SMALL)


@pytest.fixture(scope="session")
def tiny() -> StudySpec:
    return load_study(TINY)


@pytest.fixture
def storage(tmp_path: Path) -> str:
    """The default kind of storage: a journal file."""
    return f"journal://{tmp_path / 'study.log'}"


@pytest.fixture
def sqlite_storage(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'study.db'}"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[pgcluster.Cluster]:
    bin_dir = pgcluster.server_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server programs (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin; "
                    "install the PostgreSQL server to run the PostgreSQL tests")
    cluster = pgcluster.start(bin_dir)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_storage(pg_cluster: pgcluster.Cluster) -> str:
    """A fresh database in the session's cluster (psycopg is required: the 'test' extra installs it)."""
    return pg_cluster.create_database(f"t_{uuid.uuid4().hex[:12]}")
