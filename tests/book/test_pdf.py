"""The PDF of the whole book (``make pdf``): every page of ``_toc.yml``, typeset math, figures,
nothing past the margins; printed page numbers, a bookmark per chapter and section, a contents
list with page numbers, no sheet holding only a caption; the API reference as its own PDF.

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

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "_build" / "pdf" / "book.pdf"
API_PDF = ROOT / "_build" / "pdf" / "api.pdf"
# Documents printed in API_PDF instead of the book (tools/book/build_pdf.py, API_PREFIX).
API_PREFIX = "book/api"
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
def api_pdf(pdf) -> Path:
    if not API_PDF.exists():
        _skip_or_fail(f"no PDF at {API_PDF}: run `make pdf` first")
    return API_PDF


def _page_texts(pdf: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout
    return [_normalise(page) for page in text.split("\f")]


@pytest.fixture(scope="module")
def pages(pdf) -> list[str]:
    """The text of each page (pdftotext separates pages with a form feed)."""
    return _page_texts(pdf)


def _words(pdf: Path) -> list[tuple[int, float, float, float, float, float, str]]:
    """Every word with its page (from 1), the page's width and height and its box, in points."""
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    words = []
    for number, page in enumerate(re.split(r"<page ", boxes)[1:], start=1):
        width = float(re.search(r'width="([\d.]+)"', page).group(1))
        height = float(re.search(r'height="([\d.]+)"', page).group(1))
        for x_min, y_min, x_max, word in re.findall(
                r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>',
                page):
            words.append((number, width, height, float(x_min), float(y_min), float(x_max), word))
    return words


@pytest.fixture(scope="module")
def words(pdf):
    return _words(pdf)


def _normalise(text: str) -> str:
    """Text as compared: NFKC (ligatures apart), plain quotes and dashes, one space."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"',
                                         "\u201d": '"', "\u2013": "-", "\u2014": "-"}))
    return re.sub(r"\s+", " ", text).strip()


def toc_documents(api: bool = False) -> list[str]:
    """Every document of ``_toc.yml`` in reading order (root, then parts, chapters, sections):
    those of the book's PDF, or with ``api`` those of the API reference's PDF."""
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
    return [doc for doc in docs if doc.startswith(API_PREFIX) == api]


def chapter_numbers() -> dict[str, int]:
    """The number each document of a numbered part of ``_toc.yml`` carries (``numbered`` on the
    part; ``html.use_multitoc_numbering`` in ``_config.yml`` counts on across parts), as Sphinx
    prints it before the title ("7. Naive Bayes ...") in headings, bookmarks and the contents."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    numbers, count = {}, 0
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for entry in part.get("chapters") or []:
            count += 1
            numbers[entry["file"]] = count
    return numbers


def numbered_title(doc: str) -> str:
    """The first words of a document's title as a bookmark or the contents list shows them: its
    chapter number first, when it has one."""
    first = title_fragments(title(doc))[0]
    number = chapter_numbers().get(doc)
    return first if number is None else f"{number}. {first}"


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


def _contents_pages(pages: list[str]) -> range:
    """The sheets of the contents list: from the one headed "Contents" to the one before the
    first chapter's opening box ("What this chapter shows"), which follows its title."""
    first = next((i for i, page in enumerate(pages) if page.startswith("Contents")), None)
    if first is None:
        return range(0)
    box = next(i for i, page in enumerate(pages) if "What this chapter shows" in page and i > first)
    return range(first, box)


