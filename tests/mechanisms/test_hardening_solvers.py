"""Issue 11, class 3: every iterative solver terminates, and refuses with a ValueError that
names the argument and the working range (never a RuntimeError, a NaN from brentq or a hang).
"""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import calibrate, dp_to_rdp, fixed_order, min_order, optimal_order
from lib.mechanisms.noise import calibration as noise_calibration
from lib.mechanisms import gohari

LEAKS = ("did not converge", "NaN", "solver cannot continue", "nan")


def _clean(exc):
    message = str(exc)
    assert not any(leak in message for leak in LEAKS), message
    return message


@settings(max_examples=80, deadline=None)
@given(log_eps=st.floats(-300, 300), delta=st.one_of(st.floats(1e-300, 0.5), st.floats(0.5, 1 - 1e-16)))
def test_min_order_returns_a_feasibility_boundary_for_every_target(log_eps, delta):
    eps_hat = 10.0**log_eps
    lam0 = min_order(eps_hat, delta)  # NaN in brentq before the fix (eps_hat large, delta near 1)
    assert np.isfinite(lam0) and lam0 > 1
    above = lam0 + max(1e-6 * (lam0 - 1), 4 * np.spacing(lam0))
    if above < 1 / delta:  # dp_to_rdp rises up to 1/delta: just above lam0 the target is feasible
        assert dp_to_rdp(eps_hat, above, delta) > -1e-9 * eps_hat


@settings(max_examples=60, deadline=None)
@given(log_eps=st.floats(-300, 300), log_delta=st.floats(-300, -1e-3), n=st.integers(1, 100))
def test_fixed_order_returns_a_valid_choice_or_names_the_range(log_eps, log_delta, n):
    try:
        choice = fixed_order(10.0**log_eps, 10.0**log_delta, n_releases=n)
    except ValueError as exc:
        assert "epsilon_hat" in _clean(exc)
        return
    assert choice.lam > 1 and np.isfinite(choice.r) and choice.r > 0


@pytest.mark.parametrize("eps_hat, delta", [(1e300, 1e-5), (1e-300, 1e-5), (1e3, 1 - 1e-16), (1.0, 1e-300)])
def test_optimal_order_at_extreme_targets(eps_hat, delta):
    try:
        choice = optimal_order(eps_hat, delta, [10, 20, 30], grid_size=16)
    except ValueError as exc:
        assert "epsilon_hat" in _clean(exc) or "lam_max" in str(exc)
        return
    assert choice.lam > 1 and np.isfinite(choice.expected_kl)


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


def test_batched_calibrate_names_the_bad_element_and_the_range():
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\); got -1 at index 2"):
        calibrate([1.0, 2.0, -1.0], 2.0)
    with pytest.raises(ValueError, match=r"lam must be finite \(got NaN or infinity: nan at index 1\)"):
        calibrate(1.0, [2.0, np.nan])
    with pytest.raises(ValueError, match="epsilon = 1e\\+300.*beyond double precision"):
        calibrate([1.0, 1e300], 2.0)


def test_line1_non_convergence_is_a_value_error():
    # the case that ran out of Newton steps (the stopping rule was below one ulp of log r)
    r, alpha = calibrate(5.47931925e-143, 9.8494608e141, 2.0)  # K = lam, c = 3 (lam - 1)
    assert np.isfinite(r) and r > 0


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
