"""Every figure of the PIM-Opt study with data (Figs. 2 and 4-13), reproduced from the models (``pimmodel
reproduce``).

A figure is data (``studies/pim-opt/figNN.toml``, loaded by ``spec``): what the study measured, its configuration,
its finding and what the model cannot know. ``figures`` computes its record from the cost model (PIM), the
baseline models (CPU, GPU) and stand-in training (accuracy or AUC per epoch); ``findings`` says in numbers what
the model finds; ``run`` trains the curves in a pool and writes each figure's PNG, JSON and Markdown table.

    >>> from pimmodel.reproduce import Setup, load_figure, reproduce
    >>> [record] = reproduce([load_figure("fig4")], Setup.default(), output="figures")
    >>> record["model_says"], record["study_finding"]
"""

from .figures import CurveTask, Setup, compute, curve_tasks
from .run import DEFAULT_OUTPUT, Plan, check_output_dir, plan, reproduce, train, write
from .spec import KINDS, FigureSpec, Sweep, figure_paths, load_all, load_figure

__all__ = ["DEFAULT_OUTPUT", "KINDS", "CurveTask", "FigureSpec", "Plan", "Setup", "Sweep", "check_output_dir",
           "compute", "curve_tasks", "figure_paths", "load_all", "load_figure", "plan", "reproduce", "train",
           "write"]
