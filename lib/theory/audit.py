"""Privacy audits of Theorem 1 (Section 3.2 and Appendix E).

Theorem 1 says that the Dirichlet mechanism of Algorithm 1 is
:math:`(\\lambda, \\varepsilon)`-RDP: for every pair of neighbouring histograms
:math:`f = f(x)` and :math:`f' = f(x')`,

.. math::
    D_\\lambda\\bigl(\\mathrm{Dir}(r f + \\alpha) \\,\\|\\, \\mathrm{Dir}(r f' + \\alpha)\\bigr)
    \\le \\varepsilon .

This module checks that claim against the exact divergence of eqs. (16)-(17):

* :func:`divergence_term` is one summand of eq. (17), divided by
  :math:`\\lambda - 1`, and :func:`worst_case_divergence` the exact largest
  divergence over *all* neighbouring histograms, in closed form (both from
  :mod:`lib.mechanisms.dirichlet.curve`, where they are the mechanism's exact
  Renyi curve);
* :func:`random_pair_audit` compares the exact divergence with the claimed
  :math:`\\varepsilon` on random neighbouring pairs;
* :func:`renyi_divergence_by_quadrature` evaluates the divergence by numerical
  integration, independently of eq. (16).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, special

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.dirichlet.curve import divergence_term, worst_case_divergence  # noqa: F401 (eq. (16)'s term, audited here)
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.privacy.neighbours import random_neighbours


def divergence_both_ways(u: ArrayLike, v: ArrayLike, lam: ArrayLike) -> np.ndarray | float:
    """:math:`\\max\\{D_\\lambda(\\mathrm{Dir}(u)\\|\\mathrm{Dir}(v)), D_\\lambda(\\mathrm{Dir}(v)\\|\\mathrm{Dir}(u))\\}`.

    RDP bounds the divergence in both orders of a neighbouring pair; this is
    the larger one, from :func:`lib.renyi_divergence_dirichlet`.

    Parameters
    ----------
    u, v : array_like, shape (..., d)
        Positive Dirichlet parameters; the leading axes broadcast.
    lam : array_like
        Order :math:`\\lambda \\in [1, \\infty)`.

    Returns
    -------
    ndarray or float
    """
    return np.maximum(renyi_divergence_dirichlet(u, v, lam), renyi_divergence_dirichlet(v, u, lam))[()]


class AuditResult(NamedTuple):
    """One row per audited pair of neighbouring histograms (see :func:`random_pair_audit`).

    Attributes
    ----------
    d, max_count : ndarray of int
        Number of bins, and the largest count the first histogram could draw.
    lam, epsilon : ndarray
        The privacy target :math:`(\\lambda, \\varepsilon)` of the pair.
    r, alpha : ndarray
        Lines 1-2 of Algorithm 1 for that target.
    kind : ndarray of str
        ``"add"``, ``"remove"`` or ``"move"``: how the second histogram differs.
    empty_bins : ndarray of int
        Number of bins that are empty in at least one of the two histograms.
    divergence : ndarray
        The exact divergence, larger of the two directions.
    worst_case : ndarray
        :func:`worst_case_divergence` at ``(r, alpha, lam)``.
    """

    d: np.ndarray
    max_count: np.ndarray
    lam: np.ndarray
    epsilon: np.ndarray
    r: np.ndarray
    alpha: np.ndarray
    kind: np.ndarray
    empty_bins: np.ndarray
    divergence: np.ndarray
    worst_case: np.ndarray


def random_pair_audit(
    pairs_per_cell: int,
    dims: Iterable[int] = range(2, 51),
    max_counts: Iterable[int] = (1, 10, 1000),
    *,
    lam_minus_one: tuple[float, float] = (1e-3, 1e3),
    epsilon: tuple[float, float] = (1e-3, 1e3),
    share_lam_one: float = 0.1,
    rng: SeedLike = None,
) -> AuditResult:
    """Audit Theorem 1 on random pairs of neighbouring histograms.

    For every number of bins ``d`` in ``dims`` and every ``max_count`` in
    ``max_counts``, ``pairs_per_cell`` pairs come from
    :func:`lib.random_neighbours` (counts uniform on ``[0, max_count]``, so
    empty bins are common; one record added, removed or moved). Each pair gets
    its own privacy target: :math:`\\varepsilon` log-uniform on ``epsilon`` and
    :math:`\\lambda - 1` log-uniform on ``lam_minus_one``, except a share
    ``share_lam_one`` of pairs with :math:`\\lambda = 1` exactly. The mechanism
    is calibrated by :func:`lib.calibrate` (:math:`\\Delta_2^2 = 2`,
    :math:`\\Delta_\\infty = 1`) and the exact divergence is computed in both
    directions.

    Parameters
    ----------
    pairs_per_cell : int
        Pairs per ``(d, max_count)``, at least 1.
    dims : iterable of int
        Numbers of bins, each at least 2.
    max_counts : iterable of int
        Upper ends of the count distribution, each at least 0.
    lam_minus_one, epsilon : (float, float)
        Ranges ``(low, high)`` with ``0 < low <= high``.
    share_lam_one : float
        Fraction of pairs with :math:`\\lambda = 1`, in ``[0, 1]``.
    rng : numpy.random.Generator or int or None
        Source of randomness.

    Returns
    -------
    AuditResult
        Arrays with one entry per pair; Theorem 1 claims
        ``divergence <= epsilon`` everywhere.
    """
    rng = validation.generator(rng)
    if not isinstance(pairs_per_cell, (int, np.integer)) or pairs_per_cell < 1:
        raise ValueError(f"pairs_per_cell must be an integer in [1, inf); got {pairs_per_cell!r}")
    dims, max_counts = list(dims), list(max_counts)
    if not dims or not max_counts:
        raise ValueError("dims and max_counts must not be empty")
    for name, value in (("lam_minus_one", lam_minus_one), ("epsilon", epsilon)):
        low, high = validation.positive(value, name)
        if low > high:
            raise ValueError(f"{name} must be a range (low, high) with low <= high; got {value!r}")
    validation.in_range(share_lam_one, "share_lam_one", 0.0, 1.0, open_low=False, open_high=False)

    rows = []
    kinds = np.array(["remove", "move", "add"])
    for d in dims:
        for max_count in max_counts:
            f, g = random_neighbours(pairs_per_cell, d, max_count=max_count, rng=rng)
            n = pairs_per_cell
            eps = np.exp(rng.uniform(*np.log(epsilon), size=n))
            lam = 1 + np.exp(rng.uniform(*np.log(lam_minus_one), size=n))
            lam[rng.random(n) < share_lam_one] = 1.0
            r, alpha = calibrate(eps, lam)
            u = r[:, None] * f + alpha[:, None]
            v = r[:, None] * g + alpha[:, None]
            change = (g - f).sum(axis=1).astype(int)  # -1 remove, 0 move, +1 add
            rows.append(
                (np.full(n, d), np.full(n, max_count), lam, eps, r, alpha, kinds[change + 1],
                 ((f == 0) | (g == 0)).sum(axis=1), divergence_both_ways(u, v, lam), worst_case_divergence(r, alpha, lam))
            )
    return AuditResult(*(np.concatenate(column) for column in zip(*rows)))


def renyi_divergence_by_quadrature(u: ArrayLike, v: ArrayLike, lam: float) -> float:
    """:math:`D_\\lambda(\\mathrm{Dir}(u) \\| \\mathrm{Dir}(v))` by numerical integration, for ``d`` = 2 or 3.

    Integrates :math:`p^\\lambda q^{1-\\lambda}` (or :math:`p\\log(p/q)` for
    :math:`\\lambda = 1`) over the simplex, with the densities written from their
    definition, so that the closed form of eq. (16) can be checked against it.
    ``scipy.integrate.quad`` (``d = 2``) and ``dblquad`` (``d = 3``) with a
    relative tolerance of 1e-11. Meant for moderate parameters (up to a few
    hundred), where the integrand is not too sharply peaked.

    Parameters
    ----------
    u, v : array_like, shape (d,)
        Positive parameters, ``d`` in {2, 3}.
    lam : float
        Order :math:`\\lambda \\in [1, \\infty)`.

    Returns
    -------
    float
    """
    u = validation.vectors(u, "u", positive_entries=True)
    v = validation.vectors(v, "v", positive_entries=True)
    lam = validation.scalar(validation.order(lam, "lam"), "lam")
    if u.ndim != 1 or u.shape != v.shape or u.size not in (2, 3):
        raise ValueError(f"u and v must be vectors of the same length 2 or 3; got shapes {u.shape} and {v.shape}")
    log_norm_u = special.gammaln(u.sum()) - special.gammaln(u).sum()
    log_norm_v = special.gammaln(v.sum()) - special.gammaln(v).sum()

    def integrand(*y):
        log_y = np.log([*y, 1 - sum(y)])
        log_p = log_norm_u + (u - 1) @ log_y
        log_q = log_norm_v + (v - 1) @ log_y
        if lam == 1:
            return np.exp(log_p) * (log_p - log_q)
        return np.exp(lam * log_p + (1 - lam) * log_q)

    tol = dict(epsabs=0.0, epsrel=1e-11)
    if u.size == 2:
        value = integrate.quad(integrand, 0, 1, limit=200, **tol)[0]
    else:
        value = integrate.dblquad(lambda y2, y1: integrand(y1, y2), 0, 1, 0, lambda y1: 1 - y1, **tol)[0]
    return float(value) if lam == 1 else float(np.log(value) / (lam - 1))
