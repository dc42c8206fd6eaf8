"""The fast paths of issue 17 give the reference results.

The fused scorer (:func:`lib.models.naive_bayes.scores`), the chunked
:func:`lib.models.naive_bayes.log_proba`, :func:`lib.models.naive_bayes.count` and
:class:`lib.models.naive_bayes.PrivateNaiveBayes` prediction are pinned against a
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

from lib import validation
from lib.models import naive_bayes as nb
from lib.models.naive_bayes import scoring as scoring
from lib.mechanisms.dirichlet.moments import expected_kl_loss
from lib.experiments.grid import NaiveBayesTask
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
    model = nb.PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0).fit(X, y, n_values, 3)
    predicted = model.predict(X), model.predict_proba(X)
    monkeypatch.setattr(scoring, "CHUNK_ROWS", 37)  # 28 chunks, the last one short
    assert len(scoring.row_chunks(1000)) == 28
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
    code = ("import sys, lib, lib.experiments, lib.mechanisms.gohari.mechanism, lib.mechanisms.noise.calibration, "
            "lib.mechanisms.dirichlet.approximate_dp; "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_order_search_unchanged_by_grouping_the_rows_once(monkeypatch):
    """model_order groups the reference rows once; its choice equals the validated per-step path exactly."""
    from lib.mechanisms.dirichlet import approximate_dp as adp

    reference = adp.public_reference(3000, [2, 5, 7, 7], [1, 2, 2, 2])
    fast = [adp.model_order(e, 1e-5, reference, n_releases=4) for e in (0.05, 1.0, 8.0)]
    def before(histograms, r, alpha):  # the per-step path before issue 17: validate, regroup, sum
        r, alpha = validation.broadcast(r=validation.positive(r, "r"), alpha=validation.positive(alpha, "alpha"))
        total = np.zeros(r.shape)
        for rows in adp._rows(histograms):
            total = total + expected_kl_loss(rows, r[..., None], alpha[..., None]).sum(axis=-1)
        return total[()]

    monkeypatch.setattr(adp, "_summed_kl", before)
    slow = [adp.model_order(e, 1e-5, reference, n_releases=4) for e in (0.05, 1.0, 8.0)]
    assert fast == slow


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


@pytest.mark.parametrize("kind", ["diffused", "concentrated"])
@pytest.mark.parametrize("prior", [1.0, 0.3, [0.5, 2.0, 2.0, 7.0]])
def test_stacked_evaluation_equals_the_reference(kind, prior):
    """_evaluate_stacked gives _evaluate's move and cross parts exactly, several shapes in one stack."""
    from lib.mechanisms import posterior_sampling as ps

    rng = np.random.default_rng(5)
    d = None if np.ndim(prior) == 0 else len(prior)
    shapes = [(1, 2), (2, 3), (3, 4), (2, 4)] if d is None else [(1, d), (2, d), (5, d)]
    sets = [ps.Candidates(ps.prior_vector(prior, d or sh[1]), 1234, sh[0]) for sh in shapes]
    for cross in (False, True):
        members = [c for c in sets if (c.rows > 1) == cross]
        stack = ps.CandidateStack(members)
        which = rng.integers(len(members), size=60)
        scale = np.exp(rng.uniform(-12, 0, 60))
        lam = 1 + 10.0 ** rng.uniform(-3, 2, 60)
        move, part = ps.evaluate_stacked(stack, which, scale, lam, kind)
        for k in range(len(members)):
            sel = which == k
            ref = ps.evaluate_candidates(members[k], scale[sel], lam[sel], kind)
            np.testing.assert_array_equal(move[sel], ref[0])
            np.testing.assert_array_equal(part[sel], ref[1])
        assert np.isinf(move).any() and np.isfinite(move).any()  # both sides of the critical order


def _spec_of(shapes, n_total):
    from lib.mechanisms.protocol import ReleaseSpec

    return ReleaseSpec(tuple(shapes), n_total)


