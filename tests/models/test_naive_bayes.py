"""Tests of lib.models.naive_bayes: counts, accounting, releases and the private model."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import CategoricalNB

from lib.privacy.guarantees import NotPrivate, RenyiDP
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism, SmoothedEstimate
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.experiments.data import DATASETS
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
from lib.models.naive_bayes import (PrivateNaiveBayes, count, log_proba, model_spec,
                             release_parameters, releases_of)
from lib.mechanisms.protocol import ModelCalibration, get

from tests.conftest import categorical_rows as synthetic
from lib.models import naive_bayes as nb
from lib.experiments.tasks import NaiveBayes as NaiveBayesTask
from lib.experiments.preprocessing import Split
from lib import validation
from lib.models.naive_bayes import scoring as scoring
from tests._reference import refused_quickly as _quick
from tests._reference import nb_scores_by_direct_sum, random_nb_models

#: The private mechanisms with an RDP calibration, and every mechanism a model can be fitted with.
PRIVATE_RDP = ("dirichlet", "gaussian", "laplace")
RDP_MECHANISMS = ("random", "mle") + PRIVATE_RDP


def spec_of(X, y, n_values, d):
    """The ReleaseSpec of a naive Bayes model of these data."""
    return model_spec(n_values, d, len(y))


# ------------------------------------------------------------------ accounting

def test_the_model_splits_its_target_by_the_one_split_and_reports_the_whole():
    """Proposition 7.1: K + 1 releases at RenyiDP(lam, eps).split(K + 1) compose to the target."""
    X, y, n_values, d = synthetic()
    for eps in (1e-3, 0.5, 10.0):
        target = RenyiDP(5.0, eps)
        model = PrivateNaiveBayes("dirichlet", target, random_state=0).fit(X, y, n_values=n_values, n_classes=d)
        share = target.split(X.shape[1] + 1)
        assert all(m.guarantee == share for m in model.calibration_.releases)
        assert model.guarantee_.lam == 5.0 and model.guarantee_.epsilon == pytest.approx(eps, rel=1e-15)
    model = PrivateNaiveBayes("mle").fit(X, y, n_values=n_values, n_classes=d)
    assert model.guarantee_ == NotPrivate()
    with pytest.raises(ValueError, match="cannot meet a RenyiDP target"):
        PrivateNaiveBayes("mle", RenyiDP(5.0, 1.0)).fit(X, y, n_values=n_values, n_classes=d)
    with pytest.raises(ValueError, match="privacy .* is required"):
        PrivateNaiveBayes("dirichlet").fit(X, y, n_values=n_values, n_classes=d)


def test_model_uses_the_budget_and_replace_one_sensitivities():
    X, y, n_values, d = synthetic()
    for name in PRIVATE_RDP:
        model = PrivateNaiveBayes(name, privacy=RenyiDP(5.0, 0.5), random_state=0)
        model.fit(X, y, n_values=n_values, n_classes=d)
        cal = model.calibration_
        assert cal.mechanism == name and cal.attained and len(cal.releases) == X.shape[1] + 1
        assert cal.parameters["epsilon_release"] == pytest.approx(0.5 / (X.shape[1] + 1))
        for mech in cal.releases:
            assert isinstance(mech, get(name))
            assert mech.epsilon == pytest.approx(0.5 / (X.shape[1] + 1))
            assert mech.lam == 5.0
            if name == "laplace":
                assert mech.l1 == 2.0
            else:
                assert mech.l2_sq == 2.0
            if name == "dirichlet":
                assert mech.linf == 1.0


def test_class_prior_is_released_from_the_class_counts():
    """The first release sees N_j itself (the author's code released K * N_j)."""
    seen = []

    class Recorder(DirichletMechanism):
        def release(self, counts, rng=None):
            seen.append(np.array(counts))
            return super().release(counts, rng)

    X, y, n_values, d = synthetic()
    PrivateNaiveBayes(Recorder, privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, y, n_values=n_values, n_classes=d)
    np.testing.assert_array_equal(seen[0], [np.bincount(y, minlength=d)])
    assert len(seen) == X.shape[1] + 1  # K + 1 releases
    for k, table in enumerate(seen[1:]):
        np.testing.assert_array_equal(table[0].sum(axis=1), np.bincount(y, minlength=d))
        assert table.shape == (1, d, n_values[k])


def test_class_prior_has_the_dirichlet_spread_of_the_class_counts():
    """Statistical check: Var of the released pi_0 is that of Beta(r N_0 + a, r N_1 + a).

    With the counts multiplied by K the variance would be about K times smaller.
    """
    X, y, n_values, d = synthetic(n=400, n_values=(2,) * 8, n_classes=2)
    class_counts, tables = count(X, y, n_values, d)
    eps = 0.02
    draws = 40_000
    cal = get("dirichlet").calibrate(RenyiDP(5.0, eps), spec_of(X, y, n_values, d))
    prior, _ = release_parameters(class_counts, tables, cal, n_draws=draws, rng=np.random.default_rng(5))
    mech = DirichletMechanism(RenyiDP(5.0, eps).split(9).epsilon, 5.0)
    a, b = mech.concentration(class_counts)
    beta_var = a * b / ((a + b) ** 2 * (a + b + 1))
    var = np.exp(prior[:, 0]).var()
    # relative standard error of a sample variance ~ sqrt(2 / draws) = 0.7 %: 5 % is safe,
    # and the K-times-counts variance differs by a factor near 8
    assert abs(var / beta_var - 1) < 0.05
    a8, b8 = mech.concentration(8 * class_counts)
    assert var / (a8 * b8 / ((a8 + b8) ** 2 * (a8 + b8 + 1))) > 4


# ------------------------------------------------------ one release per attribute

def test_one_release_per_attribute_spends_at_most_epsilon():
    """Proposition 7.1's argument, checked exactly on small tables.

    Replacing one record moves cell (j, c) down and cell (j', c') up by one. The rows
    are released independently, so the Renyi divergence of the whole table is the sum
    over rows; it stays below the per-release level, whether the two cells share a row
    or not.
    """
    lam, eps = 5.0, 0.3
    mech = get("dirichlet")._renyi_release(RenyiDP(lam, eps), model_spec([4], 3, 60), 1)
    rng = np.random.default_rng(7)
    worst = {True: 0.0, False: 0.0}
    pairs = list(itertools.product(itertools.product(range(3), range(4)), repeat=2))
    for _ in range(30):
        table = rng.integers(0, 6, size=(3, 4)).astype(float)
        moves = [(a, b) for a, b in pairs if a != b and table[a] > 0]
        others = np.repeat(table[None], len(moves), axis=0)
        for i, (a, b) in enumerate(moves):
            others[i][a] -= 1
            others[i][b] += 1
        u = np.broadcast_to(mech.concentration(table), others.shape)
        v = mech.concentration(others)
        total = np.maximum(renyi_divergence_dirichlet(u, v, lam).sum(axis=1),
                           renyi_divergence_dirichlet(v, u, lam).sum(axis=1))
        same_row = np.array([a[0] == b[0] for a, b in moves])
        for flag in (True, False):
            worst[flag] = max(worst[flag], total[same_row == flag].max())
    assert 0 < worst[True] <= eps and 0 < worst[False] <= eps


# ------------------------------------------------------------------ counts and MLE

def test_count_matches_loops():
    X, y, n_values, d = synthetic()
    class_counts, tables = count(X, y, n_values, d)
    np.testing.assert_array_equal(class_counts, np.bincount(y, minlength=d))
    for k, v in enumerate(n_values):
        expected = np.zeros((d, v))
        for row, label in zip(X[:, k], y):
            expected[label, row] += 1
        np.testing.assert_array_equal(tables[k], expected)


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_mle_equals_sklearn_categorical_nb_synthetic(alpha):
    X, y, n_values, d = synthetic(n=300, n_values=(2, 7, 5, 3, 9))
    mle = SmoothedEstimate.configured(smoothing=alpha)
    ours = PrivateNaiveBayes(mle).fit(X, y, n_values=n_values, n_classes=d)
    ref = CategoricalNB(alpha=alpha, min_categories=n_values).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=0)
    np.testing.assert_allclose(ours.class_log_prior_, ref.class_log_prior_, rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_mle_equals_sklearn_categorical_nb_on_the_datasets(name):
    from lib.experiments.preprocessing import prepare

    s = prepare(name)
    assert get("mle").smoothing == 0.1  # the registered estimate is the author's
    ours = PrivateNaiveBayes("mle").fit(s.X_train, s.y_train, n_values=s.n_values,
                                                       n_classes=s.n_classes)
    ref = CategoricalNB(alpha=0.1, min_categories=s.n_values).fit(s.X_train, s.y_train)
    np.testing.assert_allclose(ours.predict_proba(s.X_test), ref.predict_proba(s.X_test),
                               rtol=1e-10, atol=1e-300)


# ------------------------------------------------------------------ releases

@pytest.mark.parametrize("mechanism", RDP_MECHANISMS)
def test_released_parameters_are_distributions_over_values(mechanism):
    X, y, n_values, d = synthetic()
    target = RenyiDP(5.0, 1e-3) if get(mechanism).private else None
    model = PrivateNaiveBayes(mechanism, privacy=target, random_state=1).fit(X, y, n_values=n_values,
                                                                          n_classes=d)
    assert model.class_log_prior_.shape == (d,)
    assert np.isclose(logsumexp(model.class_log_prior_), 0)
    for k, table in enumerate(model.feature_log_prob_):
        assert table.shape == (d, n_values[k])
        assert np.all(np.isfinite(table))
        np.testing.assert_allclose(logsumexp(table, axis=1), 0, atol=1e-12)
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), d) and np.allclose(proba.sum(axis=1), 1)


