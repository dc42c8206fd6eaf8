"""Tests for lib.mechanisms.gohari: Gohari et al.'s (eps_hat, delta) guarantee of one release."""

from __future__ import annotations

import time

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.mechanisms.gohari import (GohariGuarantee, gohari_calibrate, gohari_delta, gohari_epsilon, gohari_epsilon_at,
                                   gohari_parameters, min_part_cdf)
from lib.mechanisms.gohari.core import params, union_tail, vertices
from lib.mechanisms.gohari.reference import delta_reference, epsilon_reference
from lib.mechanisms import gohari
from lib.theory.gohari_comparison import worst_log_beta_ratio

# (r, lam, n_total, d): the Figure 2 setting, Figure 3's histogram and the
# extremes of the experiments (d from 2 to 20, N from 100 to 50000)
SETTINGS = [
    (0.97, 2, 147, 6),
    (1.0, 2, 1283, 6),
    (1e-3, 5, 50000, 20),
    (0.05, 20, 100, 2),
    (0.005, 200, 300, 3),
]


@pytest.mark.parametrize("r, lam, n_total, d", SETTINGS)
def test_delta_matches_mpmath(r, lam, n_total, d):
    """Every candidate vertex, at the gamma of delta = 1e-9, 1e-5 and 1e-3."""
    verts = vertices(params(r, lam, n_total, d, 0), d == 2)
    for delta in (1e-9, 1e-5, 1e-3):
        gamma = gohari_epsilon(r, delta, lam=lam, n_total=n_total, d=d).gamma
        ours = union_tail(np.array([gamma]), verts)[:, 0]
        for v, value in zip(verts, ours):
            ref = delta_reference(gamma, v, method="inclusion_exclusion")
            assert abs(value / float(ref) - 1) < 1e-8


def test_delta_matches_direct_mpmath_reference():
    """One point against the reference that does not use inclusion-exclusion."""
    a = [1.5, 1.5, 19.0]  # d = 3: the only vertex of r = 0.125, lam = 2, N = 140
    assert np.allclose(vertices(params(0.125, 2, 140, 3, 0), False), a)
    gamma = 0.002
    ref = delta_reference(gamma, a, dps=50)
    assert abs(gohari_delta(gamma, 0.125, 2, 140, 3) / float(ref) - 1) < 1e-8
    other = delta_reference(gamma, a, dps=60, method="inclusion_exclusion")
    assert abs(ref - other) < 1e-40
    assert mpmath.mp.dps == 15  # the references raise the precision locally only


@pytest.mark.parametrize("r, lam, n_total, d", SETTINGS + [(1e-5, 2, 1283, 6), (30.0, 200, 50000, 20)])
def test_epsilon_matches_mpmath(r, lam, n_total, d):
    for gamma in (1e-7, 1e-3, 0.2):
        for m in (0, 1):
            ours = gohari_epsilon_at(gamma, r, lam=lam, n_total=n_total, d=d, min_count=m)
            ref = epsilon_reference(gamma, r, lam=lam, n_total=n_total, d=d, min_count=m)
            assert abs(ours / float(ref) - 1) < 1e-10


def test_gamma_meets_relative_tolerance():
    for r, lam, n_total, d in SETTINGS:
        for delta in (1e-9, 1e-5, 1e-3):
            g = gohari_epsilon(r, delta, lam=lam, n_total=n_total, d=d)
            below, above = gohari_delta(g.gamma * np.array([1 - 1e-6, 1 + 1e-6]), r, lam, n_total, d)
            assert below < delta < above


def test_delta_is_increasing_and_vectorised():
    gamma = np.geomspace(1e-6, 0.33, 200)
    values = gohari_delta(gamma, 1.0, 2, 1283, 6)
    assert values.shape == gamma.shape
    assert np.all(np.diff(values) >= 0) and values[-1] > 0.99
    assert gohari_delta(gamma.reshape(20, 10), 1.0, 2, 1283, 6).shape == (20, 10)


