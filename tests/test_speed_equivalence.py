"""The fast paths of issue 17 give the reference results.

The fused scorer (:func:`lib.naive_bayes.scores`), the chunked
:func:`lib.naive_bayes.log_proba`, :func:`lib.naive_bayes.count` and
:class:`lib.naive_bayes.PrivateNaiveBayes` prediction are pinned against a
direct computation (a sum over the tables and scipy's ``logsumexp`` over a
``(B, n, d)`` array, as before issue 17) on random inputs, including exact
ties; and ``scipy.optimize`` is imported only where it is used.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import logsumexp

from lib import _validate
from lib import naive_bayes as nb
from lib import naive_bayes_scoring as scoring
from lib.moments import expected_kl_loss
from lib.experiments.grid import NaiveBayesTask


def _model(rng, B, d, n_values, spread=3.0):
    prior = np.log(rng.dirichlet(np.ones(d), size=B))
    tables = [np.log(rng.dirichlet(np.full(v, 1.0 / spread), size=(B, d))) for v in n_values]
    return prior, tables


def _reference(X, y, prior, tables):
    """Scores by a direct sum over the tables, normalised with scipy's logsumexp (pre-issue-17 arithmetic)."""
    s = prior[:, None, :] + sum(t[:, :, x].transpose(0, 2, 1) for t, x in zip(tables, X.T))  # (B, n, d)
    lp = s - logsumexp(s, axis=-1, keepdims=True)
    ce = -lp[:, np.arange(len(y)), y].mean(axis=-1)
    acc = (np.argmax(lp, axis=-1) == y).mean(axis=-1)
    return lp, ce, acc


