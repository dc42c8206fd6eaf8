"""Special functions of Section 2.3: the trigamma function, its series and bounds.

The polygamma function of order one, :math:`\\psi'(x) = \\frac{d^2}{dx^2}\\log\\Gamma(x)`,
drives the calibration of Algorithm 1 (Line 1) and the proof of Lemma 2.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation

# Even Bernoulli numbers B_2 ... B_14 of the Euler-Maclaurin tail of eq. (5):
# sum_{k >= 0} 1/(y + k)^2 = 1/y + 1/(2 y^2) + sum_j B_{2j} / y^(2j + 1).
_BERNOULLI_EVEN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
# Shifting the argument to y >= 12 before using the tail leaves a truncation error
# of |B_16| / y^17 < 3e-18, far below the rounding error of the sum.
_SHIFT_TO = 12


def _euler_maclaurin_tail(y):
    """``sum_{k >= 0} (y + k)^-2 = psi'(y)`` from its asymptotic series (accurate for y >= 12)."""
    inv = 1 / y
    inv2 = inv * inv
    acc = 0.0
    for b in reversed(_BERNOULLI_EVEN):
        acc = acc * inv2 + b
    return inv + 0.5 * inv2 + acc * inv2 * inv


def _euler_maclaurin_tail_derivative(y):
    """The derivative of :func:`_euler_maclaurin_tail`: ``psi''(y)`` for y >= 12."""
    inv = 1 / y
    inv2 = inv * inv
    acc = 0.0
    for j, b in reversed(list(enumerate(_BERNOULLI_EVEN, start=1))):
        acc = acc * inv2 + (2 * j + 1) * b
    return -inv2 - inv2 * inv - acc * inv2 * inv2


def trigamma_unchecked(x: np.ndarray, *, derivative: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """``psi'(x)`` (and ``psi''(x)`` if ``derivative``) for an array ``x > 0``, unvalidated.

    Eq. (5) term by term until the argument reaches 12, then the Euler-Maclaurin tail.
    """
    y = np.array(x, dtype=float)
    head1 = np.zeros_like(y)
    head2 = np.zeros_like(y)
    for _ in range(_SHIFT_TO):
        below = y < _SHIFT_TO
        if not below.any():  # every argument shifted: the remaining terms are all +0.0 (bitwise a no-op)
            break
        inv = np.where(below, 1 / y, 0.0)
        head1 += inv * inv
        if derivative:
            head2 -= 2 * inv * inv * inv
        y = np.where(below, y + 1, y)
    value = head1 + _euler_maclaurin_tail(y)
    if derivative:
        return value, head2 + _euler_maclaurin_tail_derivative(y)
    return value


def trigamma(x: ArrayLike) -> np.ndarray | float:
    """The trigamma function :math:`\\psi'(x)` (Section 2.3).

    Evaluated as the paper suggests, by its series, eq. (5): the first terms
    :math:`\\sum_{k<n} (x+k)^{-2}` shift the argument to :math:`y = x + n \\ge 12`, and the
    remainder :math:`\\psi'(y)` is the Euler-Maclaurin series
    :math:`1/y + 1/(2y^2) + \\sum_{j=1}^{7} B_{2j} y^{-2j-1}`. The relative error is
    below 1e-15 (the unit tests compare with mpmath), and on arrays it is about four
    times faster than ``scipy.special.polygamma(1, x)``, which matters in the
    root-finding of Line 1.

    Parameters
    ----------
    x : array_like
        Points in :math:`(0, \\infty)`.

    Returns
    -------
    ndarray or float
        :math:`\\psi'(x) = \\sum_{k \\ge 0} (x + k)^{-2}`.
    """
    return trigamma_unchecked(validation.positive(x, "x"))[()]


def tetragamma(x: ArrayLike) -> np.ndarray | float:
    """The tetragamma function :math:`\\psi''(x) = -2\\sum_{k \\ge 0} (x + k)^{-3}`.

    Evaluated like :func:`trigamma`, from the derivative of eq. (5); it enters the
    proof of Lemma 2 (Appendix D) and the Newton steps of :func:`lib.calibrate`.

    Parameters
    ----------
    x : array_like
        Points in :math:`(0, \\infty)`, as for :func:`trigamma`.

    Returns
    -------
    psi2 : ndarray or float
        :math:`\\psi''(x)`, negative at every point.
    """
    return trigamma_unchecked(validation.positive(x, "x"), derivative=True)[1][()]


def trigamma_series(x: ArrayLike, n_terms: int, *, tail: bool = False) -> np.ndarray | float:
    """Partial sums of the series representation of eq. (5).

    Parameters
    ----------
    x : array_like
        Points in :math:`(0, \\infty)`.
    n_terms : int
        Number of leading terms :math:`\\sum_{k=0}^{n-1} (x + k)^{-2}`, at least 1.
    tail : bool, default False
        If true, add the Euler-Maclaurin estimate of the remainder
        :math:`\\sum_{k \\ge n} (x + k)^{-2} = \\psi'(x + n)` (terms up to
        :math:`B_{14} (x + n)^{-15}`), which is what makes eq. (5) a fast approximation
        at any precision.

    Returns
    -------
    ndarray or float
        The truncated series.
    """
    x = validation.positive(x, "x")
    n_terms = validation.integer(n_terms, "n_terms")
    validation.cells(max(x.size, 1) * n_terms, f"trigamma_series with n_terms = {n_terms} at {x.size} points")
    k = np.arange(n_terms)
    total = np.sum(1.0 / (x[..., None] + k) ** 2, axis=-1)
    if tail:
        total = total + _euler_maclaurin_tail(x + n_terms)
    return total[()]


def trigamma_bounds(x: ArrayLike) -> tuple[np.ndarray | float, np.ndarray | float]:
    """The reciprocal bounds of eq. (6).

    Parameters
    ----------
    x : array_like
        Positive points.

    Returns
    -------
    lower, upper : ndarray or float
        :math:`1/x + 1/(2x^2)` and :math:`1/x + 1/x^2`, which satisfy
        ``lower < trigamma(x) < upper`` for every ``x > 0``.
    """
    x = validation.positive(x, "x")
    return (1 / x + 1 / (2 * x**2))[()], (1 / x + 1 / x**2)[()]


def log_multivariate_beta(u: ArrayLike) -> np.ndarray | float:
    """Logarithm of the multivariate Beta function along the last axis.

    Parameters
    ----------
    u : array_like, shape (..., d)
        Positive parameters, ``d >= 2``.

    Returns
    -------
    ndarray or float
        :math:`\\log B(u) = \\sum_i \\log\\Gamma(u_i) - \\log\\Gamma(\\sum_i u_i)`
        (Appendix E, below eq. (16)).
    """
    u = validation.vectors(u, "u", positive_entries=True)
    return (special.gammaln(u).sum(axis=-1) - special.gammaln(u.sum(axis=-1)))[()]
