"""The smoothed-Hellinger exponential mechanism :math:`\\mathcal M_{\\mathcal H}` and its exact audit.

The seed note "Full proof on the differential privacy property of :math:`\\mathcal M_{\\mathcal H}`"
(``papers/smoothed-hellinger-exponential-mechanism.md``; cited below as *the note*) releases a
posterior of a conjugate model by an exponential mechanism over the posteriors reachable from
data sets of the same size :math:`n`:

* the candidate set :math:`\\mathcal R_{post}` (note, Section 2): Beta (or Dirichlet) posteriors
  :math:`\\mathrm{prior} + c` for every count vector :math:`c` with total :math:`n`;
  :math:`|\\mathcal R_{post}| = \\binom{n+k-1}{k-1}` (:func:`candidates`);
* the score :math:`u(x, r) = -\\mathcal H(\\mathrm{BI}(x), r)`, the Hellinger distance
  (:func:`lib.divergence.hellinger_dirichlet`);
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
"""

from __future__ import annotations

from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
from scipy import special

from . import _validate
from .divergence import hellinger_dirichlet, renyi_divergence_dirichlet

MAX_CANDIDATES = 20_000
"""Largest candidate set for the dense (candidates x candidates) computations (3.2 GB of float64
would be 20 000^2; the chapter stays below 3 000)."""

_BISECTION_STEPS = 200


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
    if post.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"cand has {post.shape[0]} rows; the dense matrix allows at most {MAX_CANDIDATES}")
    return hellinger_dirichlet(post[:, None, :], post[None, :, :])


def neighbour_index(cand) -> np.ndarray:
    """For each candidate, the indices of its neighbours (one unit moved between two categories).

    Returns an int array of shape (C, k (k - 1)); ``-1`` marks a move out of an empty category.
    """
    cand = np.asarray(cand, dtype=np.int64)
    c, k = cand.shape
    n = int(cand[0].sum())
    # Rank of a count vector in the lexicographic order of candidates(): a dictionary is
    # enough for the sizes used here (at most MAX_CANDIDATES rows).
    lookup = {tuple(row): i for i, row in enumerate(cand.tolist())}
    moves = [(i, j) for i in range(k) for j in range(k) if i != j]
    out = np.full((c, len(moves)), -1, dtype=np.int64)
    if k == 2:  # rows are (a, n - a): the neighbours of a are a - 1 and a + 1
        a = cand[:, 0]
        out[:, 0] = np.where(a < n, a + 1, -1)  # one more success
        out[:, 1] = np.where(a > 0, a - 1, -1)  # one fewer
        return out
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
    """
    cand = np.asarray(cand)
    neighbours = neighbour_index(cand) if neighbours is None else neighbours
    post = posteriors(prior, cand)
    valid = neighbours >= 0
    h = np.zeros(neighbours.shape)
    rows, cols = np.nonzero(valid)
    h[rows, cols] = hellinger_dirichlet(post[rows], post[neighbours[rows, cols]])
    return h.max(axis=1)


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
    return ls


def local_sensitivity_brute(hmat, neighbours) -> np.ndarray:
    """Local sensitivity by definition: max over neighbours and over every candidate ``r``."""
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
    """
    ls = _validate.positive(ls, "ls")
    gamma = _validate.scalar(_validate.positive(gamma, "gamma"), "gamma")
    cand = np.asarray(cand)
    if cand.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"cand has {cand.shape[0]} rows; the dense maximum allows at most {MAX_CANDIDATES}")
    dist = np.abs(cand[:, None, :] - cand[None, :, :]).sum(axis=-1) / 2
    # exp(log LS) may round below LS: S >= LS is kept exactly
    return np.maximum(np.exp((np.log(ls)[None, :] - gamma * dist).max(axis=1)), ls)


