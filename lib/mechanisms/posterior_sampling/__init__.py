"""Renyi-DP posterior sampling for the Dirichlet-categorical model (Geumlek, Song and Chaudhuri 2017).

A histogram of counts :math:`c` with a Dirichlet prior of pseudo-counts :math:`a`
has the posterior :math:`\\mathrm{Dir}(a + c)`. Geumlek et al. release one draw

* from the true posterior :math:`\\mathrm{Dir}(a + c)` (their Algorithm 1,
  :class:`TruePosterior`), RDP only below the order
  :math:`\\lambda^* = 1 + \\min_i a_i` (their Theorem 12 and Corollary 1);
* from the *diffused* posterior :math:`\\mathrm{Dir}(a + r c)`, the data scaled
  by :math:`r \\in (0, 1]` (Algorithm 2, Theorem 13, :class:`DiffusedPosterior`);
* from the *concentrated* posterior :math:`\\mathrm{Dir}(a/m + c)`, the prior
  divided by :math:`m \\in (0, 1]` (Algorithm 3, Theorem 14,
  :class:`ConcentratedPosterior`).

All three are :math:`\\mathrm{Dir}(b + s c)` with base :math:`b` and data scale
:math:`s`: :math:`(a, 1)`, :math:`(a, r)` and :math:`(a/m, 1)`. The level a scale
attains is the exact worst case of :math:`D_\\lambda` (Appendix E's closed form,
:func:`lib.mechanisms.dirichlet.divergence.renyi_divergence_dirichlet`) over neighbouring data sets,
:func:`worst_case`; :func:`calibrate_scale` inverts it by a bracketing search in
:math:`\\log r` (or :math:`\\log m`) down to adjacent floating-point numbers.

Why a few candidates suffice. Moving one record from bin :math:`i` to bin
:math:`j` changes only :math:`(u_i, u_j)` and keeps the total, so the log-Beta
terms of every other coordinate and of the total cancel in eq. (16):
:math:`D_\\lambda` equals the divergence of the two-coordinate Beta laws
:math:`\\mathrm{Beta}(u_i, u_j)` and :math:`\\mathrm{Beta}(u_i - s, u_j + s)`.
Adding a record to bin :math:`j` likewise reduces to
:math:`\\mathrm{Beta}(u_j, u_0 - u_j)` against :math:`\\mathrm{Beta}(u_j + s,
u_0 - u_j)`. The worst case over the reachable counts is then a maximum over a
triangle of two integers; it is taken at the triangle's vertices (Geumlek et
al.'s Theorem 15 gives convexity along the move direction; the whole claim is
checked against brute force over every data set in ``tests/``).

Neighbours (replace-one). One vector with a public total :math:`N` (a class
count vector, a root node's table): a record moves inside the vector, Geumlek
et al.'s fixed-size neighbours. A table of several rows whose totals are
private (naive Bayes attribute tables, network tables): a record moves inside
one row (row total anywhere in :math:`[1, N]`), or leaves one row and enters
another; the rows are released independently, so the divergences of the two
rows add: one removal plus one addition (:func:`worst_case` with ``rows >= 2``).

The family in three modules: :mod:`lib.mechanisms.posterior_sampling.mechanism` (the samplers and
their calibration), :mod:`lib.mechanisms.posterior_sampling.analysis` (the exact worst case of their
privacy loss) and :mod:`lib.mechanisms.posterior_sampling.gaussian` (Geumlek et al.'s Gaussian
baseline); every public name is re-exported here.
"""

from __future__ import annotations

from lib.mechanisms.posterior_sampling.analysis import (
    DEFAULT_PRIOR, MAX_CANDIDATE_CELLS, MAX_BOUND_PAIRS, MAX_BRUTE_FORCE_TABLES, KINDS, prior_vector,
    refuse_nan, move_divergence, add_divergence, remove_divergence, Candidates, evaluate_candidates,
    CandidateStack, evaluate_stacked, checked_setting, worst_case, critical_order, geumlek_bound,
    brute_force_worst_case
)
from lib.mechanisms.posterior_sampling.mechanism import (
    MAX_ORDERS, calibrate_scale, DiffusedPosterior, ConcentratedPosterior, TruePosterior
)
from lib.mechanisms.posterior_sampling.gaussian import (
    MAX_NODES, gaussian_sigma, gaussian_posterior_params, gaussian_posterior_kl
)
