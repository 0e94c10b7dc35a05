"""The package version, in one place: setuptools-scm computes it from git (``[tool.setuptools_scm]`` in
``pyproject.toml``) when a wheel is built or the package is installed, and writes it into the installed metadata
and ``pimmodel/_version.py`` (git-ignored), so the metadata, ``pimmodel.__version__``, ``pimmodel --version`` and
every record's provenance agree. No code here runs git itself.

The version names the commit and whether the tree had local edits, as setuptools-scm's PEP 440 local label
(``node-and-date``): ``0.1.1.dev333+gc9504e9f9`` is commit ``c9504e9f9``, 333 commits after the base version with
nothing edited; ``0.1.1.dev333+gc9504e9f9.d20261207`` the same commit with tracked files edited (the date of the
build). ``git_state`` reads the commit and the dirty flag back from that label, so no separate build record
(the former ``_build_info.json``) is needed. A tree without git metadata (an unpacked source archive) gets the
``fallback_version`` (``0.1.0``) and no commit; a commit at a release tag with no edits gets the bare tag, whose
commit ``_version.py`` still names (``__commit_id__``).

An editable install's metadata and ``_version.py`` are frozen when ``pip install -e`` ran, but the code that runs
is the checkout's as it is now, so provenance must follow later commits and edits: in a git checkout,
``full_version`` asks setuptools-scm again (``setuptools_scm.get_version`` with the project's own settings) when
setuptools-scm is importable (``pimmodel[test]`` installs it), else it falls back to the frozen version, which may
then name an older commit. ``__version__`` is always the installed (frozen) version, read without running git, so
``import pimmodel`` stays cheap; ``full_version()`` is the version of the code running (equal to ``__version__``
for a wheel). ``environment`` is that plus the versions of the libraries the numbers depend on and the command
line: the part of a record's provenance that needs no hardware or calibration (``api.provenance`` adds those).
"""

from __future__ import annotations

import functools
import re
import sys
import tomllib
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = ("numpy", "scipy", "sympy", "optuna")
"""The libraries whose versions every provenance record names."""
UNKNOWN = "0+unknown"
"""The version when neither ``_version.py`` nor installed metadata exists (the package run from a tree that was
never built or installed, and without setuptools-scm)."""
SCM_SETTINGS = ("version_scheme", "local_scheme", "fallback_version", "tag_regex")
"""The ``[tool.setuptools_scm]`` keys that shape the version string (the rest say where to write it)."""
_PACKAGE = Path(__file__).resolve().parent
_NODE = re.compile(r"g([0-9a-f]{7,40})")
_DIRTY = re.compile(r"d\d{8}(\d{6})?")


def _installed_version() -> str:
    """The version setuptools-scm froze at build or install time: ``_version.py``, else the metadata."""
    try:
        from ._version import __version__ as frozen  # type: ignore[import-not-found,unused-ignore]

        return str(frozen)
    except ImportError:
        pass
    try:
        return metadata.version("pimmodel")
    except metadata.PackageNotFoundError:
        return UNKNOWN


__version__ = _installed_version()


def scm_version(root: Path) -> str | None:
    """setuptools-scm's version of the git work tree at ``root`` now, with ``root/pyproject.toml``'s
    ``[tool.setuptools_scm]`` settings (None when setuptools-scm is not installed or cannot tell)."""
    try:
        import setuptools_scm
    except ImportError:
        return None
    try:
        section = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools_scm"]
    except (OSError, ValueError, KeyError, TypeError):
        section = {}
    settings = {key: section[key] for key in SCM_SETTINGS if key in section}
    try:
        with warnings.catch_warnings():  # a shallow clone, say: provenance still gets the best answer
            warnings.simplefilter("ignore")
            return str(setuptools_scm.get_version(root=str(root), **settings))
    except Exception:  # any failure of the library means: ask the frozen version instead
        return None


def state_of(version: str) -> tuple[str | None, bool | None]:
    """(commit, dirty) that a setuptools-scm version's local label carries: ``+gc9504e9f9.d20261207`` is
    (``"c9504e9f9"``, True), ``+gc9504e9f9`` (``"c9504e9f9"``, False), ``+d20261207`` (a release tag with edits)
    (None, True); a version whose label says neither (a release tag, the fallback) (None, None)."""
    local = version.partition("+")[2]
    if not local:
        return None, None
    parts = local.split(".")
    commit = next((m.group(1) for m in map(_NODE.fullmatch, parts) if m), None)
    dirty = any(_DIRTY.fullmatch(p) for p in parts)
    return (commit, dirty) if commit is not None or dirty else (None, None)


def _checkout() -> Path | None:
    """The git checkout this package is running from (an editable install or the source tree), else None."""
    root = _PACKAGE.parent
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():
        return root
    return None


@functools.cache
def full_version() -> str:
    """The version of the code running, with its commit and a dirty flag when known:
    ``0.1.1.dev333+gc9504e9f9.d20261207``. In a git checkout, setuptools-scm's answer now; else ``__version__``."""
    root = _checkout()
    found = scm_version(root) if root is not None else None
    return found or __version__


def git_state() -> tuple[str | None, bool | None]:
    """(commit, dirty) of the code running, read from ``full_version``'s local label; at a clean release tag the
    commit ``_version.py`` names; (None, None) when nothing knows (no git at build time)."""
    version = full_version()
    commit, dirty = state_of(version)
    if commit is None and version == __version__:
        try:
            from ._version import __commit_id__  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            __commit_id__ = None
        if __commit_id__:
            commit, dirty = str(__commit_id__).removeprefix("g"), bool(dirty)
    return commit, dirty


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
