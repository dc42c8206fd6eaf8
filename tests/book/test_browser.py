"""The built book in a real browser: math typeset by the offline MathJax, nothing from the network.

Runs after ``jupyter-book build`` (``make browser``, the last step of ``make test``). Each page
is served from ``_build/html`` on 127.0.0.1 and rendered by headless Chromium, whose NetLog
records every request the page makes. Without Chromium the check is skipped locally, with a
message saying how to install it; with ``CI=true`` a missing Chromium is a failure.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
# The landing page, the API page and every chapter in the table of contents (a chapter in
# progress that is not in _toc.yml is not built).
_TOC = (ROOT / "_toc.yml").read_text()
# The API reference is one page per group of modules (book/api/*.md).
API_PAGES = sorted(f"book/api/{source.stem}.html" for source in (ROOT / "book" / "api").glob("*.md")
                   if f"file: book/api/{source.stem}\n" in _TOC + "\n")
PAGES = ["book/intro.html"] + API_PAGES + sorted(
    f"notebooks/{source.stem}.html" for source in (ROOT / "notebooks").glob("[0-9]*.md")
    if f"file: notebooks/{source.stem}\n" in _TOC + "\n")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--virtual-time-budget=20000",
]


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        message = "Chromium is not installed (Debian: apt-get install chromium); browser check skipped"
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs Chromium for the browser check: " + message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def origin():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make html` first")
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _render(chromium: str, url: str, workdir: Path) -> tuple[str, list[dict]]:
    """The DOM after scripts ran, and the page's requests from Chromium's NetLog."""
    netlog = workdir / "netlog.json"
    result = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={workdir / 'profile'}",
         f"--log-net-log={netlog}", "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True,
    )
    log = json.loads(netlog.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    requests = [event["params"] for event in log["events"]
                if event["type"] == start_job and "url" in event.get("params", {})]
    return result.stdout, requests


def _math_elements(page: str) -> int:
    """How many math spans and blocks Sphinx wrote into the page for MathJax."""
    return len(re.findall(r'class="math notranslate nohighlight"', (HTML / page).read_text()))


@pytest.mark.parametrize("page", PAGES)
def test_math_is_typeset_and_nothing_comes_from_the_network(chromium, origin, page, tmp_path):
    expected = _math_elements(page)
    # The landing page is written in Unicode (its chapter map reaches search results as text)
    # and an API page may have no formula; every chapter has math to check.
    assert expected > 0 or not page.startswith("notebooks/"), f"{page} has no math to check"
    dom, requests = _render(chromium, f"{origin}/{page}", tmp_path)

    typeset = dom.count("<mjx-container")
    assert typeset >= expected, f"MathJax typeset {typeset} of {expected} formulas on {page}"
    assert "<mjx-merror" not in dom, f"MathJax reported a TeX error on {page}"

    # Requests that the page caused (Chromium's own update and sign-in pings have no page
    # initiator and are not the book's doing).
    host = origin.split("//")[1]
    from_page = [r for r in requests
                 if r.get("initiator") == origin or host in str(r.get("site_for_cookies", ""))]
    urls = [r["url"] for r in from_page]
    if expected:
        # Sphinx appends "?v=<checksum>" to the script when the build folder already held it
        assert any(u.split("?")[0].endswith("/_static/mathjax/tex-chtml.js") for u in urls), \
            "offline MathJax was not loaded"
    outside = [u for u in urls if not u.startswith(origin + "/")]
    assert not outside, f"{page} loaded from the network: {outside}"


def test_no_page_references_remote_resources():
    """No built page embeds a script, stylesheet, image or font from another host."""
    remote = re.compile(r'<(?:script|img|iframe)[^>]*\ssrc="(?:https?:)?//|<link[^>]*\shref="(?:https?:)?//[^"]*"[^>]*>')
    offenders = {}
    for page in HTML.rglob("*.html"):
        hits = [m.group(0) for m in remote.finditer(page.read_text())
                if "<link" not in m.group(0) or re.search(r'rel="(stylesheet|preload|icon|modulepreload)"', m.group(0))]
        if hits:
            offenders[str(page.relative_to(HTML))] = hits[:3]
    assert not offenders, offenders


# ---------------------------------------------------------------------------------------------
# What a reader's browser shows: titles without raw LaTeX, one search bar, wide tables that
# scroll on a phone, figures that fit the column and stay sharp on a retina screen.

BOOK_PAGES = PAGES + ["book/paper_index.html", "book/errata.html", "book/original_code.html"]
RAW_LATEX = re.compile(r"\\\(|\\\)|\\\[|\$|\\(?:hat|varepsilon|lambda|alpha|delta|mathrm|frac)\b")


def _text(fragment: str) -> str:
    import html as _html
    return _html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("page", BOOK_PAGES)
def test_titles_and_sidebar_have_no_raw_latex(page):
    """The tab title and every entry of the navigation sidebar are plain text, not TeX source."""
    source = (HTML / page).read_text()
    title = re.search(r"<title>(.*?)</title>", source, re.S)[1]
    assert not RAW_LATEX.search(_text(title)), f"{page}: title {title!r}"
    nav = re.search(r'<nav class="[^"]*\bbd-docs-nav\b[^"]*".*?</nav>', source, re.S)
    assert nav, f"{page}: no sidebar navigation"
    for link in re.findall(r"<a [^>]*>(.*?)</a>", nav[0], re.S):
        assert not RAW_LATEX.search(_text(link)), f"{page}: sidebar entry {_text(link)!r}"


def test_search_results_titles_have_no_raw_latex():
    """Search results list the page titles of the search index as text."""
    index = (HTML / "searchindex.js").read_text()
    titles = json.loads(re.search(r'"titles":\s*(\[.*?\])', index, re.S)[1])
    bad = [t for t in titles if RAW_LATEX.search(t)]
    assert not bad, f"page titles with TeX in the search index: {bad}"


@pytest.mark.parametrize("page", ["book/intro.html", "notebooks/07_naive_bayes.html"])
def test_one_search_bar(chromium, origin, page, tmp_path):
    """The header shows one search field (unpinned theme versions drew a second one)."""
    dom, _ = _render(chromium, f"{origin}/{page}", tmp_path)
    dom = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)   # the theme writes one via a script
    fields = re.findall(r'<button[^>]*class="[^"]*search-button-field[^"]*"', dom)
    assert len(fields) <= 1, f"{page}: {len(fields)} search fields"


_PROBE = """<!doctype html><html><body>
<iframe id="page" src="{src}" style="width:{width}px;height:900px;border:0"></iframe>
<script>
document.getElementById("page").onload = function () {{
  setTimeout(function () {{
    var doc = document.getElementById("page").contentDocument, out = {{tables: [], images: []}};
    var view = doc.documentElement.clientWidth;
    doc.querySelectorAll("article table").forEach(function (t) {{
      var box = t.getBoundingClientRect(), scrolls = false;
      for (var a = t.parentElement; a && a !== doc.body; a = a.parentElement) {{
        var o = doc.defaultView.getComputedStyle(a).overflowX;
        if ((o === "auto" || o === "scroll") && a.getBoundingClientRect().right <= view + 1) {{
          scrolls = true; break;
        }}
      }}
      out.tables.push({{right: box.right, view: view, scrolls: scrolls}});
    }});
    doc.querySelectorAll("article img").forEach(function (i) {{
      var box = i.getBoundingClientRect();
      out.images.push({{src: i.getAttribute("src"), right: box.right, view: view,
                        shown: box.width, natural: i.naturalWidth,
                        shown_h: box.height, natural_h: i.naturalHeight}});
    }});
    var para = doc.querySelector("article p");
    out.body_px = para ? parseFloat(doc.defaultView.getComputedStyle(para).fontSize) : null;
    var pre = document.createElement("pre");
    pre.id = "probe-result"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }}, 1500);
}};
</script></body></html>"""


_PROBED: dict = {}


def _probe(chromium: str, origin: str, page: str, width: int, workdir: Path) -> dict:
    """The layout of ``page`` in a window ``width`` px wide (measured once per test session)."""
    if (page, width) not in _PROBED:
        _PROBED[page, width] = _measure(chromium, origin, page, width, workdir)
    return _PROBED[page, width]


def _run_probe(chromium: str, origin: str, page: str, workdir: Path, name: str, text: str) -> dict:
    """Render the probe page ``text`` (written as ``name`` beside the book) and return the JSON it
    reports in its ``probe-result`` element."""
    import html as _html

    probe = HTML / name
    probe.write_text(text)
    try:
        dom, _ = _render(chromium, f"{origin}/{probe.name}", workdir)
    finally:
        probe.unlink()
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    assert found, f"the layout probe of {page} did not report"
    return json.loads(_html.unescape(found[1]))


def _measure(chromium: str, origin: str, page: str, width: int, workdir: Path) -> dict:
    return _run_probe(chromium, origin, page, workdir, f"__probe_{width}_{page.replace('/', '_')}",
                      _PROBE.format(src=f"/{page}", width=width))


CHAPTER_PAGES = [p for p in PAGES if p.startswith("notebooks/")]


@pytest.mark.parametrize("page", BOOK_PAGES)
def test_on_a_phone_wide_tables_scroll_and_figures_fit(chromium, origin, page, tmp_path):
    """At a phone's width (390 px) a table wider than the column scrolls inside its box, and
    every figure fits the column."""
    layout = _probe(chromium, origin, page, 390, tmp_path)
    for t in layout["tables"]:
        assert t["right"] <= t["view"] + 1 or t["scrolls"], f"{page}: a wide table is cut: {t}"
    for i in layout["images"]:
        assert i["right"] <= i["view"] + 1, f"{page}: figure wider than the screen: {i}"


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_figures_keep_their_proportions(chromium, origin, page, width, tmp_path):
    """Each figure is shown with its picture's own aspect ratio, on a phone and on a desktop: no
    fixed height left in its style (tools/book/book_build.py, free_heights). The tolerance is the
    rounding of a box to whole device pixels: one pixel of the smaller side."""
    layout = _probe(chromium, origin, page, width, tmp_path)
    shown = [i for i in layout["images"] if i["shown"] > 0 and i["natural_h"] > 0]
    assert shown, f"{page}: no figure found"
    for i in shown:
        ratio = (i["shown"] / i["shown_h"]) / (i["natural"] / i["natural_h"])
        assert abs(ratio - 1) <= 1.0 / min(i["shown"], i["shown_h"]), f"{page} at {width} px: {i}"


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_figures_are_sharp_on_a_retina_screen(chromium, origin, page, tmp_path):
    """On a desktop column each figure has at least 1.5 image pixels per CSS pixel."""
    layout = _probe(chromium, origin, page, 1280, tmp_path)
    pngs = [i for i in layout["images"] if i["shown"] > 0]
    assert pngs, f"{page}: no figure found"
    for i in pngs:
        assert i["natural"] >= 1.5 * i["shown"], f"{page}: {i}"


# Tick labels as the reader sees them. A chapter figure is drawn at the book's style (10-pt
# text, lib.experiments.plotting.BOOK_STYLE) and stored as a PNG whose header records the dpi it
# was rendered at (110, or 220 for retina PNG). On the page its 10-pt labels measure
#     10 pt * dpi / 72 * shown width / image width        (CSS px),
# which is 15.3 px when the figure is shown at its natural size (one figure inch = 110 CSS px)
# and less when the page shrinks a figure wider than the text column (660 px in a 1280-px
# window, 727-774 px in others). The bound, 0.8 x the body text (12.8 px against 16 px), is the
# size of the theme's own small print (captions and code, 0.8-0.875 rem); it holds for figures
# up to about 6 in wide at the 660-px column (7.9 in at 774 px) and fails the paper's 4-panel rows
# (10 in: 8.9 px). Figures with labels set smaller than 10 pt are not seen by this check.
LEGIBLE = 0.8

def _png_dpi(page: str, src: str) -> float:
    from PIL import Image

    with Image.open((HTML / page).parent / src) as image:
        return float(image.info.get("dpi", (72.0, 72.0))[0])


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_figure_tick_labels_are_legible_in_the_column(chromium, origin, page, tmp_path):
    """Every chapter figure shows its tick labels at >= 0.8 x the page's body text size."""
    from lib.experiments.plotting import BOOK_STYLE

    layout = _probe(chromium, origin, page, 1280, tmp_path)
    body = layout["body_px"]
    assert body and 12 <= body <= 24, f"{page}: body text {body} px"
    pngs = [i for i in layout["images"] if i["shown"] > 0 and i["src"].endswith(".png")]
    assert pngs, f"{page}: no figure found"
    small = []
    for i in pngs:
        tick = BOOK_STYLE["font.size"] * _png_dpi(page, i["src"]) / 72 * i["shown"] / i["natural"]
        if tick < LEGIBLE * body:
            small.append((i["src"].rsplit("/", 1)[-1][:12], round(i["shown"]), round(tick, 1)))
    assert not small, (f"{page}: tick labels below {LEGIBLE} x {body} px (figure, shown px, "
                       f"label px): {small}")


