"""The release mechanisms, one family per module or sub-package.

Every mechanism follows one protocol (:mod:`lib.mechanisms.protocol`): the
Dirichlet mechanism with its calibration (:mod:`lib.mechanisms.dirichlet`),
the noise mechanisms and non-private estimates (:mod:`lib.mechanisms.noise`),
Gohari et al.'s guarantee (:mod:`lib.mechanisms.gohari`), the posterior
samplers (:mod:`lib.mechanisms.posterior_sampling`), the smoothed-Hellinger
mechanism (:mod:`lib.mechanisms.hellinger`), smooth sensitivity
(:mod:`lib.mechanisms.smooth_sensitivity`), the means and deviations of a
bounded sample (:mod:`lib.mechanisms.bounded_moments`) and the
logistic-regression posterior samplers (:mod:`lib.mechanisms.logistic_posterior`).
The last two are not histogram mechanisms: their classes set ``output``
(``"moments"``, ``"weights"``) and state the release contract they follow.
"""
