"""lib.experiments.preprocessing: split, quantile bins fitted on train, integer codes, Table 1."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.experiments.data import DATASETS
from lib.experiments.preprocessing import (EXCLUDED, SEED, TEST_SIZE, Split, bin_codes, encoding, frame,
                                           prepare, quantile_edges, split_and_encode, split_rows, summary,
                                           table1)


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "x": rng.normal(size=n),
        "k": rng.integers(0, 50, size=n),              # numeric, binned
        "colour": rng.choice(["red", "green", "blue"], size=n),
        "flag": rng.random(n) < 0.3,                   # bool: categorical
        "code": pd.Categorical(rng.integers(1, 4, size=n),
                               categories=[1, 2, 3, 4]),  # 4 never occurs
        "const": np.full(n, 7.0),
        "y": rng.choice(["a", "b", "c"], size=n),
    })


def _valid(split: Split):
    K = len(split.attributes)
    for X in (split.X_train, split.X_test):
        assert X.dtype == np.int64 and X.flags.c_contiguous
        assert X.shape[1] == K == split.n_values.shape[0]
        assert (X >= 0).all() and (X < split.n_values).all()
    for y in (split.y_train, split.y_test):
        assert y.dtype == np.int64
        assert (y >= 0).all() and (y < split.n_classes).all()
    assert split.n_values.dtype == np.int64
    assert len(split.classes) == split.n_classes


# ------------------------------------------------------------ synthetic data

def test_split_sizes_types_and_codes():
    frame = _frame()
    split = split_and_encode(frame, "y", seed=3)
    _valid(split)
    assert len(split.y_test) == math.ceil(0.3 * 200) == 60
    assert len(split.y_train) == 140
    assert split.attributes == ("x", "k", "colour", "flag", "code")
    assert split.classes == ("a", "b", "c")
    # colour: sorted domain blue, green, red; code keeps its unused category.
    assert split.n_values[2] == 3 and split.n_values[3] == 2
    assert split.n_values[4] == 4
    assert split.n_values[0] == 10  # continuous: all ten bins survive


def test_rows_are_a_permutation_split_and_codes_follow_the_values():
    frame = _frame()
    split = split_and_encode(frame, "y", seed=5)
    colours = np.array(["blue", "green", "red"])
    # Reconstruct which rows went where from the same generator.
    perm = np.random.default_rng(5).permutation(len(frame))
    test_rows, train_rows = np.sort(perm[:60]), np.sort(perm[60:])
    np.testing.assert_array_equal(
        colours[split.X_train[:, 2]], frame["colour"].to_numpy()[train_rows])
    np.testing.assert_array_equal(
        colours[split.X_test[:, 2]], frame["colour"].to_numpy()[test_rows])


@pytest.mark.parametrize("n, seed, test_size", [(200, 5, 0.3), (10, 1, 0.3), (7, 0, 0.5), (1000, 42, 0.25)])
def test_split_rows_is_the_seeded_permutation_split(n, seed, test_size):
    train, test = split_rows(n, seed, test_size)
    n_test = math.ceil(test_size * n)
    perm = np.random.default_rng(seed).permutation(n)
    np.testing.assert_array_equal(test, np.sort(perm[:n_test]))
    np.testing.assert_array_equal(train, np.sort(perm[n_test:]))
    # sorted, disjoint, together every row
    assert (np.diff(train) > 0).all() and (np.diff(test) > 0).all()
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(n))
    # the rows split_and_encode uses
    frame = _frame(n, seed=2)
    split = split_and_encode(frame, "y", seed=seed, test_size=test_size)
    labels = np.array(split.classes)
    np.testing.assert_array_equal(labels[split.y_test], frame["y"].to_numpy()[test])
    np.testing.assert_array_equal(labels[split.y_train], frame["y"].to_numpy()[train])


def test_split_rows_defaults_and_bad_arguments():
    for u, v in zip(split_rows(50), split_rows(50, SEED, TEST_SIZE)):
        np.testing.assert_array_equal(u, v)
    for n in (1, 0, -3, 2.0, True, "10"):
        with pytest.raises(ValueError, match="n must be an integer >= 2"):
            split_rows(n)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        split_rows(10, -1)
    with pytest.raises(ValueError, match=r"test_size must be in \(0, 1\)"):
        split_rows(10, 1, 1.5)
    with pytest.raises(ValueError, match="empty split"):
        split_rows(3, 1, 0.9)


@pytest.mark.needs_data
def test_split_rows_gives_the_rows_of_prepare():
    data = frame("GermanCredit")
    for seed in (1, 2):
        split = prepare("GermanCredit", seed=seed, binning="quantile")
        train, test = split_rows(len(data), seed)
        labels = np.array(split.classes)
        np.testing.assert_array_equal(labels[split.y_test], data["credit_risk"].to_numpy()[test])
        np.testing.assert_array_equal(labels[split.y_train], data["credit_risk"].to_numpy()[train])


def test_deterministic_by_seed():
    frame = _frame()
    a = split_and_encode(frame, "y", seed=11)
    b = split_and_encode(frame, "y", seed=11)
    c = split_and_encode(frame, "y", seed=12)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a.y_test, c.y_test)


def test_bins_are_fitted_on_the_training_split_only():
    frame = _frame()
    split = split_and_encode(frame, "y", seed=2)
    perm = np.random.default_rng(2).permutation(len(frame))
    test_rows = perm[:60]
    changed = frame.copy()
    changed.loc[test_rows[: len(test_rows) // 2], "x"] = 1e9   # far above
    changed.loc[test_rows[len(test_rows) // 2:], "x"] = -1e9   # far below
    other = split_and_encode(changed, "y", seed=2)
    np.testing.assert_array_equal(split.X_train, other.X_train)
    np.testing.assert_array_equal(split.n_values, other.n_values)
    # Out-of-range test values map to the outer bins.
    assert set(other.X_test[:, 0]) == {0, split.n_values[0] - 1}


def test_constant_columns_in_train_are_dropped():
    frame = _frame()
    perm = np.random.default_rng(4).permutation(len(frame))
    test_rows = perm[:60]
    frame["train_const"] = "same"
    frame.loc[test_rows, "train_const"] = "other"  # varies only in test
    split = split_and_encode(frame, "y", seed=4)
    assert "const" not in split.attributes
    assert "train_const" not in split.attributes
    _valid(split)


def test_missing_values_are_a_category_of_their_own():
    frame = _frame()
    frame["colour"] = frame["colour"].where(frame.index % 7 != 0)
    frame.loc[frame.index % 5 == 0, "x"] = np.nan
    split = split_and_encode(frame, "y", seed=0)
    j = split.attributes.index("colour")
    assert split.n_values[j] == 4
    rows = np.sort(np.random.default_rng(0).permutation(200)[60:])
    np.testing.assert_array_equal(split.X_train[:, j] == 3, rows % 7 == 0)
    x = split.attributes.index("x")
    assert split.n_values[x] == 11
    np.testing.assert_array_equal(split.X_train[:, x] == 10, rows % 5 == 0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"test_size": 0.0}, r"test_size must be in \(0, 1\)"),
    ({"test_size": 1.0}, r"test_size must be in \(0, 1\)"),
    ({"test_size": -0.2}, r"test_size must be in \(0, 1\)"),
    ({"test_size": float("nan")}, "test_size must be finite"),
    ({"n_bins": 1}, "n_bins must be an integer >= 2"),
    ({"n_bins": 2.5}, "n_bins must be an integer >= 2"),
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"seed": 1.5}, "seed must be a non-negative integer"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        split_and_encode(_frame(), "y", **kwargs)
    with pytest.raises(ValueError, match=match):
        prepare("Spam", **kwargs)


def test_bad_frame_or_label():
    with pytest.raises(ValueError, match="label must be a column"):
        split_and_encode(_frame(), "nope")
    with pytest.raises(ValueError, match="empty split"):
        split_and_encode(_frame(3), "y", test_size=0.9)
    frame = _frame()
    frame.loc[0, "y"] = None
    with pytest.raises(ValueError, match="missing values"):
        split_and_encode(frame, "y")


def test_unknown_dataset_lists_the_allowed_names():
    with pytest.raises(ValueError) as err:
        prepare("Iris")
    for name in DATASETS:
        assert name in str(err.value)


# ------------------------------------------------------------ the binning

@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.integers(-5, 5) | st.floats(-1e6, 1e6),
                       min_size=1, max_size=60),
       n_bins=st.integers(2, 12))
def test_every_bin_holds_a_training_value(values, n_bins):
    x = np.asarray(values, dtype=float)
    edges = quantile_edges(x, n_bins)
    assert edges.size <= n_bins - 1
    assert (np.diff(edges) > 0).all()
    codes = bin_codes(x, edges)
    assert set(codes) == set(range(edges.size + 1))
    # Right-closed bins: a value equal to an edge ends that bin.
    for e, k in zip(edges, range(edges.size)):
        assert bin_codes([e], edges)[0] == k


def test_a_heavy_value_at_either_end_gets_its_own_bin():
    x = np.r_[np.zeros(70), np.arange(1, 31)]
    edges = quantile_edges(x, 10)
    assert edges[0] == 0 and (bin_codes(x, edges) == 0).sum() == 70
    y = np.r_[np.full(96, 999.0), np.arange(4.0)]  # Bank's pdays pattern
    edges = quantile_edges(y, 10)
    codes = bin_codes(y, edges)
    assert codes.max() == edges.size and (codes == codes.max()).sum() == 96


def test_continuous_values_get_equal_bins():
    x = np.random.default_rng(0).normal(size=10_000)
    counts = np.bincount(bin_codes(x, quantile_edges(x, 10)))
    assert counts.tolist() == [1000] * 10


def test_outside_values_and_nan_map():
    edges = np.array([0.0, 1.0])
    np.testing.assert_array_equal(
        bin_codes([-np.inf, -3, 0, 0.5, 1, 9, np.inf, np.nan], edges),
        [0, 0, 0, 1, 1, 2, 2, 3])


# ------------------------------------------------------------ real datasets

@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_prepare_every_dataset_quantile_variant(name):
    """The paper's non-private variant: deciles of the training split, constants dropped."""
    split = prepare(name, binning="quantile")
    _valid(split)
    n = len(split.y_train) + len(split.y_test)
    assert len(split.y_test) == math.ceil(0.3 * n)
    # Every attribute varies in the training split and every bin of a
    # binned attribute holds a training row.
    info = encoding(name, binning="quantile")
    for j, attr in enumerate(split.attributes):
        used = np.unique(split.X_train[:, j])
        assert used.size >= 2
        if info.loc[attr, "kind"] == "binned":
            assert used.size == split.n_values[j]
            assert split.n_values[j] <= 10
    assert not set(EXCLUDED.get(name, ())) & set(split.attributes)
    # The arrays are memoised: read-only so no caller can alter them.
    assert not split.X_train.flags.writeable
    assert prepare(name, binning="quantile") is split


