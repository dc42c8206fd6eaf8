"""Generate the errata appendix and the paper index from their registries.

``book/findings.yml``    -> ``book/errata.md``       (every finding, by paper and consequence;
                                                       the book's own results apart)
``book/paper_index.yml`` -> ``book/paper_index.md``  (every paper item, with its verdict)
both                     -> ``book/_generated/verdicts.md`` (the landing page's two-minute answer)
the modules of ``lib``   -> ``book/api/*.md``        (the API reference, one page per module group)

The verdicts marked ``glue`` in the paper index are read from the executed chapters: each
chapter glues (myst-nb ``glue(label, verdict)``) a verdict
string computed from the quantities its cells assert. So the two pages cannot drift from the chapters;
``tests/book/test_book.py`` checks that the committed pages are what this script writes.

Usage: ``python tools/book/make_book_pages.py`` (from the project root; ``--check`` exits with 1
instead of writing when a page is out of date).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = ROOT / "book" / "findings.yml"
PAPER_INDEX = ROOT / "book" / "paper_index.yml"
ERRATA_PAGE = ROOT / "book" / "errata.md"
INDEX_PAGE = ROOT / "book" / "paper_index.md"
VERDICTS_PAGE = ROOT / "book" / "_generated" / "verdicts.md"
CITATION = ROOT / "CITATION.cff"
CITE_PAGE = ROOT / "book" / "cite.md"

# A finding of the kind RESULT is the book's own measurement, not an error of a paper: the
# errata list such findings apart, after the papers' errors.
RESULT = "result of the book"
KINDS = ("typo", "error in a proof", "claim does not hold", "underspecified", "code differs",
         RESULT)
# The errata's order: what changes a conclusion first, what changes nothing last.
KINDS_BY_CONSEQUENCE = ("claim does not hold", "error in a proof", "underspecified",
                        "code differs", "typo")
KIND_HEADINGS = {"claim does not hold": "Claims that do not hold",
                 "error in a proof": "Errors in proofs",
                 "underspecified": "Underspecified choices",
                 "code differs": "Where the author's code differs",
                 "typo": "Typos",
                 RESULT: "Results of the book"}
# A claim measured to hold on every setting the chapter runs, whose proof is invalid.
MEASURED = "holds where measured, not proved"
GLUED_VERDICTS = ("holds", "partly", "does not hold", MEASURED, "not reproducible")
TYPED_VERDICTS = ("holds", "typo", "proof gap", "definition", "regenerated")
# Verdicts in the landing page's summary, in this order, with what each means there.
VERDICT_ORDER = ("holds", "typo", "proof gap", MEASURED, "partly", "does not hold",
                 "not reproducible", "definition", "regenerated")
VERDICT_PHRASES = {"holds": "hold as stated",
                   "typo": "hold once a typo is corrected",
                   "proof gap": "hold, but their proof needs an extra condition",
                   MEASURED: "hold on every setting the book measures, but have no valid proof",
                   "partly": "hold only in part",
                   "does not hold": "do not hold",
                   "not reproducible": "cannot be reproduced",
                   "definition": "are definitions the book implements",
                   "regenerated": "are figures or tables the book redraws"}
# The main paper; the related papers are listed under `papers:` in book/paper_index.yml
# (prefix of their labels -> title and citation key).
DEFAULT_PAPERS = {"paper": {"title": "Ponnoprat (2023): the Dirichlet mechanism",
                            "cite": "ponnoprat2023dirichlet"}}
# The items of the main paper whose failure matters most to a reader of the landing page
# (claims that fail and proofs that do not follow); tests/book/test_book.py checks that each still
# has a verdict other than "holds" and a finding of kind "claim does not hold" or "error in a
# proof", so that a change of verdict forces a new choice.
HEADLINE_ITEMS = ("paper-claim-nb-ce", "paper-claim-adp-laplace", "paper-thm-2")
# The main result, stated beside them.
MAIN_RESULT = "paper-thm-1"
# What a practitioner does about each headline failure (no numbers here: the numbers are the
# chapters', shown on the linked pages).
HEADLINE_ADVICE = {
    "paper-claim-nb-ce": "use the Dirichlet mechanism for naive Bayes at small budgets; at large "
                         "ε its advantage over Gaussian noise shrinks to within the noise, so "
                         "compare the two on your data there",
    "paper-claim-adp-laplace": "under (ε̂, δ)-DP calibrate the Gaussian mechanism exactly (the "
                               "library does) and prefer it to Laplace noise for these models",
    "paper-thm-2": "use Theorem 2's tail bound only for α of at least 1/2 (Algorithm 1's α is "
                   "at least 1); for smaller α it can be false",
}
# The book's own result a practitioner most needs, named on the landing page beside the paper's
# failures (a finding of chapter 14).
BOOK_RESULT = "single-histogram-laplace"
BOOK_RESULT_ADVICE = ("to release one normalised histogram of many records, add Laplace noise "
                      "(clipped and normalised) instead of drawing from the Dirichlet mechanism; "
                      "the Dirichlet mechanism pays off for few records and for the many small "
                      "tables of a model")
# Chapters whose findings concern a related paper (a finding linked to no index item is
# assigned by its chapter; every other chapter checks the main paper or its code).
CHAPTER_PAPER = {"10": "geumlek", "11": "geumlek", "12": "hellinger", "13": "zc"}
GENERATED = ("<!-- Generated by tools/book/make_book_pages.py from book/{source}: edit that file, "
             "not this page. -->")


def load_findings() -> dict:
    return yaml.safe_load(FINDINGS.read_text(encoding="utf-8"))


def load_index() -> dict:
    return yaml.safe_load(PAPER_INDEX.read_text(encoding="utf-8"))


def papers(registry: dict | None = None) -> dict[str, dict]:
    """Label prefix -> {"title", "cite"} for every paper of the index, the main paper first."""
    registry = load_index() if registry is None else registry
    out = dict(DEFAULT_PAPERS)
    for prefix, paper in (registry.get("papers") or {}).items():
        out[prefix] = {"title": paper["title"], "cite": paper.get("cite")}
    return out


def paper_of(label: str) -> str:
    """The prefix of a label: paper-thm-1 -> paper, geumlek-thm-15 -> geumlek."""
    return label.split("-", 1)[0]


def chapter_title(chapter: str) -> str:
    """The first `# ` heading of a chapter's MyST source."""
    for line in (ROOT / f"{chapter}.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{chapter}.md has no title")


