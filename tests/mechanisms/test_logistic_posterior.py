"""Tests of lib.models.logistic_regression (Geumlek et al. 2017, Section 4) and lib.experiments.glm."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

from lib.models import logistic_regression as gp


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


def _ar1(phi, K, T, rng):
    """K stationary AR(1) chains x_t = phi x_{t-1} + e_t (started from the stationary law)."""
    x = np.empty((K, T))
    x[:, 0] = rng.normal(size=K) / np.sqrt(1 - phi**2)
    e = rng.normal(size=(K, T))
    for t in range(1, T):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


@pytest.mark.parametrize("estimator", [gp.effective_sample_size, gp.effective_sample_size_batch_means])
@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_ess_estimators_recover_the_known_ess_of_ar1_chains(estimator, phi):
    """ESS of an AR(1) chain of length N: N (1 - phi) / (1 + phi) (its integrated autocorrelation time).

    Over 20 independent chain sets the mean of the estimates must be within 15 % of the truth (both
    estimators are consistent; their bias at these lengths is a few per cent) and the single
    estimates within a factor 1.6 (the spread the chapter's factor-2 agreement check allows for).
    """
    rng = np.random.default_rng(11)
    K, T = 8, 4000
    truth = K * T * (1 - phi) / (1 + phi)
    est = np.array([float(estimator(_ar1(phi, K, T, rng))) for _ in range(20)]) / truth
    assert abs(est.mean() - 1) < 0.15, est.mean()
    assert 1 / 1.6 < est.min() and est.max() < 1.6, (est.min(), est.max())


def test_ess_estimators_see_a_sticky_chain_and_refuse_a_constant_one():
    rng = np.random.default_rng(3)
    sticky = _ar1(0.99, 4, 4000, rng)
    iid = rng.normal(size=(4, 4000))
    for estimator in (gp.effective_sample_size, gp.effective_sample_size_batch_means):
        assert estimator(sticky) < 0.05 * estimator(iid)
        with pytest.raises(ValueError, match="zero variance"):
            estimator(np.ones((2, 50)))
    with pytest.raises(ValueError, match="n_batches"):
        gp.effective_sample_size_batch_means(iid, n_batches=1)
    # several chain sets at once: one estimate each
    assert gp.effective_sample_size_batch_means(np.stack([iid, sticky])).shape == (2,)


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
    assert worst <= 2 * c**2 * rho / beta + 1e-9  # the span bound, typed here independently of ops_epsilon
    assert gp.ops_epsilon(beta, rho, c=c, factor=2.0) == pytest.approx(2 * c**2 * rho / beta, rel=1e-15)


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
    for method in (gp.ConcentratedLogistic, gp.DiffuseLogistic):
        a = gp.settings(method, eps, 1.0, n)
        b = gp.settings(method, 10 * eps, 10.0, n)
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-12)
    ops = [gp.OPSLogistic.settings(eps, lam, n) for lam in (1.0, 100.0)]
    np.testing.assert_array_equal(ops[0].rho, ops[1].rho)
    np.testing.assert_allclose(gp.ops_epsilon(ops[0].beta, ops[0].rho)[ops[0].rho < 1], eps[ops[0].rho < 1])


def test_rdp_slope_inverts_the_conversion_and_matches_a_brute_force_order_search():
    from lib.privacy.accounting import rdp_to_dp

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
    lambda: gp.sample(np.ones((3, 2)), np.array([0, 1, 2]), gp.LogisticPosterior.settings(1.0, 1.0, 3), 2, 2),
    lambda: gp.sample(np.ones((3, 2)), np.array([0, 1, 1]), gp.LogisticPosterior.settings(1.0, 1.0, 3), 0, 2),
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
    from lib.experiments.tasks import logistic_regression as glm_data
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


# ----------------------------------------------------------------------------- comparisons over splits


def _frame(means, n_rep=6, spread=0.01, splits=(1, 2, 3), seed=0):
    """A grid frame: method -> mean error per cell (one cell), n_rep releases per split."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in splits:
        for m, (mu, key) in means.items():
            for r in range(n_rep):
                rows.append((m, 1.0, 0.5, *key, r, mu + spread * rng.standard_normal(), k))
    return pd.DataFrame(rows, columns=["method", "lam", "epsilon", "beta", "rho", "radius", "repeat", "error", "split"])


def test_compare_matches_a_direct_pooled_z_and_classifies():
    from lib.experiments import verdicts

    f = _frame({"a": (0.20, (1e-3, 0.5, np.inf)), "b": (0.30, (1e-3, 0.1, np.inf)),
                "c": (0.2001, (1e-3, 0.9, np.inf)), "d": (0.0, (1e-3, 0.5, np.inf))})
    f.loc[f.method == "d", "error"] = f.loc[f.method == "a", "error"].to_numpy()  # shares a's draws
    c = verdicts.cells_over_splits(f, "a", "b")
    # the same statistic computed directly: mean over splits of the difference of means, pooled variance
    d, v = [], []
    for k in (1, 2, 3):
        xa = f[(f.method == "a") & (f.split == k)].error
        xb = f[(f.method == "b") & (f.split == k)].error
        d.append(xb.mean() - xa.mean())
        v.append(xa.var(ddof=1) / len(xa) + xb.var(ddof=1) / len(xb))
    z = np.mean(d) / (np.sqrt(np.sum(v)) / 3)
    assert c["z"].iloc[0] == pytest.approx(z, rel=1e-12)
    assert c["p"].iloc[0] == pytest.approx(2 * special.ndtr(-abs(z)), rel=1e-9)
    assert c["outcome"].iloc[0] == "win" and c["agree"].iloc[0] == 1.0
    assert verdicts.cells_over_splits(f, "b", "a")["outcome"].iloc[0] == "loss"
    assert verdicts.cells_over_splits(f, "a", "c")["outcome"].iloc[0] == "tie"
    assert verdicts.cells_over_splits(f, "a", "d")["outcome"].iloc[0] == "same posterior"
    assert verdicts.claim_verdict(["win", "same posterior"]) == "holds"
    assert verdicts.claim_verdict(["win", "tie"]) == "partly"
    assert verdicts.claim_verdict(["same posterior"]) == "partly"
    assert verdicts.claim_verdict(["win", "loss"]) == "does not hold"
    with pytest.raises(ValueError, match="outcomes"):
        verdicts.claim_verdict(["better"])
    with pytest.raises(ValueError, match="not in the grid"):
        verdicts.cells_over_splits(f, "a", "zzz")


def test_compare_has_its_nominal_false_alarm_rate():
    """Two methods with one mean: |z| > 3 in about 0.27 % of cells (here: at most 2 of 300)."""
    from lib.experiments import verdicts

    alarms = 0
    for seed in range(300):
        f = _frame({"a": (0.2, (1.0, 1.0, np.inf)), "b": (0.2, (2.0, 1.0, np.inf))}, seed=seed)
        alarms += verdicts.cells_over_splits(f, "a", "b")["outcome"].iloc[0] != "tie"
    # z is a t-like statistic with 30 degrees of freedom: P(|t| > 3) = 0.0054, so 1.6 expected;
    # P(more than 6 of 300) < 0.01.
    assert alarms <= 6


def test_run_splits_stacks_independent_runs_per_split():
    from lib.experiments.tasks import logistic_regression as glm_data

    def toy_split(k):
        X, y = _toy(n=40, d=2, seed=k)
        X = glm_data.normalise_rows(X)
        idx = np.arange(40)
        return glm_data.GLMData(X[:30], X[30:], y[:30], y[30:], ("a", "b"), 1.0, idx[:30], idx[30:])

    g = glm_data.run_splits(toy_split, [1, 2], [0.5, 2.0], [1.0], 3, seed=5, n_sweeps=2,
                            methods=(gp.ConcentratedLogistic, gp.DiffuseLogistic))
    assert sorted(g["split"].unique()) == [1, 2]
    assert len(g) == 2 * 2 * 2 * 3  # splits x methods x epsilons x releases
    assert {"beta", "rho", "radius"} <= set(g.columns)
    one = glm_data.run_grid(toy_split(2), [0.5, 2.0], [1.0], 3, seed=6, n_sweeps=2, methods=(gp.ConcentratedLogistic, gp.DiffuseLogistic))
    np.testing.assert_array_equal(g[g.split == 2]["error"].to_numpy(), one["error"].to_numpy())  # seed + k
    with pytest.raises(ValueError, match="split_seeds"):
        glm_data.run_splits(toy_split, [1, 1], [0.5], [1.0], 3, seed=5)


def test_sampler_guarantees():
    """The registered logistic samplers: Theorems 16/17 (RDP with its curve, or zCDP), OPS's pure DP, none."""
    import pickle

    from lib.mechanisms.protocol import Guarantee, names
    from lib.privacy.guarantees import NotPrivate, PureDP, RenyiDP, ZeroConcentratedDP

    weights = names(output="weights")
    assert weights == tuple(c.name for c in gp.SAMPLERS)
    n = 1000
    for cls in (gp.ConcentratedLogistic, gp.DiffuseLogistic):
        g = cls(RenyiDP(10.0, 1.0), n).guarantee
        assert isinstance(g, RenyiDP) and g.lam == 10.0 and g.epsilon == pytest.approx(1.0, rel=1e-12)
        assert g.curve(20.0) == pytest.approx(2.0, rel=1e-12)
        m = cls(RenyiDP(10.0, 1.0), n)
        assert g.curve(7.0) == pytest.approx(float(gp.rdp_epsilon(7.0, n, m.beta, rho=m.rho)), rel=1e-14)
        z = cls(ZeroConcentratedDP(0.1), n)
        assert isinstance(z.guarantee, ZeroConcentratedDP) and z.guarantee.rho == pytest.approx(0.1, rel=1e-12)
        np.testing.assert_array_equal(z.setting.beta, cls.settings(0.1, 1.0, n).beta)
        with pytest.raises(ValueError, match="meets targets of type"):
            cls(PureDP(1.0), n)
    ops = gp.OPSLogistic(PureDP(1e-3), n)
    assert isinstance(ops.guarantee, PureDP) and ops.guarantee.epsilon == pytest.approx(1e-3, rel=1e-12)
    assert ops.radius == 1 / gp.BETA0
    assert gp.OPSLogistic.configured(factor=2.0)(PureDP(1e-3), n).rho == pytest.approx(2 * ops.rho)
    assert gp.LogisticPosterior(NotPrivate(), n).guarantee == NotPrivate()
    X = np.random.default_rng(0).normal(size=(50, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    for cls in gp.SAMPLERS:
        mech = cls(NotPrivate() if not cls.private else RenyiDP(5.0, 10.0), 50, n_sweeps=2)
        assert isinstance(mech.guarantee, Guarantee) and cls.notions == () and cls.label and cls.short
        assert mech.release(X, y, 0).shape == (3,) and mech.release(X, y, 0, size=4).shape == (4, 3)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(mech)).release(X, y, 1), mech.release(X, y, 1))
        with pytest.raises(ValueError, match="public number of rows"):
            mech.release(X[:10], y[:10], 0)
    model = gp.BayesianLogisticRegression(gp.DiffuseLogistic(RenyiDP(5.0, 10.0), 50, n_sweeps=2), random_state=3)
    assert model.fit(X, y).predict(X).shape == (50,) and model.guarantee_ == model.sampler.guarantee


# ----------------------------------------------------------------------------- the fast paths against plain loops

from lib.mechanisms.logistic_posterior import mechanism as lp_mechanism, sampling as lpm  # noqa: E402


def _plain_newton(Z, beta, rho, tol=1e-14, max_iter=200):
    """Newton's method in double precision with the full Hessian, from zero, one setting at a time."""
    n, d = Z.shape
    w = np.zeros(d)
    for _ in range(max_iter):
        m = Z @ w
        g = rho * Z.T @ special.expit(-m) - n * beta * w
        p = special.expit(m)
        H = rho * (Z.T * (p * (1 - p))) @ Z + n * beta * np.eye(d)
        step = np.linalg.solve(H, g)
        w = w + step
        if np.abs(step).max() < tol * (1 + np.abs(w).max()):
            break
    m = Z @ w
    p = special.expit(m)
    return w, rho * (Z.T * (p * (1 - p))) @ Z + n * beta * np.eye(d)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 64 rows, so that every pass over the rows below has several blocks."""
    monkeypatch.setattr(lpm, "_BLOCK_MARGINS", 64)
    monkeypatch.setattr(lpm, "_BLOCK_BYTES", 64)


def test_blocked_data_terms_and_hessian_match_plain_sums(small_blocks):
    X, y = _toy(n=300, d=5, seed=3)
    Z = X * (2 * y - 1)[:, None]
    W = np.random.default_rng(1).normal(size=(7, 5)) * 2
    ll, G = lpm._data_terms(W, Z, grad=True)
    M = Z @ W.T
    # Tolerance: sums of 300 terms of size <= ~10 in double precision, summed in another order.
    np.testing.assert_allclose(ll, -np.logaddexp(0, -M).sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(G, special.expit(-M).T @ Z, rtol=1e-12, atol=1e-12)
    assert lpm._data_terms(W, Z, value=False)[0] is None and lpm._data_terms(W, Z)[1] is None
    np.testing.assert_allclose(gp.log_likelihood(W, X, y), ll, rtol=1e-13)
    D, g = lpm._data_hessian(Z, Z.astype(np.float32), W[0], grad=True)
    p = special.expit(M[:, 0])
    np.testing.assert_allclose(g, G[0], rtol=1e-12, atol=1e-12)
    # Tolerance: the data Hessian is summed in single precision (relative rounding ~1e-7 per term).
    np.testing.assert_allclose(D, (Z.T * (p * (1 - p))) @ Z, rtol=1e-5, atol=1e-5 * np.abs(D).max())
    # the log density and its gradient of the sampler
    Wk = W.reshape(1, 7, 5)
    lp_, Gk = lpm._logpost(Wk, Z, np.array([3.0]), np.array([0.5]), np.array([np.inf]), grad=True)
    np.testing.assert_allclose(lp_[0], 0.5 * ll - 1.5 * (W**2).sum(1), rtol=1e-13)
    np.testing.assert_allclose(Gk[0], 0.5 * G - 3.0 * W, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("blocks", [False, True])
def test_mode_matches_plain_newton_setting_by_setting(blocks, monkeypatch):
    if blocks:
        monkeypatch.setattr(lpm, "_BLOCK_MARGINS", 64)
        monkeypatch.setattr(lpm, "_BLOCK_BYTES", 64)
    X, y = _toy(n=400, d=6, seed=5)
    Z = X * (2 * y - 1)[:, None]
    # out of order in kappa = n beta / rho, two settings with one kappa, a tiny temperature (mode near 0)
    beta = np.array([0.01, 0.001, 0.05, 0.002, 0.001, 0.001])
    rho = np.array([1.0, 1.0, 0.3, 0.2, 1e-6, 0.5])
    w_hat, H = gp.mode(X, y, beta, rho)
    for s in range(beta.size):
        w, H_exact = _plain_newton(Z, beta[s], rho[s])
        # Tolerance: both solve the same equation to rounding (the fast path's gradient is summed by blocks).
        np.testing.assert_allclose(w_hat[s], w, rtol=0, atol=1e-12 * (1 + np.abs(w).max()))
        # Tolerance: the data Hessian in single precision, at a point within tol = 1e-9 of the mode.
        np.testing.assert_allclose(H[s], H_exact, rtol=0, atol=1e-5 * np.abs(H_exact).max())
        alone_w, alone_H = gp.mode(X, y, beta[s], rho[s])
        np.testing.assert_allclose(alone_w[0], w_hat[s], rtol=0, atol=1e-12 * (1 + np.abs(w).max()))


def test_mode_falls_back_to_newton_when_fixed_hessian_steps_stall(monkeypatch):
    """If the fixed-Hessian steps of stage 2 stall (simulated: they leave every point where it is), every
    setting is solved by Newton's method from there and still reaches the plain Newton mode."""
    calls = []
    newton, fixed = lpm._newton, lpm._fixed_hessian_steps
    monkeypatch.setattr(lpm, "_newton", lambda *a: calls.append(1) or newton(*a))

    def stalled(Z, W, H, r, nb, first, n_steps, tol=None):
        return (W.copy(), np.full(W.shape[0], np.inf)) if tol is not None else fixed(Z, W, H, r, nb, first, n_steps)

    monkeypatch.setattr(lpm, "_fixed_hessian_steps", stalled)
    X, y = _toy(n=200, d=3, seed=2)
    Z = X * (2 * y - 1)[:, None]
    beta, rho = np.array([1e-3, 1e-2, 1e-1]), np.ones(3)
    w_hat, H = gp.mode(X, y, beta, rho)
    for s in range(3):
        w, H_exact = _plain_newton(Z, beta[s], rho[s])
        np.testing.assert_allclose(w_hat[s], w, rtol=0, atol=1e-12 * (1 + np.abs(w).max()))
        np.testing.assert_allclose(H[s], H_exact, rtol=0, atol=1e-5 * np.abs(H_exact).max())
    assert calls, "the fallback was not exercised"
    # and the fallback itself, from another point, is plain Newton
    w, _ = _plain_newton(Z, 1e-2, 1.0)
    w0, H0, step = lpm._newton(Z, Z.astype(np.float32), w + 0.5, 1.0, 2.0, 1e-9, 100, (1e-2, 1.0))
    np.testing.assert_allclose(w0, w, rtol=0, atol=1e-8 * (1 + np.abs(w).max()))
    assert np.abs(step).max() < 1e-9 * (1 + np.abs(w0).max())
    with pytest.raises(ValueError, match="max_iter"):
        lpm._newton(Z, Z.astype(np.float32), w + 0.5, 1.0, 2.0, 1e-9, 1, (1e-2, 1.0))


def test_rdp_slope_for_dp_is_remembered_exactly():
    a = gp.rdp_slope_for_dp(0.7, 1e-5)
    assert a == lp_mechanism._rdp_slope_for_dp.__wrapped__(0.7, 1e-5)
    assert gp.rdp_slope_for_dp(np.float64(0.7), 1e-5) == a
    with pytest.raises(ValueError, match="epsilon_hat"):
        gp.rdp_slope_for_dp(-1.0, 1e-5)
