"""Tests of lib.mechanisms.noise: the Gaussian and Laplace mechanisms and their post-processing."""

import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import _laplace_rdp  # Mironov 2017, Prop. 6
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
import mpmath

from lib.privacy.guarantees import ApproximateDP
from lib.mechanisms.noise import (CLIP_FLOOR, GaussianMechanism, LaplaceMechanism, SmoothedEstimate, Uniform,
                           clip_and_normalise, laplace_rdp, laplace_scale)
from lib.mechanisms.noise import calibration as noise_calibration

LAMS = [1.01, 1.5, 2.0, 5.0, 20.0, 200.0]
SCALES = np.logspace(-2, 3, 11)


@pytest.mark.parametrize("lam", LAMS)
def test_laplace_rdp_matches_dp_accounting(lam):
    for l1 in (1.0, 2.0):
        ours = laplace_rdp(SCALES, lam, l1)
        theirs = np.array([_laplace_rdp(l1 / b, lam) for b in SCALES])
        np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_laplace_rdp_matches_corollary_2_as_written():
    lam, s = 5.0, np.linspace(0.01, 3, 50)
    written = np.log(lam / (2 * lam - 1) * np.exp((lam - 1) * s)
                     + (lam - 1) / (2 * lam - 1) * np.exp(-lam * s)) / (lam - 1)
    np.testing.assert_allclose(laplace_rdp(1 / s, lam), written, rtol=1e-12)


@pytest.mark.parametrize("lam", [2.0, 5.0])
@pytest.mark.parametrize("b", [0.5, 2.0, 10.0])
def test_laplace_rdp_is_the_renyi_divergence(lam, b):
    """Numerical integration of D_lam(Lap(0, b) || Lap(2, b)) against the closed form."""
    def integrand(x):  # p(x)^lam q(x)^(1 - lam) for the two Laplace densities
        return np.exp(-(lam * abs(x) + (1 - lam) * abs(x - 2)) / b) / (2 * b)

    total = sum(integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-12)[0]
                for lo, hi in [(-np.inf, 0), (0, 2), (2, np.inf)])
    assert np.isclose(np.log(total) / (lam - 1), laplace_rdp(b, lam, l1=2.0), rtol=1e-8)


def test_laplace_rdp_bounds_and_superadditivity():
    """Between KL (order 1) and the pure-DP level s; eps(2s) >= 2 eps(s) (used for Delta_1 = 2)."""
    s = np.logspace(-4, 2, 200)
    for lam in LAMS:
        eps = laplace_rdp(1 / s, lam)
        kl = s + np.expm1(-s)
        assert np.all(eps <= s * (1 + 1e-12))
        assert np.all(eps >= kl * (1 - 1e-9))
        assert np.all(laplace_rdp(1 / (2 * s), lam) >= 2 * eps * (1 - 1e-12))
        assert np.all(np.diff(eps) > 0)


@pytest.mark.parametrize("lam", LAMS)
def test_laplace_scale_round_trip(lam):
    eps = np.logspace(-6, 3, 19)
    b = laplace_scale(eps, lam, l1=2.0)
    assert b.shape == eps.shape
    np.testing.assert_allclose(laplace_rdp(b, lam, l1=2.0), eps, rtol=1e-11)
    assert isinstance(laplace_scale(0.3, lam), float)


def test_laplace_rdp_validation():
    with pytest.raises(ValueError, match="scale"):
        laplace_rdp(0.0, 2.0)
    with pytest.raises(ValueError, match="lam"):
        laplace_rdp(1.0, 1.0)
    with pytest.raises(ValueError, match="l1"):
        laplace_rdp(1.0, 2.0, l1=-1)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_scale(np.nan, 2.0)
    with pytest.raises(ValueError, match="lam"):
        laplace_scale(1.0, [2.0, 3.0])


def test_gaussian_sigma_is_section_5_1():
    """sigma^2 = lam Delta_2^2 / (2 eps); with eps/(K+1) and Delta_2^2 = 2: lam (K+1)/eps."""
    eps, lam, K = 0.7, 5.0, 12
    mech = GaussianMechanism(eps / (K + 1), lam)
    assert np.isclose(mech.sigma**2, lam * (K + 1) / eps, rtol=1e-14)
    assert "sigma" in repr(mech)


def test_noise_distributions():
    rng = np.random.default_rng(1)
    counts = np.zeros((200_000, 2))
    g = GaussianMechanism(0.5, 5.0)
    z = g.noisy_counts(counts, rng)
    # std of the sample standard deviation is sigma / sqrt(2n): 1 % is > 6 of them
    assert abs(z.std() / g.sigma - 1) < 0.01 and abs(z.mean()) < 0.01 * g.sigma
    lap = LaplaceMechanism(0.5, 5.0)
    z = lap.noisy_counts(counts, rng)
    assert abs(np.abs(z).mean() / lap.scale - 1) < 0.01  # E|Z| = b, sd b / sqrt(2n) * sqrt(2)
    assert "scale" in repr(lap)


