"""Unit constants and conversions. SI inside the library; prefixes only at the edges (TOML keys, output)."""

from __future__ import annotations

KiB = 1024
MiB = 1024**2
GiB = 1024**3
KB = 1000
MB = 1000**2
GB = 1000**3

MHZ = 1e6
GHZ = 1e9

US = 1e-6
MS = 1e-3


def cycles_to_s(cycles: float, clock_hz: float) -> float:
    """Seconds taken by ``cycles`` at ``clock_hz``."""
    return cycles / clock_hz


def format_seconds(seconds: float) -> str:
    """Human-readable duration with an SI prefix (used by tables, never by records)."""
    value = abs(seconds)
    if value == 0:
        return "0 s"
    if value < 1e-6:
        return f"{seconds * 1e9:.3g} ns"
    if value < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if value < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.4g} s"


def format_bytes(n_bytes: float) -> str:
    """Human-readable byte count with binary prefixes."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.4g} {unit}"
        value /= 1024
    return f"{value:.4g} TiB"  # pragma: no cover - loop always returns
