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

Checked on every chapter's stored outputs (the ``.ipynb`` the book renders):

* no glued value shown as an output when the prose only uses it inline: a ``glue`` call whose
  value a ``{glue:text}`` role cites is made with ``display=False`` (a bare ``'holds'`` or ``0.37``
  under a cell is clutter);
* no output wider than the text column: a printed line (stream or plain-text result) is at most
  88 characters, and a displayed table (a pandas DataFrame rendered as HTML) has at most 8 data
  columns (split or transpose a wider one).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.md"))
NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
#: The longest printed line the text column shows without scrolling (about 88 characters of
#: the theme's code font at 1280 px; the PDF's column holds as many at its print size).
MAX_LINE = 88
#: The most data columns a displayed table may have (a wider one is split or transposed).
MAX_COLUMNS = 8

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


# ---------------------------------------------------------------------------------------------
# Stored outputs as the reader sees them.

def _shown_outputs(notebook: Path):
    """``(cell number, output)`` of every output the book shows (cells tagged ``remove-output``
    or ``remove-cell`` show none), code cells numbered from 1."""
    number = 0
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        number += 1
        if {"remove-output", "remove-cell"} & set(cell.metadata.get("tags", [])):
            continue
        for output in cell.get("outputs", []):
            yield number, output


def _glue_directives(notebook: Path) -> set[str]:
    """The glued names a chapter shows through a block directive (``{glue}``, ``{glue:figure}``,
    ``{glue:math}``): their cell output is the figure or table itself, kept where it is made."""
    markdown = "\n".join(cell.source for cell in nbformat.read(notebook, as_version=4).cells
                         if cell.cell_type == "markdown")
    return set(re.findall(r"^\s*(?:`{3,}|:{3,})\{glue(?::\w+)?\}\s*(\S+)\s*$", markdown, re.M))


def displayed_glue(notebook: Path) -> list[str]:
    """The glued values shown as cell outputs where the prose only uses them inline: the value
    is cited by an inline role, or is a bare value (plain text only), and no block directive
    shows it.

    myst-nb's ``glue(name, value)`` displays the value (its metadata ``scrapbook.mime_prefix`` is
    empty); with ``display=False`` it stores it under a hidden MIME type (the prefix is set). A
    glued table displayed where it is made, and cited nowhere inline, is a table the reader reads."""
    cells = nbformat.read(notebook, as_version=4).cells
    markdown = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    inline = set(re.findall(r"\{glue(?::\w+)?\}`([^`:]+)", markdown))
    directives = _glue_directives(notebook)
    found = []
    for n, output in _shown_outputs(notebook):
        scrapbook = output.get("metadata", {}).get("scrapbook", {})
        name = scrapbook.get("name")
        if scrapbook.get("mime_prefix") != "" or name in directives:
            continue
        if name in inline or set(output.get("data", {})) == {"text/plain"}:
            found.append(f"cell {n}: {name}")
    return found


def _printed_text(output) -> str:
    """The text an output prints: a stream, or a result shown as plain text (one without an
    HTML, image or LaTeX form, which the page shows instead)."""
    if output.output_type == "stream":
        return output.text
    data = output.get("data", {})
    if "text/plain" in data and not any(k.startswith(("text/html", "image/", "text/latex", "text/markdown"))
                                        for k in data):
        return data["text/plain"]
    return ""


def _table_columns(html: str) -> list[int]:
    """The number of data cells (``<td>``; index labels are ``<th>``) in the widest row of each
    HTML table of an output."""
    widths = []
    for table in re.findall(r"<table\b.*?</table>", html, re.S):
        rows = re.findall(r"<tr\b.*?</tr>", table, re.S)
        widths.append(max((len(re.findall(r"<td\b", row)) for row in rows), default=0))
    return widths


def wide_outputs(notebook: Path) -> list[str]:
    """Outputs wider than the text column: printed lines over MAX_LINE characters and tables of
    more than MAX_COLUMNS data columns."""
    found = []
    for n, output in _shown_outputs(notebook):
        long = [len(line) for line in _printed_text(output).splitlines() if len(line) > MAX_LINE]
        if long:
            found.append(f"cell {n}: {len(long)} lines up to {max(long)} characters")
        html = output.get("data", {}).get("text/html", "")
        wide = [w for w in _table_columns(html) if w > MAX_COLUMNS]
        if wide:
            found.append(f"cell {n}: a table of {max(wide)} columns")
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_glued_value_is_displayed_where_the_prose_uses_it_inline(notebook):
    shown = displayed_glue(notebook)
    assert not shown, (f"{notebook.name} shows glued values as outputs: {shown} "
                       "(glue them with display=False)")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_output_is_wider_than_the_column(notebook):
    wide = wide_outputs(notebook)
    assert not wide, (f"{notebook.name}: outputs wider than the column ({MAX_LINE} characters, "
                      f"{MAX_COLUMNS} table columns): {wide}")


def test_the_output_checks_can_fail(tmp_path):
    """The two checks above find what they look for, in a made-up notebook."""
    notebook = nbformat.v4.new_notebook()
    shown = nbformat.v4.new_output("display_data", data={"text/plain": "'holds'"},
                                   metadata={"scrapbook": {"name": "v", "mime_prefix": ""}})
    hidden = nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "'holds'"},
        metadata={"scrapbook": {"name": "w", "mime_prefix": "application/papermill.record/"}})
    printed = nbformat.v4.new_output("stream", name="stdout", text="x" * (MAX_LINE + 1) + "\nshort\n")
    table = "<table><thead><tr><th></th>" + "<th>c</th>" * 9 + "</tr></thead><tbody><tr><th>0</th>" + \
        "<td>1</td>" * 9 + "</tr></tbody></table>"
    frame = nbformat.v4.new_output("execute_result", data={"text/html": table, "text/plain": "y" * 200},
                                   execution_count=1)
    notebook.cells = [nbformat.v4.new_code_cell("glue('v', 'holds'); glue('w', 'holds', display=False)",
                                                outputs=[shown, hidden]),
                      nbformat.v4.new_code_cell("print(...); frame", outputs=[printed, frame]),
                      nbformat.v4.new_markdown_cell("It {glue:text}`v` and {glue:text}`w`.")]
    path = tmp_path / "made_up.ipynb"
    nbformat.write(notebook, path)
    assert displayed_glue(path) == ["cell 1: v"]
    assert wide_outputs(path) == ["cell 2: 1 lines up to 89 characters", "cell 2: a table of 9 columns"]
    # a glued figure or table that a {glue:figure} directive shows is not a bare value
    notebook.cells[2].source += "\n\n```{glue:figure} v\n```\n"
    nbformat.write(notebook, path)
    assert displayed_glue(path) == []
