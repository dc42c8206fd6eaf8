"""The Renyi DP of the noise mechanisms (Mironov 2017, Corollaries 2 and 3) and its inverse for Laplace noise.

:func:`laplace_rdp` is the RDP curve of Laplace noise of scale :math:`b` on a statistic of
:math:`\\ell_1`-sensitivity :math:`\\Delta_1` (a series where :math:`b` is large, where the
closed form cancels), :func:`laplace_scale` the scale that attains a target;
:func:`gaussian_rdp_curve` and :func:`laplace_rdp_curve` are the curves the mechanisms state
in their guarantees.
"""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike

from lib import validation


def laplace_rdp(scale: ArrayLike, lam: ArrayLike, l1: ArrayLike = 1.0) -> np.ndarray | float:
    """RDP of the Laplace mechanism (Mironov 2017, Corollary 2).

    For a query with :math:`\\ell_1`-sensitivity :math:`\\Delta_1` released with
    Laplace noise of scale :math:`b` in every coordinate, write
    :math:`s = \\Delta_1 / b`. The mechanism is :math:`(\\lambda,\\varepsilon)`-RDP with

    .. math::
        \\varepsilon = \\frac{1}{\\lambda-1}\\log\\Big(\\frac{\\lambda}{2\\lambda-1}
        e^{(\\lambda-1)s} + \\frac{\\lambda-1}{2\\lambda-1}e^{-\\lambda s}\\Big),

    exact for a scalar query whose value moves by :math:`\\Delta_1`. It is
    evaluated as :math:`s + \\log(1 + \\frac{\\lambda-1}{2\\lambda-1}
    (e^{-(2\\lambda-1)s} - 1))/(\\lambda-1)`, which cannot overflow. For a vector
    query whose coordinates move by :math:`a_i` with :math:`\\sum|a_i| \\le
    \\Delta_1` the divergence is :math:`\\sum_i\\varepsilon(|a_i|/b)`; the curve is
    convex in :math:`s` and zero at 0, hence superadditive, so the scalar value at
    :math:`\\Delta_1` bounds it.

    Parameters
    ----------
    scale : array_like
        Laplace scale :math:`b \\in (0, \\infty)`.
    lam : array_like
        Renyi order :math:`\\lambda \\in (1, \\infty)`.
    l1 : array_like, default 1.0
        :math:`\\ell_1`-sensitivity :math:`\\Delta_1 \\in (0, \\infty)`.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon`, broadcast over the inputs.

    Examples
    --------
    >>> round(float(laplace_rdp(1.0, lam=2.0)), 6)   # log(2/3 e + 1/3 e^-2)
    0.619124
    """
    scale = validation.positive(scale, "scale")
    lam = validation.order(lam, "lam", strict=True)
    l1 = validation.positive(l1, "l1")
    scale, lam, l1 = validation.broadcast(scale=scale, lam=lam, l1=l1)
    with np.errstate(over="ignore", under="ignore"):
        s = l1 / scale
    if not np.all(np.isfinite(s)):
        raise ValueError(f"l1 / scale overflows double precision (scale down to {np.min(scale):g}); "
                         "raise scale or lower l1")
    out = np.asarray(_laplace_rdp(s, lam))
    small = (2 * lam - 1) * s < _SERIES_BELOW
    if np.any(small):
        out = np.where(small, np.exp(_laplace_log_rdp_series(s, lam)), out)
    return out[()]


#: Below this (2 lam - 1) s the closed form of :func:`laplace_rdp` cancels (its
#: relative error is about 1e-16 / (lam s)); the series is used instead.
_SERIES_BELOW = 1e-6


def _laplace_rdp(s, lam):
    """The closed form of :func:`laplace_rdp` at ``s = l1 / scale`` (accurate unless s is tiny)."""
    c = (lam - 1) / (2 * lam - 1)
    return s + np.log1p(c * np.expm1(-(2 * lam - 1) * s)) / (lam - 1)


def _laplace_log_rdp_series(s, lam):
    """log of :func:`laplace_rdp` for ``(2 lam - 1) s < 1e-6``, without cancellation.

    With :math:`A = \\lambda/(2\\lambda-1)`, :math:`B = 1 - A`, the argument of the
    logarithm is :math:`1 + z`, :math:`z = A(e^{(\\lambda-1)s} - 1) + B(e^{-\\lambda s}
    - 1)`, whose first-order terms cancel exactly:
    :math:`z = \\tfrac12\\lambda(\\lambda-1)s^2\\,(1 - s/3 + (\\lambda^2-\\lambda+1)s^2/12 + O(\\lambda^3 s^3))`,
    so :math:`\\varepsilon = \\log(1+z)/(\\lambda-1) = \\tfrac12\\lambda s^2 (1 - s/3 +
    (\\lambda^2-\\lambda+1)s^2/12)(1 - z/2 + z^2/3)`, with a relative truncation error
    below :math:`10^{-18}` there. Returned in logarithms (no underflow).
    """
    ls = lam * s
    z = 0.5 * ls * (lam - 1) * s
    shape = -s / 3 + (ls * ls - ls * s + s * s) / 12
    return np.log(0.5 * lam) + 2 * np.log(s) + np.log1p(shape) + np.log1p(-z / 2 + z * z / 3)


