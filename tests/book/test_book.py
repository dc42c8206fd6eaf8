"""The book's registries against its chapters: findings, errata page, paper index.

- Every finding a chapter marks (a `(finding-<id>)=` target followed by a
  ``{admonition} Finding: <title>`` of class ``finding`` whose text opens with its kind) is in
  ``book/findings.yml`` with the same chapter, title and kind, and every registry entry is marked
  in its chapter.
- ``book/errata.md`` and ``book/paper_index.md`` are exactly what ``tools/book/make_book_pages.py``
  generates from the registries and the executed chapters.
- Every paper item's target is in its chapter (source and executed notebook), and its verdict
  is earned: a glued verdict exists in the executed chapter, a "holds" has an asserting cell in
  its section, a "typo" or "proof gap" names a finding of that kind.
- No heading, admonition title or figure caption of a chapter gives the paper's items a second,
  book-made number (numbered proof directives, Sphinx figure numbers).
- Issue 28: every label belongs to a paper of the index and follows that paper's scheme, every
  numbered item of each related paper is indexed, no verdict contradicts the kind of its
  findings, the index's rows are short enough for a phone, the errata are sorted by
  consequence, the landing page opens with the two-minute answer, the API pages list every
  public name of lib, and every chapter's opening box states its verdicts, objectives,
  prerequisites and the reading time of tools/book/reading_time.py.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "book"))
import make_book_pages as pages  # noqa: E402

CHAPTERS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.md"))
TOC = (ROOT / "_toc.yml").read_text(encoding="utf-8")
# Chapters in the table of contents: the ones the book builds (others are work in progress).
BUILT = [p for p in CHAPTERS if f"file: notebooks/{p.stem}\n" in TOC + "\n"]

# The papers of the index, by the prefix of their labels (book/paper_index.yml, `papers:`), and
# the label scheme of each: the main paper's own, and one scheme for the related papers
# (numbers' dots become hyphens: Definition 2.3 -> zc-def-2-3).
PREFIXES = ("paper", "geumlek", "hellinger", "zc")
_RELATED = r"-((def|thm|lem|cor|alg|asm|fig|tab|eq)-\d+(-\d+)*|claim-[a-z0-9]+(-[a-z0-9]+)*)"
LABEL_SCHEMES = {
    "paper": r"paper-(eq-\d+|def-\d+-\d+|lem-\d+|thm-\d+|prop-\d+|rem-\d+|alg-1"
             r"|fig-\d+(-bottom)?|tab-1|app-[a-f]|claim-[a-z0-9-]+)",
    **{prefix: prefix + _RELATED for prefix in ("geumlek", "hellinger", "zc")},
}

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
            f"{path.name} is out of date: run python tools/book/make_book_pages.py")


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
        m = re.fullmatch(r"\(((?:%s)-[a-z0-9-]+)\)=" % "|".join(PREFIXES), line)
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
        scheme = LABEL_SCHEMES.get(pages.paper_of(label))
        if scheme is None or not re.fullmatch(scheme, label):
            problems.append(f"{label}: not in the label scheme of its paper")
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
        for label in re.findall(r"^\(((?:%s)-[a-z0-9-]+)\)=$" % "|".join(PREFIXES),
                                path.read_text(), re.M):
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


# ---------------------------------------------------------------------------------------------
# Issue 28: the papers of the index, the landing page's two-minute answer, the errata's order,
# the API reference and the chapters' opening boxes.

# Every numbered item of each related paper, read from the papers themselves
# (/work/shared/papers/*; numbers' dots become hyphens). Geumlek, Song and Chaudhuri (NeurIPS
# 2017): Definitions 1-11, Theorems 12-17 (one counter with the definitions), Corollaries 1-2,
# Algorithms 1-5, Assumption 1, Figures 1-3, equations (1)-(6). The smoothed-Hellinger note:
# Definitions 1.1, 1.2, 2.1, Lemmas 3.1-3.3, equations (1)-(2). Zafarani and Clifton (2020):
# Definitions 2.1-2.5, 3.1-3.5, 4.1-4.3, Theorems 1-10, Corollary 5.1, Algorithm 1, Figures 1-16,
# Table 1 (their text numbers no equations).
RELATED_ITEMS = {
    "geumlek": ({f"geumlek-def-{n}" for n in range(1, 12)}
                | {f"geumlek-thm-{n}" for n in range(12, 18)}
                | {"geumlek-cor-1", "geumlek-cor-2", "geumlek-asm-1"}
                | {f"geumlek-alg-{n}" for n in range(1, 6)}
                | {f"geumlek-fig-{n}" for n in range(1, 4)}
                | {f"geumlek-eq-{n}" for n in range(1, 7)}),
    "hellinger": {"hellinger-def-1-1", "hellinger-def-1-2", "hellinger-def-2-1",
                  "hellinger-lem-3-1", "hellinger-lem-3-2", "hellinger-lem-3-3",
                  "hellinger-eq-1", "hellinger-eq-2"},
    "zc": ({f"zc-def-2-{n}" for n in range(1, 6)} | {f"zc-def-3-{n}" for n in range(1, 6)}
           | {f"zc-def-4-{n}" for n in range(1, 4)} | {f"zc-thm-{n}" for n in range(1, 11)}
           | {"zc-cor-5-1", "zc-alg-1", "zc-tab-1"} | {f"zc-fig-{n}" for n in range(1, 17)}),
}


def test_every_item_belongs_to_a_paper_with_a_title(index):
    """Each label's prefix names a paper of the index (`papers:`), whose title the page shows."""
    papers = pages.papers(index)
    assert list(papers)[0] == "paper"
    assert set(papers) <= set(PREFIXES), f"a paper without a label scheme: {set(papers) - set(PREFIXES)}"
    for prefix, paper in papers.items():
        assert paper["title"].strip(), prefix
        if paper.get("cite"):
            assert f"{{{paper['cite']}," in (ROOT / "book" / "references.bib").read_text(), \
                f"{prefix}: citation key {paper['cite']} is not in book/references.bib"
    unknown = [i["label"] for i in pages.index_items() if pages.paper_of(i["label"]) not in papers]
    assert not unknown, f"items of no paper listed under `papers:`: {unknown}"


