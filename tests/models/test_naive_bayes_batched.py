"""The batched release and scoring paths of lib.models.naive_bayes equal the table-by-table ones, bit for bit.

``log_releases`` releases all tables of stock Dirichlet and noise mechanisms
with one draw call into one buffer (the classes' ``log_release_tables``); ``scores`` reduces short
class axes column by column. Each is compared here with the reference
computation it replaces (each object's own ``release`` per table; numpy's
``sum``, ``max`` and ``argmax``): equal arrays, and the random stream left in
the same state.
"""

from unittest import mock

import numpy as np
import pytest

from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib.models import naive_bayes as nb
from lib.models.naive_bayes import scoring as scoring
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism, SmoothedEstimate
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
from lib.mechanisms.gohari.mechanism import GohariMechanism
from lib.mechanisms.protocol import Mechanism, release_class
from lib.models.naive_bayes import log_releases, model_spec, release_parameters


def _batched(objects, tables, n_draws, rng):
    """The one-buffer release of the objects' class, or None (nothing drawn) where it takes the protocol's loop."""
    looped = []

    def loop(cls, *args):
        looped.append(cls)

    with mock.patch.object(Mechanism, "log_release_tables", classmethod(loop)):
        out = release_class(objects).log_release_tables(objects, tables, n_draws, rng)
    return None if looped else out


def _tables(rng, shapes, scale=50):
    return [rng.integers(0, scale, size=s).astype(float) for s in shapes]


def _one_by_one(objects, tables, n_draws, rng):
    """The reference: every object's own release of its broadcast table, in order."""
    return [np.log(m.release(np.broadcast_to(t, (n_draws,) + t.shape), rng)) for m, t in zip(objects, tables)]


SHAPES = [(1, 2), (2, 10), (2, 3), (2, 42), (2, 2)]


def _objects(kind, shapes):
    spec = model_spec([s[1] for s in shapes[1:]], 2, 1000)
    if kind == "gohari":
        return GohariMechanism.calibrate(ApproximateDP(1.0, 1e-5), spec).releases
    cls = {"dirichlet": DirichletMechanism, "gaussian": GaussianMechanism, "laplace": LaplaceMechanism}[kind]
    return cls.calibrate(RenyiDP(5.0, 0.5), spec).releases


@pytest.mark.parametrize("kind", ["dirichlet", "gohari", "gaussian", "laplace"])
@pytest.mark.parametrize("n_draws", [1, 7])
def test_batched_release_is_the_table_by_table_release(kind, n_draws):
    objects = _objects(kind, SHAPES)
    tables = _tables(np.random.default_rng(3), SHAPES)
    tables[2][1] = 0.0  # an empty row
    assert _batched(objects, tables, n_draws, np.random.default_rng(0)) is not None  # the fast path
    r1, r2 = np.random.default_rng(11), np.random.default_rng(11)
    got, want = log_releases(objects, tables, n_draws, r1), _one_by_one(objects, tables, n_draws, r2)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, w)
    assert r1.random() == r2.random()  # the same number of variates drawn


def test_mixed_or_custom_objects_take_the_table_by_table_path():
    shapes = SHAPES[:3]
    tables = _tables(np.random.default_rng(1), shapes)
    dirichlet, gaussian = _objects("dirichlet", shapes), _objects("gaussian", shapes)
    mixed = (dirichlet[0], gaussian[1], dirichlet[2])
    estimate = (SmoothedEstimate(),) * 3  # has log_release
    for objects in (mixed, estimate):
        rng = np.random.default_rng(5)
        assert _batched(objects, tables, 3, rng) is None
        assert rng.random() == np.random.default_rng(5).random()  # nothing drawn
    got = log_releases(mixed, tables, 3, np.random.default_rng(2))
    want = _one_by_one(mixed, tables, 3, np.random.default_rng(2))
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_dirichlet_rare_paths_fall_back_before_drawing():
    tables = _tables(np.random.default_rng(2), [(1, 3), (3, 4)])
    small = (DirichletMechanism.from_concentration(r=0.1, alpha=0.2),) * 2  # shape parameters below 1
    rng = np.random.default_rng(4)
    assert _batched(small, tables, 2, rng) is None
    assert rng.random() == np.random.default_rng(4).random()
    got = log_releases(small, tables, 2, np.random.default_rng(8))
    want = _one_by_one(small, tables, 2, np.random.default_rng(8))
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    huge = (DirichletMechanism.from_concentration(r=1e300, alpha=2.0),) * 2  # r * counts overflows
    with pytest.raises(ValueError, match="overflows double precision"):
        log_releases(huge, [t + 1e10 for t in tables], 2, np.random.default_rng(0))


