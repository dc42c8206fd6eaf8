"""Sphinx extension: two fixes to the pinned Jupyter Book 1 toolchain (see requirements.txt).

Loaded by ``_config.yml`` (``sphinx: local_extensions: {book_build: tools/}``).

1. **Folded code cells in the single-page build** (``make pdf``). Sphinx looks up the visitors of
   extension nodes per builder: when any extension registers a visitor for the builder's own
   name, ``SphinxComponentRegistry.create_translator`` uses that builder's table *only* and never
   falls back to the ``html`` table. sphinx-exercise 1.2.1 registers its nodes with
   ``singlehtml=(visit, depart)``, so under ``--builder singlehtml`` every node that another
   extension registered for ``html`` alone has no visitor: myst-nb's ``HideCodeCellNode`` (the
   ``<details>`` of a ``hide-input`` cell) is the first one met, and the build warns "unknown
   node type" (fatal under ``-W``). :func:`share_html_visitors` copies every ``html`` visitor
   missing from the table of an HTML-format builder (``singlehtml``, ``dirhtml``, ...) into it,
   which is what Sphinx does anyway when that table does not exist.

2. **No book numbers on figures and tables.** The book names the paper's numbers in its captions
   ("Figure 4 of the paper"; labels ``paper-fig-4``), so a book number ("Fig. 7.1") beside them
   competes. ``numfig: false`` in ``_config.yml`` is not enough: sphinx-exercise (and
   sphinx-proof) set ``numfig = True`` on ``config-inited`` to number their directives. Instead
   of turning numbering off, which would leave exercises without numbers, :func:`drop_numbers`
   removes the numbers Sphinx assigned to figures, tables and code blocks (``env.toc_fignumbers``,
   recomputed on every build by the ``env-get-updated`` event) right after Sphinx assigned them;
   the HTML writer then prints no ``caption-number`` for them, while exercises, theorems and the
   like keep whatever numbers their directives ask for. A ``{numref}`` to a figure or table
   would now warn (no number assigned): refer to figures with ``{ref}`` or the paper's label.

3. **Figures keep their proportions at every width.** myst-nb gives each image output the
   ``width`` and ``height`` its notebook metadata records (matplotlib's size in CSS pixels), and
   Sphinx writes both into the ``style`` attribute of the ``<img>``, where they override the
   stylesheet's ``height: auto``: on a phone the width shrinks with the column (``max-width:
   100%``) and the height does not. :func:`free_heights` drops the height of every image that
   has a width, so that the browser derives it from the picture's own aspect ratio; the width
   still caps a figure at its intended size on a wide screen (``tests/book/test_browser.py``
   checks the ratio at 390 and 1280 px).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

#: The enumerable kinds whose book numbers are removed (Sphinx's built-in figure types).
UNNUMBERED = ("figure", "table", "code-block")


def share_html_visitors(app: Sphinx) -> None:
    """Give an HTML-format builder with its own visitor table the ``html`` visitors it lacks."""
    builder = app.builder
    if builder.format != "html" or builder.name == "html":
        return
    handlers = app.registry.translation_handlers
    own = handlers.get(builder.name)
    if own is None:  # Sphinx falls back to the html table by itself
        return
    for node_name, visitors in handlers.get("html", {}).items():
        own.setdefault(node_name, visitors)


def drop_numbers(app: Sphinx, env) -> list[str]:
    """Forget the book numbers of figures, tables and code blocks (after Sphinx assigned them)."""
    for numbers in env.toc_fignumbers.values():
        for kind in UNNUMBERED:
            numbers.pop(kind, None)
    return []


def free_heights(app: Sphinx, doctree, docname: str) -> None:
    """Remove the fixed height of every image that also has a width (its aspect ratio decides)."""
    for image in doctree.findall(nodes.image):
        if "width" in image.attributes and "height" in image.attributes:
            del image["height"]


def setup(app: Sphinx) -> dict:
    # Late (priority 900): after every extension's setup() registered its nodes.
    app.connect("builder-inited", share_html_visitors, priority=900)
    # Late (priority 900): after Sphinx's TocTreeCollector (priority 500) assigned the numbers.
    app.connect("env-get-updated", drop_numbers, priority=900)
    app.connect("doctree-resolved", free_heights)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
