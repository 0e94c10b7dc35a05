"""Rendering of the cost model's equation record (``costmodel.readable.equation_record``): each phase, then the
definitions it uses, as plain text or LaTeX."""

from __future__ import annotations

from typing import Any


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