def _laplace_log_rdp(s, lam):
    """log of :func:`laplace_rdp` at ``s = l1 / scale``, finite for every s > 0."""
    u = (2 * lam - 1) * s
    if u < _SERIES_BELOW:
        return float(_laplace_log_rdp_series(s, lam))
    return float(np.log(_laplace_rdp(s, lam)))


def laplace_scale(epsilon: ArrayLike, lam: float, l1: float = 1.0) -> np.ndarray | float:
    """The Laplace scale :math:`b` at which :func:`laplace_rdp` equals ``epsilon``.

    The curve decreases strictly from :math:`\\infty` (as :math:`b \\to 0`) to 0
    (as :math:`b \\to \\infty`), so the root is unique. Since the mechanism is
    :math:`\\Delta_1/b`-DP, :math:`\\varepsilon(b) \\le \\Delta_1/b`: the right end
    :math:`b_+ = \\Delta_1/\\varepsilon` has :math:`\\varepsilon(b_+) \\le \\varepsilon`.
    The left end halves :math:`b_+` until the curve exceeds ``epsilon``. The root
    is then found in :math:`\\log b` by Brent's bracketing method to a relative
    accuracy of about :math:`10^{-14}`.

    Parameters
    ----------
    epsilon : array_like
        Target RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam, l1 : float
        Renyi order :math:`\\lambda > 1` and :math:`\\ell_1`-sensitivity
        :math:`\\Delta_1 > 0` (default 1.0), scalars, as in :func:`laplace_rdp`.

    Returns
    -------
    ndarray or float
        The scale :math:`b`, with the shape of ``epsilon``.

    Examples
    --------
    >>> b = laplace_scale(0.5, lam=5.0, l1=2.0)
    >>> round(float(laplace_rdp(b, lam=5.0, l1=2.0)), 12)
    0.5
    """
    epsilon = validation.positive(epsilon, "epsilon")
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    l1 = validation.scalar(validation.positive(l1, "l1"), "l1")
    out = np.empty(epsilon.shape)
    for index, eps in np.ndenumerate(epsilon):
        with np.errstate(over="ignore"):
            hi = l1 / eps
        if not np.isfinite(hi):
            # epsilon(b) <= lam (l1 / b)^2 / 2 (pure DP l1/b implies this RDP level), so
            # this b also has epsilon(b) <= eps, and it is finite.
            hi = l1 * np.sqrt(lam / 2) / np.sqrt(eps)
        if not np.isfinite(hi):
            raise ValueError(f"epsilon = {eps:g} is too small: the Laplace scale overflows double precision")
        lo = hi / 2
        for _ in range(2100):  # halving from b_+ reaches every positive double
            if laplace_rdp(lo, lam, l1) > eps:
                break
            lo /= 2
            if lo == 0 or not np.isfinite(l1 / lo):
                raise ValueError(f"epsilon = {eps:g} with lam = {lam:g} and l1 = {l1:g} needs a Laplace "
                                 "scale below double precision; lower epsilon or raise l1")
        log_eps = np.log(eps)
        log_b = validation.brentq(
            lambda t: _laplace_log_rdp(l1 / np.exp(t), lam) - log_eps,
            np.log(lo), np.log(hi), f"the Laplace scale of epsilon = {eps:g}, lam = {lam:g}, l1 = {l1:g}",
            xtol=1e-15, rtol=4 * np.finfo(float).eps,
        )
        out[index] = np.exp(log_b)
    return out[()]


def gaussian_rdp_curve(l2_sq: float, sigma: float, lam: ArrayLike) -> np.ndarray | float:
    """:math:`\\lambda\\Delta_2^2/(2\\sigma^2)`, the Gaussian mechanism's RDP curve (Mironov 2017, Cor. 3)."""
    return lam * l2_sq / (2 * sigma**2)


def laplace_rdp_curve(scale: float, l1: float, lam: float) -> float:
    """:func:`laplace_rdp` at one order (a picklable curve through a partial)."""
    return float(laplace_rdp(scale, lam, l1))
