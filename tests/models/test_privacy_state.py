"""What a fitted estimator keeps: only the release, the public domain and the calibration (issue 23).

A fitted :class:`lib.models.naive_bayes.PrivateNaiveBayes` or
:class:`lib.models.mixed_naive_bayes.MixedNaiveBayes` is an object the library hands
out, pickled and shared as a model. It must carry no exact statistic and no
generator state: with the generator (or the seed) of the fit, the release can be
replayed from each candidate data set and only the true one reproduces it bit for
bit, which tells two neighbours apart with certainty.

The tests fit on two neighbouring data sets (one row replaced, its label and
values changed) with the same seed, and require the two unpickled models to be
equal in every attribute but the released values (compared as pickled bytes and
as a canonical form of the whole object graph: types, shapes, exact bytes). They
fit one data set with two seeds and require the same. They walk the unpickled
object graph and scan the pickle stream for numpy's generators, and search
every array of the graph for the exact statistics.
"""

from __future__ import annotations

import copy
import pickle
import pickletools

import numpy as np
import pytest

from lib.privacy.guarantees import RenyiDP
from lib.models import mixed_naive_bayes as gnb
from lib.models.naive_bayes import PrivateNaiveBayes, count

from tests.conftest import categorical_rows

#: Every mechanism a PrivateNaiveBayes can be fitted with by name (private, non-private, uninformative).
NB_MECHANISMS = ("dirichlet", "gaussian", "laplace", "mle", "random")
NB_PRIVATE = ("dirichlet", "gaussian", "laplace")
#: The attributes of a fitted PrivateNaiveBayes that hold released values.
NB_RELEASED = ("class_log_prior_", "feature_log_prob_")
#: The entries of MixedNaiveBayes.params_ that hold released values (the rest is public).
MIXED_RELEASED = ("log_prior", "log_tables", "mu", "sd")
MIXED_PRIVATE = ("zc", "vaidya", "bun_steinke")
GENERATOR_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence, np.random.RandomState)


# ----------------------------------------------------------------------------- helpers

def _neighbours():
    """Categorical data and a neighbour: row 0 replaced, its label and every value changed."""
    X, y, n_values, d = categorical_rows(n=400, n_values=(3, 4, 2, 5), n_classes=3, seed=11)
    Xn, yn = X.copy(), y.copy()
    Xn[0] = (X[0] + 1) % n_values
    yn[0] = (y[0] + 1) % d
    return (X, y), (Xn, yn), np.asarray(n_values), d


def _mixed_neighbours():
    """Mixed data (2 categorical, 2 numerical columns) and a neighbour with row 0 replaced."""
    rng = np.random.default_rng(5)
    n = 300
    y = rng.integers(3, size=n)
    X = np.column_stack([rng.integers(4, size=n), rng.integers(3, size=n),
                         rng.normal(2.0 * y, 1.0), rng.uniform(0.0, 10.0, n)])
    Xn, yn = X.copy(), y.copy()
    Xn[0] = [(X[0, 0] + 1) % 4, (X[0, 1] + 1) % 3, X[0, 2] + 3.0, 10.0 - X[0, 3]]
    yn[0] = (y[0] + 1) % 3
    return (X, y), (Xn, yn)


MIXED_OPTIONS = dict(categorical=[True, True, False, False], n_values=[4, 3], n_classes=3,
                     bounds=[[-5.0, 10.0], [0.0, 10.0]])


def _walk(obj):
    """Every object reachable from ``obj`` through containers, arrays of objects and instance state."""
    seen, stack = {}, [obj]    # id -> object: the objects are kept alive, so no id is reused
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, (type, type(np), type(_walk))):
            continue
        seen[id(o)] = o
        yield o
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif isinstance(o, np.ndarray):
            if o.dtype == object:
                stack.extend(o.ravel().tolist())
        elif not isinstance(o, (str, bytes, int, float, complex, np.generic, type(None))):
            stack.extend(getattr(o, "__dict__", {}).values())
            for cls in type(o).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    if hasattr(o, slot):
                        stack.append(getattr(o, slot))


