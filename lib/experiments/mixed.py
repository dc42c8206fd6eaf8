"""Mixed naive Bayes on the book's datasets: raw numerical attributes with public ranges.

The experiment layer of chapter 14 (Zafarani and Clifton): :func:`mixed_data`
reads a dataset of Table 1 with its numerical attributes unbinned,
:func:`book_split` gives the book's seeded split, :func:`evaluate` scores
releases of :mod:`lib.gaussian_naive_bayes` on it, and :func:`cross_validate`
runs Zafarani and Clifton's repeated cross-validation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import _validate
from ..gaussian_naive_bayes import draw, fit_statistics, log_proba
from .data import label_column, load
from .preprocessing import EXCLUDED, SEED, TEST_SIZE, _categorical_codes, _is_categorical, _split_rows
from .public_bounds import bounds_for


def mixed_data(name: str) -> dict:
    """Dataset ``name`` of Table 1 with raw numerical attributes and coded categorical ones.

    The same attributes as :func:`lib.experiments.preprocessing.prepare` (minus
    its ``EXCLUDED``), the same whole-data categorical domains and class codes,
    but numerical attributes as raw values with the public ranges of
    :mod:`lib.experiments.public_bounds`, not quantile bins. Constant categorical columns
    are kept (they are constant in the whole data only if the domain has one
    value, which none has).
    """
    frame = load(name).drop(columns=list(EXCLUDED.get(name, ())))
    label = label_column(name)
    y, classes = pd.factorize(frame[label], sort=True)
    cat, n_values, num, cat_names, num_names = [], [], [], [], []
    for col in frame.columns:
        if col == label:
            continue
        if _is_categorical(frame[col]):
            codes, n = _categorical_codes(frame[col])
            cat.append(codes)
            n_values.append(max(n, 2))
            cat_names.append(col)
        else:
            num.append(frame[col].to_numpy(dtype=float))
            num_names.append(col)
    n = len(frame)
    return {"name": name, "X_cat": np.column_stack(cat) if cat else np.zeros((n, 0), np.int64),
            "X_num": np.column_stack(num) if num else np.zeros((n, 0)),
            "y": y.astype(np.int64), "n_values": np.array(n_values, np.int64), "n_classes": len(classes),
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
