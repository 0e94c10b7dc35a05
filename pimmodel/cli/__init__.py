"""The ``pimmodel`` command line: a thin shell over the library (parse, load specs, call, render)."""

from __future__ import annotations

from .app import main

__all__ = ["main"]
