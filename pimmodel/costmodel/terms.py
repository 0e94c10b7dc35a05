"""Named intermediate terms: equations written the way a paper writes them.

An equation set defines short named terms (rounds per epoch ``R``, instructions per tasklet per sample
``I_sample``, compute cycles per occurrence of a section ``C_sample``, ...) and writes each phase over them.
``Terms.expand`` substitutes the definitions back (innermost last) into the full expression of the model's
inputs, which is what gets compiled; ``Terms.used_by`` lists the definitions a phase needs, for printing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import sympy
from sympy import Expr


@dataclass(frozen=True)
class Term:
    symbol: sympy.Symbol
    definition: Expr
    doc: str
    latex: str


class Terms:
    """Definitions in dependency order: each refers only to inputs and to earlier terms."""

    def __init__(self) -> None:
        self._terms: dict[sympy.Symbol, Term] = {}

    def define(self, name: str, definition: Expr | int | float, doc: str, latex: str | None = None) -> Expr:
        """A symbol standing for ``definition`` (returned as is when it is already a number or a symbol; the same
        name defined again with the same definition is the same term)."""
        expr = sympy.sympify(definition)
        if expr.is_Atom:
            return expr
        symbol = sympy.Symbol(name, real=True)
        if symbol in self._terms:
            if self._terms[symbol].definition != expr:
                raise ValueError(f"term {name!r} is defined twice, differently")
            return symbol
        self._terms[symbol] = Term(symbol, expr, doc, latex or _latex_of(name))
        return symbol

    def copy(self) -> Terms:
        out = Terms()
        out._terms = dict(self._terms)
        return out

    def __iter__(self) -> Iterator[Term]:
        return iter(self._terms.values())

    def expand(self, expr: Expr | int | float) -> Expr:
        """``expr`` with every term replaced by its definition (recursively)."""
        full = self._expanded()
        return sympy.sympify(expr).xreplace(full)

    def _expanded(self) -> dict[sympy.Symbol, Expr]:
        full: dict[sympy.Symbol, Expr] = {}
        for term in self._terms.values():
            full[term.symbol] = term.definition.xreplace(full)
        return full

    def used_by(self, expr: Expr) -> list[Term]:
        """The terms ``expr`` needs, directly or through other terms, in definition order."""
        needed: set[sympy.Symbol] = set()
        stack = [s for s in sympy.sympify(expr).free_symbols if s in self._terms]
        while stack:
            s = stack.pop()
            if s in needed:
                continue
            needed.add(s)
            stack.extend(x for x in self._terms[s].definition.free_symbols if x in self._terms)
        return [t for s, t in self._terms.items() if s in needed]

    def latex_names(self) -> dict[sympy.Symbol, str]:
        return {t.symbol: t.latex for t in self._terms.values()}


def _latex_of(name: str) -> str:
    """``C_sample`` -> ``C_{\\mathrm{sample}}``; ``t_w_push`` -> ``t_{\\mathrm{w\\ push}}``."""
    head, _, rest = name.partition("_")
    if not rest:
        return head
    return head + r"_{\mathrm{" + rest.replace("_", r"\ ") + "}}"
