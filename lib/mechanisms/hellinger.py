"""The smoothed-Hellinger exponential mechanism :math:`\\mathcal M_{\\mathcal H}` and the releases it is compared with.

The seed note "Full proof on the differential privacy property of :math:`\\mathcal M_{\\mathcal H}`"
(``papers/smoothed-hellinger-exponential-mechanism.md``; cited below as *the note*) releases a
posterior of a conjugate model by an exponential mechanism over the posteriors reachable from
data sets of the same size :math:`n`:

* the candidate set :math:`\\mathcal R_{post}` (note, Section 2): Beta (or Dirichlet) posteriors
  :math:`\\mathrm{prior} + c` for every count vector :math:`c` with total :math:`n`;
  :math:`|\\mathcal R_{post}| = \\binom{n+k-1}{k-1}` (:func:`candidates`);
* the score :math:`u(x, r) = -\\mathcal H(\\mathrm{BI}(x), r)`, the Hellinger distance
  (:func:`lib.mechanisms.dirichlet.divergence.hellinger_dirichlet`);
* the weights :math:`\\exp(-\\varepsilon\\mathcal H / (2 S(x)))` of Definition 2.1 with the smooth
  sensitivity :math:`S(x) = \\max_{x'} LS(x') e^{-\\gamma d(x, x')}` of eq. (1);
* the smoothing parameter :math:`\\gamma = \\ln(1 - \\varepsilon / (2\\ln(\\delta / (2|\\mathcal R_{post}|))))`
  (end of Section 2; :func:`smoothing_parameter`).

The mechanism is :class:`SmoothedHellinger`; :class:`HellingerExponential` is the same
exponential mechanism with the global sensitivity (McSherry and Talwar), and
:class:`CountLaplace` and :class:`CountGaussian` add noise to the count of ones of a
beta-binomial data set. All four release a posterior :math:`\\mathrm{prior} + \\tilde c` of a
count vector of public total :math:`n`, and as a point of the simplex its mean. Everything is in
log space and vectorised over the candidate set. The exact audit of the mechanism, the note's
tail bounds and lemmas are in :mod:`lib.theory.hellinger_audit`; the head-to-head of the
chapter is :mod:`lib.experiments.hellinger`.

Neighbouring data sets replace one record (the note's Definition 1.1), so their count vectors
differ by moving one unit between two categories, and :math:`n` is public.

What is guaranteed. The note claims :math:`(\\varepsilon, \\delta)`-DP; its proof does not apply to a
discrete output (chapter 12), and the claim is *measured*, not proved: the exact audit has found
:math:`\\delta(\\varepsilon) \\le \\delta` wherever it was run. It is not pure
:math:`\\varepsilon`-DP in general: at prior :math:`(10^{-8}, 10^{8})`, :math:`n = 150`,
:math:`\\varepsilon = 40`, :math:`\\delta = 10^{-6}` one pair of neighbours spends
:math:`1.029\\varepsilon` (with :math:`\\delta(\\varepsilon) = 2.3 \\times 10^{-16}`).
:attr:`SmoothedHellinger.guarantee` states the note's :math:`(\\varepsilon, \\delta)`;
:func:`lib.theory.hellinger_audit.audited_guarantee` states pure :math:`\\varepsilon`-DP where the
exact audit of that very setting shows it.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb
from typing import ClassVar, NamedTuple

import numpy as np
from scipy import special

from lib import validation
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet
from lib.mechanisms.noise import analytic_gaussian_sigma
from lib.mechanisms.protocol import ApproximateDP, Mechanism, ModelCalibration, PureDP, ReleaseSpec, register

MAX_CANDIDATES = 20_000
"""Largest candidate set for the dense (candidates x candidates) computations (3.2 GB of float64
would be 20 000^2; the chapter stays below 3 000)."""

_CHUNK = 256  # rows per block in the chunked computations

MEMO_CELLS = 2**20
"""Largest array (float64 entries, 8 MB) that the memoised beta-binomial computations keep
(:func:`_beta_local_sensitivity`, :func:`hellinger_rows_beta`; eight of each at most): larger
ones are computed afresh on every call."""


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

def n_candidates(n, k=2) -> int:
    """:math:`|\\mathcal R_{post}| = \\binom{n+k-1}{k-1}`, the number of count vectors of total ``n``.

    The note (Section 2.1) writes :math:`\\binom{n+1}{m-1}` for the Dirichlet case; that is the
    right count only for :math:`k = 2` (see the chapter's finding).

    >>> n_candidates(10), n_candidates(10, 3)
    (11, 66)
    """
    n = validation.integer(n, "n", 1)
    k = validation.integer(k, "k", 2)
    return comb(n + k - 1, k - 1)


def candidates(n, k=2) -> np.ndarray:
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


def _prior(prior, k):
    prior = validation.positive(prior, "prior")
    if prior.ndim != 1 or prior.shape[0] != k:
        raise ValueError(f"prior must be a vector of {k} positive parameters; got shape {prior.shape}")
    return prior


def smoothing_parameter(epsilon, delta, n_cand):
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


def posteriors(prior, counts) -> np.ndarray:
    """Posterior parameters :math:`\\mathrm{prior} + c` (note, Section 1), shape of ``counts``."""
    counts = validation.vectors(counts, "counts", positive_entries=False)
    return counts + _prior(prior, counts.shape[-1])


# --- Hellinger distances and sensitivities ---------------------------------------------------

def hellinger_matrix(prior, cand) -> np.ndarray:
    """:math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))` for every pair of candidates (dense)."""
    post = posteriors(prior, cand)
    if post.ndim != 2:
        raise ValueError(f"cand must be a 2-D table of count vectors; got shape {post.shape}")
    if post.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"cand has {post.shape[0]} rows; the dense matrix allows at most {MAX_CANDIDATES}")
    return hellinger_dirichlet(post[:, None, :], post[None, :, :])


def neighbour_index(cand) -> np.ndarray:
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


def local_sensitivity(prior, cand, neighbours=None) -> np.ndarray:
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


def local_sensitivity_beta(prior, n) -> np.ndarray:
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


def _beta_local_sensitivity(prior: np.ndarray, n: int) -> np.ndarray:
    """:func:`local_sensitivity_beta`, memoised on the public ``(prior, n)`` (read-only when memoised).

    Every :class:`SmoothedHellinger` of one ``(prior, n)`` (one per target) shares the same local
    sensitivities; the distances behind them cost O(n) special-function evaluations per build.
    """
    if n + 1 > MEMO_CELLS:
        return local_sensitivity_beta(prior, n)
    return _beta_local_sensitivity_memo(tuple(prior.tolist()), n)


@lru_cache(maxsize=8)
def _beta_hellinger_rows_memo(prior: tuple, n: int, idx: tuple) -> np.ndarray:
    rows = _hellinger_rows(np.array(prior), candidates(n, 2), np.array(idx, dtype=np.int64))
    rows.flags.writeable = False
    return rows


def _hellinger_rows(prior: np.ndarray, cand: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))` for every ``i`` in ``idx`` (any shape) and every candidate ``j``."""
    post = posteriors(prior, cand)
    return hellinger_dirichlet(post[idx][..., None, :], post)


def _beta_hellinger_rows(prior: np.ndarray, n: int, idx: np.ndarray) -> np.ndarray:
    """:func:`_hellinger_rows` of the beta-binomial candidates, memoised on ``(prior, n, idx)`` (read-only when memoised).

    The rows depend on public values and the data only: the mechanisms of one data set at several
    targets (and :class:`HellingerExponential` beside :class:`SmoothedHellinger`) share them.
    Each distance is computed element by element, so a memoised row equals a fresh one exactly.
    """
    if max(idx.size, 1) * (n + 1) > MEMO_CELLS:
        return _hellinger_rows(prior, candidates(n, 2), idx)
    rows = _beta_hellinger_rows_memo(tuple(prior.tolist()), n, tuple(idx.reshape(-1).tolist()))
    return rows.reshape(idx.shape + (n + 1,))


def hellinger_rows_beta(prior, counts) -> np.ndarray:
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
    prior = _prior(prior, 2)
    arr = validation.integer_array(counts, "counts")
    if arr.ndim == 0 or arr.shape[-1] != 2 or arr.size == 0:
        raise ValueError(f"counts must be count vectors (ones, zeros) along the last axis; got shape {arr.shape}")
    n = validation.integer(int(arr.reshape(-1, 2)[0].sum()), "the total of counts", 1)
    idx = _public_total(arr, n, 2)[..., 0]
    validation.cells(max(idx.size, 1) * (n + 1), "hellinger_rows_beta (count vectors x candidates)")
    return _beta_hellinger_rows(prior, n, idx)


def smooth_sensitivity_beta(ls, gamma) -> np.ndarray:
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


def smooth_sensitivity(ls, cand, gamma) -> np.ndarray:
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

def log_pmf(hellinger, scale, epsilon) -> np.ndarray:
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


def geometry(prior, n, k=2) -> Geometry:
    """Candidates, the dense Hellinger matrix, local sensitivities and neighbours for ``(prior, n, k)``."""
    n = validation.integer(n, "n", 1)
    k = validation.integer(k, "k", 2)
    if n_candidates(n, k) > MAX_CANDIDATES:
        raise ValueError(f"n = {n}, k = {k} give {n_candidates(n, k)} candidates; at most {MAX_CANDIDATES}")
    prior = _prior(prior, k)
    cand = candidates(n, k)
    neighbours = neighbour_index(cand)
    ls = local_sensitivity_beta(prior, n) if k == 2 else local_sensitivity(prior, cand, neighbours)
    return Geometry(cand, hellinger_matrix(prior, cand), ls, neighbours, prior.copy())


def _geometry_for(geom, prior, n, k) -> Geometry:
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



def _public_total(counts, n: int, k: int) -> np.ndarray:
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


class _PosteriorRelease(Mechanism):
    """A release of the posterior :math:`\\mathrm{prior} + \\tilde c` of a count vector of public total ``n``.

    A subclass implements :meth:`released_posterior`; :meth:`release` is its mean, a point of
    the open simplex (every entry is positive because the prior is). The calibrations build one
    object per release of a vector whose total is the public :math:`N` of the spec; a table of
    several rows has private row totals and is refused (ValueError).
    """

    #: The prior pseudo-count of every cell of the objects that the calibrations build.
    prior_count: ClassVar[float] = 1.0

    def released_posterior(self, counts, rng=None) -> np.ndarray:  # pragma: no cover - abstract
        """The released posterior parameters, shape of ``counts``."""
        raise TypeError(f"{type(self).__name__} must define released_posterior(counts, rng)")

    def release(self, counts, rng=None) -> np.ndarray:
        """The mean of the released posterior, one point of the simplex per count vector.

        Parameters
        ----------
        counts : array_like of int, shape (..., k)
            Count vectors, each totalling the public ``n``.
        rng : numpy.random.Generator or int or None
            Source of randomness.

        Returns
        -------
        ndarray, shape (..., k)
            :math:`(\\mathrm{prior} + \\tilde c) / (n + \\sum \\mathrm{prior})`, every entry positive.
        """
        post = self.released_posterior(counts, rng)
        return post / post.sum(axis=-1, keepdims=True)

    @classmethod
    def release_key(cls, spec: ReleaseSpec, index: int):
        """Releases of the same shape ``(rows, d)`` share one object."""
        return spec.shapes[index]

    @classmethod
    def _one_release(cls, target, spec: ReleaseSpec, index: int) -> "_PosteriorRelease":
        """The object for release ``index`` of ``spec`` at its share ``target`` of the model's target.

        Raises
        ------
        ValueError
            If release ``index`` is a table of several rows (their totals are private).
        """
        rows, d = spec.shapes[index]
        if rows != 1:
            raise ValueError(f"the {cls.name!r} mechanism releases a vector of public total n; release {index} is a "
                             f"table of {rows} rows whose totals are private")
        return cls._build(target, np.full(d, cls.prior_count), spec.n_total)

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """:math:`(\\hat\\varepsilon, \\delta)`-DP for the whole model: ``target.split(m)`` per release.

        Basic composition (Dwork and Roth 2014, Theorem 3.16): :math:`m` releases that are each
        :math:`(\\hat\\varepsilon/m, \\delta/m)`-DP are together :math:`(\\hat\\varepsilon, \\delta)`-DP.
        """
        if not target.epsilon > 0:
            raise ValueError(f"epsilon_hat must be in (0, inf); got {target.epsilon!r}")
        per = target.split(spec.n_releases)
        objects = cls._per_release(spec, lambda index: cls._one_release(per, spec, index))
        return ModelCalibration(cls.name, True, objects, {"epsilon_release": per.epsilon, "delta_release": per.delta})

    @classmethod
    def _pure_release(cls, target, spec, index):
        if not target.epsilon > 0:
            raise ValueError(f"epsilon must be in (0, inf); got {target.epsilon!r}")
        return cls._one_release(target, spec, index)

    @classmethod
    def _build(cls, target, prior, n):  # pragma: no cover - abstract
        raise TypeError(f"{cls.__name__} must define _build(target, prior, n)")


class SmoothedHellinger(_PosteriorRelease):
    """The smoothed-Hellinger exponential mechanism :math:`\\mathcal M_{\\mathcal H}` on data sets of size ``n``.

    Parameters
    ----------
    prior : array_like, shape (k,)
        Positive prior parameters, :math:`k \\ge 2` (:math:`(\\alpha, \\beta)` for the
        beta-binomial system).
    n : int
        The data set size :math:`n \\ge 1`, public: every count vector totals ``n``.
    epsilon : float
        The note's :math:`\\varepsilon \\in (0, \\infty)`.
    delta : float
        The note's :math:`\\delta \\in (0, 1)`; :math:`\\gamma` = :func:`smoothing_parameter`.
    geom : Geometry, optional
        :func:`geometry` of ``(prior, n, k)``, to share the parts that do not depend on the
        target across targets (one built for another prior, ``n`` or ``k`` is refused).

    Attributes
    ----------
    cand : ndarray of int, shape (C, k)
        The candidate count vectors; output ``i`` is the posterior ``prior + cand[i]``.
    ls, smooth : ndarray, shape (C,)
        Local and smooth sensitivity at each data set (count vector). For ``k = 2`` without
        ``geom``, ``ls`` is read-only: it is memoised on ``(prior, n)`` and shared by every
        mechanism of that setting.
    gamma : float
        The smoothing parameter.
    hellinger : ndarray, shape (C, C)
        :math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))` (computed on first use).
    log_pmf : ndarray, shape (C, C)
        ``log_pmf[i, j]`` is :math:`\\log \\Pr[\\mathcal M_{\\mathcal H}(x) = r_j]` for a data set with
        count vector ``cand[i]`` (Definition 2.1; computed on first use).
    neighbours : ndarray of int, shape (C, k(k-1))
        :func:`neighbour_index` of ``cand`` (computed on first use).

    Raises
    ------
    ValueError
        If an argument is outside its range, or ``k > 2`` and the candidates exceed
        :data:`MAX_CANDIDATES`.

    Notes
    -----
    A release for one data set costs :math:`O(n)` for :math:`k = 2`: one row of distances and
    :math:`S` at the data (:func:`smooth_sensitivity_beta`), sampled by inverse CDF on the
    normalised probabilities of :func:`log_pmf`. :meth:`released_counts` is the released
    candidate :math:`c'`, :meth:`released_posterior` the posterior :math:`\\mathrm{prior} + c'`,
    :meth:`release` its mean: an entry of the simplex is never 0, since the prior is positive,
    and the mean determines :math:`c'` (post-processing changes no guarantee).

    The guarantee is the note's :math:`(\\varepsilon, \\delta)`-DP, measured by the exact audit
    wherever it was run, not proved (the proof does not apply to a discrete output; chapter
    12). :func:`lib.theory.hellinger_audit.audited_guarantee` audits one setting exactly.

    Examples
    --------
    >>> import numpy as np
    >>> mech = SmoothedHellinger((1.0, 1.0), 300, 1.0, 1e-6)
    >>> mech.released_counts(np.broadcast_to([90, 210], (3, 2)), rng=np.random.default_rng(0))[:, 0].tolist()
    [91, 89, 85]
    >>> mech.guarantee
    ApproximateDP(epsilon=1.0, delta=1e-06)
    """

    name, label = "smoothed_hellinger", "Smoothed Hellinger"
    notions = (ApproximateDP,)
    #: Replace :math:`S(x)` by the global sensitivity :math:`\\max_x LS(x)` (:class:`HellingerExponential`).
    global_sensitivity: ClassVar[bool] = False

    def __init__(self, prior, n, epsilon, delta=None, *, geom=None):
        prior = validation.positive(prior, "prior")
        if prior.ndim != 1 or prior.size < 2:
            raise ValueError(f"prior must be a vector of k >= 2 positive parameters; got shape {prior.shape}")
        k = prior.size
        self.n = validation.integer(n, "n", 1)
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        if delta is None and not self.global_sensitivity:
            raise ValueError("delta must be in (0, 1) for the smoothed mechanism; got None")
        self.delta = None if delta is None else validation.scalar(validation.open_unit(delta, "delta"), "delta")
        self.prior = prior
        if geom is None:
            if k > 2 and n_candidates(self.n, k) > MAX_CANDIDATES:
                raise ValueError(f"n = {self.n}, k = {k} give {n_candidates(self.n, k)} candidates; at most "
                                 f"{MAX_CANDIDATES}")
            self.cand = candidates(self.n, k)
            self.ls = _beta_local_sensitivity(prior, self.n) if k == 2 else local_sensitivity(prior, self.cand)
        else:
            geom = _geometry_for(geom, prior, self.n, k)
            self.cand, self.ls = geom.cand, geom.ls
        self._geom = geom
        self.gamma = (None if self.delta is None
                      else float(smoothing_parameter(self.epsilon, self.delta, self.cand.shape[0])))
        if self.global_sensitivity:
            self.smooth = np.full_like(self.ls, self.ls.max())
        elif k == 2:
            self.smooth = smooth_sensitivity_beta(self.ls, self.gamma)
        else:
            self.smooth = smooth_sensitivity(self.ls, self.cand, self.gamma)
        self._dense = {}

    def __repr__(self):
        return (f"{type(self).__name__}(prior={self.prior.tolist()}, n={self.n}, epsilon={self.epsilon:g}, "
                f"delta={self.delta!r})")

    @property
    def guarantee(self):
        """The note's :math:`(\\varepsilon, \\delta)`-DP (measured by the exact audit, not proved)."""
        return ApproximateDP(self.epsilon, self.delta)

    @property
    def hellinger(self) -> np.ndarray:
        if "hellinger" not in self._dense:
            self._dense["hellinger"] = (self._geom.hellinger if self._geom is not None
                                        else hellinger_matrix(self.prior, self.cand))
        return self._dense["hellinger"]

    @property
    def neighbours(self) -> np.ndarray:
        if "neighbours" not in self._dense:
            self._dense["neighbours"] = (self._geom.neighbours if self._geom is not None
                                         else neighbour_index(self.cand))
        return self._dense["neighbours"]

    @property
    def log_pmf(self) -> np.ndarray:
        if "log_pmf" not in self._dense:
            self._dense["log_pmf"] = log_pmf(self.hellinger, self.smooth, self.epsilon)
        return self._dense["log_pmf"]

    def index(self, counts) -> np.ndarray:
        """The candidate index of every count vector along the last axis of ``counts`` (shape ``(...)``)."""
        arr = _public_total(counts, self.n, self.cand.shape[1])
        if arr.shape[-1] == 2:
            return arr[..., 0]
        lookup = {tuple(row): i for i, row in enumerate(self.cand.tolist())}
        flat = arr.reshape(-1, arr.shape[-1])
        return np.array([lookup[tuple(row)] for row in flat.tolist()], dtype=np.int64).reshape(arr.shape[:-1])

    def log_pmf_rows(self, counts) -> np.ndarray:
        """:math:`\\log \\Pr[\\mathcal M_{\\mathcal H}(x) = r]` over the candidates, for each count vector ``x``.

        ``O(C)`` memory per count vector (no dense matrix): shape ``counts.shape[:-1] + (C,)``. For
        ``k = 2`` the distances are :func:`hellinger_rows_beta` (memoised: the same data set at
        another target, or under :class:`HellingerExponential`, reuses them).
        """
        idx = self.index(counts)
        validation.cells(max(idx.size, 1) * self.cand.shape[0], "log_pmf_rows (count vectors x candidates)")
        if self.cand.shape[1] == 2:  # rows of candidates(n, 2), shared across targets
            rows = _beta_hellinger_rows(self.prior, self.n, idx)
        else:
            rows = _hellinger_rows(self.prior, self.cand, idx)
        return log_pmf(rows, self.smooth[idx], self.epsilon)

    def released_counts(self, counts, rng=None) -> np.ndarray:
        """The released candidate :math:`c'` for every count vector (by inverse CDF), shape of ``counts``."""
        idx = self.index(counts)
        rng = validation.generator(rng)
        u = np.asarray(rng.random(idx.shape))
        out = np.empty(idx.shape, dtype=np.int64)
        unique, inverse = np.unique(idx, return_inverse=True)
        inverse = inverse.reshape(idx.shape)
        last = self.cand.shape[0] - 1
        for j, i in enumerate(unique):
            cdf = np.cumsum(np.exp(self.log_pmf_rows(self.cand[i])))
            sel = inverse == j
            out[sel] = np.minimum(np.searchsorted(cdf, u[sel] * cdf[-1], side="right"), last)
        return self.cand[out]

    def released_posterior(self, counts, rng=None) -> np.ndarray:
        """The released posterior :math:`\\mathrm{prior} + c'`, shape of ``counts``."""
        return posteriors(self.prior, self.released_counts(counts, rng))

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, ApproximateDP):
            raise ValueError(f"the {cls.name!r} mechanism meets an (epsilon, delta) target; got {target!r}")
        return cls(prior, n, target.epsilon, target.delta)


