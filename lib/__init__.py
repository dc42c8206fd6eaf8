"""The Dirichlet mechanism for differentially private KL divergence minimisation.

A small, validated, vectorised implementation of Ponnoprat (TMLR 2023): the
calibration of Algorithm 1, the mechanism itself, the exact Renyi divergence
between Dirichlet distributions, the RDP-to-DP conversion of Appendix B, the
Gaussian and Laplace baselines and a private naive Bayes classifier. Every
mechanism follows one protocol (:mod:`lib.mechanisms.protocol`); importing :mod:`lib`
registers them all. The experiment layer (:mod:`lib.experiments`: data,
preprocessing, the grid, its command line and plotting) and the
chapter-specific checks (``lib.theory.audit``, ``lib.theory.utility``, ``lib.theory.counterexample``)
are imported from their modules; the numeric core never imports pandas or
matplotlib.
"""

from lib._version import __version__  # the distribution's version, from its metadata
from lib.privacy.accounting import dp_to_rdp, min_order, rdp_to_dp
from lib.mechanisms.dirichlet.order import OrderChoice, fixed_order, optimal_order
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism
from lib.mechanisms.dirichlet.divergence import kl_divergence, renyi_divergence_dirichlet
from lib.mechanisms.dirichlet.moments import expected_kl_loss, output_bias, output_mean, output_raw_moment, output_variance
from lib.mechanisms.dirichlet.calibration import Calibration, calibrate, rdp_epsilon
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
import lib.mechanisms.gohari.mechanism  # registers "gohari" after "dirichlet"
from lib.models.naive_bayes import PrivateNaiveBayes
from lib.privacy.neighbours import all_neighbours, random_neighbours
from lib.mechanisms.posterior_sampling import ConcentratedPosterior, DiffusedPosterior
import lib.mechanisms.hellinger  # registers the smoothed-Hellinger family after the posterior samplers
from lib.mechanisms.dirichlet.special import log_multivariate_beta, tetragamma, trigamma, trigamma_bounds, trigamma_series

__all__ = [
    "all_neighbours",
    "calibrate",
    "ConcentratedPosterior",
    "Calibration",
    "DiffusedPosterior",
    "DirichletMechanism",
    "dp_to_rdp",
    "expected_kl_loss",
    "fixed_order",
    "GaussianMechanism",
    "kl_divergence",
    "LaplaceMechanism",
    "log_multivariate_beta",
    "min_order",
    "optimal_order",
    "OrderChoice",
    "output_bias",
    "output_mean",
    "output_raw_moment",
    "output_variance",
    "PrivateNaiveBayes",
    "random_neighbours",
    "rdp_epsilon",
    "rdp_to_dp",
    "renyi_divergence_dirichlet",
    "tetragamma",
    "trigamma",
    "trigamma_bounds",
    "trigamma_series",
]