@pytest.mark.parametrize("prefix", sorted(RELATED_ITEMS))
def test_every_numbered_item_of_each_related_paper_is_indexed(index, prefix):
    """Fails until the lead merges the related papers' fragments into book/paper_index.yml."""
    labels = {item["label"] for item in pages.index_items()}
    missing = sorted(RELATED_ITEMS[prefix] - labels)
    assert prefix in pages.papers(index), f"book/paper_index.yml lists no paper {prefix!r} under `papers:`"
    assert not missing, f"not indexed: {missing}"


def test_verdicts_agree_with_the_kinds_of_their_findings(index, registry):
    """No row reads "holds" beside a finding that says the claim does not hold, or a proof error."""
    kinds = {f["id"]: f["kind"] for f in registry["findings"]}
    cache: dict = {}
    clash = [(item["label"], fid) for item in pages.index_items()
             for fid in item.get("findings", [])
             if pages.verdict_of(item, cache) == "holds"
             and kinds[fid] in ("claim does not hold", "error in a proof")]
    assert not clash, f"verdict holds, finding says otherwise: {clash}"


def test_paper_index_rows_are_short():
    """Three columns (item, verdict, chapter number), so that the verdict fits a phone's screen."""
    rows = [line for line in pages.INDEX_PAGE.read_text().splitlines()
            if line.startswith("| {ref}")]
    assert len(rows) == len(pages.index_items())
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 3, row
        assert re.fullmatch(r"\*\*[a-z ,]+\*\*", cells[1]), row
        assert re.fullmatch(r"\{doc\}`ch\.\u00a0\d\d <\.\./notebooks/\d\d_[a-z0-9_]+>`", cells[2]), row


