"""Reference computations for :mod:`lib.mechanisms.gohari`, Gohari et al. (2021)'s guarantee.

Slow, independent evaluations against which the fast double-precision
:func:`lib.mechanisms.gohari.gohari_delta` and :func:`lib.mechanisms.gohari.gohari_epsilon_at` are
checked (unit tests, ``benchmarks/bench_gohari.py`` and the chapter
``06_gohari_comparison``), and the fixed quadrature rule that stands in for the
original code's:

* :func:`delta_reference`: :math:`\\delta(\\gamma)` of one vertex in mpmath at
  ``dps`` digits, with mpmath's regularised incomplete Beta function
  (``mpmath.betainc``) and tanh-sinh quadrature;
* :func:`epsilon_reference`: :math:`\\hat\\varepsilon(\\gamma)` in mpmath, from the
  log-Beta values directly;
* :func:`delta_by_fixed_rule`: :math:`\\delta(\\gamma)` the way the original code
  computed it, one minus a fixed product rule over the triangle; its quadrature
  error, not :math:`\\delta`, dominates once :math:`\\delta` is small.

None of them is used by a guarantee; mpmath is imported only when a reference
is computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import ArrayLike
from numpy.polynomial import legendre
from scipy import special

from lib import validation
from lib.mechanisms.gohari.core import W_CHANGED, check_setting

if TYPE_CHECKING:
    import mpmath


def _mp_lower_tail(mp, x, a, b):
    """Regularised incomplete Beta function I_x(a, b) in mpmath, at the working precision.

    ``mpmath.betainc`` (its hypergeometric series, summed in fixed point with the
    precision raised where terms cancel), below the mean, ``x <= (a + 1)/(a + b + 2)``;
    above it, 1 - I_{1-x}(b, a), whose value is then at least about 1/2 (no
    cancellation that the working precision cannot absorb). The modified Lentz
    evaluation of the continued fraction that this replaced (ten times slower at
    50 digits) is the reference of the unit tests, which assert agreement to 45 digits.
    """
    if x > (a + 1) / (a + b + 2):
        return 1 - _mp_lower_tail(mp, 1 - x, b, a)
    return mp.betainc(a, b, 0, x, regularized=True)


def _mp_split_points(mp, a1, b1, lo, hi):
    """Break points of [lo, hi] around the bulk of a Beta(a1, b1) density."""
    n = a1 + b1
    mean = a1 / n
    sd = mp.sqrt(a1 * b1 / (n * n * (n + 1)))
    pts = [lo]
    for z in (-12, -6, -3, -1, 0, 1, 3, 6, 12):
        x = mean + z * sd
        if lo < x < hi:
            pts.append(x)
    pts.append(hi)
    return pts


def delta_reference(gamma: float, a: Sequence[float], *, dps: int = 50, method: str = "direct") -> mpmath.mpf:
    """:math:`1 - \\Pr[Z_i > \\gamma \\ \\forall i]` for :math:`Z \\sim \\mathrm{Dirichlet}(a)` in mpmath.

    A reference for the inclusion-exclusion of :func:`lib.mechanisms.gohari.gohari_delta`, at ``dps``
    decimal digits, with mpmath's regularised incomplete Beta function
    (``mpmath.betainc``) and tanh-sinh quadrature (``mpmath.quad``):

    * ``method="direct"`` integrates the probability that every part exceeds
      :math:`\\gamma`, :math:`\\int_\\gamma^{1-2\\gamma} f_1(y)\\,[1 - I_t(a_2, a_3) -
      I_t(a_3, a_2)]\\,dy` with :math:`t = \\gamma/(1-y)` and :math:`f_1` the
      Beta(:math:`a_1`, :math:`a_2 + a_3`) density (split around its bulk), and
      subtracts it from one; at 50 digits some 40 digits of :math:`\\delta \\ge
      10^{-9}` survive. Independent of the decomposition, but slow (seconds).
    * ``method="inclusion_exclusion"`` sums the three Beta tails and subtracts
      the pairwise terms, each integrated over :math:`[0, \\gamma]`: the same
      decomposition as :func:`lib.mechanisms.gohari.gohari_delta`, with different numerics; fast.

    For two parts both return :math:`I_\\gamma(a_1, a_2) + I_\\gamma(a_2, a_1)`.

    Parameters
    ----------
    gamma : float
        Threshold in :math:`(0, 1/n)` with :math:`n` = ``len(a)``.
    a : sequence of 2 or 3 floats
        Positive concentrations.
    dps : int, default 50
        mpmath working precision in decimal digits.
    method : {"direct", "inclusion_exclusion"}

    Returns
    -------
    mpmath.mpf
    """
    import mpmath as mp

    a = [float(x) for x in validation.vectors(a, "a", positive_entries=True)]
    if len(a) not in (2, 3):
        raise ValueError(f"a must have 2 or 3 entries; got {len(a)}")
    if method not in ("direct", "inclusion_exclusion"):
        raise ValueError(f"method must be 'direct' or 'inclusion_exclusion'; got {method!r}")
    validation.in_range(gamma, "gamma", 0.0, 1 / len(a), open_low=True)
    with mp.workdps(dps):
        g = mp.mpf(float(gamma))
        am = [mp.mpf(x) for x in a]
        a0 = sum(am)
        if len(a) == 2:
            return _mp_lower_tail(mp, g, am[0], am[1]) + _mp_lower_tail(mp, g, am[1], am[0])

        log_norm = {ai: mp.loggamma(a0) - mp.loggamma(ai) - mp.loggamma(a0 - ai) for ai in am}

        def density(y, ai):
            return mp.exp(log_norm[ai] + (ai - 1) * mp.log(y) + (a0 - ai - 1) * mp.log1p(-y))

        if method == "direct":
            a1, a2, a3 = am

            def integrand(y):
                t = g / (1 - y)
                inner = 1 - _mp_lower_tail(mp, t, a2, a3) - _mp_lower_tail(mp, t, a3, a2)
                return density(y, a1) * inner

            pts = _mp_split_points(mp, a1, a2 + a3, g, 1 - 2 * g)
            return 1 - mp.quad(integrand, pts)
        total = sum(_mp_lower_tail(mp, g, ai, a0 - ai) for ai in am)
        for i, j, l in ((0, 1, 2), (0, 2, 1), (1, 2, 0)):
            ai, aj, al = am[i], am[j], am[l]
            pts = _mp_split_points(mp, ai, a0 - ai, mp.mpf(0), g)
            total -= mp.quad(lambda y: density(y, ai) * _mp_lower_tail(mp, g / (1 - y), aj, al), pts)
        return total


def epsilon_reference(gamma: float, r: float, *, lam: float, n_total: float, d: int, min_count: int = 0,
                      dps: int = 50) -> mpmath.mpf:
    """:func:`lib.mechanisms.gohari.gohari_epsilon_at` in mpmath at ``dps`` digits (log-Beta values directly)."""
    import mpmath

    r, lam, n_total, d, m = check_setting(r, lam, n_total, d, min_count)
    with mpmath.workdps(dps):
        r_, lam_, n_ = mpmath.mpf(r), mpmath.mpf(lam), mpmath.mpf(n_total)
        alpha = 1 + 4 * (lam_ - 1) * r_
        k = n_ * r_ + alpha * d
        a = m * r_ + alpha
        c = k - a - (d - 2) * alpha
        g = mpmath.mpf(float(gamma))

        def log_beta(x, y):
            return mpmath.loggamma(x) + mpmath.loggamma(y) - mpmath.loggamma(x + y)

        return log_beta(a, c) - log_beta(a + r_, c - r_) + r_ * mpmath.log(1 / g - W_CHANGED + 1)


def delta_by_fixed_rule(gamma: ArrayLike, a: Sequence[float], n_nodes: int) -> np.ndarray | float:
    """:math:`1 - \\Pr[Z_i > \\gamma\\ \\forall i]` the way the original code computed it.

    The probability of the triangle :math:`\\{z_1, z_2 \\ge \\gamma,\\ z_1 + z_2 \\le
    1 - \\gamma\\}` under :math:`\\mathrm{Dirichlet}(a_1, a_2, a_3)` by one fixed
    product rule (``n_nodes`` Gauss-Legendre nodes per side of the square, mapped
    onto the triangle by the collapsed (Duffy) map, exact for polynomials of degree
    :math:`2n - 2` in :math:`z`), subtracted from one. It stands in for the
    fixed-degree triangle scheme of the original code (quadpy's Xiao-Gimbutas rule
    of degree 50, not freely licensed any more) to show what a fixed rule does:
    its quadrature error, not :math:`\\delta`, dominates once :math:`\\delta` is
    small. Not for use in a guarantee; :func:`lib.mechanisms.gohari.gohari_delta` is the accurate value.

    Parameters
    ----------
    gamma : array_like
        Thresholds in :math:`(0, 1/3)`.
    a : sequence of 3 floats
        Positive concentrations.
    n_nodes : int
        Gauss-Legendre nodes per direction, at least 1.

    Returns
    -------
    ndarray or float
        The fixed-rule value of :math:`\\delta(\\gamma)` (may be negative).
    """
    gamma = validation.in_range(gamma, "gamma", 0.0, 1 / 3, open_low=True)
    a = validation.vectors(a, "a", positive_entries=True)
    if a.shape != (3,):
        raise ValueError(f"a must have shape (3,); got {a.shape}")
    n_nodes = validation.integer(n_nodes, "n_nodes")
    x, w = legendre.leggauss(int(n_nodes))
    s, ws = 0.5 * (x + 1), 0.5 * w
    u, v = np.meshgrid(s, s, indexing="ij")
    wuv = np.outer(ws, ws) * u  # Jacobian of the collapse (times L^2 below)
    log_norm = special.gammaln(a.sum()) - special.gammaln(a).sum()
    g = np.atleast_1d(gamma).ravel()[:, None, None]
    side = 1 - 3 * g
    z1 = g + side * u * (1 - v)
    z2 = g + side * u * v
    z3 = 1 - z1 - z2
    log_density = log_norm + (a[0] - 1) * np.log(z1) + (a[1] - 1) * np.log(z2) + (a[2] - 1) * np.log(z3)
    inside = (np.exp(log_density) * wuv).sum(axis=(1, 2)) * side[:, 0, 0] ** 2
    return (1 - inside).reshape(gamma.shape)[()]