def _assert_no_generator(model):
    """Neither the pickle stream nor the unpickled object graph holds a numpy generator or seed sequence."""
    blob = pickle.dumps(model)
    globals_ = [arg for op, arg, _ in pickletools.genops(blob) if op.name in ("GLOBAL", "SHORT_BINUNICODE",
                                                                              "BINUNICODE", "UNICODE")]
    named = [g for g in globals_ if isinstance(g, str) and "numpy.random" in g]
    assert not named, f"the pickle names {named}"
    found = [type(o).__name__ for o in _walk(pickle.loads(blob)) if isinstance(o, GENERATOR_TYPES)]
    assert not found, f"the fitted model holds {found}"


def _arrays(model):
    return [o for o in _walk(model) if isinstance(o, np.ndarray) and o.size]


def _holds(arrays, exact):
    """Whether one of ``arrays`` equals ``exact`` (same shape, same values)."""
    exact = np.asarray(exact, dtype=float)
    return any(a.shape == exact.shape and a.dtype != object and np.array_equal(a.astype(float), exact)
               for a in arrays)


def _canon(o, values=True):
    """A canonical nested form of ``o``: types, shapes, dtypes and (if ``values``) the exact bytes."""
    if isinstance(o, np.ndarray):
        if o.dtype == object:
            return ("object array", o.shape, tuple(_canon(x, values) for x in o.ravel()))
        return ("ndarray", o.dtype.str, o.shape, o.tobytes() if values else None)
    if isinstance(o, np.generic):
        return (type(o).__name__, o.tobytes() if values else None)
    if isinstance(o, (bool, int, float, complex, str, bytes, type(None))):
        return (type(o).__name__, repr(o) if values else None)
    if isinstance(o, dict):
        return ("dict", tuple((_canon(k), _canon(v, values)) for k, v in o.items()))
    if isinstance(o, (list, tuple, set, frozenset)):
        items = sorted(o, key=repr) if isinstance(o, (set, frozenset)) else o
        return (type(o).__qualname__, tuple(_canon(x, values) for x in items))
    if isinstance(o, type):
        return ("type", o.__module__, o.__qualname__)
    if hasattr(o, "__dict__"):
        return (type(o).__qualname__, _canon(vars(o), values))
    return (type(o).__qualname__, pickle.dumps(o))


def _assert_differ_only_in(a, b, released):
    """``a`` and ``b`` hold the same attributes, equal in every one but ``released`` (which share shapes).

    Every non-released attribute must be equal both as pickled bytes and in
    :func:`_canon` (types, shapes and exact values of the whole graph below it).
    """
    assert list(vars(a)) == list(vars(b))
    for name in vars(a):
        if name in released:
            assert _canon(getattr(a, name), False) == _canon(getattr(b, name), False), name
        else:
            assert pickle.dumps(getattr(a, name)) == pickle.dumps(getattr(b, name)), name
            assert _canon(getattr(a, name)) == _canon(getattr(b, name)), name


def target(mechanism):
    """RenyiDP(5, 1) for a private mechanism; None (not private) for the references."""
    from lib.mechanisms.protocol import get

    return RenyiDP(5.0, 1.0) if get(mechanism).private else None


def _fit_nb(mechanism, data, n_values, d, seed):
    model = PrivateNaiveBayes(mechanism, privacy=target(mechanism), random_state=seed)
    return pickle.loads(pickle.dumps(model.fit(*data, n_values=n_values, n_classes=d)))


def _mixed_released(model):
    """``model`` with ``params_`` split: the released entries become attributes, the public rest stays."""
    out = copy.copy(model)
    out.params_ = {k: v for k, v in model.params_.items() if k not in MIXED_RELEASED}
    for k in MIXED_RELEASED:
        setattr(out, "released_" + k, model.params_[k])
    return out


