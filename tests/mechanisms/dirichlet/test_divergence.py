"""Appendix E: the exact Renyi divergence between Dirichlet distributions, eq. (16)-(17)."""

import numpy as np
import pytest
from scipy import integrate
import mpmath as mp

from lib import DirichletMechanism, kl_divergence, log_multivariate_beta, renyi_divergence_dirichlet

from tests._reference import mp_renyi_dirichlet


def _by_quadrature(u, v, lam):
    """D_lam by numerical integration of p^lam q^(1-lam) (or p log p/q) over the simplex."""
    u, v = np.asarray(u, float), np.asarray(v, float)
    log_bu, log_bv = log_multivariate_beta(u), log_multivariate_beta(v)

    def integrand(*y):
        log_y = np.log([*y, 1 - sum(y)])
        lp, lq = (u - 1) @ log_y - log_bu, (v - 1) @ log_y - log_bv
        if lam == 1:
            return np.exp(lp) * (lp - lq)
        return np.exp(lam * lp + (1 - lam) * lq)

    opts = dict(epsabs=0, epsrel=1e-11)
    if len(u) == 2:
        value = integrate.quad(lambda y: integrand(y), 0, 1, limit=200, **opts)[0]
    else:
        value = integrate.dblquad(lambda y2, y1: integrand(y1, y2), 0, 1, 0, lambda y1: 1 - y1, **opts)[0]
    return value if lam == 1 else np.log(value) / (lam - 1)


CASES_D2 = [([2.5, 4.0], [3.0, 3.2]), ([1.0, 1.3], [1.3, 1.0]), ([7.0, 2.0], [6.5, 2.4])]
CASES_D3 = [([2.0, 3.0, 4.0], [2.0, 2.0, 5.0]), ([1.2, 1.5, 3.0], [1.5, 1.2, 3.0])]


@pytest.mark.parametrize("lam", [1.0, 1.5, 2.0, 4.0])
@pytest.mark.parametrize("u, v", CASES_D2 + CASES_D3)
def test_matches_numerical_integration(u, v, lam):
    assert renyi_divergence_dirichlet(u, v, lam) == pytest.approx(_by_quadrature(u, v, lam), rel=1e-7)


def test_kl_is_the_limit_of_renyi_as_lam_tends_to_one():
    u, v = [2.0, 3.0, 4.0], [2.5, 2.0, 5.0]
    kl = renyi_divergence_dirichlet(u, v, 1.0)
    assert renyi_divergence_dirichlet(u, v, 1.0 + 1e-7) == pytest.approx(kl, rel=1e-6)
    assert renyi_divergence_dirichlet(u, v, 1.0 + 2.0**-52) == pytest.approx(kl, rel=1e-12)


def test_divergence_of_equal_parameters_is_zero_and_grows_with_lam():
    u = np.array([3.0, 0.5, 8.0])
    assert renyi_divergence_dirichlet(u, u, 3.0) == 0.0
    values = renyi_divergence_dirichlet(u, u + [1.0, 0.0, -1.0], np.array([1.0, 1.5, 2.0, 3.0]))
    assert np.all(np.diff(values) > 0)  # Renyi divergences are non-decreasing in the order


def test_infinite_where_the_integral_of_eq_16_diverges():
    # w = u + (lam - 1)(u - v) = 1 + 2 (1 - 2) = -1 <= 0 in the first coordinate.
    assert renyi_divergence_dirichlet([1.0, 2.0], [2.0, 1.0], 3.0) == np.inf
    assert np.isfinite(renyi_divergence_dirichlet([1.0, 2.0], [2.0, 1.0], 1.9))


@pytest.mark.parametrize("lam", [1.0, 1.0 + 2.0**-52, 1.0 + 1e-9, 1.01, 2.0, 20.0, 200.0])
@pytest.mark.parametrize(
    "counts, other",
    [([11, 8, 65, 25, 38, 1], [11, 7, 65, 25, 38, 0]), ([10**6, 3 * 10**6, 0], [10**6, 3 * 10**6 - 1, 1]),
     ([0, 0, 0, 5], [1, 0, 0, 5])],
)
def test_ten_digits_against_mpmath_for_mechanism_outputs(counts, other, lam):
    mech = DirichletMechanism(0.5, lam)
    u, v = mech.concentration(counts), mech.concentration(other)
    for a, b in ((u, v), (v, u)):
        assert renyi_divergence_dirichlet(a, b, lam) == pytest.approx(mp_renyi_dirichlet(a, b, lam), rel=1e-9)