def test_no_floor_with_accurate_numerics():
    """delta(gamma) -> 0 as gamma -> 0: every delta in [1e-100, 1e-3] is reached."""
    for delta in (1e-100, 1e-50, 1e-20):
        g = gohari_epsilon(0.97, delta, lam=2, n_total=147, d=6)
        assert 0 < g.gamma < 1e-3 and np.isfinite(g.epsilon_hat)


def test_ratio_term_is_the_worst_case_over_neighbours():
    """The log-Beta term is the largest log-ratio of normalising constants."""
    r, lam = 0.7, 3.0
    for n_total, d in ((5, 3), (4, 4)):
        # every histogram of n_total records in d bins and every replace-one neighbour (brute force)
        worst = worst_log_beta_ratio(n_total, d, r, lam)
        # at gamma = 1/2 the log(1/gamma - 1) term vanishes
        term = gohari_epsilon_at(0.5 - 1e-16, r, lam=lam, n_total=n_total, d=d)
        assert term == pytest.approx(worst, rel=1e-9)
        author = gohari_epsilon_at(0.5 - 1e-16, r, lam=lam, n_total=n_total, d=d, min_count=1)
        assert author < worst - 1e-3


def test_minimum_is_at_a_vertex():
    """delta over a grid of the aggregated input set never exceeds the vertex value."""
    for r, lam, n_total, d in [(0.97, 2, 147, 6), (1.0, 2, 1283, 6), (0.3, 20, 300, 4)]:
        par = params(r, lam, n_total, d, 0)
        k, e1, e2 = par.k, par.eta, par.eta_prime
        gamma = gohari_epsilon(r, 1e-5, lam=lam, n_total=n_total, d=d).gamma
        s = np.linspace(0, 1, 21)
        pts = [(e1 + x * (1 - 2 * e1 - e2), e1 + y * (1 - 2 * e1 - e2)) for x in s for y in s if x + y <= 1]
        grid = np.array([[p, q, 1 - p - q] for p, q in pts]) * k
        worst = union_tail(np.array([gamma]), grid).max()
        assert worst <= 1e-5 * (1 + 1e-9)


def test_aggregation_by_monte_carlo():
    """The three-part probability equals the frequency of the event for d parts."""
    r, lam, n_total, d = 0.97, 2, 147, 6
    par = params(r, lam, n_total, d, 0)
    conc = np.full(d, par.alpha)
    conc[1] += r * (n_total - 0)  # counts (0, N, 0, ...): parts 1 and 2 changed
    gamma = 0.05
    rng = np.random.default_rng(3)
    y = rng.dirichlet(conc, size=400_000)
    event = (y[:, 0] > gamma) & (y[:, 1] > gamma) & (y[:, 2:].sum(axis=1) > gamma)
    a3 = np.array([[conc[0], conc[1], conc[2:].sum()]])
    p = 1 - union_tail(np.array([gamma]), a3)[0, 0]
    se = np.sqrt(p * (1 - p) / y.shape[0])
    assert abs(event.mean() - p) < 5 * se


def test_calibrate_meets_target_and_is_largest():
    for lam, target, n_total, d in [(2, 1.0, 1283, 6), (200, 100.0, 1283, 6), (5, 1e-3, 50000, 20),
                                    (20, 10.0, 100, 2)]:
        g = gohari_calibrate(target, 1e-5, lam=lam, n_total=n_total, d=d)
        assert isinstance(g, GohariGuarantee)
        assert target * (1 - 1e-9) <= g.epsilon_hat <= target
        again = gohari_epsilon(g.r, 1e-5, lam=lam, n_total=n_total, d=d)
        assert again.epsilon_hat == pytest.approx(g.epsilon_hat, rel=1e-12)
        assert g.alpha == pytest.approx(1 + 4 * (lam - 1) * g.r)
        bigger = gohari_epsilon(g.r * (1 + 1e-7), 1e-5, lam=lam, n_total=n_total, d=d)
        assert bigger.epsilon_hat > target


def test_epsilon_increases_with_r():
    r = np.geomspace(1e-5, 50, 40)
    for lam in (2, 20, 200):
        eps = [gohari_epsilon(x, 1e-5, lam=lam, n_total=1283, d=6).epsilon_hat for x in r]
        assert np.all(np.diff(eps) > 0)


