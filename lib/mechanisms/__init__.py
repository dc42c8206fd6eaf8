"""The release mechanisms, one family per module or sub-package.

Every mechanism follows one protocol (:mod:`lib.mechanisms.protocol`), is listed
once in :mod:`lib.mechanisms.registry` (which registers them all, in one order),
and the families that release a model's tables at once share the batching kernel
(:mod:`lib.mechanisms.batching`). The families: the
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
A family that is a package (noise, Gohari, posterior sampling, Hellinger, smooth
sensitivity, logistic posterior) holds its mechanism and its analysis in separate
modules; its ``__init__`` only re-exports them.
"""