def test_broadcasts_over_leading_axes():
    u = np.array([[2.0, 3.0, 4.0], [1.0, 1.0, 1.0]])
    out = renyi_divergence_dirichlet(u[:, None, :], [2.0, 2.0, 5.0], np.array([1.0, 2.0, 3.0]))
    assert out.shape == (2, 3)
    assert out[0, 1] == renyi_divergence_dirichlet(u[0], [2.0, 2.0, 5.0], 2.0)


@pytest.mark.parametrize(
    "args, match",
    [
        (([1.0, 2.0], [1.0, 2.0], 0.5), r"lam must be in \[1, inf\)"),
        (([1.0, 2.0], [1.0, 2.0], np.nan), "lam must be finite"),
        (([0.0, 2.0], [1.0, 2.0], 2.0), r"u must be in \(0, inf\)"),
        (([1.0, 2.0], [1.0, -2.0], 2.0), r"v must be in \(0, inf\)"),
        (([1.0, np.inf], [1.0, 2.0], 2.0), "u must be finite"),
        (([1.0], [1.0], 2.0), "at least two entries"),
        (([1.0, 2.0], [1.0, 2.0, 3.0], 2.0), "same length d"),
        (([[1.0, 2.0]] * 3, [[1.0, 2.0]] * 2, 2.0), "broadcast"),
        (([1.0, 2.0], [1.0, 2.0], [2.0, 3.0]), None),
    ],
)
def test_bad_input_raises(args, match):
    if match is None:  # a vector of orders against a single pair is fine
        assert renyi_divergence_dirichlet(*args).shape == (2,)
        return
    with pytest.raises(ValueError, match=match):
        renyi_divergence_dirichlet(*args)


def test_kl_divergence_of_categoricals():
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.1, 0.6, 0.3])
    assert kl_divergence(p, q) == pytest.approx(np.sum(p * np.log(p / q)), rel=1e-14)
    assert kl_divergence(p, p) == 0.0
    assert kl_divergence([0.0, 1.0], [0.5, 0.5]) == pytest.approx(np.log(2), rel=1e-15)  # 0 log 0 = 0
    assert kl_divergence([0.5, 0.5], [0.0, 1.0]) == np.inf
    assert kl_divergence(np.tile(p, (4, 1)), q).shape == (4,)


@pytest.mark.parametrize(
    "args, match",
    [
        (([0.5, 0.6], [0.5, 0.5]), "p must sum to 1"),
        (([0.5, 0.5], [-0.5, 1.5]), r"q must be in \[0, inf\)"),
        (([1.0], [1.0]), "at least two entries"),
        (([0.5, 0.5], [0.2, 0.3, 0.5]), "same length d"),
    ],
)
def test_kl_bad_input_raises(args, match):
    with pytest.raises(ValueError, match=match):
        kl_divergence(*args)


# --- Orders below one and the Hellinger distance (smoothed-Hellinger chapter) ---------------

from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet  # noqa: E402


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("u, v", CASES_D2 + CASES_D3)
def test_orders_below_one_match_numerical_integration(u, v, lam):
    assert renyi_divergence_dirichlet(u, v, lam, below_one=True) == pytest.approx(
        _by_quadrature(u, v, lam), rel=1e-7)


def test_orders_below_one_need_the_flag_and_stay_monotone():
    with pytest.raises(ValueError, match=r"lam must be in \[1, inf\)"):
        renyi_divergence_dirichlet([1.0, 2.0], [2.0, 1.0], 0.5)
    with pytest.raises(ValueError, match=r"lam must be in \(0, inf\)"):
        renyi_divergence_dirichlet([1.0, 2.0], [2.0, 1.0], 0.0, below_one=True)
    orders = np.array([0.2, 0.5, 0.8, 1.0, 1.5])
    values = renyi_divergence_dirichlet([2.0, 3.0, 4.0], [3.0, 2.0, 4.5], orders, below_one=True)
    assert np.all(np.diff(values) > 0)
    # (1 - lam) D_lam(P||Q) = lam D_{1-lam}(Q||P): the skew symmetry of orders below one.
    u, v = [2.0, 3.0, 4.0], [3.0, 2.0, 4.5]
    lhs = 0.7 * renyi_divergence_dirichlet(u, v, 0.3, below_one=True)
    rhs = 0.3 * renyi_divergence_dirichlet(v, u, 0.7, below_one=True)
    assert lhs == pytest.approx(rhs, rel=1e-12)