class HellingerExponential(SmoothedHellinger):
    """The exponential mechanism with the Hellinger score and its global sensitivity: :math:`\\varepsilon`-DP.

    :class:`SmoothedHellinger` with :math:`S(x)` replaced by :math:`\\max_x LS(x)`, the plain
    exponential mechanism of McSherry and Talwar (2007); same parameters, and ``delta`` may be
    None (it only sets :math:`\\gamma`, which this release does not use; ``gamma`` is then None).

    Examples
    --------
    >>> HellingerExponential((1.0, 1.0), 50, 1.0, 1e-6).guarantee
    PureDP(epsilon=1.0)
    """

    name, label = "hellinger_em", "Exponential (Hellinger, global sensitivity)"
    notions = (PureDP, ApproximateDP)
    global_sensitivity = True

    @property
    def guarantee(self):
        """:math:`\\varepsilon`-DP (McSherry and Talwar 2007, Theorem 6; proved)."""
        return PureDP(self.epsilon)

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, (PureDP, ApproximateDP)):
            raise ValueError(f"the {cls.name!r} mechanism meets a pure or (epsilon, delta) target; got {target!r}")
        return cls(prior, n, target.epsilon, None)


class _CountNoise(_PosteriorRelease):
    """Noise on the count of ones :math:`a` of a beta-binomial data set of public size ``n``.

    The noisy count is clipped to :math:`[0, n]` and released as the posterior
    :math:`\\mathrm{beta}(\\alpha + \\tilde a, \\beta + n - \\tilde a)`. With :math:`n` public the
    count of ones has sensitivity 1 under replacement. Subclasses name the generator method
    (``_distribution``) and set ``noise_scale``.
    """

    _distribution: ClassVar[str] = ""

    def _setup(self, n, prior):
        self.n = validation.integer(n, "n", 1)
        self.prior = _prior(prior, 2)

    def __repr__(self):
        return f"{type(self).__name__}(guarantee={self.guarantee!r}, n={self.n}, noise_scale={self.noise_scale:.6g})"

    def released_posterior(self, counts, rng=None) -> np.ndarray:
        """The released posterior :math:`(\\alpha + \\tilde a, \\beta + n - \\tilde a)`, shape of ``counts``."""
        arr = _public_total(counts, self.n, 2)
        rng = validation.generator(rng)
        noise = getattr(rng, self._distribution)(0.0, self.noise_scale, arr.shape[:-1])
        noisy = np.clip(arr[..., 0] + noise, 0, self.n)
        return posteriors(self.prior, np.stack([noisy, self.n - noisy], axis=-1))


