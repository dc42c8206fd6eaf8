"""Issue 11, class 1: category codes and labels are range-checked wherever they index a table.

Before the fix a test row with a code equal to the domain size (or -1) silently
read another cell, a code of 10**12 crashed the interpreter through the sparse
one-hot matrix, and labels outside 0..K-1 silently created empty classes.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.privacy.guarantees import RenyiDP
from lib import DirichletMechanism, PrivateNaiveBayes
from lib.models import bayesian_network as bn
from lib.models import naive_bayes as nb
from lib.experiments.grid import NaiveBayesTask
from lib.experiments.preprocessing import Split

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


def test_bayesian_network_codes_are_checked_before_indexing():
    parents = [(), (0,)]
    tables = bn.count_tables(X, N_VALUES, parents)
    logs = bn.release_tables(tables, DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), bn.network_spec(N_VALUES, parents, 5)),
                             rng=0)
    for bad in ([[0, 3]], [[-1, 0]], [[2**40, 0]]):
        with pytest.raises(ValueError, match="codes must hold codes"):
            bn.log_likelihood(np.array(bad), logs, N_VALUES, parents)


def test_network_spec_does_not_wrap_around():
    # 2**32 * 2**32 wraps to 0 in int64; the spec must refuse, not return 0 rows.
    with pytest.raises(ValueError, match="cells"):
        bn.network_spec([2**32, 2**32, 2], [(), (), (0, 1)], 10)


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
