"""The layout of lib: its import graph has no cycle, the layers import only downwards, no private name crosses a
module boundary, and the privacy notions are types, not strings.

The modules are read with :mod:`ast` (nothing is imported). An edge ``a -> b`` is an import of
module ``b`` anywhere in module ``a`` (at the top or inside a function): ``import lib.x.y`` and
``from lib.x.y import name`` are edges to ``lib.x.y`` (to its ``__init__`` when it is a
package), and ``from lib.x import y`` is an edge to ``lib.x.y`` when ``y`` is a submodule, to
``lib.x`` otherwise. (That every module is on an API page is checked in ``tests/test_book.py``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"

#: The layers, bottom first: a module may import only from its own layer or a lower one.
#: ``lib`` itself (the top-level names), ``lib.validation`` and ``lib._version`` are the base and
#: are exempt; ``lib.interop`` is the top (nothing else in lib imports it).
LAYERS = ("lib.privacy", "lib.mechanisms", "lib.models", "lib.theory", "lib.experiments", "lib.interop")
BASE = ("lib", "lib.validation", "lib._version")

#: The only module whose string literals may name a privacy notion: the command line's parser.
NOTION_STRINGS = ("rdp", "dp")
NOTION_STRINGS_ALLOWED = ("lib.experiments.cli",)


def _module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(LIB.rglob("*.py"))}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` statement of ``module`` names."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, tree: ast.AST) -> dict[str, int]:
    """The modules of lib that ``module`` imports, each with the line of its first import."""
    found: dict[str, int] = {}

    def add(target: str, line: int):
        if target in MODULES and target != module:
            found.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                add(sub if sub in MODULES else source, node.lineno)
    return found


@pytest.fixture(scope="module")
def trees() -> dict[str, ast.AST]:
    return {name: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for name, path in MODULES.items()}


@pytest.fixture(scope="module")
def graph(trees) -> dict[str, dict[str, int]]:
    return {name: imports(name, tree) for name, tree in trees.items()}


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(LIB.parent)}:{line}"


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def _layer(module: str) -> int | None:
    for rank, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


# ------------------------------------------------------------------------------ the tests

def test_the_graph_is_read_from_every_module(graph):
    assert len(MODULES) > 40 and "lib.privacy.guarantees" in MODULES and "lib.experiments.cli" in MODULES
    # the three kinds of edges of the module notes
    assert "lib.validation" in graph["lib.experiments.preprocessing"]   # from lib import validation
    assert "lib.experiments.datasets" in graph["lib.experiments.data"]  # from lib.experiments import datasets
    assert "lib.experiments.preprocessing" in graph["lib.experiments.networks"]  # from lib.x.y import name


def test_find_cycle_finds_one_and_only_one():
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) is None
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]


def test_every_subpackage_has_a_layer():
    top = {".".join(m.split(".")[:2]) for m in MODULES} - set(BASE)
    assert top <= set(LAYERS), f"sub-packages of lib without a layer in LAYERS: {sorted(top - set(LAYERS))}"


def test_no_import_cycle(graph):
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(
        f"{a} ({_where(a, graph[a][b])})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_each_layer_imports_only_from_lower_layers(graph):
    upward = []
    for module, targets in sorted(graph.items()):
        rank = _layer(module)
        if rank is None:
            continue
        for target, line in sorted(targets.items()):
            other = _layer(target)
            if other is not None and other > rank:
                upward.append(f"{_where(module, line)}: {module} imports {target} "
                              f"({LAYERS[rank]} must not import from {LAYERS[other]})")
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_no_privacy_notion_as_a_string_outside_the_command_line(trees):
    found = []
    for module, tree in sorted(trees.items()):
        if module in NOTION_STRINGS_ALLOWED:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NOTION_STRINGS:
                found.append(f"{_where(module, node.lineno)}: {node.value!r}")
    assert not found, "privacy notions as strings (use the types of lib.privacy.guarantees):\n" + "\n".join(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(module: str, tree: ast.AST) -> dict[str, int]:
    """The private names of other lib modules that ``module`` uses, each with the line of its first use.

    Two forms: ``from lib.x import _name`` (``lib.x`` another module), and an attribute ``_name`` of a
    module of lib reached by name: ``lib.x._name``, or ``y._name`` where ``y`` was bound by
    ``import lib.x as y`` or ``from lib import x`` (x a module). A private module of lib
    (``lib.x._y``) counts as a private name too; ``lib._version`` is the package's version file.
    """
    found: dict[str, int] = {}
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "lib"
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            if not (source == "lib" or source.startswith("lib.")):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in MODULES:
                    bound[alias.asname or alias.name] = full
                    if _private(alias.name) and full not in BASE:
                        found.setdefault(full, node.lineno)
                elif _private(alias.name) and source != module:
                    found.setdefault(full, node.lineno)
            if any(_private(part) for part in source.split(".")) and source not in BASE:
                found.setdefault(source, node.lineno)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *reversed(chain[1:])])
                if target in MODULES and target != module:
                    found.setdefault(f"{target}.{node.attr}", node.lineno)
    return found


def test_private_uses_finds_each_form():
    tree = ast.parse("from lib.privacy.accounting import _a\nimport lib.privacy.guarantees\n"
                     "import lib.mechanisms.protocol as p\nfrom lib.mechanisms.dirichlet import divergence as d\n"
                     "from lib.mechanisms import protocol\nfrom lib.mechanisms.batching import batchable\n"
                     "lib.privacy.guarantees._b; p._c; d._d; protocol._e; p.__doc__; p.names\n")
    assert set(private_uses("lib.models.toy", tree)) == {
        "lib.privacy.accounting._a", "lib.privacy.guarantees._b", "lib.mechanisms.protocol._c",
        "lib.mechanisms.dirichlet.divergence._d", "lib.mechanisms.protocol._e"}
    assert private_uses("lib.privacy.accounting", ast.parse("from lib.privacy.accounting import _a")) == {}


def test_no_private_name_crosses_a_module(trees):
    crossing = [f"{_where(module, line)}: {module} uses {name}"
                for module, tree in sorted(trees.items()) for name, line in sorted(private_uses(module, tree).items())]
    assert not crossing, "private names used across modules (make them public or move the code):\n" + "\n".join(crossing)