def test_the_headline_failures_still_fail(registry):
    """The landing page names three failures of consequence; a change of verdict forces a new choice."""
    kinds = {f["id"]: f["kind"] for f in registry["findings"]}
    items = {item["label"]: item for item in pages.index_items()}
    cache: dict = {}
    assert len(pages.HEADLINE_ITEMS) == 3
    for label in pages.HEADLINE_ITEMS:
        item = items[label]
        assert pages.verdict_of(item, cache) in ("partly", "does not hold", "proof gap"), label
        assert any(kinds[f] in ("claim does not hold", "error in a proof")
                   for f in item.get("findings", [])), label
    assert pages.verdict_of(items[pages.MAIN_RESULT], cache) in pages.GLUED_VERDICTS + pages.TYPED_VERDICTS


def test_errata_are_grouped_by_paper_then_sorted_by_consequence(registry):
    """One section per paper (the main paper first), in each the kinds by consequence, every
    finding once, under the paper its index items belong to; the book's own results last, in a
    section of their own grouped by paper; no repository path or maintainer instruction on the
    reader's page."""
    page = pages.ERRATA_PAGE.read_text()
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    titles = [re.match(r"(.+) \((\d+)\)\n", sec) for sec in sections]
    results_heading = pages.KIND_HEADINGS[pages.RESULT]
    results = [sec for sec, t in zip(sections, titles) if t[1] == results_heading]
    papers = list(pages.papers().values())
    paper_sections = [(sec, t) for sec, t in zip(sections, titles) if t[1] != results_heading]
    assert paper_sections[0][1][1].startswith(papers[0]["title"])
    order = [next(i for i, p in enumerate(papers) if t[1].startswith(p["title"]))
             for _, t in paper_sections]
    assert order == sorted(order)
    total = 0
    for section, title in paper_sections:
        kinds = re.findall(r"^### (.+) \((\d+)\)$", section, re.M)
        wanted = [pages.KIND_HEADINGS[k] for k in pages.KINDS_BY_CONSEQUENCE]
        assert [h for h, _ in kinds] == [h for h in wanted if h in {k for k, _ in kinds}]
        assert sum(int(n) for _, n in kinds) == int(title[2]) == section.count("{ref}`See the finding")
        total += int(title[2])
    n_results = sum(f["kind"] == pages.RESULT for f in registry["findings"])
    if n_results:
        assert len(results) == 1 and titles[-1][1] == results_heading, "results of the book come last"
        by_paper = re.findall(r"^### (.+) \((\d+)\)$", results[0], re.M)
        assert [t for t, _ in by_paper] == [p["title"] for p in papers
                                           if p["title"] in {t for t, _ in by_paper}]
        assert sum(int(n) for _, n in by_paper) == n_results == results[0].count("{ref}`See the finding")
        for f in registry["findings"]:
            if f["kind"] == pages.RESULT:
                assert f"<finding-{f['id']}>" in results[0], f["id"]
    else:
        assert not results
    assert total + n_results == len(registry["findings"])
    index = pages.index_items()
    for f in registry["findings"]:
        prefixes = {pages.paper_of(i["label"]) for i in index if f["id"] in i.get("findings", [])}
        if len(prefixes) == 1 and f["kind"] != pages.RESULT:
            (prefix,) = prefixes
            section = next(sec for sec, t in paper_sections
                           if t[1].startswith(pages.papers()[prefix]["title"]))
            assert f"<finding-{f['id']}>" in section, f"{f['id']} is not under its paper"
    summary = page.split("\n\n")[2]
    assert summary.startswith("**In short.**")
    assert str(len(registry["findings"]) - n_results) in summary
    for reader_page in (pages.ERRATA_PAGE, pages.INDEX_PAGE, pages.VERDICTS_PAGE):
        text = reader_page.read_text().split("-->", 1)[-1]
        assert not re.search(r"shared/papers|findings\.yml|paper_index\.yml|make_book_pages|`paper-eq-", text), reader_page


