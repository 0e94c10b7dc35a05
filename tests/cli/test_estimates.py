"""Issue 29 item 5: the up-front estimate of emulate, compare, explore and reproduce is one log line (stderr and
--log-file, never the --json stdout), derived from the units of work and the rate a run measured on this machine
(or a shipped measurement that says where it was made); none is claimed without a measured rate."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from support import cli

from pimmodel.cli.logs import ProgressLog, Rate, estimate_text, measured_rate, record_rate

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests" / "dse" / "tiny.toml")


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The rates file in a folder of its own (the compiled equations stay in the usual cache: no recompiling)."""
    import pimmodel.cli.logs as logs

    monkeypatch.setattr(logs, "_rates_path", lambda: tmp_path / "cache" / "timings" / logs.RATES_FILE)
    return tmp_path / "cache"


def test_the_estimate_is_units_times_the_measured_rate() -> None:
    text = estimate_text([(90, "uncached stand-in seed-epochs", Rate(1.5, 90, "measured somewhere"))],
                         (0.25, "for the comparison itself"))
    assert text == ("estimated 2 min (90 uncached stand-in seed-epochs x 1.5 s (measured somewhere); 250 ms for the "
                    "comparison itself)")  # 90 x 1.5 + 0.25 = 135.25 s
    assert estimate_text([(0, "uncached stand-in seed-epochs", None)], (0.004, "for the rest")).startswith(
        "estimated under 1 s (no uncached stand-in seed-epochs; 4 ms for the rest")
    unknown = estimate_text([(128, "DPU-epochs", None)])
    assert unknown.startswith("no estimate") and "no run on this machine has measured their rate yet" in unknown


def test_a_measured_rate_is_kept_for_the_next_run(cache: Path) -> None:
    assert measured_rate("k") is None and measured_rate("k", Rate(2.0, 1, "shipped")) == Rate(2.0, 1, "shipped")
    record_rate("k", 3.0, 100)
    rate = measured_rate("k", Rate(2.0, 1, "shipped"))
    assert rate is not None and rate.s_per_unit == pytest.approx(0.03) and rate.units == 100
    assert rate.measured.startswith("this machine's last run, ")
    record_rate("k", 0.0, 0)  # nothing measured: the rate stays
    assert measured_rate("k") == rate
    (cache / "timings" / "rates.json").write_text("not json")  # a damaged file only loses the estimates
    assert measured_rate("k") is None


def test_the_estimate_comes_with_the_started_line_and_progress_without_a_terminal(progress_lines: list[str]
                                                                                  ) -> None:
    seen: list[str] = []

    class Keep(logging.Handler):  # a handler of its own: in-process commands stop propagation to the root
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    logger, handler = logging.getLogger("pimmodel.estimate"), Keep()
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.INFO
    try:
        with ProgressLog("job", 10, estimate="estimated 3 s (10 steps x 300 ms (measured))") as lines:
            for done in range(11):
                lines.update(done)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert progress_lines[0] == "job: started (10 to do)"
    assert seen == ["job: estimated 3 s (10 steps x 300 ms (measured))"]
    assert sum(" of 10 done (" in t for t in progress_lines) >= 10  # a line per tenth


def test_explore_estimates_from_its_last_measured_rate_on_stderr_only(tmp_path: Path, cache: Path) -> None:
    storage = str(tmp_path / "s.log")
    first = cli("explore", TINY, "--trials", "50", "--storage", storage, "--json")
    assert first.returncode == 0, first.stderr
    json.loads(first.stdout)  # the estimate is not in the record
    # a new study on a new machine: the shipped rate, which says where it was measured
    assert re.search(r"tiny: estimated under 1 s \(50 trials in 1 process x 2 ms \(measured on a ", first.stderr)
    kept = json.loads((cache / "timings" / "rates.json").read_text())["explore:tiny:1"]
    second = cli("explore", TINY, "--trials", "60", "--storage", storage, "--json")
    assert second.returncode == 0, second.stderr
    json.loads(second.stdout)
    m = re.search(r"tiny: estimated (.+?) \(60 trials in 1 process x ([\d.]+) (ms|s|us) \(this machine's last run, ",
                  second.stderr)
    assert m, second.stderr
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}[m.group(3)]
    assert float(m.group(2)) * scale == pytest.approx(kept["s_per_unit"], rel=5e-3)  # 3 significant digits
    assert kept["units"] == 50
