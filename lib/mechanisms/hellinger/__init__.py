"""The smoothed-Hellinger exponential mechanism :math:`\\mathcal M_{\\mathcal H}` and the releases it is compared with.

The seed note "Full proof on the differential privacy property of :math:`\\mathcal M_{\\mathcal H}`"
(``papers/smoothed-hellinger-exponential-mechanism.md``; cited below as *the note*) releases a
posterior of a conjugate model by an exponential mechanism over the posteriors reachable from
data sets of the same size :math:`n`:

* the candidate set :math:`\\mathcal R_{post}` (note, Section 2): Beta (or Dirichlet) posteriors
  :math:`\\mathrm{prior} + c` for every count vector :math:`c` with total :math:`n`;
  :math:`|\\mathcal R_{post}| = \\binom{n+k-1}{k-1}` (:func:`candidates`);
* the score :math:`u(x, r) = -\\mathcal H(\\mathrm{BI}(x), r)`, the Hellinger distance
  (:func:`lib.mechanisms.dirichlet.divergence.hellinger_dirichlet`);
* the weights :math:`\\exp(-\\varepsilon\\mathcal H / (2 S(x)))` of Definition 2.1 with the smooth
  sensitivity :math:`S(x) = \\max_{x'} LS(x') e^{-\\gamma d(x, x')}` of eq. (1);
* the smoothing parameter :math:`\\gamma = \\ln(1 - \\varepsilon / (2\\ln(\\delta / (2|\\mathcal R_{post}|))))`
  (end of Section 2; :func:`smoothing_parameter`).

The mechanism is :class:`SmoothedHellinger`; :class:`HellingerExponential` is the same
exponential mechanism with the global sensitivity (McSherry and Talwar), and
:class:`CountLaplace` and :class:`CountGaussian` add noise to the count of ones of a
beta-binomial data set. All four release a posterior :math:`\\mathrm{prior} + \\tilde c` of a
count vector of public total :math:`n`, and as a point of the simplex its mean. Everything is in
log space and vectorised over the candidate set. The exact audit of the mechanism, the note's
tail bounds and lemmas are in :mod:`lib.theory.hellinger_audit`; the head-to-head of the
chapter is :mod:`lib.experiments.hellinger`.

Neighbouring data sets replace one record (the note's Definition 1.1), so their count vectors
differ by moving one unit between two categories, and :math:`n` is public.

What is guaranteed. The note claims :math:`(\\varepsilon, \\delta)`-DP; its proof does not apply to a
discrete output (chapter 12), and the claim is *measured*, not proved: the exact audit has found
:math:`\\delta(\\varepsilon) \\le \\delta` wherever it was run. It is not pure
:math:`\\varepsilon`-DP in general: at prior :math:`(10^{-8}, 10^{8})`, :math:`n = 150`,
:math:`\\varepsilon = 40`, :math:`\\delta = 10^{-6}` one pair of neighbours spends
:math:`1.029\\varepsilon` (with :math:`\\delta(\\varepsilon) = 2.3 \\times 10^{-16}`).
:attr:`SmoothedHellinger.guarantee` states the note's :math:`(\\varepsilon, \\delta)`;
:func:`lib.theory.hellinger_audit.audited_guarantee` states pure :math:`\\varepsilon`-DP where the
exact audit of that very setting shows it.

The family in two modules: :mod:`lib.mechanisms.hellinger.sensitivity` (candidates, distances,
sensitivities) and :mod:`lib.mechanisms.hellinger.mechanism` (the four mechanisms); every public
name is re-exported here.
"""

from __future__ import annotations

from lib.mechanisms.hellinger.sensitivity import (
    MAX_CANDIDATES, MEMO_CELLS, n_candidates, candidates, prior_vector, smoothing_parameter, posteriors,
    hellinger_matrix, neighbour_index, local_sensitivity, local_sensitivity_beta,
    local_sensitivity_beta_unchecked, hellinger_rows_unchecked, hellinger_rows_beta_unchecked,
    hellinger_rows_beta, smooth_sensitivity_beta, smooth_sensitivity, log_pmf, Geometry, geometry,
    geometry_for, public_total_counts
)
from lib.mechanisms.hellinger.mechanism import (
    SmoothedHellinger, HellingerExponential, CountLaplace, CountGaussian
)