def test_kinds_and_verdicts_are_defined_for_the_reader(registry):
    """Each kind of finding has a one-line definition; each verdict is explained in the paper
    index's legend and has its own phrase (and count) on the landing page."""
    for kind in pages.KINDS:
        definition = registry["kinds"][kind]
        assert isinstance(definition, str) and "\n" not in definition.strip(), kind
    assert pages.RESULT in pages.KINDS and pages.RESULT not in pages.KINDS_BY_CONSEQUENCE
    assert pages.MEASURED == "holds where measured, not proved"
    assert pages.MEASURED in pages.GLUED_VERDICTS and pages.MEASURED not in pages.TYPED_VERDICTS
    legend = pages.INDEX_PAGE.read_text().split("\n## ", 1)[0]
    for verdict in set(pages.GLUED_VERDICTS) | set(pages.TYPED_VERDICTS):
        assert verdict in pages.VERDICT_ORDER and verdict in pages.VERDICT_PHRASES, verdict
        assert f"*{verdict}*" in legend, f"the paper index's legend does not explain {verdict!r}"
    # the landing page counts each verdict of the main paper on its own line
    summary = pages.VERDICTS_PAGE.read_text()
    shown = re.findall(r"^- \*\*(\d+)\*\* .* \(\*([a-z ,]+)\*\)[;.]$", summary, re.M)
    assert shown and len({v for _, v in shown}) == len(shown)
    assert sum(int(n) for n, _ in shown) == int(re.search(r"The paper's (\d+) items", summary)[1])


def test_landing_page_gives_the_two_minute_answer():
    """The verdict summary (generated) and chapter 14's glued table open the landing page."""
    intro = (ROOT / "book" / "intro.md").read_text()
    first_screens = intro[:intro.index("## How the book checks it")]
    assert "```{include} _generated/verdicts.md" in first_screens
    assert re.search(r"```\{glue\} practitioner-picks\n:doc: \.\./notebooks/14_all_systems\.ipynb",
                     first_screens)
    assert "{doc}`errata`" in first_screens
    assert not re.search(r"\bThe\s+\{doc\}`api", intro), "renders as 'The The lib API page'"
    summary = pages.VERDICTS_PAGE.read_text()
    for label in pages.HEADLINE_ITEMS + (pages.MAIN_RESULT,):
        assert f"<{label}>`" in summary, label
    # Items of a paper and findings are named as two different things, each counted as such.
    assert "**Items** are" in summary and "**Findings** are" in summary
    assert re.search(r"\*\*The paper's \d+ items\.\*\*", summary)
    assert re.search(r"\*\*The findings, across the four papers and the author's code\.\*\* \d+ findings", summary)
    # Every failure that matters, and the book's own practical result, says what to do.
    bullets = [line for line in summary.splitlines() if any(f"<{h}>`" in line for h in pages.HEADLINE_ITEMS)]
    assert len(bullets) == len(pages.HEADLINE_ITEMS) and all("*What to do:*" in b for b in bullets)
    assert not [b for b in bullets if re.search(r"\*\*partly\*\*|\(claim does not hold\)", b)]
    assert f"<finding-{pages.BOOK_RESULT}>`" in summary


# The API reference: every public function and class of every module of lib is on its pages.

def _public_names() -> dict[str, list[str]]:
    import importlib
    import inspect
    import pkgutil

    import lib

    names = {}
    modules = ["lib"] + [m.name for m in pkgutil.walk_packages(lib.__path__, "lib.")
                         if not any(part.startswith("_") for part in m.name.split("."))]
    for name in modules:
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None)
        if public is None:
            public = [n for n, obj in vars(module).items()
                      if not n.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
                      and obj.__module__ == name]
        # a re-exported name is documented where it is defined
        names[name] = [f"{getattr(module, n).__module__}.{n}" if hasattr(getattr(module, n), "__module__")
                       else f"{name}.{n}" for n in public]
    return names


