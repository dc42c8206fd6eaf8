"""The Dirichlet mechanism (Algorithm 1) with everything specific to it.

Its calibration (:mod:`~lib.mechanisms.dirichlet.calibration`, lines 1-2 of
Algorithm 1), the mechanism (:mod:`~lib.mechanisms.dirichlet.mechanism`), the
exact divergences between Dirichlet distributions
(:mod:`~lib.mechanisms.dirichlet.divergence`), the moments of its output
(:mod:`~lib.mechanisms.dirichlet.moments`), the special functions of Section
2.3 (:mod:`~lib.mechanisms.dirichlet.special`) and the
:math:`(\\hat\\varepsilon, \\delta)` calibration of Appendix C
(:mod:`~lib.mechanisms.dirichlet.approximate_dp`).
"""
