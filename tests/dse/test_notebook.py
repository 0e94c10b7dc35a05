"""In a real Jupyter kernel (nbclient + ipykernel): the library call behind `explore --plot` leaves the inline
backend, pyplot, Optuna's log level and SQLAlchemy's other engines as they were, and the user's next plot still
displays (issue 21: `matplotlib.use("Agg")` switched the inline backend off)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a kernel process

SMALL = Path(__file__).with_name("small.toml")


def test_explore_plots_leave_the_notebook_alone(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat", reason="nbclient is not installed (the 'test' extra installs it)")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (the 'test' extra installs it)")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed (the 'test' extra installs it)")
    cells = [
        "%matplotlib inline\n"
        "import logging, matplotlib, optuna, sqlalchemy\n"
        "backend = matplotlib.get_backend()\n"
        "optuna.logging.set_verbosity(optuna.logging.INFO)\n"
        "root_handlers = list(logging.getLogger().handlers)\n"
        "assert 'inline' in backend, backend",
        "from pimmodel.dse.space import load_study\n"
        "from pimmodel.dse.study import run, stored_trials\n"
        "from pimmodel.dse.result import summarize\n"
        "from pimmodel.dse.plots import figures, write_plots\n"
        f"spec = load_study({str(SMALL)!r})\n"
        f"url = 'sqlite:///{tmp_path / 's.db'}'\n"
        "run(spec, url, trials=40, seed=1)\n"
        "trials = stored_trials(spec, url)\n"
        "record = summarize(spec, url, trials=trials)\n"
        f"paths = write_plots(spec, record, trials, __import__('pathlib').Path({str(tmp_path / 'plots')!r}))\n"
        "shown = figures(spec, record, trials)['pareto_front.png']\n"
        "shown",
        "import matplotlib.pyplot as plt\n"
        "assert matplotlib.get_backend() == backend, matplotlib.get_backend()\n"
        "assert optuna.logging.get_verbosity() == optuna.logging.INFO\n"
        "assert list(logging.getLogger().handlers) == root_handlers\n"
        f"other = sqlalchemy.create_engine('sqlite:///{tmp_path / 'other.db'}')\n"
        "with other.connect() as c:\n"
        "    assert c.exec_driver_sql('pragma journal_mode').scalar() == 'delete'\n"
        "assert plt.get_fignums() == []  # pimmodel left no figure in pyplot's registry\n"
        "plt.plot([1, 2, 3])\n"
        "plt.show()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path":
                                                                                                  str(tmp_path)}})
    client.execute()
    outputs = [o for cell in nb.cells for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    images = [o for o in nb.cells[1].outputs + nb.cells[2].outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the returned Figure shows as it is, and the user's own plot still displays
    assert all((tmp_path / "plots" / name).stat().st_size > 5000 for name in ("pareto_front.png", "history.png"))