# ---------------------------------------------------------------------------------------------
# Numbers and formulas as the reader sees them in the built HTML (no browser needed).

def _prose(page: str) -> str:
    """The text of a built page outside code, scripts and the math that MathJax typesets."""
    import html as _html
    source = (HTML / page).read_text()
    source = re.sub(r"<(script|style|pre|code|textarea)\b.*?</\1>", " ", source, flags=re.S)
    source = re.sub(r'<(span|div) class="[^"]*\bmath\b[^"]*"[^>]*>.*?</\1>', " ", source, flags=re.S)
    return _html.unescape(re.sub(r"<[^>]+>", " ", source))


# TeX commands of the book's formulas. In prose (outside the math elements Sphinx writes for
# MathJax) they mean a formula that Markdown broke before MathJax saw it: an inline $...$ whose
# continuation line starts with "+ " or "- " is parsed as a list item, so the page shows the
# TeX source. MathJax counts (test_math_is_typeset_...) cannot see this: nothing is left to typeset.
TEX_IN_PROSE = re.compile(
    r"\\(?:alpha|beta|gamma|Gamma|delta|Delta|varepsilon|epsilon|lambda|psi|log|frac|sum|prod"
    r"|mathrm|mathbb|mathcal|hat|tilde|infty|le|ge|leq|geq|eta|mid|propto|exp|sqrt|cdot|left"
    r"|right|Big|big|approx|neq|to|tag)(?![A-Za-z])")


