"""One input schema: every input file kind described by typed msgspec Structs, and one translation of a refusal
into one line naming the file, the key, what is allowed (a range for numbers) and, for an unknown key, the
nearest known one.

The kinds and where their schema is built: hardware (UPMEM-like and bank-simd: ``schema_for_fields`` over the
family's ``FIELDS`` table, the one home of its keys, scales and ranges), CPU and GPU baseline specs (the same
builder over ``baselines/specs.py``'s tables), datasets (``specs/workload.py: dataset_schema``), DSE studies
(``dse/space.py: study_schema``) and the study's figures (``reproduce/spec.py: figure_schema``).
``pimmodel specs schema KIND --json`` prints each one's JSON Schema (``msgspec.json.schema``). A schema checks
each value on its own (types, ranges, allowed names, unknown keys); what relates two values (``low < high``, a
kind's required keys) stays with the record that needs it.

**Why msgspec, not pydantic** (both measured on this machine, Python 3.11, 3 runs each): ``python -X importtime``
gives msgspec 12.7 ms and pydantic 2.13's ``from pydantic import BaseModel`` 43 ms (70 ms of wall time with
``create_model``, ``Field`` and ``ValidationError`` imported); building and checking one small model takes 0.2 ms
with ``msgspec.defstruct`` against 11 ms with pydantic's ``create_model`` (the hardware schema alone has ~75
constants). Error quality is equal for our purpose: both give
the failing path, msgspec the first error only, which is exactly the one line a refusal prints (pydantic lists
every error over several lines with a URL each, which we would cut anyway). msgspec also writes the JSON
Schema. Neither message names both bounds of a range or suggests a near key, so ``validate`` words every refusal
itself from the schema (``msgspec.inspect``). This module, and so msgspec, is imported only when a file is
validated: the CLI's cold start (``pimmodel --help``) does not load it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Protocol

import msgspec
import msgspec.inspect as mi

from ..errors import PimModelError, SpecError, suggest


class Field(Protocol):
    """What the builder reads of a ``specs.hardware.Field`` record (the one table of a spec's keys and ranges)."""

    @property
    def section(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def scale(self) -> float: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def integer(self) -> bool: ...
    @property
    def doc(self) -> str: ...
    @property
    def default(self) -> float | None: ...


ExtraField = tuple[str, Any] | tuple[str, Any, Any]
"""A msgspec field beside a fields table's numbers: (key, type) is required, (key, type, default) optional."""
_TOP: tuple[ExtraField, ...] = (
    ("name", Annotated[str, msgspec.Meta(min_length=1, description="the spec's name")]),
    ("description", str, ""),
    ("schema", int | str, msgspec.UNSET),
)


def literal(values: Iterable[Any]) -> Any:
    """The type taking exactly ``values`` (a JSON Schema enum)."""
    return Literal[tuple(values)]


def with_source(kind: Any, name: str) -> Any:
    """``kind`` written plainly or as ``{ value = ..., source = "..." }`` (how every spec file gives a constant)."""
    constant = msgspec.defstruct(name, [("value", kind), ("source", str, "")], forbid_unknown_fields=True,
                                 kw_only=True)
    return kind | constant


def number(f: Field) -> Any:
    """A ``Field``'s TOML value: a number (whole when the field is a count in its TOML unit) in its range, in the
    TOML unit (``low / scale`` to ``high / scale``)."""
    kind: Any = int if f.integer and f.scale == 1 else float
    meta = msgspec.Meta(ge=_unit(f.low / f.scale), le=_unit(f.high / f.scale), description=f.doc or None)
    return Annotated[kind, meta]


def _unit(value: float) -> float | int:
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def _ident(text: str) -> str:
    return re.sub(r"\W", "_", text)


def schema_for_fields(name: str, fields: Sequence[Field], *, family: str | None = None,
                      extra: Mapping[str, Sequence[ExtraField]] | None = None) -> type[msgspec.Struct]:
    """The schema of a spec file whose constants are the ``Field`` table ``fields``: one table per section, one
    key per field (``with_source`` of ``number``; required unless the field has a ``default``), the top-level
    ``name``, ``description`` and ``schema``, and ``family`` (when given: optional, only that value). ``extra``:
    further keys per section ("" = top level), e.g. UPMEM's ``interconnect.topology``.

    A second architecture family calls it with its own table: ``schema_for_fields("bank-simd", FIELDS,
    family="bank-simd")`` (``specs/bank_simd.py``)."""
    extra = extra or {}
    sections: dict[str, list[ExtraField]] = {}
    for f in fields:
        kind = with_source(number(f), f"{_ident(name)}_{f.section}_{f.key}")
        sections.setdefault(f.section, []).append((f.key, kind) if f.default is None else
                                                  (f.key, kind, msgspec.UNSET))
    for section, more in extra.items():
        if section:
            sections.setdefault(section, []).extend(more)
    top: list[ExtraField] = [*_TOP, *extra.get("", ())]
    if family is not None:
        top.append(("family", Annotated[literal([family]), msgspec.Meta(
            description="the architecture family (specs/architectures.py)")], family))
    for section, keys in sections.items():
        table = msgspec.defstruct(f"{_ident(name)}_{section}", keys, forbid_unknown_fields=True, kw_only=True)
        required = any(len(k) == 2 for k in keys)
        top.append((section, table) if required else (section, table, msgspec.UNSET))
    return msgspec.defstruct(_ident(name), top, forbid_unknown_fields=True, kw_only=True)


def json_schema(struct: Any) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a schema type."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **msgspec.json.schema(struct)}


def outline(struct: Any) -> list[tuple[str, str, bool, str]]:
    """Every key a schema type takes, as (dotted key, what it takes, required, description), tables first-level
    keys before their own (``[]`` marks a list's items, ``<name>`` a free key): what ``specs schema`` prints."""
    out: list[tuple[str, str, bool, str]] = []

    def walk(info: Any, path: str) -> None:
        info = _strip(info)
        if isinstance(info, mi.UnionType):
            for member in info.types:
                if not _is_constant(member):
                    walk(member, path)
            return
        if isinstance(info, mi.ListType):
            walk(info.item_type, path + "[]")
        elif isinstance(info, mi.DictType):
            walk(info.value_type, path + ".<name>" if path else "<name>")
        elif isinstance(info, mi.StructType):
            for f in info.fields:
                key = f"{path}.{f.encode_name}" if path else f.encode_name
                out.append((key, describe(f.type), f.required, _doc(f.type)))
                walk(f.type, key)

    walk(mi.type_info(struct), "")
    return out


# ---------------------------------------------------------------- validation and its one line
def validate(data: Mapping[str, Any], struct: Any, origin: str, error: type[PimModelError] = SpecError,
             prefix: str = "") -> Any:
    """``data`` (a parsed file) checked against ``struct``; the first problem is one ``error`` line starting with
    ``origin`` and naming the key (``prefix`` + its dotted path)."""
    try:
        return msgspec.convert(data, struct)
    except msgspec.ValidationError as exc:
        raise error(explain(_name_keys(str(exc), data, struct), data, struct, origin, prefix)) from None


_ANY_KEY = "[...]"
"""How msgspec's path shows a key of a table whose keys are free (a study's ``[parameters]``)."""


def _name_keys(message: str, data: Any, struct: Any) -> str:
    """``message`` with each ``[...]`` of its path replaced by the key it stands for: the one entry of that table
    which, alone, still gives the same refusal."""
    head, sep, path = message.partition(" - at `$")
    parts = path.split(_ANY_KEY)
    raw = resolved = parts[0]
    for part in parts[1:]:
        steps = _steps(resolved)
        table = _value(data, steps)
        found = "?"
        for key in table if isinstance(table, Mapping) else ():
            trial = _replace(data, steps, {key: table[key]})
            try:
                msgspec.convert(trial, struct)
            except msgspec.ValidationError as exc:
                if str(exc).partition(" - at `$")[2].startswith(raw + _ANY_KEY):
                    found, data = str(key), trial
                    break
        resolved += "[" + msgspec.json.encode(found).decode() + "]" + part
        raw += _ANY_KEY + part
    return head + sep + resolved


def _replace(data: Any, steps: Sequence[str | int], new: Any) -> Any:
    """A copy of ``data`` with the value at ``steps`` replaced (copies only along the path)."""
    if not steps:
        return new
    copy: Any = dict(data) if isinstance(data, Mapping) else list(data)
    copy[steps[0]] = _replace(data[steps[0]], steps[1:], new)
    return copy


_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>.*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]")
_FIELD_NAME = re.compile(r"field `(.+)`")


def _steps(path: str) -> list[str | int]:
    out: list[str | int] = []
    for m in _STEP.finditer(path):
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)) if m.group(2) is not None
                   else str(msgspec.json.decode(m.group(3))))
    return out


