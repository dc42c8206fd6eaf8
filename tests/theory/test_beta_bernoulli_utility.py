"""Tests of lib.theory.beta_bernoulli_utility (Figure 2 of Geumlek et al.) against quadrature and closed forms."""

import numpy as np
import pytest
from scipy import integrate, special, stats

from lib.mechanisms.posterior_sampling import worst_case
from lib.theory.beta_bernoulli_utility import MECHANISMS, figure2_heldout, figure2_kl

PRIOR, N, K = np.array([6.0, 12.0]), 100, 38


def _kl_quad(p, q):
    """KL(Beta(p) || Beta(q)) by adaptive quadrature of p log(p / q)."""
    f = lambda t: stats.beta.pdf(t, *p) * (stats.beta.logpdf(t, *p) - stats.beta.logpdf(t, *q))  # noqa: E731
    return integrate.quad(f, 0, 1, epsabs=0, epsrel=1e-10, limit=200)[0]


def test_figure2_kl_columns_against_quadrature():
    log_eps = np.array([-3.0, 0.5])
    frame = figure2_kl(PRIOR, K, N, log_eps, 15.0)
    assert list(frame.columns[:3]) == ["log_eps", "r", "m"] and set(MECHANISMS) <= set(frame.columns)
    post = PRIOR + [K, N - K]
    for i, row in frame.iterrows():
        eps = np.exp(log_eps[i])
        # the calibrations meet their targets by the exact worst case
        assert worst_case(PRIOR, row.r, 15.0, N) <= eps * (1 + 1e-12)
        assert worst_case(PRIOR, row.m, 15.0, N, kind="concentrated") <= eps * (1 + 1e-12)
        assert np.isclose(row[MECHANISMS[0]], _kl_quad(post, PRIOR + row.r * np.array([K, N - K])), rtol=1e-7)
        assert np.isclose(row[MECHANISMS[1]], _kl_quad(post, PRIOR / row.m + [K, N - K]), rtol=1e-7)
        assert 0 < row.gauss_atoms < 1 and row[MECHANISMS[2]] > 0


def test_figure2_kl_gaussian_against_monte_carlo():
    # The Gaussian baseline's law is a mixture over the clamped noisy count: KL(P || A) by Monte Carlo
    # over theta ~ P, with A's density averaged over noise draws (independent of the library's rules).
    frame = figure2_kl(PRIOR, K, N, np.array([0.0]), 2.0)
    sigma = np.sqrt(2.0 / (2 * 1.0))  # Mironov: sigma = sqrt(lam / (2 eps)) at eps = 1
    rng = np.random.default_rng(0)
    post = PRIOR + [K, N - K]
    theta = rng.beta(*post, size=4000)
    s = np.clip(K + sigma * rng.standard_normal(4000), 0, N)
    dens_a = stats.beta.pdf(theta[:, None], PRIOR[0] + s[None, :], PRIOR[1] + N - s[None, :]).mean(axis=1)
    mc = stats.beta.logpdf(theta, *post) - np.log(dens_a)
    assert abs(frame[MECHANISMS[2]].iloc[0] - mc.mean()) < 5 * mc.std() / np.sqrt(mc.size) + 1e-3


def _closed_sequence_mean(params, n):
    """E over the training counts of E[-k_H log theta - (n - k_H) log(1 - theta)], theta ~ Beta(params(k)).

    With k_H ~ Bin(n, 1/2) independent of theta: (n / 2) (E[-log theta] + E[-log(1 - theta)]),
    E[log theta] = psi(a) - psi(a + b); averaged over k ~ Bin(n, 1/2)."""
    k = np.arange(n + 1)
    a, b = params(k)
    inner = n / 2 * (2 * special.digamma(a + b) - special.digamma(a) - special.digamma(b))
    return float(np.sum(stats.binom.pmf(k, n, 0.5) * inner))


def test_figure2_heldout_means_against_closed_form():
    runs = 20_000
    ll = figure2_heldout(PRIOR, N, np.array([-2.0, 2.0]), [2.0], runs, rng=7)[2.0]
    assert set(ll.mechanism) == {*MECHANISMS, "True Post."}
    true = ll[ll.mechanism == "True Post."]
    want = _closed_sequence_mean(lambda k: (PRIOR[0] + k, PRIOR[1] + N - k), N)
    for _, row in true.iterrows():
        assert abs(row["mean"] - want) < 5 * row.se
    # at log eps = 2 and lambda = 2 the diffused posterior samples the true one (r = 1)
    row = ll[(ll.mechanism == MECHANISMS[0]) & (ll.log_eps == 2.0)].iloc[0]
    assert abs(row["mean"] - want) < 5 * row.se
    # the count reading subtracts log C(n, k_H): about 0.5 log(pi n / 2) + ... below the sequence reading
    assert np.all(ll["mean_count"] < ll["mean"] - 60)


def test_figure2_heldout_is_reproducible_and_checks_arguments():
    a = figure2_heldout(PRIOR, 20, np.array([0.0]), [2.0, 15.0], 50, rng=1)
    b = figure2_heldout(PRIOR, 20, np.array([0.0]), [2.0, 15.0], 50, rng=1)
    assert list(a) == [2.0, 15.0] and all(a[k].equals(b[k]) for k in a)
    with pytest.raises(ValueError, match="runs"):
        figure2_heldout(PRIOR, 20, np.array([0.0]), [2.0], 1, rng=1)
    with pytest.raises(ValueError, match="prior"):
        figure2_kl([1.0, 2.0, 3.0], 3, 10, np.array([0.0]), 2.0)
    with pytest.raises(ValueError, match="successes"):
        figure2_kl(PRIOR, 11, 10, np.array([0.0]), 2.0)
