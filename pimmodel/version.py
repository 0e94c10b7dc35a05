"""The package version, in one place: ``pyproject.toml`` reads it from here (a setuptools dynamic version), so
the installed metadata, ``pimmodel.__version__``, ``pimmodel --version`` and every record's provenance agree.

What a release number cannot say is which commit the code is and whether it was edited: ``full_version`` adds
the git commit and a dirty flag as a PEP 440 local label (``0.1.0+g649ad7f``, ``0.1.0+g649ad7f.dirty``), read
from git in a checkout (an editable install) or from ``_build_info.json``, which building a wheel writes
(``setup.py``). ``environment`` is that plus the versions of the libraries the numbers depend on and the command
line: the part of a record's provenance that needs no hardware or calibration (``api.provenance`` adds those).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__version__ = "0.1.0"

LIBRARIES = ("numpy", "scipy", "sympy", "optuna")
"""The libraries whose versions every provenance record names."""
BUILD_INFO = "_build_info.json"
"""Written into the package by a wheel build: {"git_commit", "git_dirty"} of the tree it was built from."""
_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def git_state() -> tuple[str | None, bool | None]:
    """(commit, dirty) of the code running: from git when the package is a checkout's, else from the build's
    record, else (None, None)."""
    root = _PACKAGE.parent
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():
        found = git_of(root)
        if found[0] is not None:
            return found
    try:
        info = json.loads((_PACKAGE / BUILD_INFO).read_text(encoding="utf-8"))
        return info.get("git_commit"), info.get("git_dirty")
    except (OSError, ValueError, AttributeError):
        return None, None


def git_of(root: Path) -> tuple[str | None, bool | None]:
    """(HEAD's commit, whether tracked files differ from it) of the git work tree at ``root``."""
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        changes = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (commit or None), bool(changes.strip())


def full_version() -> str:
    """The version with the commit and a dirty flag when they are known: ``0.1.0+g649ad7f.dirty``."""
    commit, dirty = git_state()
    if commit is None:
        return __version__
    return f"{__version__}+g{commit[:7]}" + (".dirty" if dirty else "")


def library_versions() -> dict[str, str | None]:
    """Installed versions of numpy, scipy, sympy, optuna (None if missing) and of Python, without importing them."""
    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["python"] = ".".join(str(v) for v in sys.version_info[:3])
    return out


def command_line() -> str:
    """The command line of this process, as a shell would take it back, every password in it masked."""
    from .redact import mask_argv

    return mask_argv(sys.argv) if sys.argv else ""


def environment() -> dict[str, Any]:
    """The provenance that needs no hardware or calibration: version (with commit and dirty flag), the commit,
    the dirty flag, the libraries' versions and the command line."""
    commit, dirty = git_state()
    return {"version": full_version(), "git_commit": commit, "git_dirty": dirty, "libraries": library_versions(),
            "command": command_line()}