@pytest.mark.needs_data
def test_summary_matches_the_documented_choices():
    s = summary(binning="quantile")
    assert s.loc["Adult", "K"] == 13 and s.loc["Adult", "excluded"] == \
        "fnlwgt"
    assert s.loc["Shopper", "K"] == 17          # UCI values, nothing constant
    assert s.loc["Digit", "binned"] == s.loc["Digit", "K"] == 62
    assert s.loc["Thyroid", "dropped constant"] == "hypopituitary"
    assert s.loc["Bank", "K"] == 20             # pdays keeps two bins
    assert (s["n_train"] + s["n_test"]).tolist() == [
        30000, 7200, 12330, 5620, 1000, 41188, 4601, 48842]


@pytest.mark.needs_data
def test_class_shares_of_the_random_split_are_close_to_the_whole():
    for name in DATASETS:
        split = prepare(name)
        whole = np.bincount(np.r_[split.y_train, split.y_test]) / (
            len(split.y_train) + len(split.y_test))
        test = np.bincount(split.y_test, minlength=split.n_classes) / len(
            split.y_test)
        # 300 test rows (GermanCredit) give a standard error of 2.6 points
        # on a 30 % share; 4 standard errors.
        assert np.abs(test - whole).max() < 4 * np.sqrt(0.25 / len(test))


