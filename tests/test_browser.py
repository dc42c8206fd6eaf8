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
# The landing page, the API page and every chapter.
PAGES = ["book/intro.html", "book/api.html"] + sorted(
    f"notebooks/{source.stem}.html" for source in (ROOT / "notebooks").glob("[0-9]*.md"))
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
    assert expected > 0, f"{page} has no math to check"
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