def test_tiny_epsilon_many_attributes_stays_finite():
    X, y, n_values, d = synthetic(n=2000, n_values=(17,) * 64, n_classes=10)
    for mechanism in PRIVATE_RDP:
        cal = get(mechanism).calibrate(RenyiDP(5.0, 1e-3), spec_of(X, y, n_values, d))
        prior, tables = release_parameters(*count(X, y, n_values, d), cal, n_draws=50, rng=2)
        assert np.isfinite(prior).all() and all(np.isfinite(t).all() for t in tables)
        lp = log_proba(X, prior, tables, n_values)
        assert np.isfinite(lp).all()


def test_random_model():
    X, y, n_values, d = synthetic()
    model = PrivateNaiveBayes("random", random_state=4).fit(X, y, n_values=n_values, n_classes=d)
    np.testing.assert_allclose(model.predict_proba(X), 1 / d)
    guesses = model.predict(X, rng=4)   # the guesses come from the generator given to predict
    again = PrivateNaiveBayes("random").fit(X, y, n_values=n_values, n_classes=d).predict(X, rng=4)
    np.testing.assert_array_equal(guesses, again)
    assert set(np.unique(guesses)) == set(range(d))


def test_batched_log_proba_equals_single_models():
    X, y, n_values, d = synthetic()
    cal = get("gaussian").calibrate(RenyiDP(5.0, 0.1), spec_of(X, y, n_values, d))
    prior, tables = release_parameters(*count(X, y, n_values, d), cal, n_draws=3, rng=0)
    batch = log_proba(X, prior, tables, n_values)
    for b in range(3):
        direct = prior[b] + sum(tables[k][b][:, X[:, k]].T for k in range(X.shape[1]))
        direct -= logsumexp(direct, axis=1, keepdims=True)
        np.testing.assert_allclose(batch[b], direct, rtol=1e-12, atol=1e-12)


