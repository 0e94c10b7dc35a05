"""Generate a configuration's model source: one assignment per named term, in definition order.

The equations are written over named terms (``costmodel.terms``); expanding them into full expressions of the
inputs (what ``lambdify`` used to compile) made sympy re-simplify every ``Max``/``Min`` while terms were substituted,
most of a build's cost. Here nothing is expanded: each term becomes one assignment over the inputs and earlier
terms, each output one expression over the terms, and ``Max``/``Min`` print as they stand (numpy's ``maximum`` /
``minimum``, or ``max``/``min`` in the scalar ``math`` version). The printed source is then shared (``shared``):
a subexpression repeated within or across terms (the same ``ceil``, ``minimum`` or ``heaviside`` printed in several
terms: 87 ``minimum``, 55 ``ceil`` and 24 ``heaviside`` calls in MA-SGD's numpy function, 18, 9 and 3 once shared)
is computed once, a term used once is inlined, and arithmetic on literals is folded, all on the syntax tree so every
float operation keeps its operands and order (the same bits as the plain printing, ``generate(optimize=False)``).
The same assignments give two functions:

- ``vector``: numpy, every input may be an array (a design-space batch, a scaling curve);
- ``scalar``: ``math`` and builtins on floats, for one design point (no array machinery at all).

``compile.write_all(DIR)`` writes the sources of every configuration under ``DIR/<source hash>/`` (what a wheel
ships, ``setup.py``).
"""

from __future__ import annotations

import keyword
from typing import Any

FORMAT = "3"
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


def generate(key: tuple[str, str, str, str, str], optimize: bool = True
             ) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(inputs, outputs, source) of one configuration: the source defines ``vector(...)`` and ``scalar(...)``, both
    taking the inputs positionally and returning the outputs as a list. ``optimize=False``: the terms printed as
    they stand, one assignment each (the plain printing that ``shared`` must reproduce bit for bit)."""
    from .registry import equation_set
    from .symbols import all_symbols

    terms, outs = equation_set(*key).outputs()
    return source_of("/".join(key), terms, outs, all_symbols(), optimize)


def source_of(label: str, terms: Any, outs: dict[str, Any], symbols: dict[str, Any], optimize: bool = True
              ) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(inputs, outputs, source) of any (terms, outputs) over the input ``symbols`` (name -> symbol): what
    ``generate`` prints for an optimizer's configuration, and an architecture family's pricing for its own."""
    import sympy

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
            raise ValueError(f"{label}: symbols {sorted(map(str, stray))} are neither inputs nor terms")
        return str(printer.doprint(expr))

    vector, scalar = _printers()
    # inputs print as their argument names, terms as _t<i> (a term may share a name with an input)
    for printer in (vector, scalar):
        printer._print_Symbol = lambda s, _n=names: _n.get(s, None) or _bad(s)  # type: ignore[method-assign]
    outputs = tuple(outs)
    lines = [f"# pimmodel generated model source, format {FORMAT}, configuration {label}"]
    for fname, printer in (("vector", vector), ("scalar", scalar)):
        lines.append(f"def {fname}({', '.join(inputs)}):")
        if not optimize:
            for term in term_list:
                lines.append(f"    {names[term.symbol]} = {printed(printer, term.definition)}")
            lines.append("    return [" + ", ".join(printed(printer, outs[o]) for o in outputs) + "]")
        else:
            body, returned = shared([(names[t.symbol], printed(printer, t.definition)) for t in term_list],
                                    [printed(printer, outs[o]) for o in outputs])
            lines += [f"    {name} = {expr}" for name, expr in body]
            lines.append("    return [" + ", ".join(returned) + "]")
        lines.append("")
    return inputs, outputs, "\n".join(lines)


_MAX_DEPTH = 24
"""An expression nested deeper than this is given a name (Python's parser refuses very deep nesting)."""


