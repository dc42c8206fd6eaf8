"""Section 2.3: the trigamma function, its series (eq. 5) and bounds (eq. 6)."""

import numpy as np
import pytest
from scipy import special

import mpmath as mp

from lib import log_multivariate_beta, tetragamma, trigamma, trigamma_bounds, trigamma_series
from tests._reference import refused_quickly as _quick

GRID = np.logspace(-3, 4, 400)


def test_trigamma_matches_scipy_and_known_values():
    assert trigamma(1.0) == pytest.approx(np.pi**2 / 6, rel=1e-15)
    assert trigamma(0.5) == pytest.approx(np.pi**2 / 2, rel=1e-15)
    np.testing.assert_allclose(trigamma(GRID), special.polygamma(1, GRID), rtol=1e-15)


def test_trigamma_and_tetragamma_against_mpmath():
    # Around the switch to the asymptotic tail (12) and far on both sides.
    x = np.concatenate([np.logspace(-3, 8, 120), [1.0, 1.5, 11.999, 12.0, 12.001, 13.0]])
    with mp.workdps(30):
        psi1 = np.array([float(mp.psi(1, mp.mpf(v))) for v in x])
        psi2 = np.array([float(mp.psi(2, mp.mpf(v))) for v in x])
    np.testing.assert_allclose(trigamma(x), psi1, rtol=1e-15)
    np.testing.assert_allclose(tetragamma(x), psi2, rtol=1e-15)


def test_partial_sums_leave_a_tail_between_the_integral_bounds():
    # sum_{k >= n} (x + k)^-2 = psi'(x + n) lies in (1/(x+n), 1/(x+n) + 1/(x+n)^2).
    x = np.array([0.01, 0.5, 1.0, 3.0, 40.0])
    for n in (1, 10, 1000):
        tail = special.polygamma(1, x) - trigamma_series(x, n)
        y = x + n
        assert np.all(tail > 1 / y * (1 - 1e-9)) and np.all(tail < (1 / y + 1 / y**2) * (1 + 1e-9))


def test_series_with_euler_maclaurin_tail_is_accurate_to_rounding():
    # With 10 terms the omitted Bernoulli term is B_12/(x+10)^13 < 1e-14 relative.
    approx = trigamma_series(GRID, 10, tail=True)
    np.testing.assert_allclose(approx, special.polygamma(1, GRID), rtol=5e-15)


def test_reciprocal_bounds_of_eq_6_are_strict():
    lower, upper = trigamma_bounds(GRID)
    value = trigamma(GRID)
    assert np.all(lower < value) and np.all(value < upper)


def test_log_multivariate_beta_against_beta_function():
    a, b = np.array([0.3, 2.0, 50.0]), np.array([4.0, 0.7, 1e3])
    np.testing.assert_allclose(log_multivariate_beta(np.stack([a, b], axis=-1)), special.betaln(a, b), rtol=1e-13)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: trigamma(0.0), r"x must be in \(0, inf\)"),
        (lambda: trigamma(np.nan), "x must be finite"),
        (lambda: tetragamma(-1.0), r"x must be in \(0, inf\)"),
        (lambda: trigamma_series(1.0, True), r"n_terms must be an integer"),
        (lambda: trigamma_series(1.0, 0), r"n_terms must be an integer in \[1, inf\)"),
        (lambda: trigamma_series(-1.0, 3), r"x must be in \(0, inf\)"),
        (lambda: trigamma_bounds(-2.0), r"x must be in \(0, inf\)"),
        (lambda: log_multivariate_beta([1.0]), "at least two entries"),
        (lambda: log_multivariate_beta([1.0, 0.0]), r"u must be in \(0, inf\)"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()



def test_trigamma_series_refuses_huge_term_counts():
    _quick(lambda: trigamma_series(1.0, 10**12), "n_terms = 1000000000000")
    assert trigamma_series(1.0, 10, tail=True) == pytest.approx(np.pi**2 / 6, rel=1e-14)