def test_reproducible_and_seeded():
    X, y, n_values, d = synthetic()

    def fit(state):
        return PrivateNaiveBayes("laplace", privacy=RenyiDP(5.0, 0.3), random_state=state).fit(X, y, n_values=n_values,
                                                                                 n_classes=d)

    np.testing.assert_array_equal(fit(3).class_log_prior_, fit(3).class_log_prior_)
    np.testing.assert_array_equal(fit(np.random.default_rng(3)).class_log_prior_, fit(3).class_log_prior_)
    assert not np.array_equal(fit(3).class_log_prior_, fit(4).class_log_prior_)
    with pytest.raises(ValueError, match="rng"):
        fit(-1)


def test_predict_breaks_ties_at_the_first_class():
    X = np.array([[0], [1]])
    y = np.array([0, 1])
    model = PrivateNaiveBayes("mle").fit(np.array([[0], [0], [1], [1]]), np.array([0, 1, 0, 1]))
    np.testing.assert_array_equal(model.predict(X), [0, 0])
    assert model.n_classes_ == 2 and list(model.n_values_) == [2]
    assert y.shape == (2,)


def test_validation():
    X, y, n_values, d = synthetic()
    with pytest.raises(ValueError, match="mechanism"):
        PrivateNaiveBayes("exponential", privacy=RenyiDP(5.0, 1.0)).fit(X, y)
    with pytest.raises(ValueError, match=r"privacy \(a target .*\) is required"):
        PrivateNaiveBayes("dirichlet").fit(X, y, n_values=n_values, n_classes=d)
    with pytest.raises(ValueError, match="epsilon"):
        PrivateNaiveBayes("gaussian", privacy=RenyiDP(5.0, -1.0)).fit(X, y, n_values=n_values, n_classes=d)
    # whole-valued floats are codes (scikit-learn's encoders output float64); others name the fix
    as_float = PrivateNaiveBayes("mle").fit(X.astype(float), y)
    np.testing.assert_array_equal(as_float.feature_log_prob_[0], PrivateNaiveBayes("mle").fit(X, y).feature_log_prob_[0])
    with pytest.raises(ValueError, match="non-integral.*OrdinalEncoder"):
        PrivateNaiveBayes("mle").fit(X + 0.5, y)
    with pytest.raises(ValueError, match="codes"):
        PrivateNaiveBayes("mle").fit(X, y, n_values=np.maximum(n_values - 1, 2), n_classes=d)
    with pytest.raises(ValueError, match="n_values"):
        PrivateNaiveBayes("mle").fit(X, y, n_values=[2, 2], n_classes=d)
    with pytest.raises(ValueError, match="class codes"):
        PrivateNaiveBayes("mle").fit(X, y, n_values=n_values, n_classes=2)
    with pytest.raises(ValueError, match="y must be"):
        PrivateNaiveBayes("mle").fit(X, y[:-1], n_values=n_values, n_classes=d)
    with pytest.raises(ValueError, match="not fitted"):
        PrivateNaiveBayes("mle").predict(X)
    model = PrivateNaiveBayes("mle").fit(X, y, n_values=n_values, n_classes=d)
    with pytest.raises(ValueError, match="columns"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="codes"):
        model.predict(X + 10)
    assert (count(X, y, n_values, d)[1][0] == 0).any()  # an unobserved cell: no log without smoothing
    with pytest.raises(ValueError, match="smoothing"):
        PrivateNaiveBayes(SmoothedEstimate.configured(smoothing=0)).fit(X, y, n_values=n_values, n_classes=d)
    with pytest.raises(ValueError, match="smoothing"):
        SmoothedEstimate(smoothing=-1.0)
    with pytest.raises(ValueError, match="no setting"):
        SmoothedEstimate.configured(alpha=1.0)
    with pytest.raises(ValueError, match="n_draws"):
        release_parameters(*count(X, y, n_values, d),
                           get("mle").calibrate(NotPrivate(), spec_of(X, y, n_values, d)), n_draws=0)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        get("svm")
    # a class with no training row: its prior count is 0, which the unsmoothed prior refuses
    with pytest.raises(ValueError, match="smoothing is 0"):
        PrivateNaiveBayes("mle").fit(X, np.zeros_like(y), n_values=n_values, n_classes=2)


