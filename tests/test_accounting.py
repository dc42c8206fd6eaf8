"""Appendix B: the RDP to approximate-DP conversion, eq. (13)-(14)."""

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from lib import calibrate, rdp_epsilon, rdp_to_dp


def _grid():
    rng = np.random.default_rng(20230214)
    eps = np.exp(rng.uniform(np.log(1e-3), np.log(100), 400))
    lam = np.exp(rng.uniform(np.log(1.02), np.log(1e3), 400))
    delta = np.exp(rng.uniform(np.log(1e-12), np.log(0.1), 400))
    return zip(eps, lam, delta)


def test_matches_dp_accounting_single_order():
    compared = 0
    for eps, lam, delta in _grid():
        expected, order = rdp_privacy_accountant.compute_epsilon([lam], [eps], delta)
        # dp-accounting answers 0 from a KL shortcut when delta^2 > 1 - exp(-eps);
        # eq. (14) is the comparison only outside that shortcut.
        if delta**2 + math.expm1(-eps) > 0 or expected == 0:
            continue
        assert order == lam
        assert rdp_to_dp(eps, lam, delta) == pytest.approx(expected, rel=1e-12)
        compared += 1
    assert compared > 300


def test_eq_13_holds_at_the_returned_epsilon_hat():
    eps, lam, delta = 0.7, 12.0, 1e-5
    eps_hat = rdp_to_dp(eps, lam, delta)
    recovered = math.exp((lam - 1) * (eps - eps_hat)) / (lam - 1) * (1 - 1 / lam) ** lam
    assert recovered == pytest.approx(delta, rel=1e-12)


def test_eq_14_with_algorithm_1():
    # eq. (14): eps_hat = rdp_epsilon(r) + log(lam - 1) - (log delta + lam log lam)/(lam - 1).
    lam, delta = 10.0, 1e-5
    r = calibrate(2.0, lam).r
    literal = rdp_epsilon(r, lam) + math.log(lam - 1) - (math.log(delta) + lam * math.log(lam)) / (lam - 1)
    assert rdp_to_dp(rdp_epsilon(r, lam), lam, delta) == pytest.approx(literal, rel=1e-12)


def test_broadcasts_and_clips_at_zero():
    out = rdp_to_dp(np.array([1e-3, 1.0]), np.array([[2.0], [50.0]]), 0.5)
    assert out.shape == (2, 2)
    # A negative value of eq. (14) means (0, delta)-DP.
    assert rdp_to_dp(1e-3, 2.0, 0.5) == 0.0


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0, 2.0, 1e-5), r"epsilon must be in \(0, inf\)"),
        ((np.inf, 2.0, 1e-5), "epsilon must be finite"),
        ((1.0, 1.0, 1e-5), r"lam must be in \(1, inf\)"),
        ((1.0, np.nan, 1e-5), "lam must be finite"),
        ((1.0, 2.0, 0.0), r"delta must be in \(0, 1\)"),
        ((1.0, 2.0, 1.0), r"delta must be in \(0, 1\)"),
        (([1.0, 2.0], [2.0, 3.0, 4.0], 1e-5), "broadcast"),
    ],
)
def test_bad_input_raises(args, match):
    with pytest.raises(ValueError, match=match):
        rdp_to_dp(*args)