@pytest.mark.needs_data
def test_table1_regenerated_against_the_paper():
    t = table1()
    assert list(t.index) == list(DATASETS)
    assert (t["instances"] == t["paper instances"]).all()
    assert (t["classes"] == t["paper classes"]).all()
    assert (t["attributes used"] == t["paper attributes"]).all()
    # Adult: UCI ships 14 attributes; the paper's 13 = ours without fnlwgt.
    assert t.loc["Adult", "attributes"] == 14
    binary = t["paper % positive"].notna()
    assert (t["% positive"].isna() == ~binary).all()
    # The paper rounds to whole percent.
    gap = (t.loc[binary, "% positive"] - t.loc[binary, "paper % positive"])
    assert gap.abs().max() <= 0.5
    assert t.loc["Thyroid", "largest class %"] == pytest.approx(92.58)


def test_public_encoding_summary_counts_kinds_and_bins():
    import os

    from lib.experiments.data import DATA_ENV
    from lib.experiments.preprocessing import encoding, public_encoding_summary, prepare

    if not os.environ.get(DATA_ENV):
        pytest.skip(f"{DATA_ENV} is not set (the real data)")
    row = public_encoding_summary("GermanCredit")
    info = encoding("GermanCredit", binning="public")
    kinds = {k: v for k, v in row.items() if k not in ("assumed ranges", "bins filled (mean)")}
    assert sum(kinds.values()) == len(info)
    split = prepare("GermanCredit", binning="public")
    binned = np.flatnonzero(info["kind"].str.startswith("binned").to_numpy())
    assert row["bins filled (mean)"] == np.mean([np.unique(split.X_train[:, k]).size for k in binned])
    assert 1 <= row["bins filled (mean)"] <= 10 and row["assumed ranges"] >= 0
