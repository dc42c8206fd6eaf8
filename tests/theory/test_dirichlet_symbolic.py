"""lib.theory.dirichlet_symbolic: the SymPy expressions against scipy's numbers."""

import numpy as np
import pytest
import sympy as sp
from scipy import special, stats

from lib.theory.dirichlet_symbolic import (beta_moment, dirichlet_density,
                                           exponential_mechanism_log_ratio,
                                           multivariate_beta)


@pytest.mark.parametrize("u", [(0.5, 2.0), (1.3, 2.7, 4.0), (3.0, 1.0, 0.25, 7.5)])
def test_multivariate_beta_matches_gamma_functions(u):
    value = float(multivariate_beta([sp.Float(v) for v in u]))
    expected = np.exp(special.gammaln(u).sum() - special.gammaln(sum(u)))
    assert value == pytest.approx(expected, rel=1e-12)
    if len(u) == 2:
        assert value == pytest.approx(special.beta(*u), rel=1e-12)


def test_dirichlet_density_matches_scipy():
    y = (0.2, 0.3, 0.5)
    u = (1.5, 2.0, 4.5)
    value = float(dirichlet_density([sp.Float(v) for v in y], [sp.Float(v) for v in u]))
    assert value == pytest.approx(stats.dirichlet.pdf(np.array(y), np.array(u)), rel=1e-12)


@pytest.mark.parametrize("order", [0, 1, 2, 3, 4])
def test_beta_moment_matches_scipy(order):
    a, b = 2.5, 4.0
    value = float(beta_moment(sp.Float(a), sp.Float(b), order))
    assert value == pytest.approx(stats.beta(a, b).moment(order), rel=1e-12)


def test_beta_moment_symbolic_mean():
    a, b = sp.symbols("a b", positive=True)
    assert sp.simplify(beta_moment(a, b, 1) - a / (a + b)) == 0


@pytest.mark.parametrize("counts", [(6, 3, 1), (5, 0, 2)])
def test_log_ratio_is_r_n_entropy_at_numbers(counts):
    """At numbers the log ratio is the same at every y, and equals r N_f H(f / N_f)."""
    r, alpha = 0.7, 1.3
    n_f = sum(counts)
    entropy = stats.entropy(np.array(counts) / n_f)
    rng = np.random.default_rng(3)
    for y in rng.dirichlet(np.ones(3), size=5):
        log_ratio, n_entropy = exponential_mechanism_log_ratio(
            [sp.Integer(c) for c in counts], [sp.Float(v, 30) for v in y], r, alpha)
        assert float(log_ratio) == pytest.approx(r * n_f * entropy, rel=1e-10)
        assert float(n_entropy) == pytest.approx(n_f * entropy, rel=1e-12)


def test_bad_lengths_are_refused():
    y = sp.symbols("y1:4", positive=True)
    with pytest.raises(ValueError, match="same length"):
        dirichlet_density(y, [1, 2])
    with pytest.raises(ValueError, match="same length"):
        exponential_mechanism_log_ratio([1, 2], y, 1, 1)
    with pytest.raises(ValueError, match="at least 2"):
        multivariate_beta([1])
    with pytest.raises(ValueError, match="order"):
        beta_moment(1, 2, -1)
    with pytest.raises(ValueError, match="order"):
        beta_moment(1, 2, 1.5)
