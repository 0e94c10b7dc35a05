"""setuptools beside pyproject.toml for one thing pyproject cannot say: a wheel records the git commit it was built
from, and whether the tree had local edits, in ``pimmodel/_build_info.json``, so that an installed pimmodel's
provenance names its commit (``pimmodel/version.py`` reads it; a checkout asks git itself)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30,
                              check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        commit = _git("rev-parse", "HEAD")
        if commit is None or self.dry_run:
            return
        changes = _git("status", "--porcelain", "--untracked-files=no") or ""
        target = Path(self.build_lib) / "pimmodel" / "_build_info.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"git_commit": commit.strip(), "git_dirty": bool(changes.strip())}) + "\n",
                          encoding="utf-8")


setup(cmdclass={"build_py": BuildWithCommit})