class CountLaplace(_CountNoise):
    """Laplace noise of scale :math:`1/\\varepsilon` on the count of ones: :math:`\\varepsilon`-DP.

    Parameters
    ----------
    epsilon : float
        :math:`\\varepsilon \\in (0, \\infty)`.
    n : int
        The public data set size.
    prior : array_like, shape (2,), default (1, 1)
        The Beta prior of the released posterior.

    Examples
    --------
    >>> CountLaplace(2.0, 100).guarantee
    PureDP(epsilon=2.0)
    """

    name, label = "count_laplace", "Laplace (count of ones)"
    notions = (PureDP, ApproximateDP)
    _distribution = "laplace"

    def __init__(self, epsilon, n, prior=(1.0, 1.0)):
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self._setup(n, prior)
        self.noise_scale = 1 / self.epsilon

    @property
    def guarantee(self):
        """:math:`\\varepsilon`-DP (Dwork and Roth 2014, Theorem 3.6; sensitivity 1)."""
        return PureDP(self.epsilon)

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, (PureDP, ApproximateDP)) or prior.size != 2:
            raise ValueError(f"the {cls.name!r} mechanism meets a pure or (epsilon, delta) target on two cells; "
                             f"got {target!r} on {prior.size}")
        return cls(target.epsilon, n, prior)