@pytest.mark.parametrize("d", [2, 3, 10])
def test_fused_scores_equal_the_reference(d):
    rng = np.random.default_rng(d)
    n_values = np.array([2, 5, 3, 7])
    for n, B in ((1, 1), (50, 4), (3001, 7)):
        X = np.column_stack([rng.integers(v, size=n) for v in n_values])
        y = rng.integers(d, size=n)
        prior, tables = _model(rng, B, d, n_values)
        lp, ce, acc = _reference(X, y, prior, tables)
        got_ce, got_acc = nb.scores(X, y, prior, tables, n_values)
        # the same sums in another order: rounding of ~n ulps of the mean, far below 1e-12
        np.testing.assert_allclose(got_ce, ce, rtol=1e-12)
        np.testing.assert_array_equal(got_acc, acc)  # shares of integer counts: exact
        np.testing.assert_allclose(nb.log_proba(X, prior, tables, n_values), lp, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(nb.cross_entropy(lp, y), ce, rtol=1e-12)


@pytest.mark.parametrize("d", [2, 4])
def test_ties_go_to_the_first_class_as_before(d):
    """Equal tables for every class: every row is a tie, the first class wins, CE is log d."""
    rng = np.random.default_rng(7)
    n_values = np.array([3, 4])
    X = np.column_stack([rng.integers(v, size=200) for v in n_values])
    y = rng.integers(d, size=200)
    prior = np.full((3, d), -np.log(d))
    tables = [np.broadcast_to(np.log(rng.dirichlet(np.ones(v))), (3, d, v)).copy() for v in n_values]
    ce, acc = nb.scores(X, y, prior, tables, n_values)
    _, ref_ce, ref_acc = _reference(X, y, prior, tables)
    np.testing.assert_array_equal(acc, ref_acc)
    np.testing.assert_array_equal(acc, np.mean(y == 0))
    np.testing.assert_allclose(ce, np.log(d), rtol=1e-14)
    np.testing.assert_allclose(ce, ref_ce, rtol=1e-14)


def test_chunking_does_not_change_results(monkeypatch):
    rng = np.random.default_rng(3)
    n_values = np.array([4, 2, 6])
    X = np.column_stack([rng.integers(v, size=1000) for v in n_values])
    y = rng.integers(3, size=1000)
    prior, tables = _model(rng, 5, 3, n_values)
    whole = nb.log_proba(X, prior, tables, n_values), nb.scores(X, y, prior, tables, n_values)
    counts = nb.count(X, y, n_values, 3)
    model = nb.PrivateNaiveBayes("dirichlet", epsilon=1.0, random_state=0).fit(X, y, n_values, 3)
    predicted = model.predict(X), model.predict_proba(X)
    monkeypatch.setattr(scoring, "CHUNK_ROWS", 37)  # 28 chunks, the last one short
    assert len(scoring._chunks(1000)) == 28
    np.testing.assert_array_equal(nb.log_proba(X, prior, tables, n_values), whole[0])  # row by row: exact
    ce, acc = nb.scores(X, y, prior, tables, n_values)
    np.testing.assert_allclose(ce, whole[1][0], rtol=1e-13)  # partial sums per chunk
    np.testing.assert_array_equal(acc, whole[1][1])
    again = nb.count(X, y, n_values, 3)
    np.testing.assert_array_equal(again[0], counts[0])
    for a, b in zip(again[1], counts[1]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(model.predict(X), predicted[0])
    np.testing.assert_array_equal(model.predict_proba(X), predicted[1])
    # prediction is the first most probable class of the posterior
    np.testing.assert_array_equal(predicted[0], np.argmax(model.predict_log_proba(X), axis=-1))


def test_grid_scorer_equals_the_reference():
    rng = np.random.default_rng(11)
    n_values = np.array([3, 3, 5])
    X = np.column_stack([rng.integers(v, size=400) for v in n_values])
    y = rng.integers(2, size=400)
    split = SimpleNamespace(X_train=X[:300], y_train=y[:300], X_test=X[300:], y_test=y[300:],
                            n_values=n_values, n_classes=2)
    task = NaiveBayesTask(split)
    batches = [_model(rng, 3, 2, n_values), _model(rng, 2, 2, n_values)]
    got = task.score(batches)
    prior = np.concatenate([p for p, _ in batches])
    tables = [np.concatenate([t[k] for _, t in batches]) for k in range(3)]
    _, ce, acc = _reference(split.X_test, split.y_test, prior, tables)
    np.testing.assert_allclose(got["cross_entropy"], ce, rtol=1e-12)
    np.testing.assert_array_equal(got["accuracy"], acc)


def test_scores_refuses_bad_input():
    n_values = np.array([2, 2])
    prior, tables = _model(np.random.default_rng(0), 1, 2, n_values)
    X = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="one label per row"):
        nb.scores(X, np.array([0]), prior, tables, n_values)
    with pytest.raises(ValueError, match="class codes"):
        nb.scores(X, np.array([0, 2]), prior, tables, n_values)
    with pytest.raises(ValueError, match="at least one row"):
        nb.scores(X[:0], np.array([], dtype=int), prior, tables, n_values)
    with pytest.raises(ValueError, match="codes in"):
        nb.scores(np.array([[0, 2]]), np.array([0]), prior, tables, n_values)


def test_scipy_optimize_is_not_imported_at_start_up():
    code = ("import sys, lib, lib.experiments, lib.gohari, lib.approximate_dp; "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_order_search_unchanged_by_grouping_the_rows_once(monkeypatch):
    """model_order groups the reference rows once; its choice equals the validated per-step path exactly."""
    from lib import approximate_dp as adp

    reference = adp.public_reference(3000, [2, 5, 7, 7], [1, 2, 2, 2])
    fast = [adp.model_order(e, 1e-5, reference, n_releases=4) for e in (0.05, 1.0, 8.0)]
    def before(histograms, r, alpha):  # the per-step path before issue 17: validate, regroup, sum
        r, alpha = _validate.broadcast(r=_validate.positive(r, "r"), alpha=_validate.positive(alpha, "alpha"))
        total = np.zeros(r.shape)
        for rows in adp._rows(histograms):
            total = total + expected_kl_loss(rows, r[..., None], alpha[..., None]).sum(axis=-1)
        return total[()]

    monkeypatch.setattr(adp, "_summed_kl", before)
    slow = [adp.model_order(e, 1e-5, reference, n_releases=4) for e in (0.05, 1.0, 8.0)]
    assert fast == slow
