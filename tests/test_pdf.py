"""The PDF of the whole book (``make pdf``): every page of ``_toc.yml``, typeset math, figures,
nothing past the margins.

Runs after ``make pdf`` (``make pdf-test``; not part of ``make test``, which it would slow down by
minutes). Reads ``_build/pdf/book.pdf`` with poppler-utils (``pdfinfo``, ``pdftotext``,
``pdfimages``; Debian: ``apt-get install poppler-utils``). Without them, or without the PDF, the
check is skipped locally with a message and fails with ``CI=true``. Selected with ``-m pdf`` only:
under any other marker expression (``make unit`` runs ``-m 'not browser'``) it is skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import nbformat
import pytest
import yaml

pytestmark = pytest.mark.pdf

ROOT = Path(__file__).resolve().parents[1]
PDF = ROOT / "_build" / "pdf" / "book.pdf"
SINGLEHTML = ROOT / "_build" / "pdf" / "_build" / "singlehtml"

# What a formula left untypeset by MathJax looks like in the text of the PDF: the delimiters
# Sphinx writes around inline and display math, a LaTeX environment, and MathJax's own error
# messages (a formula MathJax could not parse is replaced by the message, in red).
# Also the commonest TeX commands of the book's formulas: a formula that Markdown broke before
# MathJax saw it (an inline $...$ whose continuation line starts with "+ " or "- " is parsed as a
# list item, so neither half is math) reaches the page as its source, dollar signs and all.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\end\{"
                     r"|Undefined control sequence|Missing (?:open|close) brace"
                     r"|Extra (?:open|close) brace|Misplaced &"
                     r"|\\(?:alpha|beta|Gamma|Delta|varepsilon|lambda|psi|frac|sum|mathrm|hat|infty"
                     r"|propto|approx|left|right)(?![A-Za-z])")


def _skip_or_fail(message: str):
    if os.environ.get("CI") == "true":
        pytest.fail("CI: " + message)
    pytest.skip(message)


@pytest.fixture(scope="module", autouse=True)
def selected(request):
    """Run only when the marker expression asks for ``pdf`` (``make pdf-test``)."""
    if "pdf" not in (request.config.getoption("markexpr") or "").replace("not pdf", ""):
        pytest.skip("the PDF check runs with -m pdf (make pdf-test)")


@pytest.fixture(scope="module")
def pdf() -> Path:
    for tool in ("pdfinfo", "pdftotext", "pdfimages"):
        if shutil.which(tool) is None:
            _skip_or_fail(f"{tool} is missing (Debian: apt-get install poppler-utils)")
    if not PDF.exists():
        _skip_or_fail(f"no PDF at {PDF}: run `make pdf` first")
    return PDF


@pytest.fixture(scope="module")
def pages(pdf) -> list[str]:
    """The text of each page (pdftotext separates pages with a form feed)."""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout
    return [_normalise(page) for page in text.split("\f")]


def _normalise(text: str) -> str:
    """Text as compared: NFKC (ligatures apart), plain quotes and dashes, one space."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"',
                                         "\u201d": '"', "\u2013": "-", "\u2014": "-"}))
    return re.sub(r"\s+", " ", text).strip()


