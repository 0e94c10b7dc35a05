"""Generate a configuration's model source: one assignment per named term, in definition order.

The equations are written over named terms (``costmodel.terms``); expanding them into full expressions of the
inputs (what ``lambdify`` used to compile) made sympy re-simplify every ``Max``/``Min`` while terms were substituted,
most of a build's cost. Here nothing is expanded: each term becomes one assignment over the inputs and earlier
terms, each output one expression over the terms, and ``Max``/``Min`` print as they stand (numpy's ``maximum`` /
``minimum``, or ``max``/``min`` in the scalar ``math`` version). Terms are the common subexpressions, so no CSE pass
is needed either. The same assignments give two functions:

- ``vector``: numpy, every input may be an array (a design-space batch, a scaling curve);
- ``scalar``: ``math`` and builtins on floats, for one design point (no array machinery at all).

``compile.write_all(DIR)`` writes the sources of every configuration under ``DIR/<source hash>/`` (what a wheel
ships, ``setup.py``).
"""

from __future__ import annotations

import keyword
from typing import Any

FORMAT = "2"
"""Bumped when the generated source's layout changes (part of the file header, checked on load)."""


def configurations() -> list[tuple[str, str, str, str, str]]:
    """Every (optimizer, model, layout, topology, kernels) the registry accepts."""
    from ..errors import SpecError
    from ..specs import KERNEL_VARIANTS, MODELS
    from ..specs.hardware import TOPOLOGIES
    from ..specs.optimizers import OPTIMIZERS, require_links
    from ..specs.workload import LAYOUTS

    out = []
    for optimizer in OPTIMIZERS:
        for topology in TOPOLOGIES:
            try:
                require_links(optimizer, topology, "a check")
            except SpecError:
                continue
            out += [(optimizer, m, lay, topology, k) for m in MODELS for lay in LAYOUTS for k in KERNEL_VARIANTS]
    return out


def _printers() -> tuple[Any, Any]:
    from sympy.printing.numpy import NumPyPrinter
    from sympy.printing.pycode import PythonCodePrinter

    class Vector(NumPyPrinter):  # type: ignore[misc]
        def _print_Max(self, expr: Any) -> str:
            return self._nary("maximum", expr.args)

        def _print_Min(self, expr: Any) -> str:
            return self._nary("minimum", expr.args)

        def _nary(self, name: str, args: Any) -> str:
            printed = [self._print(a) for a in args]
            out = printed[0]
            for p in printed[1:]:
                out = f"{name}({out}, {p})"
            return out

    class Scalar(PythonCodePrinter):  # type: ignore[misc]
        def _print_Max(self, expr: Any) -> str:
            return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

        def _print_Min(self, expr: Any) -> str:
            return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"

        def _print_Function(self, expr: Any) -> str:
            if type(expr).__name__ == "Step":  # primitives.step: 1 where x >= 0
                return f"(1.0 if {self._print(expr.args[0])} >= 0 else 0.0)"
            return str(super()._print_Function(expr))

    settings = {"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": False,
                "strict": True}
    return Vector(settings), Scalar(settings)


def generate(key: tuple[str, str, str, str, str]) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(inputs, outputs, source) of one configuration: the source defines ``vector(...)`` and ``scalar(...)``, both
    taking the inputs positionally and returning the outputs as a list."""
    import sympy

    from .registry import equation_set
    from .symbols import all_symbols

    terms, outs = equation_set(*key).outputs()
    symbols = all_symbols()
    inputs = tuple(symbols)
    for name in inputs:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"cost model input {name!r} is not a Python name")
    names: dict[Any, str] = {s: name for name, s in symbols.items()}
    term_list = list(terms)
    for i, term in enumerate(term_list):
        names[term.symbol] = f"_t{i}"

    def printed(printer: Any, expr: Any) -> str:
        expr = sympy.sympify(expr)
        stray = {s for s in expr.free_symbols if s not in names}
        if stray:
            raise ValueError(f"{key}: symbols {sorted(map(str, stray))} are neither inputs nor terms")
        return str(printer.doprint(expr))

    vector, scalar = _printers()
    # inputs print as their argument names, terms as _t<i> (a term may share a name with an input)
    for printer in (vector, scalar):
        printer._print_Symbol = lambda s, _n=names: _n.get(s, None) or _bad(s)  # type: ignore[method-assign]
    outputs = tuple(outs)
    lines = [f"# pimmodel generated model source, format {FORMAT}, configuration {'/'.join(key)}"]
    for fname, printer in (("vector", vector), ("scalar", scalar)):
        lines.append(f"def {fname}({', '.join(inputs)}):")
        for term in term_list:
            lines.append(f"    {names[term.symbol]} = {printed(printer, term.definition)}")
        lines.append("    return [" + ", ".join(printed(printer, outs[o]) for o in outputs) + "]")
        lines.append("")
    return inputs, outputs, "\n".join(lines)


def _bad(symbol: Any) -> str:
    raise ValueError(f"symbol {symbol} is neither an input nor a term")