@pytest.mark.parametrize("name", ["geumlek_diffused", "geumlek_concentrated"])
def test_posterior_calibrations_equal_one_search_per_shape(name):
    """calibrate_many of (eps_hat, delta) and of RenyiDP targets (one search over every shape and target) give,
    value by value,
    the scales of the search shape by shape through the reference evaluator (the path before issue 30)."""
    from lib.mechanisms import posterior_sampling as ps
    from lib.privacy.accounting import dp_to_rdp, min_order

    cls = get(name)
    spec = _spec_of([(1, 2), (2, 10), (2, 3), (2, 10), (2, 42), (2, 7)], 34189)
    shapes = sorted(set(spec.shapes))

    def reference(eps, lam):
        eps, lam = np.broadcast_arrays(np.asarray(eps, float), np.asarray(lam, float))
        return {sh: ps.mechanism._search([ps.Candidates(ps.prior_vector(cls.prior, sh[1]), spec.n_total, sh[0])],
                               np.zeros(eps.size, int), eps.ravel(), lam.ravel(), cls.kind, reference=True)
                for sh in shapes}

    budgets = np.logspace(-3, 1, 10)
    grid = cls.calibrate_many([RenyiDP(5.0, b) for b in budgets], spec)
    ref = reference(budgets / len(spec.shapes), 5.0)
    for e, cal in enumerate(grid):
        for sh, obj in zip(spec.shapes, cal.releases):
            assert obj.scale == ref[sh][e]
    single = cls.calibrate(RenyiDP(5.0, budgets[4]), spec)
    assert [o.scale for o in single.releases] == [o.scale for o in grid[4].releases]
    cal = cls.calibrate(ApproximateDP(1.0, 1e-5), spec)
    lam0 = min_order(1.0, 1e-5)
    lams = lam0 + np.geomspace(1e-3 * lam0, min(1e5, 1e4) - lam0, 48)
    ref = reference(dp_to_rdp(1.0, lams, 1e-5, n_releases=len(spec.shapes)), lams)
    best = int(np.argmax(np.mean([np.log(ref[sh]) for sh in spec.shapes], axis=0)))
    assert cal.parameters["lam"] == lams[best]
    assert [o.scale for o in cal.releases] == [ref[sh][best] for sh in spec.shapes]


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


def test_batched_search_names_the_first_shape_that_fails(monkeypatch):
    """A target no scale meets: the error of one search per shape (the first shape in order), not another's."""
    from lib.mechanisms import posterior_sampling as ps

    monkeypatch.setattr(ps.mechanism, "_LOG_SCALE_FLOOR", -20.0)  # a floor that a target of 1e-30 at order 5 reaches
    shapes = [(1, 2), (2, 5), (2, 9)]
    eps, lam = np.array([1e-3, 1e-30, 2e-30]), np.array([5.0, 5.0, 6.0])
    with pytest.raises(ValueError) as batched:
        ps.mechanism._calibrate_shapes(eps, lam, 1.0, 500, shapes, "diffused")
    with pytest.raises(ValueError) as single:
        ps.calibrate_scale(eps, lam, 1.0, 500, rows=1, d=2)
    assert str(batched.value) == str(single.value)
    assert "meets epsilon" in str(single.value)


# ----------------------------------------------------------------------------- one model's prediction (issue 30)


@pytest.mark.parametrize("d", [2, 3, 17])
@pytest.mark.parametrize("chunk", [None, 37])
def test_one_model_lookup_equals_the_batched_path(d, chunk, monkeypatch):
    """_class_scores and _one_log_proba (flat lookups, one model) equal _joint and log_proba bit for bit,
    -inf cells (zero counts of the non-private estimate) and exact ties included."""
    if chunk:
        monkeypatch.setattr(scoring, "CHUNK_ROWS", chunk)
    rng = np.random.default_rng(d)
    n_values = np.array([2, 5, 3, 7])
    X = np.column_stack([rng.integers(v, size=500) for v in n_values])
    prior, tables = _model(rng, 1, d, n_values)
    tables[2][0, :, :] = tables[2][0, 0, :]  # attribute 2 says nothing: ties where the rest ties
    prior[0, 1] = prior[0, 0]
    tables[0][0, 1] = tables[0][0, 0]
    tables[3][0, 1] = tables[3][0, 0]
    tables[1][0, 1] = tables[1][0, 0]
    tables[1][0, 1, 2] = -np.inf  # a zero count of class 1 (where classes 0 and 1 would tie)
    _, lp, w, nv = scoring._model(X, prior, tables, n_values)
    one_prior, table = scoring.stacked_model(prior[0], [t[0] for t in tables])
    np.testing.assert_array_equal(scoring.class_scores(X, one_prior, table, n_values),
                                  scoring._joint(X, lp, w, nv)[:, 0])
    got = scoring.model_log_proba(X, prior[0], [t[0] for t in tables], n_values)
    want = scoring.log_proba(X, prior, tables, n_values)[0]
    assert not np.isnan(want).any() and np.isneginf(want).any()
    np.testing.assert_array_equal(got, want)
    s = scoring.class_scores(X, one_prior, table, n_values)
    assert (s[:, 0] == s[:, 1]).sum() >= 10  # exact ties exercised: argmax keeps the first class
    np.testing.assert_array_equal(np.argmax(s, axis=-1), np.argmax(want, axis=-1))