@pytest.mark.parametrize("page", BOOK_PAGES)
def test_no_tex_source_in_prose(page):
    """Every formula of a page reached MathJax: no TeX command is left in its running text."""
    text = _prose(page)
    leaks = [" ".join(text[max(0, m.start() - 40):m.end() + 30].split())
             for m in TEX_IN_PROSE.finditer(text)]
    assert not leaks, (f"{page}: {len(leaks)} TeX commands outside math (a formula broken by a "
                       f"line that starts with '+ ' or '- '?), e.g. {leaks[:3]}")


def _cells_source(page: str) -> str:
    """The markdown a chapter page is rendered from (its .ipynb; the .md for other pages)."""
    import nbformat
    source = ROOT / page.replace(".html", ".ipynb")
    if source.exists():
        notebook = nbformat.read(source, as_version=4)
        return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    return (ROOT / page.replace(".html", ".md")).read_text()


def test_captions_carry_no_book_numbers_and_exercises_render():
    """Figure and table captions name the paper's numbers only: no "Fig. 7.1" beside them.

    sphinx-exercise and sphinx-proof switch Sphinx's numfig on, which numbered every figure
    ("Fig. 32 Figure 4 of the paper ..."); tools/book/book_build.py removes the numbers of figures
    and tables. The same pages must still render every exercise and solution directive of
    their source (so the fix did not switch the exercise machinery off).
    """
    captions = exercises = 0
    for page in BOOK_PAGES:
        source = (HTML / page).read_text()
        found = re.findall(r"<figcaption\b.*?</figcaption>|<caption\b.*?</caption>", source, re.S)
        captions += len(found)
        for caption in found:
            text = " ".join(_text(caption).split())
            assert 'class="caption-number"' not in caption, f"{page}: numbered caption {text!r}"
            # Sphinx's formats "Fig. %s", "Table %s", "Listing %s" (a caption may itself start
            # with the paper's "Figure 4 of the paper" or "Table 1 of the paper")
            assert not re.match(r"(?:Fig\.|Listing)\s*\d|Table\s*[\d.]+\s+(?!of\b)", text), \
                f"{page}: {text!r}"
        markdown = _cells_source(page)
        for kind in ("exercise", "solution"):
            # {solution} or the gated {solution-start} ... {solution-end} pair
            written = len(re.findall(r"^\s*(?:`{3,}|:{3,})\{" + kind + r"(?:-start)?\}", markdown,
                                     re.M))
            rendered = len(re.findall(r'<div class="' + kind + r'\b[^"]*admonition', source))
            assert rendered == written, f"{page}: {written} {kind} directives, {rendered} rendered"
            exercises += written
    # Not vacuous: the book has captioned figures and exercises to check.
    assert captions >= 10 and exercises >= 10, (captions, exercises)


