"""The registry: every mechanism class of the book, in one list, and the names the command line offers.

:data:`MECHANISMS` lists every registered class once, in the order that
:func:`names` returns (the order of legends, tables and the command line's
list); importing this module registers them, in that order, and nothing else
registers a class. A new mechanism is one class with a ``name`` (see
:class:`lib.mechanisms.protocol.Mechanism`) and one entry here. :func:`names`
and :func:`get` are the lookups of :mod:`lib.mechanisms.protocol`;
:func:`lib.mechanisms.protocol.register` adds a class after these (a test's toy
mechanism).

Examples
--------
>>> from lib.mechanisms.registry import MECHANISMS, names
>>> names()[:3] == tuple(cls.name for cls in MECHANISMS[:3])
True
>>> names(output="weights")
('lr_concentrated', 'lr_diffuse', 'lr_ops', 'lr_posterior')
"""

from __future__ import annotations

from lib.mechanisms.bounded_moments import BunSteinke, SampleMoments, VaidyaLaplace, ZafaraniClifton
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism, ExactCurveDirichlet
from lib.mechanisms.gohari.mechanism import GohariMechanism
from lib.mechanisms.hellinger.mechanism import CountGaussian, CountLaplace, HellingerExponential, SmoothedHellinger
from lib.mechanisms.logistic_posterior.mechanism import SAMPLERS
from lib.mechanisms.noise.estimates import SmoothedEstimate, Uniform
from lib.mechanisms.noise.mechanism import ClassicalGaussianMechanism, GaussianMechanism, LaplaceMechanism
from lib.mechanisms.posterior_sampling.mechanism import ConcentratedPosterior, DiffusedPosterior, TruePosterior
from lib.mechanisms.protocol import get, names, register

#: Every registered mechanism class, in the order of :func:`names`: the histogram baselines and
#: non-private estimates, the Dirichlet mechanism and Gohari et al.'s accounting of it, the
#: posterior samplers, the smoothed-Hellinger family, the mean-and-deviation mechanisms of
#: mixed naive Bayes, and the logistic-regression samplers (in the order of Figure 3).
MECHANISMS = (
    GaussianMechanism, LaplaceMechanism, ClassicalGaussianMechanism, SmoothedEstimate, Uniform,
    DirichletMechanism, ExactCurveDirichlet, GohariMechanism,
    DiffusedPosterior, ConcentratedPosterior, TruePosterior,
    SmoothedHellinger, HellingerExponential, CountLaplace, CountGaussian,
    ZafaraniClifton, VaidyaLaplace, BunSteinke, SampleMoments,
    *SAMPLERS,
)

for _cls in MECHANISMS:
    register(_cls)
del _cls

__all__ = ["MECHANISMS", "get", "names"]
