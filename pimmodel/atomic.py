"""Files written whole or not at all: write to a temporary file beside the target, then rename it over the
target. A full disk, a kill or Ctrl-C mid-write leaves the previous file (if any) untouched and no partial or
empty file behind. Every file pimmodel writes (calibrations, plots, records) goes through here."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import PimModelError


class WriteError(PimModelError):
    """A file could not be written (no space, no permission, a directory in the way)."""


def check_writable(path: str | Path, what: str = "output") -> Path:
    """``path`` as a Path if a file can be written there, else a one-line error saying why (checked before any
    long work starts)."""
    target = Path(path)
    if target.is_dir():
        raise WriteError(f"{what} {str(target)!r} is a directory; give a file name")
    if target.exists() and not target.is_file():  # renaming over /dev/full or a pipe would replace the device
        raise WriteError(f"{what} {str(target)!r} is not a regular file (a device, pipe or socket); give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise WriteError(f"cannot write {what} {str(target)!r}: folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise WriteError(f"cannot write {what} {str(target)!r}: folder {str(parent)!r} is not writable")
    return target


@contextlib.contextmanager
def replacing(path: str | Path, mode: str = "w", **open_args: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` (fsynced first),
    on any error it is removed and the error is a one-line ``WriteError``."""
    target = check_writable(_through_links(Path(path)))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent if str(target.parent)
                               else ".")
    try:
        os.chmod(tmp, _mode_of(target))  # mkstemp makes 0600; a written file gets the mode any new file would
        with os.fdopen(fd, mode, **open_args) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise WriteError(f"cannot write {str(target)!r}: {exc.strerror or exc}; the previous file, if any, is "
                         "unchanged") from None
    except BaseException:
        _remove(tmp)
        raise


def write_text(path: str | Path, text: str) -> Path:
    with replacing(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return Path(path)


def write_bytes(path: str | Path, data: bytes) -> Path:
    with replacing(path, "wb") as handle:
        handle.write(data)
    return Path(path)


def _through_links(path: Path) -> Path:
    """The file a symlink (or a chain of them) points at: writing ``out.json`` that links to ``runs/a.json``
    replaces ``runs/a.json`` and keeps the link, as ``open(path, "w")`` would."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _mode_of(target: Path) -> int:
    """The permission bits the file gets: those of the file it replaces, else 0666 less the umask (as
    ``open`` would create it)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0o022)  # reading the umask means setting it: put it straight back
        os.umask(umask)
        return 0o666 & ~umask


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
