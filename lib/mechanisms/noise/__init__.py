"""The Gaussian and Laplace mechanisms for histograms, calibrated in Renyi DP.

These are the two baselines of Section 5 of the paper. Both add independent
noise to every count of a histogram :math:`f(x)` and turn the noisy counts into
a distribution by :func:`clip_and_normalise`, the one post-processing step they
share. Both follow the interface of :class:`lib.DirichletMechanism`: the
constructor takes the privacy target :math:`(\\lambda, \\varepsilon)` and the
sensitivity, and :meth:`release` maps counts of shape ``(..., d)`` to points of
the probability simplex of the same shape, every vector along the last axis
released independently.

* Gaussian: :math:`\\tilde f = f(x) + N(0, \\sigma^2 I)` is
  :math:`(\\lambda, \\lambda\\Delta_2^2/(2\\sigma^2))`-RDP (Mironov 2017,
  Corollary 3), so :math:`\\sigma^2 = \\lambda\\Delta_2^2/(2\\varepsilon)`; with
  :math:`\\Delta_2^2 = 2` and :math:`\\varepsilon/(K+1)` per release this is the
  variance :math:`\\lambda(K+1)/\\varepsilon` of Section 5.1.
* Laplace: :math:`\\tilde f = f(x) + \\mathrm{Laplace}(0, b)^d` with :math:`b` the
  solution of :func:`laplace_rdp` :math:`= \\varepsilon` (Mironov 2017,
  Corollary 2, with the :math:`\\ell_1`-sensitivity :math:`\\Delta_1`).

The family in four modules: :mod:`lib.mechanisms.noise.mechanism` (the mechanisms and their
post-processing), :mod:`lib.mechanisms.noise.renyi` (their Renyi DP),
:mod:`lib.mechanisms.noise.calibration` (their :math:`(\\hat\\varepsilon, \\delta)` calibrations) and
:mod:`lib.mechanisms.noise.estimates` (the non-private estimates); every public name is
re-exported here.
"""

from __future__ import annotations

from lib.mechanisms.noise.renyi import (
    laplace_rdp, laplace_scale, gaussian_rdp_curve, laplace_rdp_curve
)
from lib.mechanisms.noise.calibration import (
    GAUSSIAN_EPSILON_HAT_MAX, analytic_gaussian_delta, analytic_gaussian_sigma, classical_gaussian_sigma,
    rdp_gaussian_sigma, laplace_dp_scale, author_laplace_scale
)
from lib.mechanisms.noise.mechanism import (
    CLIP_FLOOR, clip_and_normalise, GaussianMechanism, LaplaceMechanism, ClassicalGaussianMechanism
)
from lib.mechanisms.noise.estimates import (
    SmoothedEstimate, Uniform
)