def test_api_pages_document_every_public_name():
    toc = TOC
    api_pages = sorted((ROOT / "book" / "api").glob("*.md"))
    assert len(api_pages) >= 5, "the API reference is split into one page per module group"
    for page in api_pages:
        assert f"file: book/api/{page.stem}\n" in toc, f"{page.name} is not in _toc.yml"
    documented = set(re.findall(r"^\.\. auto(?:function|class|exception|data)::\s+(\S+)",
                                "\n".join(p.read_text() for p in api_pages), re.M))
    names = _public_names()
    assert sum(map(len, names.values())) > 200          # not vacuous: the package was read
    missing = sorted({n for module in names.values() for n in module} - documented)
    assert not missing, f"public names missing from book/api/: {missing}"


# The opening box of every chapter (spec: /tmp/r24/spec_index.md; chapters 10-14 are filled by
# their own helpers and fail here until then).
sys.path.insert(0, str(ROOT / "tools" / "book"))
import reading_time  # noqa: E402


def _box_bullets(box: str) -> dict[str, str]:
    """The top-level bullets of the opening box, by their bold name."""
    bullets = re.split(r"^- \*\*", box, flags=re.M)[1:]
    return {b.split("**", 1)[0].rstrip("."): b.split("**", 1)[1] for b in bullets}


def _box_items(body: str) -> list[str]:
    """The lines of a bullet of the box: its sub-bullets, or its statements separated by ';'."""
    subs = re.findall(r"^  - (.*(?:\n    .*)*)", body, re.M)
    if subs:
        return subs
    return [part for part in re.split(r";\s+", " ".join(body.split())) if part.strip(" .")]


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.stem)
def test_opening_box_states_verdicts_objectives_prerequisites_and_time(path, index):
    text = path.read_text(encoding="utf-8")
    box = reading_time.opening_box(text)
    assert box, f"{path.name}: no opening box"
    bullets = _box_bullets(box)
    assert list(bullets)[-4:] == ["Verdicts", "You will learn to", "Prerequisites", "Time"], \
        f"{path.name}: the box must end with Verdicts, You will learn to, Prerequisites, Time"
    # Verdicts: 3-6 lines (sub-bullets, or statements separated by semicolons), each with a
    # value this chapter glues (a verdict, for a key of the paper index) or a {ref} to an item
    # of the index whose text is the index's verdict
    chapter = f"notebooks/{path.stem}"
    lines = _box_items(bullets["Verdicts"])
    assert 3 <= len(lines) <= 6, f"{path.name}: {len(lines)} verdict lines"
    items = {i["label"]: i for i in pages.index_items()}
    glued = pages.glued_values(chapter)
    for line in lines:
        keys = re.findall(r"\{glue:text\}`([^`]+)`", line)
        refs = re.findall(r"\{ref\}`([a-z ,]+) <([a-z0-9-]+)>`", line)
        assert keys or refs, f"{path.name}: verdict line without a verdict: {line!r}"
        for key in keys:
            assert key in glued, f"{path.name}: {key} is not glued by this chapter"
            if key in items:
                assert glued[key] in pages.GLUED_VERDICTS, f"{path.name}: {key} glues {glued[key]!r}"
        for verdict, label in refs:
            assert label in items and items[label]["chapter"] == chapter, \
                f"{path.name}: {label} is not an item of the paper index checked here"
            assert items[label]["verdict"] == verdict, \
                f"{path.name}: {label} is {items[label]['verdict']!r} in the index, {verdict!r} here"
    learn = _box_items(bullets["You will learn to"])
    assert 2 <= len(learn) <= 4, f"{path.name}: {len(learn)} objectives"
    prerequisites = bullets["Prerequisites"]
    linked = re.findall(r"\{doc\}`(\d\d_[a-z0-9_]+)`", prerequisites)
    assert linked or prerequisites.strip().lower().startswith("none"), prerequisites
    for stem in linked:
        assert (ROOT / "notebooks" / f"{stem}.md").exists(), stem
    assert reading_time.stated(text) == reading_time.minutes(text), (
        f"{path.name}: the box must say '- **Time.** about {reading_time.minutes(text)} minutes "
        f"to read' (python tools/book/reading_time.py)")
