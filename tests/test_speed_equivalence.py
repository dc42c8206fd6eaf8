"""The fast paths of the experiment layer give the reference results: the naive-Bayes task's scorer
equals a direct sum over the tables, the grid's vectorised and cached calibrations equal one
calibration per budget, schema.encode equals a row-by-row look-up, and importing lib or
lib.experiments imports neither scipy.optimize nor pandas nor the grid.

These test lib.experiments (grid, tasks, schema) and the package's start-up; they move into
tests/experiments/ with that sub-package's test files.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import logsumexp

from lib.experiments.tasks import NaiveBayes as NaiveBayesTask
from lib.mechanisms.protocol import ApproximateDP, RenyiDP, get



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


def test_scipy_optimize_is_not_imported_at_start_up():
    code = ("import sys, lib, lib.experiments, lib.mechanisms.gohari.mechanism, lib.mechanisms.noise.calibration, "
            "lib.mechanisms.dirichlet.approximate_dp; "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _spec_of(shapes, n_total):
    from lib.mechanisms.protocol import ReleaseSpec

    return ReleaseSpec(tuple(shapes), n_total)


def test_grid_rdp_path_equals_budget_by_budget():
    """lib.experiments.grid.calibrate_many (one vectorised search of RenyiDP targets) equals calibrate per budget."""
    from lib.experiments import grid

    spec = _spec_of([(1, 3), (3, 5), (3, 2)], 2000)
    budgets = np.logspace(-3, 1, 7)
    for name in ("geumlek_diffused", "geumlek_concentrated"):
        many = grid.calibrate_many(name, [RenyiDP(5.0, b) for b in budgets], spec)
        for eps, cal in zip(budgets, many):
            one = grid.calibrate(name, RenyiDP(5.0, eps), spec)
            assert cal.attained and one.attained
            assert [o.scale for o in cal.releases] == [o.scale for o in one.releases]
            assert cal.parameters == one.parameters


def test_the_experiment_package_imports_its_names_on_first_use():
    """import lib.experiments imports neither pandas nor the grid; every name of __all__ still resolves."""
    code = ("import sys, lib.experiments as e; "
            "before = 'pandas' in sys.modules or 'lib.experiments.grid' in sys.modules; "
            "from lib.experiments import *; from lib.experiments.tasks import mixed_naive_bayes; "
            "print(before, [callable(getattr(e, n)) for n in e.__all__].count(True) == len(e.__all__), "
            "e.run is sys.modules['lib.experiments.grid'].run)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]
    import lib.experiments as e

    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        e.nonexistent  # noqa: B018 (the attribute access is what raises)


def test_schema_encode_equals_the_row_by_row_lookup():
    """schema.encode looks each distinct value up once; the codes are those of one dictionary
    look-up per row (missing values -> 'other' or refused), on mixed, missing and unlisted values."""
    import pandas as pd

    from lib.experiments.schema import Domain, encode

    rng = np.random.default_rng(7)
    pool = np.array(["a", "b", "c", "zz", None, np.nan, pd.NA, 1, 1.0, 2, "?"], dtype=object)
    values = pool[rng.integers(0, len(pool), 5000)]
    for listed, other in ((("a", "b", "c", 1), True), (("c", "a", 2), True)):
        domain = Domain(values=listed, other=other, kind="doc", source="test")
        index = {v: i for i, v in enumerate(listed)}
        expected = np.array([len(listed) if pd.isna(v) or v not in index else index[v] for v in values])
        assert np.array_equal(encode(values, domain, "x"), expected)
    closed = Domain(values=("a", "b", "c", "zz", "?", 1, 2), other=False, kind="doc", source="test")
    with pytest.raises(ValueError, match="outside its public domain"):
        encode(values, closed, "x")
    assert np.array_equal(encode(np.array(["?", "zz", "a"], dtype=object), closed, "x"), [4, 3, 0])


def test_grid_cache_calibrates_each_spec_once(monkeypatch):
    """grid.calibrate_many with a cache returns, element by element, the calibrations made without one, and
    calls the class only for the targets it does not hold (a second split of the same spec: none)."""
    from lib.experiments import grid
    from lib.mechanisms.protocol import ReleaseSpec

    spec = ReleaseSpec(((1, 2), (2, 3), (2, 5)), 500)
    for name, targets in (("geumlek_diffused", [RenyiDP(5.0, e) for e in (0.1, 1.0)]),
                          ("geumlek_concentrated", [ApproximateDP(e, 1e-5) for e in (0.5, 2.0)]),
                          ("dirichlet", [ApproximateDP(e, 1e-5) for e in (0.5, 2.0)]),
                          ("gaussian", [RenyiDP(5.0, 1.0)])):
        cls = get(name)
        plain = grid.calibrate_many(cls, targets, spec)
        calls = []
        original = cls.calibrate_many.__func__
        monkeypatch.setattr(cls, "calibrate_many",
                            classmethod(lambda c, t, s, cache=None: calls.append(len(t)) or original(c, t, s, cache=cache)))
        cache = {}
        first = grid.calibrate_many(cls, targets, spec, cache=cache)
        again = grid.calibrate_many(cls, targets[::-1] + targets, ReleaseSpec(tuple(spec.shapes), 500), cache=cache)
        monkeypatch.undo()
        assert calls == [len(targets)]  # the second call found every target
        for a, b in zip(plain, first):
            assert a.parameters == b.parameters and a.guarantee == b.guarantee
            assert [getattr(m, "scale", getattr(m, "r", None)) for m in a.releases] == \
                   [getattr(m, "scale", getattr(m, "r", None)) for m in b.releases]
        assert [c is f for c, f in zip(again, first[::-1] + first)] == [True] * (2 * len(targets))
    # another setting of the class is another key
    other = get("geumlek_diffused").configured(prior=2.0)
    k0 = grid._calibration_key("geumlek_diffused", RenyiDP(5.0, 1.0), spec)
    assert grid._calibration_key(other, RenyiDP(5.0, 1.0), spec) != k0
    assert grid._calibration_key("geumlek_diffused", RenyiDP(5.0, 1.0), ReleaseSpec(spec.shapes, 501)) != k0
    with pytest.raises(TypeError, match="cache must be None or a dict"):
        grid.calibrate_many("dirichlet", [RenyiDP(5.0, 1.0)], spec, cache=[])


def test_run_over_splits_with_a_shared_cache_equals_runs_without(monkeypatch):
    """run() over two splits sharing one cache: the frames of runs with fresh caches, and the second split
    calibrates nothing."""
    from lib.experiments import grid
    from lib.experiments.preprocessing import Split

    rng = np.random.default_rng(12)
    n_values = np.array([3, 4, 2])

    def split():
        X = np.column_stack([rng.integers(v, size=300) for v in n_values])
        y = rng.integers(2, size=300)
        return Split(X[:200], X[200:], y[:200], y[200:], n_values, 2, ("a", "b", "c"), (0, 1))

    data = [{"toy": split()} for _ in range(2)]
    mechanisms = ["dirichlet", "geumlek_diffused", "geumlek_concentrated"]
    for privacy, budgets in ((RenyiDP(5.0, 1.0), [0.1, 1.0]), (ApproximateDP(1.0, 1e-5), [0.5, 2.0])):
        plain = [grid.run("naive-bayes", mechanisms, budgets, privacy=privacy, data=d, n_repeats=3, seed=k)
                 for k, d in enumerate(data)]
        shared = {}
        first = grid.run("naive-bayes", mechanisms, budgets, privacy=privacy, data=data[0], n_repeats=3, seed=0,
                         cache=shared)
        for name in mechanisms:
            monkeypatch.setattr(get(name), "calibrate_many", classmethod(_calibrated_again))
        second = grid.run("naive-bayes", mechanisms, budgets, privacy=privacy, data=data[1], n_repeats=3, seed=1,
                          cache=shared)
        monkeypatch.undo()
        for want, got in zip(plain, (first, second)):
            assert want.equals(got)


def _calibrated_again(cls, *args, **kwargs):
    raise AssertionError(f"{cls.name} calibrated again: the cache must answer")
