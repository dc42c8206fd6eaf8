"""The release mechanisms, one family per module or sub-package.

Every mechanism follows one protocol (:mod:`lib.mechanisms.protocol`): the
Dirichlet mechanism with its calibration (:mod:`lib.mechanisms.dirichlet`),
the noise mechanisms and non-private estimates (:mod:`lib.mechanisms.noise`),
Gohari et al.'s guarantee (:mod:`lib.mechanisms.gohari`), the posterior
samplers (:mod:`lib.mechanisms.posterior_sampling`), the smoothed-Hellinger
mechanism (:mod:`lib.mechanisms.hellinger`) and smooth sensitivity
(:mod:`lib.mechanisms.smooth_sensitivity`).
"""
