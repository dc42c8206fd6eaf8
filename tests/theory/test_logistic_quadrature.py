"""Tests of lib.theory.logistic_quadrature: grid divergences of 1-d logistic posteriors against adaptive quadrature."""

import numpy as np
import pytest
from scipy import integrate

from lib.models.logistic_regression import rdp_epsilon
from lib.theory.logistic_quadrature import (log_posterior_on_grid, log_ratio_on_grid, random_neighbours,
                                            renyi_on_grid, worst_log_ratio, worst_renyi)


def _log_density(w, x, y, beta, rho):
    """Unnormalised log posterior of eq. (6), written out: rho * sum log sigma(+-w x) - n beta w^2 / 2."""
    m = w * x
    ll = np.sum(np.where(y == 1, -np.logaddexp(0.0, -m), -np.logaddexp(0.0, m)))
    return rho * ll - 0.5 * len(x) * beta * w**2


def _quad_renyi(p_data, q_data, beta, rho, lam, lo, hi):
    """D_lam by adaptive quadrature of the two normalised densities (no grid)."""
    lp = lambda w: _log_density(w, *p_data, beta, rho)  # noqa: E731
    lq = lambda w: _log_density(w, *q_data, beta, rho)  # noqa: E731
    shift_p, shift_q = lp(0.0), lq(0.0)
    kw = dict(epsabs=0, epsrel=1e-12, limit=200)
    zp = integrate.quad(lambda w: np.exp(lp(w) - shift_p), lo, hi, **kw)[0]
    zq = integrate.quad(lambda w: np.exp(lq(w) - shift_q), lo, hi, **kw)[0]
    f = lambda w: np.exp(lam * (lp(w) - shift_p - np.log(zp)) + (1 - lam) * (lq(w) - shift_q - np.log(zq)))  # noqa: E731
    return np.log(integrate.quad(f, lo, hi, **kw)[0]) / (lam - 1)


def test_renyi_on_grid_against_quadrature():
    rng = np.random.default_rng(11)
    grid = np.linspace(-20, 20, 40001)
    for beta, rho in ((0.2, 1.0), (0.05, 0.3)):
        p_data, q_data = random_neighbours(6, rng)
        lp = log_posterior_on_grid(grid, *p_data, beta, rho=rho)
        lq = log_posterior_on_grid(grid, *q_data, beta, rho=rho)
        got = renyi_on_grid(lp, lq, [2.0, 10.0])
        want = [_quad_renyi(p_data, q_data, beta, rho, lam, -20, 20) for lam in (2.0, 10.0)]
        assert np.allclose(got, want, rtol=1e-8)


def test_log_posterior_normalised_and_matches_density():
    rng = np.random.default_rng(3)
    (x, y), _ = random_neighbours(5, rng)
    grid = np.linspace(-10, 10, 2001)
    lp = log_posterior_on_grid(grid, x, y, 0.5, rho=0.7)
    assert np.isclose(np.exp(lp).sum(), 1.0, rtol=1e-12)
    direct = np.array([_log_density(w, x, y, 0.5, 0.7) for w in grid])
    assert np.allclose(lp - lp[1000], direct - direct[1000], atol=1e-10)  # the same shape up to a constant


def test_random_neighbours_differ_in_first_row_only():
    rng = np.random.default_rng(5)
    for label in ("flip", "random"):
        (x, y), (x2, y2) = random_neighbours(7, rng, c=2.0, label=label)
        assert np.all(np.abs(x) <= 2.0) and abs(x2[0]) == 2.0
        assert np.array_equal(x[1:], x2[1:]) and np.array_equal(y[1:], y2[1:])
        if label == "flip":
            assert y2[0] == 1 - y[0]


def test_worst_renyi_is_the_largest_pair_and_below_theorem_16():
    rng_a, rng_b = np.random.default_rng(16), np.random.default_rng(16)
    orders = np.array([2.0, 10.0])
    worst = worst_renyi(6, 0.2, orders, rng_a, n_pairs=5, half_width=20.0, n_grid=8001)
    by_pair = []
    for _ in range(5):
        (x, y), (x2, y2) = random_neighbours(6, rng_b)
        by_pair.append([_quad_renyi((x, y), (x2, y2), 0.2, 1.0, lam, -20, 20) for lam in orders])
    assert np.allclose(worst, np.max(by_pair, axis=0), rtol=1e-7)
    assert np.all(worst <= rdp_epsilon(orders, 6, 0.2) / 4)  # 1-d: gradient difference at most c


def test_worst_log_ratio_against_pointwise_densities():
    rng_a, rng_b = np.random.default_rng(17), np.random.default_rng(17)
    beta, rho = 0.5, 0.7
    got = worst_log_ratio(5, beta, rho, rng_a, n_pairs=4, n_grid=4001)
    R = 1.0 / beta
    kw = dict(epsabs=0, epsrel=1e-12)
    want = 0.0
    for _ in range(4):
        p_data, q_data = random_neighbours(5, rng_b, label="random")
        zp = integrate.quad(lambda w: np.exp(_log_density(w, *p_data, beta, rho)), -R, R, **kw)[0]
        zq = integrate.quad(lambda w: np.exp(_log_density(w, *q_data, beta, rho)), -R, R, **kw)[0]
        grid = np.linspace(-R, R, 4001)
        ratio = [abs(_log_density(w, *p_data, beta, rho) - np.log(zp) - _log_density(w, *q_data, beta, rho)
                     + np.log(zq)) for w in grid]
        want = max(want, max(ratio))
    assert np.isclose(got, want, rtol=1e-6)  # the grid's Riemann sums against adaptive quadrature
    assert got <= 2 * rho / beta  # the span argument of Section 5.2


def test_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="label"):
        random_neighbours(3, rng, label="other")
    with pytest.raises(ValueError, match="rho"):
        log_posterior_on_grid(np.zeros(3), np.zeros(2), np.zeros(2, int), 0.1, rho=1.5)
    with pytest.raises(ValueError, match="orders"):
        renyi_on_grid(np.zeros(3), np.zeros(3), [1.0])
    with pytest.raises(ValueError, match="same shape"):
        log_ratio_on_grid(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="n_grid"):
        worst_renyi(3, 0.1, [2.0], rng, n_grid=2)