def smooth_sensitivity_brute_beta(prior, n, gamma) -> np.ndarray:
    """Eq. (1) by definition over all :math:`2^n` binary data sets (tests only, ``n <= 14``).

    Returns S indexed by data set (rows of ``itertools.product`` order) together with each
    data set's count, so that the caller can check that S depends on the count only.
    """
    n = _validate.integer(n, "n", 1)
    if n > 14:
        raise ValueError(f"n must be at most 14 for the brute force over 2^n data sets; got {n}")
    data = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.int64)
    counts = data.sum(axis=1)
    post = posteriors(prior, np.stack([counts, n - counts], axis=1))
    # LS(x') by definition: flip each bit in turn, distance between the two posteriors
    # (the triangle-inequality reduction of local_sensitivity is checked separately).
    flipped = counts[:, None] + 1 - 2 * data
    other = posteriors(prior, np.stack([flipped, n - flipped], axis=-1))
    ls = hellinger_dirichlet(np.broadcast_to(post[:, None, :], other.shape), other).max(axis=1)
    hamming = (data[:, None, :] != data[None, :, :]).sum(axis=-1)
    return (ls[None, :] * np.exp(-gamma * hamming)).max(axis=1), counts


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
    """
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    scale = _validate.positive(scale, "scale")
    logw = -epsilon * np.asarray(hellinger) / (2 * np.asarray(scale)[..., None])
    return logw - special.logsumexp(logw, axis=-1, keepdims=True)


class Geometry(NamedTuple):
    """The parts of :math:`\\mathcal M_{\\mathcal H}` that do not depend on the privacy target."""

    cand: np.ndarray
    hellinger: np.ndarray
    ls: np.ndarray
    neighbours: np.ndarray


def geometry(prior, n, k=2) -> Geometry:
    """Candidates, the dense Hellinger matrix, local sensitivities and neighbours for ``(prior, n, k)``."""
    n = _validate.integer(n, "n", 1)
    k = _validate.integer(k, "k", 2)
    if n_candidates(n, k) > MAX_CANDIDATES:
        raise ValueError(f"n = {n}, k = {k} give {n_candidates(n, k)} candidates; at most {MAX_CANDIDATES}")
    cand = candidates(n, k)
    neighbours = neighbour_index(cand)
    ls = local_sensitivity_beta(prior, n) if k == 2 else local_sensitivity(prior, cand, neighbours)
    return Geometry(cand, hellinger_matrix(prior, cand), ls, neighbours)


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
        :func:`geometry` of ``(prior, n, k)``, to reuse across privacy targets.
    """
    geom = geometry(prior, n, k) if geom is None else geom
    cand, hmat, ls, neighbours = geom
    if cand.shape[1] != k or int(cand[0].sum()) != n:
        raise ValueError("geom was built for another n or k")
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

    Returns
    -------
    int or ndarray of int
        Released count(s) :math:`a'`; the released posterior is
        :math:`\\mathrm{beta}(\\alpha + a', \\beta + n - a')`.
    """
    n = _validate.integer(n, "n", 1)
    count = _validate.integer(count, "count", 0)
    if count > n:
        raise ValueError(f"count must be in [0, n] = [0, {n}]; got {count}")
    rng = _validate.generator(rng)
    gamma = smoothing_parameter(epsilon, delta, n + 1)
    smooth = smooth_sensitivity_beta(local_sensitivity_beta(prior, n), gamma)[count]
    post = posteriors(prior, candidates(n, 2))
    row = log_pmf(hellinger_dirichlet(post[count], post), smooth, epsilon)
    cdf = np.cumsum(np.exp(row))
    u = rng.random(size) * cdf[-1]
    return np.minimum(np.searchsorted(cdf, u, side="right"), n)[()]


# --- Exact audit --------------------------------------------------------------------------

class Audit(NamedTuple):
    """Exact privacy of a finite-output mechanism over all neighbouring pairs.

    Attributes
    ----------
    delta : ndarray
        Largest hockey-stick divergence :math:`\\max_{x \\sim y}\\sum_r (P_x(r) - e^{\\varepsilon}P_y(r))_+`
        at each requested :math:`\\varepsilon`.
    pure_epsilon : float
        Smallest :math:`\\varepsilon` with :math:`\\delta = 0`: :math:`\\max |\\log P_x(r) - \\log P_y(r)|`.
    renyi : ndarray
        Largest Renyi divergence :math:`D_\\lambda(P_x \\| P_y)` at each requested order.
    worst_pair : tuple
        Indices ``(x, y)`` attaining ``delta[0]``.
    """

    delta: np.ndarray
    pure_epsilon: float
    renyi: np.ndarray
    worst_pair: tuple


def audit(log_pmf_matrix, neighbours, epsilons, orders=()) -> Audit:
    """Exact :math:`\\delta(\\varepsilon)`, pure :math:`\\varepsilon` and Renyi curve of a mechanism.

    Parameters
    ----------
    log_pmf_matrix : ndarray (C, R)
        Row ``i`` is the log output distribution on data set ``i``.
    neighbours : ndarray (C, m)
        Neighbour indices (``-1`` for none); both directions of each pair are checked.
    epsilons : array_like
        Values of :math:`\\varepsilon` for the hockey-stick divergence.
    orders : array_like
        Renyi orders :math:`\\lambda > 1`.
    """
    lp = np.asarray(log_pmf_matrix)
    epsilons = _validate.nonnegative(np.atleast_1d(epsilons), "epsilons")
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if orders.size:
        _validate.order(orders, "orders", strict=True)
    rows, cols = np.nonzero(neighbours >= 0)
    x, y = rows, neighbours[rows, cols]
    delta = np.zeros(epsilons.shape)
    worst = (int(x[0]), int(y[0]))
    pure = 0.0
    renyi = np.zeros(orders.shape)
    for start in range(0, x.size, 256):  # chunks keep memory at 256 x R
        px, py = lp[x[start:start + 256]], lp[y[start:start + 256]]
        with np.errstate(invalid="ignore"):
            ratio = px - py
        pure = max(pure, float(np.abs(ratio).max()))
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
            value = special.logsumexp(lam * px + (1 - lam) * py, axis=1) / (lam - 1)
            renyi[i] = max(renyi[i], float(value.max()))
    return Audit(delta, pure, renyi, worst)


def log_pmf_rows_beta(prior, n, epsilon, delta, counts, *, global_sensitivity=False) -> np.ndarray:
    """Rows of :math:`\\log\\Pr[\\mathcal M_{\\mathcal H}(x) = r]` for the data sets with the given ``counts``.

    O(n) memory per row, so pairs of neighbouring data sets can be audited exactly at sizes
    ``n`` whose dense matrix (``(n+1)^2`` entries) does not fit (:func:`audit_counts`).
    """
    n = _validate.integer(n, "n", 1)
    counts = np.atleast_1d(np.asarray(counts, dtype=np.int64))
    if counts.min() < 0 or counts.max() > n:
        raise ValueError(f"counts must be in [0, n] = [0, {n}]")
    ls = local_sensitivity_beta(prior, n)
    smooth = np.full(ls.shape, ls.max()) if global_sensitivity else smooth_sensitivity_beta(
        ls, smoothing_parameter(epsilon, delta, n + 1))
    post = posteriors(prior, candidates(n, 2))
    rows = hellinger_dirichlet(post[counts][:, None, :], post[None, :, :])
    return log_pmf(rows, smooth[counts], epsilon)


def audit_counts(prior, n, epsilon, delta, counts, epsilons=None, orders=()) -> Audit:
    """:func:`audit` restricted to the pairs ``(a, a + 1)`` for ``a`` in ``counts`` (both directions).

    Exact for those pairs; a violation found here is a violation of the claim, while a pass
    covers only the pairs given.
    """
    counts = np.atleast_1d(np.asarray(counts, dtype=np.int64))
    if counts.min() < 0 or counts.max() >= n:
        raise ValueError(f"counts must be in [0, n - 1] = [0, {n - 1}]")
    rows = log_pmf_rows_beta(prior, n, epsilon, delta, np.concatenate([counts, counts + 1]))
    m = counts.size
    neighbours = np.concatenate([np.arange(m, 2 * m), np.arange(m)])[:, None]
    return audit(rows, neighbours, [epsilon] if epsilons is None else epsilons, orders)


# --- Accuracy (note, Section 4.2) -----------------------------------------------------------

def tail_exact(log_pmf_row, hellinger_row, c) -> np.ndarray:
    """The note's first, exact tail: :math:`\\Pr[\\mathcal H(\\mathrm{BI}(x), z) \\ge c]` at each ``c``."""
    c = np.atleast_1d(np.asarray(c, dtype=float))
    p = np.exp(np.asarray(log_pmf_row))
    return np.array([p[np.asarray(hellinger_row) >= t].sum() for t in c])


