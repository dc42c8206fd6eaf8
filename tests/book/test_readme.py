"""Every ```python block of README.md runs.

The blocks of one ``##`` section run in order in one namespace (a later block may use an earlier
one's names). A section that reads the UCI files follows the suite's data rule
(``tests/conftest.py``); one that imports an optional extra that is not installed is skipped,
with the reason.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.conftest import data_available

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: Optional libraries a README block may import (the extras of pyproject.toml).
OPTIONAL = ("dp_accounting", "opendp", "sklearn", "duckdb", "pyarrow")


def sections():
    """``(heading, [code of each python block])`` of every ``##`` section with python blocks."""
    found = []
    for part in re.split(r"^## ", README.read_text(encoding="utf-8"), flags=re.M)[1:]:
        heading = part.splitlines()[0].strip()
        blocks = BLOCK.findall(part)
        if blocks:
            found.append((heading, blocks))
    return found


SECTIONS = sections()


def test_every_python_block_is_in_a_section_and_the_bridges_are_shown():
    assert sum(len(b) for _, b in SECTIONS) == len(BLOCK.findall(README.read_text(encoding="utf-8")))
    code = "\n".join(c for _, blocks in SECTIONS for c in blocks)
    assert "lib.interop.dp_accounting" in code and "lib.interop.opendp" in code


@pytest.mark.parametrize("heading, blocks", SECTIONS, ids=[h for h, _ in SECTIONS])
def test_readme_python_blocks_run(heading, blocks, capsys):
    code = "\n".join(blocks)
    if "prepare(" in code and not data_available():
        pytest.skip("the section reads the UCI files (see tests/conftest.py)")
    for module in OPTIONAL:
        if re.search(rf"^\s*(import|from) {module}\b", code, re.M) and importlib.util.find_spec(module) is None:
            pytest.skip(f"the section imports {module}, an optional extra that is not installed")
    namespace = {"__name__": "__readme__"}
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md, {heading}, python block {i}", "exec"), namespace)