def chapter_number(chapter: str) -> str:
    """notebooks/03_theorem1 -> "03"."""
    return chapter.split("/")[-1].split("_")[0]


def glued_values(chapter: str) -> dict[str, object]:
    """Every value a chapter's executed notebook glued, by key (text/plain, evaluated)."""
    notebook = json.loads((ROOT / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    values = {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            prefix = output["metadata"]["scrapbook"].get("mime_prefix", "")
            text = output.get("data", {}).get(prefix + "text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            try:
                values[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                values[name] = text
    return values


def _doc(chapter: str) -> str:
    return f"../{chapter}"


def _chapter_link(chapter: str) -> str:
    """A short link to a chapter: "ch. 03", with a no-break space (one line in a narrow column)."""
    return f"{{doc}}`ch.\u00a0{chapter_number(chapter)} <{_doc(chapter)}>`"


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


def _plural(n: int, kind: str) -> str:
    words = {"claim does not hold": ("claim that does not hold", "claims that do not hold"),
             "error in a proof": ("error in a proof", "errors in proofs"),
             "underspecified": ("underspecified choice", "underspecified choices"),
             "code differs": ("difference in the author's code",
                              "differences in the author's code"),
             "typo": ("typo", "typos"),
             RESULT: ("result of the book", "results of the book")}[kind]
    return f"{n} {words[n != 1]}"


def errors_of(findings: list[dict]) -> list[dict]:
    """The findings about a paper or its code: every kind but the book's own results."""
    return [f for f in findings if f["kind"] != RESULT]


def results_of(findings: list[dict]) -> list[dict]:
    """The book's own results (kind RESULT)."""
    return [f for f in findings if f["kind"] == RESULT]


def findings_summary(findings: list[dict]) -> str:
    """"N findings: ... ." over the papers' errors, then the book's own results if any."""
    errors = errors_of(findings)
    kinds = Counter(f["kind"] for f in errors)
    text = (f"{len(errors)} findings: "
            + ", ".join(_plural(kinds.get(k, 0), k) for k in KINDS_BY_CONSEQUENCE) + ".")
    results = results_of(findings)
    if results:
        text += (f" Besides them, {_plural(len(results), RESULT)}: "
                 + ("a result" if len(results) == 1 else "results")
                 + " the book measures that no paper claims.")
    return text


def finding_paper(finding: dict, index: list[dict] | None = None) -> str:
    """The paper a finding is about: the paper of the index items that list it, else its chapter's."""
    index = index_items() if index is None else index
    prefixes = {paper_of(item["label"]) for item in index if finding["id"] in item.get("findings", [])}
    if len(prefixes) == 1:
        return prefixes.pop()
    return CHAPTER_PAPER.get(chapter_number(finding["chapter"]), "paper")


def _errata_entry(f: dict) -> str:
    effect = " ".join(f["effect"].split())
    return (f"- **{_capital(f['title'])}** ({_chapter_link(f['chapter'])}; {f['where']}). "
            f"{effect} {{ref}}`See the finding <finding-{f['id']}>`.")


def _by_chapter(findings: list[dict]) -> list[dict]:
    return sorted(findings, key=lambda f: chapter_number(f["chapter"]))


def errata_page() -> str:
    registry = load_findings()
    findings = registry["findings"]
    index = index_items()
    errors, results = errors_of(findings), results_of(findings)
    by_paper = {prefix: [f for f in errors if finding_paper(f, index) == prefix] for prefix in papers()}
    lines = [
        "# Errata: the paper and its code against what the book finds",
        "",
        GENERATED.format(source="findings.yml"),
        "",
        f"**In short.** {findings_summary(findings)} The papers' findings are listed by paper "
        "(the main paper and its author's code first), and within each paper by consequence: "
        "the claims the book measures to be false and the proofs that do not follow as written "
        "first, then the choices a paper leaves open, the places where the author's code does "
        "something else, and last the typos."
        + (" The book's own results come last, apart from the papers' errors, by the paper "
           "they speak about." if results else ""),
        "",
        "Each entry links to its place in its chapter, where an admonition headed *Finding* "
        "stands beside the cell that measures the effect. The author's code is described in "
        "{doc}`original_code`; the verdict on every numbered item of each paper is in the "
        "{doc}`paper_index`.",
    ]
    for prefix, paper in papers().items():
        entries = by_paper[prefix]
        if not entries:
            continue
        title = paper["title"] + (" and the author's code" if prefix == "paper" else "")
        cite = f" {{cite}}`{paper['cite']}`" if paper.get("cite") else ""
        lines += ["", f"## {title} ({len(entries)})", "", f"{findings_summary(entries)}{cite}"]
        for kind in KINDS_BY_CONSEQUENCE:
            kept = _by_chapter(f for f in entries if f["kind"] == kind)
            if not kept:
                continue
            lines += ["", f"### {KIND_HEADINGS[kind]} ({len(kept)})", "",
                      f"*{kind}*: {registry['kinds'][kind]}.", ""]
            lines += [_errata_entry(f) for f in kept]
    if results:
        lines += ["", f"## {KIND_HEADINGS[RESULT]} ({len(results)})", "",
                  f"*{RESULT}*: {registry['kinds'][RESULT]} (in the {{doc}}`paper_index`). "
                  "They are not errors of a paper."]
        for prefix, paper in papers().items():
            kept = _by_chapter(f for f in results if finding_paper(f, index) == prefix)
            if not kept:
                continue
            lines += ["", f"### {paper['title']} ({len(kept)})", ""]
            lines += [_errata_entry(f) for f in kept]
    return "\n".join(lines) + "\n"


def verdict_of(item: dict, glue_cache: dict) -> str:
    if item["verdict"] == "glue":
        chapter = item["chapter"]
        if chapter not in glue_cache:
            glue_cache[chapter] = glued_values(chapter)
        value = glue_cache[chapter].get(item["label"])
        if value not in GLUED_VERDICTS:
            raise ValueError(f"{chapter} glues no verdict for {item['label']} "
                             f"(found {value!r}); re-execute the chapter")
        return value
    return item["verdict"]


def index_items() -> list[dict]:
    """The items of the paper index, without its group headings."""
    return [item for item in load_index()["items"] if "group" not in item]


def _grouped(registry: dict) -> dict[str, list[tuple[str | None, dict]]]:
    """Per paper prefix, its items in order, each with the group heading it falls under."""
    out: dict[str, list[tuple[str | None, dict]]] = {prefix: [] for prefix in papers(registry)}
    group = None
    for item in registry["items"]:
        if "group" in item:
            group = item["group"]
            continue
        prefix = paper_of(item["label"])
        if prefix not in out:
            raise ValueError(f"{item['label']}: no paper with prefix {prefix!r} under `papers:`")
        out[prefix].append((group, item))
    return out


def _items(n: int) -> str:
    return f"{n} item" + ("s" if n != 1 else "")


def _count_line(verdicts: list[str]) -> str:
    counts = Counter(verdicts)
    # semicolons: one verdict ("holds where measured, not proved") has a comma of its own
    return "; ".join(f"{counts[v]} {v}" for v in VERDICT_ORDER if counts.get(v))


def _findings_cell(item: dict, findings: dict) -> str:
    """The findings of an item, each named by kind and title: "claim does not hold: ..."."""
    return "; ".join(f"*{findings[i]['kind']}*: {{ref}}`{findings[i]['title']} <finding-{i}>`"
                     for i in item.get("findings", []))


def index_page() -> str:
    registry = load_index()
    findings = {f["id"]: f for f in load_findings()["findings"]}
    cache: dict = {}
    all_papers = papers(registry)
    grouped = _grouped(registry)
    lines = [
        "# Paper index",
        "",
        GENERATED.format(source="paper_index.yml"),
        "",
        "Every numbered item of the papers this book checks (equations, definitions, lemmas, "
        "theorems, propositions, remarks, algorithms, figures, tables and appendices) and every "
        "quantitative or comparative claim of their prose, with a link to the section of this "
        "book that checks it: one section per paper, in the papers' own numbering.",
        "",
        "What the verdicts mean. *holds*: a check in the linked section asserts the item, and "
        "the book would fail to build if it stopped holding. *partly*, *does not hold* and *not "
        "reproducible*: the chapter measures the item and states the verdict from what it "
        "measures (an item that cannot be reproduced lacks data or text to run it). *typo* and "
        "*proof gap*: the item holds once the finding listed beside it is corrected (for a "
        "proof gap, under the finding's extra condition). *holds where measured, not proved*: "
        "the chapter measures the item to hold on every setting it runs (an exact audit or an "
        "enumeration), but the paper's proof does not establish it and no extra condition "
        "repairs it, so the item is known to hold only where it was measured. *definition* and "
        "*regenerated*: a definition or formula the chapter implements, or a figure or table it "
        "redraws. A verdict that a chapter computes is shown as the chapter states it, from one "
        "source. A finding listed under an item is named by its kind, as in the {doc}`errata`; "
        "a finding of another kind than the verdict concerns a detail of the item, which its "
        "text explains, and a *result of the book* is something the book measures about the "
        "item that the paper does not claim.",
        "",
        "Columns: the item and what it says, with its findings; the verdict; the chapter that "
        "checks it.",
    ]
    header = ["| Item | Verdict | Ch. |", "|---|---|---|"]
    for prefix, paper in all_papers.items():
        entries = grouped[prefix]
        cite = f" {{cite}}`{paper['cite']}`" if paper.get("cite") else ""
        lines += ["", f"## {paper['title']}", ""]
        if not entries:
            lines.append(f"The items of this paper{cite} are not indexed yet.")
            continue
        verdicts = [verdict_of(item, cache) for _, item in entries]
        lines.append(f"{_items(len(entries))}{' of' + cite if cite else ''}: {_count_line(verdicts)}.")
        group = object()
        for (item_group, item), verdict in zip(entries, verdicts):
            if item_group != group:
                group = item_group
                if group is not None and group != paper["title"]:
                    lines += ["", f"### {group}", ""]
                else:
                    lines.append("")
                lines += header
            what = item["what"]
            notes = _findings_cell(item, findings)
            cell = f"{{ref}}`{item['item']} <{item['label']}>`: {what}"
            if notes:
                cell += f". Findings: {notes}"
            lines.append(f"| {cell} | **{verdict}** | {_chapter_link(item['chapter'])} |")
    return "\n".join(lines) + "\n"


def verdicts_page() -> str:
    """The landing page's summary: items of the papers and findings named as two different
    things, the verdicts on the main paper's items, the failures that matter most with what a
    practitioner does about each, the book's own practical result, the related papers, and the
    findings by kind (included by book/intro.md)."""
    registry = load_index()
    findings_list = load_findings()["findings"]
    findings = {f["id"]: f for f in findings_list}
    items = {item["label"]: item for item in index_items()}
    cache: dict = {}
    lines = [GENERATED.format(source="paper_index.yml and book/findings.yml"), ""]
    main = [item for _, item in _grouped(registry)["paper"]]
    verdicts = Counter(verdict_of(item, cache) for item in main)
    lines += ["The book reports two different things. **Items** are what a paper states: its "
              "numbered results and its quantitative claims, each judged by a check in its "
              "chapter (the {doc}`paper_index` lists them). **Findings** are the places where a "
              "paper's text, its proofs or its author's code differ from what the book measures "
              "(the {doc}`errata` lists them, and apart from them the book's own results, which "
              "no paper claims). One item can carry several findings, and a finding can concern "
              "a detail of an item that still holds.", "",
              f"**The paper's {len(main)} items.** Of them:", ""]
    for v in VERDICT_ORDER:
        if verdicts.get(v):
            lines.append(f"- **{verdicts[v]}** {VERDICT_PHRASES[v]} (*{v}*);")
    lines[-1] = lines[-1][:-1] + "."
    thm = items[MAIN_RESULT]
    lines += ["", f"The main result, {{ref}}`{thm['item']} <{MAIN_RESULT}>` ({thm['what']}): "
              f"**{verdict_of(thm, cache)}**.", "",
              "**What matters most in practice.** The paper's claims whose failure changes what "
              "a practitioner should do:", ""]
    for label in HEADLINE_ITEMS:
        item = items[label]
        verdict = verdict_of(item, cache)
        phrase = VERDICT_PHRASES[verdict].replace("hold only", "holds only").replace("do not hold", "does not hold")
        why = "; ".join(f"{{ref}}`{findings[i]['title']} <finding-{i}>`" for i in item.get("findings", [])
                        if findings[i]["kind"] in ("claim does not hold", "error in a proof"))
        lines.append(f"- {{ref}}`{item['item']} <{label}>` ({item['what']}) {phrase}: {why} "
                     f"({_chapter_link(item['chapter'])}). *What to do:* {HEADLINE_ADVICE[label]}.")
    result = findings[BOOK_RESULT]
    lines += ["", f"**The book's own result for practice.** {{ref}}`{_capital(result['title'])} "
              f"<finding-{BOOK_RESULT}>` ({_chapter_link(result['chapter'])}). *What to do:* "
              f"{BOOK_RESULT_ADVICE}."]
    others = [p for p in papers(registry) if p != "paper"]
    grouped = _grouped(registry)
    related = [(papers(registry)[p], [item for _, item in grouped[p]]) for p in others]
    related = [(paper, entries) for paper, entries in related if entries]
    if related:
        lines += ["", "**The related papers' items** (chapters 10-13):", ""]
        for paper, entries in related:
            cite = f" {{cite}}`{paper['cite']}`" if paper.get("cite") else ""
            lines.append(f"- {paper['title']}{cite}, {_items(len(entries))}: "
                         f"{_count_line([verdict_of(item, cache) for item in entries])}.")
    lines += ["", f"**The findings, across the four papers and the author's code.** "
              f"{findings_summary(findings_list)} All of them, by paper and then by consequence, "
              "are in the {doc}`errata`."]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The API reference: one page per group of modules, every public function and class of each
# module (its ``__all__``, or the functions and classes it defines whose names do not start
# with an underscore) in source order. A module of ``lib`` in no group stops the script;
# tests/book/test_book.py checks independently that every public name is on a page.

API_DIR = ROOT / "book" / "api"
# Methods shown for classes whose other public methods are internal to the library.
API_MEMBERS = {
    "lib.mechanisms.protocol.Mechanism": "release, guarantee, calibrate, calibrate_many, log_release_tables, "
                              "configured, release_key",
    "lib.mechanisms.dirichlet.mechanism.DirichletMechanism": "release, concentration, worst_neighbour, "
                                        "from_concentration, log_release_tables",
    "lib.mechanisms.gohari.mechanism.GohariMechanism": "release, guarantee, flat_sizes",
    "lib.mechanisms.noise.mechanism.GaussianMechanism": "release, noisy_counts, from_sigma",
    "lib.mechanisms.noise.mechanism.LaplaceMechanism": "release, noisy_counts, from_scale",
    "lib.mechanisms.noise.estimates.SmoothedEstimate": "log_release",
    "lib.models.naive_bayes.classifier.PrivateNaiveBayes": "fit, fit_counts, predict_proba, predict_log_proba, "
                                                           "predict",
    "lib.models.naive_bayes.binning.PublicBins": "fit, transform",
    "lib.models.estimator.SharedBudget": "charge, total, spent, releases",
}
API_DATA = {"lib.experiments.networks": ["NETWORKS"], "lib.experiments.datasets": ["REGISTRY"]}
API_GENERATED = ("<!-- Generated by tools/book/make_book_pages.py (API_PAGES) from the modules of lib: "
                 "edit that script or the docstrings, not this page. -->")
_PROTOCOL = ("Every mechanism of the book is a class with one contract: `release(counts, rng)` and "
             "the privacy statement it meets; its classmethods turn a budget for a whole model "
             "into one object per release. The registry maps command-line names to classes, so a "
             "new mechanism is one class and one `register` call.")
# page -> (title, introduction, [(section heading or None, module, text before its entries)])
API_PAGES = {
    "privacy": ("lib.privacy: guarantees and accounting", (
        "What privacy is, independent of any mechanism: the guarantees a release carries, which "
        "are also the targets a mechanism is calibrated to, the conversion from Rényi DP to "
        "(ε̂, δ)-DP (Appendix B), and the neighbouring histograms the guarantees quantify over."), [
        ("Guarantees and targets", "lib.privacy", ""),
        ("Validation of arguments", "lib.validation", "The checks every public function runs on its arguments:"),
        (None, "lib.privacy.guarantees", ""),
        ("Accounting (Appendix B)", "lib.privacy.accounting", ""),
        ("Composition of guarantees", "lib.privacy.accountant", ""),
        ("Neighbouring histograms", "lib.privacy.neighbours", ""),
    ]),
    "mechanisms": ("lib.mechanisms: the mechanisms", (
        "Every mechanism of the book, grouped by family, each with its calibration beside it, "
        "and the protocol they all follow."), [
        ("The mechanism protocol", "lib.mechanisms", _PROTOCOL),
        (None, "lib.mechanisms.protocol", ""),
        (None, "lib.mechanisms.registry", "Every mechanism class, in one list:"),
        (None, "lib.mechanisms.batching", "The batching kernel three families share to release a model's tables at once:"),
        ("The Dirichlet mechanism (Algorithm 1)", "lib.mechanisms.dirichlet",
         "Lines 1-2 of Algorithm 1 (`calibrate`, also importable as `lib.calibrate`), the "
         "mechanism, and the mathematics under it."),
        (None, "lib.mechanisms.dirichlet.calibration", ""),
        (None, "lib.mechanisms.dirichlet.mechanism", ""),
        ("The exact Rényi curve (Appendix E)", "lib.mechanisms.dirichlet.curve", ""),
        ("The order for an (ε̂, δ) target", "lib.mechanisms.dirichlet.order", ""),
        ("Approximate DP for a whole model (Appendix C)", "lib.mechanisms.dirichlet.approximate_dp", ""),
        ("Moments of the output (Section 2.2)", "lib.mechanisms.dirichlet.moments", ""),
        ("Divergences (Appendix E)", "lib.mechanisms.dirichlet.divergence", ""),
        ("Special functions (Section 2.3)", "lib.mechanisms.dirichlet.special", ""),
        ("The Gaussian and Laplace mechanisms, and non-private estimates", "lib.mechanisms.noise", ""),
        (None, "lib.mechanisms.noise.mechanism", "The mechanisms and their post-processing:"),
        (None, "lib.mechanisms.noise.renyi", "Their Rényi DP:"),
        (None, "lib.mechanisms.noise.calibration", "Their (ε̂, δ) calibrations (Appendix C):"),
        (None, "lib.mechanisms.noise.estimates", "The non-private estimates:"),
        ("Gohari et al.'s guarantee (Section 2.4)", "lib.mechanisms.gohari", ""),
        (None, "lib.mechanisms.gohari.guarantee", "The guarantee of one release:"),
        (None, "lib.mechanisms.gohari.core", "The guarantee's computation for one release:"),
        (None, "lib.mechanisms.gohari.batch", "Many calibrations at once, for the experiment grids:"),
        (None, "lib.mechanisms.gohari.mechanism",
         "The mechanism on the protocol, and the calibration of a whole model by basic composition:"),
        (None, "lib.mechanisms.gohari.reference",
         "The references it is checked against (mpmath at high precision, and the original "
         "code's fixed quadrature rule):"),
        ("RDP posterior sampling (Geumlek et al. 2017)", "lib.mechanisms.posterior_sampling", ""),
        (None, "lib.mechanisms.posterior_sampling.mechanism", "The samplers and their calibration:"),
        (None, "lib.mechanisms.posterior_sampling.analysis", "The exact worst case of their privacy loss:"),
        (None, "lib.mechanisms.posterior_sampling.gaussian", "Geumlek et al.'s Gaussian baseline:"),
        ("The smoothed-Hellinger mechanism", "lib.mechanisms.hellinger", ""),
        (None, "lib.mechanisms.hellinger.sensitivity", "Candidates, distances and sensitivities:"),
        (None, "lib.mechanisms.hellinger.mechanism", "The mechanisms:"),
        ("Smooth sensitivity (Zafarani and Clifton 2020)", "lib.mechanisms.smooth_sensitivity", ""),
        (None, "lib.mechanisms.smooth_sensitivity.cauchy", "The Cauchy noise, its calibration and exact loss:"),
        (None, "lib.mechanisms.smooth_sensitivity.sensitivity", "The sensitivities it is scaled to:"),
        ("Means and deviations of a bounded sample (mixed naive Bayes)", "lib.mechanisms.bounded_moments", ""),
        ("Posterior samplers for logistic regression (Geumlek et al. 2017, Section 4)",
         "lib.mechanisms.logistic_posterior", ""),
        (None, "lib.mechanisms.logistic_posterior.mechanism", "The samplers, their guarantees and calibrations:"),
        (None, "lib.mechanisms.logistic_posterior.sampling", "The posterior's log density, its mode and the sampler:"),
    ]),
    "models": ("lib.models: models that take a mechanism", (
        "The private models: naive Bayes and discrete Bayesian networks (Section 5), mixed naive "
        "Bayes with numerical attributes, Bayesian logistic regression by posterior sampling, "
        "and the counts they release, computed in any engine."), [
        ("The models", "lib.models", ""),
        ("Private naive Bayes (Section 5.1)", "lib.models.naive_bayes", ""),
        (None, "lib.models.naive_bayes.model", "The counts, the shapes of the releases and the releases:"),
        (None, "lib.models.naive_bayes.domain", "The declared public domain, and checks of private data against it:"),
        (None, "lib.models.naive_bayes.classifier", "The scikit-learn estimator:"),
        (None, "lib.models.naive_bayes.binning", "Binning with public bounds, for a Pipeline:"),
        (None, "lib.models.naive_bayes.scoring",
         "Scoring a batch of released models (the four functions are also importable from "
         "`lib.models.naive_bayes`):"),
        ("Counts from any engine", "lib.models.counts", ""),
        ("Private Bayesian networks (Section 5.2)", "lib.models.bayesian_network", ""),
        ("Mixed naive Bayes", "lib.models.mixed_naive_bayes", ""),
        ("Bayesian logistic regression by posterior sampling", "lib.models.logistic_regression", ""),
        ("The scikit-learn estimator protocol", "lib.models.estimator", ""),
    ]),
    "theory": ("lib.theory: what the chapters check", (
        "The computations behind the chapters' checks, apart from what users call: privacy "
        "audits, the utility bound and its proof, the counterexample to pure DP, and Geumlek et "
        "al.'s objects as their paper states them."), [
        ("The theory checks", "lib.theory", ""),
        ("Privacy audits (Theorem 1, Appendix E)", "lib.theory.audit", ""),
        ("Utility (Section 4, Appendix F)", "lib.theory.utility", ""),
        ("The proof of Theorem 2 checked independently (chapter 5)", "lib.theory.utility_proof", ""),
        ("Two steps of the proof of Theorem 1 (chapter 3)", "lib.theory.theorem1_proof", ""),
        ("The exponential mechanism with the KL loss (chapter 1)", "lib.theory.exponential_mechanism", ""),
        ("The Dirichlet distribution in SymPy (chapters 1 and 15)", "lib.theory.dirichlet_symbolic", ""),
        ("The comparison with Gohari et al. (chapter 6)", "lib.theory.gohari_comparison", ""),
        ("Appendix A: the counterexample to pure DP", "lib.theory.counterexample", ""),
        ("Geumlek et al.'s objects, as the paper states them", "lib.theory.geumlek", ""),
        ("Figure 2 of Geumlek et al.: utility of the Beta-Bernoulli samplers", "lib.theory.beta_bernoulli_utility", ""),
        ("Theorems 16-17 and OPS checked by quadrature (chapter 11)", "lib.theory.logistic_quadrature", ""),
        ("The logistic-posterior sampler against a long reference run", "lib.theory.sampler_check", ""),
        ("The exact audit of the smoothed-Hellinger mechanism", "lib.theory.hellinger_audit", ""),
        ("Neighbouring pairs and tied scores of the smoothed-Hellinger mechanism (chapter 12)",
         "lib.theory.hellinger_pairs", ""),
        ("The note's Hellinger formula in multiprecision (chapter 12)", "lib.theory.hellinger_multiprecision", ""),
        ("Sensitivities by enumeration (chapter 13)", "lib.theory.sensitivity_enumeration", ""),
        ("The Cauchy release on its densities (chapter 13)", "lib.theory.cauchy_densities", ""),
        ("Pseudo-counts of Dirichlet-sampling releases and empty cells (chapter 14)", "lib.theory.pseudo_counts", ""),
    ]),
    "experiments": ("lib.experiments: data and grids", (
        "The experiment layer: the UCI data and its public schema, preprocessing, the grid that "
        "runs every model, privacy notion, mechanism and budget, its analysis, plots and command "
        "line."), [
        ("The datasets: one entry each (Section 5.1, Table 1)", "lib.experiments.datasets", ""),
        ("Data files and loading", "lib.experiments.data", ""),
        ("The public schema", "lib.experiments.schema", ""),
        ("Public ranges of numerical attributes", "lib.experiments.public_bounds", ""),
        ("Preprocessing (Section 5.1)", "lib.experiments.preprocessing", ""),
        ("The Bayesian networks of Section 5.2", "lib.experiments.networks", ""),
        ("The task engine (Section 5, Appendix C)", "lib.experiments.engine", ""),
        (None, "lib.experiments.prepared", ""),
        (None, "lib.experiments.cells", ""),
        ("The tasks of the engine", "lib.experiments.tasks", ""),
        (None, "lib.experiments.tasks.naive_bayes", ""),
        (None, "lib.experiments.tasks.bayesian_network", ""),
        (None, "lib.experiments.tasks.mixed_naive_bayes", ""),
        (None, "lib.experiments.tasks.logistic_regression", ""),
        (None, "lib.experiments.tasks.histogram", ""),
        (None, "lib.experiments.tasks.posterior", ""),
        ("The figures' defaults", "lib.experiments.defaults", ""),
        (None, "lib.experiments.analysis", ""),
        ("Verdicts: every comparison of the chapters", "lib.experiments.verdicts", ""),
        (None, "lib.experiments.plotting", ""),
        ("The command line", "lib.experiments.cli", ""),
        ("Approximate-DP measurements (chapter 9)", "lib.experiments.approximate_dp", ""),
        ("Smoothed-Hellinger experiments (chapter 12)", "lib.experiments.hellinger", ""),
        ("Timing (chapter 12)", "lib.experiments.timing", ""),
        ("Synthetic mixed data (chapter 13)", "lib.experiments.synthetic", ""),
    ]),
    "interop": ("lib.interop: dp-accounting and OpenDP", (
        "Bridges to the accountants people already use, as the optional extra `interop`: the "
        "Dirichlet mechanism's exact curve and every guarantee of lib as events of Google's "
        "dp-accounting and as OpenDP measurements under Rényi DP with replace-one neighbours. "
        "Nothing else in lib imports them."), [
        ("The bridges", "lib.interop", ""),
        ("dp-accounting", "lib.interop.dp_accounting", ""),
        ("OpenDP", "lib.interop.opendp", ""),
    ]),
}


def lib_modules() -> list[str]:
    """Every module of lib whose path has no part starting with an underscore."""
    import pkgutil

    sys.path.insert(0, str(ROOT))
    import lib

    return ["lib"] + sorted(m.name for m in pkgutil.walk_packages(lib.__path__, "lib.")
                            if not any(part.startswith("_") for part in m.name.split(".")))


def public_names(module_name: str) -> list[str]:
    """The public functions and classes a module defines, in source order (its __all__ if set)."""
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    if hasattr(module, "__all__"):
        return list(module.__all__)
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if obj.__module__ != module_name:
            continue
        found.append((inspect.getsourcelines(obj)[1], name))
    return [name for _, name in sorted(found)]


def _assigned(module) -> set:
    """The names a module assigns at its top level (not those it imports from elsewhere)."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _api_block(module_name: str) -> str:
    import dataclasses
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    lines = ["```{eval-rst}", f".. automodule:: {module_name}"]
    for name in API_DATA.get(module_name, []):
        lines += [f".. autodata:: {module_name}.{name}", "   :no-value:"]
    for name in public_names(module_name):
        obj = getattr(module, name)
        target = f"{module_name}.{name}"
        if inspect.isclass(obj):
            kind = "autoexception" if issubclass(obj, BaseException) else "autoclass"
            lines.append(f".. {kind}:: {target}")
            if target in API_MEMBERS:
                lines.append(f"   :members: {API_MEMBERS[target]}")
            elif not (issubclass(obj, tuple) or dataclasses.is_dataclass(obj)):
                # (the fields of a named tuple or dataclass are in its docstring already)
                lines.append("   :members:")
        elif callable(obj):
            lines.append(f".. autofunction:: {target}")
        elif name not in API_DATA.get(module_name, []) and name in _assigned(module):
            # a public constant the module defines (a registry, a table): its #: comment, not its value
            lines += [f".. autodata:: {target}", "   :no-value:"]
    lines.append("```")
    return "\n".join(lines)


def api_pages() -> dict[Path, str]:
    grouped = {module for _, _, sections in API_PAGES.values() for _, module, _ in sections}
    # `lib` and `lib.experiments` only re-export names documented under their own modules
    left_out = sorted(set(lib_modules()) - grouped - {"lib", "lib.experiments"})
    if left_out:
        raise ValueError(f"modules of lib on no API page (add them to API_PAGES): {left_out}")
    out = {}
    for page, (title, intro, sections) in API_PAGES.items():
        lines = [f"# {title}", "", API_GENERATED, "", intro, ""]
        for heading, module, text in sections:
            if heading:
                lines += [f"## {heading}", ""]
            if text:
                lines += [text, ""]
            lines += [_api_block(module), ""]
        out[API_DIR / f"{page}.md"] = "\n".join(lines).rstrip() + "\n"
    return out


def _bibtex_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def cite_page() -> str:
    """``book/cite.md``: how to cite the book and the paper, from ``CITATION.cff`` (its one source)."""
    cff = yaml.safe_load(CITATION.read_text(encoding="utf-8"))
    paper = cff["preferred-citation"]
    book_authors = " and ".join(a.get("name") or f"{a['family-names']}, {a['given-names']}" for a in cff["authors"])
    paper_authors = " and ".join(f"{a['family-names']}, {a['given-names']}" for a in paper["authors"])
    year = str(cff["date-released"])[:4]
    book_key = _bibtex_key(cff["authors"][0].get("name", "book"))[:12] + year
    paper_key = _bibtex_key(paper["authors"][0]["family-names"]) + str(paper["year"])
    lines = [
        "# Cite this book", "",
        "<!-- Generated by tools/book/make_book_pages.py from CITATION.cff: edit that file, not this page. -->",
        "",
        cff["message"].strip(), "",
        "## The book and its library", "",
        f"{book_authors} ({year}). *{cff['title']}*, version {cff['version']}. "
        f"Licence {cff['license']}.", "",
        "```bibtex",
        f"@software{{{book_key},",
        f"  author  = {{{{{book_authors}}}}},",
        f"  title   = {{{cff['title']}}},",
        f"  version = {{{cff['version']}}},",
        f"  year    = {{{year}}},",
        f"  license = {{{cff['license']}}}",
        "}", "```", "",
        "## The paper it checks", "",
        f"{paper_authors} ({paper['year']}). {paper['title']}. *{paper['journal']}*. <{paper['url']}>", "",
        "```bibtex",
        f"@article{{{paper_key},",
        f"  author  = {{{paper_authors}}},",
        f"  title   = {{{paper['title']}}},",
        f"  journal = {{{paper['journal']}}},",
        f"  year    = {{{paper['year']}}},",
        f"  url     = {{{paper['url']}}}",
        "}", "```", "",
        "This page is the book's `CITATION.cff`, which the repository and the source archive of "
        "every build also carry (the footer of each page links to that archive).",
    ]
    return "\n".join(lines) + "\n"


def pages() -> dict[Path, str]:
    return {ERRATA_PAGE: errata_page(), INDEX_PAGE: index_page(),
            VERDICTS_PAGE: verdicts_page(), CITE_PAGE: cite_page(), **api_pages()}


def main(argv: list[str]) -> int:
    stale = []
    for path, text in pages().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if "--check" in argv:
            stale.append(path.name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("out of date: " + ", ".join(stale) + " (run python tools/book/make_book_pages.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
