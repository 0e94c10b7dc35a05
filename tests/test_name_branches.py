"""No optimizer, workload-family or hardware-spec name is compared outside its registry entry: a branch on a name
(``if optimizer == "admm"``, ``opt in ("sgd", "ga-sgd")``, ``{"ma-sgd", "admm"} & chosen``) is a property the
registry should state (``keeps_duals``, ``batch == "global"``, ``study``), so a new optimizer or family inherits the
behaviour by its entry, never by a forgotten ``elif``. The scan reads every module of the package as syntax."""

from __future__ import annotations

import ast
from pathlib import Path

import pimmodel
from pimmodel.baselines.workload import BASELINE_OPTIMIZERS
from pimmodel.specs import HARDWARE_FAMILIES, hardware_names
from pimmodel.specs.families import FAMILIES
from pimmodel.specs.optimizers import OPTIMIZERS

PACKAGE = Path(pimmodel.__file__).resolve().parent
NAMES = (frozenset(OPTIMIZERS) | frozenset(FAMILIES) | frozenset(BASELINE_OPTIMIZERS) | frozenset(hardware_names())
         | frozenset(HARDWARE_FAMILIES))


def _names_in(node: ast.AST) -> list[str]:
    """The registered names a compared operand spells out: a string, or a literal tuple/list/set of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in NAMES else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for elt in node.elts for n in _names_in(elt)]
    return []


def name_branches(source: str) -> list[tuple[int, str]]:
    """(line, name) for every comparison, membership test or set operation on a registered name in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.Sub)):
            operands = [node.left, node.right]
        found += [(node.lineno, name) for operand in operands for name in _names_in(operand)]
    return found


def test_the_scan_finds_the_branches_it_forbids() -> None:
    assert name_branches('if optimizer == "admm":\n    pass\n') == [(1, "admm")]
    assert [n for _, n in name_branches('ok = opt not in ("sgd", "ga-sgd")\n')] == ["sgd", "ga-sgd"]
    assert name_branches('both = {"ma-sgd", "admm"} & set(chosen)\n') == [(1, "ma-sgd"), (1, "admm")]
    assert name_branches('x = "kmeans" if a else b\nlabel = REGISTRY["admm"].label\n') == []
    assert name_branches('if "linear" != fam: pass\n') == [(1, "linear")]


def test_no_module_branches_on_a_registered_name() -> None:
    hits = [f"{path.relative_to(PACKAGE.parent)}:{line} {name!r}"
            for path in sorted(PACKAGE.rglob("*.py"))
            for line, name in name_branches(path.read_text(encoding="utf-8"))]
    assert not hits, f"{len(hits)} name branches outside the registries:\n" + "\n".join(hits)
