"""Machine-readable output: exactly the record a table shows."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import numpy as np


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def dumps(record: Any) -> str:
    return json.dumps(_clean(record), indent=2, default=_default)


def emit(record: Any) -> None:
    sys.stdout.write(dumps(record) + "\n")