def _strip(info: Any) -> Any:
    while isinstance(info, mi.Metadata):
        info = info.type
    return info


def _doc(info: Any) -> str:
    while isinstance(info, mi.Metadata):
        if info.extra_json_schema and info.extra_json_schema.get("description"):
            return str(info.extra_json_schema["description"])
        info = info.type
    if isinstance(info, mi.UnionType):
        return next((d for d in (_doc(m) for m in info.types) if d), "")
    return ""


def _is_constant(info: Any) -> bool:
    info = _strip(info)
    return isinstance(info, mi.StructType) and {f.name for f in info.fields} == {"value", "source"}


def _has_constant(info: Any) -> bool:
    info = _strip(info)
    return _is_constant(info) or isinstance(info, mi.UnionType) and any(_is_constant(m) for m in info.types)


def _literal_values(info: Any) -> tuple[Any, ...]:
    info = _strip(info)
    if isinstance(info, mi.LiteralType):
        return tuple(info.values)
    if isinstance(info, mi.UnionType):
        return tuple(v for m in info.types if not _is_constant(m) for v in _literal_values(m))
    return ()


def _child(info: Any, step: str | int) -> Any:
    """The type one step below ``info`` (a key of a table, an item of a list)."""
    info = _strip(info)
    if isinstance(info, mi.UnionType):
        for member in info.types:
            found = _child(member, step)
            if found is not None:
                return found
        return None
    if isinstance(info, mi.StructType) and isinstance(step, str):
        return next((f.type for f in info.fields if f.encode_name == step), None)
    if isinstance(info, mi.DictType) and isinstance(step, str):
        return info.value_type
    if isinstance(info, mi.ListType | mi.SetType | mi.VarTupleType) and isinstance(step, int):
        return info.item_type
    return None


