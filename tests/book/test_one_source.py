"""One source for every verdict, over every paper of the index.

A verdict on an item of a paper is stated in one place: either the paper index types it
(``book/paper_index.yml``: holds, typo, proof gap, definition, regenerated) or the item's
chapter computes it and glues it under the item's label (``verdict: glue``). These tests check
that the chapters, the registries and the generated paper index agree:

(i)   a chapter glues a value under an index label only for an item whose verdict is ``glue``
      and whose chapter it is, the value is one of the glued verdicts, and the paper index shows
      exactly that value (a typed item shows its typed verdict);
(ii)  every finding of ``book/findings.yml`` is linked to at least one index item (the item's
      ``findings:`` list);
(iii) no item shows "holds" (on the paper index or as a value its chapter glues) while a finding
      linked to it has kind "claim does not hold" or "error in a proof".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "book"))
import make_book_pages as pages  # noqa: E402

NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
# Kinds of finding that contradict a verdict "holds" on the item they are linked to.
CONTRADICTING = ("claim does not hold", "error in a proof")
# A row of the generated paper index: | {ref}`<item> <label>`: ... | **verdict** | ch. |
ROW = re.compile(r"^\| \{ref\}`[^`]*<(?P<label>[a-z0-9-]+)>`.*\| \*\*(?P<verdict>[^*]+)\*\* \| [^|]+ \|$")


@pytest.fixture(scope="module")
def items() -> dict[str, dict]:
    return {item["label"]: item for item in pages.index_items()}


@pytest.fixture(scope="module")
def findings() -> dict[str, dict]:
    return {f["id"]: f for f in pages.load_findings()["findings"]}


@pytest.fixture(scope="module")
def glued() -> dict[str, dict[str, object]]:
    """Every chapter's glued values, by chapter (its source path without extension)."""
    out = {}
    for path in NOTEBOOKS:
        chapter = f"notebooks/{path.stem}"
        out[chapter] = pages.glued_values(chapter)
    return out


@pytest.fixture(scope="module")
def shown() -> dict[str, str]:
    """The verdict the committed paper index shows for each label."""
    rows = {}
    for line in pages.INDEX_PAGE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows[m["label"]] = m["verdict"]
    return rows


def test_fixtures_read_the_book(items, glued, shown):
    """Not vacuous: the index, the chapters' glue and the page's rows were all read."""
    assert len(items) > 150 and len(glued) >= 15
    assert sum(1 for item in items.values() if item["verdict"] == "glue") > 20
    assert set(shown) == set(items), "the paper index page lists other items than the registry"


def test_glued_verdicts_come_from_one_source(items, glued, shown):
    """(i) A chapter glues under an index label only when the index says `verdict: glue` for
    that item and chapter; the page shows the glued value (and a typed item its typed verdict)."""
    problems = []
    for chapter, values in glued.items():
        for key, value in values.items():
            item = items.get(key)
            if item is None:
                continue
            if item["verdict"] != "glue":
                problems.append(f"{key}: {chapter} glues {value!r} but the index types "
                                f"{item['verdict']!r}")
            elif item["chapter"] != chapter:
                problems.append(f"{key}: glued by {chapter}, an item of {item['chapter']}")
    for label, item in items.items():
        if item["verdict"] == "glue":
            value = glued.get(item["chapter"], {}).get(label)
            if value not in pages.GLUED_VERDICTS:
                problems.append(f"{label}: {item['chapter']} glues {value!r}, not one of "
                                f"{pages.GLUED_VERDICTS}")
                continue
            expected = value
        else:
            expected = item["verdict"]
        if shown.get(label) != expected:
            problems.append(f"{label}: the paper index shows {shown.get(label)!r}, its one "
                            f"source says {expected!r}")
    assert not problems, "\n".join(problems)


def test_chapters_name_the_verdict_the_index_shows(items, shown):
    """(i, continued) A chapter that names an item's verdict in words ({ref}`holds <label>`)
    names the one the paper index shows."""
    problems = []
    verdict_words = set(pages.GLUED_VERDICTS) | set(pages.TYPED_VERDICTS) | {"glue"}
    for path in sorted(ROOT.glob("notebooks/[0-9][0-9]_*.md")):
        text = path.read_text(encoding="utf-8")
        for word, label in re.findall(r"\{ref\}`([a-z ,]+?) <([a-z0-9-]+)>`", text):
            if label in items and word in verdict_words and shown.get(label) != word:
                problems.append(f"{path.name}: {{ref}}`{word} <{label}>` but the paper index "
                                f"shows {shown.get(label)!r}")
    assert not problems, "\n".join(problems)


def test_every_finding_is_linked_to_an_item(items, findings):
    """(ii) Each finding is listed under at least one item of the index."""
    linked = {fid for item in items.values() for fid in item.get("findings", [])}
    unknown = sorted(linked - set(findings))
    unlinked = sorted(set(findings) - linked)
    assert not unknown, f"items list findings that do not exist: {unknown}"
    assert not unlinked, ("findings linked to no index item (add each id to the `findings:` "
                          f"list of the item it concerns): {unlinked}")


def test_no_item_shows_holds_against_its_findings(items, findings, glued, shown):
    """(iii) An item whose linked finding says the claim does not hold or a proof does not
    follow shows no "holds": not on the paper index, not as a value its chapter glues."""
    clash = []
    for label, item in items.items():
        bad = [fid for fid in item.get("findings", [])
               if findings.get(fid, {}).get("kind") in CONTRADICTING]
        if not bad:
            continue
        displayed = {shown.get(label), item["verdict"],
                     glued.get(item["chapter"], {}).get(label)}
        if "holds" in displayed:
            clash.append(f"{label} shows 'holds' with {', '.join(bad)} "
                         f"({', '.join(findings[f]['kind'] for f in bad)})")
    assert not clash, "\n".join(clash)

