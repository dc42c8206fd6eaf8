"""Sphinx extension: the book's links to its repository, launch buttons and chapter downloads.

Loaded by ``_config.yml`` (``sphinx: local_extensions: {book_links: tools/}``). One key decides
every link to the repository: ``repository.url`` in ``_config.yml``.

* **Clone command.** The token ``@REPOSITORY_URL@`` in a page (the landing page's "How to rerun
  it") becomes the repository's address, and ``@REPOSITORY_FOLDER@`` the folder that ``git clone``
  makes. The address is ``repository.url`` when set, otherwise the ``origin`` remote of the
  working tree when that is a network address (``https://...``, ``git@host:...``). Never a path
  of the machine that built the book: without an address the command shows the placeholders
  :data:`PLACEHOLDER_URL` and :data:`PLACEHOLDER_FOLDER`, and the token ``@REPOSITORY_NOTE@``
  (empty otherwise) becomes a sentence that says so and where the address is set.
* **Header buttons.** The repository and issue buttons and the launch buttons configured under
  ``launch_buttons`` (Binder) are turned on only when ``repository.url`` is set: without it they
  would point nowhere (and sphinx-book-theme fails on launch buttons without a repository).
* **Downloads.** A chapter rendered from ``notebooks/NN_name.ipynb`` also offers its MyST source
  ``notebooks/NN_name.md`` in the page's download menu, beside the ``.ipynb``. Both downloaded
  files open with a note saying what the chapter needs (the package ``lib`` of the repository,
  and for some chapters the UCI data) and how to get it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from sphinx.application import Sphinx

URL_TOKEN = "@REPOSITORY_URL@"
FOLDER_TOKEN = "@REPOSITORY_FOLDER@"

#: Jupyter Book 1's default ``repository.url``, used when ``_config.yml`` does not set one.
JUPYTER_BOOK_DEFAULT = "https://github.com/executablebooks/jupyter-book"

#: The buttons that need a repository (``html.use_*_button`` in ``_config.yml``).
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button")
#: The launch services that need a repository (``launch_buttons`` in ``_config.yml``).
LAUNCH_KEYS = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url", "jupyterlite_url")

#: What the clone command shows when the build has no repository address.
PLACEHOLDER_URL = "<repository-url>"
PLACEHOLDER_FOLDER = "<folder-it-creates>"
NOTE_TOKEN = "@REPOSITORY_NOTE@"
MISSING_URL_NOTE = (
    "This copy of the book was built without a repository address, so the command above shows "
    f"`{PLACEHOLDER_URL}` in its place: use the address of the book's repository (whoever builds "
    "the book sets it as `repository.url` in `_config.yml`)."
)
#: Addresses a reader elsewhere can clone: a URL with a scheme and a host, or scp-like user@host:path.
NETWORK_ADDRESS = re.compile(r"^(?:(?:https?|ssh|git)://[^/\s]+/\S+|[\w.-]+@[\w.-]+:\S+)$")

NOTE = (
    "**What this chapter needs.** It is chapter {number} of *{title}* and imports the book's "
    "library. Install the library's wheel from the book's site (the footer of every page links to "
    "it, in the folder `rerun/`), with the extras the chapters use, then open this notebook:\n\n"
    "```bash\npip install \"{wheel}[chapters]\" jupyterlab\n```\n\n"
    "The wheel installs the library as `{package}`, the name this copy imports (in the book's "
    "source the same package is `lib`). The chapters with experiments also read the UCI data: "
    "from the folder named by `DIRICHLET_DATA_DIR`, or downloaded from UCI into a cache on first "
    "use. To rerun the whole book instead, unpack the source archive beside the wheel "
    "(`{archive}`) and run `make lab` in it; with a clone of the repository: "
    "`git clone {url} && cd {folder}` then `make lab`.{note}"
)

#: ``import lib`` and ``from lib... import`` in a downloaded chapter, to be imported under the
#: installed name (the wheel's package, :data:`book_release.PACKAGE`).
_IMPORT_LIB = re.compile(r"^([ \t]*)import lib(\.[\w.]+)?([ \t]+as[ \t]+\w+)?[ \t]*$", re.M)
_FROM_LIB = re.compile(r"^([ \t]*)from lib(\.[\w.]+)?[ \t]+import\b", re.M)


def installed_imports(code: str, package: str) -> str:
    """``code`` with every import of ``lib`` rewritten to the installed package ``package``.

    ``import lib`` becomes ``import <package> as lib``, so that ``lib.x`` keeps working;
    ``import lib.a.b as m`` and ``from lib.a import x`` name ``<package>.a``; a bare
    ``import lib.a.b`` imports ``<package>.a.b`` and then binds ``lib`` to the package, as the
    original statement did.
    """
    def plain(match: re.Match) -> str:
        indent, sub, alias = match.group(1), match.group(2) or "", match.group(3) or ""
        if alias:
            return f"{indent}import {package}{sub}{alias}"
        if sub:
            return f"{indent}import {package}{sub}\n{indent}import {package} as lib"
        return f"{indent}import {package} as lib"

    code = _IMPORT_LIB.sub(plain, code)
    return _FROM_LIB.sub(lambda m: f"{m.group(1)}from {package}{m.group(2) or ''} import", code)


def configured_url(app: Sphinx) -> str:
    """``repository.url`` of ``_config.yml`` (empty when unset or left at Jupyter Book's default)."""
    url = str(app.config.html_theme_options.get("repository_url") or "").strip().rstrip("/")
    return "" if url == JUPYTER_BOOK_DEFAULT else url


def clone_url(app: Sphinx) -> str:
    """The address for ``git clone``: the configured URL, a network origin remote, or ``""``."""
    url = configured_url(app)
    if url:
        return url
    root = Path(app.confdir)
    try:
        origin = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"],
                                capture_output=True, text=True, timeout=10)
        remote = origin.stdout.strip() if origin.returncode == 0 else ""
        if NETWORK_ADDRESS.match(remote):
            return remote
    except (OSError, subprocess.SubprocessError):
        pass
    return ""


