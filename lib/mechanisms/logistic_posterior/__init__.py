"""Private Bayesian logistic regression by posterior sampling: the samplers and their guarantees.

The model (Geumlek, Song and Chaudhuri 2017, Section 4.1, eq. (6)): labels
:math:`y_i \\in \\{0, 1\\}`, rows :math:`\\|x_i\\|_2 \\le c`, the logistic
likelihood, a Gaussian prior :math:`N(0, (n\\beta)^{-1} I)`, and the likelihood
raised to a power :math:`\\rho \\in (0, 1]`:

.. math::
    p_{\\beta,\\rho}(w \\mid D) \\propto \\exp\\Big(-\\frac{n\\beta}{2}\\|w\\|^2
    + \\rho\\sum_{i=1}^n \\log p(y_i \\mid w, x_i)\\Big).

A mechanism here releases one weight vector :math:`w \\in \\mathbb{R}^d`, a
sample of such a posterior; it is not a histogram mechanism, and
:class:`LogisticSampler` states the contract it follows instead of the
protocol's "counts in, simplex point out":

* ``release(X, y, rng, size=None)``: a design matrix of a public number of
  rows :math:`n`, each of norm at most :math:`c`, and labels in
  :math:`\\{0, 1\\}` in; weight vectors of shape ``(size, d)`` out (one per
  chain of the sampler);
* ``guarantee``: what one exact sample meets for replace-one neighbours;
* ``output = "weights"`` (a histogram mechanism has ``"distribution"``) and
  ``notions = ()``: an object is calibrated from a target and :math:`n`
  (:meth:`LogisticSampler.settings`), not by a histogram model.

The classes (registry names in brackets): :class:`ConcentratedLogistic`
(``"lr_concentrated"``, Algorithm 4), :class:`DiffuseLogistic`
(``"lr_diffuse"``, Algorithm 5), :class:`OPSLogistic` (``"lr_ops"``, One
Posterior Sample of Wang, Fienberg and Smola 2015, as Section 5.2 runs it)
and :class:`LogisticPosterior` (``"lr_posterior"``, the posterior with the
original prior; not private).

Privacy statements (replace-one neighbours, :math:`n` public):

* Theorem 16 / 17: one exact sample is :math:`(\\lambda, 2c^2B^2\\rho^2\\lambda/(n\\beta))`-RDP
  for every :math:`\\lambda \\ge 1` (:func:`rdp_epsilon`; :math:`B = 1` for logistic
  regression).
* Algorithm 4 (concentrated posterior) meets :math:`(\\lambda, \\varepsilon)` with
  :math:`\\beta = \\max\\{2c^2B^2\\lambda/(n\\varepsilon), \\beta_0\\}`
  (:func:`concentrated_beta`); Algorithm 5 (diffuse posterior) with
  :math:`\\rho = \\min\\{1, \\sqrt{n\\beta\\varepsilon/(2c^2B^2\\lambda)}\\}`
  (:func:`diffuse_rho`). Both depend on :math:`(\\lambda, \\varepsilon)` only through
  :math:`\\lambda/\\varepsilon`.
* OPS with the prior truncated to the ball of radius :math:`c/\\beta`: pure
  :math:`4c^2\\rho/\\beta`-DP as Section 5.2 states it (:func:`ops_epsilon`).
* :func:`rdp_slope_for_dp`: the slope :math:`\\alpha` of an RDP curve
  :math:`\\varepsilon(\\lambda) = \\alpha\\lambda` that meets
  :math:`(\\hat\\varepsilon, \\delta)`-DP through eq. (14) of the Dirichlet paper at
  the best order, to compare all methods at one :math:`(\\hat\\varepsilon, \\delta)`.

The sampler (:func:`sample`) draws many chains for many settings at once:
independence Metropolis-Hastings with the Laplace approximation
:math:`N(\\hat w, H^{-1})` at the mode as proposal, optionally interleaved
with (or replaced by) MALA steps preconditioned by :math:`H^{-1}`. It is
approximate: the theorems are about exact samples (see chapter 11).

References
----------
Geumlek, J., Song, S. and Chaudhuri, K. (2017). Renyi differential privacy
mechanisms for posterior sampling. NeurIPS.
Wang, Y.-X., Fienberg, S. E. and Smola, A. (2015). Privacy for free:
posterior sampling and stochastic gradient Monte Carlo. ICML.

The family in two modules: :mod:`lib.mechanisms.logistic_posterior.mechanism` (the samplers as
mechanisms, their privacy statements and calibrations) and
:mod:`lib.mechanisms.logistic_posterior.sampling` (the posterior's log density, its mode and the
sampler); every public name is re-exported here.
"""

from __future__ import annotations

from lib.mechanisms.logistic_posterior.mechanism import (
    BETA0, B_LOGISTIC, rdp_epsilon, concentrated_beta, diffuse_rho, ops_radius, ops_epsilon, ops_rho,
    dp_of_rdp_slope, rdp_slope_for_dp, settings, LogisticSampler, ConcentratedLogistic, DiffuseLogistic,
    OPSLogistic, LogisticPosterior, SAMPLERS
)
from lib.mechanisms.logistic_posterior.sampling import (
    MAX_MARGINS, MAX_SAMPLER_WORK, MAX_NEWTON, NORM_SLACK, Settings, checked_data, checked_weights,
    log_likelihood, mode, Samples, sample
)
