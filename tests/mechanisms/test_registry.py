"""lib.mechanisms.registry: one list of every mechanism class, registered in its order and nowhere else."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import lib.mechanisms
from lib.mechanisms import protocol
from lib.mechanisms.registry import MECHANISMS, get, names

MECHANISMS_DIR = Path(lib.mechanisms.__file__).parent


def _named_classes():
    """Every Mechanism subclass with a name that a module of lib.mechanisms defines."""
    found = set()
    for info in pkgutil.walk_packages([str(MECHANISMS_DIR)], "lib.mechanisms."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, protocol.Mechanism) and cls.name:
                found.add(cls)
    return found


def test_the_list_holds_every_named_mechanism_class_once():
    assert len(set(MECHANISMS)) == len(MECHANISMS) == 23
    assert len({cls.name for cls in MECHANISMS}) == len(MECHANISMS)
    assert set(MECHANISMS) == _named_classes()


def test_names_follow_the_list_and_get_returns_the_class():
    own = [name for name in names() if get(name) in MECHANISMS]
    assert own == [cls.name for cls in MECHANISMS]
    assert all(get(cls.name) is cls for cls in MECHANISMS)
    assert names()[:8] == ("gaussian", "laplace", "gaussian_classical", "mle", "random", "dirichlet",
                           "dirichlet_exact", "gohari")


def test_only_the_registry_module_registers():
    calls = []
    for path in sorted(MECHANISMS_DIR.rglob("*.py")):
        if path.name == "registry.py" or path.name == "protocol.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "register":
                calls.append(f"{path.relative_to(MECHANISMS_DIR)}:{node.lineno}")
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                for d in node.decorator_list:
                    if getattr(d, "id", getattr(d, "attr", "")) == "register":
                        calls.append(f"{path.relative_to(MECHANISMS_DIR)}:{d.lineno}")
    assert not calls, f"mechanisms registered outside lib.mechanisms.registry: {calls}"
