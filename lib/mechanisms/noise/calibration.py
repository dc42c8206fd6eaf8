"""The :math:`(\\hat\\varepsilon, \\delta)` calibrations of the Gaussian and Laplace mechanisms.

The noise mechanisms of :mod:`lib.mechanisms.noise` meet an approximate-DP
target for a whole model of :math:`m` histogram releases (Appendix C of the
paper) with these solvers:

* :func:`analytic_gaussian_sigma`: the exact :math:`\\sigma` of Balle and
  Wang's analytic Gaussian mechanism (:func:`analytic_gaussian_delta`) at the
  joint :math:`\\ell_2`-sensitivity :math:`\\sqrt{2m}` of the :math:`m`
  releases;
* :func:`laplace_dp_scale`: pure DP, each release at the per-release share of
  the one budget split (:meth:`lib.privacy.guarantees.PureDP.split`);
* :func:`classical_gaussian_sigma` and :func:`rdp_gaussian_sigma`: the
  classical formula (proved for :math:`\\hat\\varepsilon < 1` only) and the
  route through RDP and eq. (14), kept for the comparison of chapter 09;
* :func:`author_laplace_scale`: the author's per-release Laplace scale, for
  comparison only.

References
----------
Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for
differential privacy: analytical calibration and optimal denoising. ICML.

Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential
privacy. Foundations and Trends in Theoretical Computer Science 9(3-4).

Mironov, I. (2017). Renyi differential privacy. CSF.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation
from lib.privacy.accounting import MAX_BRACKET_STEPS, dp_to_rdp, min_order, search_order
from lib.privacy.guarantees import PureDP
from lib.mechanisms.protocol import L1

#: Largest epsilon_hat of :func:`analytic_gaussian_sigma`: above it the terms of
#: delta cancel beyond double precision (checked by the hardening tests).
GAUSSIAN_EPSILON_HAT_MAX = 1e10


def analytic_gaussian_delta(sigma: ArrayLike, epsilon_hat: ArrayLike, sensitivity: ArrayLike) -> np.ndarray | float:
    """Exact :math:`\\delta(\\hat\\varepsilon)` of the Gaussian mechanism (Balle and Wang 2018, Thm 8).

    Parameters
    ----------
    sigma : array_like
        Noise standard deviation :math:`\\sigma \\in (0, \\infty)`.
    epsilon_hat : array_like
        :math:`\\hat\\varepsilon \\in (0, \\infty)`.
    sensitivity : array_like
        :math:`\\ell_2`-sensitivity :math:`\\Delta \\in (0, \\infty)` of the query.
        The three broadcast together.

    Returns
    -------
    ndarray or float
        The smallest :math:`\\delta \\in [0, 1]` for which the mechanism is
        :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Raises
    ------
    ValueError
        If an argument is not positive and finite, or the shapes do not broadcast.

    Notes
    -----
    Adding :math:`N(0, \\sigma^2 I)` to a query of :math:`\\ell_2`-sensitivity
    :math:`\\Delta` is :math:`(\\hat\\varepsilon, \\delta)`-DP exactly for

    .. math::
        \\delta = \\Phi\\Big(\\frac{\\Delta}{2\\sigma} - \\frac{\\hat\\varepsilon\\sigma}{\\Delta}\\Big)
        - e^{\\hat\\varepsilon}\\,\\Phi\\Big(-\\frac{\\Delta}{2\\sigma}
        - \\frac{\\hat\\varepsilon\\sigma}{\\Delta}\\Big)

    and for no smaller :math:`\\delta` (the privacy loss of a Gaussian is itself
    Gaussian). Evaluated as :math:`\\Phi(a)\\,(1 - e^{\\hat\\varepsilon + \\log\\Phi(b)
    - \\log\\Phi(a)})` with ``scipy.special.log_ndtr``, accurate far into the tails.

    Examples
    --------
    >>> round(float(analytic_gaussian_delta(1.0, 0.5, 1.0)), 6)
    0.238422
    """
    sigma, eps, sens = validation.broadcast(
        sigma=validation.positive(sigma, "sigma"),
        epsilon_hat=validation.positive(epsilon_hat, "epsilon_hat"),
        sensitivity=validation.positive(sensitivity, "sensitivity"),
    )
    return _gaussian_delta(sigma, eps, sens)


def _gaussian_delta(sigma, eps, sens):
    """:func:`analytic_gaussian_delta` of checked, broadcast arrays (the root search's inner loop)."""
    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    log_a = special.log_ndtr(a)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.exp(log_a) * -np.expm1(eps + special.log_ndtr(b) - log_a)
    # Phi(a) underflows to 0 far in the tail (-inf - -inf is NaN): delta is 0 there;
    # rounding can leave a hair below 0 where delta is far below Phi(a).
    out = np.where(np.isneginf(log_a), 0.0, out)
    return np.maximum(out, 0.0)[()]


def analytic_gaussian_sigma(epsilon_hat: float, delta: float, sensitivity: float) -> float:
    """The smallest :math:`\\sigma` with :func:`analytic_gaussian_delta` :math:`\\le \\delta`.

    Parameters
    ----------
    epsilon_hat : float
        :math:`\\hat\\varepsilon \\in (0, \\infty)`.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    sensitivity : float
        :math:`\\ell_2`-sensitivity :math:`\\Delta > 0` of the whole query
        (:math:`\\sqrt{2m}` for :math:`m` histogram releases).

    Returns
    -------
    float
        The noise standard deviation :math:`\\sigma`.

    Raises
    ------
    ValueError
        On invalid arguments, for :math:`\\hat\\varepsilon` above
        :data:`GAUSSIAN_EPSILON_HAT_MAX` (double precision cannot resolve
        :math:`\\delta` there), or when :math:`\\sigma` is outside double precision.

    Notes
    -----
    :math:`\\delta(\\sigma)` decreases strictly from 1 (as :math:`\\sigma \\to 0`) to
    0, so the root is unique. It is bracketed by unit steps in
    :math:`\\log\\sigma` from :math:`\\sigma = \\Delta`, then found in
    :math:`\\log\\sigma` by Brent's method to a relative :math:`10^{-12}` in
    :math:`\\sigma`. Valid for every :math:`\\hat\\varepsilon > 0` (Balle and Wang 2018,
    Algorithm 1, without its restriction).

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5, 2.0)
    >>> round(float(analytic_gaussian_delta(s, 1.0, 2.0)) / 1e-5, 9)
    1.0
    """
    eps, dlt = validation.dp_target(epsilon_hat, delta)
    sens = validation.scalar(validation.positive(sensitivity, "sensitivity"), "sensitivity")
    if eps > GAUSSIAN_EPSILON_HAT_MAX:
        raise ValueError(f"epsilon_hat must be in (0, {GAUSSIAN_EPSILON_HAT_MAX:g}] for the analytic Gaussian "
                         f"calibration (beyond it double precision cannot resolve delta); got {eps:g}")

    def gap(t):  # delta underflows to 0 only far above the root: log(0) = -inf is fine
        with np.errstate(divide="ignore"):
            sigma = np.exp(t)
            if not 0 < sigma < np.inf:  # outside double precision: the checked path raises
                analytic_gaussian_delta(sigma, eps, sens)
            return np.log(_gaussian_delta(sigma, eps, sens)) - np.log(dlt)

    lo = hi = np.log(sens)
    for _ in range(MAX_BRACKET_STEPS):  # delta -> 1 as sigma -> 0
        if gap(lo) > 0:
            break
        lo -= 1.0
    else:
        raise ValueError(f"no sigma above {np.exp(lo):.3g} reaches delta = {dlt:g} at epsilon_hat = {eps:g} "
                         f"and sensitivity = {sens:g}; epsilon_hat / sensitivity is beyond double precision")
    for _ in range(MAX_BRACKET_STEPS):  # delta -> 0 as sigma -> inf
        if gap(hi) <= 0:
            break
        hi += 1.0
    else:
        raise ValueError(f"no sigma below {np.exp(hi):.3g} reaches delta = {dlt:g} at epsilon_hat = {eps:g} "
                         f"and sensitivity = {sens:g}; epsilon_hat / sensitivity is beyond double precision")
    t = validation.brentq(gap, lo, hi, f"the Gaussian sigma of epsilon_hat = {eps:g}, delta = {dlt:g}",
                         xtol=1e-13, rtol=4 * np.finfo(float).eps)
    sigma = float(np.exp(t))
    if not 0 < sigma < np.inf:
        raise ValueError(f"sigma for epsilon_hat = {eps:g}, delta = {dlt:g}, sensitivity = {sens:g} is "
                         "outside double precision")
    return sigma


def classical_gaussian_sigma(epsilon_hat: float, delta: float, sensitivity: float) -> float:
    """The classical :math:`\\sigma = \\sqrt{2\\log(1.25/\\delta)}\\,\\Delta/\\hat\\varepsilon`.

    Parameters
    ----------
    epsilon_hat, delta, sensitivity : float
        As in :func:`analytic_gaussian_sigma`.

    Returns
    -------
    float
        :math:`\\sigma`; a valid calibration for :math:`\\hat\\varepsilon < 1` only.

    Raises
    ------
    ValueError
        On invalid arguments, or when :math:`\\sigma` is outside double precision.

    Notes
    -----
    Dwork and Roth (2014), Theorem A.1, proved for :math:`\\hat\\varepsilon < 1`
    only; for larger :math:`\\hat\\varepsilon` the exact :math:`\\delta` of this
    :math:`\\sigma` (:func:`analytic_gaussian_delta`) exceeds the target. Used
    here only to show that (the author's code used it for every
    :math:`\\hat\\varepsilon`).
    """
    eps, dlt = validation.dp_target(epsilon_hat, delta)
    sens = validation.scalar(validation.positive(sensitivity, "sensitivity"), "sensitivity")
    with np.errstate(over="ignore", under="ignore"):
        sigma = float(np.sqrt(2 * np.log(1.25 / dlt)) * sens / eps)
    if not 0 < sigma < np.inf:
        raise ValueError(f"sigma = sqrt(2 log(1.25/delta)) sensitivity / epsilon_hat is outside double precision "
                         f"for epsilon_hat = {eps:g}, delta = {dlt:g}, sensitivity = {sens:g}")
    return sigma


def rdp_gaussian_sigma(epsilon_hat: float, delta: float, sensitivity: float, *, grid_size: int = 256) -> float:
    """:math:`\\sigma` from RDP (Mironov 2017, Cor. 3) and eq. (14) at the best order.

    Parameters
    ----------
    epsilon_hat, delta, sensitivity : float
        As in :func:`analytic_gaussian_sigma`.
    grid_size : int, default 256
        Points of the first grid of the order search, at least 8.

    Returns
    -------
    float
        :math:`\\sigma` at the order that minimises it.

    Raises
    ------
    ValueError
        If an argument is out of range or ``grid_size`` is below 8.

    Notes
    -----
    The Gaussian mechanism is :math:`(\\lambda, \\lambda\\Delta^2/(2\\sigma^2))`-RDP
    at every order; eq. (14) at order :math:`\\lambda` then needs
    :math:`\\sigma^2 = \\lambda\\Delta^2 / (2\\,\\varepsilon(\\lambda))` with
    :math:`\\varepsilon(\\lambda)` = ``dp_to_rdp(epsilon_hat, lam, delta)``. The
    order is chosen to minimise :math:`\\sigma` (grid in
    :math:`\\log(\\lambda - \\lambda_0)`, then two finer grids, :func:`lib.privacy.accounting.search_order`). A valid
    but looser calibration than :func:`analytic_gaussian_sigma`, kept for the
    comparison.
    """
    eps, dlt = validation.dp_target(epsilon_hat, delta)
    sens = validation.scalar(validation.positive(sensitivity, "sensitivity"), "sensitivity")

    def log_var(lam):
        return np.log(lam * sens**2 / 2) - np.log(dp_to_rdp(eps, lam, dlt))

    lam0 = min_order(eps, dlt)
    _, value = search_order(eps, dlt, log_var, lam_max=lam0 + 1e4 / dlt,
                            grid_size=validation.integer(grid_size, "grid_size", 8))
    return float(np.exp(value / 2))


def laplace_dp_scale(epsilon_hat: float, n_releases: int, l1: float = L1) -> float:
    """Laplace scale :math:`b = \\Delta_1/(\\hat\\varepsilon/m)`: pure DP, basic composition.

    Parameters
    ----------
    epsilon_hat : float
        Pure-DP level :math:`\\hat\\varepsilon \\in (0, \\infty)` of the whole model.
    n_releases : int
        The number :math:`m \\ge 1` of releases.
    l1 : float, default :data:`lib.mechanisms.protocol.L1`
        :math:`\\ell_1`-sensitivity :math:`\\Delta_1 > 0` of one release.

    Returns
    -------
    float
        The scale :math:`b` of every release.

    Raises
    ------
    ValueError
        If ``epsilon_hat`` or ``l1`` is not positive and finite, or ``n_releases``
        is not an integer of at least 1.

    Notes
    -----
    The budget is split by the one split of the book,
    ``PureDP(epsilon_hat).split(m)``: each of the :math:`m` releases is
    :math:`\\Delta_1/b = \\hat\\varepsilon/m`-DP; :math:`m` of them compose to
    :math:`\\hat\\varepsilon`-DP, hence :math:`(\\hat\\varepsilon, \\delta)`-DP for
    every :math:`\\delta \\ge 0`.

    Examples
    --------
    >>> laplace_dp_scale(1.0, 14)
    28.0
    """
    eps = validation.scalar(validation.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    l1 = validation.scalar(validation.positive(l1, "l1"), "l1")
    share = PureDP(eps).split(validation.integer(n_releases, "n_releases"))
    return float(l1 / share.epsilon)


def author_laplace_scale(epsilon_hat: float, delta: float, l1: float = L1) -> float:
    """The author's per-release Laplace scale, recorded for comparison only.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target the author's code passed, :math:`\\hat\\varepsilon > 0` and
        :math:`\\delta \\in (0, 1)`.
    l1 : float, default :data:`lib.mechanisms.protocol.L1`
        :math:`\\ell_1`-sensitivity :math:`\\Delta_1 > 0` of one release.

    Returns
    -------
    float

    Notes
    -----
    :math:`\\Delta_1/\\hat\\varepsilon\\cdot\\sqrt{\\log(0.5/\\delta)/\\log(1/\\delta)}`
    (``ORIGINAL_CODE_NOTES.md`` §4): a factor just below one on the pure-DP scale
    of ONE release, with :math:`\\delta` entering although the Laplace mechanism
    needs none.
    """
    eps, dlt = validation.dp_target(epsilon_hat, delta)
    l1 = validation.scalar(validation.positive(l1, "l1"), "l1")
    return float(l1 / eps * np.sqrt(np.log(0.5 / dlt) / np.log(1 / dlt)))