def test_clip_floor_is_passed_to_the_noise_mechanisms():
    from lib.mechanisms.noise import clip_and_normalise

    X, y, n_values, d = synthetic()
    class_counts, tables = count(X, y, n_values, d)
    for base in (GaussianMechanism, LaplaceMechanism):
        cls = base.configured(clip_floor=50.0)
        assert cls.name == base.name and base.clip_floor != 50.0  # a variant; the registered class is unchanged
        cal = cls.calibrate(RenyiDP(5.0, 1e-3), spec_of(X, y, n_values, d))
        assert all(m.floor == 50.0 for m in cal.releases)
        prior, _ = release_parameters(class_counts, tables, cal, rng=0)
        mech = base(RenyiDP(5.0, 1e-3).split(X.shape[1] + 1).epsilon, 5.0, floor=50.0)
        expected = clip_and_normalise(mech.noisy_counts(class_counts[None], rng=0), floor=50.0)
        np.testing.assert_array_equal(prior, np.log(expected))
        model = PrivateNaiveBayes(cls, privacy=RenyiDP(5.0, 1e-3), random_state=0)
        model.fit(X, y, n_values=n_values, n_classes=d)
        np.testing.assert_array_equal(model.class_log_prior_, prior[0])


def test_release_with_per_release_mechanism_objects():
    X, y, n_values, d = synthetic()
    class_counts, tables = count(X, y, n_values, d)
    # the RDP path is a special case: the same object for every release, same draws
    mech = DirichletMechanism(RenyiDP(5.0, 1.0).split(X.shape[1] + 1).epsilon, 5.0)
    objects = [mech] * (X.shape[1] + 1)
    cal = get("dirichlet").calibrate(RenyiDP(5.0, 1.0), spec_of(X, y, n_values, d))
    assert len({id(m) for m in cal.releases}) == 1  # one object shared by all releases
    p1, t1 = release_parameters(class_counts, tables, objects, n_draws=3, rng=7)
    p2, t2 = release_parameters(class_counts, tables, cal, n_draws=3, rng=7)
    np.testing.assert_array_equal(p1, p2)
    for a, b in zip(t1, t2):
        np.testing.assert_array_equal(a, b)
    # one object per release, in order: class counts first, then attribute k
    mixed = ([DirichletMechanism.from_concentration(2.0, 1.0)]
             + [GaussianMechanism.from_sigma(1e-9), LaplaceMechanism.from_scale(1e-9)]
             + [GaussianMechanism.from_sigma(1e-9)] * (X.shape[1] - 2))
    prior, feature = release_parameters(class_counts, tables, mixed, n_draws=2, rng=0)
    assert prior.shape == (2, d) and [t.shape for t in feature] == [(2,) + t.shape for t in tables]
    exact = np.log(np.maximum(tables[0], 1e-6) / np.maximum(tables[0], 1e-6).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(feature[0][0], exact, atol=1e-6)
    with pytest.raises(ValueError, match="sequence of 5 objects"):
        release_parameters(class_counts, tables, objects[:3], rng=0)
    with pytest.raises(ValueError, match="release"):
        release_parameters(class_counts, tables, [object()] * 5, rng=0)
    refused = ModelCalibration("gohari", False, (), {"reason": "no r reaches the target"})
    with pytest.raises(ValueError, match="did not attain its target: no r reaches"):
        release_parameters(class_counts, tables, refused, rng=0)


def test_model_spec_and_releases_of():
    spec = model_spec(np.array([2, 7, 5]), 3, 123)
    assert spec.shapes == ((1, 3), (3, 2), (3, 7), (3, 5))
    assert spec.n_total == 123 and spec.priors == (0,) and spec.n_releases == 4
    assert spec.domain_sizes == (3, 2, 7, 5)
    cal = get("mle").calibrate(NotPrivate(), spec)
    # the class prior is unsmoothed, the tables share one smoothed estimate
    assert [m.smoothing for m in cal.releases] == [0.0, 0.1, 0.1, 0.1]
    assert cal.releases[1] is cal.releases[3] and cal.releases[0] is not cal.releases[1]
    assert releases_of(cal, 4) == cal.releases
    assert releases_of(list(cal.releases), 4) == cal.releases
    with pytest.raises(ValueError, match="sequence of 3 objects"):
        releases_of(cal, 3)
    with pytest.raises(ValueError, match="n_classes"):
        model_spec([2, 2], 1, 10)


N_VALUES = np.array([2, 3])


X = np.array([[0, 1], [1, 2], [1, 0], [0, 0], [1, 1]])


Y = np.array([0, 0, 1, 1, 1])


def _released():
    class_counts, feature_counts = nb.count(X, Y, N_VALUES, 2)
    cal = DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), nb.model_spec(N_VALUES, 2, len(Y)))
    return nb.release_parameters(class_counts, feature_counts, cal, n_draws=3, rng=0)