def test_private_naive_bayes_predicts_as_the_batched_path_and_validates_once(monkeypatch):
    rng = np.random.default_rng(30)
    n_values = np.array([4, 2, 6])
    X = np.column_stack([rng.integers(v, size=3000) for v in n_values])
    y = rng.integers(3, size=3000)
    for mech in ("dirichlet", "mle", "laplace"):
        model = nb.PrivateNaiveBayes(mech, RenyiDP(5.0, 1.0) if get(mech).private else None, random_state=0).fit(X, y, n_values, 3)
        prior, tables = model.class_log_prior_[None], [t[None] for t in model.feature_log_prob_]
        want = nb.log_proba(X, prior, tables, n_values)[0]
        np.testing.assert_array_equal(model.predict_log_proba(X), want)
        np.testing.assert_array_equal(model.predict_proba(X), np.exp(want))
        np.testing.assert_array_equal(model.predict(X), np.argmax(want, axis=-1))
    calls = []
    real = validation.codes
    monkeypatch.setattr(validation, "codes", lambda *a, **k: calls.append(1) or real(*a, **k))
    model.predict_proba(X)
    assert len(calls) == 1
    with pytest.raises(ValueError, match="codes in"):
        model.predict_proba(X + 10)


@pytest.mark.parametrize("name", ["geumlek_diffused", "geumlek_concentrated"])
def test_posterior_dp_many_equals_one_calibration_per_target(name):
    """calibrate_many of (eps_hat, delta) targets (one search over every target, order and shape) equals
    calibrate target by target:
    the same objects' scales and parameters, an unattained target (no order on the grid) included."""

    cls = get(name)
    spec = _spec_of([(1, 2), (2, 4), (2, 9), (2, 4)], 5000)
    targets = [0.05, 0.3, 1.0, 1.0, 8.0]
    many = cls.calibrate_many([ApproximateDP(e, 1e-5) for e in targets], spec)
    for e, cal in zip(targets, many):
        one = cls.calibrate(ApproximateDP(e, 1e-5), spec)
        assert cal.attained == one.attained and cal.parameters == one.parameters
        assert [o.scale for o in cal.releases] == [o.scale for o in one.releases]
    cache = {}
    again = cls.calibrate_many([ApproximateDP(e, 1e-5) for e in targets], spec, cache=cache)
    assert [c.parameters for c in again] == [c.parameters for c in many] and len(cache) == 4



def test_posterior_dp_many_falls_back_to_one_search_per_target(monkeypatch):
    """A joint search that raises (here: refused when it holds more than one target) leaves every target
    to its own calibration, with its own outcome."""
    from lib.mechanisms import posterior_sampling as ps

    real = ps.mechanism._calibrate_shapes

    def single_only(eps, lams, *args, **kwargs):
        if np.size(eps) > 48:
            raise ValueError("joint search refused")
        return real(eps, lams, *args, **kwargs)

    spec = _spec_of([(1, 2), (2, 5)], 800)
    want = [ps.DiffusedPosterior.calibrate(ApproximateDP(e, 1e-5), spec) for e in (0.2, 2.0)]
    monkeypatch.setattr(ps.mechanism, "_calibrate_shapes", single_only)
    got = ps.DiffusedPosterior.calibrate_many([ApproximateDP(e, 1e-5) for e in (0.2, 2.0)], spec)
    assert [c.parameters for c in got] == [c.parameters for c in want]
    assert all(c.attained for c in got)


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
        e.nonexistent


@pytest.mark.parametrize("kind", ["diffused", "concentrated"])
def test_worst_case_equals_the_reference_evaluation(kind):
    """worst_case (through the stacked evaluator) equals _evaluate's maximum value by value, any shape."""
    from lib.mechanisms import posterior_sampling as ps

    rng = np.random.default_rng(2)
    scale = np.exp(rng.uniform(-10, 0, (4, 5)))
    lam = 1 + 10.0 ** rng.uniform(-2, 2, (4, 5))
    for prior, rows in ((1.0, 1), (1.0, 3), ([0.4, 2.0, 5.0], 2)):
        a = ps.prior_vector(prior, 3)
        got, move, cross = ps.worst_case(a, scale, lam, 700, rows=rows, kind=kind, parts=True)
        ref = ps.evaluate_candidates(ps.Candidates(a, 700, rows), scale, lam, kind)
        np.testing.assert_array_equal(move, ref[0])
        np.testing.assert_array_equal(cross, ref[1])
        np.testing.assert_array_equal(got, np.maximum(*ref))
        assert got.shape == (4, 5)
    assert ps.worst_case([1.0, 1.0], 0.5, 5.0, 10) == float(np.maximum(*ps.evaluate_candidates(
        ps.Candidates(np.ones(2), 10, 1), np.array(0.5), np.array(5.0), "diffused")))



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


