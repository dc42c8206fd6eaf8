"""Appendix A (Proposition 3): density and event ratios of neighbouring Dirichlet outputs."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from lib import calibrate, rdp_to_dp
from lib.theory.counterexample import (
    density_witness,
    event_log_ratio,
    event_power_law,
    event_threshold,
    exact_delta,
    exact_epsilon,
    log_beta_cdf,
    log_density_ratio,
)

from tests._reference import neighbour


def _mp_log_beta_cdf(t, p, q, dps=40):
    """log I_t(p, q) by mpmath quadrature of the Beta density, scaled at its top end."""
    with mp.workdps(dps):
        t, p, q = mp.mpf(t), mp.mpf(p), mp.mpf(q)
        top = (p - 1) * mp.log(t) + (q - 1) * mp.log(1 - t)

        def density(x):
            return mp.exp((p - 1) * mp.log(x) + (q - 1) * mp.log(1 - x) - top)

        nodes = sorted({mp.mpf(0), t} | {t - t * mp.mpf(10) ** -k for k in range(8)})
        return float(mp.log(mp.quad(density, nodes)) + top - mp.log(mp.beta(p, q)))


def _add_pair(epsilon, lam=2.0, d=3):
    """Outputs on the empty dataset and on one record in bin 0 (the paper's x, x')."""
    r, alpha = calibrate(epsilon, lam, l2_sq=1.0)
    a = np.full(d, alpha)
    b = a.copy()
    b[0] += r
    return a, b, r


def _replace_pair(epsilon, lam=2.0, d=3):
    """Outputs on one record in bin 1 and on one record in bin 0."""
    r, alpha = calibrate(epsilon, lam)
    a = np.full(d, alpha)
    b = a.copy()
    a[1] += r
    b[0] += r
    return a, b, r


@pytest.mark.parametrize(
    "t, p, q",
    [(0.05, 301.0, 2400.0), (0.01, 301.0, 2400.0), (1e-8, 301.0, 2400.0), (0.3, 1e4, 1e4),
     (0.45, 1e4, 1e4), (0.2, 0.3, 0.5), (1e-300, 0.3, 0.5), (1e-5, 2.7, 5.4), (1e-3, 1201.0, 2402.0),
     (0.9, 2.0, 0.4), (1e-12, 0.43, 5.4)],
)
def test_log_beta_cdf_matches_mpmath(t, p, q):
    assert log_beta_cdf(t, p, q) == pytest.approx(_mp_log_beta_cdf(t, p, q), rel=1e-12, abs=1e-13)


def test_log_beta_cdf_agrees_with_betainc_where_representable_and_broadcasts():
    t = np.logspace(-6, np.log10(0.99), 50)[:, None]
    p, q = np.array([0.5, 3.0, 40.0]), np.array([2.0, 7.0, 60.0])
    got = log_beta_cdf(t, p, q)
    assert got.shape == (50, 3)
    ok = special.betainc(p, q, t) > 1e-280
    assert np.allclose(got[ok], np.log(special.betainc(p, q, t))[ok], rtol=1e-13, atol=0)
    assert np.all(np.isfinite(got)) and np.all(got <= 0)


def test_log_beta_cdf_series_joins_betainc_continuously():
    # Around the switch at betainc = 1e-280 the two evaluations must agree.
    p, q = 301.0, 2400.0
    t = np.linspace(0.005, 0.02, 2001)
    values = log_beta_cdf(t, p, q)
    assert np.all(np.diff(values) > 0)
    series = p * np.log(t) + q * np.log1p(-t) - np.log(p) - special.betaln(p, q)
    assert np.all(values >= series)  # the series' terms are all positive


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, np.nan])
def test_log_beta_cdf_rejects_points_outside_the_open_interval(bad):
    with pytest.raises(ValueError, match="t must"):
        log_beta_cdf(bad, 1.0, 1.0)
    with pytest.raises(ValueError, match="p must"):
        log_beta_cdf(0.5, 0.0, 1.0)


def test_log_density_ratio_matches_scipy_dirichlet():
    rng = np.random.default_rng(0)
    a, b = np.array([2.5, 1.2, 7.0, 3.3]), np.array([3.0, 1.2, 6.1, 0.9])
    y = rng.dirichlet(np.ones(4), size=200)
    expected = [stats.dirichlet.logpdf(point, a) - stats.dirichlet.logpdf(point, b) for point in y]
    assert np.allclose(log_density_ratio(y, a, b), expected, rtol=1e-12, atol=1e-12)


def test_log_density_ratio_of_the_paper_pair_is_a_power_of_y1():
    # Proposition 3 with the exponent written out: B(b) / B(a) * y_1^(-r).
    a, b, r = _add_pair(1.0)
    y = np.array([[1e-6, 0.5 - 5e-7, 0.5 - 5e-7], [0.2, 0.3, 0.5]])
    constant = special.gammaln(b).sum() - special.gammaln(b.sum()) - special.gammaln(a).sum() + special.gammaln(a.sum())
    assert np.allclose(log_density_ratio(y, a, b), constant - r * np.log(y[:, 0]), rtol=1e-13)


def test_log_density_ratio_validates_its_point():
    with pytest.raises(ValueError, match="sum to 1"):
        log_density_ratio([0.2, 0.2, 0.2], [1, 1, 1], [1, 2, 1])
    with pytest.raises(ValueError, match="length d"):
        log_density_ratio([0.5, 0.5], [1, 1, 1], [1, 2, 1])
    with pytest.raises(ValueError, match="same length"):
        log_density_ratio([0.5, 0.5], [1, 1], [1, 2, 1])


@settings(max_examples=150, deadline=None)
@given(
    a=st.lists(st.floats(0.05, 2000.0), min_size=2, max_size=6),
    shift=st.floats(0.05, 500.0),
    epsilon=st.floats(0.0, 100.0),
    data=st.data(),
)
def test_density_witness_always_exceeds_epsilon(a, shift, epsilon, data):
    a = np.array(a)
    k = data.draw(st.integers(0, a.size - 1))
    b = a.copy()
    b[k] += shift
    # Perturb the other coordinates both ways; the witness must not rely on them.
    others = data.draw(st.lists(st.floats(-0.5, 0.5), min_size=a.size, max_size=a.size))
    b = np.where(np.arange(a.size) == k, b, a * (1 + np.array(others)))
    try:
        y = density_witness(a, b, epsilon)
    except ValueError as exc:  # y_k would underflow: a limit of doubles, not of the proof
        assert "smallest positive float" in str(exc)
        assume(False)
    assert np.all(y > 0) and abs(y.sum() - 1) < 1e-12
    assert log_density_ratio(y, a, b) > epsilon


def test_density_witness_needs_a_coordinate_where_a_is_smaller():
    with pytest.raises(ValueError, match="bounded"):
        density_witness([2.0, 3.0], [2.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="smallest positive float"):
        density_witness([1.0, 1.0], [1.01, 1.0], 8.0)


@pytest.mark.parametrize("pair", [_add_pair, _replace_pair])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0, 100.0])
def test_event_ratio_matches_mpmath_and_its_threshold_is_sharp(pair, epsilon):
    a, b, r = pair(epsilon)
    t_star = event_threshold(a, b, epsilon)
    assert event_log_ratio(t_star, a, b) == pytest.approx(epsilon, rel=1e-9)
    assert event_log_ratio(t_star * (1 - 1e-6), a, b) > epsilon > event_log_ratio(t_star * (1 + 1e-6), a, b)
    reference = _mp_log_beta_cdf(t_star, a[0], a.sum() - a[0]) - _mp_log_beta_cdf(t_star, b[0], b.sum() - b[0])
    assert reference == pytest.approx(epsilon, rel=1e-9)


@pytest.mark.parametrize("pair", [_add_pair, _replace_pair])
def test_event_ratio_follows_its_power_law(pair):
    a, b, r = pair(1.0)
    exponent, log_constant = event_power_law(a, b)
    assert exponent == pytest.approx(r, rel=1e-12)
    t = np.logspace(-12, -4, 9)
    gap = event_log_ratio(t, a, b) - (log_constant - exponent * np.log(t))
    # The correction is O(t): it shrinks tenfold per decade of t.
    assert np.all(np.abs(gap) < 100 * t)
    assert np.all(np.diff(event_log_ratio(np.logspace(-12, -0.01, 300), a, b)) < 0)


def test_event_threshold_rejects_a_pair_in_the_wrong_direction():
    a, b, _ = _add_pair(1.0)
    with pytest.raises(ValueError, match="one more record"):
        event_threshold(b, a, 1.0)
    with pytest.raises(ValueError, match="i must"):
        event_log_ratio(0.5, a, b, i=3)


def test_exact_delta_matches_quadrature_for_beta_outputs():
    # d = 2: the outputs are Beta distributions and delta is a 1-d integral.
    a, b = np.array([2.7, 3.1]), np.array([3.9, 3.1])
    for epsilon in (0.0, 0.2, 1.0, 3.0):
        def integrand(s):
            p = stats.beta.pdf(s, a[0], a[1])
            q = stats.beta.pdf(s, b[0], b[1])
            return max(p - np.exp(epsilon) * q, 0.0)

        expected = integrate.quad(integrand, 0, 1, epsabs=1e-13, epsrel=1e-11, limit=200, points=[0.5])[0]
        assert exact_delta(a, b, epsilon) == pytest.approx(expected, rel=1e-8, abs=1e-14)


@pytest.mark.parametrize("kind", ["add", "replace"])
def test_exact_delta_matches_monte_carlo_in_three_dimensions(kind):
    # delta = E_P[(1 - exp(epsilon - L))_+], estimated from draws of P.
    counts = np.array([2.0, 0.0, 1.0])
    other = neighbour(counts, "add", 1, 0) if kind == "add" else neighbour(counts, "replace", 0, 1)
    r, alpha = calibrate(0.5, 2.0)
    a, b = r * counts + alpha, r * other + alpha
    rng = np.random.default_rng(11)
    for p, q in ((a, b), (b, a)):
        y = rng.dirichlet(p, size=400_000)
        weight = np.maximum(-np.expm1(0.2 - log_density_ratio(y, p, q)), 0.0)
        estimate, se = weight.mean(), weight.std() / np.sqrt(weight.size)
        assert abs(exact_delta(p, q, 0.2) - estimate) < 5 * se + 1e-12


def test_exact_delta_edge_cases_and_validation():
    a = np.array([2.0, 3.0, 4.0])
    assert exact_delta(a, a, 0.5) == 0.0
    with pytest.raises(ValueError, match="one coordinate"):
        exact_delta(a, [3.0, 4.0, 4.0], 0.5)
    # Total variation distance at epsilon = 0.
    b = np.array([3.0, 3.0, 4.0])
    tv = 0.5 * integrate.quad(
        lambda s: abs(stats.beta.pdf(s, 2.0, 7.0) - stats.beta.pdf(s, 3.0, 7.0)), 0, 1, epsabs=1e-13
    )[0]
    assert exact_delta(a, b, 0.0) == pytest.approx(tv, rel=1e-9)


@pytest.mark.parametrize("lam", [1.5, 2.0, 10.0])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_exact_delta_respects_the_rdp_conversion_for_every_neighbour(epsilon, lam):
    # Theorem 1 with Lemma 3: every neighbouring pair is (eps_hat, delta)-DP.
    delta = 1e-5
    eps_hat = float(rdp_to_dp(epsilon, lam, delta))
    r, alpha = calibrate(epsilon, lam)
    counts = np.array([0.0, 3.0, 1.0])
    for kind, i, j in [("add", 0, 0), ("add", 1, 1), ("remove", 1, 0), ("replace", 1, 0), ("replace", 2, 0)]:
        other = neighbour(counts, kind, i, j)
        a, b = r * counts + alpha, r * other + alpha
        assert exact_delta(a, b, eps_hat) <= delta
        assert exact_delta(b, a, eps_hat) <= delta


def test_exact_epsilon_inverts_exact_delta():
    a, b, _ = _replace_pair(1.0)
    for delta in (1e-2, 1e-5, 1e-9):
        eps = exact_epsilon(a, b, delta)
        assert exact_delta(a, b, eps) == pytest.approx(delta, rel=1e-6)
        assert exact_delta(a, b, eps * (1 - 1e-4)) > delta
    with pytest.raises(ValueError, match="delta must"):
        exact_epsilon(a, b, 1.0)