@pytest.mark.parametrize("bad, column, row", [(2, 0, 1), (-1, 0, 1), (3, 1, 0), (10**12, 1, 2)])
def test_log_proba_refuses_a_code_outside_the_domain(bad, column, row):
    prior, tables = _released()
    test = X.copy()
    test[row, column] = bad
    with pytest.raises(ValueError) as err:  # 10**12 crashed the interpreter before the fix
        nb.log_proba(test, prior, tables, N_VALUES)
    message = str(err.value)
    assert f"column {column}" in message and f"row {row}" in message and str(bad) in message
    assert f"[0, {N_VALUES[column] - 1}]" in message


def test_log_proba_refuses_tables_that_do_not_fit_n_values():
    prior, tables = _released()
    with pytest.raises(ValueError, match=r"log_feature\[1\] must have shape"):
        nb.log_proba(X, prior, [tables[0], tables[1][..., :2]], N_VALUES)
    with pytest.raises(ValueError, match="one table per attribute"):
        nb.log_proba(X, prior, tables[:1], N_VALUES)


@pytest.mark.parametrize("func", [nb.cross_entropy, nb.accuracy])
@pytest.mark.parametrize("bad", [2, -1, 7])
def test_scores_refuse_labels_outside_the_classes(func, bad):
    prior, tables = _released()
    lp = nb.log_proba(X, prior, tables, N_VALUES)
    y = Y.copy()
    y[3] = bad
    with pytest.raises(ValueError, match=rf"y must hold class codes in \[0, 1\]; got {bad} at index 3"):
        func(lp, y)


