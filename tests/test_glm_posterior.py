"""Tests of lib.glm_posterior (Geumlek et al. 2017, Section 4) and lib.experiments.glm."""

import numpy as np
import pytest
from scipy import special

from lib import glm_posterior as gp


# ----------------------------------------------------------------------------- small problems


def _toy(n=30, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)  # ||x|| <= 1
    y = (rng.random(n) < special.expit(X @ np.resize([2.0, -1.0], d))).astype(int)
    return X, y


def _grid_posterior(X, y, beta, rho, radius=np.inf, half_width=6.0, m=401):
    """Posterior mean and covariance in d = 2 by quadrature on a fine grid around the mode."""
    w_hat, H = gp.mode(X, y, beta, rho)
    sd = np.sqrt(np.diag(np.linalg.inv(H[0])))
    axes = [np.linspace(w_hat[0, j] - half_width * sd[j], w_hat[0, j] + half_width * sd[j], m) for j in range(2)]
    W = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 2)
    logp = rho * gp.log_likelihood(W, X, y) - 0.5 * len(y) * beta * (W**2).sum(1)
    logp[(W**2).sum(1) > radius**2] = -np.inf
    p = np.exp(logp - logp.max())
    p /= p.sum()
    mean = p @ W
    cov = (W - mean).T @ ((W - mean) * p[:, None])
    return mean, cov


@pytest.mark.parametrize("beta, rho, radius, mala_steps, independence, n_sweeps", [
    (0.05, 1.0, np.inf, 0, True, 6),      # the posterior, independence MH only
    (0.05, 0.3, np.inf, 2, True, 6),      # a tempered posterior, both kernels
    (0.05, 1.0, "cut", 1, True, 6),       # truncated to a ball that cuts the posterior (OPS's support)
    (0.05, 1.0, np.inf, 1, False, 60),    # MALA alone from the mode (the chapter's reference kernel)
])
def test_sampler_matches_quadrature(beta, rho, radius, mala_steps, independence, n_sweeps):
    X, y = _toy()
    if radius == "cut":
        w_hat, _ = gp.mode(X, y, beta, rho)
        radius = 1.05 * np.linalg.norm(w_hat)
    mean, cov = _grid_posterior(X, y, beta, rho, radius)
    K = 4000
    s = gp.sample(X, y, gp.Settings(np.array([beta]), np.array([rho]), np.array([radius])), K, n_sweeps,
                  rng=7, mala_steps=mala_steps, independence=independence)
    W = s.w[0]
    assert np.all((W**2).sum(1) <= radius**2 + 1e-12)
    # Tolerance: 5 Monte Carlo standard errors of K (nearly independent) chains.
    se = np.sqrt(np.diag(cov) / K)
    assert np.all(np.abs(W.mean(0) - mean) < 5 * se), (W.mean(0), mean, se)
    # Variances: the standard error of a sample variance is about var * sqrt(2 / K).
    assert np.all(np.abs(W.var(0) / np.diag(cov) - 1) < 5 * np.sqrt(2 / K))
    assert max(s.acceptance_independence[0], s.acceptance_mala[0]) > 0.3


def test_mode_is_stationary_and_raises_without_convergence():
    X, y = _toy(n=50, d=3)
    w_hat, H = gp.mode(X, y, [0.01, 0.1], [1.0, 0.5])
    for s, (b, r) in enumerate([(0.01, 1.0), (0.1, 0.5)]):
        g = r * (X * (2 * y - 1)[:, None]).T @ special.expit(-(X * (2 * y - 1)[:, None]) @ w_hat[s]) - 50 * b * w_hat[s]
        assert np.abs(g).max() < 1e-8
        assert np.all(np.linalg.eigvalsh(H[s]) >= 50 * b - 1e-9)
    with pytest.raises(ValueError, match="max_iter"):
        gp.mode(X, y, 0.01, 1.0, max_iter=1)


