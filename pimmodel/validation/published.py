"""The ``published`` group: PrIM's measurements of the real UPMEM system (``validation/prim.toml``), each
evaluated as a microbenchmark workload through the cost primitives (``pimmodel.microbenchmarks``). A case whose
measurement a spec constant was read off (``restates = "<spec field>"`` in the file) restates an input: it checks
the workload description, and is not counted as evidence."""

from __future__ import annotations

from ..errors import SpecError
from ..microbenchmarks import run
from ..specs import HardwareSpec
from .cases import Case
from .data import load


def published_cases(hw: HardwareSpec) -> list[Case]:
    """PrIM measurements vs the primitives' cost of the same microbenchmark workload."""
    cases = []
    for entry in load("prim.toml").get("case", []):
        try:
            predicted = run(entry["benchmark"], entry["quantity"], entry.get("params", {}), hw)
            cases.append(Case("published", entry["name"], entry["phase"], float(entry["reference"]), predicted,
                              float(entry.get("tolerance", 0.10)), unit=entry.get("unit", ""),
                              source=entry.get("source", ""), note=entry.get("note", ""),
                              restates=str(entry.get("restates", ""))))
        except KeyError as exc:
            raise SpecError(f"validation/prim.toml: case {entry.get('name', '?')!r} lacks {exc.args[0]!r}") from None
    return cases