def test_no_page_or_download_shows_a_path_of_the_build_machine():
    """Issue 29: without a repository address the clone command shows `<repository-url>`, never this tree's path.

    The landing page and the note opening every downloaded chapter (.ipynb and .md) tell the
    reader how to clone; a build with no ``repository.url`` used to print ``git clone /abs/path``.
    """
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make html` first")
    sys_path = str(ROOT)
    files = [HTML / "book" / "intro.html"] + sorted((HTML / "_sources").rglob("*.ipynb")) + sorted(
        (HTML / "_sources" / "notebooks").glob("*.md"))
    assert len(files) > 2 * 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".html":  # highlighted code: words of a command sit in separate spans
            import html as html_module
            text = html_module.unescape(re.sub(r"<[^>]+>", "", text))
        assert sys_path not in text, f"{path.relative_to(HTML)} shows the build path {sys_path}"
        assert not re.search(r"git clone (?:/|\.\.?/|file:)", text), f"{path.relative_to(HTML)} clones a local path"
        assert "git clone" in text, f"{path.relative_to(HTML)} lost its clone command"



# ---------------------------------------------------------------------------------------------
# Issue 28: the pages a reader opens on a phone read without sideways scrolling. At 390 px the
# page is no wider than the screen, every table fits the box that holds it (no table scrolls
# inside its box either), and the verdict column of the paper index is on screen.

PHONE_PAGES = ["book/intro.html", "book/paper_index.html", "book/errata.html",
               "notebooks/14_all_systems.html"] + API_PAGES

_FIT_PROBE = """<!doctype html><html><body>
<iframe id="page" src="{src}" style="width:{width}px;height:900px;border:0"></iframe>
<script>
document.getElementById("page").onload = function () {{
  setTimeout(function () {{
    var doc = document.getElementById("page").contentDocument, win = doc.defaultView;
    var out = {{page_scroll: doc.documentElement.scrollWidth, inner: win.innerWidth,
               tables: [], verdicts: []}};
    doc.querySelectorAll("{selector}").forEach(function (t) {{
      var box = t.parentElement;
      out.tables.push({{table: Math.ceil(t.getBoundingClientRect().width), scroll: t.scrollWidth,
                        box: box.clientWidth, box_scroll: box.scrollWidth,
                        head: (t.querySelector("tr") || t).textContent.trim().slice(0, 60)}});
      var head = Array.prototype.map.call(t.querySelectorAll("thead th"),
                                          function (h) {{ return h.textContent.trim(); }});
      var col = head.indexOf("Verdict");
      if (col >= 0) {{
        t.querySelectorAll("tbody tr").forEach(function (row) {{
          var cell = row.children[col], r = cell.getBoundingClientRect();
          out.verdicts.push({{text: cell.textContent.trim(), left: r.left, right: r.right,
                              width: r.width, view: win.innerWidth}});
        }});
      }}
    }});
    var pre = document.createElement("pre");
    pre.id = "probe-result"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }}, 1500);
}};
</script></body></html>"""


# The tables that must fit: every table of a page, except in chapter 14, whose wide tables of
# numbers scroll in their box (checked above) and whose practitioner's table must fit.
FIT_TABLES = {"notebooks/14_all_systems.html": "section#what-a-practitioner-should-pick table"}


def _fit(chromium: str, origin: str, page: str, width: int, workdir: Path) -> dict:
    return _run_probe(chromium, origin, page, workdir, f"__fit_{width}_{page.replace('/', '_')}",
                      _FIT_PROBE.format(src=f"/{page}", width=width,
                                        selector=FIT_TABLES.get(page, "article table")))


@pytest.mark.parametrize("page", PHONE_PAGES)
def test_on_a_phone_nothing_scrolls_sideways(chromium, origin, page, tmp_path):
    layout = _fit(chromium, origin, page, 390, tmp_path)
    assert layout["page_scroll"] <= layout["inner"], (
        f"{page}: the page is {layout['page_scroll']} px wide on a {layout['inner']} px screen")
    if page in ("book/paper_index.html", "notebooks/14_all_systems.html", "book/intro.html"):
        assert layout["tables"], f"{page}: no table found"
    for t in layout["tables"]:
        assert t["table"] <= t["box"] + 1 and t["box_scroll"] <= t["box"] + 1, (
            f"{page}: a table ({t['head']!r}) is {t['table']} px wide in a {t['box']} px box")


def test_on_a_phone_the_paper_index_shows_every_verdict(chromium, origin, tmp_path):
    layout = _fit(chromium, origin, "book/paper_index.html", 390, tmp_path)
    verdicts = layout["verdicts"]
    assert len(verdicts) >= 71, f"{len(verdicts)} verdict cells found"
    for v in verdicts:
        assert 0 <= v["left"] and v["right"] <= v["view"] + 1 and v["width"] > 20, v


# ---------------------------------------------------------------------------------------------
# Issue 37: outputs a reader can read in the column, an opening box of one phone screen, and the
# chapter numbers that the book cites ("ch. 07") shown wherever a chapter is named.

_BLOCK_PROBE = """<!doctype html><html><body>
<iframe id="page" src="{src}" style="width:{width}px;height:900px;border:0"></iframe>
<script>
document.getElementById("page").onload = function () {{
  setTimeout(function () {{
    var doc = document.getElementById("page").contentDocument;
    var para = doc.querySelector("article.bd-article p");
    var column = para ? para.getBoundingClientRect().width : 0;
    var out = {{column: column, outputs: [], box: null}};
    var cells = doc.querySelectorAll("article.bd-article div.cell");
    cells.forEach(function (cell, index) {{
      cell.querySelectorAll("div.cell_output > div.output").forEach(function (o) {{
        // the output's box is the column; its content (a printed line, a table) may be wider
        var widest = o.scrollWidth;
        o.querySelectorAll("pre, table").forEach(function (e) {{
          widest = Math.max(widest, e.scrollWidth);
        }});
        if (o.getBoundingClientRect().height > 0) {{
          out.outputs.push({{cell: index + 1, width: widest, box: o.clientWidth,
                             text: o.textContent.trim().slice(0, 60)}});
        }}
      }});
    }});
    var titles = doc.querySelectorAll("article.bd-article .admonition > .admonition-title");
    for (var i = 0; i < titles.length; i++) {{
      if (titles[i].textContent.trim() === "What this chapter shows") {{
        out.box = titles[i].parentElement.getBoundingClientRect().height;
        break;
      }}
    }}
    var pre = document.createElement("pre");
    pre.id = "probe-result"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }}, 1500);
}};
</script></body></html>"""

_BLOCKS: dict = {}


def _blocks(chromium: str, origin: str, page: str, width: int, workdir: Path) -> dict:
    """Each shown output's widest block and the opening box's height, at ``width`` px (measured
    once per page and width)."""
    if (page, width) not in _BLOCKS:
        _BLOCKS[page, width] = _run_probe(
            chromium, origin, page, workdir, f"__blocks_{width}_{page.replace('/', '_')}",
            _BLOCK_PROBE.format(src=f"/{page}", width=width))
    return _BLOCKS[page, width]


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_outputs_fit_the_column_on_a_desktop(chromium, origin, page, tmp_path):
    """At 1280 px no output block (printed text, a table) is wider than the text column: it would
    scroll sideways inside its box. An output's box spans the column (or the narrower column of
    the exercise or box that holds it); one pixel of rounding is allowed."""
    layout = _blocks(chromium, origin, page, 1280, tmp_path)
    column = layout["column"]
    assert column > 400, f"{page}: text column {column} px"
    assert layout["outputs"], f"{page}: no output found"
    wide = [(o["cell"], o["width"], o["text"]) for o in layout["outputs"] if o["width"] > o["box"] + 1]
    assert not wide, (f"{page}: {len(wide)} of {len(layout['outputs'])} outputs wider than the "
                      f"{column:.0f} px column (cell, px, text): {wide[:8]}")


#: One phone screen: the height of a 390 x 844 px phone's window less its browser bars.
PHONE_SCREEN = 900


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_the_opening_box_fits_one_phone_screen(chromium, origin, page, tmp_path):
    """At 390 px a chapter's opening box ("What this chapter shows") is at most one screen tall,
    so that the chapter starts on the second screen at the latest."""
    layout = _blocks(chromium, origin, page, 390, tmp_path)
    assert layout["box"] is not None, f"{page}: no opening box"
    assert layout["box"] <= PHONE_SCREEN, f"{page}: opening box {layout['box']:.0f} px at 390 px"


def _chapter_numbers() -> dict[str, int]:
    """The number of each chapter of a numbered part of _toc.yml (tests/book/test_pdf.py)."""
    from tests.book.test_pdf import chapter_numbers

    return {doc: n for doc, n in chapter_numbers().items() if doc.startswith("notebooks/")}


def test_chapters_are_numbered_as_they_are_cited():
    """The book cites chapters by their file's number ("ch. 07", "chapters 10-13"): the sidebar,
    the page's heading and its tab title show "7. Naive Bayes ..." for notebooks/07_...."""
    numbers = _chapter_numbers()
    assert len(numbers) == len(CHAPTER_PAGES), f"numbered chapters: {sorted(numbers)}"
    for doc, number in numbers.items():
        assert number == int(doc.split("/")[1][:2]), f"{doc} is numbered {number}"
    source = (HTML / "book" / "intro.html").read_text()
    nav = re.search(r'<nav class="[^"]*\bbd-docs-nav\b[^"]*".*?</nav>', source, re.S)[0]
    for doc, number in numbers.items():
        page = f"{doc}.html"
        link = re.search(r'<a [^>]*href="(?:[^"]*/)?' + re.escape(doc.split("/")[1]) + r'\.html"[^>]*>(.*?)</a>',
                         nav, re.S)
        assert link, f"no sidebar entry for {doc}"
        assert " ".join(_text(link[1]).split()).startswith(f"{number}. "), \
            f"sidebar entry of {doc}: {_text(link[1])!r}"
        html = (HTML / page).read_text()
        article = html[html.index('<article class="bd-article"'):]
        heading = re.search(r"<h1\b.*?</h1>", article, re.S)[0]
        assert " ".join(_text(heading).split()).startswith(f"{number}. "), \
            f"{page}: heading {_text(heading)!r}"
        tab = _text(re.search(r"<title>(.*?)</title>", html, re.S)[1])
        assert tab.startswith(f"{number}. ") and not tab.startswith(f"{number}. {number}. "), \
            f"{page}: tab title {tab!r}"