def test_min_part_cdf_is_the_kernel_of_delta():
    verts = vertices(params(0.97, 2, 147, 6, 0), False)
    gamma = np.array([1e-3, 2e-3])
    assert np.array_equal(min_part_cdf(gamma, verts).max(axis=0), gohari_delta(gamma, 0.97, 2, 147, 6))
    with pytest.raises(ValueError, match="a must have shape"):
        min_part_cdf(0.1, [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="gamma must be in"):
        min_part_cdf(0.4, [1.0, 2.0, 3.0])


def test_parameters_and_author_variant():
    par = gohari_parameters(0.97, 2, 147, 6)
    assert par.k == pytest.approx(171.87)
    assert round(par.eta, 3) == 0.028 and round(par.eta_prime, 3) == 0.114
    author = gohari_parameters(0.97, 2, 147, 6, min_count=1)
    assert author.eta == pytest.approx((0.97 + par.alpha) / par.k)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: gohari_delta(0.4, 1.0, 2, 100, 6), "gamma must be in"),
        (lambda: gohari_delta(0.0, 1.0, 2, 100, 6), "gamma must be in"),
        (lambda: gohari_delta(0.1, -1.0, 2, 100, 6), "r must be in"),
        (lambda: gohari_delta(0.1, 1.0, 0.5, 100, 6), "lam must be in"),
        (lambda: gohari_delta(0.1, 1.0, 2, 0.5, 6), "n_total must be in"),
        (lambda: gohari_delta(0.1, 1.0, 2, 100, 1), "d must be an integer"),
        (lambda: gohari_delta(0.1, 1.0, 2, 100, 6.0), "d must be an integer"),
        (lambda: gohari_delta(0.1, 1.0, 2, 100, 6, min_count=2), "min_count must be 0 or 1"),
        (lambda: gohari_epsilon(1.0, 1.0, lam=2, n_total=100, d=6), "delta must be in"),
        (lambda: gohari_epsilon(1.0, np.nan, lam=2, n_total=100, d=6), "delta must be finite"),
        (lambda: gohari_calibrate(0.0, 1e-5, lam=2, n_total=100, d=6), "epsilon_hat must be in"),
        (lambda: gohari_calibrate(1.0, [1e-5, 1e-6], lam=2, n_total=100, d=6), "delta must be a scalar"),
    ],
)
def test_invalid_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_delta_below_the_floor_names_it():
    with pytest.raises(ValueError, match="below the floor 1e-100"):
        gohari_epsilon(1.0, 1e-120, lam=2, n_total=100, d=6)


# ------------------------------------------------------------------ many calibrations at once (issue 17)


def test_calibrate_many_equals_one_at_a_time():
    """The lockstep search returns each problem's scalar result, errors included.

    Each problem takes the steps of its own scalar search, so the guarantees
    agree to the last bits of scipy.special on arrays (1e-12 relative allows
    for a BLAS that sums the quadrature in another order; here they are equal).
    """
    from lib.mechanisms.gohari import EPSILON_HAT_MAX
    from lib.mechanisms.gohari.batch import gohari_calibrate_many

    problems = [(eps, d) for eps in (0.004, 0.3, 4.0) for d in (2, 3, 6, 24)]
    problems += [(2 * EPSILON_HAT_MAX, 6), (1e-300, 2)]  # invalid target; r below 1e-300
    got = gohari_calibrate_many([e for e, _ in problems], 1e-6, lam=5.0, n_total=1283,
                                d=[d for _, d in problems])
    for (eps, d), g in zip(problems, got):
        try:
            want = gohari_calibrate(eps, 1e-6, lam=5.0, n_total=1283, d=d)
        except ValueError as exc:
            assert isinstance(g, ValueError) and str(g) == str(exc)
            continue
        assert isinstance(g, GohariGuarantee) and g.epsilon_hat <= eps
        np.testing.assert_allclose(tuple(g), tuple(want), rtol=1e-12)
    assert sum(isinstance(g, ValueError) for g in got) == 2


