"""Records as tables: flat columns (``per_epoch_s.dpu_compute``), pandas DataFrames, and files (CSV, JSON,
parquet) written whole or not at all.

A record is the dict a command prints with ``--json``. Nested mappings become dotted columns; a list of numbers
(an interval's ``[low, high]``) becomes one column per item (``.0``, ``.1``); a list of words (the defaults
``chosen``) one column of ``"; "``-joined text. pandas (and pyarrow, for parquet) load only when asked for:
neither is a dependency of pimmodel.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import io
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


def dataframe(records: Iterable[Mapping[str, Any]], extra: Mapping[str, Any] | None = None) -> Any:
    """A pandas DataFrame of the flat rows, one row per record (columns in first-seen order)."""
    pandas = require("pandas", "a DataFrame", "pandas")
    flat = rows(records, extra)
    return pandas.DataFrame(flat, columns=_columns(flat))


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
    target = check_output(path)
    suffix = target.suffix.lower()
    if suffix == ".json":
        return write_text(target, dumps({**(extra or {}), "points": list(records)}) + "\n")
    if suffix == ".csv":
        return write_text(target, _csv(rows(records, extra)))
    frame = dataframe(records, extra)
    with replacing(target, "wb") as handle:
        frame.to_parquet(handle, index=False)
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
