"""The reading time each chapter states in its opening box.

A chapter's opening admonition, "What this chapter shows", ends with the line

    - **Time.** about N minutes to read

where N is the chapter's prose words divided by 200 (words a minute), rounded up to the next
multiple of 5. Prose is the chapter's MyST source without its front matter, its code cells and
the opening admonition itself; directive fences and options, targets ``(label)=``, comments and
display math (``$$ ... $$``) are not words. An inline formula ``$...$``, a code span and a role
without a title (``{glue:text}`key```, ``{doc}`path```) count as one word each; a role with a
title (``{ref}`Theorem 1 <paper-thm-1>```) counts its title's words.

``tests/test_book.py`` checks that every chapter's box states the N this module computes.

Usage: ``python tools/book/reading_time.py [notebooks/NN_name.md ...]`` prints the words and N of
each chapter (all chapters by default); ``--check`` exits with 1 when a box states another N.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS_PER_MINUTE = 200
ROUND_TO = 5
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


def prose(text: str) -> str:
    """The chapter's prose, as defined in the module docstring."""
    if text.startswith("---\n"):
        text = text[text.index("\n---\n", 4) + len("\n---\n"):]
    box = opening_box(text)
    if box is not None:
        text = text.replace(box, "", 1)
    text = re.sub(r"^```\{code-cell\}.*?^```$", "", text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
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
    text = re.sub(r"(?<!\\)\$[^$]+\$", " x ", text)
    return text


def words(text: str) -> int:
    return sum(1 for token in prose(text).split() if re.search(r"\w", token))


def minutes(text: str) -> int:
    """N of the Time line: prose words / 200, rounded up to the next multiple of 5."""
    return max(ROUND_TO, math.ceil(words(text) / WORDS_PER_MINUTE / ROUND_TO) * ROUND_TO)


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
        print(f"{path.name}: {words(text)} prose words, about {n} minutes to read "
              f"(box says {says})")
        if says != n:
            wrong.append(path.name)
    if check and wrong:
        print("wrong or missing Time line: " + ", ".join(wrong))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
