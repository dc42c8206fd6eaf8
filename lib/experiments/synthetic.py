"""Synthetic mixed data sets whose label is carried by one kind of attribute (Zafarani and Clifton, Appendix).

Their Figures 15 and 16 compare splits of the budget between numerical and categorical
attributes on two synthetic data sets of 10 000 rows with five attributes of each kind, in
one of which the label drives the numerical attributes and in the other the categorical ones.
They do not say how the label is tied to the attributes; :func:`label_carrier` is the book's
construction, in the dict layout of :func:`lib.experiments.tasks.mixed_naive_bayes.mixed_data`.
"""

from __future__ import annotations

import numpy as np

from lib import validation
from lib.experiments.prepared import Prepared
from lib.experiments.preprocessing import SEED, TEST_SIZE, split_rows

KINDS = ("numerical", "categorical")
"""The two kinds of attribute that can carry the label."""


def label_carrier(which: str, n: int = 10_000, seed: int = 0) -> dict:
    """Five categorical (4 values) and five numerical (on [0, 10]) attributes; the label drives one kind.

    The label :math:`y` is a fair coin. With ``which="numerical"`` the numerical attributes are
    normal with mean :math:`4 + 2y` and standard deviation 1.5, clipped to :math:`[0, 10]`, and
    the categorical ones uniform on :math:`\\{0, 1, 2, 3\\}`; with ``which="categorical"`` the
    numerical attributes are normal with mean 5 and standard deviation 1.5, clipped, and each
    categorical value is, with probability 0.6, uniform on :math:`\\{2y, 2y + 1\\}` and
    otherwise uniform on :math:`\\{0, 1, 2, 3\\}`.

    Parameters
    ----------
    which : {"numerical", "categorical"}
        The kind of attribute that carries the label.
    n : int, optional
        Number of rows, at least 2.
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`, non-negative.

    Returns
    -------
    dict
        ``X_cat`` (n, 5) int, ``X_num`` (n, 5) float, ``y`` (n,) int, ``n_values`` (all 4),
        ``n_classes`` (2), ``bounds`` (5, 2) (all ``[0, 10]``), and empty ``categorical`` and
        ``numerical`` name tuples.
    """
    if which not in KINDS:
        raise ValueError(f"which must be one of {KINDS}; got {which!r}")
    n = validation.integer(n, "n", 2)
    seed = validation.integer(seed, "seed", 0)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    if which == "numerical":
        X_num = rng.normal(4.0 + 2.0 * y[:, None], 1.5, (n, 5)).clip(0, 10)
        X_cat = rng.integers(0, 4, (n, 5))
    else:
        X_num = rng.normal(5.0, 1.5, (n, 5)).clip(0, 10)
        keep = rng.random((n, 5)) < 0.6
        X_cat = np.where(keep, 2 * y[:, None] + rng.integers(0, 2, (n, 5)), rng.integers(0, 4, (n, 5)))
    return {"X_cat": X_cat, "X_num": X_num, "y": y, "n_values": np.full(5, 4), "n_classes": 2,
            "bounds": np.tile([0.0, 10.0], (5, 1)), "categorical": (), "numerical": ()}


def label_carrier_split(which: str, n: int = 10_000, seed: int = 0) -> Prepared:
    """:func:`label_carrier` on the book's seeded 70/30 split, as prepared data of the engine.

    The rows are split by :func:`lib.experiments.preprocessing.split_rows` with the book's seed
    (as :func:`lib.experiments.tasks.mixed_naive_bayes.book_split`): categorical codes in
    ``X_train``/``X_test``, the raw numerical attributes in ``Z_train``/``Z_test``, their public
    range ``[0, 10]`` in ``bounds``, for :class:`lib.experiments.tasks.mixed_naive_bayes.MixedNaiveBayes`.

    Parameters
    ----------
    which, n, seed
        As in :func:`label_carrier`.

    Returns
    -------
    lib.experiments.prepared.Prepared
        Named ``"synthetic: <which>"``, with attributes ``cat0..cat4`` and ``num0..num4``.
    """
    d = label_carrier(which, n, seed)
    train, test = split_rows(len(d["y"]), SEED, TEST_SIZE)
    return Prepared(f"synthetic: {which}", SEED, d["X_cat"][train], d["X_cat"][test], d["y"][train], d["y"][test],
                    d["n_values"], d["n_classes"], tuple(f"cat{j}" for j in range(5)), (0, 1),
                    Z_train=d["X_num"][train], Z_test=d["X_num"][test], bounds=d["bounds"],
                    numerical=tuple(f"num{j}" for j in range(5)))
