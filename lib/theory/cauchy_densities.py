"""The privacy loss of a Cauchy release read off its densities (Zafarani and Clifton, Theorem 2).

A release :math:`f(x) + s(x)\\eta` with standard Cauchy :math:`\\eta` and a :math:`\\beta`-smooth
scale :math:`s` compares, between neighbours, two Cauchy densities whose centres are at most
``slide`` noise units apart (the smaller scale being the unit) and whose scales differ by a
factor in :math:`[e^{-\\beta}, e^{\\beta}]`. :func:`cauchy_density_loss` evaluates the worst
log density ratio of such a pair with scipy's ``logpdf`` on grids of outputs, scale ratios and
shifts, independently of the closed forms of :mod:`lib.mechanisms.smooth_sensitivity`
(:func:`~lib.mechanisms.smooth_sensitivity.cauchy_privacy_loss`,
:func:`~lib.mechanisms.smooth_sensitivity.cauchy_exact_loss`) that it checks.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import cauchy

from lib import validation

OUTPUTS = np.concatenate([np.linspace(-60, 60, 12001), np.geomspace(60, 1e7, 200), -np.geomspace(60, 1e7, 200)])
"""The outputs ``z`` on which the densities are compared: a fine grid around the centres and a
geometric one out to :math:`\\pm 10^7`."""


def cauchy_density_loss(slide: float, beta: float) -> float:
    """Worst :math:`|\\log p_x(z) / p_y(z)|` of two Cauchy releases, on grids of ``z``, scale ratio and shift.

    :math:`p_x` is the standard Cauchy density, :math:`p_y` the Cauchy density with scale
    :math:`e^{r}` and centre :math:`d`, for 21 values of :math:`r` evenly spaced in
    :math:`[-\\beta, \\beta]` and :math:`d \\in \\{-1, 0, 1\\}\\cdot\\mathrm{slide}\\cdot\\min(1, e^{r})`,
    and ``z`` on :data:`OUTPUTS`. A grid maximum is a lower bound on the supremum over all
    outputs and pairs (within :math:`10^{-3}` of it for the slides and smoothing parameters of
    the book); :math:`2\\operatorname{asinh}(\\mathrm{slide}/2) + \\beta` bounds it above.

    Parameters
    ----------
    slide : float
        Largest shift of the centre, in units of the smaller scale, non-negative.
    beta : float
        Largest log ratio of the two scales, non-negative.

    Returns
    -------
    float
    """
    slide = validation.scalar(validation.nonnegative(slide, "slide"), "slide")
    beta = validation.scalar(validation.nonnegative(beta, "beta"), "beta")
    z = OUTPUTS
    return max(float(np.max(np.abs(cauchy.logpdf(z) - cauchy.logpdf(z, loc=d, scale=np.exp(r)))))
               for r in np.linspace(-beta, beta, 21) for d in np.array([-1, 0, 1]) * slide * min(1, np.exp(r)))