@pytest.mark.parametrize("n", [10, 10**3, 10**5, 10**6, 10**8])
@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.5, 0.5), (2.0, 8.0)])
def test_order_one_half_against_mpmath_for_posteriors_up_to_1e8(n, prior):
    # Neighbouring Beta posteriors (count a vs a + 1 of n): D_{1/2} ~ 1/n, the case in
    # which subtracting log-Gamma values would lose log10(n) digits.
    for a in {0, 1, n // 1000, 3 * n // 10, n // 2, n - 1}:
        u = [prior[0] + a, prior[1] + n - a]
        v = [prior[0] + a + 1, prior[1] + n - a - 1]
        ref = mp_renyi_dirichlet(u, v, 0.5, dps=80)
        assert renyi_divergence_dirichlet(u, v, 0.5, below_one=True) == pytest.approx(ref, rel=1e-11)
        h_ref = float(mp.sqrt(-mp.expm1(-mp.mpf(ref) / 2)))
        assert hellinger_dirichlet(u, v) == pytest.approx(h_ref, rel=1e-11)


def test_hellinger_matches_the_bhattacharyya_formula_of_the_note():
    # H = sqrt(1 - B((u+v)/2) / sqrt(B(u) B(v))), evaluated in mpmath.
    u, v = [2.0, 3.0, 4.0], [3.0, 2.5, 1.0]
    with mp.workdps(50):
        def log_b(a):
            return mp.fsum(mp.loggamma(x) for x in a) - mp.loggamma(mp.fsum(a))
        m = [(x + y) / 2 for x, y in zip(u, v)]
        ref = mp.sqrt(1 - mp.exp(log_b(m) - (log_b(u) + log_b(v)) / 2))
    assert hellinger_dirichlet(u, v) == pytest.approx(float(ref), rel=1e-12)
    assert hellinger_dirichlet(u, u) == 0.0
    assert hellinger_dirichlet(u, v) == hellinger_dirichlet(v, u)


@pytest.mark.parametrize("lam", [0.5, 1.0, 1.5, 3.0])
@pytest.mark.parametrize("tiny", [1e-160, 1e-200, 1e-300, 1e-320])
def test_parameters_below_1e150_give_no_nan(tiny, lam):
    # Former defect: 0 * inf in the Taylor branch returned NaN for parameters below ~1e-150.
    u, v = [tiny, 2.0], [tiny, 1.0]  # w = u + (lam - 1)(u - v) > 0: finite at every order
    value = renyi_divergence_dirichlet(u, v, lam, below_one=True)
    assert np.isfinite(value)
    # The exact value is below 1e-150 (mpmath); an absolute error of 1e-15 is rounding.
    assert abs(value - mp_renyi_dirichlet(u, v, lam, dps=400)) < 1e-15


@pytest.mark.parametrize("lam", [0.5, 1.0, 3.0])
def test_tiny_parameters_that_differ_are_accurate(lam):
    u, v = [1e-300, 1.0], [1e-300 * (1 + 1e-6), 1.0]
    ref = mp_renyi_dirichlet(u, v, lam, dps=400)  # about 1e-13
    assert renyi_divergence_dirichlet(u, v, lam, below_one=True) == pytest.approx(ref, rel=1e-8)
    big = renyi_divergence_dirichlet([1e-300, 1.0], [1.0, 1.0], 0.5, below_one=True)
    assert big == pytest.approx(mp_renyi_dirichlet([1e-300, 1.0], [1.0, 1.0], 0.5, dps=400), rel=1e-12)


def test_an_order_that_overflows_is_an_error_not_nan():
    """Issue 23: (lam - 1) delta overflowing gave inf - inf = NaN, which reads as 'no divergence'."""
    from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet

    with pytest.raises(ValueError, match="outside double precision"):
        renyi_divergence_dirichlet([2.0, 3.0], [1.5, 3.0], 1e307)
    assert np.isfinite(renyi_divergence_dirichlet([2.0, 3.0], [1.5, 3.0], 1e3))


def test_series_below_order_one_with_repeated_parameters_equals_the_elementwise_sum():
    """The Taylor branch of orders in (0, 1) evaluates polygamma once per distinct parameter and maps
    the values back; it equals the series summed element by element (the same float operations)."""
    from scipy import special

    from lib.mechanisms.dirichlet.divergence import _SERIES_TERMS, _excess_below_one

    rng = np.random.default_rng(7)
    a = np.repeat([3.5, 40.0, 1e4, 2.5e6], 6)[rng.permutation(24)]  # four values, six times each
    delta = rng.choice([-1.0, 1.0], a.size) * rng.uniform(1e-4, 1e-3, a.size) * a
    lam = rng.uniform(0.05, 0.95, a.size)
    got = _excess_below_one(a, delta, lam)
    for i in range(a.size):
        acc, factorial = 0.0, 1.0
        for k in range(2, _SERIES_TERMS + 2):
            factorial *= k
            acc += (special.polygamma(k - 1, a[i:i + 1]) * delta[i:i + 1] ** k / factorial
                    * ((-1.0) ** k + (lam[i:i + 1] - 1) ** (k - 1)))[0]
        assert got[i] == acc


# ------------------------------------------------------------------ posterior-sampling calibration (issue 30)


def test_fused_log_gamma_difference_equals_the_divergence_module():
    """Every regime of lib.mechanisms.dirichlet.divergence.lgamma_diff (zero, below 1e-100, Taylor, Stirling, plain), value by value."""
    from lib.mechanisms.dirichlet import divergence

    rng = np.random.default_rng(30)
    a = np.concatenate([10.0 ** rng.uniform(-120, 9, 4000), [1e-200, 1e-101, 7.9, 8.0, 8.1, 1.0, 1.0, 3.0]])
    h = np.concatenate([a[:1000] * 10.0 ** rng.uniform(-12, -4, 1000) * rng.choice([-0.5, 1.0], 1000),
                        rng.uniform(-0.9, 5.0, 3000) * np.minimum(a[1000:4000], 1.0) * 0.99,
                        [1.0, 0.5, 0.2, -0.05, 0.0, -0.5, 0.0, 2.0]])
    h[::50] = 0.0
    want = divergence.lgamma_diff(a, h)
    got = divergence.lgamma_diff_fused(a, h)
    np.testing.assert_array_equal(got, want)
    for regime in (h == 0, a < 1e-100, np.abs(h) <= 1e-5 * a, (a >= 8) & (a + h >= 8)):
        assert regime.sum() >= 8  # every branch is exercised


# ------------------------------------------------------------------ issue 30, second round: repeated arguments,
# batched posterior draws, calibrations cached across splits


def test_fused_log_gamma_difference_with_repeated_arguments():
    """The special functions of the Taylor regime are taken once per distinct argument: the same values as
    lib.mechanisms.dirichlet.divergence.lgamma_diff, entry by entry, with many repeats (as in the search)."""
    from lib.mechanisms.dirichlet import divergence

    rng = np.random.default_rng(31)
    base = 10.0 ** rng.uniform(0, 7, 40)
    a = np.tile(base, 25)[rng.permutation(1000)]  # 40 distinct values, each 25 times
    h = a * 10.0 ** rng.uniform(-12, -6, 1000) * rng.choice([-1.0, 1.0], 1000)  # all in the Taylor regime
    h[::7] = rng.uniform(-0.5, 3.0, h[::7].size)  # and some in the others
    assert (np.abs(h) <= divergence._TAYLOR_STEP * a).sum() > divergence._DISTINCT_FROM
    np.testing.assert_array_equal(divergence.lgamma_diff_fused(a, h), divergence.lgamma_diff(a, h))
    small = slice(0, divergence._DISTINCT_FROM - 1)  # below the threshold: no sorting, the same values
    np.testing.assert_array_equal(divergence.lgamma_diff_fused(a[small], h[small]), divergence.lgamma_diff(a[small], h[small]))