def shared(assignments: list[tuple[str, str]], returned: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The same computation with every repeated subexpression computed once (``_c<i>``, in dependency order),
    terms inlined where used once, unused terms dropped and operations on literals folded.

    Works on the printed source's syntax tree, so every float operation keeps its operands and their order (a
    subtree that occurs twice is the same sequence of IEEE operations both times): the results are the same bits
    as the plain source's. Only literal arithmetic is folded (Python computes it identically at run time, in both
    functions); calls are never folded (``ceil`` is numpy's in one function and ``math``'s in the other)."""
    import ast

    keys: dict[tuple[Any, ...], int] = {}
    nodes: list[tuple[Any, ...]] = []  # (kind, label, *children ids) or ("name"/"const", value)
    terms: dict[str, int] = {}

    def intern(node: tuple[Any, ...]) -> int:
        found = keys.get(node)
        if found is None:
            found = keys[node] = len(nodes)
            nodes.append(node)
        return found

    def const(value: Any) -> int:
        return intern(("const", type(value).__name__, repr(value)))

    def literal(i: int) -> Any:
        return ast.literal_eval(nodes[i][2]) if nodes[i][0] == "const" else _NOT_LITERAL

    def fold(expr: ast.expr) -> int | None:
        try:
            value = eval(compile(ast.Expression(ast.fix_missing_locations(expr)), "<fold>", "eval"), {})  # noqa: S307
        except ArithmeticError:
            return None
        return const(value) if type(value) in (int, float) else None

    def visit(n: ast.expr) -> int:
        if isinstance(n, ast.Name):
            return terms[n.id] if n.id in terms else intern(("name", n.id))
        if isinstance(n, ast.Constant):
            return const(n.value)
        if isinstance(n, ast.BinOp):
            left, right = visit(n.left), visit(n.right)
            a, b = literal(left), literal(right)
            if a is not _NOT_LITERAL and b is not _NOT_LITERAL:
                folded = fold(ast.BinOp(ast.Constant(a), n.op, ast.Constant(b)))
                if folded is not None:
                    return folded
            op = type(n.op).__name__
            if op == "Add" and nodes[left][:2] == ("unary", "USub"):  # -a + b is b - a (the same IEEE sum)
                return intern(("bin", "Sub", right, nodes[left][2]))
            if op in ("Add", "Sub") and nodes[right][:2] == ("unary", "USub"):  # a + -b is a - b, a - -b is a + b
                return intern(("bin", "Sub" if op == "Add" else "Add", left, nodes[right][2]))
            return intern(("bin", op, left, right))
        if isinstance(n, ast.UnaryOp):
            operand = visit(n.operand)
            a = literal(operand)
            if a is not _NOT_LITERAL:
                folded = fold(ast.UnaryOp(n.op, ast.Constant(a)))
                if folded is not None:
                    return folded
            return intern(("unary", type(n.op).__name__, operand))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            return intern(("call", n.func.id, *(visit(a) for a in n.args)))
        if isinstance(n, ast.IfExp):
            return intern(("if", "", visit(n.test), visit(n.body), visit(n.orelse)))
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            return intern(("compare", type(n.ops[0]).__name__, visit(n.left), visit(n.comparators[0])))
        raise ValueError(f"generated source has an unexpected expression: {ast.unparse(n)}")

    for name, source in assignments:
        terms[name] = visit(ast.parse(source, mode="eval").body)
    roots = [visit(ast.parse(source, mode="eval").body) for source in returned]

    uses = [0] * len(nodes)
    order: list[int] = []  # post-order: children before parents
    seen: set[int] = set()
    for root in roots:
        uses[root] += 1
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:
            i, done = stack.pop()
            if done:
                order.append(i)
                continue
            if i in seen:
                continue
            seen.add(i)
            stack.append((i, True))
            for child in reversed(_children(nodes[i])):
                uses[child] += 1
                stack.append((child, False))

    named: dict[int, str] = {}
    built: dict[int, tuple[ast.expr, int]] = {}
    body: list[tuple[str, str]] = []

    def reference(i: int) -> tuple[ast.expr, int]:
        if i in named:
            return ast.Name(named[i], ast.Load()), 0
        return built[i]

    for i in order:
        node = nodes[i]
        kind = node[0]
        if kind == "name":
            built[i] = ast.Name(node[1], ast.Load()), 0
            continue
        if kind == "const":
            built[i] = ast.Constant(literal(i)), 0
            continue
        parts = [reference(c) for c in _children(node)]
        depth = 1 + max(d for _, d in parts)
        args = [e for e, _ in parts]
        expr: ast.expr
        if kind == "bin":
            expr = ast.BinOp(args[0], getattr(ast, node[1])(), args[1])
        elif kind == "unary":
            expr = ast.UnaryOp(getattr(ast, node[1])(), args[0])
        elif kind == "call":
            expr = ast.Call(ast.Name(node[1], ast.Load()), args, [])
        elif kind == "if":
            expr = ast.IfExp(args[0], args[1], args[2])
        else:
            expr = ast.Compare(args[0], [getattr(ast, node[1])()], [args[1]])
        built[i] = expr, depth
        if uses[i] > 1 or depth > _MAX_DEPTH:
            named[i] = f"_c{len(body)}"
            body.append((named[i], ast.unparse(expr)))
    return body, [ast.unparse(reference(root)[0]) for root in roots]


_NOT_LITERAL = object()


def _children(node: tuple[Any, ...]) -> list[int]:
    return [] if node[0] in ("name", "const") else list(node[2:])


def _bad(symbol: Any) -> str:
    raise ValueError(f"symbol {symbol} is neither an input nor a term")
