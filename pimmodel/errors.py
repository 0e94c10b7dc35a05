"""Error hierarchy. Every message is one line: what is wrong, and how to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable


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


def _did_you_mean(name: str, options: Iterable[str], cutoff: float) -> str:
    """' (did you mean "x"?)' for the closest of ``options`` at least ``cutoff`` alike, else ''."""
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=cutoff)
    return f' (did you mean "{close[0]}"?)' if close else ""


def suggest(name: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean "x"?)' for the closest valid choice, or a list of valid choices."""
    options = sorted(choices)
    return _did_you_mean(name, options, 0.4) or f" (valid: {', '.join(options)})"


def unknown(kind: str, name: str, choices: Iterable[str]) -> PimModelError:
    """An error for an unknown name, with the closest valid one suggested."""
    return SpecError(f"unknown {kind} {name!r}{suggest(name, choices)}")


def check_known(kind: str, name: str, choices: Collection[str]) -> None:
    """Raise ``unknown(kind, name, choices)`` unless ``name`` is one of ``choices``."""
    if name not in choices:
        raise unknown(kind, name, choices)


class ArgumentError(PimModelError):
    """A library function was called with an argument of the wrong type or outside its domain; ``parameter``
    names the function's parameter (the CLI says which flag gave it, where one did)."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter


def check_type(function: str, parameter: str, value: object, types: type | tuple[type, ...], expected: str) -> None:
    """Raise ``ArgumentError`` naming ``function``'s ``parameter`` unless ``value`` is one of ``types`` (a bool is
    never taken for an int)."""
    kinds = types if isinstance(types, tuple) else (types,)
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return
    raise ArgumentError(parameter, f"{function}: {parameter} must be {expected}, not "
                                   f"{type(value).__name__} {_short(value)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


SEED_MAX = 2**32 - 1
"""The largest seed any command takes: Optuna's samplers and numpy's legacy generator take 32 bits."""


def check_seed(parameter: str, value: object, where: str = "") -> int:
    """``value`` if it is a whole number in [0, 2**32 - 1], else an ``ArgumentError`` naming ``parameter``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SEED_MAX:
        raise ArgumentError(parameter, f"{where}{parameter} must be a whole number in [0, 2**32 - 1 = {SEED_MAX}], "
                                       f"got {_short(value)}")
    return value


def check_choice(what: str, value: object, allowed: Collection[object],
                 error: type[Exception] = ValueError) -> None:
    """Raise ``error`` ("WHAT must be one of A, B, got 'x'", with the closest choice for a string) unless
    ``value`` is one of ``allowed``: the one check of every enumerated field."""
    if value in allowed:
        return
    close = _did_you_mean(value, map(str, allowed), 0.6) if isinstance(value, str) else ""
    raise error(f"{what} must be one of {', '.join(map(str, allowed))}, got {value!r}{close}")
