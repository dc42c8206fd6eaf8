"""PrivateNaiveBayes as a practitioner uses it (issue 39, problems 4-8; issue 41's regression).

Each test fails on the code before issue 39: columns taken by position, a seed in an unfitted
template that replays the release, errors that quote private data, float codes and binning in a
Pipeline, and a budget that model selection loses.
"""

import os
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

from lib.models.counts import tables_from_rows
from lib.models.estimator import SharedBudget
from lib.models.naive_bayes import PrivateNaiveBayes, PublicBins, count, model_spec
from lib.privacy.accountant import Accountant
from lib.privacy.guarantees import RenyiDP


def data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(2, size=n)
    X = np.column_stack([np.where(rng.random(n) < 0.7, y, rng.integers(2, size=n)),
                         np.where(rng.random(n) < 0.6, 2 * y, rng.integers(3, size=n))])
    return X, y


# ---------------------------------------------------------------- 4. columns by position

def test_columns_in_another_order_are_refused_as_scikit_learn_does():
    X, y = data()
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1] % 2})
    model = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0, n_values=[2, 2],
                              n_classes=2).fit(df[["a", "b"]], y)
    assert model.feature_names_in_.tolist() == ["a", "b"]
    for method in (model.predict_proba, model.predict, model.predict_log_proba):
        with pytest.raises(ValueError, match="feature names should match"):
            method(df[["b", "a"]])
        with pytest.raises(ValueError, match="feature names should match"):
            method(df[["a", "b"]].rename(columns={"b": "c"}))
    np.testing.assert_array_equal(model.predict_proba(df[["a", "b"]]), model.predict_proba(df[["a", "b"]].values))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(df[["a", "b"]].values)
    plain = clone(model).fit(df.values, y)
    assert not hasattr(plain, "feature_names_in_")   # a refit on an array forgets the names
    with pytest.warns(UserWarning, match="fitted without feature names"):
        plain.predict(df)


# ---------------------------------------------------------------- 5. a seed in an unfitted template

def _neighbour(X, y):
    """Row 0 replaced: another value of every attribute and another label."""
    Xn, yn = X.copy(), y.copy()
    Xn[0] = (Xn[0] + 1) % [2, 3]
    yn[0] = 1 - yn[0]
    return Xn, yn


def test_the_two_fit_attack_on_a_pickled_grid_search_fails():
    X, y = data(400)
    template = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=424242, n_values=[2, 3], n_classes=2)
    gs = GridSearchCV(template, {"privacy": [RenyiDP(5.0, 1.0), RenyiDP(5.0, 2.0)]}, cv=2).fit(X, y)
    released = gs.best_estimator_.feature_log_prob_

    def replays(estimator, rows, labels):
        refit = clone(estimator).set_params(**gs.best_params_).fit(rows, labels)
        return all(np.array_equal(a, b) for a, b in zip(refit.feature_log_prob_, released))

    # in this process the template holds the seed (clone keeps it: the search is reproducible), and the
    # attack works: only the true data replay the release bit for bit
    assert replays(gs.estimator, X, y) and not replays(gs.estimator, *_neighbour(X, y))
    # what leaves the process does not: the pickled search's template and best estimator hold no seed
    stolen = pickle.loads(pickle.dumps(gs))
    assert stolen.estimator.random_state is None and stolen.best_estimator_.random_state is None
    assert "424242" not in repr(stolen.estimator) and b"424242" not in pickle.dumps(424242 + 1)
    assert not replays(stolen.estimator, X, y) and not replays(stolen.estimator, *_neighbour(X, y))
    # the pickle's bytes do not hold the seed anywhere (a key stored elsewhere in the search would)
    assert pickle.dumps(424242) not in pickle.dumps(gs) or "random_state" in gs.best_params_
    # a Pipeline's step too
    pipe = pickle.loads(pickle.dumps(make_pipeline(OrdinalEncoder(dtype=np.int64), template)))
    assert pipe[-1].random_state is None


# ---------------------------------------------------------------- 6. errors on private data

ROW, VALUE, LABEL, COUNT, FLOAT = 1148, 7919, "Zzyzx-secret", 4817, 2.5371