def tail_bounds(hellinger_row, scale, epsilon, c) -> dict:
    """The tail bounds of the note's Section 4.2 at thresholds ``c``, in the mechanism's own scale.

    ``as_written`` is the second bound with the exponent printed in the note,
    :math:`|R| e^{-\\varepsilon c / S} / NL_x`, where :math:`NL_x` is the normaliser of
    Definition 2.1 (exponent :math:`-\\varepsilon\\mathcal H/(2S)`); ``consistent`` is the same bound
    with the factor 2 of Definition 2.1, :math:`|R| e^{-\\varepsilon c/(2S)} / NL_x`; ``loose`` is
    the last one, :math:`|R| e^{-\\varepsilon c/(2S)}` (:math:`NL_x \\ge 1`, the true posterior
    having weight 1). The third bound, with an unknown :math:`N(n)`, is not specified by the note.
    """
    c = np.atleast_1d(np.asarray(c, dtype=float))
    h = np.asarray(hellinger_row)
    r = h.shape[0]
    log_nl = special.logsumexp(-epsilon * h / (2 * scale))
    return {
        "as_written": r * np.exp(-epsilon * c / scale - log_nl),
        "consistent": r * np.exp(-epsilon * c / (2 * scale) - log_nl),
        "loose": r * np.exp(-epsilon * c / (2 * scale)),
    }


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
    if not np.allclose(u.sum(axis=-1), v.sum(axis=-1), rtol=1e-12, atol=0):
        raise ValueError("u and v must have equal totals u1 + u2 = v1 + v2 (replacement neighbours)")
    epsilon = _validate.nonnegative(epsilon, "epsilon")
    s = u[..., 0] - v[..., 0]
    log_b = special.betaln
    k = log_b(v[..., 0], v[..., 1]) - log_b(u[..., 0], u[..., 1])
    s, k, epsilon = np.broadcast_arrays(s, k, epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = special.expit((epsilon - k) / s)
    up = s > 0  # p/q increasing in theta: A = {theta > t}
    pa = np.where(up, special.betaincc(u[..., 0], u[..., 1], t), special.betainc(u[..., 0], u[..., 1], t))
    qa = np.where(up, special.betaincc(v[..., 0], v[..., 1], t), special.betainc(v[..., 0], v[..., 1], t))
    out = np.where(s == 0, np.maximum(-np.expm1(epsilon), 0.0), np.maximum(pa - np.exp(epsilon) * qa, 0.0))
    return out[()]


def _pair_deltas(r, alpha, n, epsilon, a):
    u = np.stack([r * a + alpha, r * (n - a) + alpha], axis=1)
    v = np.stack([r * (a + 1) + alpha, r * (n - a - 1) + alpha], axis=1)
    return np.maximum(beta_hockey_stick(u, v, epsilon), beta_hockey_stick(v, u, epsilon))


def dirichlet_worst_delta(r, alpha, n, epsilon, *, counts=None) -> float:
    """Exact worst-case :math:`\\delta` of the Dirichlet mechanism :math:`\\mathrm{Beta}(r c + \\alpha)` over all neighbours of total ``n``.

    The pairs are ``(a, a + 1)`` for ``a`` in ``counts`` (default: all ``0 .. n - 1``), both directions.
    """
    a = np.arange(n) if counts is None else np.asarray(counts)
    return float(_pair_deltas(r, alpha, n, epsilon, a).max())


def dirichlet_exact_scale(alpha, n, epsilon, delta) -> float:
    """Largest scale :math:`r` with exact worst-case :math:`\\delta` at most ``delta`` (bisection in log r).

    Raises
    ------
    ValueError
        When no ``r`` in [1e-8, 1e3] meets the target, or the bisection does not converge.
    """
    alpha = _validate.scalar(_validate.positive(alpha, "alpha"), "alpha")
    n = _validate.integer(n, "n", 1)
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
    """Hellinger distance, :math:`KL(\\text{true} \\| \\text{released})` and posterior-mean error (L1 over categories / 2)."""
    true_post = np.asarray(true_post, dtype=float)
    released_post = np.asarray(released_post, dtype=float)
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


def head_to_head(prior, counts, epsilon_hat, delta, *, reference, repeats=2000, rng=None, exact_dirichlet=True):
    """Utility of every mechanism of :data:`MECHANISMS` on one data set at :math:`(\\hat\\varepsilon, \\delta)`.

    * ``M_H``: the note's mechanism at the note's :math:`(\\varepsilon, \\delta) = (\\hat\\varepsilon, \\delta)`;
      ``EM (global sens.)``: the same scores with the global sensitivity, :math:`\\hat\\varepsilon`-DP.
      Both exact expectations over the finite output set (``k = 2`` only: O(n) per data set).
    * ``Dirichlet (App. B)``: Algorithm 1 at the order of :func:`lib.accounting.optimal_order`
      for the public ``reference`` histogram (Appendix B, eq. (14)); ``Dirichlet (exact d=2)``:
      the same :math:`\\alpha` with the largest :math:`r` whose exact :math:`\\delta` is at most
      ``delta`` (:func:`dirichlet_exact_scale`). A draw :math:`y` becomes the posterior
      :math:`\\mathrm{prior} + n y` (post-processing).
    * ``Laplace``: the count plus :math:`\\mathrm{Lap}(1/\\hat\\varepsilon)` (pure DP, sensitivity 1 of
      the count of ones when ``n`` is public); ``Gaussian``: analytic Gaussian mechanism
      (Balle and Wang 2018, :func:`lib.approximate_dp.analytic_gaussian_sigma`). The noisy count
      is clipped to :math:`[0, n]` and gives :math:`\\mathrm{beta}(\\alpha + \\tilde a, \\beta + n - \\tilde a)`.

    Returns
    -------
    dict
        ``{mechanism: {"hellinger" | "kl" | "mean_error": (mean, standard error)}}`` plus
        ``"_calibration"`` with the Dirichlet parameters.
    """
    from .accounting import optimal_order
    from .approximate_dp import analytic_gaussian_sigma

    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (2,):
        raise ValueError("counts must be a pair (ones, zeros) for the beta-binomial head to head")
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
    choice = optimal_order(epsilon_hat, delta, reference)
    calib = {"lam": choice.lam, "r_app_b": choice.r, "alpha": choice.alpha}
    scales = {"Dirichlet (App. B)": choice.r}
    if exact_dirichlet:
        calib["r_exact"] = dirichlet_exact_scale(choice.alpha, n, epsilon_hat, delta)
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


def full_audit(ns=(10, 30, 100, 300, 1000), epsilons=(0.1, 1.0, 5.0, 20.0, 50.0),
               deltas=(1e-6, 1e-2, 0.5), priors=FULL_PRIORS, spot_n=(10**4, 10**5), spot_pairs=41):
    """The chapter's audit at full size: dense for ``ns``, ``spot_pairs`` evenly spaced pairs at ``spot_n``.

    Returns a list of dicts (prior, n, epsilon, delta, exact delta at epsilon, pure epsilon / epsilon,
    dense or spot). Takes about ten minutes on one core with the defaults.
    """
    out = []
    for prior in priors:
        for n in ns:
            geom = geometry(prior, n)
            for delta in deltas:
                for eps in epsilons:
                    res = audit(hellinger_mechanism(prior, n, eps, delta, geom=geom).log_pmf,
                                geom.neighbours, [eps])
                    out.append(dict(prior=prior, n=n, epsilon=eps, delta=delta, exact_delta=res.delta[0],
                                    pure_ratio=res.pure_epsilon / eps, kind="dense"))
        for n in spot_n:
            pairs = np.unique(np.linspace(0, n - 1, spot_pairs).astype(np.int64))
            for eps in epsilons:
                res = audit_counts(prior, n, eps, deltas[0], pairs)
                out.append(dict(prior=prior, n=n, epsilon=eps, delta=deltas[0], exact_delta=res.delta[0],
                                pure_ratio=res.pure_epsilon / eps, kind="spot"))
    return out


if __name__ == "__main__":  # pragma: no cover - python -m lib.hellinger [--quick]
    import sys

    quick = "--quick" in sys.argv
    rows = full_audit(ns=(10, 100), spot_n=(10**3,), priors=FULL_PRIORS[:2]) if quick else full_audit()
    worst = max(rows, key=lambda r: r["pure_ratio"])
    print(f"{len(rows)} audits; largest exact delta at epsilon: {max(r['exact_delta'] for r in rows):.3g}")
    print(f"largest pure epsilon / epsilon: {worst['pure_ratio']:.4f} at {worst}")
