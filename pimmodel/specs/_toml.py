"""Reading TOML into plain tables, and writing the small, flat TOML our spec files use."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import SpecError


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """Parse ``path``; a missing or malformed file is a one-line SpecError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot read {what} file {str(path)!r}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{what} file {str(path)!r} is not valid TOML: {exc}") from None
    if not data:
        raise SpecError(f"{what} file {str(path)!r} is empty: see hardware_specs/upmem-2556.toml for the format")
    return data


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        escaped = v.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps(data: Mapping[str, Any]) -> str:
    """Write top-level scalars, then one ``[section]`` per nested table (one level deep, inline below)."""
    lines = [f"{k} = {_value(v)}" for k, v in data.items() if not isinstance(v, Mapping)]
    for section, table in data.items():
        if isinstance(table, Mapping):
            lines += ["", f"[{section}]"]
            lines += [f"{k} = {_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"
