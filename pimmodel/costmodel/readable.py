"""The cost model's equations as a reader of the study writes them: each phase a short equation over named
terms, with the definitions it uses, as plain text and LaTeX (the record ``pimmodel equations`` renders)."""

from __future__ import annotations

from typing import Any

import sympy

from ..phases import PHASES
from .registry import readable
from .symbols import latex_names

PHASE_LATEX = {
    "dpu_compute": r"T_{\mathrm{compute}}", "mram_wram_dma": r"T_{\mathrm{DMA}}",
    "host_to_pim": r"T_{\mathrm{host \to PIM}}", "pim_to_host": r"T_{\mathrm{PIM \to host}}",
    "host_aggregate": r"T_{\mathrm{aggregate}}", "launch": r"T_{\mathrm{launch}}",
}
SHOWN = (*PHASES, "mram_wram_dma_exposed")
PHASE_LATEX["mram_wram_dma_exposed"] = r"T_{\mathrm{DMA,exposed}}"


def equation_record(optimizer: str, model: str, layout: str, topology: str = "none", kernels: str = "study",
                    pricing: Any = None) -> dict[str, Any]:
    """``{"optimizer", "model", "layout", "topology", "phases": {phase: {"equation", "latex", "terms"}},
    "terms": {name: {"definition", "latex", "doc"}}}``: every phase over named terms, and every term.
    ``pricing``: an architecture family's pricing module (``specs.architectures``; None: the optimizers' own)."""
    if pricing is None:
        terms, outputs = readable(optimizer, model, layout, topology, kernels)
    else:
        terms, outputs = pricing.equations(optimizer, model)
    names = {**latex_names(), **terms.latex_names()}

    def tex(e: Any) -> str:
        return sympy.latex(e, symbol_names=names, mul_symbol="dot")

    phases = {}
    for phase in SHOWN:
        expr = outputs[phase]
        phases[phase] = {"equation": sympy.sstr(expr), "latex": f"{PHASE_LATEX[phase]} = {tex(expr)}",
                         "terms": [t.symbol.name for t in terms.used_by(expr)]}
    defined = {t.symbol.name: {"definition": sympy.sstr(t.definition),
                               "latex": f"{t.latex} = {tex(t.definition)}", "doc": t.doc} for t in terms}
    return {"optimizer": optimizer, "model": model, "layout": layout, "topology": topology, "kernels": kernels,
            "phases": phases,
            "terms": defined}
