"""lib.theory.exponential_mechanism: the two log-densities against scipy.stats.dirichlet."""

import numpy as np
import pytest
from scipy import special, stats

from lib.theory.exponential_mechanism import (dirichlet_log_density,
                                              exponential_mechanism_log_density)


def test_dirichlet_log_density_matches_scipy():
    rng = np.random.default_rng(0)
    concentration = np.array([0.7, 2.0, 5.5, 1.0])
    points = rng.dirichlet(np.ones(4), size=50)
    expected = stats.dirichlet.logpdf(points.T, concentration)
    assert np.allclose(dirichlet_log_density(points, concentration), expected, rtol=1e-12)


def test_eq2_is_the_dirichlet_density_up_to_a_constant():
    """log Dirichlet(r f + alpha) - log eq. (2) = -log B(r f + alpha) - r N_f H(f~) at every point."""
    counts = np.array([12.0, 0.0, 5.0, 3.0])
    r, alpha = 0.8, 1.7
    points = np.random.default_rng(1).dirichlet(np.ones(4), size=100)
    gap = (stats.dirichlet.logpdf(points.T, r * counts + alpha)
           - exponential_mechanism_log_density(points, counts, r, alpha))
    n_f = counts.sum()
    log_b = special.gammaln(r * counts + alpha).sum() - special.gammaln((r * counts + alpha).sum())
    constant = -log_b - r * n_f * stats.entropy(counts / n_f)
    assert np.allclose(gap, constant, rtol=1e-12, atol=1e-10)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="points"):
        dirichlet_log_density([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="concentration"):
        dirichlet_log_density([0.5, 0.5], [1.0, -1.0])
    with pytest.raises(ValueError, match="positive total"):
        exponential_mechanism_log_density([0.5, 0.5], [0.0, 0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="r must be"):
        exponential_mechanism_log_density([0.5, 0.5], [1.0, 2.0], 0.0, 1.0)
