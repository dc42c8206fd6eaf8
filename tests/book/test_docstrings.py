"""The docstrings of lib follow numpydoc in scipy.stats' order, and carry no project history.

The contract comes first (summary, Parameters, Returns, Raises), then the mathematics (Notes,
with the paper's equation numbers), References and Examples. A docstring states what the code
does now; when something changed belongs in the changelog, not in the API reference.
"""

import ast
import re
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib"

# numpydoc's section order (https://numpydoc.readthedocs.io/en/latest/format.html)
ORDER = ["Parameters", "Attributes", "Returns", "Yields", "Receives", "Other Parameters", "Raises",
         "Warns", "Warnings", "See Also", "Notes", "References", "Examples"]
_HEADER = re.compile(r"^[ \t]*(" + "|".join(map(re.escape, ORDER)) + r")\n[ \t]*-{3,}[ \t]*$", re.M)
# project history: "issue 19", "until round 3", "previously", "no longer", ...
_HISTORY = re.compile(r"\b(issue #?\d+|until (issue|round)|this round|last round|previous(ly)? (version|round)|"
                      r"no longer|used to be|was changed)\b", re.I)


def _docstrings():
    for path in sorted(LIB.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = [tree] + [n for n in ast.walk(tree)
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        for node in nodes:
            doc = ast.get_docstring(node, clean=False)
            if doc:
                name = getattr(node, "name", "<module>")
                yield f"{path.relative_to(LIB.parent)}:{getattr(node, 'lineno', 1)} {name}", doc


DOCSTRINGS = list(_docstrings())


def test_there_are_docstrings_to_check():
    assert len(DOCSTRINGS) > 300


def test_sections_in_numpydoc_order():
    wrong = []
    for where, doc in DOCSTRINGS:
        found = [m.group(1) for m in _HEADER.finditer(doc)]
        ranks = [ORDER.index(s) for s in found]
        if ranks != sorted(ranks) or len(set(found)) != len(found):
            wrong.append(f"{where}: {found}")
    assert not wrong, "sections out of numpydoc order:\n" + "\n".join(wrong)


def test_no_project_history():
    wrong = [f"{where}: {m.group(0)!r}" for where, doc in DOCSTRINGS for m in _HISTORY.finditer(doc)]
    assert not wrong, "docstrings that tell history:\n" + "\n".join(wrong)


@pytest.mark.parametrize("doc, ok", [
    ("Summary.\n\nParameters\n----------\nx : int\n\nNotes\n-----\nm\n\nExamples\n--------\n>>> 1\n", True),
    ("Summary.\n\nExamples\n--------\n>>> 1\n\nNotes\n-----\nm\n", False),
])
def test_the_order_check_can_fail(doc, ok):
    found = [m.group(1) for m in _HEADER.finditer(doc)]
    ranks = [ORDER.index(s) for s in found]
    assert (ranks == sorted(ranks)) is ok