def _fit_mixed(method, data, seed, **options):
    options = {**MIXED_OPTIONS, **options}
    model = gnb.MixedNaiveBayes(method, epsilon=2.0, rng=seed, **options)
    return pickle.loads(pickle.dumps(model.fit(*data)))


# ----------------------------------------------------------------------------- PrivateNaiveBayes

@pytest.mark.parametrize("seed", [3, "generator"])
@pytest.mark.parametrize("mechanism", NB_MECHANISMS)
def test_naive_bayes_pickles_of_neighbours_differ_only_in_the_release(mechanism, seed):
    D, Dn, n_values, d = _neighbours()
    make = (lambda: np.random.default_rng(3)) if seed == "generator" else (lambda: seed)
    a, b = _fit_nb(mechanism, D, n_values, d, make()), _fit_nb(mechanism, Dn, n_values, d, make())
    _assert_differ_only_in(a, b, NB_RELEASED)
    if mechanism != "random":    # the release itself does see the replaced row
        assert not np.array_equal(a.class_log_prior_, b.class_log_prior_)


@pytest.mark.parametrize("mechanism", NB_MECHANISMS)
def test_naive_bayes_keeps_nothing_of_the_seed(mechanism):
    D, _, n_values, d = _neighbours()
    a, b = _fit_nb(mechanism, D, n_values, d, 1), _fit_nb(mechanism, D, n_values, d, np.random.default_rng(2))
    _assert_differ_only_in(a, b, NB_RELEASED)
    assert a.random_state is None and b.random_state is None


@pytest.mark.parametrize("mechanism", NB_MECHANISMS)
def test_naive_bayes_pickle_holds_no_generator(mechanism):
    D, _, n_values, d = _neighbours()
    for seed in (0, np.random.default_rng(0), None):
        _assert_no_generator(PrivateNaiveBayes(mechanism, privacy=target(mechanism), random_state=seed)
                             .fit(*D, n_values=n_values, n_classes=d))


@pytest.mark.parametrize("mechanism", NB_PRIVATE)
def test_naive_bayes_holds_no_exact_count(mechanism):
    D, _, n_values, d = _neighbours()
    model = PrivateNaiveBayes(mechanism, privacy=target(mechanism), random_state=0).fit(*D, n_values=n_values, n_classes=d)
    class_counts, feature_counts = count(*D, n_values, d)
    for obj in (model, pickle.loads(pickle.dumps(model))):
        arrays = _arrays(obj)
        assert not _holds(arrays, class_counts)
        assert not any(_holds(arrays, t) for t in feature_counts)
        assert not any(_holds(arrays, t / t.sum(axis=1, keepdims=True)) for t in feature_counts)


def test_the_rewind_attack_finds_nothing():
    """The attack of the issue: rewind the model's generator and replay the release from the true counts.

    The old model kept its generator (``_rng``, and ``random_state`` when it was one)
    and its seed; rewinding reproduced the release bit for bit from the true data only.
    ``random_state`` is now the caller's parameter, unchanged by ``fit`` (scikit-learn's
    convention; a seed is a key the caller holds), and a fitted model handed on (pickle,
    deepcopy) holds no object the attack could rewind or re-seed.
    """
    D, _, n_values, d = _neighbours()
    for seed in (2024, np.random.default_rng(2024)):
        model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=seed).fit(
            *D, n_values=n_values, n_classes=d)
        assert model.random_state is seed
        for handed_on in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            assert handed_on.random_state is None
            assert [o for o in _walk(handed_on) if isinstance(o, GENERATOR_TYPES)] == []
            # nor the seed: no integer attribute of the model equals it
            assert not [k for k, v in vars(handed_on).items() if isinstance(v, (int, np.integer)) and v == 2024]
        # nor any fitted attribute in memory
        assert not [k for k, v in vars(model).items() if k.endswith("_") and (
            isinstance(v, GENERATOR_TYPES) or (isinstance(v, (int, np.integer)) and v == 2024))]


