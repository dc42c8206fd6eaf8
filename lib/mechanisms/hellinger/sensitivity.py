"""The geometry of the smoothed-Hellinger mechanism: candidates, distances and sensitivities.

The candidate posteriors :math:`\\mathcal R_{post}` of a data set of public size :math:`n`
(:func:`candidates`, :func:`posteriors`), the Hellinger distances between them
(:func:`hellinger_matrix`, :func:`hellinger_rows_beta`), their neighbours
(:func:`neighbour_index`), the local and smooth sensitivities of the score
(:func:`local_sensitivity`, :func:`smooth_sensitivity`, in O(n) for the beta-binomial
system), the smoothing parameter :math:`\\gamma` (:func:`smoothing_parameter`) and the
exponential mechanism's log-probabilities (:func:`log_pmf`); :func:`geometry` builds the
dense arrays once for many mechanisms. The mechanisms are in
:mod:`lib.mechanisms.hellinger.mechanism`.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet


MAX_CANDIDATES = 20_000


_CHUNK = 256  # rows per block in the chunked computations

MEMO_CELLS = 2**20


def _cand(cand, name: str = "cand"):
    """A complete candidate table, every count vector of total ``n`` over ``k`` categories.

    Returns ``(cand as int64, n, k)``. Any row order is accepted for ``k > 2``; for ``k = 2``
    the rows must be :func:`candidates` order, ``(a, n - a)`` at row ``a`` (the O(n) paths
    index by the count). An incomplete table would give a smaller local or smooth sensitivity
    than the mechanism needs, hence it is refused.
    """
    arr = validation.integer_array(cand, name)
    if arr.ndim != 2 or arr.shape[1] < 2 or arr.shape[0] < 2:
        raise ValueError(f"{name} must be a 2-D table of count vectors (candidates(n, k), n >= 1, k >= 2); "
                         f"got shape {arr.shape}")
    if arr.min() < 0:
        raise ValueError(f"{name} must hold non-negative counts; got {int(arr.min())}")
    totals = arr.sum(axis=1)
    n, k = int(totals[0]), arr.shape[1]
    if n < 1 or np.any(totals != n):
        raise ValueError(f"{name} must hold count vectors of one total n >= 1; got totals from "
                         f"{int(totals.min())} to {int(totals.max())}")
    expected = n_candidates(n, k)
    if arr.shape[0] != expected:
        raise ValueError(f"{name} must hold every count vector of total {n} over {k} categories "
                         f"({expected} rows, candidates(n, k)); got {arr.shape[0]} rows")
    if k == 2:
        if np.any(arr[:, 0] != np.arange(n + 1)):
            raise ValueError(f"{name} must be candidates(n, 2): row a is (a, n - a)")
    elif np.unique(arr, axis=0).shape[0] != arr.shape[0]:
        raise ValueError(f"{name} must hold each count vector once; it has repeated rows")
    return arr, n, k


def _moves(k):
    return [(i, j) for i in range(k) for j in range(k) if i != j]


def _neighbours(neighbours, cand, name: str = "neighbours") -> np.ndarray:
    """``neighbours`` if it is exactly :func:`neighbour_index` of the (validated) ``cand``.

    Checked in O(C k^3) without rebuilding it: column ``m`` of row ``c`` must be the candidate
    ``c`` with one unit moved by the ``m``-th move, and ``-1`` exactly where that category is
    empty. Wrong neighbours would give a wrong local sensitivity, so they are refused.
    """
    nb = validation.integer_array(neighbours, name)
    c, k = cand.shape
    moves = _moves(k)
    if nb.shape != (c, len(moves)):
        raise ValueError(f"{name} must have shape {(c, len(moves))} (neighbour_index(cand)); got {nb.shape}")
    if nb.min() < -1 or nb.max() >= c:
        raise ValueError(f"{name} must hold candidate indices in [-1, {c - 1}]")
    for m, (i, j) in enumerate(moves):
        col = nb[:, m]
        ok = col >= 0
        step = np.zeros(k, dtype=np.int64)
        step[i], step[j] = -1, 1
        if np.any(ok != (cand[:, i] > 0)) or np.any(cand[col[ok]] - cand[ok] != step):
            raise ValueError(f"{name} are not the neighbours of cand (column {m}: one unit from category "
                             f"{i} to {j}); use neighbour_index(cand)")
    return nb


# --- Candidates, posteriors, smoothing parameter -------------------------------------------

def n_candidates(n: int, k: int = 2) -> int:
    """:math:`|\\mathcal R_{post}| = \\binom{n+k-1}{k-1}`, the number of count vectors of total ``n``.

    The note (Section 2.1) writes :math:`\\binom{n+1}{m-1}` for the Dirichlet case; that is the
    right count only for :math:`k = 2` (see the chapter's finding).

    >>> n_candidates(10), n_candidates(10, 3)
    (11, 66)
    """
    n = validation.integer(n, "n", 1)
    k = validation.integer(k, "k", 2)
    return comb(n + k - 1, k - 1)


def candidates(n: int, k: int = 2) -> np.ndarray:
    """Every count vector with ``k`` non-negative entries summing to ``n`` (stars and bars).

    Row ``a`` of the ``k = 2`` table is ``(a, n - a)``, so a beta-binomial data set with
    :math:`\\Delta\\alpha = a` ones is candidate ``a``.

    Returns
    -------
    ndarray of int, shape (n_candidates(n, k), k)

    >>> candidates(2, 3).tolist()
    [[0, 0, 2], [0, 1, 1], [0, 2, 0], [1, 0, 1], [1, 1, 0], [2, 0, 0]]
    """
    size = n_candidates(n, k)
    if size > 10 * MAX_CANDIDATES and k > 2:
        raise ValueError(f"n and k give {size} candidates; at most {10 * MAX_CANDIDATES} are enumerated")
    validation.cells(size * k, f"candidates(n = {n}, k = {k})")
    if k == 2:
        a = np.arange(n + 1)
        return np.stack([a, n - a], axis=1)
    rows = []
    for bars in combinations(range(n + k - 1), k - 1):
        edges = (-1,) + bars + (n + k - 1,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k)])
    return np.array(rows, dtype=np.int64)


def prior_vector(prior: ArrayLike, k: int) -> np.ndarray:
    """``prior`` as a vector of ``k`` positive parameters (a Beta prior when ``k = 2``); else a ValueError."""
    prior = validation.positive(prior, "prior")
    if prior.ndim != 1 or prior.shape[0] != k:
        raise ValueError(f"prior must be a vector of {k} positive parameters; got shape {prior.shape}")
    return prior


def smoothing_parameter(epsilon: ArrayLike, delta: ArrayLike, n_cand: ArrayLike) -> np.ndarray | float:
    """The note's smoothing parameter :math:`\\gamma(\\varepsilon, \\delta)` (end of Section 2).

    .. math::
        \\gamma = \\ln\\Bigl(1 - \\frac{\\varepsilon}{2\\ln(\\delta / (2|\\mathcal R_{post}|))}\\Bigr)
        = \\operatorname{log1p}\\Bigl(\\frac{\\varepsilon}{2\\ln(2|\\mathcal R_{post}|/\\delta)}\\Bigr),

    with :math:`|\\mathcal R_{post}| = n + 1` for the beta-binomial system.

    >>> round(float(smoothing_parameter(1.0, 1e-6, 101)), 6)
    0.02581
    """
    epsilon = validation.positive(epsilon, "epsilon")
    delta = validation.open_unit(delta, "delta")
    n_cand = validation.in_range(n_cand, "n_cand", 1.0, open_low=False)
    return np.log1p(epsilon / (2 * np.log(2 * n_cand / delta)))[()]


def posteriors(prior: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """Posterior parameters :math:`\\mathrm{prior} + c` (note, Section 1), shape of ``counts``."""
    counts = validation.vectors(counts, "counts", positive_entries=False)
    return counts + prior_vector(prior, counts.shape[-1])


# --- Hellinger distances and sensitivities ---------------------------------------------------

def hellinger_matrix(prior: ArrayLike, cand: ArrayLike) -> np.ndarray:
    """:math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))` for every pair of candidates (dense)."""
    post = posteriors(prior, cand)
    if post.ndim != 2:
        raise ValueError(f"cand must be a 2-D table of count vectors; got shape {post.shape}")
    if post.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"cand has {post.shape[0]} rows; the dense matrix allows at most {MAX_CANDIDATES}")
    return hellinger_dirichlet(post[:, None, :], post[None, :, :])


def neighbour_index(cand: ArrayLike) -> np.ndarray:
    """For each candidate, the indices of its neighbours (one unit moved between two categories).

    Returns an int array of shape (C, k (k - 1)); column ``m`` is the ``m``-th move
    ``(i, j)`` (one unit from category ``i`` to ``j``, in the order ``i``, then ``j``), and
    ``-1`` marks a move out of an empty category.

    Raises
    ------
    ValueError
        When ``cand`` is not a complete candidate table (:func:`candidates`; rows in that order
        for ``k = 2``) or has more than :data:`MAX_CANDIDATES` rows.
    """
    cand, n, k = _cand(cand)
    c = cand.shape[0]
    if c > MAX_CANDIDATES:
        raise ValueError(f"cand has {c} rows; neighbour_index allows at most {MAX_CANDIDATES}")
    moves = _moves(k)
    out = np.full((c, len(moves)), -1, dtype=np.int64)
    if k == 2:  # rows are (a, n - a): the neighbours of a are a - 1 and a + 1
        a = cand[:, 0]
        out[:, 0] = np.where(a > 0, a - 1, -1)  # move (0, 1): one fewer success
        out[:, 1] = np.where(a < n, a + 1, -1)  # move (1, 0): one more
        return out
    # Rank of a count vector in the order of cand: a dictionary is enough for the sizes
    # used here (at most MAX_CANDIDATES rows).
    lookup = {tuple(row): i for i, row in enumerate(cand.tolist())}
    for m, (i, j) in enumerate(moves):
        for row in range(c):
            if cand[row, i] > 0:
                moved = cand[row].copy()
                moved[i] -= 1
                moved[j] += 1
                out[row, m] = lookup[tuple(moved.tolist())]
    return out


def local_sensitivity(prior: ArrayLike, cand: ArrayLike, neighbours: ArrayLike | None = None) -> np.ndarray:
    """Fast local sensitivity of the score: :math:`LS(c) = \\max_{c' \\sim c} \\mathcal H(\\mathrm{BI}(c), \\mathrm{BI}(c'))`.

    The local sensitivity of :math:`u(x, r) = -\\mathcal H(\\mathrm{BI}(x), r)` at :math:`x` is
    :math:`\\max_{y \\sim x} \\max_r |\\mathcal H(\\mathrm{BI}(x), r) - \\mathcal H(\\mathrm{BI}(y), r)|`.
    The Hellinger distance is a metric, so each difference is at most
    :math:`\\mathcal H(\\mathrm{BI}(x), \\mathrm{BI}(y))` (triangle inequality), with equality at
    :math:`r = \\mathrm{BI}(y)`, which is a candidate. So only the neighbouring posteriors are
    needed: :math:`k(k-1)` distances per candidate instead of :math:`k(k-1)|\\mathcal R_{post}|`.
    :func:`lib.theory.hellinger_audit.local_sensitivity_brute` checks this.

    ``cand`` must be a complete candidate table (:func:`candidates`) and ``neighbours``, if
    given, exactly :func:`neighbour_index` of it (both are checked: a partial table or wrong
    neighbours would understate the sensitivity).
    """
    cand, _, _ = _cand(cand)
    if cand.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"cand has {cand.shape[0]} rows; local_sensitivity allows at most {MAX_CANDIDATES}")
    neighbours = neighbour_index(cand) if neighbours is None else _neighbours(neighbours, cand)
    post = posteriors(prior, cand)
    valid = neighbours >= 0
    h = np.zeros(neighbours.shape)
    rows, cols = np.nonzero(valid)
    h[rows, cols] = hellinger_dirichlet(post[rows], post[neighbours[rows, cols]])
    return _positive_ls(h.max(axis=1), prior)


def _positive_ls(ls, prior):
    """``ls`` if every entry is positive; else the prior is too large for the distances to register."""
    if not np.all(ls > 0):
        raise ValueError(f"prior = {np.asarray(prior).tolist()} is so large that neighbouring posteriors are "
                         "equal to rounding (a local sensitivity of 0); the mechanism is not defined there")
    return ls


def local_sensitivity_beta(prior: ArrayLike, n: int) -> np.ndarray:
    """:func:`local_sensitivity` for the beta-binomial system, all ``n + 1`` counts, in O(n).

    With :math:`h_a = \\mathcal H(\\mathrm{beta}(\\alpha + a, \\beta + n - a), \\mathrm{beta}(\\alpha + a + 1, \\beta + n - a - 1))`,
    :math:`LS(a) = \\max(h_{a-1}, h_a)` (one term at the ends).
    """
    n = validation.integer(n, "n", 1)
    post = posteriors(prior, candidates(n, 2))
    h = hellinger_dirichlet(post[:-1], post[1:])
    ls = np.empty(n + 1)
    ls[0], ls[n] = h[0], h[n - 1]
    ls[1:n] = np.maximum(h[:-1], h[1:])
    return _positive_ls(ls, prior)


@lru_cache(maxsize=8)
def _beta_local_sensitivity_memo(prior: tuple, n: int) -> np.ndarray:
    ls = local_sensitivity_beta(np.array(prior), n)
    ls.flags.writeable = False
    return ls


def local_sensitivity_beta_unchecked(prior: np.ndarray, n: int) -> np.ndarray:
    """:func:`local_sensitivity_beta`, memoised on the public ``(prior, n)`` (read-only when memoised).

    Every :class:`SmoothedHellinger` of one ``(prior, n)`` (one per target) shares the same local
    sensitivities; the distances behind them cost O(n) special-function evaluations per build.
    """
    if n + 1 > MEMO_CELLS:
        return local_sensitivity_beta(prior, n)
    return _beta_local_sensitivity_memo(tuple(prior.tolist()), n)


@lru_cache(maxsize=8)
def _beta_hellinger_rows_memo(prior: tuple, n: int, idx: tuple) -> np.ndarray:
    rows = hellinger_rows_unchecked(np.array(prior), candidates(n, 2), np.array(idx, dtype=np.int64))
    rows.flags.writeable = False
    return rows


def hellinger_rows_unchecked(prior: np.ndarray, cand: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))` for every ``i`` in ``idx`` (any shape) and every candidate ``j``."""
    post = posteriors(prior, cand)
    return hellinger_dirichlet(post[idx][..., None, :], post)


def hellinger_rows_beta_unchecked(prior: np.ndarray, n: int, idx: np.ndarray) -> np.ndarray:
    """:func:`hellinger_rows_unchecked` of the beta-binomial candidates, memoised on ``(prior, n, idx)`` (read-only when memoised).

    The rows depend on public values and the data only: the mechanisms of one data set at several
    targets (and :class:`HellingerExponential` beside :class:`SmoothedHellinger`) share them.
    Each distance is computed element by element, so a memoised row equals a fresh one exactly.
    """
    if max(idx.size, 1) * (n + 1) > MEMO_CELLS:
        return hellinger_rows_unchecked(prior, candidates(n, 2), idx)
    rows = _beta_hellinger_rows_memo(tuple(prior.tolist()), n, tuple(idx.reshape(-1).tolist()))
    return rows.reshape(idx.shape + (n + 1,))


def hellinger_rows_beta(prior: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """:math:`\\mathcal H(\\mathrm{BI}(x), \\mathrm{BI}(c))` from each beta-binomial data set :math:`x` to every candidate :math:`c`.

    Parameters
    ----------
    prior : array_like, shape (2,)
        The Beta prior :math:`(\\alpha, \\beta)`, positive.
    counts : array_like of int, shape (..., 2)
        Count vectors ``(ones, zeros)`` of one total :math:`n \\ge 1`.

    Returns
    -------
    ndarray, shape ``counts.shape[:-1] + (n + 1,)``
        Entry ``[..., j]`` is the distance from :math:`\\mathrm{beta}(\\alpha + a, \\beta + n - a)` to
        :math:`\\mathrm{beta}(\\alpha + j, \\beta + n - j)`: the scores of :class:`SmoothedHellinger`
        over :func:`candidates` ``(n, 2)``. Memoised on ``(prior, counts)`` (then read-only).

    Examples
    --------
    >>> hellinger_rows_beta((1.0, 1.0), (2, 3)).shape
    (6,)
    """
    prior = prior_vector(prior, 2)
    arr = validation.integer_array(counts, "counts")
    if arr.ndim == 0 or arr.shape[-1] != 2 or arr.size == 0:
        raise ValueError(f"counts must be count vectors (ones, zeros) along the last axis; got shape {arr.shape}")
    n = validation.integer(int(arr.reshape(-1, 2)[0].sum()), "the total of counts", 1)
    idx = public_total_counts(arr, n, 2)[..., 0]
    validation.cells(max(idx.size, 1) * (n + 1), "hellinger_rows_beta (count vectors x candidates)")
    return hellinger_rows_beta_unchecked(prior, n, idx)


def smooth_sensitivity_beta(ls: ArrayLike, gamma: float) -> np.ndarray:
    """Eq. (1) for every count :math:`a` of the beta-binomial system in O(n).

    A data set at Hamming distance :math:`t` from one with :math:`a` ones has between
    :math:`a - t` and :math:`a + t` ones, and every count :math:`a'` is reached at distance
    :math:`|a - a'|`; :math:`LS` depends on the data only through the count. Hence
    :math:`S(a) = \\max_{a'} LS(a') e^{-\\gamma|a - a'|}`, and in logs
    :math:`\\log S(a) = \\max(\\max_{a' \\le a}(\\log LS(a') + \\gamma a') - \\gamma a,\\;
    \\max_{a' \\ge a}(\\log LS(a') - \\gamma a') + \\gamma a)`: two running maxima
    (``np.maximum.accumulate``) instead of the :math:`O(n^2)` maximum.
    :func:`lib.theory.hellinger_audit.smooth_sensitivity_brute_beta` checks it over all :math:`2^n` data sets.
    """
    ls = validation.positive(ls, "ls")
    if ls.ndim != 1 or ls.shape[0] < 2:
        raise ValueError(f"ls must be a 1-D array of n + 1 >= 2 local sensitivities; got shape {ls.shape}")
    gamma = validation.scalar(validation.positive(gamma, "gamma"), "gamma")
    log_ls = np.log(ls)
    t = gamma * np.arange(ls.shape[0])
    left = np.maximum.accumulate(log_ls + t) - t
    right = np.maximum.accumulate((log_ls - t)[::-1])[::-1] + t
    # (log LS + t) - t may round below log LS, and exp(log LS) below LS: S >= LS is kept exactly
    return np.maximum(np.exp(np.maximum(left, right)), ls)


def smooth_sensitivity(ls: ArrayLike, cand: ArrayLike, gamma: float) -> np.ndarray:
    """Eq. (1) for every candidate of a Dirichlet-multinomial system, dense O(C^2).

    The smallest Hamming distance between data sets with count vectors :math:`c, c'` of the
    same total is :math:`\\lVert c - c' \\rVert_1 / 2` (each replacement moves one unit), so
    :math:`S(c) = \\max_{c'} LS(c') e^{-\\gamma\\lVert c - c'\\rVert_1/2}`.

    ``cand`` must be a complete candidate table (:func:`candidates`: a maximum over part of
    the data sets would understate :math:`S`) of at most :data:`MAX_CANDIDATES` rows, and
    ``ls`` one positive value per row. Computed in blocks of rows (memory O(C) per row).
    """
    ls = validation.positive(ls, "ls")
    gamma = validation.scalar(validation.positive(gamma, "gamma"), "gamma")
    cand, _, _ = _cand(cand)
    if cand.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"cand has {cand.shape[0]} rows; the dense maximum allows at most {MAX_CANDIDATES}")
    if ls.shape != (cand.shape[0],):
        raise ValueError(f"ls must have one entry per row of cand, shape {(cand.shape[0],)}; got {ls.shape}")
    log_ls = np.log(ls)
    out = np.empty(cand.shape[0])
    for start in range(0, cand.shape[0], _CHUNK):
        block = cand[start:start + _CHUNK]
        dist = np.abs(block[:, None, :] - cand[None, :, :]).sum(axis=-1) / 2
        out[start:start + _CHUNK] = (log_ls[None, :] - gamma * dist).max(axis=1)
    # exp(log LS) may round below LS: S >= LS is kept exactly
    return np.maximum(np.exp(out), ls)


# --- The mechanism ----------------------------------------------------------------------------

def log_pmf(hellinger: ArrayLike, scale: ArrayLike, epsilon: float) -> np.ndarray:
    """Exponential mechanism in log space: :math:`\\log` of Definition 2.1's probabilities.

    ``hellinger[..., j]`` is the distance of candidate ``j`` to the true posterior and ``scale``
    the sensitivity :math:`S(x)` (broadcast against the leading axes); the weights
    :math:`\\exp(-\\varepsilon\\mathcal H/(2S))` underflow at moderate :math:`\\varepsilon` and
    :math:`n`, their logarithms do not, and ``logsumexp`` normalises them.

    Raises
    ------
    ValueError
        When ``hellinger`` is not a finite non-negative array with at least one candidate along
        its last axis, ``scale`` does not broadcast against its leading axes, or every weight of
        a row underflows (no candidate at a finite log weight).
    """
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    scale = validation.positive(scale, "scale")
    hellinger = validation.nonnegative(hellinger, "hellinger")
    if hellinger.ndim == 0 or hellinger.shape[-1] == 0:
        raise ValueError(f"hellinger must have the candidates along its last axis; got shape {hellinger.shape}")
    try:
        np.broadcast_shapes(scale.shape, hellinger.shape[:-1])
    except ValueError as exc:
        raise ValueError(f"scale (shape {scale.shape}) must broadcast against the leading axes of hellinger "
                         f"(shape {hellinger.shape})") from exc
    with np.errstate(over="ignore"):
        logw = -epsilon * (hellinger / (2 * scale[..., None]))
    top = logw.max(axis=-1, keepdims=True)
    if not np.all(np.isfinite(top)):
        raise ValueError(f"epsilon = {epsilon:g} times hellinger / (2 scale) overflows for every candidate of a "
                         "row; no output has a representable probability")
    return logw - special.logsumexp(logw, axis=-1, keepdims=True)


class Geometry(NamedTuple):
    """The parts of :math:`\\mathcal M_{\\mathcal H}` that do not depend on the privacy target.

    ``prior`` is kept so that :class:`SmoothedHellinger` can refuse a geometry built for
    another prior (its sensitivities would be another mechanism's).
    """

    cand: np.ndarray
    hellinger: np.ndarray
    ls: np.ndarray
    neighbours: np.ndarray
    prior: np.ndarray


def geometry(prior: ArrayLike, n: int, k: int = 2) -> Geometry:
    """Candidates, the dense Hellinger matrix, local sensitivities and neighbours for ``(prior, n, k)``."""
    n = validation.integer(n, "n", 1)
    k = validation.integer(k, "k", 2)
    if n_candidates(n, k) > MAX_CANDIDATES:
        raise ValueError(f"n = {n}, k = {k} give {n_candidates(n, k)} candidates; at most {MAX_CANDIDATES}")
    prior = prior_vector(prior, k)
    cand = candidates(n, k)
    neighbours = neighbour_index(cand)
    ls = local_sensitivity_beta(prior, n) if k == 2 else local_sensitivity(prior, cand, neighbours)
    return Geometry(cand, hellinger_matrix(prior, cand), ls, neighbours, prior.copy())


def geometry_for(geom: Geometry, prior: np.ndarray, n: int, k: int) -> Geometry:
    """``geom`` if it was built by :func:`geometry` for this ``(prior, n, k)``."""
    if not isinstance(geom, Geometry):
        raise validation.ArgumentTypeError(f"geom must be a Geometry from hellinger.geometry(); got "
                                          f"{type(geom).__name__}")
    cand, _, _ = _cand(geom.cand, "geom.cand")
    if cand.shape[1] != k or int(cand[0].sum()) != n:
        raise ValueError(f"geom was built for n = {int(cand[0].sum())}, k = {cand.shape[1]}; not for "
                         f"n = {n}, k = {k}")
    if not np.array_equal(np.asarray(geom.prior, dtype=float), prior):
        raise ValueError(f"geom was built for prior {np.asarray(geom.prior).tolist()}; not for {prior.tolist()}")
    c = cand.shape[0]
    if np.shape(geom.hellinger) != (c, c) or np.shape(geom.ls) != (c,):
        raise ValueError("geom.hellinger and geom.ls do not match geom.cand; build geom with hellinger.geometry()")
    _neighbours(geom.neighbours, cand, "geom.neighbours")
    return geom


def public_total_counts(counts: ArrayLike, n: int, k: int) -> np.ndarray:
    """Count vectors of shape ``(..., k)``: non-negative whole numbers (as int64) totalling ``n``."""
    arr = np.asarray(counts)
    validation.cells(arr.size, "counts")
    if arr.dtype.kind == "f" and arr.size and np.isfinite(arr).all() and np.array_equal(arr, np.floor(arr)):
        arr = arr.astype(np.int64)  # whole numbers in a float array (a model's count tables)
    arr = validation.integer_array(arr, "counts")
    if arr.ndim == 0 or arr.shape[-1] != k:
        raise ValueError(f"counts must be count vectors of length {k} along the last axis; got shape {arr.shape}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"counts must be non-negative; got {int(arr.min())}")
    totals = arr.sum(axis=-1)
    if np.any(totals != n):
        raise ValueError(f"every count vector must total the public n = {n}; got totals from {int(totals.min())} "
                         f"to {int(totals.max())}")
    return arr