def test_rows_whose_sum_overflows_are_rescaled_as_release_does():
    big = [np.full((2, 30), 1e307), np.full((1, 2), 1e300)]  # the first table's row sums overflow
    for objects in [(GaussianMechanism.from_sigma(1.0),) * 2, (LaplaceMechanism.from_scale(1.0),) * 2,
                    (DirichletMechanism.from_concentration(r=1.0, alpha=2.0),) * 2]:
        got = log_releases(objects, big, 3, np.random.default_rng(6))
        want = _one_by_one(objects, big, 3, np.random.default_rng(6))
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    loud = (GaussianMechanism.from_sigma(1.0), GaussianMechanism.from_sigma(1e308))
    with pytest.raises(ValueError, match=r"overflow double precision \(release 1\)"):
        log_releases(loud, [np.ones((1, 2)), np.full((1, 2), 1.7e308)], 50, np.random.default_rng(0))


def test_release_parameters_names_the_bad_table():
    cal = DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), model_spec([2, 3], 2, 10))
    good = [np.ones((2, 2)), np.ones((2, 3))]
    with pytest.raises(ValueError, match=r"feature_counts\[1\]"):
        release_parameters(np.ones(2), [good[0], -good[1]], cal, rng=0)
    with pytest.raises(ValueError, match="class_counts"):
        release_parameters(np.array([1.0, np.nan]), good, cal, rng=0)


@pytest.mark.parametrize("d", list(range(2, 17)))
def test_column_sum_is_numpys_sum(d):
    rng = np.random.default_rng(d)
    for shape in [(1310, 100, d), (7, d), (3, 5, d)]:
        e = np.exp(rng.standard_normal(shape) * 6)
        assert np.array_equal(scoring._column_sum(e), e.sum(axis=-1))


def test_column_max_is_numpys_max_and_first_argmax():
    rng = np.random.default_rng(0)
    s = rng.integers(-3, 3, size=(500, 40, 7)).astype(float)  # many ties
    top, arg = scoring._column_max(s)
    assert np.array_equal(top, s.max(axis=-1)) and np.array_equal(arg, s.argmax(axis=-1))


@pytest.mark.parametrize("d", [3, 10, 17])
def test_scores_of_many_classes_match_log_proba(d):
    rng = np.random.default_rng(d)
    n_values = np.array([3, 5, 2, 4])
    X = np.column_stack([rng.integers(0, v, 400) for v in n_values])
    y = rng.integers(0, d, 400)
    prior = np.log(rng.dirichlet(np.ones(d), size=6))
    tables = [np.log(rng.dirichlet(np.ones(v), size=(6, d))) for v in n_values]
    tables[1][2, 0] = tables[1][2, 1]  # ties between classes in one model
    ce, acc = nb.scores(X, y, prior, tables, n_values)
    lp = nb.log_proba(X, prior, tables, n_values)
    np.testing.assert_allclose(ce, nb.cross_entropy(lp, y), rtol=1e-13)  # sums in another order
    assert np.array_equal(acc, nb.accuracy(lp, y))


def test_two_class_scores_from_log_odds_match_log_proba():
    """The log-odds path regroups the sums (class 1 minus class 0 per attribute): equal to rounding."""
    rng = np.random.default_rng(12)
    n_values = np.array([4, 2, 6, 10, 3])
    X = np.column_stack([rng.integers(0, v, 3000) for v in n_values])
    y = rng.integers(0, 2, 3000)
    prior = np.log(rng.dirichlet(np.ones(2), size=9))
    tables = [np.log(rng.dirichlet(np.ones(v), size=(9, 2))) for v in n_values]
    assert scoring._margins(prior, scoring._model(X, prior, tables, n_values)[2]) is not None  # the log-odds path
    ce, acc = nb.scores(X, y, prior, tables, n_values)
    lp = nb.log_proba(X, prior, tables, n_values)
    # |error| of a sum of 5 log-ratios of size ~10: a few ulps of 10 per row, far below 1e-12 of the mean
    np.testing.assert_allclose(ce, nb.cross_entropy(lp, y), rtol=1e-12)
    assert np.array_equal(acc, nb.accuracy(lp, y))
    # equal class tables: every row ties at log-odds exactly 0 (class 0 wins) and loses exactly log 2
    same = [np.repeat(t[:, :1], 2, axis=1) for t in tables]
    ce, acc = nb.scores(X, y, np.log(np.full((9, 2), 0.5)), same, n_values)
    assert np.all(acc == np.mean(y == 0))
    np.testing.assert_allclose(ce, np.log(2.0), rtol=1e-12)  # 3000 terms summed in order: error <= n eps = 7e-13
    # a zero probability (log -inf) leaves the log-odds path for the class scores
    broken = [t.copy() for t in tables]
    broken[0][0, 1, 0] = -np.inf
    assert scoring._margins(prior, scoring._model(X, prior, broken, n_values)[2]) is None
    ce, acc = nb.scores(X, y, prior, broken, n_values)
    lp = nb.log_proba(X, prior, broken, n_values)
    np.testing.assert_allclose(ce, nb.cross_entropy(lp, y), rtol=1e-12)
    assert np.array_equal(acc, nb.accuracy(lp, y))