def _value(data: Any, steps: Sequence[str | int]) -> Any:
    for step in steps:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _keys(info: Any) -> list[str]:
    info = _strip(info)
    if isinstance(info, mi.UnionType):
        return [k for member in info.types for k in _keys(member)]
    if isinstance(info, mi.StructType):
        return [f.encode_name for f in info.fields]
    return []


def _g(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e10 else f"{value:g}"


def _bounds(info: Any) -> str:
    lo = info.ge if info.ge is not None else info.gt
    hi = info.le if info.le is not None else info.lt
    if lo is None and hi is None:
        return ""
    left = "[" if info.ge is not None else "("
    right = "]" if info.le is not None else ")"
    if hi is None:
        return f" {'>=' if info.ge is not None else '>'} {_g(lo)}"
    if lo is None:
        return f" {'<=' if info.le is not None else '<'} {_g(hi)}"
    return f" in {left}{_g(lo)}, {_g(hi)}{right}"


def describe(info: Any) -> str:
    """What a schema type takes, in words: 'a number in [1, 100000]', 'one of dense, sparse'."""
    info = _strip(info)
    if isinstance(info, mi.UnionType):
        members = [m for m in info.types if not _is_constant(m) and not isinstance(_strip(m), mi.NoneType)]
        words = [describe(m) for m in members]
        return " or ".join(dict.fromkeys(words)) if words else "a value"
    if isinstance(info, mi.FloatType):
        return f"a number{_bounds(info)}"
    if isinstance(info, mi.IntType):
        return f"a whole number{_bounds(info)}"
    if isinstance(info, mi.BoolType):
        return "true or false"
    if isinstance(info, mi.StrType):
        if info.pattern and info.pattern != r"\S":
            return f"a string matching {info.pattern!r}"
        return "a non-empty string" if info.min_length or info.pattern else "a string"
    if isinstance(info, mi.LiteralType):
        shown = [str(v) if v != "" else '""' for v in info.values]
        return "one of " + ", ".join(shown) if len(shown) > 1 else repr(info.values[0])
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType):
        size = " non-empty" if info.min_length else ""
        return f"a{size} list of {_plural(describe(info.item_type))}"
    if isinstance(info, mi.StructType | mi.DictType | mi.TypedDictType | mi.DataclassType):
        return "a table"
    return "a value of another type"