def test_a_bad_random_state_is_refused_before_anything_is_fitted():
    D, _, n_values, d = _neighbours()
    model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=-1)
    with pytest.raises(ValueError, match="rng"):
        model.fit(*D, n_values=n_values, n_classes=d)
    assert not hasattr(model, "class_log_prior_") and model.random_state == -1


def test_a_seed_fixes_every_fit_and_none_draws_fresh_noise():
    """An integer seed is a key: the same key gives the same release, refit or clone; None is fresh noise."""
    D, _, n_values, d = _neighbours()
    model = PrivateNaiveBayes("laplace", privacy=RenyiDP(5.0, 1.0), random_state=5)
    first = model.fit(*D, n_values=n_values, n_classes=d).class_log_prior_.copy()
    assert model.random_state == 5                     # fit does not change its parameters
    again = PrivateNaiveBayes("laplace", privacy=RenyiDP(5.0, 1.0), random_state=5).fit(*D, n_values=n_values, n_classes=d)
    np.testing.assert_array_equal(first, again.class_log_prior_)
    np.testing.assert_array_equal(first, model.fit(*D, n_values=n_values, n_classes=d).class_log_prior_)
    fresh = PrivateNaiveBayes("laplace", privacy=RenyiDP(5.0, 1.0))
    a = fresh.fit(*D, n_values=n_values, n_classes=d).class_log_prior_.copy()
    assert not np.array_equal(a, fresh.fit(*D, n_values=n_values, n_classes=d).class_log_prior_)


def test_random_model_guesses_from_the_generator_given_to_predict():
    D, _, n_values, d = _neighbours()
    X = D[0]
    model = PrivateNaiveBayes("random", random_state=4).fit(*D, n_values=n_values, n_classes=d)
    guesses = model.predict(X, rng=9)
    np.testing.assert_array_equal(guesses, np.random.default_rng(9).integers(d, size=len(X)))
    np.testing.assert_array_equal(guesses, model.predict(X, rng=np.random.default_rng(9)))
    assert set(np.unique(guesses)) == set(range(d))
    with pytest.raises(ValueError, match="rng"):
        model.predict(X, rng=-1)


def test_mle_model_predicts_without_a_generator():
    D, _, n_values, d = _neighbours()
    X = D[0]
    model = PrivateNaiveBayes("mle").fit(*D, n_values=n_values, n_classes=d)
    first = model.predict(X)
    np.testing.assert_array_equal(first, np.argmax(model.predict_log_proba(X), axis=-1))
    np.testing.assert_array_equal(first, model.predict(X, rng=1))   # rng is unused by a deterministic model
    with pytest.raises(ValueError, match="rng"):
        model.predict(X, rng=-1)


# ----------------------------------------------------------------------------- MixedNaiveBayes

@pytest.mark.parametrize("seed", [3, "generator"])
@pytest.mark.parametrize("method", gnb.MECHANISMS)
def test_mixed_pickles_of_neighbours_differ_only_in_the_release(method, seed):
    D, Dn = _mixed_neighbours()
    make = (lambda: np.random.default_rng(3)) if seed == "generator" else (lambda: seed)
    a, b = _fit_mixed(method, D, make()), _fit_mixed(method, Dn, make())
    _assert_differ_only_in(_mixed_released(a), _mixed_released(b), ["released_" + k for k in MIXED_RELEASED])
    assert not np.array_equal(a.params_["mu"], b.params_["mu"])


@pytest.mark.parametrize("method", gnb.MECHANISMS)
def test_mixed_keeps_nothing_of_the_seed(method):
    D, _ = _mixed_neighbours()
    a, b = _fit_mixed(method, D, 1), _fit_mixed(method, D, np.random.default_rng(2))
    _assert_differ_only_in(_mixed_released(a), _mixed_released(b), ["released_" + k for k in MIXED_RELEASED])
    assert a.rng is None and b.rng is None