def _private_errors():
    """Every error the private fit paths raise on bad private data, as messages."""
    X, y = data(3000)
    model = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0, n_values=[2, 3], n_classes=2)
    cases = []
    high = X.copy()
    high[ROW, 1] = VALUE
    cases.append(lambda: clone(model).fit(high, y))
    low = X.copy()
    low[ROW, 0] = -VALUE
    cases.append(lambda: clone(model).fit(low, y))
    bad_y = y.copy()
    bad_y[ROW] = VALUE
    cases.append(lambda: clone(model).fit(X, bad_y))
    cases.append(lambda: count(high, y, [2, 3], 2))
    cases.append(lambda: count(X, bad_y, [2, 3], 2))
    fraction = X.astype(float)
    fraction[ROW, 1] = FLOAT
    cases.append(lambda: clone(model).fit(fraction, y))
    missing = X.astype(float)
    missing[ROW, 1] = np.nan
    cases.append(lambda: clone(model).fit(missing, y))
    labels = np.array(["no", "yes"], dtype=object)[y]
    frame = pd.DataFrame({"a": np.array(["x", "y"], dtype=object)[X[:, 0]], "b": X[:, 1]})
    labelled = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0, categories=[["x", "y"], [0, 1, 2]],
                                 classes=["no", "yes"])
    odd = frame.copy()
    odd.loc[ROW, "a"] = LABEL
    cases.append(lambda: clone(labelled).fit(odd, labels))
    odd_y = labels.copy()
    odd_y[ROW] = LABEL
    cases.append(lambda: clone(labelled).fit(frame, odd_y))
    N, Nk = count(X, y, [2, 3], 2)
    cases.append(lambda: clone(model).fit_counts(N, [Nk[0], Nk[1] + np.array([[0, 0, COUNT], [0, 0, 0]])]))
    cases.append(lambda: clone(model).fit_counts(N, [Nk[0], Nk[1] - np.array([[0, 0, COUNT], [0, 0, 0]])]))
    cases.append(lambda: clone(model).fit_counts(N + FLOAT, Nk))
    rows = [(0, 0, 0, 10), (0, 1, 1, 12), (1, 0, 0, 10), (1, 1, 2, 12)]
    cases.append(lambda: tables_from_rows(rows + [(0, LABEL, 0, COUNT)], [range(2), range(3)], [0, 1]))
    cases.append(lambda: tables_from_rows(rows + [(1, 0, LABEL, COUNT)], [range(2), range(3)], [0, 1]))
    cases.append(lambda: tables_from_rows(rows[:-1] + [(1, 1, 2, COUNT)], [range(2), range(3)], [0, 1]))
    cases.append(lambda: tables_from_rows(rows[:-1] + [(1, 1, 2, -COUNT)], [range(2), range(3)], [0, 1]))
    cases.append(lambda: tables_from_rows(rows + [(1, 1, 2, COUNT)], [range(2), range(3)], [0, 1]))
    messages = []
    for case in cases:
        with pytest.raises((ValueError, TypeError)) as err:
            case()
        messages.append(str(err.value))
    return messages


def test_errors_on_private_data_quote_no_value_row_or_count():
    messages = _private_errors()
    assert len(messages) == 17
    for message in messages:
        for secret in (str(ROW), str(VALUE), LABEL, str(COUNT), str(FLOAT), "nan"):
            assert secret not in message, (secret, message)
        assert not re.search(r"\brow \d|\bindex \d|\bat \(", message), message
    # they still say which column and which public range
    assert any("in column 1" in m and "[0, 2]" in m for m in messages)
    assert any("class codes in [0, 1]" in m for m in messages)
    assert any("OrdinalEncoder" in m for m in messages)


# ---------------------------------------------------------------- 7. Pipeline friction

