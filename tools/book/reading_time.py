"""The reading time each chapter states in its opening box.

A chapter's opening admonition, "What this chapter shows", ends with the line

    - **Time.** about N minutes to read

where N counts what a reader reads, in words, at 200 words a minute, rounded up to the next
multiple of 5 (:data:`RULE` says it in the book's words):

* prose: each word of the chapter's MyST source without its front matter, its code cells and the
  opening admonition itself (directive fences and options, targets ``(label)=`` and comments are
  not words; a role with a title, ``{ref}`Theorem 1 <paper-thm-1>```, counts its title's words;
  a role without one, ``{glue:text}`key```, and a code span count as one word);
* formulas: an inline formula ``$...$`` as 3 words, each line of a display formula (``$$ ... $$``
  or a ``{math}`` block, lines split at ``\\``) as 20 words (6 seconds);
* code: each non-blank line of a code cell the page shows open as 10 words (3 seconds); a cell
  folded on the page (tagged ``hide-input``) is not read unless opened and is not counted.

``tests/book/test_book.py`` checks that every chapter's box states the N this module computes;
``tests/book/test_reading_time.py`` checks the rule on made-up chapters.

Usage: ``python tools/book/reading_time.py [notebooks/NN_name.md ...]`` prints the count of each
chapter (all chapters by default); ``--check`` exits with 1 when a box states another N.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS_PER_MINUTE = 200
ROUND_TO = 5
#: Words-equivalent of an inline formula, of a line of a display formula, of a shown code line.
INLINE_FORMULA_WORDS = 3
DISPLAY_LINE_WORDS = 20
CODE_LINE_WORDS = 10
#: The rule, as the book states it.
RULE = ("Reading times count prose at 200 words a minute, each inline formula as 3 words, each "
        "line of a displayed formula as 20 words (6 seconds) and each line of code shown on the "
        "page as 10 words (3 seconds; folded code is not counted), rounded up to 5 minutes.")
BOX_START = "```{admonition} What this chapter shows"
TIME_LINE = re.compile(r"^- \*\*Time\.\*\* about (\d+) minutes to read$", re.M)


def opening_box(text: str) -> str | None:
    """The source of the opening admonition, fences included (None if the chapter has none)."""
    start = text.find(BOX_START)
    if start < 0:
        return None
    end = text.find("\n```\n", start + len(BOX_START))
    if end < 0:
        raise ValueError("the opening admonition is not closed")
    return text[start:end + len("\n```")]


def _body(text: str) -> str:
    """The chapter without its front matter and its opening admonition."""
    if text.startswith("---\n"):
        text = text[text.index("\n---\n", 4) + len("\n---\n"):]
    box = opening_box(text)
    if box is not None:
        text = text.replace(box, "", 1)
    return text


_CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.S | re.M)
_DISPLAY = re.compile(r"\$\$(.*?)\$\$|^```\{math\}[^\n]*\n(.*?)^```$", re.S | re.M)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)[^$]+\$")


def _without_code(text: str) -> str:
    text = _CODE_CELL.sub("", text)
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def prose(text: str) -> str:
    """The chapter's prose, as defined in the module docstring (formulas and code spans as one
    placeholder word each; display formulas removed)."""
    text = _DISPLAY.sub("", _without_code(_body(text)))
    kept = []
    for line in text.splitlines():
        stripped = line.strip()
        if (stripped.startswith(("```", ":::", "+++"))
                or re.fullmatch(r":[\w-]+:.*", stripped)
                or re.fullmatch(r"\(.*\)=", stripped)):
            continue
        kept.append(line)
    text = "\n".join(kept)
    # a role with a title keeps its title; any other role, code span or formula is one word
    text = re.sub(r"\{[\w:-]+\}`([^`<]*?)\s*<[^`>]*>`", r"\1", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " x ", text)
    text = re.sub(r"`[^`]*`", " x ", text)
    text = _INLINE.sub(" x ", text)
    return text


def words(text: str) -> int:
    """The prose words (an inline formula counted once, as a placeholder)."""
    return sum(1 for token in prose(text).split() if re.search(r"\w", token))


def inline_formulas(text: str) -> int:
    """The inline formulas ``$...$`` of the prose (display formulas and code aside)."""
    text = _DISPLAY.sub("", _without_code(_body(text)))
    text = re.sub(r"`[^`]*`", " ", text)
    return len(_INLINE.findall(text))


def display_lines(text: str) -> int:
    """The lines of the display formulas: each ``$$ ... $$`` or ``{math}`` block split at ``\\\\``,
    blank lines, directive options and ``\\begin``/``\\end`` lines of an environment aside."""
    count = 0
    for match in _DISPLAY.finditer(_without_code(_body(text))):
        block = match.group(1) if match.group(1) is not None else match.group(2)
        for line in re.split(r"\\\\|\n", block):
            line = line.strip()
            if line and not re.fullmatch(r"\\(?:begin|end)\{[\w*]+\}|:[\w-]+:.*|\\label\{.*\}", line):
                count += 1
    return count


def code_lines(text: str) -> int:
    """The non-blank lines of the code cells shown open (not tagged ``hide-input``,
    ``remove-input`` or ``remove-cell``), cell options aside (read as jupytext reads them)."""
    import jupytext

    folded = {"hide-input", "remove-input", "remove-cell"}
    return sum(sum(1 for line in cell.source.splitlines() if line.strip())
               for cell in jupytext.reads(text, fmt="md:myst").cells
               if cell.cell_type == "code" and not folded & set(cell.metadata.get("tags", [])))


def reading_words(text: str) -> int:
    """The words-equivalent a reader reads: prose, formulas and shown code by :data:`RULE`."""
    formulas = inline_formulas(text)
    return (words(text) - formulas + INLINE_FORMULA_WORDS * formulas
            + DISPLAY_LINE_WORDS * display_lines(text) + CODE_LINE_WORDS * code_lines(text))


def minutes(text: str) -> int:
    """N of the Time line: :func:`reading_words` / 200, rounded up to the next multiple of 5."""
    return max(ROUND_TO, math.ceil(reading_words(text) / WORDS_PER_MINUTE / ROUND_TO) * ROUND_TO)


def stated(text: str) -> int | None:
    """The N that the chapter's opening box states, or None."""
    box = opening_box(text)
    found = TIME_LINE.search(box) if box else None
    return int(found[1]) if found else None


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or sorted(
        (ROOT / "notebooks").glob("[0-9][0-9]_*.md"))
    wrong = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        n, says = minutes(text), stated(text)
        print(f"{path.name}: {words(text)} prose words, {inline_formulas(text)} inline formulas, "
              f"{display_lines(text)} formula lines, {code_lines(text)} code lines: about {n} "
              f"minutes to read (box says {says})")
        if says != n:
            wrong.append(path.name)
    if check and wrong:
        print("wrong or missing Time line: " + ", ".join(wrong))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
