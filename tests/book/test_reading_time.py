"""The reading-time rule of tools/book/reading_time.py on made-up chapters: prose words, inline
and display formulas and shown code lines are each counted as the rule states."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "book"))
import reading_time as rt  # noqa: E402

CHAPTER = '''---
jupytext:
  text_representation:
    format_name: myst
---

# A made-up chapter

```{admonition} What this chapter shows
:class: tip

- **Time.** about 5 minutes to read
```

(made-up-target)=
## One section

Four words of prose, then $x + y$ and {ref}`Theorem 1 <paper-thm-1>` here.

$$
a = b \\\\
c = d
$$

```{math}
:label: made-up-eq
e = f
```

```{code-cell} ipython3
x = 1

y = 2
```

```{code-cell} ipython3
:tags: [hide-input]

print("folded: not counted")
```

```{code-cell} ipython3
---
tags: [hide-input]
mystnb:
  figure:
    caption: "a caption"
---
z = 3
```
'''


def test_each_part_of_the_rule_is_counted():
    # "A made-up chapter" (3) + "One section" (2) + "Four words of prose, then" (5)
    # + formula (1) + "and" (1) + "Theorem 1" (2) + "here." (1)
    assert rt.words(CHAPTER) == 15
    assert rt.inline_formulas(CHAPTER) == 1
    assert rt.display_lines(CHAPTER) == 3          # a = b, c = d, e = f
    assert rt.code_lines(CHAPTER) == 2             # the open cell's two lines; folded cells aside
    expected = (15 - 1 + rt.INLINE_FORMULA_WORDS * 1 + rt.DISPLAY_LINE_WORDS * 3
                + rt.CODE_LINE_WORDS * 2)
    assert rt.reading_words(CHAPTER) == expected == 97


def test_minutes_round_up_to_five_at_200_words_a_minute():
    assert rt.minutes(CHAPTER) == 5                 # at least 5
    long = CHAPTER + "\n" + "word " * (200 * 12)    # 97 + 2400 words-equivalent: 12.5 minutes
    assert rt.minutes(long) == 15
    code = CHAPTER + "\n```{code-cell} ipython3\n" + "a = 1\n" * 200 + "```\n"
    assert rt.minutes(code) == 15                   # 97 + 2000 words-equivalent: 10.5 minutes


def test_the_rule_the_book_states_is_the_one_computed():
    """The sentence the book prints (RULE) names the numbers the module uses."""
    for number in (rt.WORDS_PER_MINUTE, rt.INLINE_FORMULA_WORDS, rt.DISPLAY_LINE_WORDS,
                   rt.CODE_LINE_WORDS, rt.ROUND_TO):
        assert f"{number} " in rt.RULE, number
    assert rt.stated(CHAPTER) == 5


def test_the_landing_page_states_the_rule():
    """The rule the Time lines follow is the one the landing page states to the reader."""
    intro = " ".join((ROOT / "book" / "intro.md").read_text(encoding="utf-8").split())
    assert rt.RULE in intro
