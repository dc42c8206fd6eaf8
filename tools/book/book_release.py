"""Sphinx extension: what a reader holds to rerun the book, and what every page says about its build.

Loaded by ``_config.yml`` (``sphinx: local_extensions: {book_release: tools/book/}``). A book that
is not hosted on a forge must still be rerunnable from what its reader downloads, so the HTML
build ships, in the folder ``rerun/`` of the site:

* **the exact source of the build**: ``git archive`` of the commit the book was built from
  (tracked files only: no data, no virtual environment, no build), as
  ``dirichlet-mechanism-book-<version>-<commit>.tar.gz`` unpacking into
  ``dirichlet-mechanism-book-<version>/``. In that archive ``make lab`` installs everything and
  opens the chapters; ``tools/ci/rerun_from_site.sh`` does what a reader does with it, in CI;
* **the library's wheel**, ``dirichlet_mechanism_book-<version>-py3-none-any.whl``, which
  installs the package under the import name :data:`PACKAGE` (a downloaded chapter imports it
  under that name, ``tools/book/book_links.py``).

A tree without git history (an unpacked archive) builds the book without shipping an archive
of itself; its commit comes from ``tools/book/build_commit.txt``, which ``git archive`` fills in
(``export-subst`` in ``.gitattributes``).

Every page's footer gives the version, the commit, the build date (``SOURCE_DATE_EPOCH`` when
set, otherwise the day of the build, UTC), links to the source and the wheel, and a link to
the page "Cite this book" (``book/cite.md``, generated from ``CITATION.cff`` by
``tools/book/make_book_pages.py``). The tokens ``@BOOK_VERSION@``, ``@BOOK_COMMIT@``,
``@SOURCE_ARCHIVE@``, ``@SOURCE_FOLDER@`` and ``@WHEEL@`` in a page's source (the landing page's
"How to rerun it") become the same facts.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The import name the wheel installs (the repository's source package is ``lib``).
PACKAGE = "dirichlet_mechanism"
#: The folder of the HTML site that holds the source archive and the wheel.
RERUN_DIR = "rerun"
#: The file ``git archive`` fills with the commit and its date (``export-subst``).
COMMIT_FILE = Path("tools") / "book" / "build_commit.txt"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def build_facts(root: Path) -> dict[str, str]:
    """The version, commit, build date and the names of the shipped files, for the tree ``root``."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version, distribution = project["version"], project["name"]
    in_git = _git(root, "rev-parse", "--is-inside-work-tree") == "true" and (root / ".git").exists()
    commit = _git(root, "rev-parse", "--short=12", "HEAD") if in_git else None
    if commit is None:
        stamped = (root / COMMIT_FILE).read_text(encoding="utf-8").split()
        commit = stamped[0][:12] if stamped and not stamped[0].startswith("$Format") else "unknown"
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.UTC) if epoch
            else datetime.datetime.now(datetime.UTC))
    folder = f"{distribution}-{version}"
    return {"version": version, "commit": commit, "date": when.strftime("%Y-%m-%d"),
            "in_git": "yes" if in_git else "",
            "archive": f"{folder}-{commit}.tar.gz", "folder": folder,
            "wheel": f"{distribution.replace('-', '_')}-{version}-py3-none-any.whl"}


def init_facts(app: Sphinx, config) -> None:
    app.book_release = build_facts(Path(app.confdir))  # type: ignore[attr-defined]


TOKENS = {"@BOOK_VERSION@": "version", "@BOOK_COMMIT@": "commit", "@SOURCE_ARCHIVE@": "archive",
          "@SOURCE_FOLDER@": "folder", "@WHEEL@": "wheel"}


def fill_tokens(app: Sphinx, docname: str, source: list[str]) -> None:
    """Replace the build-fact tokens of a page's source (code blocks included)."""
    facts = app.book_release  # type: ignore[attr-defined]
    for token, key in TOKENS.items():
        if token in source[0]:
            source[0] = source[0].replace(token, facts[key])


def footer(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The footer of every page: version, commit, build date, the shipped files and the citation."""
    if app.builder.format != "html":
        return
    facts = app.book_release  # type: ignore[attr-defined]
    pathto = context["pathto"]
    rerun = pathto(RERUN_DIR, 1)
    parts = [f"Version {facts['version']}, commit <code>{facts['commit']}</code>, built {facts['date']}.",
             f'<a href="{pathto("book/cite")}">Cite this book</a>.']
    if app.builder.name == "html":
        parts.append(f'Rerun it: <a href="{rerun}/{facts["archive"]}">the source of this build</a> and '
                     f'<a href="{rerun}/{facts["wheel"]}">the library\'s wheel</a>.')
    context["theme_extra_footer"] = '<p class="book-build">' + " ".join(parts) + "</p>"


def ship(app: Sphinx, exception) -> None:
    """After an HTML build: the source archive (from git) and the wheel, in ``rerun/``."""
    if exception is not None or app.builder.name != "html":
        return
    root, facts = Path(app.confdir), app.book_release  # type: ignore[attr-defined]
    out = Path(app.outdir) / RERUN_DIR
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if facts["in_git"]:
        subprocess.run(["git", "-C", str(root), "archive", "--format=tar.gz", f"--prefix={facts['folder']}/",
                        "-o", str(out / facts["archive"]), "HEAD"], check=True, timeout=300)
    else:
        logger.info("book_release: no git history here, so no source archive is shipped")
    with tempfile.TemporaryDirectory() as scratch:
        # The wheel is built from the archive's tree when there is one (the same files, and no
        # build folders left in the working tree), from the tree itself otherwise.
        source = root
        if facts["in_git"]:
            shutil.unpack_archive(out / facts["archive"], scratch)
            source = Path(scratch) / facts["folder"]
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                        "--no-deps", "-w", str(out), str(source)], check=True, timeout=900)
    if not (out / facts["wheel"]).exists():
        raise RuntimeError(f"book_release: the wheel build did not write {facts['wheel']} "
                           f"(found: {sorted(p.name for p in out.iterdir())})")


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", init_facts)
    app.connect("source-read", fill_tokens)
    app.connect("html-page-context", footer)
    app.connect("build-finished", ship)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
