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
chapter starts on a new page, wide tables and formulas are scaled to the page width, and code
wraps instead of running off the page. Jupyter Book's own ``pdfhtml`` builder does the same with
a browser it downloads at build time, which cannot work without the internet.

Usage: ``python tools/build_pdf.py [--out PDF] [--skip-html] [--allow-warnings] [--budget MS]``
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

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build" / "pdf"
SINGLEHTML = BUILD / "_build" / "singlehtml"
DEFAULT_PDF = BUILD / "book.pdf"

# The flags of the browser check (tests/test_browser.py): no network of Chromium's own.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-pdf-header-footer",
]

# The print style sheet. Class names are those of sphinx-book-theme 1.x / pydata-sphinx-theme
# and MyST-NB 1.x (the versions installed by requirements.txt).
PRINT_CSS = """
@page { size: A4; margin: 15mm 14mm 16mm 14mm; }
@media print {
  html { font-size: 13px; }
  /* Navigation and buttons mean nothing on paper. */
  .bd-header, .bd-header-article, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer,
  .bd-footer-article, .bd-footer-content, .prev-next-area, #pst-back-to-top, .headerlink,
  .copybtn, .search-button-field, .skip-link, #pst-skip-link, .header-article-items,
  .sidebar-toggle, .theme-switch-button, .toggle-hidden,
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
  /* Code wraps instead of running off the page. */
  pre { white-space: pre-wrap !important; word-break: break-word; overflow: visible !important;
    font-size: 0.8rem; }
  /* Tables: scaled down so that the widest of the book fits the text width. */
  .pst-scrollable-table-container, .output, .cell_output, .table-wrapper {
    overflow: visible !important; }
  table { font-size: 0.72rem; max-width: 100%; }
  table td, table th { padding: 0.1rem 0.3rem !important; }
  table.dataframe { font-size: 0.66rem; }
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
    document.querySelectorAll('table, mjx-container[display="true"]').forEach(function (el) {
      var w = el.scrollWidth;
      if (w > width && width > 0) {
        el.style.zoom = (width / w).toFixed(3);
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


def write_print_page(folder: Path) -> Path:
    """``print.html`` at the root of ``folder``: the single page with the print style sheet.

    The singlehtml builder writes the page at the root page's path (``book/intro.html``) with
    links relative to the build root (``_static/...``), so a copy at the root is the one whose
    style sheets, scripts and figures resolve.
    """
    source = folder / (root_page() + ".html")
    if not source.exists():
        raise FileNotFoundError(f"the singlehtml build has no {source}")
    html = source.read_text(encoding="utf-8")
    if "</head>" not in html:
        raise ValueError(f"{source} has no </head>")
    html = html.replace("</head>", f"<style>{PRINT_CSS}</style>\n{FIT_SCRIPT}</head>", 1)
    target = folder / "print.html"
    target.write_text(html, encoding="utf-8")
    return target


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
    page = write_print_page(folder)
    print_to_pdf(folder, page, args.out.resolve(), args.budget)
    done = time.perf_counter()
    pages = page_count(args.out)
    print(f"PDF: {args.out} ({'?' if pages is None else pages} pages, "
          f"{args.out.stat().st_size / 1e6:.1f} MB); singlehtml {built - start:.0f} s, "
          f"print {done - built:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