@pytest.mark.parametrize("func", [nb.cross_entropy, nb.accuracy])
def test_scores_refuse_float_labels_and_wrong_lengths(func):
    prior, tables = _released()
    lp = nb.log_proba(X, prior, tables, N_VALUES)
    with pytest.raises(TypeError, match="y must be a 1-D integer array"):
        func(lp, Y.astype(float) + 0.5)
    with pytest.raises(ValueError, match="one label per row"):
        func(lp, Y[:-1])


def test_a_user_built_split_with_a_bad_test_code_is_refused_by_the_evaluation():
    split = Split(X, np.array([[0, 3]]), Y, np.array([1]), N_VALUES, 2, ("a", "b"), (0, 1))
    task = NaiveBayesTask(split)
    cal = DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), task.spec)
    batch = task.release(cal, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"X must hold codes in \[0, 2\] in column 1"):
        task.score([batch])
    bad_label = split._replace(X_test=np.array([[0, 2]]), y_test=np.array([2]))
    with pytest.raises(ValueError, match="y must hold class codes"):
        NaiveBayesTask(bad_label).score([batch])


def test_private_naive_bayes_refuses_bad_codes_at_prediction():
    model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, Y, n_values=N_VALUES, n_classes=2)
    for bad in ([[2, 0]], [[-1, 0]], [[0, 10**12]]):
        with pytest.raises(ValueError, match="X must hold codes"):
            model.predict_proba(np.array(bad))
    np.testing.assert_array_equal(model.predict(X.astype(float)), model.predict(X))  # whole floats are codes
    with pytest.raises(ValueError, match="non-integral"):
        model.predict(X + 0.5)


