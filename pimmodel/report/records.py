"""Records as tables: flat columns (``per_epoch_s.dpu_compute``), pandas DataFrames, and files (CSV, JSON,
parquet) written whole or not at all.

A record is the dict a command prints with ``--json``. Nested mappings become dotted columns; a list of numbers
(an interval's ``[low, high]``) becomes one column per item (``.0``, ``.1``); a list of words (the defaults
``chosen``) one column of ``"; "``-joined text (an empty list is an empty text, a missing field a missing value).
pandas (and pyarrow, for parquet) load only when asked for: neither is a dependency of pimmodel.

Columns are typed from all rows together, so that CSV and Parquet agree: whole numbers stay whole (pandas'
nullable ``Int64``, also where some rows lack the field), numbers with a fraction are ``float64``, truth values
``boolean``, text ``string``; a missing value is empty in CSV and null in Parquet. When pandas is installed, CSV
is written through the same typed DataFrame as Parquet. A DataFrame's ``attrs`` and a Parquet file's schema
metadata (key ``pimmodel``) carry the record's ``provenance``.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import check_writable, replacing, write_text
from ..errors import PimModelError
from .json import dumps

FORMATS = (".csv", ".json", ".parquet")


class MissingDependencyError(PimModelError, ImportError):
    """An optional package a feature needs is not installed (one line: what to install)."""


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """One level of columns from a nested record (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, list | tuple):
            if all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in value) and value:
                out.update({f"{name}.{i}": _scalar(v) for i, v in enumerate(value)})
            else:
                out[name] = "; ".join(str(v) for v in value)
        else:
            out[name] = _scalar(value)
    return out


def rows(records: Iterable[Mapping[str, Any]], extra: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Flat rows of ``records``, each followed by the flattened ``extra`` (e.g. ``{"provenance": ...}``)."""
    tail = flatten(extra or {})
    return [{**flatten(r), **tail} for r in records]


def dataframe(records: Iterable[Mapping[str, Any]], extra: Mapping[str, Any] | None = None,
              attrs: Mapping[str, Any] | None = None) -> Any:
    """A pandas DataFrame of the flat rows, one row per record (columns in first-seen order, typed as the module
    docstring says); ``attrs`` (default: ``extra``'s provenance) become the frame's ``attrs``."""
    pandas = require("pandas", "a DataFrame", "pandas")
    flat = rows(records, extra)
    columns = _columns(flat)
    frame = pandas.DataFrame({c: _column(pandas, [r.get(c) for r in flat]) for c in columns}, columns=columns)
    meta = attrs if attrs is not None else {k: v for k, v in (extra or {}).items() if k == "provenance"}
    frame.attrs.update(meta)
    return frame


def _column(pandas: Any, values: list[Any]) -> Any:
    dtype = _dtype(values)
    if dtype == "object":  # mixed kinds (a number in one row, a word in another): text, as CSV has it
        dtype, values = "string", [None if v is None else str(v) for v in values]
    return pandas.array(values, dtype=dtype)


def _dtype(values: Sequence[Any]) -> str:
    """The column type of ``values`` (None and NaN are missing): Int64, float64, boolean, string or object."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not present:
        return "string" if any(v is None for v in values) else "float64"
    if all(isinstance(v, bool) for v in present):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "Int64"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float64"
    if all(isinstance(v, str) for v in present):
        return "string"
    return "object"


def check_output(path: str | Path) -> Path:
    """``path`` if records can be written there (a known suffix, its folder writable, the packages its format
    needs installed): checked before any work starts."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise PimModelError(f"cannot write records to {str(target)!r}: use a .csv, .json or .parquet file name")
    if suffix == ".parquet":
        require("pandas", "a .parquet file", "parquet")
        require("pyarrow", "a .parquet file", "parquet")
    return check_writable(target, "output")


def write(path: str | Path, records: Sequence[Mapping[str, Any]], extra: Mapping[str, Any] | None = None) -> Path:
    """Write ``records`` to ``path`` by its suffix, atomically: ``.json`` the records as ``--json`` prints them
    (``{**extra, "points": records}``), ``.csv`` / ``.parquet`` one flat row per record with ``extra``'s columns."""
    return write_record(path, {**(extra or {}), "points": list(records)}, "points")


def write_record(path: str | Path, record: Mapping[str, Any], rows_key: str | None = None) -> Path:
    """Write a command's record to ``path`` by its suffix, atomically: ``.json`` the record as ``--json`` prints
    it; ``.csv`` / ``.parquet`` one flat row per item of ``record[rows_key]`` (the whole record as one row when
    ``rows_key`` is None), each with the record's ``provenance`` columns; Parquet also in its schema metadata."""
    target = check_output(path)
    suffix = target.suffix.lower()
    if suffix == ".json":
        return write_text(target, dumps(record) + "\n")
    extra = {"provenance": record["provenance"]} if "provenance" in record else {}
    if rows_key is None:
        items: Sequence[Mapping[str, Any]] = [{k: v for k, v in record.items() if k != "provenance"}]
    else:
        items = [r if isinstance(r, Mapping) else {"value": r} for r in record.get(rows_key) or []]
    if suffix == ".csv":
        if importlib.util.find_spec("pandas") is None:
            return write_text(target, _csv(rows(items, extra)))
        return write_text(target, dataframe(items, extra).to_csv(index=False, lineterminator="\n"))
    frame = dataframe(items, extra)
    pyarrow = require("pyarrow", "a .parquet file", "parquet")
    parquet = importlib.import_module("pyarrow.parquet")
    table = pyarrow.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    if extra:
        meta[b"pimmodel"] = dumps(extra).encode("utf-8")
    table = table.replace_schema_metadata(meta)
    with replacing(target, "wb") as handle:
        parquet.write_table(table, handle)
    return target


def require(module: str, what: str, extra: str) -> Any:
    """Import an optional package, or a one-line error naming the extra that installs it."""
    if importlib.util.find_spec(module) is None:
        raise MissingDependencyError(f"{what} needs {module}, which is not installed; pip install "
                                     f"'pimmodel[{extra}]'")
    return importlib.import_module(module)


def _csv(flat: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(flat), lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return buffer.getvalue()


def _columns(flat: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for row in flat for k in row))


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
