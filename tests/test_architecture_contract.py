"""The architecture-family plug-in contract (``pimmodel.specs.architectures``): every entry's pieces exist with the
contract's names, and a family's modules are imported only by its own files (its registry entry names them by
dotted path): adding a family touches nothing else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pimmodel
from pimmodel.specs import hardware_names, load_hardware
from pimmodel.specs.architectures import REGISTRY, architecture_of, resolve

PACKAGE = Path(pimmodel.__file__).resolve().parent
PRICING_API = ("evaluate", "evaluate_point", "equations", "expressions", "inputs", "numeric_fields", "record_extra",
               "memory_excess", "WHAT_IFS")


def _modules(info) -> set[str]:  # type: ignore[no-untyped-def]
    paths = [info.spec.partition(":")[0], info.capacity.partition(":")[0]] + ([info.pricing] if info.pricing else [])
    return set(paths) | set(info.modules) | ({info.silicon_check.partition(":")[0]} if info.silicon_check else set())


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_piece_exists(name: str) -> None:
    info = REGISTRY[name]
    record = resolve(info.spec)
    module = resolve(info.spec.partition(":")[0])
    assert getattr(record, "family", "upmem-like") == name
    for attr in ("from_mapping", "to_mapping", "FIELDS"):
        assert hasattr(module, attr), f"{info.spec}: no {attr}"
    assert callable(resolve(info.capacity))
    if info.silicon_check:
        assert callable(resolve(info.silicon_check))
    for module in info.modules:
        resolve(module)
    if info.pricing:
        pricing = resolve(info.pricing)
        missing = [a for a in PRICING_API if not hasattr(pricing, a)]
        assert not missing, f"{info.pricing} lacks {missing}"


def _imports(path: Path) -> set[str]:
    """Absolute dotted names of the pimmodel modules a file imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("pimmodel", *path.relative_to(PACKAGE).parent.parts))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("name", [n for n, i in REGISTRY.items() if i.pricing])
def test_a_family_is_imported_only_by_its_own_files(name: str) -> None:
    own = _modules(REGISTRY[name])
    own_files = {PACKAGE.parent / (m.replace(".", "/") + ".py") for m in own}
    strangers = [f"{path.relative_to(PACKAGE.parent)} imports {sorted(own & _imports(path))}"
                 for path in sorted(PACKAGE.rglob("*.py"))
                 if path not in own_files and own & _imports(path)]
    assert not strangers, "a family's modules are reached only through its registry entry:\n" + "\n".join(strangers)


def test_the_import_scan_sees_a_relative_import() -> None:
    bank = PACKAGE / "kernels" / "bank_simd.py"
    assert "pimmodel.specs.bank_simd" in _imports(bank)


@pytest.mark.parametrize("name", hardware_names())
def test_every_shipped_spec_has_a_family(name: str) -> None:
    assert architecture_of(load_hardware(name)).name in REGISTRY


OPTION_INPUTS = {"tasklets": "tasklets", "sync_every": "sync_every"}
"""Command-line options a family's pricing may not read, and the workload input each one sets."""


def _read_inputs(info, optimizer: str, model: str) -> set[str] | None:  # type: ignore[no-untyped-def]
    """The input symbols the family's expressions of one optimizer x model depend on (None: it does not price
    that optimizer without links)."""
    from pimmodel.costmodel import registry

    try:
        exprs = (resolve(info.pricing).expressions(optimizer, model) if info.pricing
                 else registry.expressions(optimizer, model, "dense"))
    except Exception:  # noqa: BLE001 - an optimizer that needs links: refused, not priced
        return None
    return {str(s) for e in exprs.values() if hasattr(e, "free_symbols") for s in e.free_symbols}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if not REGISTRY[n].pricing else n
                                  for n in sorted(REGISTRY)])  # upmem-like: 20 s of sympy over 7 optimizers
def test_a_family_refuses_exactly_the_options_its_pricing_never_reads(name: str) -> None:
    """Derived from the equations: an option (for every optimizer that takes it) whose input no expression of the
    family reads is in its ``ignores`` (so the CLI refuses it), and an option in ``ignores`` is read by none."""
    from pimmodel.specs.optimizers import REGISTRY as OPTIMIZERS

    info = REGISTRY[name]
    declared = {o for o, _ in info.ignores}
    assert declared <= set(OPTION_INPUTS), f"{name}: ignores {declared - set(OPTION_INPUTS)} has no input to check"
    for option, symbol in OPTION_INPUTS.items():
        takers = [o for o, i in OPTIMIZERS.items() if option != "sync_every" or "sync_every" in i.takes]
        reads = {(o, m): symbol in found for o in takers for m in ("lr", "svm")
                 if (found := _read_inputs(info, o, m)) is not None}
        assert reads, f"{name} prices no optimizer that takes --{option}"
        if option in declared:
            assert not any(reads.values()), f"{name} declares --{option} ignored but its pricing reads it"
        else:
            unread = [k for k, v in reads.items() if not v]
            assert not unread, f"{name}: --{option} is not read by {unread} yet not refused (add it to ignores)"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_ignored_option_is_refused_on_the_command_line(name: str) -> None:
    from support import cli

    info = REGISTRY[name]
    spec = next(h for h in sorted(hardware_names()) if architecture_of(load_hardware(h)).name == name)
    for option, _why in info.ignores:
        flag = "--" + option.replace("_", "-")
        for command in ("predict", "scale"):
            r = cli(command, "--hardware", spec, flag, "8")
            assert r.returncode == 2 and r.stderr.count("\n") == 1, (command, r.stderr)
            assert r.stderr.startswith(f"error: {flag} does not apply to {spec}"), r.stderr
