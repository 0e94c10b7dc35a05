"""A throw-away PostgreSQL cluster for the tests: initdb into a temporary directory, start on a free
loopback port with trust authentication and the unix socket inside that directory, stop and remove it
afterwards (also when a test fails).

PostgreSQL refuses to run as root, so as root the server programs run as an unprivileged user (the
``postgres`` system user the server package creates, else ``nobody``) through ``runuser`` or ``setpriv``,
and the directory is handed to that user. The cluster runs with fsync off: it is thrown away anyway.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

USER = "pimmodel"
"""The database superuser initdb creates (trust authentication: no password)."""
START_TIMEOUT_S = 60


def server_bin() -> Path | None:
    """The directory holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/*/bin."""
    found = shutil.which("initdb"), shutil.which("pg_ctl")
    if all(found):
        return Path(os.path.realpath(str(found[0]))).parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    return None


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.name)
    except ValueError:
        return 0.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    """A running throw-away cluster; ``url(db)`` is the SQLAlchemy URL of one of its databases."""

    root: Path
    port: int
    bin_dir: Path
    runas: list[str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop", check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.runas, str(self.bin_dir / program), *args], capture_output=True, text=True,
                              check=check, timeout=START_TIMEOUT_S + 30, cwd=self.root)


def _runas() -> tuple[list[str], int | None, int | None]:
    """The command prefix that drops root (and the uid/gid that will own the cluster's directory)."""
    if os.geteuid() != 0:
        return [], None, None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", name, "--"], entry.pw_uid, entry.pw_gid
        if shutil.which("setpriv"):
            return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"], \
                entry.pw_uid, entry.pw_gid
    raise RuntimeError("running as root, but there is neither a 'postgres' nor a 'nobody' user to run "
                       "PostgreSQL as (initdb refuses to run as root)")


def start(bin_dir: Path) -> Cluster:
    """initdb + pg_ctl start on a free port; on any failure the directory is removed and the error says
    what the server logged."""
    runas, uid, gid = _runas()
    root = Path(tempfile.mkdtemp(prefix="pimmodel-pg-"))
    if uid is not None and gid is not None:
        os.chown(root, uid, gid)
    cluster = Cluster(root, 0, bin_dir, runas)
    try:
        cluster._run("initdb", "-D", str(root / "data"), "-U", USER, "-A", "trust", "-E", "UTF8", "--no-sync",
                     "--no-instructions")
        for attempt in range(3):  # the free port may be taken between choosing and binding it
            cluster.port = free_port()
            options = (f"-c listen_addresses=127.0.0.1 -p {cluster.port} -k {root} -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50")
            started = cluster._run("pg_ctl", "-D", str(root / "data"), "-l", str(root / "server.log"), "-w",
                                   "-t", str(START_TIMEOUT_S), "-o", options, "start", check=False)
            if started.returncode == 0:
                return cluster
            time.sleep(0.2 * (attempt + 1))
        log = (root / "server.log").read_text(errors="replace")[-2000:] if (root / "server.log").exists() else ""
        raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()} {log}")
    except BaseException:
        cluster.stop()
        raise
