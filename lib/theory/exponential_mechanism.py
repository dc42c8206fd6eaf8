"""The exponential mechanism with the KL loss, in numbers (Section 2.2 of the paper).

With the loss :math:`D_{KL}(\\tilde f(x) \\| y)`, the scale :math:`\\beta = r N_f` and the base
measure :math:`\\mathrm{Dirichlet}(\\alpha)`, the exponential mechanism of eq. (2) is the
Dirichlet mechanism :math:`y \\sim \\mathrm{Dirichlet}(r f(x) + \\alpha)`. Chapter 1 checks
this identity at random points of the simplex and follows the privacy loss, the difference of
two log-densities, along a path to the boundary; these are the two log-densities it compares.
(:mod:`lib.theory.dirichlet_symbolic` holds the same objects in SymPy.)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.dirichlet.divergence import kl_divergence
from lib.mechanisms.dirichlet.special import log_multivariate_beta


def dirichlet_log_density(points: ArrayLike, concentration: ArrayLike) -> np.ndarray | float:
    """Log-density of :math:`\\mathrm{Dirichlet}(u)` at points of the open simplex.

    :math:`\\log p_u(y) = \\sum_i (u_i - 1)\\log y_i - \\log B(u)`, with :math:`B` the
    multivariate Beta function (Section 2.2; the output density of the Dirichlet mechanism
    for :math:`u = r f(x) + \\alpha`).

    Parameters
    ----------
    points : array_like, shape (..., d)
        Points with positive entries (their sums are not checked: the formula is the density
        only on the simplex).
    concentration : array_like, shape (..., d)
        Positive parameters :math:`u`, ``d >= 2``; broadcasts against ``points``.

    Returns
    -------
    ndarray or float
        The log-density at each point.

    Examples
    --------
    >>> float(dirichlet_log_density([0.2, 0.8], [1.0, 1.0]))   # uniform on the segment
    0.0
    """
    points = validation.vectors(points, "points", positive_entries=True)
    concentration = validation.vectors(concentration, "concentration", positive_entries=True)
    return (((concentration - 1) * np.log(points)).sum(axis=-1)
            - log_multivariate_beta(concentration))


def exponential_mechanism_log_density(points: ArrayLike, counts: ArrayLike, r: float,
                                      alpha: float) -> np.ndarray | float:
    """Unnormalised log-density of eq. (2) with the KL loss and the Dirichlet base measure.

    :math:`-r N_f D_{KL}(\\tilde f \\| y) + (\\alpha - 1)\\sum_i \\log y_i`, the logarithm of
    :math:`e^{-\\beta \\ell(x, y)} \\mu(y)` of eq. (2) for :math:`\\ell(x, y) =
    D_{KL}(\\tilde f(x) \\| y)`, :math:`\\beta = r N_f` and :math:`\\mu` the (unnormalised)
    :math:`\\mathrm{Dirichlet}(\\alpha)` kernel (Section 2.2 of the paper).

    Parameters
    ----------
    points : array_like, shape (..., d)
        Probability vectors :math:`y` with positive entries.
    counts : array_like, shape (d,)
        Non-negative counts :math:`f(x)` with a positive total :math:`N_f`.
    r, alpha : float
        The scale :math:`r > 0` and the pseudo-count :math:`\\alpha > 0`.

    Returns
    -------
    ndarray or float
        The log of eq. (2) at each point, up to the normalising constant.
    """
    counts = validation.vectors(counts, "counts", positive_entries=False)
    r = validation.scalar(validation.positive(r, "r"), "r")
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    n_f = counts.sum()
    if n_f <= 0:
        raise ValueError("counts must have a positive total N_f")
    points = validation.vectors(points, "points", positive_entries=True)
    return (-r * n_f * kl_divergence(counts / n_f, points)
            + (alpha - 1) * np.log(points).sum(axis=-1))