def _document_starts(pages: list[str], docs: list[str]) -> dict[str, int]:
    """The page (from 0) where each document's title leads a page, in order (the contents list,
    whose lines start with titles too, aside)."""
    skip = _contents_pages(pages)
    # The root page comes first; every other document starts after the contents list (the root's
    # own text, such as its chapter map, may name a chapter at the top of one of its sheets).
    root_end = skip.start if skip else 0
    pages = ["" if i in skip else page for i, page in enumerate(pages)]
    after = ["" if i < root_end else page for i, page in enumerate(pages)]
    found, last = {}, -1
    for doc in docs:
        fragments = title_fragments(title(doc))
        assert fragments, f"no text in the title of {doc}"
        # The title's first words lead a page (the print style sheet breaks the page before
        # every document; 120 characters allow for a chapter number and the root's title).
        starts = [i for i, page in enumerate(pages if not found else after) if fragments[0] in page[:120]]
        assert starts, f"the title of {doc} ({fragments[0]!r}) does not start any page"
        first = min((i for i in starts if i > last), default=None)
        assert first is not None, f"{doc} starts before the document that precedes it in _toc.yml"
        heading_text = " ".join(pages[first:first + 2])
        for fragment in fragments:
            assert fragment in heading_text, f"{fragment!r} of the title of {doc} is not on page {first + 1}"
        found[doc] = last = first
    return found


def test_every_toc_document_starts_a_page_in_order(pages):
    """Each document of _toc.yml is in the PDF, its title at the top of a new page, in order."""
    docs = toc_documents()
    assert len(docs) >= 3, docs
    assert len(_document_starts(pages, docs)) == len(docs)


def test_the_api_reference_is_its_own_pdf(pages, api_pdf):
    """The API pages are printed in api.pdf, each starting a page, and not in the book."""
    docs = toc_documents(api=True)
    assert docs, "no API page in _toc.yml"
    api_pages = _page_texts(api_pdf)
    starts = _document_starts(api_pages, docs)
    assert len(starts) == len(docs)
    for doc in docs:
        first = title_fragments(title(doc))[0]
        assert not any(page.startswith(first) for page in pages), f"{doc} is printed in the book too"


def test_every_page_is_numbered(words):
    """Each sheet prints its number in the bottom margin (the last 16 mm of the sheet)."""
    numbered = {number for number, _w, height, _x0, y_min, _x1, word in words
                if word == str(number) and y_min > height - 16 / 25.4 * 72}
    n_pages = max(number for number, *_ in words)
    missing = sorted(set(range(1, n_pages + 1)) - numbered)
    assert not missing, f"pages without a printed number: {missing[:20]}"


def _bookmarks(pdf: Path) -> list[tuple[int, str, int]]:
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    found = []

    def walk(entries, depth):
        for entry in entries:
            if isinstance(entry, list):
                walk(entry, depth + 1)
            else:
                found.append((depth, _normalise(str(entry.title)),
                              reader.get_destination_page_number(entry)))

    walk(reader.outline, 0)
    return found


def test_a_bookmark_per_chapter_and_section(pdf, pages):
    """The PDF's outline has every document (bar the root) at the page where it starts, with
    its sections beneath it."""
    marks = _bookmarks(pdf)
    docs = toc_documents()[1:]
    starts = _document_starts(pages, toc_documents())
    for doc in docs:
        first = numbered_title(doc)
        hits = [(depth, page) for depth, text, page in marks if text.startswith(first[:30])]
        assert hits, f"no bookmark for {doc} ({first!r})"
        assert (1, starts[doc]) in hits, f"the bookmark of {doc} is not at page {starts[doc] + 1}: {hits}"
    sections = [m for m in marks if m[0] == 2]
    assert len(sections) >= 5 * len(docs), f"{len(sections)} section bookmarks for {len(docs)} documents"


def test_the_contents_list_gives_each_chapters_page(pages):
    """The contents list printed at the front gives, for every document, the page where its
    title is found in the PDF's text (found here from the text, not from the bookmarks that
    the build used to write the numbers)."""
    html = (SINGLEHTML / "print.html").read_text(encoding="utf-8")
    listed = re.findall(r'<li class="toc-chapter"><span class="toc-title">(.*?)</span>'
                        r'<span class="toc-dots"></span><span class="toc-page">(\d+)</span>', html)
    docs = toc_documents()[1:]
    assert len(listed) == len(docs), f"{len(listed)} chapters listed for {len(docs)} documents"
    starts = _document_starts(pages, toc_documents())
    for doc, (text, number) in zip(docs, listed):
        shown = _normalise(re.sub(r"<[^>]+>", "", text))
        assert shown.startswith(numbered_title(doc)[:30]), f"the contents list {doc} as {shown!r}"
        assert int(number) == starts[doc] + 1, f"contents give page {number} for {doc}, it starts on {starts[doc] + 1}"
    contents = _contents_pages(pages)
    assert len(contents) >= 1 and contents.stop <= starts[docs[0]], "no contents before the first chapter"


