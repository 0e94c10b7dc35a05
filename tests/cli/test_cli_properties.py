"""Issue 19: random option combinations and file contents thrown at every command (hypothesis, through
``support.cli``). Every run must end in exit 0 with a valid record (``--json`` parses) or exit 2 with exactly one
``error:`` line, never a traceback, and no input file may change. Values are drawn small where a command does
real work (DPUs, epochs, trials, sizes), so that an example takes about a second, not minutes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import cli

pytestmark = pytest.mark.slow

INTS = st.one_of(st.integers(-3, 8), st.sampled_from([0, 1, 2, 3, 16, 64, 2556, 3000, 2**32, 2**63]))
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 0.5, 1.0, 1.5, -1.0]))
WORDS = st.sampled_from(["", "x", "none", "all", "-1", "1e9", "nan", "ma-sgd", "dpsgd", "lr", "svm", "dense",
                         "sparse", "study", "corrected", "weak", "strong", "upmem-640", "pim-torus-hypothetical",
                         "1:1", "0:1", "a:b", "256,2048", "2048,256", "1,,2", "fig5", "VA", "GEMV"])
TEXT = st.one_of(INTS.map(str), FLOATS.map(str), WORDS)
FILE_KINDS = ("empty", "garbage", "text", "toml", "json", "npy", "svm")

# per command: its options and how to draw a value (None: a flag without a value; "FILE": a generated input file;
# "OUT": a file the command writes, in its working folder)
SMALL_DPUS = st.sampled_from(["1", "2", "3", "4", "0", "-1", "x", "3000"])
OUT = st.just("OUT")
WORKLOADS = st.sampled_from(["linear", "kmeans", "x", ""])
POINTS = st.sampled_from(["1k", "2000", "25.6M", "0", "-1", "x", "1e3"])
KMEANS = {"--workload": WORKLOADS, "--points": POINTS, "--dims": INTS.map(str), "--clusters": INTS.map(str),
          "--n-init": INTS.map(str)}
SHAPE = {"--layout": WORDS, "--nonzeros": INTS.map(str), "--rows-per-dpu": INTS.map(str),
         "--global-batch-size": INTS.map(str)}
OPTIONS: dict[tuple[str, ...], dict[str, Any]] = {
    ("predict",): {"--optimizer": WORDS, "--hardware": st.one_of(WORDS, st.just("FILE")), "--dataset":
                   st.one_of(WORDS, st.just("FILE")), "--model": WORDS, "--dpus": INTS.map(str), "--tasklets":
                   INTS.map(str), "--scaling": WORDS, "--epochs": INTS.map(str), "--batch-size": INTS.map(str),
                   "--view": WORDS, "--features": INTS.map(str), "--sync-every": INTS.map(str), "--interval": None,
                   "--calibration": st.one_of(WORDS, st.just("FILE")), "--json": None, "--iterations":
                   INTS.map(str), "-o": OUT, **KMEANS, **SHAPE},
    ("scale",): {"--optimizer": WORDS, "--dpus": WORDS, "--scaling": WORDS, "--json": None, "--plot": OUT,
                 "--iterations": INTS.map(str), "-o": OUT, **KMEANS, **SHAPE},
    ("equations",): {"--optimizer": WORDS, "--model": WORDS, "--layout": WORDS, "--latex": None, "--json": None,
                     "--dataset": WORDS, "--topology": WORDS, "-o": OUT},
    ("emulate",): {"--dataset": st.one_of(st.sampled_from(["synthetic-yfcc", "synthetic-criteo", "iris"]),
                                          st.just("FILE")),
                   "--dpus": SMALL_DPUS, "--epochs": st.sampled_from(["1", "0", "x"]), "--model": WORDS,
                   "--optimizer": WORDS, "--samples-per-dpu": st.sampled_from(["16", "0", "64"]),
                   "--features": st.sampled_from(["16", "79", "1"]), "--kernels": WORDS, "--svm-margin": TEXT,
                   "--class-weights": WORDS, "--arithmetic": WORDS, "--seed": INTS.map(str),
                   "--sync-every": INTS.map(str), "--engine": st.sampled_from(["serial", "x"]), "--json": None,
                   "-o": OUT, "--workload": WORKLOADS, "--points": st.sampled_from(["1k", "0", "x", "-1"]),
                   "--dims": st.sampled_from(["2", "0", "x"]), "--clusters": st.sampled_from(["2", "3", "0", "x"]),
                   "--n-init": st.sampled_from(["1", "0", "x"])},
    ("sensitivity",): {"--optimizer": WORDS, "--dpus": INTS.map(str), "--top": INTS.map(str), "--json": None,
                       "-o": OUT, **SHAPE},
    ("kernel",): {"--name": WORDS, "--dpus": WORDS, "--size": st.sampled_from(["1024", "0", "x", "-5", "64"]),
                  "--list": None, "--json": None, "-o": OUT, "--cols": INTS.map(str), "--rows": INTS.map(str),
                  "--blocks": INTS.map(str), "--layers": INTS.map(str), "--query-length": INTS.map(str),
                  "--queries": INTS.map(str), "--type": st.sampled_from(["int32", "int64", "x"])},
    ("transfer",): {"--direction": st.sampled_from(["to-dpu", "from-dpu", "to-dpu,from-dpu", "x", ""]),
                    "--bytes-per-dpu": st.sampled_from(["1KiB", "64MiB", "2GiB", "0", "-1", "x", "8,1MiB", "1.5"]),
                    "--dpus": st.one_of(WORDS, SMALL_DPUS), "--mode": st.sampled_from(["parallel", "serial", "x"]),
                    "--memory": st.sampled_from(["mram", "wram", "x"]),
                    "--hardware": st.one_of(WORDS, st.just("FILE")), "-o": OUT, "--json": None},
    ("specs", "list"): {"--json": None},
    ("specs", "show"): {"__arg__": st.one_of(WORDS, st.just("FILE")), "--json": None},
    ("validate",): {"--group": st.sampled_from(["finding", "x", "finding,,finding", ""]), "--json": None,
                    "--strict": None, "--calibration": st.one_of(WORDS, st.just("FILE")), "--failures": None,
                    "-o": OUT},
    ("reproduce",): {"--list": None, "__arg__": WORDS, "--workers": st.sampled_from(["0", "-1", "x"]),
                     "--hardware": WORDS},
    ("explore",): {"__arg__": st.one_of(st.sampled_from(["x", "scalable-pim"]), st.just("FILE")),
                   "--trials": st.sampled_from(["1", "2", "0", "-1", "x"]), "--seed": INTS.map(str),
                   "--storage": st.one_of(st.just("FILE"), WORDS), "--json": None, "-o": OUT,
                   "--workers": st.sampled_from(["1", "0", "x"]), "--timeout": st.sampled_from(["0", "0.05", "x"])},
    ("compare",): {"--optimizer": WORDS, "--stand-in-divisor": st.sampled_from(["0", "-1", "x", "10**9",
                                                                                "100000000"]),
                   "--target": TEXT, "--break-even": st.sampled_from(["none", "x"]), "--json": None, "-o": OUT},
    ("baseline",): {"__arg__": st.sampled_from(["x", "predict", "list"]), "--json": None},
    ("calibrate",): {"--design": st.sampled_from(["x", "huge", "tiny"]), "--epochs": st.sampled_from(["0", "-1", "x"]),
                     "--bootstrap": st.sampled_from(["-1", "x"]), "--seed": INTS.map(str), "-o": OUT},
}
# where an option is not drawn, a small value keeps an example about a second (the defaults are real runs: a bare
# emulate trains 64 DPUs for 35 s, calibrate emulates 48 runs); --fit (kernel, transfer: 6-11 s) is not drawn
SMALL: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {
    ("emulate",): (("--dpus", "2"), ("--samples-per-dpu", "16"), ("--features", "16"), ("--epochs", "1")),
    ("calibrate",): (("--design", "tiny"), ("--epochs", "1")),
}
SMALL_KMEANS = (("--dpus", "2"), ("--points", "1k"), ("--dims", "2"), ("--clusters", "2"), ("--n-init", "1"))
OUTPUTS = ("out.json", "out.csv", "out.png", "out.txt", "out", "no/such/out.json")
LOUDNESS = ((), ("-q",), ("-v",), ("-vv",), ("--log-file", "@LOG"), ("-q", "--log-file", "@LOG"))
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (INFO|WARNING|DEBUG|ERROR) ")


def _file(kind: str, data: bytes, folder: Path, n: int) -> Path:
    import numpy as np

    suffix = {"toml": ".toml", "json": ".json", "npy": ".npy", "svm": ".svm", "text": ".txt"}.get(kind, ".toml")
    path = folder / f"f{n}{suffix}"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(data)
    elif kind == "text":
        path.write_text(data.decode("latin-1"), encoding="utf-8")
    elif kind == "toml":
        path.write_text('name = "x"\nlayout = "dense"\nfeatures = ' + str(len(data)) + "\n", encoding="utf-8")
    elif kind == "json":
        path.write_text(json.dumps({"schema_version": 1, "label": data.hex()[:8]}), encoding="utf-8")
    elif kind == "npy":
        rng = np.random.default_rng(len(data))
        rows = 1 + len(data) % 40
        x = rng.random((rows, 3)) * (2 if data[:1] == b"\x00" else 1)
        np.save(path, np.column_stack([x, rng.integers(0, 2, rows)]))
    else:
        path.write_text("".join(f"{int(b) % 2} 1:{b / 255:.3f} 3:1\n" for b in data[:30]) or "1 1:0.5\n",
                        encoding="utf-8")
    return path


@st.composite
def invocations(draw: Any) -> tuple[list[str], list[tuple[str, bytes]]]:
    command = draw(st.sampled_from(sorted(OPTIONS)))
    options = OPTIONS[command]
    names = draw(st.lists(st.sampled_from(sorted(options)), max_size=5, unique=True))
    args, files = list(command), []
    for name in names:
        strategy = options[name]
        value = None if strategy is None else draw(strategy)
        if value == "FILE":
            files.append((draw(st.sampled_from(FILE_KINDS)), draw(st.binary(min_size=0, max_size=64))))
            value = f"@FILE{len(files) - 1}"
        elif value == "OUT":
            value = draw(st.sampled_from(OUTPUTS))
        if name == "__arg__":
            args.append(str(value))
        else:
            args.extend([name] if value is None else [name, str(value)])
    if command == ("validate",) and "--group" not in names:  # the whole validation takes half a minute
        args.extend(["--group", "finding"])
    kmeans = command == ("emulate",) and "kmeans" in args
    for name, value in SMALL_KMEANS if kmeans else SMALL.get(command, ()):
        if name not in names:
            args.extend([name, value])
    loud = draw(st.sampled_from(LOUDNESS))
    return ([*loud, *args] if draw(st.booleans()) else [*args, *loud]), files


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


# about 0.3 s an example (the small sizes above): the slow tier runs the 2,000 (about 10 minutes on two
# cores); PIMMODEL_CLI_EXAMPLES sets another count
@settings(max_examples=int(os.environ.get("PIMMODEL_CLI_EXAMPLES", "2000")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(invocations())
def test_every_command_exits_0_with_a_record_or_2_with_one_error_line(case: tuple[list[str], list[tuple[str, bytes]]]
                                                                      ) -> None:
    """Also: log lines (-v, -vv, --log-file, progress) never reach stdout nor count as the error line, a log file
    holds only stamped lines, and an output a command says it wrote (-o, --plot) is there and, as JSON, parses."""
    args, files = case
    with tempfile.TemporaryDirectory(prefix="pimmodel-prop-") as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        paths = [_file(kind, data, folder, i) for i, (kind, data) in enumerate(files)]
        work = Path(tmp) / "work"
        work.mkdir()
        log = work / "run.log"
        argv = [next((str(p) for i, p in enumerate(paths) if a == f"@FILE{i}"), str(log) if a == "@LOG" else a)
                for a in args]
        command = next(a for a in args if a not in ("-q", "-v", "-vv", "--log-file", "@LOG"))
        before = _digest(folder)
        r = cli(*argv, cwd=work)
        assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, (argv, r.stderr[-2000:])
        said = [line for line in r.stderr.splitlines() if line.strip() and not STAMP.match(line)]
        failed_cases = command == "validate" and r.returncode == 1 and not any("error" in line for line in said)
        assert r.returncode in (0, 2) or failed_cases, (argv, r.returncode, r.stderr[-2000:])  # validate: exit 1
        if r.returncode == 2:
            assert len(said) == 1 and said[0].startswith("error:"), (argv, r.stderr)
        elif "--json" in argv and "--help" not in argv:
            json.loads(r.stdout)
        if r.returncode == 0 or failed_cases:
            for flag in ("-o", "--plot"):
                if flag in argv and command != "explore":  # explore's --plot is a folder
                    out = work / argv[argv.index(flag) + 1]
                    assert out.exists(), (argv, r.stderr[-2000:])
                    if out.suffix == ".json":
                        json.loads(out.read_text(encoding="utf-8"))
        if log.exists():
            assert all(STAMP.match(line) for line in log.read_text(encoding="utf-8").splitlines()), argv
        assert not any(STAMP.match(line) for line in r.stdout.splitlines()), argv  # logs go to stderr only
        written = {Path(argv[i + 1]).name for i, a in enumerate(argv[:-1]) if a == "--storage"}  # an output
        after = _digest(folder)
        assert {k: v for k, v in after.items() if k not in written} == {
            k: v for k, v in before.items() if k not in written}, argv  # no input file changed
