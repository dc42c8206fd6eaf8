"""The public schema of the eight datasets of Table 1: domains and classes.

A private model must not learn its shape from the private data (issue 19):
the number of values of every categorical attribute and the set of classes are
read here, from each dataset's documentation, never from the rows. Every
domain says where it comes from, with the kinds of
:mod:`lib.experiments.public_bounds`:

``"doc"``
    The dataset's documentation lists the values (the file is named).
``"assumed"``
    The documentation is silent or incomplete; the values were chosen for this
    book. Honesty note: they were written by someone who had seen the values
    that occur in the files (as for the "assumed" numerical ranges), so they
    are public only in the sense that a reader of the documentation and of the
    public discussions of the data could write them without the training rows.

``other``
    When true, the attribute gets one extra code after its listed values for
    every value the list does not name (Adult's ``?``; the undocumented codes
    0, 5 and 6 of Credit Card's ``EDUCATION``). It is part of the public domain
    whether or not such a value occurs, so the shape of the release does not
    depend on the rows. A value outside the list of an attribute without
    ``other`` is a data error and raises.

Numerical attributes have public ranges in :mod:`lib.experiments.public_bounds`;
:mod:`lib.experiments.preprocessing` bins them at public edges.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd


class Domain(NamedTuple):
    """The public values of one categorical attribute (or of the label)."""

    values: tuple
    other: bool    # one extra code for every value not listed (missing, undocumented)
    kind: str      # "doc" or "assumed"
    source: str

    @property
    def size(self) -> int:
        """The number of codes: the listed values plus the ``other`` code if any."""
        return len(self.values) + int(self.other)


def _ints(lo, hi, kind, source, other=False) -> Domain:
    return Domain(tuple(range(lo, hi + 1)), other, kind, source)


_BINARY01 = Domain((0, 1), False, "doc", "ann-thyroid (UCI 102): 15 binary attributes coded 0/1")

_ADULT_DOC = "adult.names; unknown values are written '?' (the 'other' code)"
_BANK_DOC = "bank-additional-names.txt"
_GERMAN_DOC = "codetable.txt of South German Credit (Groemping 2019)"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "June", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_PAY = Domain(tuple(range(-2, 10)), False, "assumed",
              "UCI 350 page: -1 = pay duly, 1..9 = months of delay; -2 and 0 occur in the file and "
              "are read as 'no consumption' and 'revolving credit' in public discussions of the data")

#: Per dataset, per categorical attribute (the attributes that
#: :mod:`lib.experiments.data` declares categorical), the public domain.
DOMAINS: dict[str, dict[str, Domain]] = {
    "CreditCard": {
        "SEX": Domain((1, 2), False, "doc", "UCI 350 page: 1 = male, 2 = female"),
        "EDUCATION": Domain((1, 2, 3, 4), True, "doc",
                            "UCI 350 page: 1..4 (graduate school, university, high school, others); "
                            "undocumented codes go to 'other'"),
        "MARRIAGE": Domain((1, 2, 3), True, "doc",
                           "UCI 350 page: 1..3 (married, single, others); undocumented codes go to 'other'"),
        **{f"PAY_{i}": _PAY for i in (0, 2, 3, 4, 5, 6)},
    },
    "Thyroid": {a: _BINARY01 for a in (
        "sex", "on_thyroxine", "query_on_thyroxine", "on_antithyroid_medication", "sick", "pregnant",
        "thyroid_surgery", "I131_treatment", "query_hypothyroid", "query_hyperthyroid", "lithium",
        "goitre", "tumor", "hypopituitary", "psych")},
    "Shopper": {
        "Month": Domain(_MONTHS, False, "doc", "UCI 468 page: month of the visit (the file writes 'June')"),
        "OperatingSystems": _ints(1, 8, "assumed", "integer codes 1..8 (Sakar et al. 2019 give counts only)"),
        "Browser": _ints(1, 13, "assumed", "integer codes 1..13 (Sakar et al. 2019 give counts only)"),
        "Region": _ints(1, 9, "assumed", "integer codes 1..9 (Sakar et al. 2019 give counts only)"),
        "TrafficType": _ints(1, 20, "assumed", "integer codes 1..20 (Sakar et al. 2019 give counts only)"),
        "VisitorType": Domain(("New_Visitor", "Other", "Returning_Visitor"), False, "doc",
                              "UCI 468 page: new, returning or other visitor"),
        "Weekend": Domain((False, True), False, "doc", "UCI 468 page: boolean"),
    },
    "Digit": {},
    "GermanCredit": {
        "status": _ints(1, 4, "doc", _GERMAN_DOC),
        "credit_history": _ints(0, 4, "doc", _GERMAN_DOC),
        "purpose": _ints(0, 10, "doc", _GERMAN_DOC),
        "savings": _ints(1, 5, "doc", _GERMAN_DOC),
        "employment_duration": _ints(1, 5, "doc", _GERMAN_DOC),
        "installment_rate": _ints(1, 4, "doc", _GERMAN_DOC),
        "personal_status_sex": _ints(1, 4, "doc", _GERMAN_DOC),
        "other_debtors": _ints(1, 3, "doc", _GERMAN_DOC),
        "present_residence": _ints(1, 4, "doc", _GERMAN_DOC),
        "property": _ints(1, 4, "doc", _GERMAN_DOC),
        "other_installment_plans": _ints(1, 3, "doc", _GERMAN_DOC),
        "housing": _ints(1, 3, "doc", _GERMAN_DOC),
        "number_credits": _ints(1, 4, "doc", _GERMAN_DOC),
        "job": _ints(1, 4, "doc", _GERMAN_DOC),
        "people_liable": _ints(1, 2, "doc", _GERMAN_DOC),
        "telephone": _ints(1, 2, "doc", _GERMAN_DOC),
        "foreign_worker": _ints(1, 2, "doc", _GERMAN_DOC),
    },
    "Bank": {
        "job": Domain(("admin.", "blue-collar", "entrepreneur", "housemaid", "management", "retired",
                       "self-employed", "services", "student", "technician", "unemployed", "unknown"),
                      False, "doc", _BANK_DOC),
        "marital": Domain(("divorced", "married", "single", "unknown"), False, "doc", _BANK_DOC),
        "education": Domain(("basic.4y", "basic.6y", "basic.9y", "high.school", "illiterate",
                             "professional.course", "university.degree", "unknown"), False, "doc", _BANK_DOC),
        **{a: Domain(("no", "unknown", "yes"), False, "doc", _BANK_DOC) for a in ("default", "housing", "loan")},
        "contact": Domain(("cellular", "telephone"), False, "doc", _BANK_DOC),
        "month": Domain(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
                        False, "doc", _BANK_DOC),
        "day_of_week": Domain(("mon", "tue", "wed", "thu", "fri"), False, "doc", _BANK_DOC),
        "poutcome": Domain(("failure", "nonexistent", "success"), False, "doc", _BANK_DOC),
    },
    "Spam": {},
    "Adult": {
        "workclass": Domain(("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                             "State-gov", "Without-pay", "Never-worked"), True, "doc", _ADULT_DOC),
        "education": Domain(("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                             "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
                             "5th-6th", "Preschool"), True, "doc", _ADULT_DOC),
        "marital-status": Domain(("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                                  "Married-spouse-absent", "Married-AF-spouse"), True, "doc", _ADULT_DOC),
        "occupation": Domain(("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                              "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                              "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                              "Armed-Forces"), True, "doc", _ADULT_DOC),
        "relationship": Domain(("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
                               True, "doc", _ADULT_DOC),
        "race": Domain(("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"), True, "doc",
                       _ADULT_DOC),
        "sex": Domain(("Female", "Male"), True, "doc", _ADULT_DOC),
        "native-country": Domain((
            "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
            "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
            "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland",
            "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary",
            "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago",
            "Peru", "Hong", "Holand-Netherlands"), True, "doc", _ADULT_DOC),
    },
}

#: The public set of classes of every dataset, in code order.
CLASSES: dict[str, Domain] = {
    "CreditCard": Domain((0, 1), False, "doc", "UCI 350 page: default payment next month, yes = 1, no = 0"),
    "Thyroid": Domain((1, 2, 3), False, "doc", "ann-Readme: three classes 1, 2, 3"),
    "Shopper": Domain((False, True), False, "doc", "UCI 468 page: Revenue, boolean"),
    "Digit": Domain(tuple(range(10)), False, "doc", "optdigits.names: class codes 0..9"),
    "GermanCredit": Domain((0, 1), False, "doc", _GERMAN_DOC + ": credit_risk 0 = bad, 1 = good"),
    "Bank": Domain(("no", "yes"), False, "doc", _BANK_DOC + ": y, has the client subscribed"),
    "Spam": Domain((0, 1), False, "doc", "spambase.names: 1 = spam, 0 = not spam"),
    "Adult": Domain(("<=50K", ">50K"), False, "doc", "adult.names: >50K, <=50K"),
}


def _check_dataset(dataset: str) -> None:
    if dataset not in DOMAINS:
        raise ValueError(f"dataset must be one of {', '.join(DOMAINS)}; got {dataset!r}")


def encode(values, domain: Domain, name: str) -> np.ndarray:
    """Codes of ``values`` in ``domain``: the index of the listed value, ``len(values)`` for 'other'.

    A per-row map fixed by the public schema (it costs no privacy).

    Raises
    ------
    ValueError
        If a value is not listed and the domain has no ``other`` code.
    """
    index = {v: i for i, v in enumerate(domain.values)}
    column = pd.Series(values, dtype=object)
    # One dictionary look-up per distinct value, not per row: factorize gives each row the
    # position of its value among the distinct ones, and -1 for a missing value (None, NaN, NaT,
    # pd.NA, as pd.isna says), which has no code.
    positions, distinct = pd.factorize(column, use_na_sentinel=True)
    lookup = np.array([index.get(v, -1) for v in distinct] + [-1], dtype=np.int64)
    codes = lookup[positions]
    unknown = codes < 0
    if unknown.any():
        if not domain.other:
            bad = sorted({str(v) for v in column[unknown]})[:5]
            raise ValueError(f"{name} has values {bad} outside its public domain {list(domain.values)}")
        codes[unknown] = len(domain.values)
    return codes


def domains(dataset: str) -> dict[str, Domain]:
    """The public domains of the categorical attributes of ``dataset``."""
    _check_dataset(dataset)
    return dict(DOMAINS[dataset])


def classes(dataset: str) -> Domain:
    """The public classes of ``dataset``."""
    _check_dataset(dataset)
    return CLASSES[dataset]


def table(dataset: str) -> pd.DataFrame:
    """One row per categorical attribute of ``dataset`` and one for the label: size, other, kind, source."""
    _check_dataset(dataset)
    rows = {a: d for a, d in DOMAINS[dataset].items()}
    rows["(label)"] = CLASSES[dataset]
    return pd.DataFrame([{"size": d.size, "other": d.other, "kind": d.kind, "source": d.source}
                         for d in rows.values()], index=list(rows))


def check(dataset: str, frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """Values of ``frame`` outside the listed public values (sent to 'other' or refused), one row per attribute."""
    _check_dataset(dataset)
    out = []
    for name, d in list(DOMAINS[dataset].items()) + [(label, CLASSES[dataset])]:
        col = frame[name].astype(object)
        listed = set(d.values)
        bad = col[[(pd.isna(v) or v not in listed) for v in col]]
        if len(bad):
            out.append({"attribute": name, "outside": len(bad), "values": sorted({str(v) for v in bad})[:8],
                        "other": d.other})
    return pd.DataFrame(out, columns=["attribute", "outside", "values", "other"])
