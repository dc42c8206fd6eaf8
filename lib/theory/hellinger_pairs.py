"""Neighbouring pairs of the smoothed-Hellinger mechanism: what each pair spends, and tied scores.

For two categories the data sets of size :math:`n` are the counts :math:`a = 0, \\dots, n` of
ones, neighbours differ by one (the note's Definition 1.1, a replacement), and the rows of
:attr:`lib.mechanisms.hellinger.SmoothedHellinger.log_pmf` are ordered by :math:`a`.
:func:`pair_spend` is the pure :math:`\\varepsilon` each neighbouring pair :math:`(a, a + 1)`
spends, as a fraction of the nominal one, :func:`pair_label` names a pair as the book prints
it (a symmetric prior's mirror image folded onto the smaller count) and :func:`spend_by_label`
combines the two. :func:`tied_score_pairs` counts candidates whose scores
:math:`u(\\mathbf x, r) = -\\mathcal H(\\mathrm{BI}(\\mathbf x), r)` coincide, which the proof
of the note's Lemma 3.1 assumes (*the note*: ``papers/smoothed-hellinger-exponential-mechanism.md``).
"""

from __future__ import annotations

import numpy as np

from lib import validation
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet
from lib.mechanisms.hellinger import candidates, posteriors


def _prior(prior) -> tuple[float, float]:
    arr = validation.positive(prior, "prior")
    if arr.shape != (2,):
        raise ValueError(f"prior must be two positive numbers (alpha, beta); got shape {arr.shape}")
    return float(arr[0]), float(arr[1])


def tied_score_pairs(prior: tuple[float, float], n: int, a: int, *, atol: float = 1e-12) -> int:
    """How many adjacent pairs of the sorted scores coincide, the true posterior left out.

    The proof of the note's Lemma 3.1 rests on two candidates sharing every score. On the data
    set with ``a`` ones the candidates :math:`r \\ne \\mathrm{BI}(\\mathbf x)` are sorted by
    their Hellinger distance :math:`\\mathcal H(\\mathrm{BI}(\\mathbf x), r)` (Definition 2.1's
    score, up to its sign) and two neighbours in that order count as tied when they are within
    ``atol``. A symmetric prior at the centre ``a = n/2`` (``n`` even) pairs every candidate
    with its mirror image: ``n/2`` pairs.

    Parameters
    ----------
    prior : (float, float)
        The Beta prior :math:`(\\alpha, \\beta)`, both positive.
    n : int
        Public data set size, at least 1.
    a : int
        Number of ones of the data set, in ``[0, n]``.
    atol : float, optional
        Absolute tolerance on the distances, non-negative.

    Returns
    -------
    int
        The number of tied adjacent pairs, in ``[0, n - 1]``.
    """
    prior = _prior(prior)
    n = validation.integer(n, "n", 1)
    a = validation.integer(a, "a", 0, n)
    atol = validation.scalar(validation.nonnegative(atol, "atol"), "atol")
    post = posteriors(prior, candidates(n))
    h = np.sort(hellinger_dirichlet(post[a], post))[1:]
    return int(np.sum(np.isclose(h[1:], h[:-1], rtol=0, atol=atol)))


def pair_label(prior: tuple[float, float], n: int, pair: tuple[int, int]) -> tuple[int, int]:
    """The neighbouring pair ``(a, a + 1)`` as the book prints it.

    A symmetric prior's mirror image :math:`(n - 1 - a, n - a)` spends the same to rounding, so
    the smaller of :math:`a` and :math:`n - 1 - a` stands for both.

    Parameters
    ----------
    prior : (float, float)
        The Beta prior, both positive.
    n : int
        Public data set size, at least 1.
    pair : (int, int)
        Two counts in ``[0, n]`` that differ by one, in either order.

    Returns
    -------
    (int, int)
    """
    prior = _prior(prior)
    n = validation.integer(n, "n", 1)
    lo, hi = sorted(validation.integer(c, "pair", 0, n) for c in pair)
    if hi - lo != 1:
        raise ValueError(f"pair must be two neighbouring counts (a, a + 1) in [0, {n}]; got ({lo}, {hi})")
    if prior[0] == prior[1]:
        lo = min(lo, n - 1 - lo)
    return (lo, lo + 1)


def _log_pmf(log_pmf) -> np.ndarray:
    lp = np.asarray(log_pmf, dtype=float)
    if lp.ndim != 2 or lp.shape[0] < 2 or lp.shape[1] == 0:
        raise ValueError(f"log_pmf must be a matrix with one row per count 0..n (n >= 1); got shape {lp.shape}")
    if np.isnan(lp).any() or np.isposinf(lp).any():
        raise ValueError("log_pmf must hold log-probabilities (no NaN, no +inf)")
    return lp


def pair_spend(log_pmf: np.ndarray, epsilon: float) -> np.ndarray:
    """The pure epsilon each pair of neighbouring counts spends, as a fraction of ``epsilon``.

    Entry ``a`` is :math:`\\max_r |\\log P_a(r) - \\log P_{a+1}(r)| / \\varepsilon`, the smallest
    :math:`\\varepsilon'` with :math:`P_a \\le e^{\\varepsilon'} P_{a+1}` and back (Definition 1.2
    with :math:`\\delta = 0`), in units of the nominal :math:`\\varepsilon`.

    Parameters
    ----------
    log_pmf : ndarray (n + 1, C)
        Row ``a`` is the log output distribution on the data set with ``a`` ones
        (:attr:`lib.mechanisms.hellinger.SmoothedHellinger.log_pmf` for two categories).
    epsilon : float
        The nominal epsilon, positive.

    Returns
    -------
    ndarray (n,)
    """
    lp = _log_pmf(log_pmf)
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    return np.abs(np.diff(lp, axis=0)).max(axis=1) / epsilon


def spend_by_label(prior: tuple[float, float], log_pmf: np.ndarray, epsilon: float) -> dict:
    """The largest :func:`pair_spend` under each :func:`pair_label` (mirror images combined).

    Parameters
    ----------
    prior : (float, float)
        The Beta prior of the mechanism, both positive.
    log_pmf : ndarray (n + 1, C)
        As in :func:`pair_spend`.
    epsilon : float
        The nominal epsilon, positive.

    Returns
    -------
    dict
        ``{(a, a + 1): fraction of epsilon}``, in increasing ``a``.
    """
    spend = pair_spend(log_pmf, epsilon)
    n = spend.size
    out: dict = {}
    for a, s in enumerate(spend):
        label = pair_label(prior, n, (a, a + 1))
        out[label] = max(out.get(label, 0.0), float(s))
    return dict(sorted(out.items()))