@pytest.mark.parametrize("method", gnb.MECHANISMS)
def test_mixed_pickle_holds_no_generator(method):
    D, _ = _mixed_neighbours()
    for seed in (0, np.random.default_rng(0), None):
        _assert_no_generator(gnb.MixedNaiveBayes(method, rng=seed, **MIXED_OPTIONS).fit(*D))


@pytest.mark.parametrize("method", MIXED_PRIVATE)
def test_mixed_holds_no_exact_statistic_or_noise_scale(method):
    D, _ = _mixed_neighbours()
    X, y = D
    model = gnb.MixedNaiveBayes(method, epsilon=2.0, rng=0, **MIXED_OPTIONS).fit(X, y)
    assert not hasattr(model, "stats_")
    stats = gnb.fit_statistics(X[:, :2].astype(np.int64), X[:, 2:], y, [4, 3], 3, MIXED_OPTIONS["bounds"],
                               method=method, epsilon=2.0)
    exact = [stats["class"], *stats["tables"], stats["first"], stats["second"],
             stats["scales"]["first"][1], stats["scales"]["second"][1]]
    exact += [np.stack([X[y == c, 2:].mean(axis=0) for c in range(3)]),
              np.stack([X[y == c, 2:].std(axis=0) for c in range(3)])]
    for obj in (model, pickle.loads(pickle.dumps(model))):
        arrays = _arrays(obj)
        assert not [i for i, e in enumerate(exact) if _holds(arrays, e)]


@pytest.mark.parametrize("method", MIXED_PRIVATE)
def test_mixed_private_refuses_a_domain_inferred_from_the_data(method):
    D, _ = _mixed_neighbours()
    for missing in ("n_values", "n_classes", "bounds"):
        options = {**MIXED_OPTIONS, missing: None}
        model = gnb.MixedNaiveBayes(method, rng=0, **options)
        with pytest.raises(ValueError, match=f"{missing} must be given .*private method"):
            model.fit(*D)
        assert not hasattr(model, "params_") and model.rng == 0
    # without categorical columns there is no categorical domain to give
    X, y = D
    options = {**MIXED_OPTIONS, "categorical": None, "n_values": None, "bounds": [[-5.0, 10.0]] * 2}
    assert gnb.MixedNaiveBayes(method, rng=0, **options).fit(X[:, 2:], y).params_["mu"].shape == (1, 3, 2)


def test_mixed_nonprivate_may_infer_the_domain():
    D, _ = _mixed_neighbours()
    model = gnb.MixedNaiveBayes("sample_moments", categorical=MIXED_OPTIONS["categorical"]).fit(*D)
    assert model.classes_.tolist() == [0, 1, 2]
    assert [t.shape for t in model.params_["log_tables"]] == [(1, 3, 4), (1, 3, 3)]


def test_mixed_bad_rng_is_refused_before_anything_is_computed():
    D, _ = _mixed_neighbours()
    with pytest.raises(ValueError, match="rng"):
        gnb.MixedNaiveBayes("zc", rng=-1, **MIXED_OPTIONS).fit(*D)
    with pytest.raises(ValueError, match="method"):
        gnb.MixedNaiveBayes("other", rng=0, **MIXED_OPTIONS).fit(*D)


def test_generators_of_every_kind_numpy_accepts():
    """Issue 23/27: a SeedSequence or BitGenerator is taken as numpy's default_rng takes it."""
    from lib import validation

    seq = np.random.SeedSequence(5)
    a = validation.generator(seq).random(3)
    b = validation.generator(np.random.PCG64(np.random.SeedSequence(5))).random(3)
    assert np.array_equal(a, b) and np.array_equal(a, np.random.default_rng(5).random(3))
    with pytest.raises(ValueError, match="non-negative"):
        validation.generator(-1)
    with pytest.raises(TypeError, match="SeedSequence"):
        validation.generator("seed")
