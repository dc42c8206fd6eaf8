"""The book's registries against its chapters: findings, errata page, paper index.

- Every finding a chapter marks (a `(finding-<id>)=` target followed by a
  ``{admonition} Finding: <title>`` of class ``finding`` whose text opens with its kind) is in
  ``book/findings.yml`` with the same chapter, title and kind, and every registry entry is marked
  in its chapter.
- ``book/errata.md`` and ``book/paper_index.md`` are exactly what ``tools/make_book_pages.py``
  generates from the registries and the executed chapters.
- Every paper item's target is in its chapter (source and executed notebook), and its verdict
  is earned: a glued verdict exists in the executed chapter, a "holds" has an asserting cell in
  its section, a "typo" or "proof gap" names a finding of that kind.
- No heading, admonition title or figure caption of a chapter gives the paper's items a second,
  book-made number (numbered proof directives, Sphinx figure numbers).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_book_pages as pages  # noqa: E402

CHAPTERS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.md"))
TOC = (ROOT / "_toc.yml").read_text(encoding="utf-8")
# Chapters in the table of contents: the ones the book builds (others are work in progress).
BUILT = [p for p in CHAPTERS if f"file: notebooks/{p.stem}\n" in TOC + "\n"]

FINDING = re.compile(
    r"^\(finding-(?P<id>[a-z0-9-]+)\)=\n"
    r"```\{admonition\} Finding: (?P<title>[^\n]+)\n"
    r":class: finding\n\n?"
    r"(?P<body>.*?)^```$",
    re.S | re.M)


def _findings_in(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FINDING.finditer(text):
        body = " ".join(m["body"].split())
        kind = next((k for k in pages.KINDS if body.lower().startswith(k + ".")), None)
        found.append({"id": m["id"], "title": m["title"], "kind": kind,
                      "chapter": f"notebooks/{path.stem}"})
    return found


@pytest.fixture(scope="module")
def registry() -> dict:
    return pages.load_findings()


@pytest.fixture(scope="module")
def index() -> dict:
    return pages.load_index()


def test_registry_entries_are_complete(registry):
    built = {f"notebooks/{p.stem}" for p in BUILT}
    ids = [f["id"] for f in registry["findings"]]
    assert len(ids) == len(set(ids)), "duplicate finding ids"
    assert set(registry["kinds"]) == set(pages.KINDS)
    for f in registry["findings"]:
        assert set(f) >= {"id", "chapter", "where", "kind", "title", "effect"}, f["id"]
        assert f["kind"] in pages.KINDS, f
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", f["id"]), f["id"]
        assert (ROOT / f"{f['chapter']}.md").exists(), f
        assert f["chapter"] in built, f"{f['id']}: {f['chapter']} is not in _toc.yml yet"


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.stem)
def test_every_finding_admonition_is_labelled_and_opens_with_its_kind(path):
    text = path.read_text(encoding="utf-8")
    titled = len(re.findall(r"^```\{admonition\} Finding:", text, re.M))
    classed = len(re.findall(r"^:class: finding$", text, re.M))
    marked = _findings_in(path)
    assert titled == classed == len(marked), (
        f"{path.name}: {titled} 'Finding:' admonitions, {classed} of class finding, "
        f"{len(marked)} with a (finding-<id>)= target right before them")
    for f in marked:
        assert f["kind"] is not None, (
            f"{path.name}: finding {f['id']} must open with its kind, one of {pages.KINDS}")


def test_chapters_and_registry_list_the_same_findings(registry):
    in_chapters = {f["id"]: f for path in CHAPTERS for f in _findings_in(path)}
    in_registry = {f["id"]: f for f in registry["findings"]}
    missing = sorted(set(in_chapters) - set(in_registry))
    orphans = sorted(set(in_registry) - set(in_chapters))
    assert not missing, f"marked in a chapter but not in book/findings.yml: {missing}"
    assert not orphans, f"in book/findings.yml but marked in no chapter: {orphans}"
    for fid, f in in_chapters.items():
        entry = in_registry[fid]
        for key in ("chapter", "title", "kind"):
            assert f[key] == entry[key], f"finding {fid}: {key} {f[key]!r} != {entry[key]!r}"


def test_generated_pages_are_up_to_date():
    for path, text in pages.pages().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} is out of date: run python tools/make_book_pages.py")


def test_errata_lists_every_finding_once(registry):
    page = pages.ERRATA_PAGE.read_text(encoding="utf-8")
    for f in registry["findings"]:
        assert page.count(f"<finding-{f['id']}>") == 1, f["id"]


def _sections(path: Path) -> dict[str, str]:
    """For each paper target of a chapter, its source from the target to the next heading of
    the same or a higher level than the heading that follows the target."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = {}
    for i, line in enumerate(lines):
        m = re.fullmatch(r"\((paper-[a-z0-9-]+)\)=", line)
        if not m:
            continue
        j = i
        while j < len(lines) and re.fullmatch(r"\(.*\)=", lines[j]):
            j += 1
        level = len(lines[j]) - len(lines[j].lstrip("#")) if lines[j].startswith("#") else 6
        end = next((k for k in range(j + 1, len(lines))
                    if lines[k].startswith("#") and not lines[k].startswith("#!")
                    and len(lines[k]) - len(lines[k].lstrip("#")) <= level
                    and not _in_code(lines, k)), len(lines))
        out[m[1]] = "\n".join(lines[j:end])
    return out


