"""Issue 11, class 2: overflow and underflow never give zeros, NaN or a silently wrong number.

A release is always a finite vector on the simplex with positive entries, or a
ValueError that names the argument.
"""

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import DirichletMechanism, GaussianMechanism, LaplaceMechanism, calibrate, rdp_epsilon
from lib.mechanisms.noise import clip_and_normalise, laplace_rdp, laplace_scale


def _on_simplex(y):
    assert np.all(np.isfinite(y)) and np.all(y > 0)
    # a sum of d doubles each rounded once: a few units of 1e-16
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


MECHANISMS = [DirichletMechanism(1.0, 2.0), GaussianMechanism(1.0, 2.0), LaplaceMechanism(1.0, 2.0)]


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
@settings(max_examples=40, deadline=None)
@given(exponent=st.floats(0, 307.5), d=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_release_of_counts_up_to_the_double_range_is_on_the_simplex(mech, exponent, d, seed):
    counts = np.random.default_rng(seed).uniform(0, 1, size=(3, d)) * 10.0**exponent
    _on_simplex(mech.release(counts, rng=seed))


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_the_reported_examples(mech):
    y = mech.release([1e308, 1e308], rng=0)  # all zeros (Dirichlet) or NaN before the fix
    _on_simplex(y)


def test_dirichlet_rows_whose_concentration_overflows_are_refused_naming_counts():
    mech = DirichletMechanism(5.0, 2.0)  # r > 1
    with pytest.raises(ValueError, match=r"counts must be at most .*r \* counts \+ alpha overflows"):
        mech.release([1.7e308, 1.0], rng=0)


def test_normal_releases_are_unchanged():
    """Regression guard: for alpha >= 1 the release is still one Gamma draw per cell, normalised."""
    mech = DirichletMechanism(1.0, 2.0)
    counts = np.array([[119, 74, 618, 272, 13, 187], [0, 0, 1, 2, 3, 4]], dtype=float)
    gamma = np.random.default_rng(7).standard_gamma(mech.r * counts + mech.alpha)
    np.testing.assert_array_equal(mech.release(counts, rng=7), gamma / gamma.sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("r, alpha", [(1e-3, 1e-3), (1e-3, 1e-5), (1e-6, 1e-200)])
def test_tiny_concentrations_give_positive_finite_rows(r, alpha):
    y = DirichletMechanism.from_concentration(r, alpha).release(np.zeros((2000, 5)), rng=1)
    _on_simplex(y)  # exact zeros and NaN rows before the fix


def test_tiny_concentrations_have_the_dirichlet_mean():
    """The log-space draw is Dirichlet(a): its mean a / a0, checked by a z-score over 40000 rows."""
    a = np.array([0.05, 0.3, 0.8])
    mech = DirichletMechanism.from_concentration(1.0, 0.05)
    y = mech.release(np.broadcast_to(a - 0.05, (40_000, 3)), rng=3)
    se = y.std(axis=0, ddof=1) / np.sqrt(len(y))
    z = (y.mean(axis=0) - a / a.sum()) / se
    assert np.all(np.abs(z) < 5)  # 5 standard errors: a false alarm has probability below 2e-6 per cell
    # and the variance a_i (a0 - a_i) / (a0^2 (a0 + 1)), within 10% (relative SE of a variance here < 2%)
    var = a * (a.sum() - a) / (a.sum() ** 2 * (a.sum() + 1))
    np.testing.assert_allclose(y.var(axis=0, ddof=1), var, rtol=0.1)


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


@settings(max_examples=60, deadline=None)
@given(log_eps=st.floats(-300, 300), log_lam=st.floats(-300, 300), log_l2=st.floats(-40, 40))
def test_calibrate_is_exact_or_refuses(log_eps, log_lam, log_l2):
    eps, lam, l2 = 10.0**log_eps, 1 + 10.0**log_lam, 10.0**log_l2
    try:
        r, alpha = calibrate(eps, lam, l2)
    except ValueError as exc:
        assert "double precision" in str(exc)
        return
    assert np.isfinite(r) and r > 0 and np.isfinite(alpha) and alpha >= 1
    # rdp_epsilon in logs where r^2 underflows; Newton in log r stops at 1e-13 (or a few ulp of log r)
    assert float(rdp_epsilon(r, lam, l2)) == pytest.approx(eps, rel=1e-9)


def test_calibrate_tiny_ratio_found_the_wrong_root_before():
    args = (1.8232633548240378e-293, 1.0000000000638334, 1.8673501729880208e-32, 1.4558794922160418e+47)
    r, _ = calibrate(*args)
    assert float(rdp_epsilon(r, *args[1:])) == pytest.approx(args[0], rel=1e-9)
