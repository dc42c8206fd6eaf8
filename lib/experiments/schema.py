"""The public schema of the datasets: domains and classes, and the encoding they fix.

A private model must not learn its shape from the private data: the number of
values of every categorical attribute and the set of classes come from each
dataset's documentation, never from the rows. They are the ``domains`` and
``classes`` of the dataset's entry in :mod:`lib.experiments.datasets`
(:class:`~lib.experiments.datasets.Domain`); this module encodes values with them and tabulates them.
Every domain says where it comes from, with the kinds of
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

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lib.experiments import datasets
from lib.experiments.datasets import Domain

#: Per dataset, per categorical attribute (the attributes that
#: :func:`lib.experiments.data.load` gives the ``category`` dtype), the public
#: domain: the ``domains`` of each entry of :mod:`lib.experiments.datasets`.
DOMAINS: dict[str, dict[str, Domain]] = {name: dict(d.domains) for name, d in datasets.REGISTRY.items()}

#: The public set of classes of every dataset, in code order (each entry's ``classes``).
CLASSES: dict[str, Domain] = {name: d.classes for name, d in datasets.REGISTRY.items()}


def _entry(dataset: str) -> datasets.Dataset:
    return datasets.get(dataset, "dataset")


def encode(values: ArrayLike, domain: Domain, name: str) -> np.ndarray:
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
    return dict(_entry(dataset).domains)


def classes(dataset: str) -> Domain:
    """The public classes of ``dataset``."""
    return _entry(dataset).classes


def table(dataset: str) -> pd.DataFrame:
    """One row per categorical attribute of ``dataset`` and one for the label: size, other, kind, source."""
    entry = _entry(dataset)
    rows = dict(entry.domains)
    rows["(label)"] = entry.classes
    return pd.DataFrame([{"size": d.size, "other": d.other, "kind": d.kind, "source": d.source}
                         for d in rows.values()], index=list(rows))


def check(dataset: str, frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """Values of ``frame`` outside the listed public values (sent to 'other' or refused), one row per attribute."""
    entry = _entry(dataset)
    out = []
    for name, d in list(entry.domains.items()) + [(label, entry.classes)]:
        col = frame[name].astype(object)
        listed = set(d.values)
        bad = col[[(pd.isna(v) or v not in listed) for v in col]]
        if len(bad):
            out.append({"attribute": name, "outside": len(bad), "values": sorted({str(v) for v in bad})[:8],
                        "other": d.other})
    return pd.DataFrame(out, columns=["attribute", "outside", "values", "other"])
