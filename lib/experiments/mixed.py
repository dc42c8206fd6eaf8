"""Mixed naive Bayes on the book's datasets: raw numerical attributes with public ranges.

The experiment layer of chapter 14 (Zafarani and Clifton): :func:`mixed_data`
reads a dataset of Table 1 with its numerical attributes unbinned and its
categorical domains and classes from the public schema,
:func:`book_split` gives the book's seeded split, :func:`evaluate` scores
releases of :mod:`lib.gaussian_naive_bayes` on it, and :func:`cross_validate`
runs Zafarani and Clifton's repeated cross-validation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import _validate
from ..gaussian_naive_bayes import draw, fit_statistics, log_proba
from . import schema
from .data import label_column, load
from .preprocessing import EXCLUDED, SEED, TEST_SIZE, _split_rows
from .public_bounds import bounds_for


def mixed_data(name: str, *, frame: pd.DataFrame | None = None) -> dict:
    """Dataset ``name`` of Table 1 with raw numerical attributes and coded categorical ones.

    The same attributes as :func:`lib.experiments.preprocessing.prepare` (minus
    its ``EXCLUDED``) and the same *public* encoding of the categorical ones:
    an attribute is categorical iff the public schema
    (:func:`lib.experiments.schema.domains`) lists it, its codes and number of
    values come from its schema domain (one extra code for unlisted or missing
    values iff the domain has ``other``), and the classes are the schema's
    (:func:`lib.experiments.schema.classes`), all as in the public binning of
    :func:`~lib.experiments.preprocessing.prepare`. Numerical attributes stay
    raw, with the public ranges of :mod:`lib.experiments.public_bounds`. No
    domain, class or range is read from the rows (issue 19), so two
    neighbouring files give the same ``n_values``, ``n_classes``, ``bounds``
    and attribute lists.

    Parameters
    ----------
    name : str
        One of :data:`lib.experiments.data.DATASETS`.
    frame : pandas.DataFrame, optional
        The rows to encode in place of the file's
        (:func:`lib.experiments.preprocessing.frame` ``(name)``, the default),
        e.g. a neighbouring data set.

    Raises
    ------
    ValueError
        If a categorical value is outside a domain without ``other``, a class
        is outside the public classes, or a numerical attribute has a missing
        value (the public pipeline has no code for it).
    """
    if frame is None:
        frame = load(name).drop(columns=list(EXCLUDED.get(name, ())))
    label = label_column(name)
    y = schema.encode(frame[label], schema.classes(name), f"label {label!r}")
    doms = schema.domains(name)
    cat, n_values, num, cat_names, num_names = [], [], [], [], []
    for col in frame.columns:
        if col == label:
            continue
        if col in doms:
            cat.append(schema.encode(frame[col], doms[col], f"attribute {col!r}"))
            n_values.append(doms[col].size)
            cat_names.append(col)
        else:
            x = frame[col].to_numpy(dtype=float)
            if np.isnan(x).any():
                raise ValueError(f"numerical attribute {col!r} of {name} has missing values "
                                 "(the public pipeline has no code for them)")
            num.append(x)
            num_names.append(col)
    n = len(frame)
    return {"name": name, "X_cat": np.column_stack(cat) if cat else np.zeros((n, 0), np.int64),
            "X_num": np.column_stack(num) if num else np.zeros((n, 0)),
            "y": y, "n_values": np.array(n_values, np.int64), "n_classes": schema.classes(name).size,
            "bounds": bounds_for(name, num_names) if num_names else np.zeros((0, 2)),
            "categorical": tuple(cat_names), "numerical": tuple(num_names)}


def book_split(n: int):
    """Train and test row indices of the book's seeded 70/30 split (as :func:`lib.experiments.preprocessing.prepare`)."""
    return _split_rows(n, SEED, TEST_SIZE)


def evaluate(data, train, test, method, epsilons, n_repeats, rng, *, likelihood="gaussian", **options):
    """Test accuracy and cross-entropy of ``n_repeats`` releases per epsilon: two arrays (len(epsilons), n_repeats).

    The exact statistics and smooth sensitivities are computed once per
    epsilon; the repeats re-draw only the noise (as the book's other grids).
    """
    rng = _validate.generator(rng)
    d = data
    acc = np.empty((len(epsilons), n_repeats))
    ce = np.empty((len(epsilons), n_repeats))
    y = d["y"][test]
    cache = {}
    for i, eps in enumerate(epsilons):
        st = fit_statistics(d["X_cat"][train], d["X_num"][train], d["y"][train], d["n_values"], d["n_classes"],
                            d["bounds"], method=method, epsilon=eps, cache=cache, **options)
        lp = log_proba(draw(st, n_repeats, rng), d["X_cat"][test], d["X_num"][test], likelihood)
        acc[i] = (lp.argmax(-1) == y).mean(-1)
        ce[i] = -np.take_along_axis(lp, np.broadcast_to(y[None, :, None], lp.shape[:2] + (1,)), -1)[..., 0].mean(-1)
    return acc, ce


def cross_validate(data, variants, epsilons, *, n_folds=10, n_repeats=1, n_draws=10, seed=0):
    """Zafarani-Clifton's protocol (Section 7.2): ``n_repeats`` times ``n_folds``-fold cross-validation.

    Each repeat draws a new fold assignment from ``numpy.random.default_rng(seed)``;
    in each fold every variant is fitted once per epsilon and released
    ``n_draws`` times (the exact statistics and sensitivities do not change
    between draws). ``variants`` maps a label to the keyword arguments of
    :func:`evaluate` (``method`` and options). The paper uses 5 repeats; the
    book's reduced run uses 1 repeat with 10 draws per fold.

    Returns
    -------
    pandas.DataFrame
        Columns ``variant, epsilon, repeat, fold, draw, accuracy, cross_entropy``
        (non-private variants have epsilon NaN).
    """
    rng = np.random.default_rng(seed)
    n = len(data["y"])
    frames = []
    for r in range(n_repeats):
        folds = rng.permutation(n) % n_folds
        for f in range(n_folds):
            train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
            for label, kwargs in variants.items():
                kwargs = dict(kwargs)
                private = kwargs.get("method") != "nonprivate"
                eps = np.asarray(epsilons if private else [1.0], float)
                acc, ce = evaluate(data, train, test, kwargs.pop("method"), eps, n_draws if private else 1, rng,
                                   **kwargs)
                e, dr = np.meshgrid(eps if private else [np.nan], np.arange(acc.shape[1]), indexing="ij")
                frames.append(pd.DataFrame({"variant": label, "epsilon": e.ravel(), "repeat": r, "fold": f,
                                            "draw": dr.ravel(), "accuracy": acc.ravel(),
                                            "cross_entropy": ce.ravel()}))
    return pd.concat(frames, ignore_index=True)
