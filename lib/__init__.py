"""The Dirichlet mechanism for differentially private KL divergence minimisation.

A small, validated, vectorised implementation of Ponnoprat (TMLR 2023): the
calibration of Algorithm 1, the mechanism itself, the exact Renyi divergence
between Dirichlet distributions and the RDP-to-DP conversion of Appendix B.
"""

from .accounting import rdp_to_dp
from .divergence import kl_divergence, renyi_divergence_dirichlet
from .moments import output_bias, output_mean, output_raw_moment, output_variance
from .mechanism import Calibration, DirichletMechanism, calibrate, rdp_epsilon
from .neighbours import all_neighbours, random_neighbours
from .special import log_multivariate_beta, tetragamma, trigamma, trigamma_bounds, trigamma_series

__all__ = [
    "Calibration",
    "DirichletMechanism",
    "all_neighbours",
    "calibrate",
    "kl_divergence",
    "log_multivariate_beta",
    "output_bias",
    "output_mean",
    "output_raw_moment",
    "output_variance",
    "rdp_epsilon",
    "random_neighbours",
    "rdp_to_dp",
    "renyi_divergence_dirichlet",
    "tetragamma",
    "trigamma",
    "trigamma_bounds",
    "trigamma_series",
]
