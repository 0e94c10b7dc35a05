"""setuptools beside pyproject.toml for one thing pyproject cannot say: a wheel ships the generated model sources
of every configuration (``pimmodel/costmodel/compile.py``), so no install compiles. The version, with its git
commit and dirty flag, is setuptools-scm's (``[tool.setuptools_scm]`` in pyproject.toml, read back by
``pimmodel/version.py``): nothing here runs git."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


_WRITE_ALL = ("import os, sys, pathlib; from pimmodel.costmodel.compile import write_all; "
              "write_all(pathlib.Path(sys.argv[1]), os.cpu_count() or 1)")


class BuildWithModels(build_py):
    def run(self) -> None:
        super().run()
        self._generate_models()
        if not self.dry_run and not getattr(self, "editable_mode", False):
            # the build record older versions wrote: a reused build/ directory must not ship a stale one
            (Path(self.build_lib) / "pimmodel" / "_build_info.json").unlink(missing_ok=True)

    def _generate_models(self) -> None:
        """Ship the generated model source of every configuration (``pimmodel/_compiled/<source hash>/``), made
        by the copied package itself so its hash is the installed files' hash. An editable install runs the
        checkout's own files, so it writes them into the checkout (``pimmodel/_compiled/``, ignored by git) and
        drops the sources of older hashes: the first ``predict`` after ``pip install -e`` starts warm. A failure
        only costs the user a local compile, so it warns."""
        if self.dry_run:
            return
        if getattr(self, "editable_mode", False):
            lib = ROOT
            target = ROOT / "pimmodel" / "_compiled"
            if target.is_dir():
                for old in target.iterdir():
                    if old.is_dir():
                        shutil.rmtree(old, ignore_errors=True)
        else:
            lib = Path(self.build_lib).resolve()
            target = lib / "pimmodel" / "_compiled"
        try:
            subprocess.run([sys.executable, "-c", _WRITE_ALL, str(target)], cwd=lib, check=True,
                           timeout=1800, env={**os.environ, "PYTHONPATH": str(lib)})
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"warning: model sources not generated ({exc}); an install compiles them on first use",
                  file=sys.stderr)

setup(cmdclass={"build_py": BuildWithModels})
