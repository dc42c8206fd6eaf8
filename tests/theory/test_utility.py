"""Theorem 2 (Section 4, Appendix F): the tail bound, its ingredients, the sample complexity."""

import mpmath as mp
import numpy as np
import pytest
from scipy import optimize, special, stats

from lib import calibrate
from lib.theory.utility import (
    chernoff_bound,
    chernoff_exponent,
    clopper_pearson_lower,
    cantelli_tail_lower_bound,
    digamma_bounds,
    exact_chernoff_bound,
    kl_moments,
    lambert_argument_log,
    lambertw_lower_bound,
    log_moment,
    min_beta,
    optimal_t,
    sample_complexity,
    sample_complexity_rate,
    sample_kl,
    theorem2_bound,
    theorem2_exponent,
)

GRID = [(d, a, eta, m) for d in (2, 7, 40) for a in (0.5, 1.0, 9.0) for eta in (1e-4, 1.0, 20.0)
        for m in (1.0, 100.0)]


def test_min_beta_and_bound_formulas():
    assert min_beta(4, 2.0, 1.0) == pytest.approx(8 / (np.exp(0.5) - 1), rel=1e-15)
    beta = 50.0
    assert theorem2_bound(2, 0.1, beta, 1.0) == pytest.approx(np.exp(-beta / 42), rel=1e-14)
    assert theorem2_exponent(1.0) == pytest.approx(1 / 42, rel=1e-15)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(d=3, alpha=1.0, beta=1.0, eta=0.5), "beta must be in"),
        (dict(d=2.5, alpha=1.0, beta=100.0, eta=0.5), "d must be an integer"),
        (dict(d=1, alpha=1.0, beta=100.0, eta=0.5), "d must be in"),
        (dict(d=3, alpha=0.0, beta=100.0, eta=0.5), "alpha must be in"),
        (dict(d=3, alpha=1.0, beta=100.0, eta=-1.0), "eta must be in"),
        (dict(d=3, alpha=1.0, beta=np.nan, eta=0.5), "beta must be finite"),
    ],
)
def test_bad_input_raises(kwargs, match):
    for func in (theorem2_bound, optimal_t, chernoff_bound):
        with pytest.raises(ValueError, match=match):
            func(**kwargs)


def test_beta_exactly_at_the_requirement_is_accepted():
    d, a, eta = np.array([2, 5, 50]), np.array([0.3, 1.0, 7.0]), np.array([1e-3, 0.5, 9.0])
    beta = min_beta(d, a, eta)
    assert np.all(theorem2_bound(d, a, beta, eta) < 1)
    with pytest.raises(ValueError):
        theorem2_bound(d, a, beta * (1 - 1e-9), eta)


