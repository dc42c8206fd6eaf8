"""Scoring categorical naive Bayes models: log posteriors, cross-entropy and accuracy.

The posterior of eq. (10) of a batch of :math:`B` models (for instance the
``n_draws`` releases of :func:`lib.models.naive_bayes.release_parameters`),

.. math::
    \\log\\Pr[y = j \\mid x] = \\log\\pi_j + \\sum_{k=1}^K \\log\\theta^k_{jx_k}
    - \\log\\sum_{j'} \\exp\\Big(\\log\\pi_{j'} + \\sum_{k=1}^K \\log\\theta^k_{j'x_k}\\Big),

evaluated on integer codes one chunk of rows at a time (:func:`log_proba`), and
the two test metrics of Section 5.1, cross-entropy and accuracy, either from
stored log posteriors (:func:`cross_entropy`, :func:`accuracy`) or in one fused
pass over the rows without storing them (:func:`scores`, with a log-odds path
for two classes and column-by-column reductions over short class axes that
reproduce numpy's bits). The model, its counts and its private release are in
:mod:`lib.models.naive_bayes`, which re-exports the four public functions.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy.special import logsumexp

from lib import validation

#: Most rows of ``X`` handled at a time by :func:`log_proba`, :func:`scores`,
#: :func:`lib.models.naive_bayes.count` and :class:`lib.models.naive_bayes.PrivateNaiveBayes`:
#: the temporaries of a chunk bound the memory, whatever the number of rows.
CHUNK_ROWS = 1 << 17
#: Most scores (rows times ``B d``) of one chunk: 2 MB, so that a chunk's scores
#: stay in cache while the attributes' log-probabilities are added to them.
CHUNK_CELLS = 1 << 18


def _model(X, log_prior, log_feature, n_values):
    """Validate a batch of models and the codes they score; stack the tables.

    Returns the codes, the log-prior (B, d), the stacked log-tables as one
    contiguous (sum n_k, B d) matrix and ``n_values``.
    """
    n_values = validation.integer_array(n_values, "n_values")
    if n_values.ndim != 1 or n_values.size < 1 or np.any(n_values < 2):
        raise ValueError(f"n_values must be a 1-D array of integers in [2, inf); got {n_values!r}")
    X = validation.codes(X, "X", n_values)
    log_prior = validation.as_float(log_prior, "log_prior")
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


def row_chunks(n: int, width: int = 1) -> list[tuple[int, int]]:
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


def stacked_model(log_prior: Any, log_feature: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """One model's log-prior (d,) and its log-tables stacked class by class, a contiguous (d, sum n_k) matrix."""
    prior = np.asarray(log_prior, dtype=float)
    return prior, np.ascontiguousarray(np.concatenate([np.asarray(t, dtype=float) for t in log_feature], axis=-1))


def class_scores(X: np.ndarray, prior: np.ndarray, table: np.ndarray, n_values: Any) -> np.ndarray:
    """``_joint`` of one model (B = 1) as a (rows, d) array, bit for bit, by flat lookups.

    ``table`` is :func:`stacked_model`'s (d, D) matrix; each class's score is
    gathered from its own contiguous row of ``table`` at the flat indices
    ``X + offsets`` (one 1-D ``take`` per attribute, added in attribute order and
    the prior last, the additions of :func:`_joint`), one chunk of rows at a
    time. A row-wise gather of ``(B d)``-wide rows is several times slower for
    one model. ``X`` must be validated codes.
    """
    n, K = X.shape
    d = prior.shape[0]
    offsets = np.concatenate([[0], np.cumsum(n_values)[:-1]]).astype(np.intp)
    out = np.empty((n, d))
    for a, b in row_chunks(n, K):
        cols = (X[a:b] + offsets).T.copy()  # (K, rows): each attribute's flat indices contiguous
        for j in range(d):
            w = table[j]
            acc = w.take(cols[0])
            for k in range(1, K):
                acc += w.take(cols[k])
            acc += prior[j]
            out[a:b, j] = acc
    return out


def model_log_proba(X: np.ndarray, log_prior: Any, log_feature: Sequence[Any], n_values: Any) -> np.ndarray:
    """:func:`log_proba` of one model, shape (n, d): the same values bit for bit, ``X`` validated by the caller."""
    prior, table = stacked_model(log_prior, log_feature)
    out = class_scores(X, prior, table, n_values)
    for a, b in row_chunks(X.shape[0], prior.shape[0]):
        s = out[a:b]
        s -= _log_normaliser(s)[..., None]
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


def log_proba(X: Any, log_prior: Any, log_feature: Sequence[Any], n_values: Any) -> np.ndarray:
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
    for a, b in row_chunks(X.shape[0], B * d):
        s = _joint(X[a:b], log_prior, weights, n_values)
        s -= _log_normaliser(s)[..., None]
        out[:, a:b] = s.transpose(1, 0, 2)
    return out


def scores(X: Any, y: Any, log_prior: Any, log_feature: Sequence[Any], n_values: Any) -> tuple[np.ndarray, np.ndarray]:
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
    y = validation.labels(y, "y", d)
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
    for a, b in row_chunks(n, B * d):
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
    for a, b in row_chunks(n, B):
        cols = X[a:b] + offsets
        margin = table[cols[:, 0]]  # (rows, B), a new array
        for k in range(1, cols.shape[1]):
            margin += table[cols[:, k]]
        margin += prior
        hits += ((margin > 0) == (y[a:b, None] == 1)).sum(axis=0)
        margin *= sign[a:b]
        loss += np.logaddexp(0.0, margin, out=margin).sum(axis=0)
    return loss / n, hits / n


def cross_entropy(log_probs: Any, y: Any) -> np.ndarray:
    """Mean test cross-entropy :math:`-\\frac1n\\sum_i \\log\\Pr[y = y_i \\mid x_i]`.

    ``log_probs`` has shape (..., n, d); the result has shape (...). Every
    label must be a class code in ``[0, d - 1]`` (one per row).
    """
    log_probs, y = _scored(log_probs, y)
    picked = np.take_along_axis(log_probs, np.broadcast_to(y[:, None], log_probs.shape[:-1] + (1,)), -1)
    return -picked[..., 0].mean(axis=-1)


def accuracy(log_probs: Any, y: Any) -> np.ndarray:
    """Share of rows whose most probable class (first one on ties) is the label.

    ``log_probs`` has shape (..., n, d); every label must be a class code in ``[0, d - 1]``.
    """
    log_probs, y = _scored(log_probs, y)
    return (np.argmax(log_probs, axis=-1) == y).mean(axis=-1)


def _scored(log_probs, y):
    """Validate posterior log-probabilities of shape (..., n, d) and the n labels they score."""
    log_probs = np.asarray(log_probs)
    if log_probs.dtype.kind not in "fiu":
        raise validation.ArgumentTypeError(f"log_probs must be real; got dtype {log_probs.dtype}")
    if log_probs.ndim < 2 or log_probs.shape[-1] < 2:
        raise ValueError(f"log_probs must have shape (..., n, d) with d >= 2; got {log_probs.shape}")
    y = validation.labels(y, "y", log_probs.shape[-1])
    if y.shape[0] != log_probs.shape[-2]:
        raise ValueError(f"y must hold one label per row of log_probs ({log_probs.shape[-2]}); got {y.shape[0]}")
    return log_probs, y
