"""The chapters hold the argument, the library call that produces each result, and the pictures.

Logic, functions and statistics live in ``lib`` (tested under ``tests/``); a chapter's code cells
call it. Checked on every chapter's MyST source:

* no function or class definition (``def``, ``async def``, ``class``; a one-line ``lambda``
  handed to a library call, such as an integrand, is part of the argument);
* no statistical test computed in the chapter: every p-value, test statistic and verdict over
  repeats comes from :mod:`lib.experiments.verdicts` (no ``scipy.stats`` tests or tail functions,
  no binomial sums);
* no experiment engine of its own: the chapters run their experiments through the engine's tasks
  (:mod:`lib.experiments.engine`), not through loops over seeds and budgets of their own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.md"))

#: Calls that compute a test's statistic or p-value (or a tail probability used as one).
TESTS = re.compile(
    r"\b(?:stats|scipy\.stats|st)\.(?:ttest_\w+|binomtest|binom_test|wilcoxon|mannwhitneyu|ranksums|"
    r"norm\.sf|norm\.cdf|t\.sf|t\.cdf|binom\.sf|binom\.cdf|chi2\.sf|kstest|fisher_exact|"
    r"combine_pvalues)\b|\b(?:ttest_rel|ttest_ind|ttest_1samp|binomtest|wilcoxon)\s*\(")


def code_cells(path: Path) -> list[str]:
    """The code of every code cell of a chapter's MyST source, as jupytext reads it (without the
    cell's options)."""
    import jupytext

    return [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "code"]


def _parsed(cell: str) -> ast.Module:
    # IPython magics and shell escapes are not Python; they never define anything.
    lines = ["" if re.match(r"\s*(?:%|!(?!=))", line) else line for line in cell.splitlines()]
    return ast.parse("\n".join(lines))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_define_no_functions_or_classes(path):
    found = []
    for number, cell in enumerate(code_cells(path), start=1):
        for node in ast.walk(_parsed(cell)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(f"cell {number}: {type(node).__name__} {node.name}")
    assert not found, f"{path.name} defines: {found} (move them into lib, with a test)"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_compute_no_p_value_themselves(path):
    found = [f"cell {n}: {m.group(0)}" for n, cell in enumerate(code_cells(path), start=1)
             for m in TESTS.finditer(cell)]
    assert not found, f"{path.name} computes a test itself: {found} (use lib.experiments.verdicts)"


def test_the_checks_can_fail():
    """The two checks above find what they look for (on a made-up cell)."""
    cell = "def f(x):\n    return x\np = stats.ttest_rel(a, b).pvalue\n"
    assert [type(n).__name__ for n in ast.walk(_parsed(cell)) if isinstance(n, ast.FunctionDef)] == ["FunctionDef"]
    assert TESTS.search(cell) and TESTS.search("q = binomtest(k, n).pvalue")
    assert not TESTS.search("lib.experiments.verdicts.sign_test(table)")
