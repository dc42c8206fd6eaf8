"""The model of eq. (10): its counts, the public shapes of its releases, and the releases.

:func:`count` computes the sufficient statistics of a categorical naive Bayes
model (class counts :math:`N_j` and attribute-class counts :math:`N^k_{jc}`),
:func:`model_spec` the public shapes of its :math:`K + 1` releases, and
:func:`release_parameters` releases the log-parameters through one mechanism
object per release (a :class:`lib.mechanisms.protocol.ModelCalibration`),
``n_draws`` independent times. The estimator around them is
:class:`lib.models.naive_bayes.PrivateNaiveBayes`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from lib import validation
from lib.mechanisms.protocol import ModelCalibration, ReleaseSpec, release_class
from lib.models.naive_bayes.domain import check_classes, check_codes, model_domain
from lib.models.naive_bayes.scoring import row_chunks

__all__ = ["count", "log_releases", "model_spec", "nonnegative_counts", "release_parameters",
           "releases_of"]


def _codes(X, y, n_values, n_classes):
    """Validate integer codes and the public domains they index (no private value in a message)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] < 1 or not np.issubdtype(X.dtype, np.integer):
        raise ValueError(f"X must be a 2-D integer array with at least one column; got {X.dtype} {X.shape}")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"y must be a 1-D integer array with one entry per row of X; got {y.dtype} {y.shape}"
        )
    n_values, n_classes = model_domain(n_values, X.shape[1], n_classes)
    X = check_codes(X, "X", n_values)
    y = check_classes(y, "y", n_classes)
    return X, y, n_values, n_classes


