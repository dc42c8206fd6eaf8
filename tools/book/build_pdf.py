"""Build a PDF of the whole book offline (the `make pdf` step).

Two stages, both local:

1. ``jupyter-book build --builder singlehtml`` renders every page of ``_toc.yml`` (whatever it
   lists at the time: new chapters are picked up automatically) into one HTML page, from the
   notebooks' stored outputs, into ``_build/pdf/_build/singlehtml``. Warnings are errors, as for
   the HTML book.
2. Debian's headless Chromium loads that page from a server on 127.0.0.1 (so the offline MathJax
   and the figures load as on the web), waits until MathJax has typeset every formula, and
   prints it to ``_build/pdf/book.pdf``.

Before printing, the page is copied to the root of the build folder as ``print.html`` with a
print style sheet: the navigation, header buttons and hidden code cells are left out, every
chapter starts on a new page, wide tables and formulas are scaled to the page width (a table
that would shrink below two thirds is set on a landscape sheet), code wraps instead of running
off the page, and every sheet carries its page number (a CSS page-margin box). Jupyter Book's
own ``pdfhtml`` builder does the same with a browser it downloads at build time, which cannot
work without the internet.

Navigation: Chromium writes a bookmark per heading (``--generate-pdf-document-outline``), and a
contents list of chapters and sections with their page numbers opens the book. The numbers are
known only once the book is printed, so it is printed twice: the first print lays the contents
out with placeholder numbers of the same width, its bookmarks give each heading's page, and the
second print fills them in (the check that the bookmarks did not move is part of the build).

The API reference (the ``book/api`` pages) is printed on its own, as ``_build/pdf/api.pdf``,
in smaller type: it is a reference to search, not to read, and it was a quarter of the book.

Usage: ``python tools/book/build_pdf.py [--out PDF] [--skip-html] [--allow-warnings] [--budget MS]``
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import html as html_lib
import re
from html.parser import HTMLParser

import yaml

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "_build" / "pdf"
SINGLEHTML = BUILD / "_build" / "singlehtml"
DEFAULT_PDF = BUILD / "book.pdf"
# Documents printed apart from the book, into API_PDF (docnames starting with this prefix).
API_PREFIX = "book/api"
API_PDF = BUILD / "api.pdf"

# The flags of the browser check (tests/book/test_browser.py): no network of Chromium's own.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-pdf-header-footer", "--generate-pdf-document-outline",
]

# The print style sheet. Class names are those of sphinx-book-theme 1.x / pydata-sphinx-theme
# and MyST-NB 1.x (the versions installed by requirements.txt).
PRINT_CSS = """
@page { size: A4; margin: 15mm 14mm 16mm 14mm;
  @bottom-center { content: counter(page); font-size: 9pt; color: #444; } }
/* A table too wide for a portrait sheet (the fit script marks it) gets a landscape one. */
@page wide { size: A4 landscape; }
@media print {
  html { font-size: 13px; }
  /* Navigation and buttons mean nothing on paper. */
  .bd-header, .bd-header-article, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer,
  .bd-footer-article, .bd-footer-content, .prev-next-area, #pst-back-to-top, .headerlink,
  .copybtn, .search-button-field, .skip-link, #pst-skip-link, .header-article-items,
  .sidebar-toggle, .theme-switch-button, .toggle-hidden,
  /* The theme's print-only list of the toctree's captions (no page numbers): the contents
     list of write_print_page replaces it. */
  #jb-print-toc,
  /* Cells whose code a reader does not need (hide-input, remove-input): keep their output only. */
  .tag_hide-input > details.above-input, .tag_hide-cell > details.above-input,
  .tag_remove-input > .cell_input { display: none !important; }
  .bd-container, .bd-container__inner, .bd-main, .bd-main .bd-content,
  .bd-article-container, .bd-article { max-width: 100% !important; width: 100% !important;
    margin: 0 !important; padding: 0 !important; }
  /* Every page of the table of contents starts on a new sheet. */
  span[id^="document-"] + section { break-before: page; }
  h1, h2, h3 { break-after: avoid; }
  /* Figures, tables and formulas are not cut; long outputs and boxes may run over a page. */
  figure, img, table, mjx-container[display="true"] { break-inside: avoid; }
  /* A figure is scaled to the text width, and a tall one (the 8-panel grids of plot_grid,
     two panels per row) further down to the sheet's height, so that it is never cut across
     sheets (the text area of an A4 sheet with these margins is 265 mm tall). */
  img { max-width: 100% !important; max-height: 250mm !important; width: auto !important;
    height: auto !important; }
  /* A figure with a caption keeps room for it on the same sheet (a caption alone on a sheet
     after a nearly blank one was the result of a 250 mm image plus its caption). */
  figure img { max-height: 215mm !important; }
  figure { break-inside: avoid; }
  figcaption { break-before: avoid; }
  /* Code wraps instead of running off the page. */
  pre { white-space: pre-wrap !important; word-break: break-word; overflow: visible !important;
    font-size: 0.8rem; }
  /* A printed output (a pandas table as text, say) keeps its lines: the fit script scales it
     to the text width like a table, and wraps it only where that would be unreadable. */
  .cell_output pre { white-space: pre !important; word-break: normal; }
  /* A cell whose only outputs are glued values kept out of view (display=False) prints nothing:
     nor does a folded cell (hide-input, its code left out above) with no output in view, whose
     empty box and margins could otherwise push a chapter's last lines onto a blank sheet. */
  div.cell_output:not(:has(*)), div.cell:not(:has(.cell_input, .cell_output *)),
  div.cell.tag_hide-input:not(:has(.cell_output *)) { display: none !important; }
  /* Tables: scaled down so that the widest of the book fits the text width. */
  .pst-scrollable-table-container, .output, .cell_output, .table-wrapper {
    overflow: visible !important; }
  table { font-size: 0.72rem; max-width: 100%; }
  table td, table th { padding: 0.1rem 0.3rem !important; }
  table.dataframe { font-size: 0.66rem; }
  /* Table rows are not split across sheets, and a pandas table's cells do not wrap: the fit
     script scales the whole table instead, so that a row reads as one line. */
  tr { break-inside: avoid; }
  table.dataframe th, table.dataframe td { white-space: nowrap; }
  .print-wide { page: wide; }
  /* The contents list that opens the PDF (write_print_page). */
  .print-contents { break-before: page; }
  .print-contents ol { list-style: none; padding: 0; margin: 0; }
  .print-contents li { display: flex; align-items: baseline; margin: 0; line-height: 1.35; }
  .print-contents li.toc-chapter { font-weight: 600; margin-top: 0.45rem; }
  .print-contents li.toc-section { padding-left: 1.4rem; font-size: 0.92rem; }
  .print-contents .toc-title { flex: 0 1 auto; }
  .print-contents .toc-dots { flex: 1 1 auto; border-bottom: 1px dotted #888; margin: 0 0.3rem;
    min-width: 1rem; }
  .print-contents .toc-page { flex: 0 0 2.2rem; text-align: right;
    font-variant-numeric: tabular-nums; }
  /* A box's bottom padding cannot be cut at a page break: when a chapter ends with a box that
     fills its last sheet (an exercise's solution), the padding alone spilled onto a blank sheet
     before the next chapter's page break. A margin inside the box can be cut, so the space
     below a box's content is a margin in print. */
  .admonition, div.admonition { padding-bottom: 0 !important; }
  .admonition > :last-child, div.admonition > :last-child { margin-bottom: 0.8rem !important; }
  /* Display math wider than the page is scaled rather than cut. */
  mjx-container[display="true"] { overflow: visible !important; max-width: 100%; }
}
"""

# Shrink a table or display formula that still overflows the text width after the style sheet.
# Runs after MathJax has typeset the page (the formulas have their final width only then).
FIT_SCRIPT = """
<script>
window.addEventListener('load', function () {
  function fit() {
    var article = document.querySelector('.bd-article') || document.body;
    var width = article.clientWidth;
    // A landscape sheet's text width over a portrait one's (297 - 28 over 210 - 28 mm).
    var wider = 269 / 182;
    var wide = 'table, mjx-container[display="true"], .cell_output pre';
    document.querySelectorAll(wide).forEach(function (el) {
      var w = el.scrollWidth;
      if (w > width && width > 0) {
        var zoom = width / w;
        // A block of many lines (a printed table) read at under two thirds of its size gets a
        // landscape sheet of its own; a short one is scaled, or wrapped below half its size.
        var lines = el.tagName === 'TABLE' ? el.rows.length
          : el.tagName === 'PRE' ? el.textContent.split('\\n').length : 0;
        if (zoom < 2 / 3 && lines >= 8) {
          var box = document.createElement('div');
          box.className = 'print-wide';
          el.parentNode.insertBefore(box, el);
          box.appendChild(el);
          zoom = Math.min(1, width * wider / w);
        }
        if (el.tagName === 'PRE' && zoom < 0.5) {
          el.style.setProperty('white-space', 'pre-wrap', 'important');
          return;
        }
        el.style.zoom = zoom.toFixed(3);
      }
    });
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(fit);
  } else {
    fit();
  }
});
</script>
"""


def root_page() -> str:
    """The docname of the book's root page, from ``_toc.yml`` (e.g. ``book/intro``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return str(toc["root"])


def build_singlehtml(strict: bool = True) -> Path:
    """Run Jupyter Book's singlehtml builder into ``_build/pdf``; return the folder.

    ``strict``: warnings are errors (``-W --keep-going``), as in ``make html``.
    """
    shutil.rmtree(BUILD / "_build", ignore_errors=True)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", "--all", *(["-W", "--keep-going"] if strict else []),
               "--builder", "singlehtml", "--path-output", str(BUILD), str(ROOT)]
    subprocess.run(command, check=True, cwd=ROOT)
    return SINGLEHTML


class _Headings(HTMLParser):
    """The h2 (document titles) and h3 (their sections) of the book's article, in order.

    Each heading is ``(level, docname, inner_html)``; the inner HTML keeps formulas (MathJax
    typesets them in the contents list as in the text) and drops the ``#`` permalink.
    """

    def __init__(self, root: str):
        super().__init__(convert_charrefs=False)
        self.doc, self.in_article, self.level = root, False, 0
        self.skip = 0
        self.parts: list[str] = []
        self.headings: list[tuple[int, str, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article" and "bd-article" in (attrs.get("class") or ""):
            self.in_article = True
        elif tag == "span" and (attrs.get("id") or "").startswith("document-"):
            self.doc = attrs["id"][len("document-"):]
        elif self.in_article and tag in ("h2", "h3"):
            self.level, self.parts = int(tag[1]), []
        elif self.level:
            if tag == "a" and "headerlink" in (attrs.get("class") or ""):
                self.skip += 1
            elif not self.skip:
                self.parts.append(self.get_starttag_text())

    def handle_endtag(self, tag):
        if tag == "article":
            self.in_article = False
        elif self.level and tag == f"h{self.level}":
            self.headings.append((self.level, self.doc, "".join(self.parts).strip()))
            self.level = 0
        elif self.level:
            if tag == "a" and self.skip:
                self.skip -= 1
            elif not self.skip:
                self.parts.append(f"</{tag}>")

    def handle_data(self, data):
        if self.level and not self.skip:
            self.parts.append(html_lib.escape(data, quote=False))

    def handle_entityref(self, name):
        if self.level and not self.skip:
            self.parts.append(f"&{name};")

    def handle_charref(self, name):
        if self.level and not self.skip:
            self.parts.append(f"&#{name};")


def contents_headings(html: str) -> list[tuple[int, str, str]]:
    """The headings the contents list shows: every document's title (h2) and sections (h3),
    without the root page's own sections and without the API pages (printed apart)."""
    parser = _Headings(root_page())
    parser.feed(html)
    return [(level, doc, text) for level, doc, text in parser.headings
            if doc != root_page() and not doc.startswith(API_PREFIX)]


def contents_html(headings: list[tuple[int, str, str]], pages: list[int] | None) -> str:
    """The contents list: one line per heading, with its page number (or a placeholder of the
    same width, ``888``, before the numbers are known)."""
    rows = []
    for i, (level, _doc, text) in enumerate(headings):
        number = "888" if pages is None else str(pages[i])
        kind = "toc-chapter" if level == 2 else "toc-section"
        rows.append(f'<li class="{kind}"><span class="toc-title">{text}</span>'
                    f'<span class="toc-dots"></span><span class="toc-page">{number}</span></li>')
    note = ("<p>The API reference of the package <code>lib</code> is printed on its own, as "
            "<code>api.pdf</code> beside this file.</p>")
    return ('<section class="print-contents" id="print-contents"><h2>Contents</h2>'
            f'<ol>{"".join(rows)}</ol>{note}</section>\n')


# The style added to the book's page (API pages left out) and to the API reference's page
# (nothing else), on top of PRINT_CSS.
BOOK_ONLY_CSS = f"""
@media print {{ span[id^="document-{API_PREFIX}"] + section {{ display: none !important; }} }}
"""
API_ONLY_CSS = f"""
@media print {{
  html {{ font-size: 11px; }}
  .bd-article > section > :not(.toctree-wrapper), .toctree-wrapper > section {{
    display: none !important; }}
  .toctree-wrapper > span[id^="document-{API_PREFIX}"] + section {{ display: block !important; }}
  /* The reference's first page follows the title at the top of the first sheet; every other
     page of it starts a sheet, as the book's chapters do. */
  .bd-article > section > .toctree-wrapper > span[id^="document-{API_PREFIX}"] + section {{
    break-before: auto; }}
}}
"""




def localise_links(html: str, page: str) -> str:
    """The single page's links as links inside the PDF.

    The singlehtml builder writes every cross-reference as ``<page>#<anchor>``, with ``page`` the
    root page's path (``book/intro.html``). Printed from ``print.html`` at the build root, such a
    link resolves to the local server the page was printed from (``http://127.0.0.1:<port>/...``)
    and leaves the PDF. Each becomes ``#<anchor>``, which Chromium prints as a link to the place
    in the PDF. A figure's link to its own image file is dropped (the figure stays): the file is
    not part of the PDF either. Public addresses are kept. Any other relative link (a page of the
    build that is not in the single page, such as ``genindex.html``) is left to the navigation,
    which the print style sheet hides; ``tests/book/test_pdf.py`` fails on any link of the PDF to a
    local address.
    """
    html = html.replace(f'href="{page}#', 'href="#').replace(f'href="{page}"', 'href="#"')
    return re.sub(r'<a\b[^>]*\bhref="_images/[^"]*"[^>]*>(.*?)</a>', r"\1", html, flags=re.S)


def write_print_page(folder: Path, name: str = "print.html", extra_css: str = "",
                     contents: str = "") -> Path:
    """``name`` at the root of ``folder``: the single page with the print style sheet.

    The singlehtml builder writes the page at the root page's path (``book/intro.html``) with
    links relative to the build root (``_static/...``), so a copy at the root is the one whose
    style sheets, scripts and figures resolve. ``extra_css`` is added to PRINT_CSS, and
    ``contents`` (HTML) is placed before the first chapter.
    """
    source = folder / (root_page() + ".html")
    if not source.exists():
        raise FileNotFoundError(f"the singlehtml build has no {source}")
    html = localise_links(source.read_text(encoding="utf-8"), root_page() + ".html")
    if "</head>" not in html:
        raise ValueError(f"{source} has no </head>")
    html = html.replace("</head>", f"<style>{PRINT_CSS}{extra_css}</style>\n{FIT_SCRIPT}</head>", 1)
    if contents:
        anchor = '<div class="toctree-wrapper compound">'
        if anchor not in html:
            raise ValueError(f"{source} has no table of contents to put the contents list before")
        html = html.replace(anchor, contents + anchor, 1)
    target = folder / name
    target.write_text(html, encoding="utf-8")
    return target


def outline_pages(pdf: Path) -> list[tuple[int, str, int]]:
    """The PDF's bookmarks, flattened in order: ``(depth, title, page)``, pages from 1."""
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    found: list[tuple[int, str, int]] = []

    def walk(entries, depth):
        for entry in entries:
            if isinstance(entry, list):
                walk(entry, depth + 1)
            else:
                found.append((depth, str(entry.title), reader.get_destination_page_number(entry) + 1))

    walk(reader.outline, 0)
    return found


def heading_pages(pdf: Path, headings: list[tuple[int, str, str]]) -> list[int]:
    """The page of each contents heading, read from the bookmarks Chromium wrote.

    The bookmarks follow the headings of the printed page in order: the root's title (depth 0),
    its own sections, the contents list's heading, then each document's title (depth 1) and its
    sections (depth 2) and deeper headings. The entries after "Contents" at depths 1 and 2 are the
    contents list's headings, one for one (the last "Contents" bookmark is the list's); their titles are compared word by word (formulas
    aside) so that a heading left out of either list is an error, not a shifted page number.
    """
    marks = outline_pages(pdf)
    starts = [i for i, (depth, title, _page) in enumerate(marks) if depth == 1 and title.strip() == "Contents"]
    if not starts:
        raise SystemExit(f"{pdf}: no 'Contents' bookmark (the contents list was not printed)")
    # The last one: the book's page may carry other headings named so before it (hidden ones
    # of the navigation, which Chromium still lists with the toctree's captions).
    marks = [(depth, title, page) for depth, title, page in marks[starts[-1] + 1:] if depth in (1, 2)]
    if len(marks) != len(headings):
        raise SystemExit(f"{pdf}: {len(marks)} bookmarks for {len(headings)} contents headings")

    def words(text: str) -> list[str]:
        text = re.sub(r"<span class=\"math[^>]*>.*?</span>", " ", text)
        text = html_lib.unescape(re.sub(r"<[^>]+>", " ", text))
        return re.findall(r"[A-Za-z]{4,}", text)

    for (depth, title, _page), (level, doc, text) in zip(marks, headings):
        expected = words(text)
        if depth != level - 1 or (expected and expected[0] not in title):
            raise SystemExit(f"{pdf}: bookmark {title!r} (depth {depth}) does not match the heading "
                             f"{text!r} of {doc}")
    return [page for _depth, _title, page in marks]


def heading_texts(html: str) -> dict[str, str]:
    """The plain text of every h1-h3 of the single page, keyed by that text without whitespace."""
    texts = {}
    for inner in re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", html, re.S):
        text = html_lib.unescape(re.sub(r"<[^>]+>", " ", inner)).replace("#", " ")
        text = re.sub(r"\s+", " ", text).strip()
        texts.setdefault(re.sub(r"\s+", "", text), text)
    return texts


def respace_bookmarks(pdf: Path, html: str) -> int:
    """Give back the spaces Chromium's outline drops where a heading wraps; return how many.

    Chromium titles each bookmark with its heading's text as laid out, line by line, and joins
    the lines of a heading that wraps without the space between them ("the concentrated" +
    "posterior" -> "concentratedposterior"). Each bookmark whose title, without whitespace, is
    a heading's text without whitespace takes that heading's text (headings with formulas, whose
    typeset text differs, are left as printed). The PDF is rewritten in place with pypdf.
    """
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    texts = heading_texts(html)
    writer = PdfWriter(clone_from=PdfReader(str(pdf)))
    fixed = 0

    def walk(item) -> None:
        nonlocal fixed
        while item is not None:
            item = item.get_object()
            title = str(item.get("/Title", ""))
            wanted = texts.get(re.sub(r"\s+", "", title))
            if wanted is not None and wanted != title:
                item[NameObject("/Title")] = TextStringObject(wanted)
                fixed += 1
            if "/First" in item:
                walk(item["/First"])
            item = item.get("/Next")

    outlines = writer._root_object.get("/Outlines")
    if outlines is not None and "/First" in outlines.get_object():
        walk(outlines.get_object()["/First"])
    with open(pdf, "wb") as out:
        writer.write(out)
    return fixed


def find_chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise SystemExit("make pdf needs Chromium (Debian: apt-get install chromium)")
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def print_to_pdf(folder: Path, page: Path, pdf: Path, budget_ms: int) -> None:
    """Serve ``folder`` on 127.0.0.1 and print ``page`` with headless Chromium into ``pdf``.

    ``--virtual-time-budget`` lets the page's scripts (MathJax) run to completion before the
    print: virtual time only advances when the page is idle, so the budget bounds the waiting
    on timers, not the typesetting itself.
    """
    chromium = find_chromium()
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pdf.parent.mkdir(parents=True, exist_ok=True)
    partial = pdf.with_suffix(".partial.pdf")
    partial.unlink(missing_ok=True)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(folder).as_posix()}"
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run(
                [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                 f"--virtual-time-budget={budget_ms}", f"--print-to-pdf={partial}", url],
                check=True, timeout=900, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
    finally:
        server.shutdown()
        thread.join()
    if not partial.exists() or partial.stat().st_size == 0:
        raise SystemExit(f"Chromium did not write {partial}")
    os.replace(partial, pdf)


def page_count(pdf: Path) -> int | None:
    """The number of pages (``pdfinfo`` of poppler-utils), or None without it."""
    if shutil.which("pdfinfo") is None:
        return None
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    for line in info.splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_PDF, help="the PDF to write")
    parser.add_argument("--skip-html", action="store_true",
                        help="reuse the singlehtml build in _build/pdf (no jupyter-book run)")
    parser.add_argument("--allow-warnings", action="store_true",
                        help="do not fail on Sphinx warnings (a draft PDF of a tree in progress)")
    parser.add_argument("--budget", type=int, default=120_000,
                        help="Chromium's virtual time budget in ms (default 120000)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    folder = SINGLEHTML if args.skip_html else build_singlehtml(strict=not args.allow_warnings)
    built = time.perf_counter()
    out = args.out.resolve()
    headings = contents_headings((folder / (root_page() + ".html")).read_text(encoding="utf-8"))
    # First print: the contents list with placeholder numbers; its bookmarks give the pages.
    page = write_print_page(folder, extra_css=BOOK_ONLY_CSS, contents=contents_html(headings, None))
    print_to_pdf(folder, page, out, args.budget)
    numbers = heading_pages(out, headings)
    # Second print, with the numbers; the numbers have the placeholder's width at most, so
    # nothing moves: checked against the second print's own bookmarks.
    page = write_print_page(folder, extra_css=BOOK_ONLY_CSS, contents=contents_html(headings, numbers))
    print_to_pdf(folder, page, out, args.budget)
    if heading_pages(out, headings) != numbers:
        raise SystemExit(f"{out}: the page numbers moved between the two prints")
    api = write_print_page(folder, "print_api.html", extra_css=API_ONLY_CSS)
    api_pdf = out.with_name(API_PDF.name)
    print_to_pdf(folder, api, api_pdf, args.budget)
    single = (folder / (root_page() + ".html")).read_text(encoding="utf-8")
    for pdf in (out, api_pdf):
        print(f"{pdf.name}: {respace_bookmarks(pdf, single)} bookmark titles given back their spaces")
    done = time.perf_counter()
    for pdf in (out, api_pdf):
        pages = page_count(pdf)
        print(f"PDF: {pdf} ({'?' if pages is None else pages} pages, {pdf.stat().st_size / 1e6:.1f} MB)")
    print(f"singlehtml {built - start:.0f} s, three prints {done - built:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
