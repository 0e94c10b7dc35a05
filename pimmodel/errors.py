"""Error hierarchy. Every message is one line: what is wrong, and how to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class PimModelError(Exception):
    """Base class: an input problem the user can fix. The CLI prints it as one line and exits 2."""


class SpecError(PimModelError):
    """A hardware or workload specification is invalid (bad value, unknown key, malformed file)."""


class CapacityError(PimModelError):
    """A configuration does not fit the DPU's MRAM or WRAM."""


class DataError(PimModelError):
    """A dataset file or array is unreadable or out of range."""


class StudyError(PimModelError):
    """A study definition or storage URL is invalid."""


def suggest(name: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean "x"?)' for the closest valid choice, or a list of valid choices."""
    options = sorted(choices)
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.4)
    if close:
        return f' (did you mean "{close[0]}"?)'
    return f" (valid: {', '.join(options)})"


def unknown(kind: str, name: str, choices: Iterable[str]) -> PimModelError:
    """An error for an unknown name, with the closest valid one suggested."""
    return SpecError(f"unknown {kind} {name!r}{suggest(name, choices)}")
