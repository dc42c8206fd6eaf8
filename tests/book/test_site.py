"""What the built site gives a reader to rerun it (issue 37), checked on ``_build/html``.

* Every page's footer states the version, the commit and the build date, and links to the page
  "Cite this book" and to the two files of ``rerun/`` (tools/book/book_release.py).
* ``rerun/`` holds the source archive of the commit (every tracked file, nothing else: no data,
  no environment, no build; its ``build_commit.txt`` names the commit) and the library's wheel,
  which installs the package ``dirichlet_mechanism`` and no ``lib``.
* A downloaded chapter opens with the note naming that wheel, and none of its code imports ``lib``
  (tools/book/book_links.py rewrites the imports to the installed name).

Running a chapter from these files is ``make rerun-check`` (tools/ci/rerun_from_site.sh), in CI.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from urllib.parse import urljoin

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "tools" / "book"))
import book_release  # noqa: E402

PAGES = sorted(str(p.relative_to(HTML)) for p in HTML.glob("**/*.html")
               if p.relative_to(HTML).parts[0] in ("book", "notebooks")) if HTML.exists() else []
FACTS = book_release.build_facts(ROOT)


@pytest.fixture(scope="module", autouse=True)
def built():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make html` first")


def test_facts_are_the_trees():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert FACTS["version"] == version
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert FACTS["commit"] == head


@pytest.mark.parametrize("page", PAGES)
def test_every_page_states_its_build_and_links_to_rerun_and_cite(page):
    html = (HTML / page).read_text(encoding="utf-8")
    footer = re.search(r'<p class="book-build">(.*?)</p>', html, re.S)
    assert footer, f"{page}: no build footer"
    text = footer[1]
    assert f"Version {FACTS['version']}" in text and FACTS["commit"] in text, f"{page}: {text}"
    assert re.search(r"built \d{4}-\d{2}-\d{2}", text), f"{page}: no build date in {text}"
    targets = {Path(urljoin(f"/{page}", href).lstrip("/")) for href in re.findall(r'href="([^"#]+)"', text)}
    wanted = {Path("book/cite.html"), Path("rerun") / FACTS["archive"], Path("rerun") / FACTS["wheel"]}
    wanted.discard(Path(page))  # the cite page's own link is to itself
    assert wanted <= targets, f"{page}: footer links {sorted(map(str, targets))}"
    for target in wanted:
        assert (HTML / target).exists(), f"{page} links to {target}, which the site does not have"


def test_the_source_archive_is_exactly_the_commit():
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
    with tarfile.open(HTML / "rerun" / FACTS["archive"]) as archive:
        names = [m.name for m in archive.getmembers() if m.isfile()]
        stamp = archive.extractfile(f"{FACTS['folder']}/{book_release.COMMIT_FILE.as_posix()}").read().decode()
    prefix = FACTS["folder"] + "/"
    assert all(n.startswith(prefix) for n in names)
    assert sorted(n[len(prefix):] for n in names) == sorted(tracked)
    from lib.experiments.data import DATASETS, files

    data = {Path(f.path).name for name in DATASETS for f in files(name)}
    assert not [n for n in names if re.search(r"(^|/)(\.venv|_build|uci)/", n) or Path(n).name in data]
    assert stamp.split()[0].startswith(FACTS["commit"]), stamp


def test_the_wheel_installs_the_non_colliding_name():
    with zipfile.ZipFile(HTML / "rerun" / FACTS["wheel"]) as wheel:
        tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    assert book_release.PACKAGE in tops and "lib" not in tops, sorted(tops)


def test_downloaded_chapters_name_the_wheel_and_import_the_installed_package():
    chapters = sorted((HTML / "_sources" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert chapters, "no downloadable chapter"
    for path in chapters:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(cells[0]["source"])
        assert FACTS["wheel"] in first and "[chapters]" in first, f"{path.name}: {first[:200]}"
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        stale = re.findall(r"^\s*(?:import lib\b(?! *$)|from lib\b)", code, re.M)
        bare = [line for line in code.splitlines() if re.fullmatch(r"\s*import lib\s*", line)]
        assert not stale and not bare, f"{path.name} still imports lib: {stale or bare}"
        markdown = (path.with_suffix(".md")).read_text(encoding="utf-8")
        assert FACTS["wheel"] in markdown and not re.search(r"^\s*from lib\b", markdown, re.M)


def test_the_cite_page_is_the_citation_file():
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    text = (HTML / "book" / "cite.html").read_text(encoding="utf-8")
    assert cff["title"] in text and str(cff["version"]) in text
    assert cff["preferred-citation"]["url"] in text
