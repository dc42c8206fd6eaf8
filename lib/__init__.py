"""The Dirichlet mechanism for differentially private KL divergence minimisation.

A small, validated, vectorised implementation of Ponnoprat (TMLR 2023) and of
the mechanisms it is compared with, in layers (each imports only the ones
before it):

* :mod:`lib.privacy`: the guarantees, which are also calibration targets
  (``RenyiDP``, ``ApproximateDP``, ...), the RDP-to-DP conversion of Appendix B
  and the composition accountant;
* :mod:`lib.mechanisms`: the protocol every mechanism follows and the
  mechanisms by family (the Dirichlet mechanism of Algorithm 1 with its
  calibration, the noise mechanisms, Gohari et al., posterior sampling, the
  smoothed-Hellinger mechanism, the bounded-moment and logistic-regression
  mechanisms); :mod:`lib.mechanisms.registry` lists and registers them all, in
  one order, and importing :mod:`lib` imports it;
* :mod:`lib.models`: naive Bayes, Bayesian networks, mixed naive Bayes and
  logistic regression, each taking mechanism objects;
* :mod:`lib.theory`: what the chapters check (audits, the utility bound, the
  counterexample);
* :mod:`lib.experiments`: data, the grids, the command line and plotting (the
  numeric core never imports pandas or matplotlib); :mod:`lib.interop`: the
  optional bridges into dp-accounting and OpenDP.

The names below are the short ones most chapters use.
"""

from lib._version import __version__  # the distribution's version, from its metadata
from lib.privacy.accounting import dp_to_rdp, min_order, rdp_to_dp
from lib.mechanisms.dirichlet.order import OrderChoice, fixed_order, optimal_order
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism
from lib.mechanisms.dirichlet.divergence import kl_divergence, renyi_divergence_dirichlet
from lib.mechanisms.dirichlet.moments import expected_kl_loss, output_bias, output_mean, output_raw_moment, output_variance
from lib.mechanisms.dirichlet.calibration import Calibration, calibrate, rdp_epsilon
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
from lib.models.naive_bayes import PrivateNaiveBayes
from lib.privacy.neighbours import all_neighbours, random_neighbours
from lib.mechanisms.posterior_sampling import ConcentratedPosterior, DiffusedPosterior
import lib.mechanisms.registry  # every mechanism class, registered in the order of its list MECHANISMS
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
