"""lib.theory.utility_proof against independent computations."""

import numpy as np
import pytest
import sympy as sp
from scipy import special, stats

from lib.theory.utility import log_moment
from lib.theory.utility_proof import (digamma_gap_excess, geometric_distribution,
                                      moment_by_quadrature, probe_points,
                                      use_lambert_identity, worst_chernoff_gap)


@pytest.mark.parametrize("t, p1, alpha, beta", [(5.0, 0.3, 1.0, 20.0), (-3.0, 0.05, 2.0, 7.0)])
def test_moment_by_quadrature_matches_monte_carlo(t, p1, alpha, beta):
    q = np.random.default_rng(11).beta(beta * p1 + alpha, beta * (1 - p1) + alpha, size=400_000)
    values = np.exp(t * (p1 * np.log(p1 / q) + (1 - p1) * np.log((1 - p1) / (1 - q))))
    se = values.std() / np.sqrt(values.size)
    assert abs(moment_by_quadrature(t, p1, alpha, beta) - values.mean()) < 5 * se


def test_moment_by_quadrature_matches_eq20():
    value = moment_by_quadrature(12.0, 0.5, 1.5, 10.0)
    assert value == pytest.approx(np.exp(log_moment(12.0, np.array([0.5, 0.5]), 1.5, 10.0)), rel=1e-9)


def test_moment_by_quadrature_refuses_an_infinite_moment():
    with pytest.raises(ValueError, match="too large"):
        moment_by_quadrature(100.0, 0.5, 1.0, 10.0)
    with pytest.raises(ValueError, match="p1"):
        moment_by_quadrature(1.0, 1.0, 1.0, 10.0)


def test_probe_points_are_probability_vectors():
    points = probe_points(5, np.random.default_rng(0))
    assert len(points) == 3
    for p in points:
        assert p.shape == (5,) and np.all(p > 0) and np.isclose(p.sum(), 1, rtol=0, atol=1e-12)
    assert np.allclose(points[0], 0.2)
    assert np.allclose(points[1][1:], 1e-3)


def test_worst_chernoff_gap_matches_a_direct_evaluation():
    """At one grid point the gap is -t eta + log E[e^{t KL}] - f(t), with f of eq. (21) written out."""
    d, eta, m, alpha = 2, 0.3, 2, 1.0
    p = np.array([0.7, 0.3])
    beta = m * d * alpha / np.expm1(eta / 2)
    w = special.lambertw(beta * np.exp(1 + eta) / (beta + d * alpha)).real
    t = beta * (1 - 1 / w)
    f_t = -t * eta + t * np.log((beta + d * alpha) / (beta - t))
    expected = -t * eta + np.log(moment_by_quadrature(t, p[0], alpha, beta)) - f_t
    gap = worst_chernoff_gap(alpha, [(d, eta, m)], {d: [p]})
    assert gap == pytest.approx(expected, rel=1e-8, abs=1e-10)
    assert gap <= 0     # alpha >= 1/2: Step 2 holds


def test_worst_chernoff_gap_refuses_an_empty_grid():
    with pytest.raises(ValueError, match="grid"):
        worst_chernoff_gap(1.0, [], {})


def test_use_lambert_identity_solves_the_defining_equation():
    w, x = sp.symbols("w x", positive=True)
    # log(w e^w) = log x once log w = log x - w
    assert sp.simplify(use_lambert_identity(sp.log(w * sp.exp(w)), w, x) - sp.log(x)) == 0
    with pytest.raises(TypeError, match="Symbol"):
        use_lambert_identity(sp.log(w), sp.log(w), x)


def test_geometric_distribution():
    p = geometric_distribution(4)
    assert np.allclose(p, np.array([8, 4, 2, 1]) / 15, rtol=1e-15)
    with pytest.raises(ValueError, match="d"):
        geometric_distribution(1)


def test_digamma_gap_excess_is_the_limit_of_the_mean_loss():
    """log a - psi(a) is the d -> infinity limit of E[KL(uniform || Dirichlet(a, ..., a))]."""
    alpha, eta = 0.3, 1.0
    shape = alpha * np.exp(eta / 2) / np.expm1(eta / 2)
    d = 20_000
    q = stats.dirichlet(np.full(d, shape)).rvs(size=20, random_state=np.random.default_rng(2))
    kl = (np.log(1 / d) - np.log(q)).mean(axis=1)
    assert digamma_gap_excess(alpha, [eta]) == pytest.approx(kl.mean() - eta, abs=2e-3)
    grid = np.logspace(-2, 1, 50)
    assert digamma_gap_excess(alpha, grid) >= digamma_gap_excess(alpha, grid[::7])