def _plural(text: str) -> str:
    for one, many in (("a number", "numbers"), ("a whole number", "whole numbers"), ("a string", "strings"),
                      ("a non-empty string", "non-empty strings"), ("a table", "tables")):
        if text.startswith(one + " ") or text == one:
            return many + text[len(one):]
    return text


def _name(steps: Sequence[str | int]) -> str:
    out = ""
    for step in steps:
        out += f"[{step + 1}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def explain(message: str, data: Any, struct: Any, origin: str, prefix: str = "") -> str:
    """One line for msgspec's refusal ``message`` of ``data`` against ``struct``."""
    match = _AT.match(message)
    what = match.group("what") if match else message
    steps = _steps(match.group("path") or "") if match else []
    root = mi.type_info(struct)
    info: Any = root
    parents = [root]
    value = _value(data, steps)
    for step in steps:
        info = _child(info, step) if info is not None else None
        parents.append(info)
    if steps and steps[-1] == "value" and len(parents) > 2 and _has_constant(parents[-2]):
        steps, info = steps[:-1], parents[-2]  # `{ value = ..., source = ... }`: the constant is the key
    field = _FIELD_NAME.search(what)
    if what.startswith("Object contains unknown field") and field:
        key = field.group(1)
        known = [k for k in _keys(info) if k != key]
        where = prefix + _name([*steps, key])
        return f"{origin}: unknown key {where}{suggest(key, known) if known else ''}"
    if what.startswith("Object missing required field") and field:
        key = field.group(1)
        child = _child(info, key)
        doc = _doc(child) if child is not None else ""
        return f"{origin}: missing {prefix}{_name([*steps, key])} ({describe(child) if child is not None else ''}" \
               f"{': ' + doc if doc else ''})".replace(" ()", "")
    key = prefix + _name(steps) if steps else (prefix.rstrip(".") or "the file")
    allowed = describe(info) if info is not None else ""
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and any(s in what for s in (">=", "<=", "> ", "< ")) and math.isfinite(float(value)):
        return f"{origin}: {key} = {_g(value)} is out of range; use {allowed}"
    if what.startswith("Invalid enum value") and isinstance(value, str):
        choices = [str(c) for c in _literal_values(info)]
        near = suggest(value, choices) if len(choices) > 1 else ""
        return f"{origin}: {key} must be {allowed}, got {value!r}{near if near.startswith(' (did') else ''}"
    if allowed and isinstance(_strip(info), mi.StrType) and _doc(info):
        return f"{origin}: {key} must be {allowed} ({_doc(info)}), got {_show(value)}"
    if allowed:
        return f"{origin}: {key} must be {allowed}, got {_show(value)}"
    return f"{origin}: {key}: {what}"


__all__ = ["describe", "explain", "json_schema", "literal", "number", "schema_for_fields", "validate",
           "with_source"]
