"""Two steps of the proof of Theorem 1 (Appendix E of the paper), computed independently.

Chapter 3 checks the proof of Theorem 1 step by step. Two of its steps need a computation
that the mechanism itself never makes:

- the Taylor expansions with Lagrange remainder of :math:`G` and :math:`H` (the terms of
  eq. (17)), whose intermediate points :math:`\\xi, \\xi'` must lie in the stated intervals:
  :func:`lagrange_slack` measures, at 40 digits, how far inside they lie;
- the case :math:`\\lambda = 1` of the proof, which starts from the closed form of the KL
  divergence between two Dirichlet distributions: :func:`dirichlet_kl_closed_form` writes it
  term by term, as the proof does, independently of
  :func:`lib.mechanisms.dirichlet.divergence.renyi_divergence_dirichlet`.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation


def lagrange_slack(u: float, delta: float, lam: float, *, digits: int = 40) -> mp.mpf:
    """How far inside its interval each :math:`\\psi'(\\xi)` of the Taylor expansions lies.

    Appendix E expands, for one bin with :math:`u = u_i` and :math:`\\delta = u_i - u'_i`,

    .. math::
        G = (\\lambda - 1)(\\log\\Gamma(u - \\delta) - \\log\\Gamma(u))
          = -(\\lambda-1)\\delta\\psi(u) + \\tfrac12(\\lambda-1)\\delta^2\\psi'(\\xi'),

        H = \\log\\Gamma(u + (\\lambda-1)\\delta) - \\log\\Gamma(u)
          = (\\lambda-1)\\delta\\psi(u) + \\tfrac12(\\lambda-1)^2\\delta^2\\psi'(\\xi),

    with :math:`\\xi'` between :math:`u - \\delta` and :math:`u`, and :math:`\\xi` between
    :math:`u` and :math:`u + (\\lambda-1)\\delta`. Since :math:`\\psi'` is strictly decreasing,
    such a point exists exactly when the remainder, divided by its factor, lies between the
    values of :math:`\\psi'` at the two ends of the interval. The function returns the smallest
    distance from those required values of :math:`\\psi'` to the ends of their intervals: it is
    positive exactly when both intermediate points exist in the open intervals.

    Parameters
    ----------
    u : float
        :math:`u_i > 0`.
    delta : float
        :math:`\\delta \\ne 0`, with :math:`u - \\delta > 0` and
        :math:`u + (\\lambda - 1)\\delta > 0` (else the divergence of eq. (16) is infinite).
    lam : float
        The order :math:`\\lambda > 1`.
    digits : int, optional
        Working precision in decimal digits (the remainders are small differences of large
        log-Gamma values, so double precision is not enough).

    Returns
    -------
    mpmath.mpf
        The slack; positive when both :math:`\\psi'(\\xi)` and :math:`\\psi'(\\xi')` lie strictly
        inside their intervals.

    Examples
    --------
    >>> bool(lagrange_slack(2.5, 0.5, 2.0) > 0)
    True
    """
    u = validation.scalar(validation.positive(u, "u"), "u")
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    delta = validation.scalar(validation.in_range(delta, "delta", -np.inf, open_low=True), "delta")
    if delta == 0 or not np.isfinite(delta):
        raise ValueError(f"delta must be finite and non-zero (got {delta:g})")
    if u - delta <= 0 or u + (lam - 1) * delta <= 0:
        raise ValueError("u - delta and u + (lam - 1) delta must be in (0, inf): "
                         "else the divergence of eq. (16) is infinite")
    digits = validation.integer(digits, "digits", low=16)
    with mp.workdps(digits):
        ui, dl, lm = mp.mpf(u), mp.mpf(delta), mp.mpf(lam)
        g = (lm - 1) * (mp.loggamma(ui - dl) - mp.loggamma(ui))
        h = mp.loggamma(ui + (lm - 1) * dl) - mp.loggamma(ui)
        first = (lm - 1) * dl * mp.digamma(ui)
        need_g = (g + first) / ((lm - 1) * dl**2 / 2)        # psi'(xi')
        need_h = (h - first) / ((lm - 1)**2 * dl**2 / 2)     # psi'(xi)
        slack = mp.inf
        for need, end in ((need_g, ui - dl), (need_h, ui + (lm - 1) * dl)):
            low, high = sorted([mp.psi(1, ui), mp.psi(1, end)])
            slack = min(slack, need - low, high - need)
        return slack


def dirichlet_kl_closed_form(u: ArrayLike, v: ArrayLike) -> float:
    """The KL divergence :math:`D_{KL}(\\mathrm{Dir}(u) \\| \\mathrm{Dir}(v))` as Case 2 of the proof writes it.

    .. math::
        \\log\\Gamma(u_0) - \\sum_i\\log\\Gamma(u_i) - \\log\\Gamma(v_0) + \\sum_i\\log\\Gamma(v_i)
        + \\sum_i (u_i - v_i)(\\psi(u_i) - \\psi(u_0)),

    with :math:`u_0 = \\sum_i u_i` and :math:`v_0 = \\sum_i v_i` (Appendix E, the case
    :math:`\\lambda = 1` of Theorem 1). Evaluated term by term in double precision, without
    the cancellation-free rearrangement of
    :func:`lib.mechanisms.dirichlet.divergence.renyi_divergence_dirichlet`, so that the two
    can check each other.

    Parameters
    ----------
    u, v : array_like, shape (d,)
        Positive Dirichlet parameters, ``d >= 2``.

    Returns
    -------
    float
        The divergence.

    Examples
    --------
    >>> abs(dirichlet_kl_closed_form([2.0, 3.0], [2.0, 3.0])) < 1e-15   # rounding only
    True
    """
    u = validation.vectors(u, "u", positive_entries=True)
    v = validation.vectors(v, "v", positive_entries=True)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"u and v must be vectors of the same length (got shapes {u.shape} and {v.shape})")
    u0, v0 = u.sum(), v.sum()
    return float(special.gammaln(u0) - special.gammaln(u).sum()
                 - special.gammaln(v0) + special.gammaln(v).sum()
                 + ((u - v) * (special.digamma(u) - special.digamma(u0))).sum())