def _posterior_tables(rng, n_total):
    counts = [rng.multinomial(n_total, np.ones(3) / 3).astype(float)]
    for rows, d in ((2, 4), (2, 4), (3, 2), (2, 6)):
        counts.append(rng.multinomial(n_total, np.ones(rows * d) / (rows * d)).reshape(rows, d).astype(float))
    return counts


@pytest.mark.parametrize("name", ["geumlek_diffused", "geumlek_concentrated", "geumlek_true"])
def test_batched_posterior_draws_equal_the_table_by_table_loop(name):
    """_PosteriorSampler.log_release_tables (one Gamma call, one check per object) gives the protocol loop's
    bits (release table by table), with the generator left in the same state."""
    from lib.mechanisms.protocol import Mechanism, ReleaseSpec

    rng = np.random.default_rng(8)
    cls = get(name)
    tables = _posterior_tables(rng, 200)
    spec = ReleaseSpec(tuple((1, t.shape[0]) if t.ndim == 1 else t.shape for t in tables), 200)
    target = RenyiDP(1.5, 50.0) if name == "geumlek_true" else RenyiDP(5.0, 1.0)
    objects = cls.calibrate(target, spec).releases
    for n_draws in (1, 7):
        fast_rng, slow_rng = np.random.default_rng(3), np.random.default_rng(3)
        fast = cls.log_release_tables(objects, tables, n_draws, fast_rng)
        slow = Mechanism.log_release_tables.__func__(cls, objects, tables, n_draws, slow_rng)
        for f, s in zip(fast, slow):
            np.testing.assert_array_equal(f, s)
        assert fast_rng.random() == slow_rng.random()
    # a table the stated guarantee does not cover: the loop's error, before any draw
    bad = [t.copy() for t in tables]
    bad[1][0, 0] += 500
    with pytest.raises(ValueError, match="at most n_total"):
        cls.log_release_tables(objects, bad, 2, np.random.default_rng(0))


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


@pytest.mark.parametrize("kind", ["diffused", "concentrated"])
def test_pruned_order_search_keeps_each_groups_best_order_and_scales(kind):
    """_calibrate_shapes(best_of=...) (orders that cannot win stop early) chooses, in every group, the order of
    the full search (argmax of the weighted mean of log scales) with the same scales, value by value; the
    stopped orders hold feasible (smaller or equal) scales."""
    from lib.mechanisms import posterior_sampling as ps
    from lib.privacy.accounting import dp_to_rdp, min_order

    spec_shapes = ((1, 2), (2, 10), (2, 9), (2, 10), (2, 42), (2, 3))
    shapes = sorted(set(spec_shapes))
    weights = ps.mechanism._shape_weights(spec_shapes, shapes)
    lams, eps = [], []
    for e in (0.05, 1.0, 8.0):
        lam0 = min_order(e, 1e-5)
        grid_lams = lam0 + np.geomspace(1e-3 * lam0, 1e4 - lam0, 48)
        lams.append(grid_lams)
        eps.append(dp_to_rdp(e, grid_lams, 1e-5, n_releases=len(spec_shapes)))
    lams, eps = np.concatenate(lams), np.concatenate(eps)
    groups = np.repeat(np.arange(3), 48)
    full = ps.mechanism._calibrate_shapes(eps, lams, 1.0, 20000, shapes, kind)
    pruned = ps.mechanism._calibrate_shapes(eps, lams, 1.0, 20000, shapes, kind, best_of=(weights, groups))
    stopped = 0
    for g in range(3):
        sel = groups == g
        score = {name: np.mean([np.log(s[sh][sel]) for sh in spec_shapes], axis=0) for name, s in
                 (("full", full), ("pruned", pruned))}
        best = int(np.argmax(score["full"]))
        assert int(np.argmax(score["pruned"])) == best
        for sh in shapes:
            assert pruned[sh][sel][best] == full[sh][sel][best]
            assert np.all(pruned[sh][sel] <= full[sh][sel])
        stopped += int(np.sum(pruned[shapes[0]][sel] != full[shapes[0]][sel]))
    assert stopped > 0  # the pruning did stop some orders
    for sh in shapes:  # every scale returned is feasible
        worst = ps.worst_case(1.0, pruned[sh], lams, 20000, rows=sh[0], d=sh[1], kind=kind)
        assert np.all(worst <= eps)


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
