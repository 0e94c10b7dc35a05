"""`pimmodel equations`: each phase a short equation over named terms; the LaTeX of every equation set parses
with matplotlib's mathtext; the terms expand back to exactly the compiled expressions."""

from __future__ import annotations

import itertools

import pytest
import sympy
from support import first_fast

from pimmodel.costmodel.readable import equation_record
from pimmodel.costmodel.registry import expressions, readable
from pimmodel.phases import PHASES
from pimmodel.report.equations import render_latex, render_text

CONFIGS = list(itertools.product(("ma-sgd", "ga-sgd", "admm"), ("lr", "svm"), ("dense", "sparse")))


@pytest.mark.parametrize("optimizer,model,layout", first_fast(CONFIGS))
@pytest.mark.parametrize("topology", ["none", pytest.param("ring", marks=pytest.mark.slow)])
def test_every_latex_equation_renders(optimizer: str, model: str, layout: str, topology: str) -> None:
    from matplotlib.mathtext import MathTextParser

    parser = MathTextParser("path")
    record = equation_record(optimizer, model, layout, topology)
    for text in [e["latex"] for e in record["phases"].values()] + [t["latex"] for t in record["terms"].values()]:
        parser.parse(f"${text}$")  # raises ValueError on LaTeX mathtext cannot read
        assert "mathcal" not in text


def test_latex_uses_the_study_names() -> None:
    latex = render_latex(equation_record("admm", "lr", "dense"))
    assert r"\[ T_{\mathrm{compute}} = " in latex and "local_batch" not in latex
    assert r"\left\lceil{\frac{m_{\mathrm{DPU}}}{b}}\right\rceil" in latex  # local steps: ceil(rows / batch)


@pytest.mark.parametrize("optimizer,model,layout", CONFIGS)
def test_each_phase_fits_on_one_screen(optimizer: str, model: str, layout: str) -> None:
    """The phase's equation over named terms is short, and with its definitions it fits on a screen."""
    record = equation_record(optimizer, model, layout)
    for phase, eq in record["phases"].items():
        assert len(eq["equation"]) < 200, phase
        assert 1 + 2 * len(eq["terms"]) <= 50, phase
    assert "dpu_compute = " in render_text(record)


@pytest.mark.parametrize("optimizer,model,layout", first_fast(CONFIGS))
def test_terms_expand_to_the_compiled_expressions(optimizer: str, model: str, layout: str) -> None:
    terms, outputs = readable(optimizer, model, layout)
    full = expressions(optimizer, model, layout)
    for phase in PHASES:
        assert sympy.simplify(terms.expand(outputs[phase]) - full[phase]) == 0


def test_dense_compute_reads_like_the_kernel() -> None:
    """MA-SGD LR dense: the compute phase is the per-section sum, every term defined."""
    record = equation_record("ma-sgd", "lr", "dense")
    compute = record["phases"]["dpu_compute"]
    assert "C_sample*rows_per_dpu" in compute["equation"] and "C_update*R" in compute["equation"]
    assert record["terms"]["R"]["definition"] == "ceiling(rows_per_dpu/local_batch)"
    assert record["terms"]["I_sample"]["definition"] == "features*(i_dot + i_grad)/tasklets + 24"
