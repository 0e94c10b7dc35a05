"""The package's import structure (ARCHITECTURE.md): the static import graph, function-local imports included,
has no cycle; every import points down the layers; the emulator never imports the cost model."""

from __future__ import annotations

import ast
from pathlib import Path

import pimmodel

ROOT = Path(pimmodel.__file__).parent
LAYERS: dict[str, int] = {
    # 0-1: vocabulary every layer may use
    "errors": 0, "units": 0, "resources": 0, "atomic": 1, "phases": 1,
    "redact": 0, "version": 1, "_version": 0,  # _version: written by setuptools-scm at install time
    # 2: frozen, validated descriptions; rendering of plain records (no model inside)
    "specs": 2, "report": 2,
    # 3-4: what one event costs, and what a kernel executes (and whether it fits)
    "primitives": 3, "kernels": 4,
    # 5: the two independent ways to get a time: equations, and emulation (neither imports the other)
    "costmodel": 5, "emulator": 5, "microbenchmarks": 5, "baselines": 5,
    # 6: fitting the equations' coefficients (to the emulator)
    "calibration": 6,
    # 7: users of calibrated predictions
    "validation": 7, "dse": 7,
    # 8: composition of the layers for users (what the CLI calls)
    "api": 8, "families": 8,
    # 9: what composes the api's predictions with emulation and the baselines (the study's comparison)
    "comparison": 9,
    # 10: the study's figures, computed from the comparison and the api's predictions
    "reproduce": 10,
    # 11: the command line
    "cli": 11, "__main__": 12,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):  # every import, module-level or inside a function
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, path.name == "__init__.py", node)
                subs = [f"{base}.{a.name}" for a in node.names]
                # ``from pkg import sub`` imports the submodule; only a name defined in pkg/__init__ depends on it
                targets = subs if all(s in modules for s in subs) else [base, *subs]
            else:
                continue
            for t in targets:
                if t in modules and t != name:
                    graph[name].add(t)
    return graph


def _layer(module: str) -> tuple[int, str]:
    parts = module.split(".")
    if len(parts) == 1:  # the package itself: its lazy __getattr__ may point anywhere
        return 13, ""
    return LAYERS[parts[1]], parts[1]


def test_every_module_has_a_layer() -> None:
    assert {m.split(".")[1] for m in _modules() if "." in m} <= set(LAYERS)


def test_imports_point_down_the_layers() -> None:
    bad = []
    for src, targets in _graph().items():
        for dst in targets:
            if dst == "pimmodel":
                bad.append(f"{src} -> pimmodel (import from the submodule instead)")
                continue
            (ls, ps), (ld, pd) = _layer(src), _layer(dst)
            if ps != pd and ls <= ld:
                bad.append(f"{src} (layer {ls}) -> {dst} (layer {ld})")
    assert not bad, "\n".join(sorted(bad))


def test_emulator_never_imports_the_cost_model() -> None:
    graph = _graph()
    bad = [f"{s} -> {d}" for s, ds in graph.items() if s.startswith("pimmodel.emulator") for d in ds
           if d.startswith("pimmodel.costmodel")]
    assert not bad


def test_no_import_cycles() -> None:
    graph = _graph()
    # package -> its own submodules (an __init__ re-exporting) is not a cycle with submodule -> sibling
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle.extend(stack[stack.index(nxt):] + [node, nxt] if nxt in stack else [node, nxt])
                return True
            if state.get(nxt) is None and visit(nxt, [*stack, node]):
                return True
        state[node] = 2
        return False

    for n in sorted(graph):
        if state.get(n) is None and visit(n, []):
            break
    assert not cycle, " -> ".join(cycle)