def test_scikit_learn_encoders_float_codes_are_accepted_and_fractions_refused():
    X, y = data()
    words = pd.DataFrame({"a": np.array(["u", "v"])[X[:, 0]], "b": np.array(["p", "q", "r"])[X[:, 1]]})
    pipe = make_pipeline(OrdinalEncoder(categories=[["u", "v"], ["p", "q", "r"]]),   # float64 output
                         PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=3, n_values=[2, 3],
                                           n_classes=2))
    pipe.fit(words, y)
    direct = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=3, n_values=[2, 3], n_classes=2).fit(X, y)
    np.testing.assert_array_equal(pipe[-1].class_log_prior_, direct.class_log_prior_)
    with pytest.raises(ValueError, match="non-integral.*PublicBins"):
        clone(direct).fit(X + 0.25, y)


def test_public_bins_read_no_private_value_and_compose_in_a_grid_over_bins():
    rng = np.random.default_rng(5)
    n = 3000
    y = rng.integers(2, size=n)
    age = np.clip(rng.normal(35 + 15 * y, 10), 17, 90)
    hours = np.clip(rng.normal(38 + 6 * y, 8), 1, 99)
    X = np.column_stack([age, hours])
    bins = PublicBins([(17, 90), (1, 99)], n_bins=7)
    codes = bins.fit_transform(X)
    assert codes.public_n_values.tolist() == [7, 7] and np.asarray(codes).max() <= 6
    # the edges are public: the codes of a row do not depend on the other rows
    np.testing.assert_array_equal(PublicBins([(17, 90), (1, 99)], n_bins=7).fit(X[:10]).transform(X[:5]),
                                  np.asarray(codes)[:5])
    pipe = make_pipeline(PublicBins([(17, 90), (1, 99)]),
                         PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 2.0), random_state=1, n_classes=2))
    gs = GridSearchCV(pipe, {"publicbins__n_bins": [3, 5, 10, 20, 40]}, cv=3, error_score="raise").fit(X, y)
    assert np.all(np.isfinite(gs.cv_results_["mean_test_score"]))   # every candidate fitted (5 of 15 failed)
    assert gs.best_estimator_[-1].n_values_.tolist() == [gs.best_params_["publicbins__n_bins"]] * 2
    assert gs.best_score_ > 0.6
    # a declared n_values that disagrees with the bins is refused, not silently used
    with pytest.raises(ValueError, match="must agree"):
        make_pipeline(PublicBins([(17, 90), (1, 99)], n_bins=5),
                      PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 2.0), n_values=[4, 4], n_classes=2)).fit(X, y)
    with pytest.raises(ValueError, match="low < high"):
        PublicBins([(90, 17), (1, 99)]).fit(X)
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="column 1 holds NaN"):
        bins.transform(bad)


# ---------------------------------------------------------------- 8. one budget across model selection

def test_a_shared_budget_counts_every_fit_of_a_grid_search():
    X, y = data(600)
    budget = SharedBudget()
    model = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), n_values=[2, 3], n_classes=2, budget=budget)
    assert clone(model).budget is budget   # clone deep-copies parameters: this one is shared
    grid = {"privacy": [RenyiDP(5.0, e) for e in (0.25, 0.5, 1.0)]}
    gs = GridSearchCV(model, grid, cv=4).fit(X, y)
    assert budget.releases == 3 * 4 + 1   # every fold of every candidate, and the refit
    best = gs.best_params_["privacy"].epsilon
    charged = budget.accountant.guarantees
    assert all(g.lam == 5.0 and count == 1 for g, count in charged)
    assert sorted(g.epsilon for g, _ in charged) == sorted([0.25] * 4 + [0.5] * 4 + [1.0] * 4 + [best])
    # the fits' own guarantees carry the Dirichlet releases' exact curves: the total is at most what the
    # single-order levels give, and it is what an accountant of those guarantees gives
    single = Accountant()
    for e in [0.25] * 4 + [0.5] * 4 + [1.0] * 4 + [best]:
        single.add(RenyiDP(5.0, e))
    again = Accountant()
    for g, _ in charged:
        again.add(g)
    assert budget.spent(1e-5) == again.epsilon(1e-5)
    assert budget.spent(1e-5).epsilon <= single.epsilon(1e-5).epsilon
    total = budget.total()
    assert isinstance(total, RenyiDP) and total.lam == 5.0 and total.epsilon == pytest.approx(7.0 + best, abs=1e-12)
    cross_val_score(model, X, y, cv=3)
    assert budget.releases == 13 + 3 and "releases=16" in repr(budget)


