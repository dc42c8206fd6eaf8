"""Moments of the mechanism's output: eq. (3) and the variance of Section 2.2."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lib.mechanisms.dirichlet.moments import output_bias, output_mean, output_raw_moment, output_variance
from lib.mechanisms.dirichlet.moments import expected_kl_loss
from tests._reference import refused_quickly as _quick

HISTOGRAMS = [
    np.array([119.0, 74, 618, 272, 13, 187]),
    np.array([11.0, 8, 65, 25, 38, 1]),
    np.array([0.0, 5.0]),
    np.array([1e6, 1.0, 0.0]),
]
SCALES = [(1e-3, 1.0), (0.7, 1.0), (2.0, 5.0), (50.0, 1e-2), (1e4, 4e4)]


def _mp_beta_moment(a, b, k):
    """E[Y^k] for Y ~ Beta(a, b) as B(a + k, b) / B(a, b), at 50 digits."""
    with mp.workdps(50):
        a, b = mp.mpf(float(a)), mp.mpf(float(b))
        return float(mp.beta(a + k, b) / mp.beta(a, b))


def _mp_mean_variance(counts, r, alpha):
    """Dirichlet mean and variance at 50 digits, from the Beta marginals."""
    with mp.workdps(50):
        a = [mp.mpf(r) * mp.mpf(float(f)) + mp.mpf(alpha) for f in counts]
        total = mp.fsum(a)
        mean = [ai / total for ai in a]
        var = [ai * (total - ai) / (total**2 * (total + 1)) for ai in a]
        return np.array([float(m) for m in mean]), np.array([float(v) for v in var])


@pytest.mark.parametrize("r, alpha", SCALES)
@pytest.mark.parametrize("counts", HISTOGRAMS[:3])
def test_mean_and_variance_match_scipy(counts, r, alpha):
    a = r * counts + alpha
    np.testing.assert_allclose(output_mean(counts, r, alpha), stats.dirichlet.mean(a), rtol=1e-13)
    np.testing.assert_allclose(output_variance(counts, r, alpha), stats.dirichlet.var(a), rtol=1e-12)


@pytest.mark.parametrize("r, alpha", SCALES)
@pytest.mark.parametrize("counts", HISTOGRAMS)
def test_mean_and_variance_match_mpmath(counts, r, alpha):
    # Includes the histogram (1e6, 1, 0), where scipy's dirichlet.var forms
    # a_0 - a_i by subtraction and keeps only three or four digits of the small
    # coordinates' variance; the closed form writes a_0 - a_i out.
    mean, var = _mp_mean_variance(counts, r, alpha)
    np.testing.assert_allclose(output_mean(counts, r, alpha), mean, rtol=1e-14)
    np.testing.assert_allclose(output_variance(counts, r, alpha), var, rtol=1e-13)


@pytest.mark.parametrize("r, alpha", SCALES)
@pytest.mark.parametrize("counts", HISTOGRAMS)
def test_bias_is_mean_minus_empirical(counts, r, alpha):
    bias = output_bias(counts, r, alpha)
    mean = output_mean(counts, r, alpha)
    np.testing.assert_allclose(bias, mean - counts / counts.sum(), rtol=1e-9, atol=1e-15)
    assert abs(bias.sum()) < 1e-15 * counts.size


def test_bias_against_mpmath_in_a_cancelling_regime():
    # r N_f much larger than d alpha: mean and empirical agree to many digits, so
    # subtracting them would lose most of the bias; the closed form keeps it.
    counts, r, alpha = np.array([3.0, 1e7, 2.0]), 1e3, 1e-3
    bias = output_bias(counts, r, alpha)
    with mp.workdps(50):
        n_f, d = mp.fsum(counts), 3
        exact = [(r * mp.mpf(f) + alpha) / (r * n_f + d * alpha) - mp.mpf(f) / n_f for f in counts]
    np.testing.assert_allclose(bias, [float(e) for e in exact], rtol=1e-13)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 7])
def test_raw_moments_match_beta_marginals(k):
    counts, r, alpha = np.array([4.0, 0.0, 9.0, 2.0]), 1.3, 0.6
    a = r * counts + alpha
    expected = [_mp_beta_moment(ai, a.sum() - ai, k) for ai in a]
    np.testing.assert_allclose(output_raw_moment(counts, r, alpha, k), expected, rtol=1e-13)
    if k <= 4:  # scipy's generic moments lose digits at higher orders
        scipy_moments = [stats.beta.moment(k, ai, a.sum() - ai) for ai in a]
        np.testing.assert_allclose(output_raw_moment(counts, r, alpha, k), scipy_moments, rtol=1e-10)


def test_raw_moments_give_mean_and_variance():
    counts, r, alpha = np.array([5.0, 1.0, 30.0]), 0.4, 2.5
    m1 = output_raw_moment(counts, r, alpha, 1)
    m2 = output_raw_moment(counts, r, alpha, 2)
    np.testing.assert_allclose(m1, output_mean(counts, r, alpha), rtol=1e-15)
    np.testing.assert_allclose(m2 - m1**2, output_variance(counts, r, alpha), rtol=1e-12)


def test_mean_is_shrinkage_towards_uniform():
    counts, r, alpha = np.array([7.0, 0.0, 2.0, 11.0]), 0.3, 1.9
    n_f, d = counts.sum(), counts.size
    w = r * n_f / (r * n_f + d * alpha)
    np.testing.assert_allclose(output_mean(counts, r, alpha), w * counts / n_f + (1 - w) / d, rtol=1e-14)


def test_broadcasting_over_histograms_and_scales():
    counts = np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 4.0]])
    r = np.array([[0.5], [2.0], [9.0]])  # shape (3, 1) against the batch axis (2,)
    alpha = 1.5
    out = output_variance(counts, r, alpha)
    assert out.shape == (3, 2, 3)
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(out[i, j], stats.dirichlet.var(r[i, 0] * counts[j] + alpha), rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(0, 10**6), min_size=2, max_size=8).filter(lambda c: sum(c) > 0),
    log_r=st.floats(-6, 6),
    log_alpha=st.floats(-6, 6),
)
def test_properties_for_all_inputs(counts, log_r, log_alpha):
    counts, r, alpha = np.array(counts, float), 10.0**log_r, 10.0**log_alpha
    mean, var = output_mean(counts, r, alpha), output_variance(counts, r, alpha)
    bias = output_bias(counts, r, alpha)
    assert np.all(mean > 0) and abs(mean.sum() - 1) < 1e-12
    assert np.all(var > 0) and np.all(var <= mean * (1 - mean))
    # The sign of the bias is that of 1/d - f_i / N_f: towards uniform.
    direction = np.sign(counts.sum() - counts.size * counts)
    assert np.all(np.sign(bias) == direction)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(counts=[1.0, -2.0], r=1.0, alpha=1.0), "counts must be in"),
        (dict(counts=[1.0, np.nan], r=1.0, alpha=1.0), "counts must be finite"),
        (dict(counts=[3.0], r=1.0, alpha=1.0), "at least two entries"),
        (dict(counts=[1.0, 2.0], r=0.0, alpha=1.0), "r must be in"),
        (dict(counts=[1.0, 2.0], r=-1.0, alpha=1.0), "r must be in"),
        (dict(counts=[1.0, 2.0], r=1.0, alpha=0.0), "alpha must be in"),
        (dict(counts=[1.0, 2.0], r=np.inf, alpha=1.0), "r must be finite"),
        (dict(counts=[1.0, 2.0], r="a", alpha=1.0), "r must be a real number"),
        (dict(counts=[[1.0, 2.0]] * 3, r=[1.0, 2.0], alpha=1.0), "must broadcast"),
    ],
)
@pytest.mark.parametrize("function", [output_mean, output_bias, output_variance])
def test_bad_input_raises(function, kwargs, message):
    with pytest.raises(ValueError, match=message):
        function(**kwargs)


def test_bias_needs_a_positive_total():
    with pytest.raises(ValueError, match="positive total N_f"):
        output_bias([0.0, 0.0, 0.0], 1.0, 1.0)
    # The mean and variance are defined without it.
    np.testing.assert_allclose(output_mean([0.0, 0.0], 1.0, 1.0), [0.5, 0.5])


@pytest.mark.parametrize("k", [-1, 1.5, True, "2", None])
def test_raw_moment_rejects_bad_orders(k):
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        output_raw_moment([1.0, 2.0], 1.0, 1.0, k)



def test_raw_moment_refuses_huge_orders():
    _quick(lambda: output_raw_moment([1.0, 2.0], 1.0, 1.0, 10**10), "at most 10000")


def test_expected_kl_of_rows_with_repeated_counts_equals_expected_kl_loss():
    """moments.expected_kl_rows (digamma once per distinct count) equals expected_kl_loss value by value, and
    the order searches that use it (_summed_kl, _summed_kl_distinct) equal the plain sum of expected_kl_loss."""
    from lib.mechanisms.dirichlet import approximate_dp as adp
    from lib.mechanisms.dirichlet.moments import expected_kl_rows

    rng = np.random.default_rng(40)
    rows = rng.choice([0.0, 1.0, 3.0, 17.0, 250.0, 4096.0], size=(60, 7))
    rows[:, 0] += 1.0  # positive totals
    r = np.exp(rng.uniform(-8, 0, (3, 5, 1)))
    alpha = 1.0 + rng.exponential(3.0, (3, 5, 1))
    want = expected_kl_loss(rows, r, alpha)
    np.testing.assert_array_equal(expected_kl_rows(rows, r, alpha), want)
    np.testing.assert_array_equal(expected_kl_rows(rows, np.float64(0.3)[None], np.float64(2.0)[None]),
                                  expected_kl_loss(rows, 0.3, 2.0))
    groups = adp._rows([rows, rows[:9, :3]])
    plain = sum(expected_kl_loss(g, r, alpha).sum(axis=-1) for g in groups)
    np.testing.assert_array_equal(adp._summed_kl(groups, r[..., 0], alpha[..., 0]), 0.0 + plain)
    distinct = adp._distinct(groups)
    plain_distinct = sum(np.take(expected_kl_loss(dd, r, alpha), inv, axis=-1).sum(axis=-1) for dd, inv in distinct)
    np.testing.assert_array_equal(adp._summed_kl_distinct(distinct, r[..., 0], alpha[..., 0]), 0.0 + plain_distinct)
