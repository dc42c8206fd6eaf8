"""Public ranges of the numerical attributes of the eight datasets of Table 1.

Zafarani and Clifton's Algorithm 1 (and Vaidya et al.'s global sensitivities)
need a range :math:`[a_j, b_j]` for every numerical attribute that does not
depend on the data: a range read off the data would itself leak. Each range
below says where it comes from:

``"doc"``
    The dataset's own documentation states it (the file is named).
``"definition"``
    It follows from what the documentation says the attribute *is* (a
    percentage lies in [0, 100], hours per week in [0, 168]).
``"assumed"``
    The documentation gives no range; a round domain limit chosen for this
    book. Honesty note: the ranges were written by someone who had seen the
    data's minima and maxima (they were printed while checking the attribute
    list), so an "assumed" range is not a blind choice; every one is a round
    number at or beyond what a domain expert would allow, not the data's
    extreme.

:mod:`lib.models.mixed_naive_bayes` clips values into these ranges (a per-row
transformation, so it costs no privacy); a value outside its range is a data
error of the documentation or of the assumption, and :func:`check` reports it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd


class Bound(NamedTuple):
    """Public range of one numerical attribute and where it comes from."""

    lower: float
    upper: float
    kind: str      # "doc", "definition" or "assumed"
    source: str


_AGE = Bound(0, 125, "assumed", "a human age; Zafarani-Clifton's own example (Section 5): age between 0 and 125")

_SPAM_PCT = Bound(0, 100, "doc", "spambase.names: continuous real [0,100], a percentage of words/characters")

BOUNDS: dict[str, dict[str, Bound]] = {
    "Adult": {
        "age": _AGE,
        "education-num": Bound(1, 16, "doc", "adult.names lists 16 education levels; education-num numbers them"),
        "capital-gain": Bound(0, 99999, "assumed",
                              "adult.names: 'continuous'; five-digit Census income field (0 .. 99999)"),
        "capital-loss": Bound(0, 99999, "assumed",
                              "adult.names: 'continuous'; five-digit Census income field (0 .. 99999)"),
        "hours-per-week": Bound(0, 168, "definition", "hours in a week"),
    },
    "Bank": {
        "age": _AGE,
        "duration": Bound(0, 86400, "definition", "bank-additional-names.txt: call duration in seconds; one day"),
        "campaign": Bound(0, 100, "assumed", "number of contacts in this campaign"),
        "pdays": Bound(0, 999, "doc", "bank-additional-names.txt: days since last contact, 999 = never"),
        "previous": Bound(0, 100, "assumed", "number of contacts before this campaign"),
        "emp.var.rate": Bound(-10, 10, "assumed", "quarterly employment variation rate, percent"),
        "cons.price.idx": Bound(0, 200, "assumed", "monthly consumer price index (base 100)"),
        "cons.conf.idx": Bound(-100, 100, "definition", "consumer confidence: a balance of answers, -100 .. 100"),
        "euribor3m": Bound(-1, 10, "assumed", "3-month Euribor rate, percent"),
        "nr.employed": Bound(0, 10000, "assumed", "number of employees, thousands"),
    },
    "Spam": {
        **{c: _SPAM_PCT for c in (
            [f"word_freq_{w}" for w in (
                "make address all 3d our over remove internet order mail receive will people report addresses "
                "free business email you credit your font 000 money hp hpl george 650 lab labs telnet 857 data "
                "415 85 technology 1999 parts pm direct cs meeting original project re edu table "
                "conference").split()]
            + [f"char_freq_{c}" for c in ";([!$#"])},
        "capital_run_length_average": Bound(1, 10000, "assumed", "spambase.names: [1, ...]; upper end assumed"),
        "capital_run_length_longest": Bound(1, 10000, "assumed", "spambase.names: [1, ...]; upper end assumed"),
        "capital_run_length_total": Bound(1, 100000, "assumed", "spambase.names: [1, ...]; upper end assumed"),
    },
    "Digit": {f"pixel_{r}_{c}": Bound(0, 16, "doc", "optdigits.names: integers in the range 0..16")
              for r in range(8) for c in range(8)},
    "Thyroid": {a: Bound(0, 1, "assumed", "ann-thyroid stores the continuous attributes rescaled (age/100); "
                                          "ann-Readme gives no range")
                for a in ("age", "TSH", "T3", "TT4", "T4U", "FTI")},
    "Shopper": {
        "Administrative": Bound(0, 1000, "assumed", "pages visited in a session"),
        "Administrative_Duration": Bound(0, 86400, "definition", "seconds spent in a session of at most a day"),
        "Informational": Bound(0, 1000, "assumed", "pages visited in a session"),
        "Informational_Duration": Bound(0, 86400, "definition", "seconds spent in a session of at most a day"),
        "ProductRelated": Bound(0, 1000, "assumed", "pages visited in a session"),
        "ProductRelated_Duration": Bound(0, 86400, "definition", "seconds spent in a session of at most a day"),
        "BounceRates": Bound(0, 1, "definition", "a rate (share of sessions)"),
        "ExitRates": Bound(0, 1, "definition", "a rate (share of page views)"),
        "PageValues": Bound(0, 1000, "assumed", "average value of a page (Google Analytics)"),
        "SpecialDay": Bound(0, 1, "doc", "UCI page: closeness to a special day, 0 .. 1"),
    },
    "CreditCard": {
        "LIMIT_BAL": Bound(0, 2_000_000, "assumed", "credit limit, NT dollars"),
        "AGE": _AGE,
        **{f"BILL_AMT{i}": Bound(-2_000_000, 2_000_000, "assumed", "bill statement, NT dollars (can be negative)")
           for i in range(1, 7)},
        **{f"PAY_AMT{i}": Bound(0, 2_000_000, "assumed", "amount paid, NT dollars") for i in range(1, 7)},
    },
    "GermanCredit": {
        "duration": Bound(0, 120, "assumed", "codetable.txt: duration in months; ten years"),
        "amount": Bound(0, 100_000, "assumed", "codetable.txt: credit amount in DM"),
        "age": _AGE,
    },
}


def bounds_for(dataset: str, attributes) -> np.ndarray:
    """Array of shape (len(attributes), 2) with the public ranges of ``attributes`` of ``dataset``.

    Raises
    ------
    ValueError
        On an unknown dataset or an attribute without a public range.
    """
    if dataset not in BOUNDS:
        raise ValueError(f"dataset must be one of {', '.join(BOUNDS)}; got {dataset!r}")
    table = BOUNDS[dataset]
    missing = [a for a in attributes if a not in table]
    if missing:
        raise ValueError(f"no public range for {dataset} attributes {missing}")
    return np.array([[table[a].lower, table[a].upper] for a in attributes], dtype=float)


def table(dataset: str) -> pd.DataFrame:
    """The ranges of one dataset with their kind and source, one row per attribute."""
    if dataset not in BOUNDS:
        raise ValueError(f"dataset must be one of {', '.join(BOUNDS)}; got {dataset!r}")
    return pd.DataFrame([b._asdict() for b in BOUNDS[dataset].values()], index=list(BOUNDS[dataset]))


def check(dataset: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Attributes of ``frame`` with values outside their public range (an empty frame if none)."""
    rows = []
    for name, b in BOUNDS[dataset].items():
        x = frame[name].to_numpy(dtype=float)
        out = int(np.sum((x < b.lower) | (x > b.upper)))
        if out:
            rows.append({"attribute": name, "outside": out, "min": np.nanmin(x), "max": np.nanmax(x)})
    return pd.DataFrame(rows, columns=["attribute", "outside", "min", "max"])