def test_inferred_labels_must_be_zero_to_k_minus_one():
    # only the non-private estimate infers classes (the sorted labels, as scikit-learn's); a private
    # model is refused before it reads y (which classes are absent would be a private fact)
    assert PrivateNaiveBayes("mle").fit(X, np.array([0, 0, 5, 5, 5])).classes_.tolist() == [0, 5]
    with pytest.raises(ValueError, match="n_classes .* must be given"):
        PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, np.array([0, 0, 5, 5, 5]))
    with pytest.raises(ValueError, match="y must hold class codes in"):
        PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(
            X, np.array([0, 0, -1, 1, 1]), n_values=N_VALUES, n_classes=2)
    # A declared public domain may have empty classes.
    model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(
        X, np.array([0, 0, 5, 5, 5]), n_values=N_VALUES, n_classes=6)
    assert model.n_classes_ == 6 and model.class_log_prior_.shape == (6,)
    assert nb.count(X, np.array([0, 0, 5, 5, 5]), N_VALUES, 6)[0].tolist() == [2, 0, 0, 0, 0, 3]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_valid_codes_give_the_brute_force_posterior_and_one_bad_code_is_named(data):
    """Validation does not change a valid result: log_proba equals a direct sum over the tables."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n_values = np.array(data.draw(st.lists(st.integers(2, 6), min_size=1, max_size=4)))
    d = data.draw(st.integers(2, 4))
    B = 2
    prior = np.log(rng.dirichlet(np.ones(d), size=B))
    tables = [np.log(rng.dirichlet(np.ones(n), size=(B, d))) for n in n_values]
    test = np.stack([rng.integers(0, n, size=5) for n in n_values], axis=1)
    got = nb.log_proba(test, prior, tables, n_values)
    scores = prior[:, None, :] + sum(t[:, :, test[:, k]].transpose(0, 2, 1) for k, t in enumerate(tables))
    want = scores - np.logaddexp.reduce(scores, axis=-1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)  # two summation orders of ~10 terms
    j = data.draw(st.integers(0, len(n_values) - 1))
    test[2, j] = data.draw(st.sampled_from([-1, int(n_values[j]), int(n_values[j]) + 1000]))
    with pytest.raises(ValueError, match=f"column {j}"):
        nb.log_proba(test, prior, tables, n_values)



@pytest.mark.parametrize("X, y", [
    (np.array([[10**10, 0], [0, 1]]), np.array([0, 1])),   # 149 GiB before the fix
    (np.array([[0, 0], [1, 1]]), np.array([0, 10**10])),   # 298 GiB before the fix
])
def test_private_naive_bayes_refuses_an_absurd_inferred_domain(X, y):
    _quick(lambda: PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, y),
           "must be given")   # refused before anything is inferred or allocated
    if X.max() > 1:   # the non-private estimate infers n_values, and refuses an absurd one
        _quick(lambda: PrivateNaiveBayes("mle").fit(X, y), "cells")


def test_count_refuses_absurd_declared_domains():
    X, y = np.array([[0, 1]]), np.array([0])
    _quick(lambda: nb.count(X, y, [10**12, 2], 2), "cells")
    _quick(lambda: nb.count(X, y, [2, 2], 10**12), "cells")
    _quick(lambda: nb.count(X, y, [2**62, 2**62], 2), "cells")  # the int64 sum wraps around


@pytest.mark.parametrize("d", [2, 3, 10])
def test_fused_scores_equal_the_reference(d):
    rng = np.random.default_rng(d)
    n_values = np.array([2, 5, 3, 7])
    for n, B in ((1, 1), (50, 4), (3001, 7)):
        X = np.column_stack([rng.integers(v, size=n) for v in n_values])
        y = rng.integers(d, size=n)
        prior, tables = random_nb_models(rng, B, d, n_values)
        lp, ce, acc = nb_scores_by_direct_sum(X, y, prior, tables)
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
    _, ref_ce, ref_acc = nb_scores_by_direct_sum(X, y, prior, tables)
    np.testing.assert_array_equal(acc, ref_acc)
    np.testing.assert_array_equal(acc, np.mean(y == 0))
    np.testing.assert_allclose(ce, np.log(d), rtol=1e-14)
    np.testing.assert_allclose(ce, ref_ce, rtol=1e-14)


def test_chunking_does_not_change_results(monkeypatch):
    rng = np.random.default_rng(3)
    n_values = np.array([4, 2, 6])
    X = np.column_stack([rng.integers(v, size=1000) for v in n_values])
    y = rng.integers(3, size=1000)
    prior, tables = random_nb_models(rng, 5, 3, n_values)
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


def test_scores_refuses_bad_input():
    n_values = np.array([2, 2])
    prior, tables = random_nb_models(np.random.default_rng(0), 1, 2, n_values)
    X = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="one label per row"):
        nb.scores(X, np.array([0]), prior, tables, n_values)
    with pytest.raises(ValueError, match="class codes"):
        nb.scores(X, np.array([0, 2]), prior, tables, n_values)
    with pytest.raises(ValueError, match="at least one row"):
        nb.scores(X[:0], np.array([], dtype=int), prior, tables, n_values)
    with pytest.raises(ValueError, match="codes in"):
        nb.scores(np.array([[0, 2]]), np.array([0]), prior, tables, n_values)


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
    prior, tables = random_nb_models(rng, 1, d, n_values)
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
