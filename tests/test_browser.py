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

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
# The landing page, the API page and every chapter in the table of contents (a chapter in
# progress that is not in _toc.yml is not built).
_TOC = (ROOT / "_toc.yml").read_text()
PAGES = ["book/intro.html", "book/api.html"] + sorted(
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
    # The landing page is written in Unicode (its chapter map reaches search results as text);
    # every other page has math to check.
    assert expected > 0 or page == "book/intro.html", f"{page} has no math to check"
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
        assert any(u.endswith("/_static/mathjax/tex-chtml.js") for u in urls), "offline MathJax was not loaded"
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
                        shown: box.width, natural: i.naturalWidth}});
    }});
    var pre = document.createElement("pre");
    pre.id = "probe-result"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }}, 1500);
}};
</script></body></html>"""


def _probe(chromium: str, origin: str, page: str, width: int, workdir: Path) -> dict:
    probe = HTML / f"__probe_{width}_{page.replace('/', '_')}"
    probe.write_text(_PROBE.format(src=f"/{page}", width=width))
    try:
        dom, _ = _render(chromium, f"{origin}/{probe.name}", workdir)
    finally:
        probe.unlink()
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    assert found, f"the layout probe of {page} did not report"
    import html as _html
    return json.loads(_html.unescape(found[1]))


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


@pytest.mark.xfail(strict=False, reason=(
    "needs the figures drawn at twice their display size: in lib/experiments/plotting.py "
    "use_book_style, set_matplotlib_formats('retina') instead of 'png' (lead: lib is not "
    "this issue's file); remove this mark when every page passes (today the wide 8-panel "
    "grids of chapters 07 and 09 pass, single figures do not)"))
@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_figures_are_sharp_on_a_retina_screen(chromium, origin, page, tmp_path):
    """On a desktop column each figure has at least 1.5 image pixels per CSS pixel."""
    layout = _probe(chromium, origin, page, 1280, tmp_path)
    pngs = [i for i in layout["images"] if i["shown"] > 0]
    assert pngs, f"{page}: no figure found"
    for i in pngs:
        assert i["natural"] >= 1.5 * i["shown"], f"{page}: {i}"