def test_clip_and_normalise():
    out = clip_and_normalise([[3.0, -1.0, 1.0], [-5.0, -2.0, -0.1]], floor=1.0)
    np.testing.assert_allclose(out, [[0.6, 0.2, 0.2], [1 / 3, 1 / 3, 1 / 3]])
    out = clip_and_normalise(np.random.default_rng(0).normal(size=(50, 7)))
    assert np.all(out > 0) and np.allclose(out.sum(-1), 1)
    assert np.min(clip_and_normalise([1e6, -3.0])) == pytest.approx(CLIP_FLOOR / (1e6 + CLIP_FLOOR))
    for bad, match in [([1.0, np.nan], "finite"), ([1.0], "two entries"), (["a", "b"], "real")]:
        with pytest.raises(ValueError, match=match):
            clip_and_normalise(bad)
    with pytest.raises(ValueError, match="floor"):
        clip_and_normalise([1.0, 2.0], floor=0.0)


@pytest.mark.parametrize("cls", [GaussianMechanism, LaplaceMechanism])
def test_release_is_noise_then_the_shared_post_processing(cls):
    mech = cls(0.01, 5.0)
    counts = np.arange(24.0).reshape(2, 3, 4)
    released = mech.release(counts, rng=np.random.default_rng(3))
    noisy = mech.noisy_counts(counts, rng=np.random.default_rng(3))
    assert released.shape == counts.shape
    np.testing.assert_array_equal(released, clip_and_normalise(noisy, mech.floor))
    assert np.any(noisy < 0)  # the clipping is exercised at this epsilon
    assert np.all(released > 0) and np.allclose(released.sum(-1), 1)


@pytest.mark.parametrize("cls", [GaussianMechanism, LaplaceMechanism])
def test_mechanism_validation(cls):
    with pytest.raises(ValueError, match="epsilon"):
        cls(0.0, 5.0)
    with pytest.raises(ValueError, match="lam"):
        cls(1.0, 0.5)
    with pytest.raises(ValueError, match="counts"):
        cls(1.0, 5.0).release([1.0, -2.0], rng=0)
    with pytest.raises(ValueError, match="floor"):
        cls(1.0, 5.0, floor=-1.0)


@settings(max_examples=60, deadline=None)
@given(log_eps=st.floats(-8, 4), lam=st.floats(1.001, 500), l1=st.floats(0.1, 10))
def test_laplace_scale_round_trip_property(log_eps, lam, l1):
    eps = 10.0**log_eps
    b = laplace_scale(eps, lam, l1)
    assert np.isclose(laplace_rdp(b, lam, l1), eps, rtol=1e-10)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=20), st.floats(1e-9, 10))
def test_clip_and_normalise_property(values, floor):
    out = clip_and_normalise(values, floor)
    assert np.all(out > 0) and np.isclose(out.sum(), 1)
    # order is preserved (clipping and scaling are monotone)
    assert np.all(np.diff(out[np.argsort(values, kind="stable")]) >= -1e-15)


def test_constructors_from_a_given_noise_scale():
    g = GaussianMechanism.from_sigma(3.0, floor=2.0)
    assert g.sigma == 3.0 and g.floor == 2.0 and g.epsilon is None and g.lam is None and g.l2_sq is None
    assert repr(g) == "GaussianMechanism.from_sigma(sigma=3)"
    la = LaplaceMechanism.from_scale(4.0)
    assert la.scale == 4.0 and la.floor == CLIP_FLOOR and la.epsilon is None and la.l1 is None
    # the same draws as an RDP-calibrated object of the same scale
    ref = GaussianMechanism(1.0, 5.0)
    same = GaussianMechanism.from_sigma(ref.sigma)
    counts = np.array([[4.0, 0.0, 9.0]] * 5)
    np.testing.assert_array_equal(ref.release(counts, rng=3), same.release(counts, rng=3))
    ref = LaplaceMechanism(1.0, 5.0, l1=2.0)
    np.testing.assert_array_equal(ref.release(counts, rng=3),
                                  LaplaceMechanism.from_scale(ref.scale).release(counts, rng=3))
    with pytest.raises(ValueError, match=r"sigma must be in \(0, inf\)"):
        GaussianMechanism.from_sigma(0.0)
    with pytest.raises(ValueError, match=r"scale must be in \(0, inf\)"):
        LaplaceMechanism.from_scale(-1.0)
    with pytest.raises(ValueError, match="floor"):
        LaplaceMechanism.from_scale(1.0, floor=0.0)


