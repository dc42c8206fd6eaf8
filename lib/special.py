"""Special functions of Section 2.3: the trigamma function and its bounds.

The polygamma function of order one, :math:`\\psi'(x) = \\frac{d^2}{dx^2}\\log\\Gamma(x)`,
drives the calibration of Algorithm 1 (Line 1) and the proof of Lemma 2.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from . import _validate

# Coefficients B_{2k} of the Euler-Maclaurin tail of eq. (5):
# sum_{k >= 0} 1/(y + k)^2 = 1/y + 1/(2 y^2) + sum_j B_{2j} / y^(2j + 1).
_BERNOULLI_EVEN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66)


def trigamma(x):
    """The trigamma function :math:`\\psi'(x)` (Section 2.3).

    Parameters
    ----------
    x : array_like
        Points in :math:`(0, \\infty)`.

    Returns
    -------
    ndarray or float
        :math:`\\psi'(x) = \\sum_{k \\ge 0} (x + k)^{-2}`, eq. (5), evaluated with
        ``scipy.special.polygamma(1, x)`` (Hurwitz zeta, relative error near 1e-15).
    """
    x = _validate.positive(x, "x")
    return special.polygamma(1, x)[()]


def trigamma_series(x, n_terms: int, *, tail: bool = False):
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
        :math:`(x + n)^{-11}`), which is what makes eq. (5) a fast approximation
        at any precision.

    Returns
    -------
    ndarray or float
        The truncated series.
    """
    x = _validate.positive(x, "x")
    if not isinstance(n_terms, (int, np.integer)) or n_terms < 1:
        raise ValueError(f"n_terms must be an integer in [1, inf); got {n_terms!r}")
    k = np.arange(n_terms)
    total = np.sum(1.0 / (x[..., None] + k) ** 2, axis=-1)
    if tail:
        y = x + n_terms
        total = total + 1 / y + 1 / (2 * y**2)
        for j, b in enumerate(_BERNOULLI_EVEN, start=1):
            total = total + b / y ** (2 * j + 1)
    return total[()]


def trigamma_bounds(x):
    """The reciprocal bounds of eq. (6).

    Parameters
    ----------
    x : array_like
        Points in :math:`(0, \\infty)`.

    Returns
    -------
    lower, upper : ndarray or float
        :math:`1/x + 1/(2x^2)` and :math:`1/x + 1/x^2`, which satisfy
        ``lower < trigamma(x) < upper`` for every ``x > 0``.
    """
    x = _validate.positive(x, "x")
    return (1 / x + 1 / (2 * x**2))[()], (1 / x + 1 / x**2)[()]


def log_multivariate_beta(u):
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
    u = _validate.vectors(u, "u", positive_entries=True)
    return (special.gammaln(u).sum(axis=-1) - special.gammaln(u.sum(axis=-1)))[()]