def test_ess_of_independent_draws_and_of_a_sticky_chain():
    rng = np.random.default_rng(3)
    iid = rng.normal(size=(8, 500))
    ess = gp.effective_sample_size(iid)
    assert 0.7 * 4000 < ess < 1.3 * 4000  # tolerance: the estimator's spread at this length
    ar = np.zeros((8, 2000))
    for t in range(1, 2000):
        ar[:, t] = 0.9 * ar[:, t - 1] + rng.normal(size=8)
    # AR(1) with phi = 0.9: ESS = N (1 - phi) / (1 + phi) = N / 19.
    assert 0.6 < gp.effective_sample_size(ar) / (16000 / 19) < 1.4


# ----------------------------------------------------------------------------- privacy statements


def test_theorem16_against_quadrature_in_one_dimension():
    """Renyi divergence of two 1-d posteriors on neighbouring data, by quadrature, below the bound."""
    n, beta, c = 6, 0.2, 1.0
    rng = np.random.default_rng(0)
    w = np.linspace(-20, 20, 40001)  # the posteriors have sd < 1.3: the tails beyond 15 sd are negligible
    worst = 0.0
    for _ in range(20):
        x = rng.uniform(-c, c, n)
        y = rng.integers(0, 2, n)
        x2, y2 = x.copy(), y.copy()
        x2[0], y2[0] = rng.choice([-c, c]), 1 - y[0]
        lp = gp.log_likelihood(w[:, None], x[:, None], y) - 0.5 * n * beta * w**2
        lq = gp.log_likelihood(w[:, None], x2[:, None], y2) - 0.5 * n * beta * w**2
        lp -= special.logsumexp(lp)
        lq -= special.logsumexp(lq)
        for lam in (2.0, 5.0, 20.0):
            div = special.logsumexp(lam * lp + (1 - lam) * lq) / (lam - 1)
            worst = max(worst, div / gp.rdp_epsilon(lam, n, beta, c=c))
    assert 0 < worst <= 1.0


def test_ops_pure_dp_bound_by_brute_force():
    """The log density ratio of truncated tempered posteriors is below 2 c^2 rho / beta (and so below 4)."""
    n, beta, c, rho = 5, 0.5, 1.0, 0.7
    R = gp.ops_radius(beta, c)
    w = np.linspace(-R, R, 20001)
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(50):
        x = rng.uniform(-c, c, n)
        y = rng.integers(0, 2, n)
        x2, y2 = x.copy(), y.copy()
        x2[0], y2[0] = rng.uniform(-c, c), rng.integers(0, 2)
        lp = rho * gp.log_likelihood(w[:, None], x[:, None], y) - 0.5 * n * beta * w**2
        lq = rho * gp.log_likelihood(w[:, None], x2[:, None], y2) - 0.5 * n * beta * w**2
        ratio = (lp - special.logsumexp(lp)) - (lq - special.logsumexp(lq))
        worst = max(worst, np.abs(ratio).max())
    assert worst <= gp.ops_epsilon(beta, rho, c=c, factor=2.0) + 1e-9
    assert gp.ops_epsilon(beta, rho, c=c) == 2 * gp.ops_epsilon(beta, rho, c=c, factor=2.0)