def test_smoothed_estimate_is_exact_in_logs():
    counts = np.array([[3.0, 0.0, 7.0], [0.0, 0.0, 0.0]])
    est = SmoothedEstimate(0.5)
    want = (counts + 0.5) / (counts + 0.5).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(est.release(counts), want, rtol=1e-15)
    np.testing.assert_allclose(est.log_release(counts), np.log(want), rtol=1e-15)
    np.testing.assert_array_equal(est.release(counts, rng=1), est.release(counts, rng=2))  # no randomness
    assert repr(est) == "SmoothedEstimate(smoothing=0.5)" and SmoothedEstimate().smoothing == 0.1
    # unsmoothed (a class prior): exact while every count is positive, refused at a zero count
    np.testing.assert_allclose(SmoothedEstimate(0.0).release([1.0, 3.0]), [0.25, 0.75], rtol=1e-15)
    with pytest.raises(ValueError, match="smoothing is 0"):
        SmoothedEstimate(0.0).log_release(counts)
    with pytest.raises(ValueError, match="smoothing"):
        SmoothedEstimate(-0.1)
    with pytest.raises(ValueError, match="counts"):
        est.release([1.0, -1.0])


def test_uniform_ignores_the_counts():
    counts = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(Uniform().release(counts), np.full(counts.shape, 0.25))
    np.testing.assert_allclose(Uniform().log_release(counts[0]), -np.log(4), rtol=1e-15)
    assert repr(Uniform()) == "Uniform()" and Uniform.uninformative
    with pytest.raises(ValueError, match="counts"):
        Uniform().release([1.0])


# ----------------------------------------------------------------------------- the classical Gaussian calibration

def _exact_gaussian_delta(sigma, eps, sens):
    """Balle and Wang (2018), Theorem 8, with scipy.stats.norm (independent of lib.mechanisms.noise.calibration)."""
    from scipy.stats import norm

    a, b = sens / (2 * sigma), eps * sigma / sens
    return norm.cdf(a - b) - np.exp(eps) * norm.cdf(-a - b)


def test_classical_gaussian_is_not_attained_at_epsilon_1_or_above():
    # The classical bound is proved for eps_hat < 1. At eps_hat = 20 its sigma has exact delta about 150
    # times the target, yet calibrate_dp reported attained=True; every eps_hat >= 1 is now not attained
    # (no release objects, the reason stated), bad arguments still raise.
    from lib.mechanisms.noise import ClassicalGaussianMechanism
    from lib.mechanisms.protocol import ReleaseSpec

    spec = ReleaseSpec(((1, 2), (2, 3), (2, 4)), 100)
    sens = np.sqrt(2.0 * spec.n_releases)
    cal = ClassicalGaussianMechanism.calibrate(ApproximateDP(20.0, 1e-5), spec)
    assert _exact_gaussian_delta(cal.parameters["sigma"], 20.0, sens) > 100 * 1e-5
    for eps in (1.0, 1.5, 8.0, 20.0):
        cal = ClassicalGaussianMechanism.calibrate(ApproximateDP(eps, 1e-5), spec)
        assert not cal.attained and cal.releases == () and "epsilon_hat < 1" in cal.parameters["reason"]
        assert cal.parameters["delta_exact"] == pytest.approx(
            _exact_gaussian_delta(cal.parameters["sigma"], eps, sens), rel=1e-6, abs=1e-300)
    with pytest.raises(ValueError, match="epsilon"):
        ApproximateDP(-1.0, 1e-5)   # an invalid target cannot be built
    with pytest.raises(ValueError, match="epsilon_hat"):
        ClassicalGaussianMechanism.calibrate(ApproximateDP(0.0, 1e-5), spec)
    with pytest.raises(ValueError, match="delta"):
        ApproximateDP(0.5, 1.5)


@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2, 0.3])
def test_classical_gaussian_attained_below_1_meets_the_exact_delta(delta):
    # Where it is attained, the exact delta of its sigma (computed here with scipy, not by the code under
    # test) is within the target, for every eps_hat < 1 of a grid up to 0.999 and several model sizes.
    from lib.mechanisms.noise import ClassicalGaussianMechanism
    from lib.mechanisms.protocol import ReleaseSpec

    for m in (1, 3, 14):
        spec = ReleaseSpec(((1, 2),) * m, 100)
        for eps in (1e-3, 0.05, 0.3, 0.7, 0.9, 0.999):
            cal = ClassicalGaussianMechanism.calibrate(ApproximateDP(eps, delta), spec)
            assert cal.attained and len(cal.releases) == m
            sigma = cal.parameters["sigma"]
            assert sigma == pytest.approx(np.sqrt(2 * np.log(1.25 / delta)) * np.sqrt(2.0 * m) / eps, rel=1e-14)
            assert cal.releases[0].sigma == sigma
            assert _exact_gaussian_delta(sigma, eps, np.sqrt(2.0 * m)) <= delta


