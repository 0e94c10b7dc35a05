"""The cost model's equations as a reader of the study would write them: each phase a short equation over
named terms, followed by the definitions it uses (plain text, LaTeX, or a JSON record)."""

from __future__ import annotations

from typing import Any

import sympy

from ..costmodel.registry import readable
from ..costmodel.symbols import latex_names
from ..phases import PHASES

PHASE_LATEX = {
    "dpu_compute": r"T_{\mathrm{compute}}", "mram_wram_dma": r"T_{\mathrm{DMA}}",
    "host_to_pim": r"T_{\mathrm{host \to PIM}}", "pim_to_host": r"T_{\mathrm{PIM \to host}}",
    "host_aggregate": r"T_{\mathrm{aggregate}}", "launch": r"T_{\mathrm{launch}}",
}
SHOWN = (*PHASES, "mram_wram_dma_exposed")
PHASE_LATEX["mram_wram_dma_exposed"] = r"T_{\mathrm{DMA,exposed}}"


def equation_record(optimizer: str, model: str, layout: str, topology: str = "none") -> dict[str, Any]:
    """``{"optimizer", "model", "layout", "topology", "phases": {phase: {"equation", "latex", "terms"}},
    "terms": {name: {"definition", "latex", "doc"}}}``: every phase over named terms, and every term."""
    terms, outputs = readable(optimizer, model, layout, topology)
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
    return {"optimizer": optimizer, "model": model, "layout": layout, "topology": topology, "phases": phases,
            "terms": defined}


def render_text(record: dict[str, Any]) -> str:
    """Each phase, then the definitions it uses (indented), one screen per phase."""
    lines = [f"{record['optimizer']} / {record['model']} / {record['layout']} layout: per-epoch seconds of each "
             "phase (inputs: hardware fields, workload symbols, fitted coefficients)", ""]
    for phase, eq in record["phases"].items():
        lines.append(f"{phase} = {eq['equation']}")
        if eq["terms"]:
            width = max(len(n) for n in eq["terms"])
            lines.append("  where")
            for name in eq["terms"]:
                t = record["terms"][name]
                lines.append(f"    {name:<{width}} = {t['definition']}")
                lines.append(f"    {'':<{width}}   ({t['doc']})")
        lines.append("")
    return "\n".join(lines)


def render_latex(record: dict[str, Any]) -> str:
    """One display equation per line (``\\[ ... \\]``), each phase followed by its terms."""
    lines = [f"% pimmodel equations: {record['optimizer']} / {record['model']} / {record['layout']} layout"]
    for phase, eq in record["phases"].items():
        lines += ["", f"% {phase}", rf"\[ {eq['latex']} \]"]
        lines += [rf"\[ {record['terms'][name]['latex']} \]  % {record['terms'][name]['doc']}" for name in eq["terms"]]
    return "\n".join(lines) + "\n"
