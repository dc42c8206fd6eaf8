"""Smooth sensitivity of bounded means, trimmed means and standard deviations.

Zafarani and Clifton release the Gaussian parameters of a naive Bayes model
with Cauchy noise scaled to the *smooth sensitivity* of Nissim, Raskhodnikova
and Smith (NRS, 2007). This module holds the sensitivities and the noise
calibration; :mod:`lib.models.mixed_naive_bayes` uses them. Brute-force references
(the local sensitivity at distance :math:`k` by enumeration) live in
``tests/mechanisms/test_smooth_sensitivity.py``.

Neighbours are replace-one: two samples of the same size :math:`n` differ in one
entry, every entry in the public range :math:`[L, U]` (Zafarani-Clifton,
Section 2.2). For a function :math:`f` the local sensitivity is
:math:`LS_f(x) = \\max_{y: d(x, y) = 1} |f(x) - f(y)|`, the sensitivity at
distance :math:`k` is :math:`A^{(k)}(x) = \\max_{d(x, y) \\le k} LS_f(y)`
(their Definition 3.4) and the :math:`\\beta`-smooth sensitivity is
:math:`S^*_{f, \\beta}(x) = \\max_k e^{-k\\beta} A^{(k)}(x)` (Definition 3.3).

What is computed
----------------
* Mean (their Theorem 4): :math:`A^{(k)}(x) = (U - L)/n` for every
  :math:`k \\ge 1`, so the smooth sensitivity of a bounded mean is at least
  :math:`e^{-\\beta}` times the global one -- smooth sensitivity cannot help a
  bounded mean (:func:`smooth_sensitivity_mean`).
* Trimmed mean (Bun and Steinke 2019, the version Zafarani and Clifton compare
  with): the closed form of :func:`trimmed_mean_sensitivity_at_distance`.
* Standard deviation (what Algorithm 1, line 17, perturbs; their Theorem 7 is
  about the variance): a :math:`\\beta`-smooth *upper bound*
  :func:`smooth_sensitivity_std` built from the smallest sum of squared
  deviations of a sub-sample, valid by the argument in its docstring and
  checked against enumeration in the tests. The variance itself gains at most a
  factor 4 from smooth sensitivity (:func:`local_sensitivity_variance` is
  between a quarter of and the global sensitivity), which is why the standard
  deviation is the parameter that profits.

Calibration (:func:`calibrate`): NRS's calibration with the admissible density
:math:`h(z) \\propto 1/(1 + |z|^\\gamma)`, :math:`\\gamma = 2` (Cauchy),
restated as Zafarani-Clifton Theorem 2: :math:`\\beta = \\varepsilon/6` and noise
:math:`6 S(x)/\\varepsilon \\cdot Z` (``rule="theorem2"``); it spends about a
third of :math:`\\varepsilon`. Their Algorithm 1 prints
:math:`\\sqrt 2 S/\\varepsilon'` instead (``rule="printed"``, a labelled
variant). ``rule="tight"`` keeps :math:`\\beta = \\varepsilon/6` and takes the
smallest multiplier whose exact worst-case loss (:func:`cauchy_exact_loss`, the
supremum of the log density ratio over every pair of neighbours a
:math:`\\beta`-smooth bound allows) is :math:`\\varepsilon`.
:func:`cauchy_privacy_loss` is the simpler additive bound (shift plus dilation).

The family in two modules: :mod:`lib.mechanisms.smooth_sensitivity.cauchy` (the noise and its
calibration) and :mod:`lib.mechanisms.smooth_sensitivity.sensitivity` (the sensitivities); every
public name is re-exported here.
"""

from __future__ import annotations

from lib.mechanisms.smooth_sensitivity.cauchy import (
    GAMMA, RULES, cauchy_privacy_loss, cauchy_exact_loss, calibrate
)
from lib.mechanisms.smooth_sensitivity.sensitivity import (
    checked_bounds, checked_sample, sorted_once, fingerprint, StdProfile, global_sensitivity_mean,
    local_sensitivity_mean, smooth_sensitivity_mean, smooth_sensitivity_mean_sorted, trimmed_mean,
    trimmed_mean_sensitivity_at_distance, smooth_sensitivity_trimmed_mean, global_sensitivity_std,
    local_sensitivity_variance, local_sensitivity_std, min_ssd_windows, std_sensitivity_bound, distance_cap,
    std_profile_key, std_sensitivity_at_distance, smooth_sensitivity_std, smooth_sensitivity_std_profile,
    smooth_sensitivity_std_profile_sorted, smooth_sensitivity_std_naive, max_variance_subset,
    min_variance_subset, paper_sensitivity_at_distance, paper_literal_sensitivity_at_distance
)
