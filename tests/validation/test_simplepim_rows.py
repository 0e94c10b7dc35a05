"""SimplePIM's training workloads in group ``training``: which rows are read, that no fit reads them, and that the
check moves when a constant is broken."""

from __future__ import annotations

import csv
from pathlib import Path

from pimmodel.calibration import transfers
from pimmodel.specs import load_hardware
from pimmodel.validation import simplepim as V
from pimmodel.validation.data import validation_dir

HW = load_hardware("upmem-2556")
ROOT = Path(__file__).resolve().parents[2]


def _csv() -> list[dict[str, str]]:
    with (validation_dir() / "upmem-scale" / "simplepim-figures.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_rows_read_are_exactly_the_test_rows() -> None:
    """The README's roles: K-Means, Linear and Logistic Regression are test rows (36); VA, RED, Histogram fit rows."""
    test = [r for r in _csv() if r["workload"] in ("K-Means", "Linear Regression", "Logistic Regression")]
    assert len(test) == 36
    got = {(r.scaling, r.workload, r.implementation, r.dpus, r.kernel_ms) for r in V.test_rows()}
    assert got == {(r["scaling"], r["workload"], r["implementation"], int(r["dpus"]), float(r["kernel_ms"]))
                   for r in test}
    assert {r.implementation for r in V.priced_rows()} == {"SimplePIM"} and len(V.priced_rows()) == 18
    assert sum(u["rows"] for u in V.unexpressed_rows()) == 36 - 18  # every other test row says why not


def test_no_fit_reads_the_test_rows() -> None:
    fit = transfers.launch_rows()
    assert fit and all(r["group"].split(" (")[0] in transfers.LAUNCH_WORKLOADS for r in fit)
    assert not set(transfers.LAUNCH_WORKLOADS) & set(V.TEST_WORKLOADS)
    assert len(fit) == 18  # the weak-scaling VA, RED and Histogram rows only
    readers = [p.name for p in (ROOT / "pimmodel" / "calibration").glob("*.py")
               if "simplepim-figures" in p.read_text(encoding="utf-8")]
    assert readers == ["transfers.py"]


def test_cases_and_targets() -> None:
    cases, targets = V.simplepim_cases(HW)
    assert len(cases) == 18 + 12  # a kernel case per row, a ratio case per row beside the 608-DPU base
    ratios = [c for c in cases if c.phase == "ratio_to_608"]
    assert all(c.tolerance == 0.20 and c.unit == "x" for c in ratios)
    by = {t.name: t for t in targets}
    regress = by["SimplePIM linear + logistic regression scaling ratio (N / 608 DPUs)"]
    assert regress.target == 20.0 and regress.value < 20.0  # met with the shipped constants
    assert by["SimplePIM Linear Regression kernel time"].value < 10.0


def test_breaking_a_constant_changes_the_check() -> None:
    """A launch growth 20x the fitted one moves every weak-scaling ratio; a __muldi3 twice as long fails the linear
    regression's kernel times."""
    cases = {(c.name, c.phase): c for c in V.simplepim_cases(HW)[0]}
    key = ("SimplePIM Linear Regression weak 2432 DPUs", "ratio_to_608")
    assert cases[key].ok
    slow = {(c.name, c.phase): c for c in V.simplepim_cases(HW.replace(launch_per_rank_s=20 * HW.launch_per_rank_s))[0]}
    assert not slow[key].ok and slow[key].predicted > cases[key].predicted
    mul = V.simplepim_cases(HW.replace(int64_mul_base_instructions=2 * HW.int64_mul_base_instructions))
    lr = [c for c in mul[0] if "Linear Regression" in c.name and c.phase == "kernel"]
    assert lr and not any(c.ok for c in lr)
