"""No password given in a URL reaches any output: records, -o files, logs, errors, stored studies.

Every command that takes a URL (``explore`` and ``explore show`` ``--storage`` or $PIMMODEL_STORAGE, ``emulate
--address``) is run as a user runs it (a subprocess, so the command line recorded is the real one), and every
file and stream the run produced is searched for the password."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pimmodel.redact import drop_password, mask, mask_argv, mask_url

TINY = Path(__file__).with_name("tiny.toml")
SECRET = "Zq8sEcReT4u"


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pimmodel", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=300)


def _no_secret_anywhere(run: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert SECRET not in run.stdout and SECRET not in run.stderr, (run.stdout[-500:], run.stderr[-500:])
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("url", [
    f"postgresql+psycopg://user:{SECRET}@host:5432/db",
    f"postgresql://user:{SECRET}@host/db?sslmode=require",
    f"mysql+pymysql://root:{SECRET}@127.0.0.1/optuna",
    f"redis://:{SECRET}@localhost:6379/0",
    f"ray://admin:{SECRET}@10.0.0.1:10001",
    f"postgresql://user:{SECRET}@x@host/db",  # a password holding '@' parses as part of the host
])
def test_every_url_form_is_masked_and_kept_otherwise(url: str) -> None:
    shown = mask_url(url)
    assert SECRET not in shown and "***" in shown
    assert shown.split("@")[-1] == url.split("@")[-1]  # host, port, database and query unchanged
    assert SECRET not in drop_password(url) and "***" not in drop_password(url)
    assert SECRET not in mask(f"error: cannot open {url}: connection refused")
    assert SECRET not in mask_argv(["pimmodel", "explore", "s.toml", f"--storage={url}"])


@pytest.mark.parametrize("text", ["sqlite:///studies.db", "studies.log", "postgresql+psycopg://user@host/db",
                                  "see http://127.0.0.1:8080/dashboard/ now", "user@example.com: 3 trials"])
def test_text_without_a_password_is_unchanged(text: str) -> None:
    assert mask(text) == text and mask_url(text) == text


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=6, max_size=30)
       .filter(lambda s: "@" not in s and "/" not in s and "'" not in s and '"' not in s))
def test_no_password_survives_masking(password: str) -> None:
    from urllib.parse import quote

    for raw in (password, quote(password, safe="")):
        url = f"postgresql+psycopg://user:{raw}@db.example:5432/studies"
        assert raw not in mask(f"storage {url} is down").replace("db.example:5432/studies", "")


def test_a_refused_connection_shows_no_password(tmp_path: Path) -> None:
    """The driver's error names the URL it was given; the one-line error and the log file must not."""
    url = f"postgresql+psycopg://pimmodel:{SECRET}@127.0.0.1:1/none"
    run = _run(["explore", str(TINY), "--storage", url, "--trials", "1", "--log-file", str(tmp_path / "log.txt")],
               tmp_path)
    assert run.returncode == 2 and "error:" in run.stderr
    _no_secret_anywhere(run, tmp_path)
    by_env = _run(["explore", "show", str(TINY)], tmp_path, {"PIMMODEL_STORAGE": url})
    assert by_env.returncode == 2
    _no_secret_anywhere(by_env, tmp_path)


def test_a_ray_address_shows_no_password(tmp_path: Path) -> None:
    run = _run(["emulate", "--engine", "ray", "--address", f"ray://admin:{SECRET}@127.0.0.1:1", "--dpus", "4",
                "--epochs", "1", "--log-file", str(tmp_path / "log.txt")], tmp_path)
    assert run.returncode != 0
    _no_secret_anywhere(run, tmp_path)


@pytest.mark.slow
def test_a_study_run_on_postgres_stores_no_password(postgres_storage: str, tmp_path: Path) -> None:
    """explore and explore show with the password in --storage: stdout, stderr, the log file, the -o files
    (JSON, CSV) and every attribute of the stored study and its trials."""
    import optuna

    url = postgres_storage.replace("://pimmodel@", f"://pimmodel:{SECRET}@")
    assert SECRET in url  # the cluster trusts loopback: the password is taken and ignored
    log = tmp_path / "log.txt"
    ran = _run(["explore", str(TINY), "--storage", url, "--trials", "60", "--json", "-o", str(tmp_path / "run.json"),
                "--log-file", str(log), "-v"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["provenance"]["command"].count("***") == 1
    _no_secret_anywhere(ran, tmp_path)
    shown = _run(["explore", "show", str(TINY), "--storage", url, "-o", str(tmp_path / "front.csv"),
                  "--log-file", str(log)], tmp_path)
    assert shown.returncode == 0, shown.stderr
    _no_secret_anywhere(shown, tmp_path)
    study = optuna.load_study(study_name="tiny", storage=postgres_storage)
    stored = json.dumps([study.user_attrs, [t.user_attrs for t in study.trials]], default=str)
    assert "explore" in stored and SECRET not in stored


def test_the_one_line_error_masks_a_url_in_its_message(capsys: pytest.CaptureFixture[str]) -> None:
    """``fail`` is the CLI's only error path: a message naming a URL with a password prints it masked."""
    from pimmodel.cli.app import fail

    with pytest.raises(SystemExit) as stopped:
        fail(f"cannot open storage postgresql://u:{SECRET}@db:5432/x: refused.")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert SECRET not in err and "postgresql://u:***@db:5432/x: refused." in err


def test_log_lines_are_masked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log line naming a URL with a password (a storage being opened) reaches stderr and the log file masked."""
    import logging

    from pimmodel.cli import logs

    log_file = tmp_path / "log.txt"
    logs.configure(verbose=1, log_file=log_file)
    try:
        logging.getLogger("pimmodel.dse").warning("connecting to mysql://root:%s@h/db", SECRET)
    finally:
        logs.configure()  # back to stderr only (closes the file handler)
    text = log_file.read_text()
    assert SECRET not in text and "mysql://root:***@h/db" in text
    assert SECRET not in capsys.readouterr().err