def test_a_shared_budget_copied_into_another_process_refuses_to_charge():
    budget = SharedBudget()
    code = ("import pickle, sys; from lib.privacy.guarantees import RenyiDP\n"
            "b = pickle.loads(sys.stdin.buffer.read())\n"
            "try:\n    b.charge(RenyiDP(5.0, 1.0))\nexcept RuntimeError as e:\n    print('refused', 'n_jobs=1' in str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(budget), capture_output=True,
                         env={**os.environ, "PYTHONPATH": os.getcwd()}, check=True).stdout.decode()
    assert out.strip() == "refused True"
    assert pickle.loads(pickle.dumps(budget)).charge(RenyiDP(5.0, 1.0)).releases == 1   # same process: allowed
    with pytest.raises(TypeError, match="budget must be"):
        PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), n_values=[2, 3], n_classes=2, budget=Accountant()).fit(*data(50))


# ---------------------------------------------------------------- issue 41: a declared domain is integers

@pytest.mark.parametrize("n_values", [[2.7, 2.2], ["2", "2"], [2, True], [np.nan, 2], [2, 3.0000001], "23"])
def test_a_declared_domain_is_validated_as_integers_never_cast(n_values):
    X, y = data(50)
    X = X % 2
    with pytest.raises(ValueError, match="n_values"):
        PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0).fit(X, y, n_values=n_values, n_classes=2)
    with pytest.raises(ValueError, match="n_values"):
        PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0, n_values=n_values, n_classes=2).fit(X, y)
    with pytest.raises(ValueError, match="n_values"):
        model_spec(n_values, 2, 50)
    with pytest.raises(ValueError, match="n_values"):
        count(X, y, n_values, 2)


@pytest.mark.parametrize("n_classes", [2.5, "2", True, np.nan])
def test_a_declared_number_of_classes_is_an_integer(n_classes):
    X, y = data(50)
    with pytest.raises(ValueError, match="n_classes"):
        PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0)).fit(X, y, n_values=[2, 3], n_classes=n_classes)


def test_whole_valued_float_sizes_are_the_integers_they_are():
    X, y = data(50)
    a = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0).fit(X, y, n_values=[2.0, 3.0], n_classes=2.0)
    b = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0).fit(X, y, n_values=[2, 3], n_classes=2)
    np.testing.assert_array_equal(a.class_log_prior_, b.class_log_prior_)
    assert a.n_values_.dtype == np.int64 and a.n_classes_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a.predict(X)


# ---------------------------------------------------------------- 10. the public API is annotated

ANNOTATED = ["lib.models.naive_bayes.model", "lib.models.naive_bayes.domain", "lib.models.naive_bayes.classifier",
             "lib.models.naive_bayes.binning", "lib.models.naive_bayes.scoring", "lib.models.counts",
             "lib.models.estimator", "lib.interop.opendp", "lib.interop.dp_accounting"]


@pytest.mark.parametrize("module_name", ANNOTATED)
def test_the_public_api_is_annotated(module_name):
    import importlib
    import inspect

    pytest.importorskip("dp_accounting") if module_name.endswith("dp_accounting") else None
    module = importlib.import_module(module_name)
    missing = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module_name:
            continue
        functions = [(name, obj)] if inspect.isfunction(obj) else []
        if inspect.isclass(obj):
            functions += [(f"{name}.{m}", f) for m, f in vars(obj).items()
                          if inspect.isfunction(f) and not m.startswith("_") or m == "__init__"]
            functions += [(f"{name}.{m}", f.fget) for m, f in vars(obj).items() if isinstance(f, property)
                          and not m.startswith("_")]
        for label, func in functions:
            if not inspect.isfunction(func):
                continue
            signature = inspect.signature(func)
            bare = [p for p in signature.parameters.values() if p.name not in ("self", "cls")
                    and p.annotation is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD]
            if bare or (signature.return_annotation is inspect.Signature.empty and func.__name__ != "__init__"):
                missing.append(label)
    assert not missing, f"{module_name}: not annotated: {missing}"
    assert (Path(importlib.import_module("lib").__file__).parent / "py.typed").exists()