def _on_simplex(y):
    assert np.all(np.isfinite(y)) and np.all(y > 0)
    # a sum of d doubles each rounded once: a few units of 1e-16
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("x, floor, want", [
    ([1e308, 1e308], 1e-6, [0.5, 0.5]),
    ([1.0, 1.0, 1.0, 1.0], 1e308, [0.25] * 4),
    ([1.7e308, 1.7e308, -1.0], 1e-6, None),
    ([1e300, -5.0], 1e-300, None),
])
def test_clip_and_normalise_at_the_edges(x, floor, want):
    y = clip_and_normalise(x, floor=floor)
    _on_simplex(y)
    if want is not None:
        np.testing.assert_allclose(y, want, rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(log_s=st.floats(-300, 0), log_lam=st.floats(-12, 12))
def test_laplace_rdp_is_accurate_for_small_sensitivity_ratios(log_s, log_lam):
    """Against mpmath (enough digits to survive the cancellation of order s^2): the closed
    form cancelled to zero or garbage for s below 1e-8."""
    s, lam = 10.0**log_s, 1 + 10.0**log_lam
    with mpmath.workdps(int(40 - 2 * log_s + 2 * abs(log_lam))):
        S, L = mpmath.mpf(s), mpmath.mpf(lam)
        arg = L / (2 * L - 1) * mpmath.exp((L - 1) * S) + (L - 1) / (2 * L - 1) * mpmath.exp(-L * S)
        want = float(mpmath.log(arg) / (L - 1))
    got = float(laplace_rdp(1.0 / s, lam))
    if want < 1e-300:
        assert got < 1e-290  # underflows with the truth
    else:
        # the series is exact to 1e-18; the closed form (u >= 1e-6) to about 1e-16 / (lam s) <= 1e-9
        assert abs(got / want - 1) < 2e-9


@pytest.mark.parametrize("eps", [1e-300, 1e-100, 1e-20])
def test_laplace_scale_for_tiny_epsilon(eps):
    b = float(laplace_scale(eps, 2.0, 2.0))
    # epsilon(b) = lam s^2 / 2 to first order, s = l1 / b: b = l1 sqrt(lam / (2 eps)); it was 3.8e122 for 1e-300
    assert b == pytest.approx(2.0 * np.sqrt(2.0 / (2 * eps)), rel=1e-9)
    assert float(laplace_rdp(b, 2.0, 2.0)) == pytest.approx(eps, rel=1e-9)


@settings(max_examples=50, deadline=None)
@given(log_eps=st.floats(-8, 10), log_delta=st.floats(-300, -1e-4), log_sens=st.floats(-50, 50))
def test_analytic_gaussian_sigma_meets_delta_over_its_range(log_eps, log_delta, log_sens):
    eps, delta, sens = 10.0**log_eps, 10.0**log_delta, 10.0**log_sens
    sigma = noise_calibration.analytic_gaussian_sigma(eps, delta, sens)
    # brentq in log sigma to 1e-13: delta(sigma) is steep but smooth, 1e-6 relative leaves room
    assert noise_calibration.analytic_gaussian_delta(sigma, eps, sens) == pytest.approx(delta, rel=1e-6)


def test_analytic_gaussian_sigma_refuses_beyond_its_range():
    with pytest.raises(ValueError, match=r"epsilon_hat must be in \(0, 1e\+10\]"):
        noise_calibration.analytic_gaussian_sigma(1e11, 1e-5, 1.0)  # NaN in brentq before the fix
    assert np.isfinite(noise_calibration.rdp_gaussian_sigma(1e300, 1e-5, 1.0, grid_size=16))


# Errors blame the argument that caused them, not a downstream symptom.

def test_gaussian_construction_blames_its_arguments_not_the_scale():
    with pytest.raises(ValueError, match=r"lam \* l2_sq / \(2 epsilon\).*epsilon = 4.94066e-324"):
        GaussianMechanism(5e-324, 1e300)  # sigma = inf, then "noisy_counts must be finite" at release


def test_laplace_construction_at_tiny_epsilon_is_valid():
    mech = LaplaceMechanism(5e-324, 2.0)
    assert np.isfinite(mech.scale) and mech.scale > 0


def test_noise_overflow_blames_the_noise_scale():
    mech = GaussianMechanism.from_sigma(1e308)
    with pytest.raises(ValueError, match=r"counts plus noise of sigma = 1e\+308 overflow"):
        for seed in range(20):  # of 500 draws of N(0, 1e308^2) one exceeds 1.8e308 with probability ~1 - 1e-15
            mech.release(np.zeros((100, 5)), rng=seed)
