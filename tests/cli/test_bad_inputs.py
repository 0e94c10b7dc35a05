"""Issue #9, "ready for outside users": every bad input of its lists is one line on stderr and exit 2, with the
fragment that says what to fix, no traceback, within seconds and under an address-space limit (so nothing large
is allocated before the error). Files are written whole or not at all; Ctrl-C says what was kept; ``validate``
fits 80 columns with signed errors.

The command-line cases run as real processes (``python -m pimmodel``), all started together by one fixture (the
module stays within ~30 s on two cores); each case is still its own test.
"""

from __future__ import annotations

import errno
import io
import json
import os
import pty
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pimmodel.calibration.result import SHIPPED_PATH, CalibrationResult, read_calibration
from pimmodel.dse.space import load_study

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="resource limits, /proc and pseudo-terminals")

FAST_S = 30.0
"""Every bad input fails within this (about a second on an idle machine; generous for a loaded one)."""
SLOW_S = 300.0
"""Runs that do real work first (a tiny calibration, validation): the cost model may have to compile (cold cache)."""
ADDRESS_SPACE_BYTES = 3 << 30
"""Address-space limit of every run: Python, numpy and the CLI fit in it; a large allocation would not."""
PARALLEL = max(2, (os.cpu_count() or 1) + 1)
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One BLAS thread: its per-thread buffers would otherwise scale the address space with the core count."""
SHIPPED = json.loads(SHIPPED_PATH.read_text(encoding="utf-8"))
GROUP = "sparse/svm/admm"
"""A fit with two coefficients, so its covariance is a 2 x 2 matrix."""
STUDY = (Path(__file__).parents[1] / "dse" / "small.toml").read_text(encoding="utf-8")
RANDOM_BYTES = np.random.default_rng(9).integers(0, 256, 4096, dtype=np.uint8).tobytes()

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (INFO|DEBUG) ")
"""A progress or debug line of the log (``cli/logs.py`` FORMAT), not a line the command says."""


# ---------------------------------------------------------------- file contents
def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _npz() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, x=np.zeros((4, 3)))
    return buffer.getvalue()


def _table(nan_at: tuple[int, int] | None = None, value: float = np.nan, rows: int = 40) -> np.ndarray:
    x = np.random.default_rng(0).random((rows, 5))
    x[:, -1] = np.arange(rows) % 2
    if nan_at is not None:
        x[nan_at] = value
    return x


def _calibration(edit: Callable[[dict[str, Any]], Any]) -> bytes:
    data = json.loads(json.dumps(SHIPPED))
    edit(data)
    return json.dumps(data).encode()


def _fit(data: dict[str, Any]) -> dict[str, Any]:
    fit: dict[str, Any] = data["fits"][GROUP]
    return fit


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target: Any = _fit(data)
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _not_psd(data: dict[str, Any]) -> None:
    fit = _fit(data)
    (a, _), (_, d) = fit["covariance"]
    fit["covariance"] = [[a, 1.0], [1.0, d]]  # symmetric, diagonal unchanged, off-diagonal beyond sqrt(a d)


def _asymmetric(data: dict[str, Any]) -> None:
    _fit(data)["covariance"][0][1] = 0.5


# ---------------------------------------------------------------- the cases
@dataclass(frozen=True)
class Case:
    """One run: arguments (``{tmp}`` is the case's folder), files to create there, the fragment the one stderr
    line must hold, fragments it must not hold, and where stdout goes."""

    args: tuple[str, ...]
    fragment: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    absent: tuple[str, ...] = ()
    stdout: str | None = None
    address_space: int = ADDRESS_SPACE_BYTES
    file_size: int | None = None
    code: int = 2
    timeout_s: float = FAST_S


def _emulate(name: str, content: bytes, fragment: str, *extra: str) -> Case:
    return Case(("emulate", "--dataset", "{tmp}/" + name, "--dpus", "2", *extra), fragment, {name: content})


def _spec(option: str, name: str, content: bytes, fragment: str) -> Case:
    return Case(("predict", option, "{tmp}/" + name), fragment, {name: content})


def _calibration_case(content: bytes, fragment: str) -> Case:
    return Case(("predict", "--calibration", "{tmp}/cal.json", "--json"), fragment, {"cal.json": content},
                absent=("nan s", "NaN"))


LATIN1_LINE_2 = "1 3:1 5:1\n0 2:1 # café\n".encode("latin-1")
CASES: dict[str, Case] = {
    # svmlight / LIBSVM text
    "svmlight-binary": _emulate("data.svm", RANDOM_BYTES, "is a binary file, not svmlight text"),
    "svmlight-not-utf8": _emulate("data.svm", LATIN1_LINE_2, "data.svm:2: not UTF-8"),
    "svmlight-empty": _emulate("data.svm", b"", "no samples found"),
    "svmlight-no-features": _emulate("data.svm", b"1\n0\n" * 20, "no line has a feature"),
    "svmlight-nan-value": _emulate("data.svm", b"1 1:0.5\n0 2:nan\n" * 20, "data.svm:2: feature value nan"),
    "svmlight-huge-index": _emulate("data.svm", b"1 3000000000:1\n0 2:1\n", "too large"),
    "svmlight-given-an-npz": _emulate("data.npz", _npz(), "zip archive"),
    # .npy
    "npy-npz-archive": _emulate("data.npy", _npz(), ".npz archive"),
    "npy-strings": _emulate("data.npy", _npy(np.array([["0.5", "1"], ["0.2", "0"]])), "strings"),
    "npy-objects": _emulate("data.npy", _npy(np.array([[0.5, None], [0.2, 0]], dtype=object)), "Python objects"),
    "npy-complex": _emulate("data.npy", _npy(_table().astype(complex) * (1 + 1j)), "complex numbers"),
    "npy-1d": _emulate("data.npy", _npy(np.zeros(10)), "expected a 2-D array"),
    "npy-no-rows": _emulate("data.npy", _npy(np.zeros((0, 5))), "no rows"),
    "npy-nan": _emulate("data.npy", _npy(_table((3, 1))), "row 3, column 1: value nan is not a finite number"),
    "npy-inf": _emulate("data.npy", _npy(_table((4, 2), np.inf)), "value inf is not a finite number"),
    "npy-out-of-range": _emulate("data.npy", _npy(_table((5, 0), 1.5)), "outside [0, 1]"),
    "npy-empty-file": _emulate("data.npy", b"", "it is empty"),
    "npy-binary": _emulate("data.npy", RANDOM_BYTES, "not a .npy file"),
    # hardware, dataset and study TOML
    "hardware-binary": _spec("--hardware", "hw.toml", RANDOM_BYTES, "is a binary file"),
    "hardware-not-utf8": _spec("--hardware", "hw.toml", 'name = "caf\xe9"\n'.encode("latin-1"), "not UTF-8"),
    "hardware-empty": _spec("--hardware", "hw.toml", b"", "upmem-2556.toml for the format"),
    "hardware-endless": Case(("predict", "--hardware", "/dev/zero"), "larger than 16 MiB"),
    "dataset-binary": _spec("--dataset", "ds.toml", RANDOM_BYTES, "is a binary file"),
    "dataset-not-utf8": _spec("--dataset", "ds.toml", 'name = "caf\xe9"\n'.encode("latin-1"), "not UTF-8"),
    "dataset-empty": _spec("--dataset", "ds.toml", b"\n", "rows_per_dpu_weak = 1024"),
    "study-binary": Case(("explore", "{tmp}/s.toml"), "is a binary file", {"s.toml": RANDOM_BYTES}),
    "study-not-utf8": Case(("explore", "{tmp}/s.toml"), "not UTF-8", {"s.toml": 'x = "\xe9"'.encode("latin-1")}),
    "study-empty": Case(("explore", "{tmp}/s.toml"), "studies/scalable-pim.toml", {"s.toml": b""}),
    # calibration JSON
    "calibration-binary": _calibration_case(RANDOM_BYTES, "is a binary file"),
    "calibration-not-utf8": _calibration_case('{"label": "\xe9"}'.encode("latin-1"), "not UTF-8"),
    "calibration-empty": _calibration_case(b"", "is empty"),
    "calibration-nan-value": _calibration_case(_calibration(_set(("coefficients", "svm_hit_fraction"), float("nan"))),
                                               f"fits.{GROUP}.coefficients.svm_hit_fraction is nan"),
    "calibration-inf-value": _calibration_case(_calibration(_set(("coefficients", "svm_hit_fraction"), float("inf"))),
                                               "svm_hit_fraction is inf"),
    "calibration-negative-std-error": _calibration_case(
        _calibration(_set(("std_errors", "sparse_write_fraction"), -0.1)),
        "std_errors.sparse_write_fraction is negative"),
    "calibration-covariance-size": _calibration_case(_calibration(_set(("covariance",), [[1.0]])),
                                                     "covariance must be a 2 x 2 matrix"),
    "calibration-covariance-asymmetric": _calibration_case(_calibration(_asymmetric), "covariance is not symmetric"),
    "calibration-covariance-not-psd": _calibration_case(_calibration(_not_psd), "not positive semi-definite"),
    "calibration-covariance-nan": _calibration_case(_calibration(_set(("covariance", 0, 0), float("nan"))),
                                                    "covariance[0][0] is nan"),
    "calibration-missing-key": _calibration_case(_calibration(lambda d: _fit(d).pop("std_errors")),
                                                 f"fits.{GROUP}.std_errors is missing"),
    "calibration-not-a-number": _calibration_case(_calibration(_set(("coefficients", "svm_hit_fraction"), "0.5")),
                                                  "must be a number"),
    # list options
    "dpus-empty-entry": Case(("scale", "--dpus", "256,,512"), "has an empty entry"),
    "dpus-trailing-comma": Case(("scale", "--dpus", "256,512,"), "has an empty entry"),
    "group-empty-entry": Case(("validate", "--group", "emulator,,published"), "has an empty entry"),
    # emulate options (the lead's checks, covered here)
    "emulate-seed-negative": Case(("emulate", "--seed", "-1"), "--seed must be a whole number in [0, 2**32 - 1"),
    "emulate-features-below-16": Case(("emulate", "--features", "8"), "use at least 16"),
    "emulate-features-for-a-file": _emulate("data.svm", b"1 1:1\n0 2:1\n" * 10, "come from the file",
                                            "--features", "128"),
    "emulate-single-class-file": _emulate("data.svm", b"1 1:0.5\n1 2:0.3\n" * 10, "needs both classes"),
    "emulate-class-weights-nan": Case(("emulate", "--class-weights", "nan:1"), "positive finite numbers"),
    # more than the case's 3 GiB address space (the data streams, so the study's 2,048 YFCC DPUs fit in a few GB;
    # Criteo ADMM keeps model-sized vectors per DPU: about 39 GB)
    "emulate-2048-dpus-memory": Case(("emulate", "--dataset", "synthetic-criteo", "--optimizer", "admm", "--dpus",
                                      "2048"), "or fewer"),
    # calibrate options and its output file
    "calibrate-seed-negative": Case(("calibrate", "--seed", "-1"), "--seed must be a whole number in [0, 2**32 - 1"),
    "calibrate-output-directory": Case(("calibrate", "--output", "{tmp}"), "is a directory"),
    "calibrate-output-missing-folder": Case(("calibrate", "--output", "{tmp}/missing/cal.json"), "does not exist"),
    "calibrate-output-device": Case(("calibrate", "--output", "/dev/full"), "not a regular file"),
    "calibrate-full-disk": Case(("calibrate", "--design", "tiny", "--epochs", "1", "--output", "{tmp}/cal.json"),
                                "the previous file, if any, is unchanged", {"cal.json": SHIPPED_PATH.read_bytes()},
                                file_size=4096, timeout_s=SLOW_S),
    # stdout on a full disk
    "stdout-full": Case(("predict", "--json"), "No space left on device", stdout="/dev/full"),
    # a study asking for more DPUs than its baseline has
    "study-more-dpus-than-baseline": Case(("explore", "{tmp}/s.toml", "--trials", "1"), "5,000 DPUs but the baseline",
                                          {"s.toml": STUDY.replace("dpus = 2048", "dpus = 5000").encode()}),
    # WRAM advice that fits the case
    "wram-at-one-tasklet": Case(("predict", "--features", "100000", "--tasklets", "1"), "features fit at 1 tasklet",
                                absent=("fewer --tasklets",)),
    "wram-fewer-tasklets-fit": Case(("predict", "--features", "12000", "--tasklets", "24"),
                                    "use --tasklets 12 or fewer"),
}


# ---------------------------------------------------------------- running them all at once
@dataclass(frozen=True)
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    folder: Path


def _limits(address_space: int, file_size: int | None) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        if file_size is not None:  # a write past the limit fails with EFBIG (SIGXFSZ ignored), as a full disk would
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    return apply


@dataclass
class _Running:
    name: str
    process: subprocess.Popen[bytes]
    started: float
    folder: Path


def _start(name: str, case: Case, folder: Path) -> _Running:
    folder.mkdir()
    for file, content in case.files.items():
        (folder / file).write_bytes(content)
    args = [a.replace("{tmp}", str(folder)) for a in case.args]
    out = open(case.stdout or folder / "stdout.txt", "wb")  # noqa: SIM115 - closed by the child's exit
    err = open(folder / "stderr.txt", "wb")  # noqa: SIM115
    with out, err:  # the child holds its own copies
        process = subprocess.Popen([sys.executable, "-m", "pimmodel", *args], stdout=out, stderr=err, cwd=folder,
                                   env=ENV, preexec_fn=_limits(case.address_space, case.file_size))
    return _Running(name, process, time.monotonic(), folder)


def _finish(run: _Running, case: Case) -> Outcome:
    stdout = "" if case.stdout else (run.folder / "stdout.txt").read_text(errors="replace")
    return Outcome(run.process.returncode, stdout, (run.folder / "stderr.txt").read_text(errors="replace"),
                   time.monotonic() - run.started, run.folder)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every case run as its own process, ``PARALLEL`` at a time; a run past its timeout is killed."""
    root = tmp_path_factory.mktemp("bad-inputs")
    pending = list(CASES.items())
    running: list[_Running] = []
    done: dict[str, Outcome] = {}
    while pending or running:
        while pending and len(running) < PARALLEL:
            name, case = pending.pop(0)
            running.append(_start(name, case, root / name))
        time.sleep(0.02)
        for run in list(running):
            if run.process.poll() is None and time.monotonic() - run.started > CASES[run.name].timeout_s:
                run.process.kill()
                run.process.wait()
            if run.process.poll() is not None:
                running.remove(run)
                done[run.name] = _finish(run, CASES[run.name])
    return done


def _one_line(outcome: Outcome) -> str:
    """The one line a refusal prints. A command still at work after a second has logged "started" (a
    timestamped progress line, the log's channel, where no bar is drawn): the error is the last line and the only
    other one."""
    assert "Traceback" not in outcome.stderr + outcome.stdout, outcome.stderr
    lines = outcome.stderr.strip().splitlines()
    said = [line for line in lines if not LOG_LINE.match(line)]
    assert len(said) == 1 and lines[-1] == said[0], outcome.stderr
    return said[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_fast_line_exit_2(outcomes: dict[str, Outcome], name: str) -> None:
    case, outcome = CASES[name], outcomes[name]
    assert outcome.seconds < case.timeout_s, f"{name} took {outcome.seconds:.1f} s"
    line = _one_line(outcome)
    assert outcome.code == case.code, line
    assert line.startswith("error: ") and case.fragment in line, line
    for fragment in case.absent:
        assert fragment not in line and fragment not in outcome.stdout, line


@pytest.mark.slow  # the real-process cases of the `outcomes` fixture
def test_full_disk_keeps_the_previous_calibration(outcomes: dict[str, Outcome]) -> None:
    """The tiny calibration ran, its write hit the file-size limit (EFBIG from the kernel): the previous file is
    intact, and no temporary or empty file is left beside it."""
    folder = outcomes["calibrate-full-disk"].folder
    assert (folder / "cal.json").read_bytes() == SHIPPED_PATH.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["cal.json", "stderr.txt", "stdout.txt"]


@pytest.mark.slow  # the real-process cases of the `outcomes` fixture
def test_refused_outputs_are_left_alone(outcomes: dict[str, Outcome]) -> None:
    assert not (outcomes["calibrate-output-missing-folder"].folder / "missing").exists()
    assert sorted(p.name for p in outcomes["calibrate-output-directory"].folder.iterdir()) == [
        "stderr.txt", "stdout.txt"]


# ---------------------------------------------------------------- in-process: a full disk, studies that load
def test_calibration_write_on_enospc_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills while the calibration is written (ENOSPC at fsync, where delayed allocation reports it)."""
    target = tmp_path / "cal.json"
    target.write_text("previous\n")
    result = read_calibration(SHIPPED_PATH)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("pimmodel.atomic.os.fsync", full)
    with pytest.raises(Exception, match="No space left on device; the previous file, if any, is unchanged"):
        result.write(target)
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cal.json"]


def test_a_calibration_that_cannot_be_read_back_is_not_written(tmp_path: Path) -> None:
    fit = read_calibration(SHIPPED_PATH).fits[GROUP]
    broken = CalibrationResult("broken", {GROUP: type(fit)(fit.names, (float("nan"), 0.5), fit.std_errors,
                                                         fit.covariance, fit.bounds)})
    with pytest.raises(Exception, match="is nan"):
        broken.write(tmp_path / "cal.json")
    assert not list(tmp_path.iterdir())


def test_study_searching_dpus_available_may_ask_for_more_dpus(tmp_path: Path) -> None:
    study = tmp_path / "s.toml"
    study.write_text(STUDY.replace("dpus = 2048", "dpus = 5000")
                     + 'dpus = { field = "dpus_available", low = 2556, high = 6000 }\n')
    assert load_study(study).highest("dpus_available") == 6000
    study.write_text(study.read_text().replace("high = 6000", "high = 4000"))
    with pytest.raises(Exception, match="at most 4,000"):
        load_study(study)


# ---------------------------------------------------------------- validate: 80 columns, signed errors
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _terminal_output(args: list[str], columns: int) -> str:
    """stdout of a run on a pseudo-terminal ``columns`` wide (rich sizes tables to it)."""
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "pimmodel", *args], stdout=slave, stderr=subprocess.DEVNULL,
                               env={**ENV, "COLUMNS": str(columns), "TERM": "xterm"})
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    process.wait(timeout=SLOW_S)
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r", "")


@pytest.mark.slow
def test_validate_fits_80_columns_with_signed_errors() -> None:
    args = ["validate", "--group", "published,finding"]
    piped = subprocess.run([sys.executable, "-m", "pimmodel", *args], capture_output=True, text=True, env=ENV,
                           timeout=SLOW_S)
    for text in (piped.stdout, _terminal_output(args, 80)):
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= 80, max(lines, key=len)
        assert re.search(r" -\d+\.\d%", text) and re.search(r" \+\d+\.\d%", text)  # signed both ways
        assert re.fullmatch(r"\d+ cases scored, \d+ failed.*", lines[-1]), lines[-1]


# ---------------------------------------------------------------- Ctrl-C
def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _startup_cpu_s(args: list[str]) -> float:
    """CPU seconds a command takes to start (a run that fails on its first check), measured on this machine."""
    process = subprocess.Popen([sys.executable, "-m", "pimmodel", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=ENV)
    usage = os.wait4(process.pid, 0)[2]
    process.returncode = 2
    return usage.ru_utime + usage.ru_stime


def _interrupted(args: list[str], startup_args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``args``, send SIGINT once it is past its start (1.5 times the CPU time of a run that fails on its first
    check, measured here: robust to a loaded machine), collect."""
    busy = 1.5 * _startup_cpu_s(startup_args) + 0.3
    process = subprocess.Popen([sys.executable, "-m", "pimmodel", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=ENV, cwd=cwd)
    deadline = time.monotonic() + SLOW_S
    while process.poll() is None and _cpu_s(process.pid) < busy and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the command ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=FAST_S)
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def _said(p: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines the command says on stderr, its log's progress lines (a long command logs 'started') left out."""
    return [line for line in p.stderr.strip().splitlines() if not LOG_LINE.match(line)]


def _files(folder: Path) -> Iterator[str]:
    return (p.name for p in sorted(folder.iterdir()))


@pytest.mark.slow
def test_ctrl_c_in_calibrate_keeps_the_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "cal.json"
    target.write_bytes(SHIPPED_PATH.read_bytes())
    p = _interrupted(["calibrate", "--output", str(target), "--epochs", "5"], ["calibrate", "--seed", "-1"], tmp_path)
    lines = _said(p)
    assert p.returncode == 130 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "interrupted" in lines[0] and f"{str(target)!r} is unchanged" in lines[0]
    assert target.read_bytes() == SHIPPED_PATH.read_bytes() and list(_files(tmp_path)) == ["cal.json"]


@pytest.mark.slow
def test_ctrl_c_in_emulate_says_nothing_was_kept(tmp_path: Path) -> None:
    p = _interrupted(["emulate", "--epochs", "200", "--dpus", "16"], ["emulate", "--seed", "-1"], tmp_path)
    lines = _said(p)
    assert p.returncode == 130 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "interrupted; nothing was kept" in lines[0] and p.stdout == ""
    assert not list(_files(tmp_path))
