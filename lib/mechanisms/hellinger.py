"""The smoothed-Hellinger exponential mechanism :math:`\\mathcal M_{\\mathcal H}` and its exact audit.

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

Everything is in log space and vectorised over the candidate set. The output space is finite,
so the privacy of the mechanism is computed exactly for every pair of neighbouring data sets
(:func:`audit`). :func:`beta_hockey_stick` is the exact :math:`\\delta` of a pair of Beta
distributions, used to calibrate the Dirichlet mechanism at :math:`d = 2` without Appendix B.

Neighbouring data sets replace one record (the note's Definition 1.1), so their count vectors
differ by moving one unit between two categories, and :math:`n` is public.

What is guaranteed. The note claims :math:`(\\varepsilon, \\delta)`-DP; its proof does not apply to a discrete output
(chapter 12), and the claim is *measured*, not proved: the exact audit has found
:math:`\\delta(\\varepsilon) \\le \\delta` wherever it was run. It is not pure
:math:`\\varepsilon`-DP in general: at prior :math:`(10^{-8}, 10^{8})`, :math:`n = 150`,
:math:`\\varepsilon = 40`, :math:`\\delta = 10^{-6}` one pair of neighbours spends
:math:`1.029\\varepsilon` (with :math:`\\delta(\\varepsilon) = 2.3 \\times 10^{-16}`).
:func:`guarantee` states the note's :math:`(\\varepsilon, \\delta)`, and pure
:math:`\\varepsilon`-DP only where the exact audit of that very setting shows it.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
from scipy import special

from lib import _validate
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet, renyi_divergence_dirichlet
from lib.mechanisms.protocol import ApproximateDP, PureDP

MAX_CANDIDATES = 20_000
"""Largest candidate set for the dense (candidates x candidates) computations (3.2 GB of float64
would be 20 000^2; the chapter stays below 3 000)."""

MAX_EXACT_CANDIDATES = 2_001
"""Largest candidate set that :func:`guarantee` audits exactly (``n <= 2000`` for ``k = 2``: about
ten seconds; the cost grows as the square)."""

MAX_AUDIT_CELLS = 10**7
"""Largest number of (row, candidate) cells that :func:`log_pmf_rows_beta` and :func:`audit_counts`
compute (``2 len(counts) (n + 1)`` for an audit; about 40 s at the limit)."""

MAX_EXACT_N = 10**6
"""Largest ``n`` of the exact Dirichlet calibration at ``d = 2`` (:func:`dirichlet_worst_delta`,
:func:`dirichlet_exact_scale`): every pass checks all ``n`` pairs (about 7 s at the limit)."""

LOG_PMF_TOLERANCE = 1e-9
"""How far :math:`\\log\\sum_r P(r)` of a row given to :func:`audit` may be from 0 (rounding)."""

_AUDIT_ROUNDING = 1e-9
"""Relative margin by which an audited pure epsilon must be below the nominal one for
:func:`guarantee` to state pure DP (the audit is exact up to the rounding of the log pmf)."""

_BISECTION_STEPS = 200
_CHUNK = 256  # rows per block in the chunked computations


def _flag(value, name: str) -> bool:
    """``value`` if it is a bool (a truthy string or number is refused)."""
    if not isinstance(value, (bool, np.bool_)):
        raise _validate.ArgumentTypeError(f"{name} must be True or False; got {type(value).__name__} {value!r:.60}")
    return bool(value)


def _counts_1d(counts, name: str, low: int, high: int) -> np.ndarray:
    """A non-empty 1-D int64 array of counts in ``[low, high]`` (floats are refused, not truncated)."""
    arr = np.atleast_1d(_validate.integer_array(counts, name))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of integers in [{low}, {high}]; got shape {arr.shape}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < low or hi > high:
        bad = lo if lo < low else hi
        raise ValueError(f"{name} must hold integers in [{low}, {high}]; got {bad} at index {int(np.argmax(arr == bad))}")
    return arr


def _cand(cand, name: str = "cand"):
    """A complete candidate table, every count vector of total ``n`` over ``k`` categories.

    Returns ``(cand as int64, n, k)``. Any row order is accepted for ``k > 2``; for ``k = 2``
    the rows must be :func:`candidates` order, ``(a, n - a)`` at row ``a`` (the O(n) paths
    index by the count). An incomplete table would give a smaller local or smooth sensitivity
    than the mechanism needs, hence it is refused.
    """
    arr = _validate.integer_array(cand, name)
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
    nb = _validate.integer_array(neighbours, name)
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
    n = _validate.integer(n, "n", 1)
    k = _validate.integer(k, "k", 2)
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
    _validate.cells(size * k, f"candidates(n = {n}, k = {k})")
    if k == 2:
        a = np.arange(n + 1)
        return np.stack([a, n - a], axis=1)
    rows = []
    for bars in combinations(range(n + k - 1), k - 1):
        edges = (-1,) + bars + (n + k - 1,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k)])
    return np.array(rows, dtype=np.int64)


def _prior(prior, k):
    prior = _validate.positive(prior, "prior")
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
    epsilon = _validate.positive(epsilon, "epsilon")
    delta = _validate.open_unit(delta, "delta")
    n_cand = _validate.in_range(n_cand, "n_cand", 1.0, open_low=False)
    return np.log1p(epsilon / (2 * np.log(2 * n_cand / delta)))[()]


def posteriors(prior, counts) -> np.ndarray:
    """Posterior parameters :math:`\\mathrm{prior} + c` (note, Section 1), shape of ``counts``."""
    counts = _validate.vectors(counts, "counts", positive_entries=False)
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
    :func:`local_sensitivity_brute` checks this.

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
    n = _validate.integer(n, "n", 1)
    post = posteriors(prior, candidates(n, 2))
    h = hellinger_dirichlet(post[:-1], post[1:])
    ls = np.empty(n + 1)
    ls[0], ls[n] = h[0], h[n - 1]
    ls[1:n] = np.maximum(h[:-1], h[1:])
    return _positive_ls(ls, prior)


def local_sensitivity_brute(hmat, neighbours) -> np.ndarray:
    """Local sensitivity by definition: max over neighbours and over every candidate ``r``.

    Parameters
    ----------
    hmat : ndarray (C, C)
        :func:`hellinger_matrix` (finite, non-negative), at most :data:`MAX_CANDIDATES` rows.
    neighbours : ndarray of int (C, m)
        Neighbour indices in ``[0, C - 1]``, ``-1`` for none.
    """
    hmat = _validate.nonnegative(hmat, "hmat")
    if hmat.ndim != 2 or hmat.shape[0] != hmat.shape[1] or hmat.shape[0] == 0:
        raise ValueError(f"hmat must be a non-empty square matrix; got shape {hmat.shape}")
    if hmat.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"hmat has {hmat.shape[0]} rows; at most {MAX_CANDIDATES}")
    neighbours = _validate.integer_array(neighbours, "neighbours")
    if neighbours.ndim != 2 or neighbours.shape[0] != hmat.shape[0]:
        raise ValueError(f"neighbours must have shape ({hmat.shape[0]}, m); got {neighbours.shape}")
    if neighbours.size and (neighbours.min() < -1 or neighbours.max() >= hmat.shape[0]):
        raise ValueError(f"neighbours must hold indices in [-1, {hmat.shape[0] - 1}]")
    out = np.zeros(hmat.shape[0])
    for m in range(neighbours.shape[1]):
        ok = neighbours[:, m] >= 0
        diff = np.abs(hmat[ok] - hmat[neighbours[ok, m]]).max(axis=1)
        out[ok] = np.maximum(out[ok], diff)
    return out


def smooth_sensitivity_beta(ls, gamma) -> np.ndarray:
    """Eq. (1) for every count :math:`a` of the beta-binomial system in O(n).

    A data set at Hamming distance :math:`t` from one with :math:`a` ones has between
    :math:`a - t` and :math:`a + t` ones, and every count :math:`a'` is reached at distance
    :math:`|a - a'|`; :math:`LS` depends on the data only through the count. Hence
    :math:`S(a) = \\max_{a'} LS(a') e^{-\\gamma|a - a'|}`, and in logs
    :math:`\\log S(a) = \\max(\\max_{a' \\le a}(\\log LS(a') + \\gamma a') - \\gamma a,\\;
    \\max_{a' \\ge a}(\\log LS(a') - \\gamma a') + \\gamma a)`: two running maxima
    (``np.maximum.accumulate``) instead of the :math:`O(n^2)` maximum.
    :func:`smooth_sensitivity_brute_beta` checks it over all :math:`2^n` data sets.
    """
    ls = _validate.positive(ls, "ls")
    if ls.ndim != 1 or ls.shape[0] < 2:
        raise ValueError(f"ls must be a 1-D array of n + 1 >= 2 local sensitivities; got shape {ls.shape}")
    gamma = _validate.scalar(_validate.positive(gamma, "gamma"), "gamma")
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
    ls = _validate.positive(ls, "ls")
    gamma = _validate.scalar(_validate.positive(gamma, "gamma"), "gamma")
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


def smooth_sensitivity_brute_beta(prior, n, gamma) -> np.ndarray:
    """Eq. (1) by definition over all :math:`2^n` binary data sets (tests only, ``n <= 14``).

    Returns S indexed by data set (rows of ``itertools.product`` order) together with each
    data set's count, so that the caller can check that S depends on the count only.
    """
    n = _validate.integer(n, "n", 1)
    if n > 14:
        raise ValueError(f"n must be at most 14 for the brute force over 2^n data sets; got {n}")
    gamma = _validate.scalar(_validate.positive(gamma, "gamma"), "gamma")
    ids = np.arange(2**n)
    data = ((ids[:, None] >> np.arange(n)) & 1).astype(np.int64)
    counts = data.sum(axis=1)
    post = posteriors(prior, np.stack([counts, n - counts], axis=1))
    # LS(x') by definition: flip each bit in turn, distance between the two posteriors
    # (the triangle-inequality reduction of local_sensitivity is checked separately).
    flipped = counts[:, None] + 1 - 2 * data
    other = posteriors(prior, np.stack([flipped, n - flipped], axis=-1))
    ls = hellinger_dirichlet(np.broadcast_to(post[:, None, :], other.shape), other).max(axis=1)
    # Hamming distance of data sets i and j: the bits set in i XOR j; blocks of rows keep the
    # memory at 256 x 2^n (a dense 2^n x 2^n x n comparison would need gigabytes at n = 14).
    decay = np.exp(-gamma * np.arange(n + 1))
    smooth = np.empty(ids.size)
    for start in range(0, ids.size, _CHUNK):
        hamming = np.bitwise_count(ids[start:start + _CHUNK, None] ^ ids[None, :])
        smooth[start:start + _CHUNK] = (ls[None, :] * decay[hamming]).max(axis=1)
    return smooth, counts


# --- The mechanism ----------------------------------------------------------------------------

class HellingerMechanism(NamedTuple):
    """Every output distribution of :math:`\\mathcal M_{\\mathcal H}` for one prior and ``n``.

    Attributes
    ----------
    cand : ndarray (C, k)
        Count vectors; candidate ``i`` is the posterior ``prior + cand[i]``.
    hellinger : ndarray (C, C)
        :math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))`.
    ls, smooth : ndarray (C,)
        Local and smooth sensitivity at each data set (count vector).
    gamma : float
        Smoothing parameter.
    log_pmf : ndarray (C, C)
        ``log_pmf[i, j]`` is :math:`\\log \\Pr[\\mathcal M_{\\mathcal H}(x) = r_j]` for a data set
        with count vector ``cand[i]`` (Definition 2.1).
    neighbours : ndarray (C, k(k-1))
        :func:`neighbour_index`.
    """

    cand: np.ndarray
    hellinger: np.ndarray
    ls: np.ndarray
    smooth: np.ndarray
    gamma: float
    log_pmf: np.ndarray
    neighbours: np.ndarray


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
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    scale = _validate.positive(scale, "scale")
    hellinger = _validate.nonnegative(hellinger, "hellinger")
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

    ``prior`` is kept so that :func:`hellinger_mechanism` can refuse a geometry built for
    another prior (its sensitivities would be another mechanism's).
    """

    cand: np.ndarray
    hellinger: np.ndarray
    ls: np.ndarray
    neighbours: np.ndarray
    prior: np.ndarray


def geometry(prior, n, k=2) -> Geometry:
    """Candidates, the dense Hellinger matrix, local sensitivities and neighbours for ``(prior, n, k)``."""
    n = _validate.integer(n, "n", 1)
    k = _validate.integer(k, "k", 2)
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
        raise _validate.ArgumentTypeError(f"geom must be a Geometry from hellinger.geometry(); got "
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


def hellinger_mechanism(prior, n, epsilon, delta, k=2, *, global_sensitivity=False, geom=None) -> HellingerMechanism:
    """Build :math:`\\mathcal M_{\\mathcal H}` (or :math:`\\mathcal M^D_{\\mathcal H}`) on all data sets of size ``n``.

    Parameters
    ----------
    prior : array_like, shape (k,)
        Positive prior parameters (:math:`(\\alpha, \\beta)` for the beta-binomial system).
    n : int
        Data set size, public.
    epsilon, delta : float
        The note's privacy target; :math:`\\gamma` = :func:`smoothing_parameter`.
    k : int, default 2
        Number of categories.
    global_sensitivity : bool, default False
        Replace :math:`S(x)` by the global sensitivity :math:`\\max_x LS(x)` of the score: the
        plain exponential mechanism of McSherry and Talwar, :math:`\\varepsilon`-DP.
    geom : Geometry, optional
        :func:`geometry` of ``(prior, n, k)``, to reuse across privacy targets (one built for
        another prior, ``n`` or ``k`` is refused).

    Notes
    -----
    The guarantee is the note's :math:`(\\varepsilon, \\delta)`-DP (measured, not proved), pure
    :math:`\\varepsilon`-DP only where the exact audit of the setting shows it
    (:func:`guarantee`); with ``global_sensitivity`` it is :math:`\\varepsilon`-DP.
    """
    n = _validate.integer(n, "n", 1)
    k = _validate.integer(k, "k", 2)
    global_sensitivity = _flag(global_sensitivity, "global_sensitivity")
    if geom is None:
        geom = geometry(prior, n, k)
    else:
        geom = _geometry_for(geom, _prior(prior, k), n, k)
    cand, hmat, ls, neighbours = geom.cand, geom.hellinger, geom.ls, geom.neighbours
    gamma = float(smoothing_parameter(epsilon, delta, cand.shape[0]))
    if k == 2:
        smooth = smooth_sensitivity_beta(ls, gamma)
    else:
        smooth = smooth_sensitivity(ls, cand, gamma)
    if global_sensitivity:
        smooth = np.full_like(ls, ls.max())
    return HellingerMechanism(cand, hmat, ls, smooth, gamma, log_pmf(hmat, smooth, epsilon), neighbours)


def release_beta(prior, count, n, epsilon, delta, size=None, rng=None):
    """Draw from :math:`\\mathcal M_{\\mathcal H}` for one beta-binomial data set, in O(n).

    Only one row of the mechanism is needed: the ``n + 1`` distances to the true posterior and
    :math:`S` at the data (:func:`smooth_sensitivity_beta`). Sampling is by inverse CDF on the
    normalised probabilities from :func:`log_pmf`.

    Parameters
    ----------
    size : None, int or tuple of int
        Shape of the draws (None: one draw); at most ``lib._validate.MAX_CELLS`` draws.

    Returns
    -------
    int or ndarray of int
        Released count(s) :math:`a'`; the released posterior is
        :math:`\\mathrm{beta}(\\alpha + a', \\beta + n - a')`.

    Notes
    -----
    Each draw meets the note's :math:`(\\varepsilon, \\delta)`-DP as measured, not pure DP in
    general (:func:`guarantee`).
    """
    n = _validate.integer(n, "n", 1)
    count = _validate.integer(count, "count", 0)
    if count > n:
        raise ValueError(f"count must be in [0, n] = [0, {n}]; got {count}")
    size = _size(size)
    rng = _validate.generator(rng)
    gamma = smoothing_parameter(epsilon, delta, n + 1)
    smooth = smooth_sensitivity_beta(local_sensitivity_beta(prior, n), gamma)[count]
    post = posteriors(prior, candidates(n, 2))
    row = log_pmf(hellinger_dirichlet(post[count], post), smooth, epsilon)
    cdf = np.cumsum(np.exp(row))
    u = rng.random(size) * cdf[-1]
    return np.minimum(np.searchsorted(cdf, u, side="right"), n)[()]


def _size(size):
    """None, or a shape (an int or a tuple of non-negative ints) of at most MAX_CELLS draws."""
    if size is None:
        return None
    shape = (size,) if not isinstance(size, tuple) else size
    for s in shape:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise _validate.ArgumentTypeError(f"size must be None, an integer or a tuple of integers; got {size!r:.60}")
        if s < 0:
            raise ValueError(f"size must hold non-negative integers; got {size!r}")
    _validate.cells(int(np.prod([int(s) for s in shape], dtype=object)), "size")
    return tuple(int(s) for s in shape) if isinstance(size, tuple) else int(size)


# --- Exact audit --------------------------------------------------------------------------

class Audit(NamedTuple):
    """Exact privacy of a finite-output mechanism over all neighbouring pairs.

    Attributes
    ----------
    delta : ndarray
        Largest hockey-stick divergence :math:`\\max_{x \\sim y}\\sum_r (P_x(r) - e^{\\varepsilon}P_y(r))_+`
        at each requested :math:`\\varepsilon`.
    pure_epsilon : float
        Smallest :math:`\\varepsilon` with :math:`\\delta = 0`: :math:`\\max_{x \\sim y}\\max_r
        (\\log P_x(r) - \\log P_y(r))` over both directions of every pair; ``inf`` when some
        output has probability 0 on one data set and not on its neighbour.
    renyi : ndarray
        Largest Renyi divergence :math:`D_\\lambda(P_x \\| P_y)` at each requested order (``inf``
        where :math:`P_x` is not absolutely continuous with respect to :math:`P_y`).
    worst_pair : tuple or None
        ``(x, y)`` attaining ``delta[0]``; None when no pair has a positive :math:`\\delta` at
        the first :math:`\\varepsilon` (every pair is then equally "worst").
    pure_worst_pair : tuple
        ``(x, y)`` attaining ``pure_epsilon``: :math:`\\log P_x(r) - \\log P_y(r)` is largest there.

    Ties are broken towards the smallest ``x``, then the smallest ``y``.
    """

    delta: np.ndarray
    pure_epsilon: float
    renyi: np.ndarray
    worst_pair: tuple | None
    pure_worst_pair: tuple


def _log_pmf_matrix(value, name: str) -> np.ndarray:
    """A 2-D array of log probabilities: rows normalised, no NaN, no +inf (-inf is probability 0)."""
    arr = _validate._as_float(value, name)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (data sets x outputs); got shape {arr.shape}")
    for start in range(0, arr.shape[0], _CHUNK):  # blocks of rows: no temporary of the full size
        block = arr[start:start + _CHUNK]
        bad = np.isnan(block) | (block > LOG_PMF_TOLERANCE)
        if bad.any():
            i, j = np.unravel_index(int(np.argmax(bad)), block.shape)
            raise ValueError(f"{name} must hold log probabilities in [-inf, 0]; got {block[i, j]} at index "
                             f"({start + i}, {j})")
        total = special.logsumexp(block, axis=1)
        off = np.abs(total) > LOG_PMF_TOLERANCE
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(f"every row of {name} must be a normalised log pmf (log of the sum within "
                             f"{LOG_PMF_TOLERANCE:g} of 0); row {start + i} sums to exp({total[i]:.6g})")
    return arr


def _pairs(neighbours, n_rows: int):
    """Both directions of every pair listed in ``neighbours``, each once, sorted by (x, y)."""
    nb = _validate.integer_array(neighbours, "neighbours")
    if nb.ndim != 2 or nb.shape[0] != n_rows:
        raise ValueError(f"neighbours must have shape ({n_rows}, m), one row per data set; got {nb.shape}")
    if nb.size and (nb.min() < -1 or nb.max() >= n_rows):
        bad = int(nb.min()) if nb.min() < -1 else int(nb.max())
        raise ValueError(f"neighbours must hold row indices in [0, {n_rows - 1}] or -1 for none; got {bad}")
    rows, cols = np.nonzero(nb >= 0)
    if rows.size == 0:
        raise ValueError("neighbours lists no pair (every entry is -1); there is nothing to audit")
    x = np.concatenate([rows, nb[rows, cols]])
    y = np.concatenate([nb[rows, cols], rows])
    key = np.unique(x * np.int64(n_rows) + y)
    return key // n_rows, key % n_rows


def audit(log_pmf_matrix, neighbours, epsilons, orders=()) -> Audit:
    """Exact :math:`\\delta(\\varepsilon)`, pure :math:`\\varepsilon` and Renyi curve of a mechanism.

    Outputs of probability 0 (log ``-inf``) are handled exactly: an output impossible on both
    data sets of a pair contributes nothing, one possible on ``x`` only makes the pure
    :math:`\\varepsilon` and the Renyi divergences from ``x`` infinite and adds
    :math:`P_x(r)` to :math:`\\delta`.

    Parameters
    ----------
    log_pmf_matrix : ndarray (C, R)
        Row ``i`` is the log output distribution on data set ``i``: entries in
        ``[-inf, 0]``, no NaN, each row normalised (:data:`LOG_PMF_TOLERANCE`).
    neighbours : ndarray of int (C, m)
        Neighbour indices (``-1`` for none); both directions of every pair listed are checked,
        whether the pair is listed once or twice.
    epsilons : array_like
        At least one :math:`\\varepsilon \\ge 0` for the hockey-stick divergence.
    orders : array_like
        Renyi orders :math:`\\lambda > 1` (finite).

    Raises
    ------
    ValueError
        On a matrix that is not a log pmf per row, neighbour indices out of range, no pair, or
        bad ``epsilons`` or ``orders``.
    """
    lp = _log_pmf_matrix(log_pmf_matrix, "log_pmf_matrix")
    epsilons = _validate.nonnegative(np.atleast_1d(epsilons), "epsilons")
    if epsilons.ndim != 1 or epsilons.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-D array of values >= 0; got shape {epsilons.shape}")
    orders = _validate._as_float(orders, "orders").reshape(-1)
    if orders.size:
        _validate.order(orders, "orders", strict=True)
    x, y = _pairs(neighbours, lp.shape[0])
    delta = np.zeros(epsilons.shape)
    worst = None
    pure, pure_pair = -np.inf, (int(x[0]), int(y[0]))
    renyi = np.full(orders.shape, -np.inf)
    for start in range(0, x.size, _CHUNK):  # chunks keep memory at 256 x R
        px, py = lp[x[start:start + _CHUNK]], lp[y[start:start + _CHUNK]]
        with np.errstate(invalid="ignore"):
            ratio = px - py
        # -inf - (-inf): an output impossible on both data sets; it bounds nothing
        ratio[np.isneginf(px)] = -np.inf
        per_pair = ratio.max(axis=1)
        j = int(np.argmax(per_pair))
        if per_pair[j] > pure:
            pure, pure_pair = float(per_pair[j]), (int(x[start + j]), int(y[start + j]))
        for i, eps in enumerate(epsilons):
            # sum_r P_x(r) (1 - e^{eps - log ratio})_+ , each term without cancellation
            terms = np.exp(px) * -np.expm1(np.minimum(eps - ratio, 0.0))
            per_pair = terms.sum(axis=1)
            j = int(np.argmax(per_pair))
            if per_pair[j] > delta[i]:
                delta[i] = per_pair[j]
                if i == 0:
                    worst = (int(x[start + j]), int(y[start + j]))
        for i, lam in enumerate(orders):
            with np.errstate(invalid="ignore"):
                expo = lam * px + (1 - lam) * py
            expo[np.isneginf(px)] = -np.inf  # P_x(r) = 0: the term P_x^lam P_y^(1-lam) is 0
            infinite = np.isposinf(expo).any(axis=1)  # P_x(r) > 0 = P_y(r)
            value = np.full(expo.shape[0], np.inf)
            if not infinite.all():
                value[~infinite] = special.logsumexp(expo[~infinite], axis=1) / (lam - 1)
            renyi[i] = max(renyi[i], float(value.max()))
    # A pair of identical rows has divergence 0; so does every pair when the chunks above
    # found nothing larger (max over r of a ratio of two normalised pmfs is >= 0).
    return Audit(delta, max(pure, 0.0), np.maximum(renyi, 0.0), worst, pure_pair)


def _beta_system(prior, n, epsilon, delta, global_sensitivity):
    """Posteriors and sensitivities of the beta-binomial mechanism, O(n)."""
    n = _validate.integer(n, "n", 1)
    global_sensitivity = _flag(global_sensitivity, "global_sensitivity")
    ls = local_sensitivity_beta(prior, n)
    gamma = smoothing_parameter(epsilon, delta, n + 1)  # validates epsilon and delta either way
    smooth = np.full(ls.shape, ls.max()) if global_sensitivity else smooth_sensitivity_beta(ls, gamma)
    return posteriors(prior, candidates(n, 2)), smooth


def _rows(post, smooth, epsilon, counts):
    rows = hellinger_dirichlet(post[counts][:, None, :], post[None, :, :])
    return log_pmf(rows, smooth[counts], epsilon)


def log_pmf_rows_beta(prior, n, epsilon, delta, counts, *, global_sensitivity=False) -> np.ndarray:
    """Rows of :math:`\\log\\Pr[\\mathcal M_{\\mathcal H}(x) = r]` for the data sets with the given ``counts``.

    O(n) memory per row, so pairs of neighbouring data sets can be audited exactly at sizes
    ``n`` whose dense matrix (``(n+1)^2`` entries) does not fit (:func:`audit_counts`).
    ``counts`` are integers in ``[0, n]`` (floats are refused, not truncated); at most
    :data:`MAX_AUDIT_CELLS` cells ``len(counts) (n + 1)``.
    """
    n = _validate.integer(n, "n", 1)
    counts = _counts_1d(counts, "counts", 0, n)
    _validate.cells(counts.size * (n + 1), f"log_pmf_rows_beta ({counts.size} rows of n + 1 = {n + 1})",
                    MAX_AUDIT_CELLS)
    post, smooth = _beta_system(prior, n, epsilon, delta, global_sensitivity)
    return _rows(post, smooth, epsilon, counts)


def audit_counts(prior, n, epsilon, delta, counts, epsilons=None, orders=()) -> Audit:
    """:func:`audit` restricted to the pairs ``(a, a + 1)`` for ``a`` in ``counts`` (both directions).

    Exact for those pairs; a violation found here is a violation of the claim, while a pass
    covers only the pairs given. The pairs of the result (``worst_pair``, ``pure_worst_pair``)
    are the *counts* of the two data sets. ``counts`` are integers in ``[0, n - 1]``; at most
    :data:`MAX_AUDIT_CELLS` cells ``2 len(counts) (n + 1)``, computed in blocks of pairs.
    """
    n = _validate.integer(n, "n", 1)
    counts = np.unique(_counts_1d(counts, "counts", 0, n - 1))
    _validate.cells(2 * counts.size * (n + 1), f"audit_counts ({counts.size} pairs at n = {n})", MAX_AUDIT_CELLS)
    post, smooth = _beta_system(prior, n, epsilon, delta, False)
    epsilons = [epsilon] if epsilons is None else epsilons
    merged = None
    for start in range(0, counts.size, _CHUNK // 2):
        block = counts[start:start + _CHUNK // 2]
        m = block.size
        rows = _rows(post, smooth, epsilon, np.concatenate([block, block + 1]))
        label = np.concatenate([block, block + 1])  # row -> count of its data set
        res = audit(rows, np.concatenate([np.arange(m, 2 * m), np.full(m, -1)])[:, None], epsilons, orders)
        res = res._replace(worst_pair=None if res.worst_pair is None else tuple(int(label[i]) for i in res.worst_pair),
                           pure_worst_pair=tuple(int(label[i]) for i in res.pure_worst_pair))
        merged = res if merged is None else _merge(merged, res)
    return merged


def _merge(a: Audit, b: Audit) -> Audit:
    """The audit of the union of two sets of pairs (maxima; ties keep ``a``, the earlier pairs)."""
    worst = a.worst_pair if b.delta[0] <= a.delta[0] else b.worst_pair
    pure_pair = a.pure_worst_pair if b.pure_epsilon <= a.pure_epsilon else b.pure_worst_pair
    return Audit(np.maximum(a.delta, b.delta), max(a.pure_epsilon, b.pure_epsilon),
                 np.maximum(a.renyi, b.renyi), worst, pure_pair)


def guarantee(prior, n, epsilon, delta, k=2, *, global_sensitivity=False, exact=False):
    """The privacy statement of :math:`\\mathcal M_{\\mathcal H}` at one setting.

    Parameters
    ----------
    prior, n, epsilon, delta, k, global_sensitivity
        As in :func:`hellinger_mechanism`.
    exact : bool, default False
        Audit this very setting exactly, over every pair of neighbouring data sets (at most
        :data:`MAX_EXACT_CANDIDATES` candidates), and state pure DP if the audit shows it.

    Returns
    -------
    lib.mechanisms.protocol.PureDP or lib.mechanisms.protocol.ApproximateDP
        * ``global_sensitivity``: ``PureDP(epsilon)`` (McSherry and Talwar; proved).
        * ``exact=False``: ``ApproximateDP(epsilon, delta)``, the note's claim. Its proof has gaps
          (chapter 12); it is measured, not proved: the exact audits found
          :math:`\\delta(\\varepsilon) \\le \\delta` wherever they were run. It is *not* pure DP in
          general (at prior ``(1e-8, 1e8)``, ``n = 150``, ``epsilon = 40``, ``delta = 1e-6`` one
          pair spends 1.029 epsilon).
        * ``exact=True``: ``PureDP(epsilon)`` if every pair meets pure ``epsilon`` (below it by the
          rounding margin), else ``ApproximateDP(epsilon, delta)`` if the exact
          :math:`\\delta(\\varepsilon)` is at most ``delta``.

    Raises
    ------
    ValueError
        With ``exact=True``: when the exact audit finds :math:`\\delta(\\varepsilon) > \\delta` (the
        note's claim fails at this setting), or the setting has more than
        :data:`MAX_EXACT_CANDIDATES` candidates.

    Examples
    --------
    >>> guarantee((1.0, 1.0), 50, 1.0, 1e-6)
    ApproximateDP(epsilon=1.0, delta=1e-06)
    >>> guarantee((1.0, 1.0), 50, 1.0, 1e-6, exact=True)
    PureDP(epsilon=1.0)
    >>> guarantee((1e-8, 1e8), 150, 40.0, 1e-6, exact=True)
    ApproximateDP(epsilon=40.0, delta=1e-06)
    """
    n = _validate.integer(n, "n", 1)
    k = _validate.integer(k, "k", 2)
    _prior(prior, k)
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    delta = _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
    global_sensitivity = _flag(global_sensitivity, "global_sensitivity")
    exact = _flag(exact, "exact")
    if global_sensitivity:
        return PureDP(epsilon)
    if not exact:
        return ApproximateDP(epsilon, delta)
    size = n_candidates(n, k)
    if size > MAX_EXACT_CANDIDATES:
        raise ValueError(f"n = {n}, k = {k} give {size} candidates; the exact audit of guarantee() allows at most "
                         f"{MAX_EXACT_CANDIDATES} (exact=False states the note's (epsilon, delta))")
    mech = hellinger_mechanism(prior, n, epsilon, delta, k)
    res = audit(mech.log_pmf, mech.neighbours, [epsilon])
    if res.pure_epsilon <= epsilon * (1 - _AUDIT_ROUNDING):
        return PureDP(epsilon)
    if res.delta[0] <= delta:
        return ApproximateDP(epsilon, delta)
    raise ValueError(f"the exact audit finds delta(epsilon = {epsilon:g}) = {res.delta[0]:.3g} > delta = {delta:g} "
                     f"at pair {res.worst_pair}: the note's guarantee does not hold at this setting")


# --- Accuracy (note, Section 4.2) -----------------------------------------------------------

def _row_and_distances(log_pmf_row, hellinger_row):
    """One normalised log output distribution (1-D) and the distances of its outputs, validated:
    ``(log_pmf as a 1-row matrix, distances)``."""
    lp = _log_pmf_matrix(np.atleast_2d(log_pmf_row), "log_pmf_row")
    if np.ndim(log_pmf_row) != 1:
        raise ValueError(f"log_pmf_row must be 1-D; got shape {np.shape(log_pmf_row)}")
    h = _validate.nonnegative(hellinger_row, "hellinger_row")
    if h.shape != lp[0].shape:
        raise ValueError(f"hellinger_row must have the shape of log_pmf_row, {lp[0].shape}; got {h.shape}")
    return lp, h


def tail_exact(log_pmf_row, hellinger_row, c) -> np.ndarray:
    """The note's first, exact tail: :math:`\\Pr[\\mathcal H(\\mathrm{BI}(x), z) \\ge c]` at each ``c``.

    ``log_pmf_row`` is one normalised log output distribution, ``hellinger_row`` the distance of
    each output to the true posterior (same length, finite, non-negative) and ``c`` finite
    thresholds (at most ``lib._validate.MAX_CELLS``). Sorted once, O((R + len(c)) log R).
    """
    lp, h = _row_and_distances(log_pmf_row, hellinger_row)
    c = np.atleast_1d(_validate.in_range(c, "c", -np.inf, open_low=True))
    _validate.cells(c.size, "c")
    order = np.argsort(h, kind="stable")
    h_sorted = h[order]
    # tail[i] = sum of p over the outputs from the i-th smallest distance on
    tail = np.concatenate([np.cumsum(np.exp(lp[0][order])[::-1])[::-1], [0.0]])
    return tail[np.searchsorted(h_sorted, c.reshape(-1), side="left")].reshape(c.shape)


def tail_bounds(hellinger_row, scale, epsilon, c) -> dict:
    """The tail bounds of the note's Section 4.2 at thresholds ``c``, in the mechanism's own scale.

    ``as_written`` is the second bound with the exponent printed in the note,
    :math:`|R| e^{-\\varepsilon c / S} / NL_x`, where :math:`NL_x` is the normaliser of
    Definition 2.1 (exponent :math:`-\\varepsilon\\mathcal H/(2S)`); ``consistent`` is the same bound
    with the factor 2 of Definition 2.1, :math:`|R| e^{-\\varepsilon c/(2S)} / NL_x`; ``loose`` is
    the last one, :math:`|R| e^{-\\varepsilon c/(2S)}` (:math:`NL_x \\ge 1`, the true posterior
    having weight 1). The third bound, with an unknown :math:`N(n)`, is not specified by the note.

    ``hellinger_row`` is a finite non-negative 1-D array, ``scale`` and ``epsilon`` positive
    scalars and ``c`` thresholds in ``[0, inf)``.
    """
    h = _validate.nonnegative(hellinger_row, "hellinger_row")
    if h.ndim != 1 or h.size == 0:
        raise ValueError(f"hellinger_row must be a non-empty 1-D array; got shape {h.shape}")
    scale = _validate.scalar(_validate.positive(scale, "scale"), "scale")
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    c = np.atleast_1d(_validate.nonnegative(c, "c"))
    r = h.shape[0]
    log_nl = special.logsumexp(-epsilon * h / (2 * scale))
    return {
        "as_written": r * np.exp(-epsilon * c / scale - log_nl),
        "consistent": r * np.exp(-epsilon * c / (2 * scale) - log_nl),
        "loose": r * np.exp(-epsilon * c / (2 * scale)),
    }


# --- The proof's lemmas on a discrete output (note, Section 3.1) ---------------------------

def score_atoms(log_pmf_row, hellinger_row, atol=1e-12):
    """The law of the score :math:`u = -\\mathcal H(\\mathrm{BI}(x), z)` of one output distribution.

    Candidates whose distances agree to ``atol`` are one atom (the note's ties). Returns
    ``(scores, probabilities)``: the distinct scores, increasing, and :math:`\\Pr[u = s]` for each.
    ``log_pmf_row`` is a normalised log output distribution, ``hellinger_row`` the distance of each
    output to the true posterior (same shape) and ``atol`` a tolerance in ``[0, 1e-6]``.
    """
    lp, h = _row_and_distances(log_pmf_row, hellinger_row)
    atol = _validate.scalar(_validate.in_range(atol, "atol", 0.0, 1e-6, open_low=False, open_high=False), "atol")
    order = np.argsort(-h, kind="stable")  # increasing score -h
    score, p = -h[order], np.exp(lp[0][order])
    new_atom = np.concatenate([[True], np.diff(score) > atol])
    ids = np.cumsum(new_atom) - 1
    return score[new_atom], np.bincount(ids, weights=p)


def lemma_violation(scores, probs, epsilon, delta, *, shift=0.0, log_dilation=0.0, atol=1e-12):
    """How far the note's sliding (Lemma 3.1) or dilation (Lemma 3.2) inequality fails on a discrete score law.

    For every atom :math:`s` the lemma claims :math:`\\Pr[u = s] \\le e^{\\varepsilon/2}\\Pr[u = T(s)] +
    \\delta/2` with :math:`T(s) = s + \\Delta` (``shift``) or :math:`T(s) = e^{\\lambda}s`
    (``log_dilation``); both may be given (dilation after the shift). :math:`\\Pr[u = T(s)]` is the
    probability of the atom within ``atol`` of :math:`T(s)`, and 0 if there is none: for a
    continuous noise density the lemmas compare densities, for a finite candidate set they compare
    point masses, and almost every :math:`T(s)` is not a score at all.

    Returns
    -------
    dict
        ``violation``: :math:`\\max_s \\Pr[u = s] - e^{\\varepsilon/2}\\Pr[u = T(s)] - \\delta/2` (the lemma
        holds iff it is <= 0); ``score``: the atom attaining it; ``gap``: the smallest distance
        from a mapped score :math:`T(s)` that matched no atom to the nearest atom (how far the
        unmatched images are from being matched: compare with ``atol``); ``matched``: how many
        :math:`T(s)` matched an atom.
    """
    s = _validate.in_range(scores, "scores", -np.inf, open_low=True)
    p = _validate.in_range(probs, "probs", 0.0, 1.0, open_low=False, open_high=False)
    if s.ndim != 1 or s.shape != p.shape or s.size == 0 or np.any(np.diff(s) <= 0):
        raise ValueError("scores must be a non-empty increasing 1-D array and probs the same shape (score_atoms)")
    epsilon = _validate.scalar(_validate.nonnegative(epsilon, "epsilon"), "epsilon")
    delta = _validate.scalar(_validate.in_range(delta, "delta", 0.0, 1.0, open_low=False, open_high=False), "delta")
    shift = _validate.scalar(_validate.in_range(shift, "shift", -np.inf, open_low=True), "shift")
    log_dilation = _validate.scalar(_validate.in_range(log_dilation, "log_dilation", -50.0, 50.0,
                                                       open_low=False, open_high=False), "log_dilation")
    atol = _validate.scalar(_validate.in_range(atol, "atol", 0.0, 1e-6, open_low=False, open_high=False), "atol")
    image = (s + shift) * np.exp(log_dilation)
    j = np.clip(np.searchsorted(s, image), 1, s.size - 1) if s.size > 1 else np.zeros(s.size, dtype=np.int64)
    near = np.where(np.abs(s[j - 1] - image) < np.abs(s[j] - image), j - 1, j) if s.size > 1 else j
    dist = np.abs(s[near] - image)
    hit = dist <= atol
    p_image = np.where(hit, p[near], 0.0)
    excess = p - np.exp(epsilon / 2) * p_image - delta / 2
    worst = int(np.argmax(excess))
    return {"violation": float(excess[worst]), "score": float(s[worst]),
            "gap": float(dist[~hit].min()) if (~hit).any() else np.inf, "matched": int(hit.sum())}


def proof_delta(epsilon, delta):
    """The :math:`\\delta` that the chain of the note's Lemma 3.3 carries, in units of ``delta``.

    ``as_written``: the chain keeps only the dilation's term, :math:`e^{\\varepsilon/2}\\delta/2` (the
    sliding step's :math:`\\delta/2` is dropped); ``both_terms``: the two lemmas' terms composed as in
    Nissim, Raskhodnikova and Smith, :math:`\\delta/2 + e^{\\varepsilon/2}\\delta/2`. The note concludes
    :math:`+\\delta`; the step is sound only where the value is at most ``delta``.
    """
    epsilon = _validate.nonnegative(epsilon, "epsilon")
    delta = _validate.open_unit(delta, "delta")
    half = np.exp(epsilon / 2) * delta / 2
    return {"as_written": half[()], "both_terms": (half + delta / 2)[()]}


# --- The Dirichlet mechanism at d = 2, exactly ----------------------------------------------

def beta_hockey_stick(u, v, epsilon) -> np.ndarray:
    """Exact :math:`\\delta = \\sup_A P(A) - e^{\\varepsilon}Q(A)` for :math:`P = \\mathrm{Beta}(u)`, :math:`Q = \\mathrm{Beta}(v)`.

    For parameters with equal totals, :math:`u_1 + u_2 = v_1 + v_2` (the Dirichlet mechanism on
    replacement neighbours), :math:`\\log(p/q)(\\theta) = s\\,\\mathrm{logit}\\,\\theta + K` with
    :math:`s = u_1 - v_1` and :math:`K = \\log B(v) - \\log B(u)`: monotone, so the optimal set
    is a half line :math:`\\{\\theta > t\\}` (or :math:`<`) with :math:`\\mathrm{logit}\\,t =
    (\\varepsilon - K)/s`, and :math:`\\delta = P(A) - e^{\\varepsilon}Q(A)` in regularised
    incomplete Beta functions. No numerical integration or root finding is needed.

    Parameters
    ----------
    u, v : array_like, shape (..., 2)
        Positive Beta parameters with equal totals; leading axes broadcast.
    epsilon : array_like
        :math:`\\varepsilon \\ge 0`, broadcast against the leading axes.
    """
    u = _validate.vectors(u, "u", positive_entries=True)
    v = _validate.vectors(v, "v", positive_entries=True)
    if u.shape[-1] != 2 or v.shape[-1] != 2:
        raise ValueError("u and v must be Beta parameters (length 2 along the last axis)")
    u, v = _validate.broadcast(u=u, v=v)
    if not np.allclose(u.sum(axis=-1), v.sum(axis=-1), rtol=1e-12, atol=0):
        raise ValueError("u and v must have equal totals u1 + u2 = v1 + v2 (replacement neighbours)")
    epsilon = _validate.nonnegative(epsilon, "epsilon")
    s = u[..., 0] - v[..., 0]
    log_b = special.betaln
    k = log_b(v[..., 0], v[..., 1]) - log_b(u[..., 0], u[..., 1])
    s, k, epsilon = _validate.broadcast(s=s, k=k, epsilon=epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = special.expit((epsilon - k) / s)
    up = s > 0  # p/q increasing in theta: A = {theta > t}
    pa = np.where(up, special.betaincc(u[..., 0], u[..., 1], t), special.betainc(u[..., 0], u[..., 1], t))
    qa = np.where(up, special.betaincc(v[..., 0], v[..., 1], t), special.betainc(v[..., 0], v[..., 1], t))
    with np.errstate(over="ignore"):  # e^eps = inf beyond eps = 709: then only Q(A) = 0 leaves a term
        eq = np.where(qa > 0, np.exp(epsilon) * np.where(qa > 0, qa, 1.0), 0.0)
        out = np.where(s == 0, np.maximum(-np.expm1(np.minimum(epsilon, 1.0)), 0.0), np.maximum(pa - eq, 0.0))
    return out[()]


def _pair_deltas(r, alpha, n, epsilon, a):
    u = np.stack([r * a + alpha, r * (n - a) + alpha], axis=1)
    v = np.stack([r * (a + 1) + alpha, r * (n - a - 1) + alpha], axis=1)
    return np.maximum(beta_hockey_stick(u, v, epsilon), beta_hockey_stick(v, u, epsilon))


def dirichlet_worst_delta(r, alpha, n, epsilon, *, counts=None) -> float:
    """Exact worst-case :math:`\\delta` of the Dirichlet mechanism :math:`\\mathrm{Beta}(r c + \\alpha)` over all neighbours of total ``n``.

    The pairs are ``(a, a + 1)`` for ``a`` in ``counts`` (default: all ``0 .. n - 1``), both directions.
    ``r`` and ``alpha`` are positive scalars, ``epsilon`` a non-negative scalar, ``n`` at most
    :data:`MAX_EXACT_N`, ``counts`` integers in ``[0, n - 1]``.
    """
    r = _validate.scalar(_validate.positive(r, "r"), "r")
    alpha = _validate.scalar(_validate.positive(alpha, "alpha"), "alpha")
    n = _validate.integer(n, "n", 1, MAX_EXACT_N)
    epsilon = _validate.scalar(_validate.nonnegative(epsilon, "epsilon"), "epsilon")
    a = np.arange(n) if counts is None else _counts_1d(counts, "counts", 0, n - 1)
    return float(_pair_deltas(r, alpha, n, epsilon, a).max())


def dirichlet_exact_scale(alpha, n, epsilon, delta) -> float:
    """Largest scale :math:`r` with exact worst-case :math:`\\delta` at most ``delta`` (bisection in log r).

    Raises
    ------
    ValueError
        When no ``r`` in [1e-8, 1e3] meets the target, the bisection does not converge, or
        ``n`` exceeds :data:`MAX_EXACT_N`.
    """
    alpha = _validate.scalar(_validate.positive(alpha, "alpha"), "alpha")
    n = _validate.integer(n, "n", 1, MAX_EXACT_N)
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    delta = _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
    # Cutting planes: bisect on a few pairs (the two ends), then check every pair at the
    # result; a violating pair joins the set and the bisection restarts. Exact, and at
    # large n far cheaper than bisecting over all n pairs.
    active = {0, n - 1}
    for _ in range(_BISECTION_STEPS):
        counts = np.array(sorted(active))
        lo, hi = np.log(1e-8), np.log(1e3)
        if dirichlet_worst_delta(np.exp(lo), alpha, n, epsilon) > delta:
            raise ValueError(f"no scale r >= 1e-8 meets delta = {delta:g} at epsilon = {epsilon:g} "
                             f"with alpha = {alpha:g}")
        if dirichlet_worst_delta(np.exp(hi), alpha, n, epsilon, counts=counts) > delta:
            for _ in range(_BISECTION_STEPS):
                mid = (lo + hi) / 2
                if dirichlet_worst_delta(np.exp(mid), alpha, n, epsilon, counts=counts) <= delta:
                    lo = mid
                else:
                    hi = mid
                if hi - lo < 1e-10:
                    break
            else:  # pragma: no cover
                raise ValueError("dirichlet_exact_scale: bisection did not converge")
        else:
            lo = hi
        every = _pair_deltas(np.exp(lo), alpha, n, epsilon, np.arange(n))
        worst = int(np.argmax(every))
        if every[worst] <= delta:
            return float(np.exp(lo))
        active.add(worst)
    raise ValueError("dirichlet_exact_scale: cutting planes did not converge")  # pragma: no cover


# --- Utility of a released Beta/Dirichlet posterior ----------------------------------------

def posterior_utility(true_post, released_post) -> dict:
    """Hellinger distance, :math:`KL(\\text{true} \\| \\text{released})` and posterior-mean error (L1 over categories / 2).

    Both arguments are positive Dirichlet parameters (``(..., k)``, ``k >= 2``) that broadcast together.
    """
    true_post = _validate.vectors(true_post, "true_post", positive_entries=True)
    released_post = _validate.vectors(released_post, "released_post", positive_entries=True)
    true_post, released_post = _validate.broadcast(true_post=true_post, released_post=released_post)
    mean_true = true_post / true_post.sum(axis=-1, keepdims=True)
    mean_rel = released_post / released_post.sum(axis=-1, keepdims=True)
    return {
        "hellinger": hellinger_dirichlet(true_post, released_post),
        "kl": renyi_divergence_dirichlet(true_post, released_post, 1.0),
        "mean_error": np.abs(mean_true - mean_rel).sum(axis=-1) / 2,
    }


# --- Head to head: one data set, every mechanism at the same (epsilon-hat, delta) -----------

MECHANISMS = ("M_H", "EM (global sens.)", "Dirichlet (App. B)", "Dirichlet (exact d=2)", "Laplace", "Gaussian")


def _expected(log_p, true_post, cand_post):
    """Exact expected utility of a finite-output mechanism (standard error 0)."""
    p = np.exp(log_p)
    util = posterior_utility(np.broadcast_to(true_post, cand_post.shape), cand_post)
    return {key: (float(p @ value), 0.0) for key, value in util.items()}


def _monte_carlo(true_post, released_post):
    util = posterior_utility(np.broadcast_to(true_post, released_post.shape), released_post)
    m = released_post.shape[0]
    return {key: (float(v.mean()), float(v.std(ddof=1) / np.sqrt(m))) for key, v in util.items()}


@lru_cache(maxsize=256)
def _order_for(epsilon_hat: float, delta: float, reference: tuple):
    """:func:`lib.mechanisms.dirichlet.order.optimal_order`, memoised: a calibration depends on public values only."""
    from lib.mechanisms.dirichlet.order import optimal_order
    return optimal_order(epsilon_hat, delta, np.array(reference))


@lru_cache(maxsize=256)
def _exact_scale_for(alpha: float, n: int, epsilon_hat: float, delta: float) -> float:
    """:func:`dirichlet_exact_scale`, memoised (repeats over data sets of one size share it)."""
    return dirichlet_exact_scale(alpha, n, epsilon_hat, delta)


def head_to_head(prior, counts, epsilon_hat, delta, *, reference, repeats=2000, rng=None, exact_dirichlet=True):
    """Utility of every mechanism of :data:`MECHANISMS` on one data set at :math:`(\\hat\\varepsilon, \\delta)`.

    * ``M_H``: the note's mechanism at the note's :math:`(\\varepsilon, \\delta) = (\\hat\\varepsilon, \\delta)`;
      ``EM (global sens.)``: the same scores with the global sensitivity, :math:`\\hat\\varepsilon`-DP.
      Both exact expectations over the finite output set (``k = 2`` only: O(n) per data set).
    * ``Dirichlet (App. B)``: Algorithm 1 at the order of :func:`lib.mechanisms.dirichlet.order.optimal_order`
      for the public ``reference`` histogram (Appendix B, eq. (14)); ``Dirichlet (exact d=2)``:
      the same :math:`\\alpha` with the largest :math:`r` whose exact :math:`\\delta` is at most
      ``delta`` (:func:`dirichlet_exact_scale`). A draw :math:`y` becomes the posterior
      :math:`\\mathrm{prior} + n y` (post-processing).
    * ``Laplace``: the count plus :math:`\\mathrm{Lap}(1/\\hat\\varepsilon)` (pure DP, sensitivity 1 of
      the count of ones when ``n`` is public); ``Gaussian``: analytic Gaussian mechanism
      (Balle and Wang 2018, :func:`lib.mechanisms.dirichlet.approximate_dp.analytic_gaussian_sigma`). The noisy count
      is clipped to :math:`[0, n]` and gives :math:`\\mathrm{beta}(\\alpha + \\tilde a, \\beta + n - \\tilde a)`.

    Returns
    -------
    dict
        ``{mechanism: {"hellinger" | "kl" | "mean_error": (mean, standard error)}}`` plus
        ``"_calibration"`` with the Dirichlet parameters.
    """
    from lib.mechanisms.dirichlet.approximate_dp import analytic_gaussian_sigma

    counts = _validate.integer_array(counts, "counts")
    if counts.shape != (2,) or counts.min() < 0 or counts.sum() < 1:
        raise ValueError(f"counts must be a pair (ones, zeros) of non-negative integers with a positive total; "
                         f"got {counts.tolist()}")
    repeats = _validate.integer(repeats, "repeats", 2)
    _validate.cells(repeats, "repeats")
    exact_dirichlet = _flag(exact_dirichlet, "exact_dirichlet")
    rng = _validate.generator(rng)
    n = int(counts.sum())
    a = int(counts[0])
    true_post = posteriors(prior, counts)
    cand_post = posteriors(prior, candidates(n, 2))
    h_row = hellinger_dirichlet(true_post, cand_post)
    ls = local_sensitivity_beta(prior, n)
    smooth = smooth_sensitivity_beta(ls, smoothing_parameter(epsilon_hat, delta, n + 1))[a]
    out = {"M_H": _expected(log_pmf(h_row, smooth, epsilon_hat), true_post, cand_post),
           "EM (global sens.)": _expected(log_pmf(h_row, ls.max(), epsilon_hat), true_post, cand_post)}
    reference = _validate.positive(reference, "reference")
    if reference.shape != (2,):
        raise ValueError(f"reference must be a public histogram of 2 positive counts; got shape {reference.shape}")
    choice = _order_for(float(epsilon_hat), float(delta), tuple(float(v) for v in reference))
    calib = {"lam": choice.lam, "r_app_b": choice.r, "alpha": choice.alpha}
    scales = {"Dirichlet (App. B)": choice.r}
    if exact_dirichlet:
        calib["r_exact"] = _exact_scale_for(float(choice.alpha), n, float(epsilon_hat), float(delta))
        scales["Dirichlet (exact d=2)"] = calib["r_exact"]
    for name, r in scales.items():
        y = rng.dirichlet(r * counts + choice.alpha, size=repeats)
        out[name] = _monte_carlo(true_post, prior + n * y)
    sigma = analytic_gaussian_sigma(epsilon_hat, delta, 1.0)
    for name, noise in (("Laplace", rng.laplace(0.0, 1 / epsilon_hat, repeats)),
                        ("Gaussian", rng.normal(0.0, sigma, repeats))):
        noisy = np.clip(a + noise, 0, n)
        out[name] = _monte_carlo(true_post, posteriors(prior, np.stack([noisy, n - noisy], axis=1)))
    calib["sigma"] = sigma
    out["_calibration"] = calib
    return out


# --- Full-size runs (outside the book's CI budget) -----------------------------------------

FULL_PRIORS = ((1.0, 1.0), (0.5, 0.5), (2.0, 8.0), (50.0, 50.0), (0.05, 0.05), (1.0, 200.0))

_SWEEP_VALUES = (1e-8, 1e-4, 1e-2, 0.05, 0.5, 1.0, 2.0, 10.0, 1e3, 1e8)

SWEEP = dict(ns=(1, 2, 3, 5, 10, 30, 100, 150, 300), epsilons=(0.01, 0.1, 1.0, 5.0, 20.0, 40.0, 100.0),
             deltas=(1e-12, 1e-6, 1e-2, 0.5, 0.9),
             priors=tuple((a, b) for a in _SWEEP_VALUES for b in _SWEEP_VALUES if a <= b), spot_n=())
"""Arguments of :func:`full_audit` for the sweep beyond the chapter's grid (17 325 dense audits, 55
priors from 1e-8 to 1e8; a prior and its mirror image give the same mechanism). About a minute:
42 settings spend more than the nominal epsilon on some pair, none has delta(epsilon) > delta."""


def full_audit(ns=(10, 30, 100, 300, 1000), epsilons=(0.1, 1.0, 5.0, 20.0, 50.0),
               deltas=(1e-6, 1e-2, 0.5), priors=FULL_PRIORS, spot_n=(10**4, 10**5), spot_pairs=41):
    """The chapter's audit at full size: dense for ``ns``, ``spot_pairs`` evenly spaced pairs at ``spot_n``.

    Returns a list of dicts (prior, n, epsilon, delta, exact delta at epsilon, pure epsilon / epsilon,
    the pair attaining it, dense or spot). Takes about ten minutes on one core with the defaults.
    Every argument is checked before the run starts (dense ``n`` up to ``MAX_CANDIDATES - 1``,
    spot checks within :data:`MAX_AUDIT_CELLS`).
    """
    ns = [_validate.integer(n, "ns", 1, MAX_CANDIDATES - 1) for n in ns]
    spot_n = [_validate.integer(n, "spot_n", 2) for n in spot_n]
    spot_pairs = _validate.integer(spot_pairs, "spot_pairs", 1)
    epsilons = [_validate.scalar(_validate.positive(e, "epsilons"), "epsilons") for e in epsilons]
    deltas = [_validate.scalar(_validate.open_unit(d, "deltas"), "deltas") for d in deltas]
    if not deltas:
        raise ValueError("deltas must hold at least one value in (0, 1)")
    priors = [tuple(_prior(p, 2).tolist()) for p in priors]
    for n in spot_n:
        _validate.cells(2 * min(spot_pairs, n) * (n + 1), f"full_audit spot check at n = {n}", MAX_AUDIT_CELLS)
    out = []
    for prior in priors:
        for n in ns:
            geom = geometry(prior, n)
            for delta in deltas:
                for eps in epsilons:
                    res = audit(hellinger_mechanism(prior, n, eps, delta, geom=geom).log_pmf,
                                geom.neighbours, [eps])
                    out.append(dict(prior=prior, n=n, epsilon=eps, delta=delta, exact_delta=res.delta[0],
                                    pure_ratio=res.pure_epsilon / eps, pure_pair=res.pure_worst_pair, kind="dense"))
        for n in spot_n:
            pairs = np.unique(np.linspace(0, n - 1, spot_pairs).astype(np.int64))
            for eps in epsilons:
                res = audit_counts(prior, n, eps, deltas[0], pairs)
                out.append(dict(prior=prior, n=n, epsilon=eps, delta=deltas[0], exact_delta=res.delta[0],
                                pure_ratio=res.pure_epsilon / eps, pure_pair=res.pure_worst_pair, kind="spot"))
    return out


if __name__ == "__main__":  # pragma: no cover - python -m lib.mechanisms.hellinger [--quick]
    import sys

    quick = "--quick" in sys.argv
    if "--sweep" in sys.argv:  # python -m lib.mechanisms.hellinger --sweep: SWEEP instead of the full run
        rows = full_audit(**SWEEP)
    else:
        rows = full_audit(ns=(10, 100), spot_n=(10**3,), priors=FULL_PRIORS[:2]) if quick else full_audit()
    worst = max(rows, key=lambda r: r["pure_ratio"])
    print(f"{len(rows)} audits; largest exact delta at epsilon: {max(r['exact_delta'] for r in rows):.3g}; "
          f"above delta: {sum(r['exact_delta'] > r['delta'] for r in rows)}")
    print(f"pure epsilon above epsilon: {sum(r['pure_ratio'] > 1 for r in rows)}; "
          f"largest pure epsilon / epsilon: {worst['pure_ratio']:.4f} at {worst}")