class CountGaussian(_CountNoise):
    """Analytic Gaussian noise on the count of ones: :math:`(\\varepsilon, \\delta)`-DP.

    Parameters
    ----------
    epsilon : float
        :math:`\\varepsilon \\in (0, \\infty)`.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    n : int
        The public data set size.
    prior : array_like, shape (2,), default (1, 1)
        The Beta prior of the released posterior.

    Notes
    -----
    :math:`\\sigma` is the smallest noise level of the analytic Gaussian mechanism
    (Balle and Wang 2018) for sensitivity 1,
    :func:`lib.mechanisms.noise.analytic_gaussian_sigma`.

    Examples
    --------
    >>> CountGaussian(1.0, 1e-6, 100).guarantee
    ApproximateDP(epsilon=1.0, delta=1e-06)
    """

    name, label = "count_gaussian", "Gaussian (count of ones)"
    notions = (ApproximateDP,)
    _distribution = "normal"

    def __init__(self, epsilon, delta, n, prior=(1.0, 1.0)):
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self.delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
        self._setup(n, prior)
        self.noise_scale = float(analytic_gaussian_sigma(self.epsilon, self.delta, 1.0))

    @property
    def guarantee(self):
        """:math:`(\\varepsilon, \\delta)`-DP (Balle and Wang 2018, Theorem 8)."""
        return ApproximateDP(self.epsilon, self.delta)

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, ApproximateDP) or prior.size != 2:
            raise ValueError(f"the {cls.name!r} mechanism meets an (epsilon, delta) target on two cells; "
                             f"got {target!r} on {prior.size}")
        return cls(target.epsilon, target.delta, n, prior)


register(SmoothedHellinger)
register(HellingerExponential)
register(CountLaplace)
register(CountGaussian)
