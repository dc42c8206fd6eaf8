"""Categorical naive Bayes with privately released parameters (Section 5.1).

The model of eq. (10): a class prior :math:`\\pi_j = \\Pr[y = j]` and, for every
attribute :math:`k` and class :math:`j`, a distribution
:math:`\\theta^k_{j\\cdot} = \\Pr[x_k = \\cdot \\mid y = j]` over the values of that
attribute, so that

.. math::
    \\Pr[y = j \\mid x_1, \\dots, x_K] \\propto \\pi_j \\prod_{k=1}^K \\theta^k_{j x_k}.

A mechanism releases :math:`\\pi` from the class counts :math:`N_j` and each row
:math:`\\theta^k_{j\\cdot}` from the counts :math:`N^k_{jc}`, :math:`c \\in \\mathcal X_k`
(one release per attribute, all class rows at once). The privacy budget is split
by :func:`release_budget`, the one place where the accounting lives.

Everything is vectorised over a batch of independent releases (``n_draws``), so
that an experiment draws all its repetitions at once.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from . import _validate
from .baselines import _NoiseMechanism, _normalise_rows
from .mechanism import DirichletMechanism
from .protocol import ModelCalibration, ReleaseSpec, get

def release_budget(epsilon, n_attributes):
    """RDP level of each release of a private naive Bayes model (Proposition 7.1).

    A model with :math:`K` attributes makes :math:`K + 1` releases: the class
    counts, and one table of counts per attribute. If each is
    :math:`(\\lambda, \\varepsilon/(K+1))`-RDP, their composition (Lemma 1, basic
    composition of RDP) is :math:`(\\lambda, \\varepsilon)`-RDP.

    Parameters
    ----------
    epsilon : array_like
        The total RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    n_attributes : int
        The number of attributes :math:`K \\ge 1`.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon / (K + 1)`.

    Examples
    --------
    >>> release_budget(1.0, n_attributes=9)
    0.1
    """
    epsilon = _validate.positive(epsilon, "epsilon")
    n_attributes = _validate.integer(n_attributes, "n_attributes")
    out = epsilon / (int(n_attributes) + 1)
    return float(out) if out.ndim == 0 else out


def _domain(n_values, n_columns, n_classes):
    """Validate public domain sizes and the number of classes; refuse absurd model sizes."""
    n_values = np.asarray(n_values)
    if (n_values.shape != (n_columns,) or not np.issubdtype(n_values.dtype, np.integer)
            or np.any(n_values < 2)):
        raise ValueError(
            f"n_values must hold one integer in [2, inf) per column of X ({n_columns}); got {n_values!r}"
        )
    n_classes = _validate.integer(n_classes, "n_classes", 2)
    # exact Python integers: a sum of huge int64 values must not wrap around
    _validate.cells(n_classes * sum(int(v) for v in n_values),
                    f"a naive Bayes model with n_classes = {n_classes} and sum(n_values) = "
                    f"{sum(int(v) for v in n_values)}", MAX_CELLS)
    return n_values.astype(np.int64), int(n_classes)


def _codes(X, y, n_values, n_classes):
    """Validate integer codes and the public domains they index."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] < 1 or not np.issubdtype(X.dtype, np.integer):
        raise ValueError(f"X must be a 2-D integer array with at least one column; got {X.dtype} {X.shape}")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"y must be a 1-D integer array with one entry per row of X; got {y.dtype} {y.shape}"
        )
    n_values, n_classes = _domain(n_values, X.shape[1], n_classes)
    X = _validate.codes(X, "X", n_values)
    y = _validate.labels(y, "y", n_classes)
    return X, y, n_values, n_classes


#: Largest number of cells of a model (classes times the summed domain sizes);
#: the same cap as :data:`lib.bayesian_network.MAX_CELLS`.
MAX_CELLS = _validate.MAX_CELLS


def count(X, y, n_values, n_classes):
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
    for a, b in _chunks(X.shape[0], X.shape[1]):
        flat = (y[a:b, None] * total + offsets[:-1] + X[a:b]).ravel()
        table += np.bincount(flat, minlength=n_classes * total)
    table = table.reshape(n_classes, total).astype(float)
    class_counts = np.bincount(y, minlength=n_classes).astype(float)
    feature_counts = [table[:, offsets[k]:offsets[k + 1]] for k in range(len(n_values))]
    return class_counts, feature_counts


def model_spec(n_values, n_classes, n_total) -> ReleaseSpec:
    """The public shapes of a naive Bayes model's :math:`K + 1` releases.

    Release 0 is the class counts (one row of ``n_classes`` cells, a class
    prior), release :math:`k` the table of attribute :math:`k` (``n_classes``
    rows of ``n_values[k]`` cells).

    Examples
    --------
    >>> model_spec([2, 3], 2, 100).shapes
    ((1, 2), (2, 2), (2, 3))
    """
    n_values, d = _domain(n_values, np.size(n_values), n_classes)
    n_total = _validate.integer(n_total, "n_total", 0)
    return ReleaseSpec(((1, int(d)),) + tuple((int(d), int(v)) for v in n_values), int(n_total), (0,))


def releases_of(mechanism, n_releases):
    """The per-release objects of a :class:`lib.protocol.ModelCalibration` or a sequence of objects."""
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


def log_releases(objects, tables, n_draws, rng):
    """``n_draws`` independent releases of every table by its object, as log-probabilities.

    Release :math:`i` draws from ``rng`` after release :math:`i - 1` (the order
    fixes the random stream). Each object's ``log_release`` is used where it
    has one (exact logs of a non-private estimate), else the log of ``release``.
    Every output must be a finite log-distribution of the table's shape.
    The tables must be validated finite non-negative float arrays (the callers,
    :func:`release_parameters` and :func:`lib.bayesian_network.release_tables`,
    check them). When every object is an unmodified Dirichlet or noise
    mechanism, the tables are released together (:func:`_batched_logs`): the
    same draws from the same stream and the same arithmetic, bit for bit.
    """
    batched = _batched_logs(objects, tables, n_draws, rng)
    if batched is not None:
        return batched
    out = []
    for k, (mech, t) in enumerate(zip(objects, tables)):
        batch = np.broadcast_to(t, (n_draws,) + t.shape)
        if hasattr(mech, "log_release"):
            logs = np.asarray(mech.log_release(batch, rng), dtype=float)
        else:
            logs = np.log(np.asarray(mech.release(batch, rng), dtype=float))
        if logs.shape != batch.shape:
            raise ValueError(f"mechanism {k} returned shape {logs.shape}; expected {batch.shape}")
        if not np.isfinite(logs).all():
            raise ValueError(f"mechanism {k} returned a probability that is zero or not finite")
        out.append(logs)
    return out


def _stock(objects, base, methods):
    """Whether every object is a ``base`` whose class keeps ``base``'s ``methods``, without ``log_release``."""
    return (all(issubclass(cls, base) and not hasattr(cls, "log_release")
                and all(getattr(cls, name) is getattr(base, name) for name in methods)
                for cls in {type(m) for m in objects})
            and not any("log_release" in getattr(m, "__dict__", ()) for m in objects))


def _batched_logs(objects, tables, n_draws, rng):
    """:func:`log_releases` of stock Dirichlet or noise mechanisms in a few array operations, else None.

    The variates of all tables are drawn by one call into one buffer, in
    release order (a Generator fills an array element by element, so the
    stream and the values are those of one call per table), and normalised,
    logged and checked together; every entry is computed by the same
    operations as :meth:`lib.DirichletMechanism.release` or
    :meth:`lib.baselines.GaussianMechanism.release` of its table. None (nothing
    drawn) where the objects are of other or mixed kinds, a table has fewer
    than two columns, or a Dirichlet batch needs the rare paths of ``release``
    (shape parameters below 1 or overflowing): the caller then releases table
    by table.
    """
    if not objects or not all(isinstance(t, np.ndarray) and t.ndim and t.shape[-1] >= 2 for t in tables):
        return None
    if _stock(objects, DirichletMechanism, ("release", "concentration")):
        flat, views = _buffer(tables, n_draws)
        with np.errstate(over="ignore"):
            for m, v, t in zip(objects, views, tables):
                np.multiply(t, m.r, out=v)  # release's concentration r f + alpha, entry by entry
                v += m.alpha
        if flat.size and not (flat.min() >= 1 and np.isfinite(flat.max())):
            return None
        rng.standard_gamma(flat, out=flat)
        _normalise_rows(flat, views)
    elif _stock(objects, _NoiseMechanism, ("release", "noisy_counts")):
        flat, views = _buffer(tables, n_draws)
        _NoiseMechanism._release_tables(objects, tables, views, flat, rng)
    else:
        return None
    np.log(flat, out=flat)
    if not np.isfinite(flat).all():
        k = next(k for k, v in enumerate(views) if not np.isfinite(v).all())
        raise ValueError(f"mechanism {k} returned a probability that is zero or not finite")
    return views


def _buffer(tables, n_draws):
    """One float buffer for ``n_draws`` releases of every table, and its (n_draws, rows, d) views in order."""
    sizes = [n_draws * t.size for t in tables]
    flat = np.empty(sum(sizes))
    ends = np.cumsum(sizes).tolist()
    views = [flat[e - s:e].reshape((n_draws,) + t.shape) for s, e, t in zip(sizes, ends, tables)]
    return flat, views


def release_parameters(class_counts, feature_counts, mechanism, *, n_draws=1, rng=None):
    """Release the log-parameters of the model, ``n_draws`` independent times.

    ``mechanism`` holds one object per release (a
    :class:`lib.protocol.ModelCalibration`, e.g. from
    ``DirichletMechanism.calibrate_rdp(epsilon, lam, model_spec(...))``, or a
    sequence of :math:`K + 1` objects): the class counts first, then attribute
    :math:`k` with object :math:`k + 1`, each row of a table released as a
    distribution over the values of the attribute. The accounting of the whole
    model is the calibration's (:meth:`lib.protocol.Mechanism.calibrate_rdp`
    splits an RDP budget equally, :math:`\\varepsilon/(K+1)` per release,
    Proposition 7.1).

    Returns
    -------
    log_prior : ndarray, shape (n_draws, d)
    log_feature : list of ndarray, shape (n_draws, d, n_k)
        Natural logarithms of released probabilities; all finite.
    """
    objects = releases_of(mechanism, len(feature_counts) + 1)
    n_draws = _validate.integer(n_draws, "n_draws")
    rng = _validate.generator(rng)
    names = ["class_counts"] + [f"feature_counts[{k}]" for k in range(len(feature_counts))]
    counts = [_validate._as_float(t, name) for t, name in zip([class_counts, *feature_counts], names)]
    # one check of all the tables at once; table by table only to name the one that fails
    if not _nonnegative_finite(counts):
        for t, name in zip(counts, names):
            _validate.nonnegative(t, name)
    logs = log_releases(objects, counts, n_draws, rng)
    return logs[0], logs[1:]


def _nonnegative_finite(arrays):
    """Whether every entry of the float arrays is finite and non-negative (two reductions in all)."""
    flat = np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.empty(0)
    return not flat.size or bool(flat.min() >= 0 and np.isfinite(flat.max()))


#: Most rows of ``X`` handled at a time by :func:`count`, :func:`log_proba`,
#: :func:`scores` and :class:`PrivateNaiveBayes`: the temporaries of a chunk bound
#: the memory, whatever the number of rows.
CHUNK_ROWS = 1 << 17
#: Most scores (rows times ``B d``) of one chunk: 2 MB, so that a chunk's scores
#: stay in cache while the attributes' log-probabilities are added to them.
CHUNK_CELLS = 1 << 18


def _model(X, log_prior, log_feature, n_values):
    """Validate a batch of models and the codes they score; stack the tables.

    Returns the codes, the log-prior (B, d), the stacked log-tables as one
    contiguous (sum n_k, B d) matrix and ``n_values``.
    """
    n_values = _validate.integer_array(n_values, "n_values")
    if n_values.ndim != 1 or n_values.size < 1 or np.any(n_values < 2):
        raise ValueError(f"n_values must be a 1-D array of integers in [2, inf); got {n_values!r}")
    X = _validate.codes(X, "X", n_values)
    log_prior = _validate._as_float(log_prior, "log_prior")
    if log_prior.ndim != 2 or log_prior.shape[1] < 2:
        raise ValueError(f"log_prior must have shape (B, d) with d >= 2; got {log_prior.shape}")
    B, d = log_prior.shape
    if len(log_feature) != n_values.size:
        raise ValueError(f"log_feature must hold one table per attribute ({n_values.size}); got {len(log_feature)}")
    for k, t in enumerate(log_feature):
        if np.shape(t) != (B, d, int(n_values[k])):
            raise ValueError(f"log_feature[{k}] must have shape (B, d, n_values[{k}]) = "
                             f"{(B, d, int(n_values[k]))}; got {np.shape(t)}")
    weights = np.concatenate([np.asarray(t, dtype=float) for t in log_feature], axis=-1)  # (B, d, D)
    weights = np.ascontiguousarray(weights.reshape(B * d, -1).T)  # (D, B d)
    return X, log_prior, weights, n_values


def _chunks(n, width=1):
    """Row ranges ``(start, stop)`` covering ``range(n)``, each of at most ``CHUNK_ROWS`` rows
    and (from 1024 rows up) at most ``CHUNK_CELLS`` cells of ``width`` values per row."""
    step = max(1, min(CHUNK_ROWS, max(1024, CHUNK_CELLS // max(int(width), 1))))
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def _joint(X, log_prior, weights, n_values):
    """Unnormalised log posteriors :math:`\\log\\pi_j + \\sum_k \\log\\theta^k_{jx_k}`, shape (rows, B, d).

    The rows of the stacked log-tables that the codes pick, added attribute
    by attribute in order (the sum a sparse product of the rows' indicator
    matrix with the tables would take, without building it); rows first, so
    that each row's ``B d`` scores are contiguous. ``X`` must be validated codes.
    """
    B, d = log_prior.shape
    cols = X + np.concatenate([[0], np.cumsum(n_values)[:-1]])  # (rows, K) rows of ``weights``
    out = weights[cols[:, 0]]  # (rows, B d), a new array
    for k in range(1, cols.shape[1]):
        out += weights[cols[:, k]]
    out = out.reshape(-1, B, d)
    out += log_prior
    return out


#: Widest class axis whose reductions :func:`_log_normaliser` and :func:`scores` take column by
#: column (strided whole-array operations, faster than numpy's reductions over a short last axis).
COLUMN_CLASSES = 16


def _column_sum(e):
    """``e.sum(axis=-1)`` for a last axis of at most :data:`COLUMN_CLASSES`, bit for bit.

    The additions of numpy's pairwise summation of one row, done on whole
    columns: below 8 entries in order; from 8, eight running sums over
    blocks of eight, combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
    (r6 + r7))``, then the remaining entries in order (the unit tests check
    the bits against ``sum``).
    """
    d = e.shape[-1]
    if d < 8:
        out = e[..., 0] + e[..., 1]
        for j in range(2, d):
            out += e[..., j]
        return out
    r = [e[..., j].copy() for j in range(8)]
    i = 8
    while i + 8 <= d:
        for j in range(8):
            r[j] += e[..., i + j]
        i += 8
    out = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for j in range(i, d):
        out += e[..., j]
    return out


def _column_max(scores):
    """``(max, argmax)`` over the last axis (the first index of the largest entry), column by column.

    For scores without NaN (the maximum is exact in any order; ties keep the
    first class, as ``numpy.argmax``).
    """
    top = scores[..., 0].copy()
    arg = np.zeros(top.shape, dtype=np.intp)
    for j in range(1, scores.shape[-1]):
        col = scores[..., j]
        ahead = col > top
        np.copyto(arg, j, where=ahead)
        np.maximum(top, col, out=top)
    return top, arg


def _log_normaliser(scores, top=None):
    """:math:`\\log\\sum_j e^{s_j}` over the last axis of contiguous scores.

    Two classes: ``numpy.logaddexp`` (one pass); more: the maximum-shifted sum
    (``top``, the maximum over the last axis, if the caller has it).
    Scores that are not all finite go to scipy's ``logsumexp``.
    """
    d = scores.shape[-1]
    if d == 2:
        return np.logaddexp(scores[..., 0], scores[..., 1])
    if top is None:
        top = _column_max(scores)[0] if d <= COLUMN_CLASSES else scores.max(axis=-1)
    if not np.isfinite(top).all():
        return logsumexp(scores, axis=-1)
    if d > COLUMN_CLASSES:
        e = scores - top[..., None]
        return top + np.log(np.exp(e, out=e).sum(axis=-1))
    e = np.empty_like(scores)
    for j in range(d):  # s_j - max by columns: a broadcast over a short last axis is slow
        np.subtract(scores[..., j], top, out=e[..., j])
    return top + np.log(_column_sum(np.exp(e, out=e)))


def log_proba(X, log_prior, log_feature, n_values):
    """Log posterior class probabilities of a batch of models at once.

    :math:`\\log\\Pr[y = j \\mid x] = \\log\\pi_j + \\sum_k \\log\\theta^k_{jx_k}`
    minus its log-sum-exp over :math:`j`. The sum over attributes gathers the
    rows of the stacked log-tables that the codes pick, one chunk of rows at a
    time (the temporaries are bounded by a chunk; the result itself has
    ``B n d`` entries). To score a batch by cross-entropy and accuracy,
    :func:`scores` does the same without storing the result.

    Parameters
    ----------
    X : array_like of int, shape (n, K)
    log_prior : ndarray, shape (B, d)
    log_feature : list of ndarray, shape (B, d, n_k)
    n_values : array_like of int, shape (K,)

    Returns
    -------
    ndarray, shape (B, n, d)
    """
    X, log_prior, weights, n_values = _model(X, log_prior, log_feature, n_values)
    B, d = log_prior.shape
    out = np.empty((B, X.shape[0], d))
    for a, b in _chunks(X.shape[0], B * d):
        s = _joint(X[a:b], log_prior, weights, n_values)
        s -= _log_normaliser(s)[..., None]
        out[:, a:b] = s.transpose(1, 0, 2)
    return out


def scores(X, y, log_prior, log_feature, n_values):
    """Test cross-entropy and accuracy of a batch of models, in one pass over the rows.

    The same numbers as :func:`cross_entropy` and :func:`accuracy` of
    :func:`log_proba` (to rounding: the sums are taken in another order), without
    storing the (B, n, d) log posteriors: each chunk of rows is scored, picked
    at its labels and reduced. Accuracy takes the first most probable class of
    the unnormalised scores, which orders the classes as the normalised ones.
    Two classes with finite log-parameters are scored from each row's
    log-odds, gathered from one table of per-attribute differences
    (:func:`_binary_scores`; the same sums grouped otherwise, equal to about
    1e-14 relative); short class axes are reduced column by column (the bits
    of numpy's reductions).

    Parameters
    ----------
    X : array_like of int, shape (n, K)
    y : array_like of int, shape (n,)
        Class codes in ``[0, d - 1]``.
    log_prior : ndarray, shape (B, d)
    log_feature : list of ndarray, shape (B, d, n_k)
    n_values : array_like of int, shape (K,)

    Returns
    -------
    cross_entropy : ndarray, shape (B,)
        :math:`-\\frac1n\\sum_i \\log\\Pr[y = y_i \\mid x_i]`.
    accuracy : ndarray, shape (B,)
        Share of rows whose most probable class is the label.

    Examples
    --------
    >>> X = np.array([[0, 1], [1, 0]]); y = np.array([0, 1])
    >>> prior = np.log([[0.5, 0.5]]); tables = [np.log([[[0.9, 0.1], [0.2, 0.8]]])] * 2
    >>> ce, acc = scores(X, y, prior, tables, [2, 2])
    >>> acc.tolist(), bool(ce[0] > 0)
    ([0.5], True)
    """
    X, log_prior, weights, n_values = _model(X, log_prior, log_feature, n_values)
    B, d = log_prior.shape
    y = _validate.labels(y, "y", d)
    n = X.shape[0]
    if y.shape[0] != n:
        raise ValueError(f"y must hold one label per row of X ({n}); got {y.shape[0]}")
    if n == 0:
        raise ValueError("X must hold at least one row to score")
    loss, hits = np.zeros(B), np.zeros(B)
    if d == 2:  # the sign that turns s_1 - s_0 into s_other - s_y (an exact negation for label 1)
        sign = np.where(y == 1, -1.0, 1.0)[:, None]
        margins = _margins(log_prior, weights)
        if margins is not None:
            return _binary_scores(X, y, sign, *margins, n_values)
    for a, b in _chunks(n, B * d):
        s = _joint(X[a:b], log_prior, weights, n_values)  # (rows, B, d)
        labels = y[a:b, None]
        if d == 2:
            # -log Pr[y | x] = log(1 + e^(s_other - s_y)); class 1 wins only when strictly ahead
            margin = s[..., 1] - s[..., 0]
            hits += ((margin > 0) == (labels == 1)).sum(axis=0)
            margin *= sign[a:b]
            loss += np.logaddexp(0.0, margin, out=margin).sum(axis=0)
            continue
        picked = s[np.arange(b - a), :, y[a:b]]  # (rows, B): the score of each row's label
        if d <= COLUMN_CLASSES:
            top, best = _column_max(s)
            if np.isfinite(top).all():  # no NaN: the column argmax is numpy's
                loss += (_log_normaliser(s, top) - picked).sum(axis=0)
                hits += (best == labels).sum(axis=0)
                continue
        loss += (_log_normaliser(s) - picked).sum(axis=0)
        hits += (np.argmax(s, axis=-1) == labels).sum(axis=0)
    return loss / n, hits / n


def _margins(log_prior, weights):
    """Two classes: the log-odds tables :math:`\\log\\theta^k_{1c} - \\log\\theta^k_{0c}`, shape (D, B),
    and prior log-odds (B,); None unless all are finite."""
    B = log_prior.shape[0]
    w = weights.reshape(weights.shape[0], B, 2)
    table = np.subtract(w[..., 1], w[..., 0])  # a new C-contiguous (D, B) array
    prior = log_prior[:, 1] - log_prior[:, 0]
    if not (np.isfinite(table).all() and np.isfinite(prior).all()):
        return None
    return table, prior


def _binary_scores(X, y, sign, table, prior, n_values):
    """:func:`scores` of two classes from the log-odds :math:`m = s_1 - s_0` of each row.

    :math:`m = \\sum_k (\\log\\theta^k_{1x_k} - \\log\\theta^k_{0x_k}) + \\log\\pi_1 - \\log\\pi_0`
    is gathered from one (D, B) table, half the values of the two class scores;
    the loss is :math:`\\log(1 + e^{\\mp m})` and class 1 wins when :math:`m > 0`.
    The same sums as the difference of the two class scores, grouped
    otherwise (equal to about 1e-14 relative on the book's grids; the
    accuracies there are identical).
    """
    n, B = X.shape[0], prior.shape[0]
    offsets = np.concatenate([[0], np.cumsum(n_values)[:-1]])
    loss, hits = np.zeros(B), np.zeros(B)
    for a, b in _chunks(n, B):
        cols = X[a:b] + offsets
        margin = table[cols[:, 0]]  # (rows, B), a new array
        for k in range(1, cols.shape[1]):
            margin += table[cols[:, k]]
        margin += prior
        hits += ((margin > 0) == (y[a:b, None] == 1)).sum(axis=0)
        margin *= sign[a:b]
        loss += np.logaddexp(0.0, margin, out=margin).sum(axis=0)
    return loss / n, hits / n


def cross_entropy(log_probs, y):
    """Mean test cross-entropy :math:`-\\frac1n\\sum_i \\log\\Pr[y = y_i \\mid x_i]`.

    ``log_probs`` has shape (..., n, d); the result has shape (...). Every
    label must be a class code in ``[0, d - 1]`` (one per row).
    """
    log_probs, y = _scored(log_probs, y)
    picked = np.take_along_axis(log_probs, np.broadcast_to(y[:, None], log_probs.shape[:-1] + (1,)), -1)
    return -picked[..., 0].mean(axis=-1)


def accuracy(log_probs, y):
    """Share of rows whose most probable class (first one on ties) is the label.

    ``log_probs`` has shape (..., n, d); every label must be a class code in ``[0, d - 1]``.
    """
    log_probs, y = _scored(log_probs, y)
    return (np.argmax(log_probs, axis=-1) == y).mean(axis=-1)


def _scored(log_probs, y):
    """Validate posterior log-probabilities of shape (..., n, d) and the n labels they score."""
    log_probs = np.asarray(log_probs)
    if log_probs.dtype.kind not in "fiu":
        raise _validate.ArgumentTypeError(f"log_probs must be real; got dtype {log_probs.dtype}")
    if log_probs.ndim < 2 or log_probs.shape[-1] < 2:
        raise ValueError(f"log_probs must have shape (..., n, d) with d >= 2; got {log_probs.shape}")
    y = _validate.labels(y, "y", log_probs.shape[-1])
    if y.shape[0] != log_probs.shape[-2]:
        raise ValueError(f"y must hold one label per row of log_probs ({log_probs.shape[-2]}); got {y.shape[0]}")
    return log_probs, y


class PrivateNaiveBayes:
    """Categorical naive Bayes whose parameters are released by a mechanism.

    Parameters
    ----------
    mechanism : str or lib.protocol.Mechanism subclass, default "dirichlet"
        The mechanism class (or its registry name, :func:`lib.protocol.names`)
        that releases the :math:`K + 1` tables (see :func:`release_parameters`).
    epsilon : float, optional
        Total RDP level :math:`\\varepsilon` of the whole model (required by the
        private mechanisms); :meth:`lib.protocol.Mechanism.calibrate_rdp` gives
        each of the :math:`K+1` releases :math:`\\varepsilon/(K+1)`.
    lam : float, default 5.0
        Renyi order :math:`\\lambda` (Section 5.1 uses 5).
    random_state : int, numpy.random.Generator or None
        Source of the mechanism's noise (and of the random guesses of a
        mechanism that releases uniform tables).

    Attributes
    ----------
    calibration_ : lib.protocol.ModelCalibration
    class_count_ : ndarray, shape (d,)
    feature_count_ : list of ndarray, shape (d, n_k)
    class_log_prior_ : ndarray, shape (d,)
        Log of the released class prior.
    feature_log_prob_ : list of ndarray, shape (d, n_k)
        Log of the released :math:`\\theta^k_{jc}`; row :math:`j` is a distribution
        over the values of attribute :math:`k`.

    Notes
    -----
    Released log-probabilities are finite. The Gaussian and Laplace outputs are
    clipped at a positive floor (:func:`lib.baselines.clip_and_normalise`). A
    Dirichlet draw is a vector of independent Gamma variables divided by their sum,
    with every shape parameter at least :math:`\\alpha \\ge 1`; such a variable is
    below :math:`t` with probability at most :math:`t`, so a probability that
    underflows double precision has chance below :math:`10^{-300}`. The release
    raises rather than return :math:`-\\infty`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, 1], [1, 0], [0, 0]]); y = np.array([0, 0, 1, 1])
    >>> model = PrivateNaiveBayes("dirichlet", epsilon=1.0, random_state=0)
    >>> model.fit(X, y, n_values=[2, 2], n_classes=2).predict_proba(X).shape
    (4, 2)
    """

    def __init__(self, mechanism="dirichlet", epsilon=None, lam=5.0, random_state=None):
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.lam = lam
        self.random_state = random_state

    def __repr__(self) -> str:
        name = getattr(self.mechanism, "name", self.mechanism)
        return f"PrivateNaiveBayes(mechanism={name!r}, epsilon={self.epsilon!r}, lam={self.lam!r})"

    def fit(self, X, y, n_values=None, n_classes=None, *, schema=None):
        """Count, then release the parameters once.

        Parameters
        ----------
        X : array_like of int, shape (n, K)
        y : array_like of int, shape (n,)
        n_values : array_like of int, shape (K,), optional
            The public domain sizes. Required for a private mechanism (or give
            ``schema``): a domain read off ``X`` would make the shape of the
            release reveal a private maximum. Only the non-private estimate
            (``cls.private`` false) may infer ``X.max(axis=0) + 1``.
        n_classes : int, optional
            The public number of classes; required like ``n_values`` (inferred
            as ``y.max() + 1`` only for the non-private estimate).
        schema : object with ``n_values`` and ``n_classes``, optional
            A public schema (e.g. :class:`lib.experiments.preprocessing.Split`
            built by ``binning="public"``) that supplies both; an explicit
            ``n_values`` or ``n_classes`` must agree with it.

        Raises
        ------
        ValueError
            If a private mechanism is given no domain, or ``schema`` disagrees
            with an explicit domain.
        """
        cls = get(self.mechanism)
        X_arr, y_arr = np.asarray(X), np.asarray(y)
        if schema is not None:
            s_values = np.asarray(schema.n_values, dtype=np.int64)
            s_classes = int(schema.n_classes)
            if n_values is not None and not np.array_equal(np.asarray(n_values, dtype=np.int64), s_values):
                raise ValueError("n_values must agree with schema.n_values when both are given")
            if n_classes is not None and int(n_classes) != s_classes:
                raise ValueError(f"n_classes must agree with schema.n_classes = {s_classes}; got {n_classes!r}")
            n_values, n_classes = s_values, s_classes
        # Checked after the arguments are validated and before anything is released.
        missing = " and ".join(n for n, v in (("n_values", n_values), ("n_classes", n_classes)) if v is None)
        if n_values is None and X_arr.ndim == 2 and np.issubdtype(X_arr.dtype, np.integer) and X_arr.size:
            if X_arr.min() < 0:
                raise ValueError(f"X must hold codes in [0, inf) to infer n_values; got {int(X_arr.min())}")
            n_values = np.maximum(X_arr.max(axis=0) + 1, 2)
            # an inferred domain is refused before anything is allocated for it
            _validate.cells(sum(int(v) for v in n_values),
                            f"the domain inferred from X (largest code {int(X_arr.max())})", MAX_CELLS,
                            "; check X or pass the public domain as n_values")
        elif n_values is None:
            n_values = X_arr.shape[1:]
        if n_classes is None and y_arr.ndim == 1 and np.issubdtype(y_arr.dtype, np.integer) and y_arr.size:
            present = np.unique(y_arr)
            if present[0] < 0 or present[-1] >= MAX_CELLS:
                raise ValueError(f"y must hold class codes in [0, {MAX_CELLS - 1}] to infer n_classes; got "
                                 f"{int(present[0] if present[0] < 0 else present[-1])}")
            n_classes = int(max(present[-1] + 1, 2))
            if present.size != present[-1] + 1:
                missing = np.setdiff1d(np.arange(present[-1] + 1), present)
                raise ValueError(
                    f"y must hold the class codes 0..K-1 when n_classes is inferred; classes "
                    f"{missing[:10].tolist()} are absent, which would make empty classes (relabel y, "
                    "or pass n_classes to declare a public domain with empty classes)")
        elif n_classes is None:
            n_classes = 2
        rng = _validate.generator(self.random_state)
        self.class_count_, self.feature_count_ = count(X, y, n_values, n_classes)
        self.n_values_ = np.asarray(n_values, dtype=np.int64)
        self.n_classes_ = int(n_classes)
        self.classes_ = np.arange(self.n_classes_)
        spec = model_spec(self.n_values_, self.n_classes_, len(y_arr))
        if cls.private and self.epsilon is None:
            raise ValueError(f"epsilon is required for the {cls.name!r} mechanism")
        calibration = cls.calibrate_rdp(self.epsilon if cls.private else 1.0, self.lam, spec)
        if cls.private and missing:
            raise ValueError(
                f"{missing} must be given (or a public schema) for the private {cls.name!r} mechanism: "
                "a domain inferred from the training data is a function of the private data and "
                "is not covered by the mechanism's guarantee")
        self.calibration_ = calibration
        prior, tables = release_parameters(self.class_count_, self.feature_count_, self.calibration_,
                                           n_draws=1, rng=rng)
        self.class_log_prior_ = prior[0]
        self.feature_log_prob_ = [t[0] for t in tables]
        self._rng = rng
        return self

    def _check_X(self, X):
        if not hasattr(self, "class_log_prior_"):
            raise ValueError("this PrivateNaiveBayes is not fitted yet; call fit first")
        return _validate.codes(X, "X", self.n_values_)

    def predict_log_proba(self, X):
        """Log posterior class probabilities, shape (n, d)."""
        X = self._check_X(X)
        return log_proba(X, self.class_log_prior_[None], [t[None] for t in self.feature_log_prob_],
                         self.n_values_)[0]

    def predict_proba(self, X):
        """Posterior class probabilities, shape (n, d)."""
        out = self.predict_log_proba(X)
        return np.exp(out, out=out)

    def predict(self, X):
        """The most probable class, the first one on ties.

        A model whose mechanism releases uniform tables (``uninformative``, the
        "Random" model) guesses a class uniformly at random for every row
        instead (its posterior is uniform, so the tie rule would always answer 0).
        """
        X = self._check_X(X)
        if getattr(get(self.mechanism), "uninformative", False):
            return self._rng.integers(self.n_classes_, size=X.shape[0])
        # the unnormalised scores order the classes as the posterior does; one chunk at a time
        X, prior, weights, n_values = _model(X, self.class_log_prior_[None],
                                             [t[None] for t in self.feature_log_prob_], self.n_values_)
        out = np.empty(X.shape[0], dtype=np.int64)
        for a, b in _chunks(X.shape[0], prior.size):
            out[a:b] = np.argmax(_joint(X[a:b], prior, weights, n_values)[:, 0], axis=-1)
        return out
