"""The package as a user installs it (issue 27): the wheel's contents, extras, licence, version,
citation, changelog and console script, read from pyproject.toml and checked against the tree.

tools/ci/check_wheel.sh builds and installs the real wheel in a fresh environment (CI); these are the
fast checks of the same promises.
"""

import importlib
import re
import tomllib
from importlib import metadata
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def test_every_sub_package_of_lib_is_in_the_wheel():
    find = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    found = set(find_packages(where=str(ROOT), include=find["include"]))
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "lib").rglob("__init__.py")}
    assert on_disk <= found and "lib.experiments" in found
    assert all(p == "lib" or p.startswith("lib.") for p in found)     # nothing else of the repository


def test_licence_is_an_spdx_expression_with_its_file():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert int(re.search(r"setuptools>=(\d+)", " ".join(PYPROJECT["build-system"]["requires"])).group(1)) >= 77


def test_extras_declare_what_the_optional_layers_import_and_requirements_pin_them():
    extras = {k: {re.split(r"[<>=\[]", r)[0] for r in v} for k, v in PROJECT["optional-dependencies"].items()}
    assert extras["experiments"] == {"pandas", "matplotlib", "tqdm", "python-calamine"}
    assert extras["counts"] == {"duckdb", "pyarrow", "sqlglot"} and extras["sklearn"] == {"scikit-learn"}
    assert extras["spark"] == {"pyspark"}
    pinned = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
                  if "==" in line and not line.startswith("#"))
    for names in extras.values():
        for name in names - {"dirichlet-mechanism-book"}:
            assert name in pinned, f"{name} is not pinned in requirements.txt"
    assert {re.split(r"[<>=]", r)[0] for r in PROJECT["dependencies"]} == {"numpy", "scipy"}


def test_version_from_the_metadata_citation_and_changelog():
    from lib._version import DISTRIBUTION, __version__

    assert DISTRIBUTION == PROJECT["name"]
    assert __version__ == metadata.version(DISTRIBUTION) == PROJECT["version"], \
        "the installed metadata is stale: reinstall (make does when pyproject.toml changes)"
    cff = (ROOT / "CITATION.cff").read_text()
    assert f"version: {PROJECT['version']}\n" in cff and "cff-version: 1.2.0" in cff
    assert "family-names: Ponnoprat" in cff and "Transactions on Machine Learning Research" in cff
    assert "year: 2023" in cff and "openreview.net/forum?id=lmr2WwlaFc" in cff
    assert f"## {PROJECT['version']} " in (ROOT / "CHANGELOG.md").read_text()


def test_the_console_script_is_the_command_line():
    target = PROJECT["scripts"]["dirichlet-experiments"]
    module, func = target.split(":")
    assert callable(getattr(importlib.import_module(module), func))
    assert module == "lib.experiments.cli"