@pytest.mark.parametrize("d, a, eta, m", GRID)
def test_optimal_t_is_lambert_w_formula_and_minimiser(d, a, eta, m):
    beta = m * min_beta(d, a, eta)
    t = optimal_t(d, a, beta, eta)
    assert 0 < t < beta
    with mp.workdps(50):
        x = mp.mpf(beta) * mp.exp(1 + mp.mpf(eta)) / (mp.mpf(beta) + d * mp.mpf(a))
        w = mp.lambertw(x)
        t_ref = mp.mpf(beta) * (1 - 1 / w)
    assert abs(t / float(t_ref) - 1) < 1e-9
    # f'(t*) = 0: f is convex, so f(t*) is below f at nearby points and at a grid
    grid = np.linspace(0, beta, 400, endpoint=False)
    f_star = chernoff_exponent(t, d, a, beta, eta)
    assert np.all(chernoff_exponent(grid, d, a, beta, eta) >= f_star - 1e-12 * max(1, abs(f_star)))
    assert chernoff_bound(d, a, beta, eta) == pytest.approx(np.exp(f_star), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("d, a, eta, m", GRID)
def test_chain_of_appendix_f(d, a, eta, m):
    beta = m * min_beta(d, a, eta)
    assert chernoff_bound(d, a, beta, eta) <= theorem2_bound(d, a, beta, eta) * (1 + 1e-12)
    # the argument of W is at least e^(1 + eta/2) (the requirement on beta)
    assert lambert_argument_log(d, a, beta, eta) >= 1 + eta / 2 - 1e-12


def test_optimal_t_matches_scipy_lambertw_and_a_numerical_minimiser():
    d, a, eta, beta = 5, 1.0, 0.3, 400.0
    w = special.lambertw(beta * np.exp(1 + eta) / (beta + d * a)).real
    t = optimal_t(d, a, beta, eta)
    assert t == pytest.approx(beta * (1 - 1 / w), rel=1e-12)
    best = optimize.minimize_scalar(lambda s: chernoff_exponent(s, d, a, beta, eta),
                                    bounds=(0, beta * (1 - 1e-9)), method="bounded",
                                    options={"xatol": 1e-10})
    assert t == pytest.approx(best.x, rel=1e-6)


def test_lambert_w_beyond_double_range():
    # eta = 1000: the argument e^(1001) overflows, the log form does not
    t = optimal_t(2, 1.0, 10.0, 1000.0)
    with mp.workdps(30):
        w = mp.lambertw(mp.mpf(10) * mp.exp(1001) / 12)
    assert t == pytest.approx(float(10 * (1 - 1 / w)), rel=1e-12)


def test_hoorfar_hassani_and_digamma_bounds_on_grids():
    x = np.exp(np.linspace(1, 690, 5000))
    assert np.all(special.lambertw(x).real >= lambertw_lower_bound(x) - 1e-12 * np.log(x))
    assert lambertw_lower_bound(np.e) == pytest.approx(1.0)
    # psi(x) - log(x - 1/2) is about 1/(24 x^2): resolvable in doubles up to ~1e5
    y = 0.5 + np.logspace(-8, 5, 5000)
    lower, upper = digamma_bounds(y)
    psi = special.digamma(y)
    assert np.all((lower < psi) & (psi < upper))
    with pytest.raises(ValueError, match="x must be in"):
        lambertw_lower_bound(2.0)
    with pytest.raises(ValueError, match="x must be in"):
        digamma_bounds(0.5)


@pytest.mark.parametrize("p, a, beta, t", [((0.3, 0.7), 1.0, 20.0, 5.0), ((0.05, 0.95), 0.4, 7.0, -3.0),
                                           ((0.5, 0.5), 2.0, 3.0, 4.0)])
def test_log_moment_against_quadrature(p, a, beta, t):
    p1, p2 = p
    with mp.workdps(30):
        a1, a2 = beta * p1 + a, beta * p2 + a

        def integrand(q):
            kl = p1 * mp.log(p1 / q) + p2 * mp.log(p2 / (1 - q))
            return mp.exp(t * kl) * q ** (a1 - 1) * (1 - q) ** (a2 - 1) / mp.beta(a1, a2)

        ref = mp.log(mp.quad(integrand, [0, p1, 1]))
    assert log_moment(t, np.array(p), a, beta) == pytest.approx(float(ref), rel=1e-10, abs=1e-12)


def test_log_moment_derivative_at_zero_is_the_mean():
    p = np.array([0.6, 0.25, 0.1, 0.05])
    h = 1e-5
    slope = (log_moment(h, p, 0.7, 30.0) - log_moment(-h, p, 0.7, 30.0)) / (2 * h)
    assert slope == pytest.approx(kl_moments(p, 0.7, 30.0)[0], rel=1e-7)
    assert log_moment(0.0, p, 0.7, 30.0) == pytest.approx(0.0, abs=1e-13)
    with pytest.raises(ValueError, match="t must be"):
        log_moment(30.0 + 0.7 / 0.6, p, 0.7, 30.0)


def test_sample_kl_moments_and_determinism():
    p = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    draws = sample_kl(p, 0.8, 40.0, 200_000, rng=3)
    mean, var = kl_moments(p, 0.8, 40.0)
    assert abs(draws.mean() - mean) < 5 * np.sqrt(var / draws.size)
    assert draws.var() == pytest.approx(var, rel=0.05)
    np.testing.assert_array_equal(draws, sample_kl(p, 0.8, 40.0, 200_000, rng=3))


def test_sample_kl_small_shapes_do_not_underflow():
    # Shapes near 1e-3: a plain Gamma draw is 0.0 about half the time, which
    # would make log q = -inf; the log-space draws stay finite.
    assert np.mean(np.random.default_rng(0).standard_gamma(1e-3, 10_000) == 0) > 0.3
    draws = sample_kl(np.array([0.999, 0.001]), 1e-3, 1e-3, 100_000, rng=0)
    assert np.all(np.isfinite(draws)) and np.all(draws >= 0)


def test_sample_kl_mean_for_tiny_shapes():
    # shapes 0.01: E[KL] = -log 2 - (psi(0.01) - psi(0.02)), about 49
    p = np.array([0.5, 0.5])
    draws = sample_kl(p, 0.01, 1e-9, 400_000, rng=1)
    mean, var = kl_moments(p, 0.01, 1e-9)
    assert mean > 40
    assert abs(draws.mean() - mean) < 5 * np.sqrt(var / draws.size)


def test_clopper_pearson_lower():
    assert clopper_pearson_lower(0, 100) == 0.0
    assert clopper_pearson_lower(30, 100, 0.95) == pytest.approx(stats.beta.ppf(0.05, 30, 71))
    assert np.all(np.diff(clopper_pearson_lower(np.arange(101), 100)) > 0)
    # coverage: the bound exceeds the true proportion at most 1 - confidence of the time
    rng = np.random.default_rng(5)
    k = rng.binomial(200, 0.3, size=20_000)
    assert np.mean(clopper_pearson_lower(k, 200, 0.9) > 0.3) <= 0.1
    with pytest.raises(ValueError):
        clopper_pearson_lower(5, 3)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson_lower(1, 3, 1.0)


def test_cantelli_lower_bound_is_below_the_simulated_tail():
    p, a, beta, eta = np.full(30, 1 / 30), 0.1, 10.0, 1.0
    bound = cantelli_tail_lower_bound(p, a, beta, eta)
    draws = sample_kl(p, a, beta, 50_000, rng=2)
    assert 0 < bound < np.mean(draws > eta)
    assert cantelli_tail_lower_bound(p, 5.0, 1e4, eta) == 0.0


@pytest.mark.parametrize("eps", [1e-4, 0.3, 1.0, 50.0])
@pytest.mark.parametrize("lam", [1.0, 2.0, 30.0])
@pytest.mark.parametrize("d, eta, delta", [(2, 0.1, 0.05), (20, 1.0, 1e-6), (5, 5.0, 0.5)])
def test_sample_complexity_is_the_smallest_guaranteed_count(eps, lam, d, eta, delta):
    n = sample_complexity(eps, lam, d, eta, delta)
    r, a = calibrate(eps, lam)
    assert theorem2_bound(d, a, r * n, eta) <= delta * (1 + 1e-9)
    smaller = n * (1 - 1e-6)
    if r * smaller >= min_beta(d, a, eta):
        assert theorem2_bound(d, a, r * smaller, eta) > delta
    else:
        with pytest.raises(ValueError):
            theorem2_bound(d, a, r * smaller, eta)


def test_sample_complexity_rate_regimes_and_input():
    eps = np.array([0.5, 2.0])
    rate = sample_complexity_rate(eps, 3.0, 4, 0.2)
    d_term = 4 / np.expm1(0.1)
    assert rate[0] == pytest.approx(np.sqrt(3 / 0.5) * (25 + d_term))
    assert rate[1] == pytest.approx(1 / (2 * 0.04) + 2 * d_term)
    with pytest.raises(ValueError, match="lam must be in"):
        sample_complexity_rate(1.0, 1.5, 4, 0.2)
    with pytest.raises(ValueError, match="delta must be in"):
        sample_complexity(1.0, 2.0, 4, 0.2, 1.0)


def test_theorem2_fails_for_small_alpha_and_holds_in_simulation_for_alpha_one():
    # Cantelli with exact moments: a proof, without sampling, that the tail
    # exceeds the bound (uniform p, d = 1000, alpha = 0.1, beta at the requirement).
    d, eta = 1000, 1.0
    p = np.full(d, 1 / d)
    beta = min_beta(d, 0.1, eta)
    assert cantelli_tail_lower_bound(p, 0.1, beta, eta) > 0.99 > 0.03 > theorem2_bound(d, 0.1, beta, eta)
    # alpha = 1 (Algorithm 1 has alpha >= 1): no violation
    beta = min_beta(10, 1.0, 0.5)
    k = np.count_nonzero(sample_kl(np.full(10, 0.1), 1.0, beta, 20_000, rng=4) > 0.5)
    assert clopper_pearson_lower(k, 20_000, 1 - 1e-6) <= theorem2_bound(10, 1.0, beta, 0.5)


def test_exact_chernoff_bound_between_tail_and_eq22():
    p, a, eta = np.array([0.5, 0.3, 0.2]), 1.0, 0.5
    beta = 3 * min_beta(3, a, eta)
    best = exact_chernoff_bound(p, a, beta, eta)
    assert best <= chernoff_bound(3, a, beta, eta)
    k = np.count_nonzero(sample_kl(p, a, beta, 50_000, rng=6) > eta)
    assert clopper_pearson_lower(k, 50_000, 1 - 1e-6) <= best