def clone_folder(url: str) -> str:
    """The folder ``git clone URL`` creates: the last path component without ``.git``."""
    name = re.split(r"[/:]", url.rstrip("/"))[-1]
    return name[:-4] if name.endswith(".git") else name


def gate_buttons(app: Sphinx, config) -> None:
    """Turn the repository and launch buttons on only when ``repository.url`` is set."""
    options = config.html_theme_options
    url = configured_url(app)
    if url:
        options["repository_url"] = url
        for key in REPOSITORY_BUTTONS:
            options[key] = True
    else:
        for key in REPOSITORY_BUTTONS + ("use_edit_page_button",):
            options[key] = False
        launch = dict(options.get("launch_buttons") or {})
        for key in LAUNCH_KEYS:
            if key in launch:
                launch[key] = ""
        launch["thebe"] = False
        options["launch_buttons"] = launch
    url_for_clone = clone_url(app)
    if url_for_clone:
        links = {"url": url_for_clone, "folder": clone_folder(url_for_clone), "note": ""}
    else:
        links = {"url": PLACEHOLDER_URL, "folder": PLACEHOLDER_FOLDER, "note": MISSING_URL_NOTE}
    app.book_links = links  # type: ignore[attr-defined]


def fill_tokens(app: Sphinx, docname: str, source: list[str]) -> None:
    """Replace the clone-command tokens in a page's source (code blocks included)."""
    text = source[0]
    if URL_TOKEN in text or FOLDER_TOKEN in text or NOTE_TOKEN in text:
        links = app.book_links  # type: ignore[attr-defined]
        source[0] = (text.replace(URL_TOKEN, links["url"]).replace(FOLDER_TOKEN, links["folder"])
                     .replace(NOTE_TOKEN, links["note"]))


def _markdown_twin(app: Sphinx, pagename: str) -> Path | None:
    """``notebooks/NN_name.md`` when the page is rendered from its paired ``.ipynb``."""
    source = Path(app.confdir) / f"{pagename}.ipynb"
    twin = source.with_suffix(".md")
    return twin if source.exists() and twin.exists() else None


def add_markdown_download(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Offer the ``.md`` source in the download menu, right after the ``.ipynb``."""
    if app.builder.name != "html" or _markdown_twin(app, pagename) is None:
        return
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            entries = button["buttons"]
            position = next((i + 1 for i, entry in enumerate(entries)
                             if entry.get("label") == "download-source-button"), len(entries))
            entries.insert(position, {
                "type": "link",
                "url": f"{context['pathto']('_sources', 1)}/{pagename}.md",
                "text": ".md",
                "tooltip": "Download the MyST source (JupyterLab with jupytext opens it as a notebook)",
                "icon": "fas fa-file-lines",
                "label": "download-myst-button",
            })
            return


def write_downloads(app: Sphinx, exception) -> None:
    """After the build: ``_sources/`` gets each chapter's ``.md``; both files get the note, and
    their imports of ``lib`` name the package the wheel installs."""
    if exception is not None or app.builder.name != "html":
        return
    links = app.book_links  # type: ignore[attr-defined]
    release = app.book_release  # type: ignore[attr-defined]
    from book_release import PACKAGE

    sources = Path(app.outdir) / "_sources"
    for docname in sorted(app.env.found_docs):
        twin = _markdown_twin(app, docname)
        if twin is None:
            continue
        number = str(int(Path(docname).name.split("_", 1)[0]))
        note = NOTE.format(number=number, title=app.config.html_title or app.config.project,
                           wheel=release["wheel"], package=PACKAGE, archive=release["archive"],
                           url=links["url"], folder=links["folder"],
                           note=" " + links["note"] if links["note"] else "")
        notebook_copy = sources / f"{docname}.ipynb"
        if notebook_copy.exists():
            notebook = json.loads(notebook_copy.read_text(encoding="utf-8"))
            cells = notebook["cells"]
            for cell in cells:
                if cell["cell_type"] == "code":
                    code = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                    cell["source"] = installed_imports(code, PACKAGE)
            if not (cells and cells[0].get("metadata", {}).get("book_links") == "note"):
                cell = {"cell_type": "markdown", "metadata": {"book_links": "note"},
                        "source": note.splitlines(keepends=True)}
                if (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) >= (4, 5):
                    cell["id"] = "what-this-chapter-needs"
                cells.insert(0, cell)
            notebook_copy.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
        text = installed_imports(twin.read_text(encoding="utf-8"), PACKAGE)
        front = re.match(r"---\n.*?\n---\n", text, re.S)
        cut = front.end() if front else 0
        markdown_copy = sources / f"{docname}.md"
        markdown_copy.parent.mkdir(parents=True, exist_ok=True)
        markdown_copy.write_text(text[:cut] + "\n" + note + "\n\n" + text[cut:].lstrip("\n"),
                                 encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", gate_buttons)
    app.connect("source-read", fill_tokens)
    app.connect("html-page-context", add_markdown_download, priority=502)
    app.connect("build-finished", write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
