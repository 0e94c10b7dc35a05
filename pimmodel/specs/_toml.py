"""Reading TOML into plain tables, and writing the small, flat TOML our spec files use."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import PimModelError, SpecError

MAX_TEXT_BYTES = 16 * 1024 * 1024
"""Spec, study and calibration files are kilobytes; anything larger is not one (and is never read whole)."""
EXAMPLES = {
    "hardware": "see hardware_specs/upmem-2556.toml for the format",
    "dataset": "a dataset needs at least 'features = 512' and 'rows_per_dpu_weak = 1024'",
    "study": "see studies/scalable-pim.toml for the format",
    "calibration": "give a file written by `pimmodel calibrate`",
}


SNIFF_BYTES = 8192
"""Bytes looked at to tell a binary file from text."""
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v")


def looks_binary(head: bytes) -> bool:
    """Control bytes other than whitespace (NUL, ESC, ...) do not occur in text files (TOML, JSON, svmlight)."""
    return any(b < 0x20 and b not in _TEXT_CONTROLS for b in head)


def read_text_file(path: Path, what: str, error: type[PimModelError] = SpecError) -> str:
    """The UTF-8 text of a small input file, read at most ``MAX_TEXT_BYTES`` deep. A missing, unreadable, binary,
    non-UTF-8, oversized or empty file is a one-line ``error`` naming the file and what to give instead."""
    name = f"{what} file {str(path)!r}"
    advice = EXAMPLES.get(what, "")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise error(f"cannot read {name}: {exc.strerror or exc}") from None
    if len(raw) > MAX_TEXT_BYTES:
        raise error(f"{name} is larger than {MAX_TEXT_BYTES // 2**20} MiB, too large for a {what} file; "
                    f"{advice or 'check the path'}")
    if looks_binary(raw[:SNIFF_BYTES]):
        raise error(f"{name} is a binary file, not text; {advice or 'check the path'}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{name} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as "
                    "UTF-8") from None
    if not text.strip():
        raise error(f"{name} is empty; {advice or 'check the path'}")
    return text


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """Parse ``path``; a missing, binary, non-UTF-8, empty or malformed file is a one-line SpecError."""
    text = read_text_file(path, what)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{what} file {str(path)!r} is not valid TOML: {exc}") from None
    if not data:
        raise SpecError(f"{what} file {str(path)!r} holds no keys; {EXAMPLES.get(what, 'check the path')}")
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
