"""Public ranges of the numerical attributes of the datasets.

Zafarani and Clifton's Algorithm 1 (and Vaidya et al.'s global sensitivities)
need a range :math:`[a_j, b_j]` for every numerical attribute that does not
depend on the data: a range read off the data would itself leak. The ranges
are the ``bounds`` of each dataset's entry in :mod:`lib.experiments.datasets`
(:class:`~lib.experiments.datasets.Bound`); this module looks them up,
tabulates and checks them. Each range says where it comes from:

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

from typing import Sequence

import numpy as np
import pandas as pd

from lib.experiments import datasets
from lib.experiments.datasets import Bound

#: Per dataset, the public range of every numerical attribute: the ``bounds``
#: of each entry of :mod:`lib.experiments.datasets`.
BOUNDS: dict[str, dict[str, Bound]] = {name: dict(d.bounds) for name, d in datasets.REGISTRY.items()}


def _bounds(dataset: str):
    return datasets.get(dataset, "dataset").bounds


def bounds_for(dataset: str, attributes: Sequence[str]) -> np.ndarray:
    """Array of shape (len(attributes), 2) with the public ranges of ``attributes`` of ``dataset``.

    Raises
    ------
    ValueError
        On an unknown dataset or an attribute without a public range.
    """
    ranges = _bounds(dataset)
    missing = [a for a in attributes if a not in ranges]
    if missing:
        raise ValueError(f"no public range for {dataset} attributes {missing}")
    return np.array([[ranges[a].lower, ranges[a].upper] for a in attributes], dtype=float)


def table(dataset: str) -> pd.DataFrame:
    """The ranges of one dataset with their kind and source, one row per attribute."""
    ranges = _bounds(dataset)
    return pd.DataFrame([b._asdict() for b in ranges.values()], index=list(ranges))


def check(dataset: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Attributes of ``frame`` with values outside their public range (an empty frame if none)."""
    rows = []
    for name, b in _bounds(dataset).items():
        x = frame[name].to_numpy(dtype=float)
        out = int(np.sum((x < b.lower) | (x > b.upper)))
        if out:
            rows.append({"attribute": name, "outside": out, "min": np.nanmin(x), "max": np.nanmax(x)})
    return pd.DataFrame(rows, columns=["attribute", "outside", "min", "max"])
