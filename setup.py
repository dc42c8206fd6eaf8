"""Build hooks: the repository's package ``lib`` is installed as ``dirichlet_mechanism``.

The book and its chapters import ``lib`` (the editable install of requirements.txt
keeps it so), but ``lib`` is no name for an installed distribution: PyPI has a
distribution that installs a package ``lib``, and a ``lib/`` folder in a user's
project would shadow it. A wheel therefore holds the same modules under the
import name ``dirichlet_mechanism``: :class:`BuildPy` writes each module of
``lib`` there with every reference to the package rewritten (``from lib.x
import``, ``import lib``, ``lib.x`` in code, strings and docstrings), then
checks with ``ast`` that no module imports ``lib`` or names a ``lib.`` module
in a string; :class:`BdistWheel` points the console script and
``top_level.txt`` at the new name. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

SOURCE, TARGET = "lib", "dirichlet_mechanism"
#: ``lib`` as a package reference: before a dotted name (``lib.x``), or imported alone.
_DOTTED = re.compile(r"(?<![\w.])lib(?=\.[A-Za-z_])")
_FROM = re.compile(r"(?<![\w.])from lib import\b")
_IMPORT = re.compile(r"(?<![\w.])import lib(?![\w.])")


def rewrite(text: str) -> str:
    """``text`` of a module of ``lib`` with the package named ``dirichlet_mechanism``."""
    text = _DOTTED.sub(TARGET, text)
    text = _FROM.sub(f"from {TARGET} import", text)
    return _IMPORT.sub(f"import {TARGET}", text)


def references_to_source(source: str, filename: str) -> list[str]:
    """Where a module still imports ``lib`` or names a ``lib`` module in a string (``lib`` or ``lib.x``)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                r"lib(\.[A-Za-z_]\w*)+", node.value):
            names = [node.value]
        found += [f"{filename}:{node.lineno}: {n}" for n in names if n == SOURCE or n.startswith(SOURCE + ".")]
    return found


class BuildPy(build_py):
    """build_py that writes the package ``lib`` as ``dirichlet_mechanism`` (not in editable mode)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        source, target = Path(self.build_lib, SOURCE), Path(self.build_lib, TARGET)
        if target.exists():
            shutil.rmtree(target)
        source.rename(target)
        problems = []
        for path in sorted(target.rglob("*.py")):
            text = rewrite(path.read_text(encoding="utf-8"))
            path.write_text(text, encoding="utf-8")
            problems += references_to_source(text, str(path.relative_to(self.build_lib)))
        if problems:
            raise RuntimeError("modules of the wheel still refer to the package lib:\n" + "\n".join(problems))


class BdistWheel(bdist_wheel):
    """bdist_wheel whose metadata names the installed package: the console script and top_level.txt.

    Only a wheel that this command builds: the metadata of an editable install (written by
    ``dist_info``, which calls ``egg2dist`` without ``run``) keeps ``lib``.
    """

    _building = False

    def run(self):
        self._building = True
        try:
            super().run()
        finally:
            self._building = False

    def egg2dist(self, egginfo_path, distinfo_path):
        super().egg2dist(egginfo_path, distinfo_path)
        if not self._building:
            return
        for name in ("entry_points.txt", "top_level.txt"):
            path = Path(distinfo_path, name)
            if path.exists():
                text = path.read_text(encoding="utf-8")
                text = re.sub(r"(?m)^lib$", TARGET, text)
                path.write_text(rewrite(text), encoding="utf-8")


setup(cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
