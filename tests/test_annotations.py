"""The public API of lib is annotated: every parameter and every return of a public function or method.

The modules are read with :mod:`ast` (nothing is imported). A module is public when no part of its
dotted name starts with an underscore (``lib._version`` and ``lib.experiments.__main__`` are not).
Its public functions and classes are the top-level ones whose names do not start with an
underscore; where the module defines ``__all__``, only the names it lists. The public methods of a
public class are those whose names do not start with an underscore, plus ``__init__`` and
``__call__`` (the other dunder methods keep the meaning Python gives them). Every parameter but
the first of a method that is not a static method (``self``, ``cls``) needs an annotation, and so
does the return (``-> None`` included). A property is a method: its getter needs a return type.

Modules that are not annotated yet are listed in :data:`PENDING`; their test is expected to fail,
and it fails when such a module is complete, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"

#: Modules whose annotation is still under way (each one's test is an expected failure).
PENDING: set[str] = set()

#: Dunder methods that are part of a class's public API (called by name or by the call syntax).
PUBLIC_DUNDERS = ("__init__", "__call__")

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_modules() -> dict[str, Path]:
    """The public modules of lib by dotted name."""
    modules = {_module_name(p): p for p in sorted(LIB.rglob("*.py"))}
    return {name: path for name, path in modules.items()
            if not any(part.startswith("_") for part in name.split("."))}


MODULES = public_modules()


def _exported(tree: ast.Module) -> set[str] | None:
    """The names of the module's ``__all__`` (a literal list or tuple), or None when it has none."""
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) and node.value else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return {elt.value for elt in node.value.elts
                    if isinstance(elt, ast.Constant) and isinstance(elt.value, str)}
    return None


def _decorators(node: Function) -> set[str]:
    names = set()
    for dec in node.decorator_list:
        while isinstance(dec, ast.Call):
            dec = dec.func
        names.add(dec.attr if isinstance(dec, ast.Attribute) else getattr(dec, "id", ""))
    return names


def public_functions(tree: ast.Module) -> list[tuple[str, Function, bool]]:
    """The public functions and methods of a module: (qualified name, node, is a bound method)."""
    exported = _exported(tree)

    def public(name: str) -> bool:
        return not name.startswith("_") and (exported is None or name in exported)

    found = []
    for node in tree.body:
        if isinstance(node, Function) and public(node.name):
            found.append((node.name, node, False))
        elif isinstance(node, ast.ClassDef) and public(node.name):
            for item in node.body:
                if isinstance(item, Function) and (not item.name.startswith("_") or item.name in PUBLIC_DUNDERS):
                    bound = "staticmethod" not in _decorators(item)
                    found.append((f"{node.name}.{item.name}", item, bound))
    return found


def missing_annotations(node: Function, bound: bool) -> list[str]:
    """The parameters of ``node`` without an annotation, and ``return`` when the return has none."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if bound and positional:
        positional = positional[1:]
    params = [*positional, *args.kwonlyargs]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    missing = [a.arg for a in params if a.annotation is None]
    if node.returns is None:
        missing.append("return")
    return missing


def unannotated(path: Path) -> dict[str, list[str]]:
    """Each public function or method of the module at ``path`` that misses annotations, with what it misses."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {name: gaps for name, node, bound in public_functions(tree)
            if (gaps := missing_annotations(node, bound))}


def census(modules: dict[str, Path] | None = None) -> tuple[int, int]:
    """(annotated, total) public functions and methods over ``modules`` (all public modules by default)."""
    total = annotated = 0
    for path in (MODULES if modules is None else modules).values():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for _, node, bound in public_functions(tree):
            total += 1
            annotated += not missing_annotations(node, bound)
    return annotated, total


# ------------------------------------------------------------------------------ the tests

def test_the_rules_read_each_form():
    tree = ast.parse(
        "__all__ = ['f', 'C', 'g']\n"
        "def f(a: int, *args: int, b: str = '', **kw: float) -> None: ...\n"
        "def g(a, /, b: int): ...\n"
        "def h(a): ...\n"
        "def _p(a): ...\n"
        "class C:\n"
        "    def __init__(self, x: int): ...\n"
        "    def __call__(self, x: int) -> int: ...\n"
        "    def __repr__(self): ...\n"
        "    def _q(self, x): ...\n"
        "    @classmethod\n"
        "    def make(cls, x: int) -> 'C': ...\n"
        "    @staticmethod\n"
        "    def s(x: int) -> int: ...\n"
        "    @staticmethod\n"
        "    def t(x) -> int: ...\n"
        "    @property\n"
        "    def p(self): ...\n")
    found = {name: missing_annotations(node, bound) for name, node, bound in public_functions(tree)}
    assert found == {"f": [], "g": ["a", "return"], "C.__init__": ["return"], "C.__call__": [],
                     "C.make": [], "C.s": [], "C.t": ["x"], "C.p": ["return"]}


def test_the_walk_reads_the_public_api():
    annotated, total = census()
    assert total > 500 and 0 < annotated <= total  # not vacuous: every public module was read
    assert "lib.privacy.accounting" in MODULES and "lib._version" not in MODULES
    names = {name for name, _, _ in public_functions(ast.parse(MODULES["lib.privacy.accountant"].read_text()))}
    assert {"Accountant.__init__", "Accountant.add", "account"} <= names


def test_pending_lists_only_modules_of_lib():
    assert PENDING <= set(MODULES), f"not public modules of lib: {sorted(PENDING - set(MODULES))}"


def test_py_typed_ships():
    assert (LIB / "py.typed").is_file()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_public_api_is_annotated(module):
    gaps = unannotated(MODULES[module])
    listing = "\n".join(f"  {name}: {', '.join(missing)}" for name, missing in sorted(gaps.items()))
    if module in PENDING:
        assert gaps, f"{module} is fully annotated: remove it from PENDING in {Path(__file__).name}"
        pytest.xfail(f"{module} is in PENDING ({len(gaps)} functions or methods to annotate)")
    assert not gaps, f"{module}: public functions and methods without annotations:\n{listing}"