def test_algorithms_meet_their_targets_and_depend_on_the_ratio_only():
    n, beta0 = 30000, 1e-3
    eps = np.exp(np.arange(-5, 4.0))
    for lam in (1.0, 10.0, 100.0):
        b4 = gp.concentrated_beta(eps, lam, n, beta0)
        r5 = gp.diffuse_rho(eps, lam, n, beta0)
        got4 = gp.rdp_epsilon(lam, n, b4)
        got5 = gp.rdp_epsilon(lam, n, beta0, rho=r5)
        assert np.all(got4 <= eps * (1 + 1e-12)) and np.all(got5 <= eps * (1 + 1e-12))
        tight = b4 > beta0
        np.testing.assert_allclose(got4[tight], eps[tight], rtol=1e-12)
        np.testing.assert_array_equal(tight, r5 < 1)
        np.testing.assert_allclose(got5[r5 < 1], eps[r5 < 1], rtol=1e-12)
        # Theorem 17: the whole curve is eps * lam' / lam.
        np.testing.assert_allclose(gp.rdp_epsilon(7.0, n, beta0, rho=r5[tight]), eps[tight] * 7.0 / lam, rtol=1e-12)
    for method in ("concentrated", "diffuse"):
        a = gp.settings(method, eps, 1.0, n)
        b = gp.settings(method, 10 * eps, 10.0, n)
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-12)
    ops = [gp.settings("ops", eps, lam, n) for lam in (1.0, 100.0)]
    np.testing.assert_array_equal(ops[0].rho, ops[1].rho)
    np.testing.assert_allclose(gp.ops_epsilon(ops[0].beta, ops[0].rho)[ops[0].rho < 1], eps[ops[0].rho < 1])


def test_rdp_slope_inverts_the_conversion_and_matches_a_brute_force_order_search():
    from lib.accounting import rdp_to_dp

    for eps_hat in (0.1, 1.0, 5.0):
        a = gp.rdp_slope_for_dp(eps_hat, 1e-5)
        lam = 1 + np.logspace(-4, 6, 200001)
        brute = rdp_to_dp(a * lam, lam, 1e-5).min()
        assert abs(brute - eps_hat) < 1e-6 * max(1, eps_hat)
    assert gp.dp_of_rdp_slope(0.01, 1e-5) < gp.dp_of_rdp_slope(0.02, 1e-5)


@pytest.mark.parametrize("call", [
    lambda: gp.rdp_epsilon(0.5, 10, 0.1),
    lambda: gp.rdp_epsilon(2.0, 10, 0.1, rho=1.5),
    lambda: gp.concentrated_beta(-1.0, 2.0, 10),
    lambda: gp.diffuse_rho(1.0, 2.0, 0),
    lambda: gp.settings("gibbs", 1.0, 2.0, 10),
    lambda: gp.sample(np.ones((3, 2)), np.array([0, 1, 2]), gp.settings("posterior", 1.0, 1.0, 3), 2, 2),
    lambda: gp.sample(np.ones((3, 2)), np.array([0, 1, 1]), gp.settings("posterior", 1.0, 1.0, 3), 0, 2),
    lambda: gp.rdp_slope_for_dp(1.0, 1.5),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


def test_metrics():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    y = np.array([1, 0, 0])
    W = np.array([[1.0, -1.0], [-1.0, 1.0]])
    np.testing.assert_allclose(gp.error_rate(W, X, y), [0.0, 1.0])
    np.testing.assert_allclose(gp.cross_entropy(np.zeros((1, 2)), X, y), [np.log(2)])


# ----------------------------------------------------------------------------- data


@pytest.mark.needs_data
def test_design_matrices():
    from lib.experiments import glm as glm_data
    from lib.experiments.preprocessing import prepare

    a = glm_data.adult()
    split = prepare("Adult")
    np.testing.assert_array_equal(a.y_train, split.y_train)  # same rows, same labels as naive Bayes
    np.testing.assert_array_equal(a.y_test, split.y_test)
    for X in (a.X_train, a.X_test):
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert a.X_train.shape[1] == len(a.columns)
    d = glm_data.digits()
    assert set(np.unique(d.y_train)) == {0, 1}
    np.testing.assert_allclose(np.linalg.norm(d.X_test, axis=1), 1.0)
    assert d.X_train.shape[1] == 64
    assert abs(len(d.y_test) / (len(d.y_test) + len(d.y_train)) - 1 / 3) < 0.01
    np.testing.assert_allclose(glm_data.scale([-5.0, 5.0, 20.0], 0.0, 10.0), [-0.5, 0.0, 0.5])
    with pytest.raises(ValueError):
        glm_data.normalise_rows(np.zeros((1, 2)))