def count(X: Any, y: Any, n_values: Sequence[int], n_classes: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sufficient statistics of eq. (10): class counts and attribute-class counts.

    Parameters
    ----------
    X : array_like of int, shape (n, K)
        Attribute codes, column :math:`k` in :math:`[0, n_k)`.
    y : array_like of int, shape (n,)
        Class codes in :math:`[0, d)`.
    n_values : array_like of int, shape (K,)
        The domain sizes :math:`n_k = |\\mathcal X_k| \\ge 2` (public).
    n_classes : int
        The number of classes :math:`d \\ge 2`.

    Returns
    -------
    class_counts : ndarray, shape (d,)
        :math:`N_j`, the number of rows of class :math:`j`.
    feature_counts : list of ndarray, shape (d, n_k)
        :math:`N^k_{jc}`, the number of rows of class :math:`j` with :math:`x_k = c`.
        One histogram of all :math:`n` rows per attribute, so that replacing one
        row moves at most two of its cells, by one each.

    Examples
    --------
    >>> N, Nk = count([[0, 1], [1, 1], [1, 0]], [0, 0, 1], n_values=[2, 3], n_classes=2)
    >>> N, Nk[1]
    (array([2., 1.]), array([[0., 2., 0.],
           [1., 0., 0.]]))
    """
    X, y, n_values, n_classes = _codes(X, y, n_values, n_classes)
    offsets = np.concatenate([[0], np.cumsum(n_values)])
    total = int(offsets[-1])
    # One bincount for all attributes: cell (class, offset_k + value) of a (d, D) table,
    # one chunk of rows at a time (integer counts: the sum over chunks is exact).
    table = np.zeros(n_classes * total, dtype=np.int64)
    for a, b in row_chunks(X.shape[0], X.shape[1]):
        flat = (y[a:b, None] * total + offsets[:-1] + X[a:b]).ravel()
        table += np.bincount(flat, minlength=n_classes * total)
    table = table.reshape(n_classes, total).astype(float)
    class_counts = np.bincount(y, minlength=n_classes).astype(float)
    feature_counts = [table[:, offsets[k]:offsets[k + 1]] for k in range(len(n_values))]
    return class_counts, feature_counts


def model_spec(n_values: Sequence[int], n_classes: int, n_total: int) -> ReleaseSpec:
    """The public shapes of a naive Bayes model's :math:`K + 1` releases.

    Release 0 is the class counts (one row of ``n_classes`` cells, a class
    prior), release :math:`k` the table of attribute :math:`k` (``n_classes``
    rows of ``n_values[k]`` cells).

    Examples
    --------
    >>> model_spec([2, 3], 2, 100).shapes
    ((1, 2), (2, 2), (2, 3))
    """
    n_values, d = model_domain(n_values, np.size(n_values), n_classes)
    n_total = validation.integer(n_total, "n_total", 0)
    return ReleaseSpec(((1, int(d)),) + tuple((int(d), int(v)) for v in n_values), int(n_total), (0,))


def releases_of(mechanism: Any, n_releases: int) -> tuple:
    """The per-release objects of a :class:`lib.mechanisms.protocol.ModelCalibration` or a sequence of objects."""
    if isinstance(mechanism, ModelCalibration):
        if not mechanism.attained:
            raise ValueError(f"the {mechanism.mechanism!r} calibration did not attain its target: "
                             f"{mechanism.parameters.get('reason', '')}")
        mechanism = mechanism.releases
    try:
        objects = tuple(mechanism)
    except TypeError:
        objects = None
    if objects is None or len(objects) != n_releases or not all(
            callable(getattr(m, "release", None)) for m in objects):
        raise ValueError(
            f"mechanism must be a ModelCalibration or a sequence of {n_releases} objects with a "
            f"release(counts, rng) method, one per release in release order; got {mechanism!r}")
    return objects


def log_releases(objects: Sequence[Any], tables: Sequence[np.ndarray], n_draws: int, rng: Any) -> list[np.ndarray]:
    """``n_draws`` independent releases of every table by its object, as log-probabilities.

    Release :math:`i` draws from ``rng`` after release :math:`i - 1` (the order
    fixes the random stream). The objects' closest common class releases them
    (:meth:`lib.mechanisms.protocol.Mechanism.log_release_tables`: table by table
    by default, all tables in one buffer for the Dirichlet and noise
    mechanisms, with the same draws and arithmetic, bit for bit). Every output
    must be a finite log-distribution of the table's shape. The tables must be
    validated finite non-negative float arrays (the callers,
    :func:`release_parameters` and :func:`lib.models.bayesian_network.release_tables`,
    check them).
    """
    return release_class(objects).log_release_tables(objects, tables, n_draws, rng)


def release_parameters(class_counts: Any, feature_counts: Sequence[Any], mechanism: Any, *, n_draws: int = 1,
                       rng: Any = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """Release the log-parameters of the model, ``n_draws`` independent times.

    ``mechanism`` holds one object per release (a
    :class:`lib.mechanisms.protocol.ModelCalibration`, e.g. from
    ``DirichletMechanism.calibrate(RenyiDP(lam, epsilon), model_spec(...))``, or a
    sequence of :math:`K + 1` objects): the class counts first, then attribute
    :math:`k` with object :math:`k + 1`, each row of a table released as a
    distribution over the values of the attribute. The accounting of the whole
    model is the calibration's (:meth:`lib.mechanisms.protocol.Mechanism.calibrate`
    splits an RDP budget equally by :meth:`lib.privacy.guarantees.Guarantee.split`,
    :math:`\\varepsilon/(K+1)` per release, Proposition 7.1).

    Returns
    -------
    log_prior : ndarray, shape (n_draws, d)
    log_feature : list of ndarray, shape (n_draws, d, n_k)
        Natural logarithms of released probabilities; all finite.
    """
    objects = releases_of(mechanism, len(feature_counts) + 1)
    n_draws = validation.integer(n_draws, "n_draws")
    rng = validation.generator(rng)
    names = ["class_counts"] + [f"feature_counts[{k}]" for k in range(len(feature_counts))]
    counts = [validation.as_float(t, name) for t, name in zip([class_counts, *feature_counts], names)]
    # one check of all the tables at once; table by table only to name the one that fails
    if not _nonnegative_finite(counts):
        for t, name in zip(counts, names):
            nonnegative_counts(t, name)
    logs = log_releases(objects, counts, n_draws, rng)
    return logs[0], logs[1:]


def nonnegative_counts(table: Any, name: str) -> np.ndarray:
    """A table of private counts as a float array: finite and non-negative, else a ValueError naming the
    table (never the offending count or its cell)."""
    arr = validation.as_float(table, name)
    if arr.size and not (np.isfinite(arr.max()) and arr.min() >= 0):
        raise ValueError(f"{name} must hold finite counts in [0, inf); it holds a negative or non-finite "
                         "entry (which one is not shown: the counts are private)")
    return arr


def _nonnegative_finite(arrays):
    """Whether every entry of the float arrays is finite and non-negative (two reductions in all)."""
    flat = np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.empty(0)
    return not flat.size or bool(flat.min() >= 0 and np.isfinite(flat.max()))