def _in_code(lines: list[str], k: int) -> bool:
    fences = sum(1 for line in lines[:k] if line.startswith("```"))
    return fences % 2 == 1


def _code_cells(section: str) -> list[str]:
    return re.findall(r"```\{code-cell\}[^\n]*\n(.*?)^```$", section, re.S | re.M)


def test_paper_index_items(index, registry):
    labels = [item["label"] for item in pages.index_items()]
    assert len(labels) == len(set(labels)), "duplicate paper labels"
    kinds = {f["id"]: f["kind"] for f in registry["findings"]}
    sections = {p.stem: _sections(p) for p in CHAPTERS}
    problems = []
    for item in pages.index_items():
        label, chapter = item["label"], item["chapter"]
        if not re.fullmatch(r"paper-(eq-\d+|def-\d+-\d+|lem-\d+|thm-\d+|prop-\d+|rem-\d+|alg-1"
                            r"|fig-\d+(-bottom)?|tab-1|app-[a-f]|claim-[a-z0-9-]+)", label):
            problems.append(f"{label}: not in the label scheme")
        section = sections[chapter.split("/")[-1]].get(label)
        if section is None:
            problems.append(f"{label}: no ({label})= target in {chapter}.md")
            continue
        if f"({label})=" not in (ROOT / f"{chapter}.ipynb").read_text(encoding="utf-8"):
            problems.append(f"{label}: {chapter}.ipynb is stale (jupytext --update)")
        problems += [f"{label}: unknown finding {fid}" for fid in item.get("findings", [])
                     if fid not in kinds]
        verdict = item["verdict"]
        if verdict == "glue":
            value = pages.glued_values(chapter).get(label)
            if value not in pages.GLUED_VERDICTS:
                problems.append(f"{label}: {chapter} glues {value!r}")
            if not re.search(rf"glue\(\"{label}\"", (ROOT / f"{chapter}.md").read_text()):
                problems.append(f"{label}: no glue call in {chapter}.md")
            continue
        if verdict not in pages.TYPED_VERDICTS:
            problems.append(f"{label}: verdict {verdict!r}")
        cells = _code_cells(section)
        if verdict == "holds" and not any(re.search(r"^\s*assert\b", c, re.M) for c in cells):
            problems.append(f"{label} (holds): no asserting cell in its section of {chapter}")
        elif verdict == "regenerated" and not cells:
            problems.append(f"{label} (regenerated): no cell in its section of {chapter}")
        elif verdict == "typo" and not any(kinds.get(f) == "typo" for f in item.get("findings", [])):
            problems.append(f"{label} (typo): no finding of kind typo")
        elif verdict == "proof gap" and not any(
                kinds.get(f) == "error in a proof" for f in item.get("findings", [])):
            problems.append(f"{label} (proof gap): no finding of kind error in a proof")
    assert not problems, "\n".join(problems)


def test_every_numbered_item_of_the_paper_is_indexed(index):
    labels = {item["label"] for item in pages.index_items()}
    expected = ({f"paper-eq-{n}" for n in range(1, 23)}
                | {"paper-def-2-1", "paper-def-2-2", "paper-def-2-3", "paper-lem-1",
                   "paper-lem-2", "paper-lem-3", "paper-thm-1", "paper-thm-2", "paper-prop-3",
                   "paper-rem-1", "paper-rem-2", "paper-alg-1", "paper-tab-1"}
                | {f"paper-fig-{n}" for n in range(1, 12)}
                | {f"paper-app-{x}" for x in "abcdef"})
    assert not expected - labels, f"not indexed: {sorted(expected - labels)}"


def test_paper_labels_are_defined_once_in_the_book():
    seen: dict[str, str] = {}
    for path in CHAPTERS:
        for label in re.findall(r"^\((paper-[a-z0-9-]+)\)=$", path.read_text(), re.M):
            assert label not in seen, f"{label} in {seen.get(label)} and {path.name}"
            seen[label] = path.name


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.stem)
def test_no_book_numbers_compete_with_the_papers(path):
    text = path.read_text(encoding="utf-8")
    for m in re.finditer(r"^```\{prf:(?!proof)[a-z]+\}[^\n]*\n((?::[^\n]*\n)*)", text, re.M):
        assert ":nonumber:" in m[1], f"{path.name}: numbered directive {m[0].splitlines()[0]}"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert config.get("numfig") is False and config.get("math_numfig") is False
    assert "numbered: true" not in TOC


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.stem)
def test_no_reference_points_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert "ORIGINAL_CODE_NOTES" not in text and "../shared" not in text


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.stem)
def test_titles_have_no_latex(path):
    """A chapter's title reaches the sidebar, the tab, the chapter map and search results as text."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("#") and not _in_code(lines, k):
            if line.startswith("# "):
                assert "$" not in line and "\\" not in line, f"{path.name}: {line}"


def test_notebook_glue_values_are_strings_of_verdicts(index):
    for item in pages.index_items():
        if item["verdict"] == "glue":
            nb = json.loads((ROOT / f"{item['chapter']}.ipynb").read_text())
            outputs = [o for c in nb["cells"] for o in c.get("outputs", [])
                       if o.get("metadata", {}).get("scrapbook", {}).get("name") == item["label"]]
            assert len(outputs) == 1, f"{item['label']} glued {len(outputs)} times"
