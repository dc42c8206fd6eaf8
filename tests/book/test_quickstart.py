"""Every ```python block of the practitioners' quick start (book/quickstart.md) runs, in order,
in one namespace, and the page links to it from the landing page and the API index."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "quickstart.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_the_four_tasks_run_in_order(capsys):
    text = PAGE.read_text(encoding="utf-8")
    tasks = re.findall(r"^## (\d)\. ", text, re.M)
    blocks = BLOCK.findall(text)
    assert tasks == ["1", "2", "3", "4"] and len(blocks) == 4
    namespace = {"__name__": "__quickstart__"}
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"book/quickstart.md, task {i}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "ApproximateDP" in printed and "test accuracy" in printed and "left" in printed
    assert printed.count("mean KL loss") == 3


def test_the_quick_start_is_linked_where_practitioners_look():
    for page in ("intro.md", "api/index.md"):
        assert re.search(r"\{doc\}`[^`]*quickstart>?`", (ROOT / "book" / page).read_text()), page
    assert "file: book/quickstart" in (ROOT / "_toc.yml").read_text()