def test_chapter_numbers_are_the_file_numbers():
    """The book cites its chapters by the number of their file ("ch. 07" is
    notebooks/07_naive_bayes): each numbered chapter carries that number, and every chapter is
    numbered."""
    numbers = chapter_numbers()
    chapters = [doc for doc in toc_documents() if re.match(r"notebooks/\d\d_", doc)]
    assert chapters, "no chapter in _toc.yml"
    wrong = {doc: numbers.get(doc) for doc in chapters
             if numbers.get(doc) != int(doc.split("/")[1][:2])}
    assert not wrong, f"chapters whose number is not their file's: {wrong}"


def test_no_sheet_holds_only_a_caption(pdf, pages):
    """A figure's caption is printed on the sheet of its figure: no sheet without an image whose
    text is a caption alone (what a figure too tall for its caption left behind)."""
    listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                             check=True).stdout.splitlines()[2:]
    with_images = {int(line.split()[0]) for line in listing if line.split()}
    lonely = [(i + 1, page[:80]) for i, page in enumerate(pages)
              if i + 1 not in with_images and len(page) < 700
              and re.match(r"^.{0,40}?Figure \d+", page)]
    assert not lonely, f"sheets holding only a caption: {lonely}"


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
    # (Every sheet prints its number, so a blank one holds that number alone.)
    blank = [i + 1 for i, page in enumerate(pages[:n_pages])
             if page in ("", str(i + 1)) and i + 1 not in with_images]
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

    pdftotext gives each word's box, in points. The print style sheet of tools/book/build_pdf.py sets
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


def _links(pdf: Path) -> tuple[list[str], int]:
    """Every URI link of ``pdf`` and the number of its links to a place inside it (GoTo)."""
    from pypdf import PdfReader

    uris, inside = [], 0
    for page in PdfReader(str(pdf)).pages:
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            action = annotation.get("/A")
            if action is not None and "/URI" in action:
                uris.append(str(action["/URI"]))
            else:
                inside += 1
    return uris, inside


#: Addresses that exist only on the machine that printed the PDF.
_LOCAL = re.compile(r"^(?:https?://(?:127\.\d+\.\d+\.\d+|localhost|0\.0\.0\.0|\[::1\])(?::\d+)?|file:)", re.I)


@pytest.mark.parametrize("which", ["book", "api"])
def test_no_link_leaves_for_the_build_machine(pdf, api_pdf, which):
    """Every link of the PDF is either a place in the PDF or a public address: the singlehtml's
    cross-references (``book/intro.html#...``) become links inside the PDF
    (tools/book/build_pdf.py, localise_links), and none points to the server it was printed from."""
    uris, inside = _links(pdf if which == "book" else api_pdf)
    local = [u for u in uris if _LOCAL.match(u)]
    assert not local, f"{len(local)} links to the build machine, e.g. {local[:5]}"
    if which == "book":
        assert inside >= 400, f"only {inside} links inside the book's PDF"


def test_bookmark_titles_keep_their_spaces(pdf):
    """A bookmark's title is its heading's text with the spaces between its words: the headings
    of the single page (inline code, formulas and links run together when their text is joined
    without the spaces around them) against the outline Chromium wrote."""
    html = (ROOT / "_build" / "pdf" / "_build" / "singlehtml" / "book" / "intro.html").read_text()
    spaced = set()
    for inner in re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", html, re.S):
        text = re.sub(r"<[^>]+>", " ", inner)
        words = re.sub(r"\s+", " ", text.replace("#", " ")).strip().split(" ")
        spaced.update(a + b for a, b in zip(words, words[1:]) if a.isalpha() and b.isalpha())
    joined = [title for _, title, _ in _bookmarks(pdf) for word in title.split() if word in spaced]
    assert not joined, f"bookmark titles with words run together: {joined[:10]}"
