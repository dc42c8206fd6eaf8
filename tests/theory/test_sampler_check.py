"""Tests of lib.theory.sampler_check: both runs' means against the posterior computed on a 2-d grid."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import special

from lib.models.logistic_regression import LogisticPosterior, Settings
from lib.theory.sampler_check import SamplerCheck, check_sampler


def _data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 6, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.5 * rng.normal(size=n + 6) > 0).astype(int)
    return SimpleNamespace(X_train=X[:n], y_train=y[:n], X_test=X[n:], y_test=y[n:])


def _grid_posterior(data, beta, rho, half=8.0, k=401):
    """The posterior of eq. (6) on a 2-d grid, written out independently of the library."""
    g = np.linspace(-half, half, k)
    W = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
    m = W @ data.X_train.T
    ll = np.where(data.y_train == 1, -np.logaddexp(0, -m), -np.logaddexp(0, m)).sum(axis=1)
    lp = rho * ll - 0.5 * len(data.y_train) * beta * (W**2).sum(axis=1)
    return W, np.exp(lp - special.logsumexp(lp))


def test_means_against_grid_posterior():
    data = _data()
    setting = Settings(np.array([0.05]), np.array([1.0]), np.array([np.inf]))  # a prior that keeps it on the grid
    (check,) = check_sampler(data, setting, 3, n_sweeps=4, n_ref_chains=8, n_ref_steps=400, burn=40, n_ours=400)
    assert isinstance(check, SamplerCheck) and 0 < check.acceptance_independence <= 1
    W, p = _grid_posterior(data, 0.05, 1.0)
    t = check.table
    for j, name in enumerate(("margin 1", "margin 2")):
        exact = float(p @ (W @ data.X_test[j]))
        for col in ("ours", "reference"):
            # each mean within four of the check's own standard errors (detectable = 3 se) of the exact value
            assert abs(t.loc[name, col] - exact) < 4 / 3 * t.loc[name, "detectable"] + 1e-3, (name, col)
    exact_err = float(p @ ((W @ data.X_test.T > 0) != data.y_test.astype(bool)).mean(axis=1))
    assert abs(t.loc["test error", "ours"] - exact_err) < 4 / 3 * t.loc["test error", "detectable"] + 1e-3
    assert np.all(t["ref ESS"] > 0) and np.all(t["ref ESS (batch means)"] > 0)


def test_bad_arguments():
    data = _data()
    setting = LogisticPosterior.settings(1.0, 1.0, len(data.y_train))
    with pytest.raises(ValueError, match="burn"):
        check_sampler(data, setting, 1, n_sweeps=2, n_ref_chains=2, n_ref_steps=20, burn=16)
    with pytest.raises(ValueError, match="seed"):
        check_sampler(data, setting, -1, n_sweeps=2, n_ref_chains=2, n_ref_steps=40, burn=4)