def _lentz_lower_tail(x, a, b):
    """I_x(a, b) by the modified Lentz evaluation of its continued fraction (the reference's former code)."""
    mp = mpmath
    if x > (a + 1) / (a + b + 2):
        return 1 - _lentz_lower_tail(1 - x, b, a)
    log_pre = a * mp.log(x) + b * mp.log1p(-x) - mp.log(a) - (mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b))
    eps, tiny = mp.mpf(10) ** (-mp.mp.dps - 5), mp.mpf(10) ** (-10 * mp.mp.dps)
    c = mp.mpf(1)
    dd = 1 - (a + b) * x / (a + 1)
    dd = 1 / (dd if abs(dd) > tiny else tiny)
    f, m = dd, 0
    while True:
        m += 1
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            dd = 1 + num * dd
            dd = 1 / (dd if abs(dd) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            step = c * dd
            f *= step
        if abs(step - 1) < eps:
            return mp.exp(log_pre) * f


def test_reference_incomplete_beta_equals_the_continued_fraction():
    """The reference's I_x(a, b) (mpmath.betainc, reflected above the mean) equals the continued fraction
    evaluated at 70 digits to 45 significant digits at the working precision of 50, on the chapter's
    kinds of arguments: small and large parameters, both sides of the mean, tails down to 1e-200."""
    from lib.mechanisms.gohari.reference import _mp_lower_tail

    rng = np.random.default_rng(6)
    cases = [(4.88, 162.0, 0.05), (51.6, 4.88, 0.051), (1.5, 20.5, 0.002), (0.3, 0.7, 0.9), (2.0, 3.0, 0.5)]
    cases += [(float(a), float(b), float(x)) for a, b, x in zip(10 ** rng.uniform(-0.5, 3, 12),
                                                              10 ** rng.uniform(-0.5, 3, 12), rng.uniform(0.001, 0.999, 12))]
    for a, b, x in cases:
        with mpmath.workdps(70):
            want = _lentz_lower_tail(mpmath.mpf(x), mpmath.mpf(a), mpmath.mpf(b))
        with mpmath.workdps(50):
            got = _mp_lower_tail(mpmath, mpmath.mpf(x), mpmath.mpf(a), mpmath.mpf(b))
        with mpmath.workdps(70):
            assert abs(got / want - 1) < mpmath.mpf(10) ** -45, (a, b, x)


LEAKS = ("did not converge", "NaN", "solver cannot continue", "nan")


def _clean(exc):
    message = str(exc)
    assert not any(leak in message for leak in LEAKS), message
    return message


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon_hat=1.0, n_total=1e300, d=5), r"n_total must be in \[1, 1e\+15\]"),
    (dict(epsilon_hat=1e100, n_total=1000, d=5), r"epsilon_hat must be in \(0, 10000\]"),
    (dict(epsilon_hat=1e-300, n_total=1000, d=5), r"no r in \[1e-300, 1e12\] meets"),
])
def test_gohari_calibrate_refuses_quickly_instead_of_hanging(kwargs, match):
    start = time.monotonic()
    with pytest.raises(ValueError, match=match):
        gohari.gohari_calibrate(delta=1e-5, lam=5, **kwargs)  # hung for minutes before the fix
    assert time.monotonic() - start < 5  # generous for a shared 2-core machine


@settings(max_examples=15, deadline=None)
@given(log_eps=st.floats(-3, 4), log_n=st.floats(0.5, 15), d=st.sampled_from([2, 5, 1000]),
       log_delta=st.floats(-100, -1))
def test_gohari_calibrate_over_its_range(log_eps, log_n, d, log_delta):
    start = time.monotonic()
    try:
        g = gohari.gohari_calibrate(10.0**log_eps, 10.0**log_delta, lam=5, n_total=10.0**log_n, d=d)
    except ValueError as exc:
        _clean(exc)
        return
    assert g.epsilon_hat <= 10.0**log_eps * (1 + 1e-12)
    assert time.monotonic() - start < 20


def test_gohari_epsilon_refuses_a_scale_beyond_its_range():
    with pytest.raises(ValueError, match=r"r must be in \(0, 1e\+12\]"):
        gohari.gohari_epsilon(1e100, 1e-5, lam=5, n_total=100, d=5)  # hung before the fix
