"""optuna-dashboard in a real headless browser on a study pimmodel wrote, served by `pimmodel explore show
--dashboard`: the study list, the Pareto front plot and a trial page render, with the objectives' names and
units; Optuna's own CLI reads the same storage unchanged. Debian's chromium and chromium-driver (.ci/run installs
them), driven by selenium; skipped with one line where they are absent."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # a server and a browser

SMALL = Path(__file__).with_name("small.toml")
PIMMODEL = [sys.executable, "-c", "from pimmodel.cli import main; main()"]
OPTUNA = [sys.executable, "-c", "import sys; from optuna.cli import main; sys.exit(main())"]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000")
"""What headless Chromium needs on these machines (no display, root, a closed network)."""
OBJECTIVES = ("time_per_epoch [s]", "cost [x baseline DPU]")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_it_answers(base: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/studies", timeout=2) as r:
                assert r.status == 200
                return
        except OSError:
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the dashboard did not answer within 60 s"
            time.sleep(0.2)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dash") / "studies.log"
    p = subprocess.run([*PIMMODEL, "explore", str(SMALL), "--trials", "60", "--storage", str(path), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return path


@pytest.fixture(scope="module")
def served(journal: Path) -> Iterator[str]:
    pytest.importorskip("optuna_dashboard", reason="optuna-dashboard is not installed (pip install "
                        "'pimmodel[dashboard]')")
    port = _free_port()
    proc = subprocess.Popen([*PIMMODEL, "explore", "show", str(SMALL), "--storage", str(journal), "--dashboard",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_it_answers(base, proc)
        yield base
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert err.strip().splitlines()[-1] == "error: interrupted; the dashboard stopped; the study is unchanged"


def test_port_0_serves_on_a_free_port_and_prints_it(journal: Path) -> None:
    pytest.importorskip("optuna_dashboard", reason="optuna-dashboard is not installed (pip install "
                        "'pimmodel[dashboard]')")
    proc = subprocess.Popen([*PIMMODEL, "explore", "show", str(SMALL), "--storage", str(journal), "--dashboard",
                             "--port", "0", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/dashboard/", line)
        assert found and int(found.group(1)) > 0, line
        assert f"--port {found.group(1)}" in line  # the command to serve it again says the same port
        _wait_until_it_answers(f"http://127.0.0.1:{found.group(1)}", proc)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert proc.returncode == 130, err[-3000:]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(f"no {CHROMIUM} / {CHROMEDRIVER} (Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the 'test' extra)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _wait_for(driver: Any, predicate: Any, what: str, timeout_s: float = 60) -> Any:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout_s, poll_frequency=0.25).until(predicate)
    except TimeoutException:
        driver.save_screenshot(str(Path(os.environ.get("PIMMODEL_SCREENSHOTS", "/tmp")) / f"dashboard-{what}.png"))
        raise AssertionError(f"the dashboard did not show {what} within {timeout_s:.0f} s; page text: "
                             f"{driver.find_element('tag name', 'body').text[:800]!r}") from None


def test_study_list_pareto_plot_and_trial_page(served: str, browser: Any, journal: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from pimmodel.dse.result import front as front_of
    from pimmodel.dse.space import load_study
    from pimmodel.dse.study import is_feasible, stored_trials

    browser.get(f"{served}/dashboard/")
    _wait_for(browser, lambda d: "small" in d.find_element(By.TAG_NAME, "body").text, "the study list")
    browser.get(f"{served}/dashboard/studies/0")

    plots_js = ("return Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => { try { "
                "const y = ((p.layout || {}).yaxis || {}).title; return [(y && y.text) || '', (p.data || []).map("
                "t => [t.name || '', (t.x || []).length, typeof (t.marker && t.marker.color) === 'string' ? "
                "t.marker.color : ''])]; } catch (e) { return ['', []]; } })")

    def drawn(d: Any) -> Any:
        text = d.find_element(By.TAG_NAME, "body").text
        plots = d.execute_script(plots_js)
        pareto = [traces for _, traces in plots if len(traces) == 4 and not traces[0][0]]  # the unnamed scatter
        return (text, plots, pareto[0]) if "Pareto Front" in text and pareto and pareto[0][1][1] else None

    text, plots, pareto = _wait_for(browser, drawn, "the Pareto front plot")
    # the objectives' names with units: the Pareto plot's axis selectors (it draws no axis titles of its own,
    # an upstream choice) and the history plot's y axis
    assert f"Objective X:\n{OBJECTIVES[0]}" in text and f"Objective Y:\n{OBJECTIVES[1]}" in text, text[:600]
    assert any(y_title == OBJECTIVES[0] for y_title, _ in plots), plots
    ours = stored_trials(load_study(SMALL), str(journal))
    front = front_of(load_study(SMALL), ours)
    infeasible = sum(not is_feasible(t) for t in ours)
    _hidden, grey, dominated, best = pareto
    assert grey[2] == "#cccccc" and grey[1] == infeasible > 0  # infeasible designs drawn apart, in grey
    assert best[1] == sum(len(g) for g in front) and dominated[1] == len(ours) - infeasible - best[1]
    browser.save_screenshot(str(tmp_path / "overview.png"))
    browser.get(f"{served}/dashboard/studies/0/trials")
    text = _wait_for(browser, lambda d: (t := d.find_element(By.TAG_NAME, "body").text) and "Trial 0 (trial_id=0)"
                     in t and "dpu_clock" in t and t, "a trial page")
    assert "epoch_s" in text and "worker" in text  # the trial's user attributes: each workload's epoch


def test_what_the_dashboard_filters(journal: Path) -> None:
    """studies/README says it: the Pareto plot leaves infeasible designs off the front (above), but the 'Best
    Trials' card lists the non-dominated trials whatever their constraints, infeasible ones included (upstream:
    optuna-dashboard computes it without the constraints). If this fails, upstream changed: update the README."""
    import wsgiref.util

    optuna_dashboard = pytest.importorskip("optuna_dashboard")
    from pimmodel.dse.storage import open_storage

    app = optuna_dashboard.wsgi(open_storage(str(journal), must_exist=True))
    environ: dict[str, Any] = {"PATH_INFO": "/api/studies/0", "REQUEST_METHOD": "GET"}
    wsgiref.util.setup_testing_defaults(environ)
    best = json.loads(b"".join(app(environ, lambda *_: None)))["best_trials"]
    assert any(any(c > 0 for c in t["constraints"]) for t in best)


def test_optuna_cli_and_the_dashboard_take_the_printed_storage(journal: Path) -> None:
    """The record's commands work unchanged: `optuna best-trials` lists feasible trials only."""
    p = subprocess.run([*PIMMODEL, "explore", "show", str(SMALL), "--storage", str(journal), "--json"],
                       capture_output=True, text=True, timeout=300)
    record = json.loads(p.stdout)
    assert record["dashboard"] == f"optuna-dashboard {journal}"
    args = record["optuna"].split()[1:] + ["-f", "json"]
    best = subprocess.run([*OPTUNA, *args], capture_output=True, text=True, timeout=120)
    assert best.returncode == 0, best.stderr
    trials = json.loads(best.stdout)
    assert trials and {t["number"] for t in trials} == {n for d in record["front"]
                                                       for n in [d["number"], *d["same_objectives"]]}
    if shutil.which("optuna-dashboard") is not None:
        from optuna_dashboard._storage_url import guess_storage_from_url  # what the optuna-dashboard command does

        assert guess_storage_from_url(record["dashboard"].split(" ", 1)[1]).get_all_studies()