def toc_documents() -> list[str]:
    """Every document of ``_toc.yml`` in reading order (root, then parts, chapters, sections)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                docs.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return docs


def title(doc: str) -> str:
    """The first level-one heading of a document's rendered source (.ipynb, else .md)."""
    notebook = ROOT / f"{doc}.ipynb"
    if notebook.exists():
        text = "\n".join("".join(cell.source) for cell in nbformat.read(notebook, as_version=4).cells
                         if cell.cell_type == "markdown")
    else:
        text = (ROOT / f"{doc}.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise AssertionError(f"{doc} has no level-one heading")


def title_fragments(heading: str) -> list[str]:
    """The words of a heading as the PDF shows them: math removed, markup stripped.

    A formula is typeset by MathJax in its own fonts, so only the text around it is compared.
    """
    parts = re.split(r"\$[^$]*\$|\{math\}`[^`]*`", heading)
    fragments = [_normalise(re.sub(r"[`*_]", "", part)).strip(" ,:;") for part in parts]
    return [f for f in fragments if len(f) >= 3]


def test_every_toc_document_starts_a_page_in_order(pages):
    """Each document of _toc.yml is in the PDF, its title at the top of a new page, in order."""
    docs = toc_documents()
    assert len(docs) >= 3, docs
    last = -1
    for doc in docs:
        fragments = title_fragments(title(doc))
        assert fragments, f"no text in the title of {doc}"
        # The title's first words lead a page (the print style sheet breaks the page before
        # every document; 120 characters allow for a chapter number and the root's title).
        starts = [i for i, page in enumerate(pages) if fragments[0] in page[:120]]
        assert starts, f"the title of {doc} ({fragments[0]!r}) does not start any page"
        first = min((i for i in starts if i > last), default=None)
        assert first is not None, f"{doc} starts before the document that precedes it in _toc.yml"
        heading_text = " ".join(pages[first:first + 2])
        for fragment in fragments:
            assert fragment in heading_text, f"{fragment!r} of the title of {doc} is not on page {first + 1}"
        last = first


def test_page_count_and_density(pdf, pages):
    """At least one page per document; pages are full (no blank sheets from broken breaks)."""
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    n_pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    print(f"{pdf}: {n_pages} pages")
    assert len(pages) - (pages[-1] == "") == n_pages
    assert n_pages >= len(toc_documents())
    # A page of running text holds about 4000 characters at the print size; the book averages
    # about 2000 (figures, tables, chapter ends). Below 800 on average most sheets are nearly
    # empty: a page break or a scale that went wrong.
    average = sum(len(page) for page in pages) / n_pages
    assert average > 800, f"{average:.0f} characters per page"
    # A blank sheet has neither text nor an image (a tall figure may fill a sheet alone).
    listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                             check=True).stdout.splitlines()[2:]
    with_images = {int(line.split()[0]) for line in listing if line.split()}
    blank = [i + 1 for i, page in enumerate(pages[:n_pages]) if not page and i + 1 not in with_images]
    assert not blank, f"blank pages: {blank}"


def test_no_raw_tex(pages):
    """MathJax typeset every formula: no TeX delimiters, environments or TeX errors in the text."""
    leaks = [(i + 1, m.group(0), page[max(0, m.start() - 40):m.end() + 40])
             for i, page in enumerate(pages) for m in RAW_TEX.finditer(page)]
    assert not leaks, f"{len(leaks)} raw TeX in the PDF, e.g. {leaks[:5]}"


def test_math_was_there_to_typeset():
    """The page that was printed holds formulas (so the previous test is not vacuous)."""
    html = (SINGLEHTML / "print.html").read_text(encoding="utf-8")
    assert html.count('class="math notranslate nohighlight"') > 100


def test_every_figure_is_printed(pdf):
    """The PDF draws at least as many images as the printed page has figures."""
    html = (SINGLEHTML / "print.html").read_text(encoding="utf-8")
    figures = len(re.findall(r'<img[^>]+src="_images/[^"]+\.png"', html))
    assert figures > 0
    listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                             check=True).stdout.splitlines()[2:]
    images = sum(1 for line in listing if line.split()[2] == "image")
    assert images >= figures, f"{images} images in the PDF for {figures} figures"


def test_everything_fits_the_text_width(pdf):
    """No word, table cell, line of code or formula is printed beyond the right margin.

    pdftotext gives each word's box, in points. The print style sheet of tools/build_pdf.py sets
    equal left and right margins, and text is flush left on almost every page, so the smallest
    left edge in the book is the left margin and the text area ends at ``width - left``. A
    table, formula or code line wider than the page would run past it (Chromium clips it at the
    paper's edge but still writes the text). 1.5 pt allows for glyph side bearings (the
    right-aligned equation numbers end 0.5 pt past the edge).
    """
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    words = []
    for number, page in enumerate(re.split(r"<page ", boxes)[1:], start=1):
        width = float(re.search(r'width="([\d.]+)"', page).group(1))
        for x_min, x_max, word in re.findall(
                r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>', page):
            words.append((number, width, float(x_min), float(x_max), word))
    assert words
    left = min(x_min for _, _, x_min, _, _ in words)
    assert left > 10, f"text starts {left:.1f} pt from the paper's edge"
    over = [(number, word, round(x_max - (width - left), 1))
            for number, width, _, x_max, word in words if x_max > width - left + 1.5]
    assert not over, f"{len(over)} words past the right margin (page, word, points over): {over[:10]}"
