"""lib.experiments.verdicts: every test against scipy.stats or a computation by hand."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lib.experiments import verdicts
from lib.experiments.verdicts import Verdict


def test_verdict_says_what_it_is_over():
    with pytest.raises(ValueError, match="over"):
        Verdict("t", 1.0, 0.5, "x", "rows")
    v = Verdict("t", 1.0, 0.5, "x", "splits", (1, 2), 2)
    assert math.isnan(v.estimate) and math.isnan(v.se)
    with pytest.raises(AttributeError):
        v.p_value = 0.1


def _grid():
    rng = np.random.default_rng(0)
    rows = []
    for d in ("A", "B"):
        for e in (0.1, 1.0):
            for m, shift in (("a", 0.5), ("b", 0.0)):
                for r in range(6):
                    rows.append((d, m, e, r, shift + rng.normal()))
    return pd.DataFrame(rows, columns=["dataset", "model", "epsilon", "repeat", "cross_entropy"])


def test_cell_z_is_the_two_sample_z_by_hand():
    g = _grid()
    c = verdicts.cell_z(g, "a", "b", "cross_entropy")
    x = g.query("dataset == 'B' and epsilon == 1.0 and model == 'a'").cross_entropy.to_numpy()
    y = g.query("dataset == 'B' and epsilon == 1.0 and model == 'b'").cross_entropy.to_numpy()
    se = math.sqrt(x.var(ddof=1) / 6 + y.var(ddof=1) / 6)
    assert c.loc[("B", 1.0), "diff"] == pytest.approx(x.mean() - y.mean(), rel=1e-12)
    assert c.loc[("B", 1.0), "se"] == pytest.approx(se, rel=1e-12)
    assert c.loc[("B", 1.0), "z"] == pytest.approx((x.mean() - y.mean()) / se, rel=1e-12)
    # the z-test of one cell is the same number, with its normal p-value
    v = verdicts.z_test(x, y)
    assert v.statistic == pytest.approx(c.loc[("B", 1.0), "z"], rel=1e-12)
    assert v.p_value == pytest.approx(2 * stats.norm.sf(abs(v.statistic)), rel=1e-12)
    assert v.over == "releases" and v.n == 12
    with pytest.raises(ValueError, match="no rows of mechanism"):
        verdicts.cell_z(g, "a", "zzz", "cross_entropy")
    with pytest.raises(ValueError, match="no column"):
        verdicts.cell_z(g, "a", "b", "accuracy")


def test_wins_over_cells_counts_and_its_sign_test():
    z = pd.Series([4.0, 5.0, -3.5, 1.0], index=list("wxyz"))
    v = verdicts.wins_over_cells(z)
    assert v.statistic == 0.5 and v.verdict == "partly" and v.over == "cells" and v.which == tuple("wxyz")
    assert v.p_value == pytest.approx(stats.binomtest(2, 3).pvalue)
    assert verdicts.wins_over_cells([4.0, 3.1]).verdict == "holds"
    assert verdicts.wins_over_cells([4.0, 0.0, 0.0]).verdict == "does not hold"
    assert math.isnan(verdicts.wins_over_cells([0.0, 1.0]).p_value)
    with pytest.raises(ValueError, match="threshold"):
        verdicts.wins_over_cells([1.0], threshold=0)
    with pytest.raises(ValueError, match="z must be finite"):
        verdicts.wins_over_cells([np.nan])
    with pytest.raises(ValueError, match="at least one cell"):
        verdicts.wins_over_cells([])


def test_sign_test_is_the_binomial_test_of_the_signs():
    v = verdicts.sign_test(pd.Series([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], index=list("abcdefgh")))
    assert v.p_value == pytest.approx(2 ** -7) and v.statistic == 8 and v.n == 8
    assert v.verdict == "more often positive" and v.over == "datasets"
    v = verdicts.sign_test([-1.0, -2.0, 0.0, 3.0], over="splits")
    assert v.n == 3 and v.p_value == pytest.approx(stats.binomtest(1, 3).pvalue)
    assert v.verdict == "no difference"
    assert verdicts.sign_test([-1.0] * 8).verdict == "more often negative"
    with pytest.raises(ValueError, match="nonzero"):
        verdicts.sign_test([0.0, 0.0])
    with pytest.raises(ValueError, match="over must be"):
        verdicts.sign_test([1.0], over="rows")


def test_t_over_splits_and_over_splits_are_scipys_one_sample_t():
    d = np.array([0.3, 0.1, 0.2, 0.25, 0.05])
    v = verdicts.t_over_splits(d, which=(1, 2, 3, 4, 5))
    ref = stats.ttest_1samp(d, 0.0)
    assert v.statistic == pytest.approx(ref.statistic, rel=1e-12) and v.p_value == pytest.approx(ref.pvalue)
    assert v.over == "splits" and v.which == (1, 2, 3, 4, 5) and v.verdict == "higher"
    assert v.se == pytest.approx(stats.sem(d), rel=1e-12)
    idx = pd.MultiIndex.from_product([["A", "B"], [1, 2, 3, 4, 5]], names=["dataset", "split"])
    table = pd.DataFrame({"x": np.r_[d, d * 0], "y": 0.0}, index=idx)
    t = verdicts.over_splits(table, "x", "y", order=["B", "A"])
    assert list(t.index) == ["B", "A"]
    assert t.loc["A", "t"] == pytest.approx(ref.statistic, rel=1e-12) and t.loc["A", "p"] == pytest.approx(ref.pvalue)
    # an exact tie: difference 0 and no p-value
    assert t.loc["B", "diff"] == 0.0 and np.isnan(t.loc["B", "p"])
    with pytest.raises(ValueError, match="no column"):
        verdicts.over_splits(table, "x", "z")
    with pytest.raises(ValueError, match="at least 2 splits"):
        verdicts.t_over_splits([1.0])


def test_corrected_t_test_is_nadeau_bengio_by_hand():
    d = np.array([0.02, 0.01, 0.03, -0.01, 0.02, 0.0, 0.01, 0.02, 0.03, 0.01])
    share = 1 / 9
    v = verdicts.corrected_t_test(d, share)
    se = math.sqrt((1 / 10 + share) * d.var(ddof=1))
    assert v.se == pytest.approx(se, rel=1e-12) and v.estimate == pytest.approx(d.mean(), rel=1e-12)
    assert v.statistic == pytest.approx(d.mean() / se, rel=1e-12)
    assert v.p_value == pytest.approx(2 * stats.t.sf(d.mean() / se, 9), rel=1e-12)
    assert v.over == "folds" and v.n == 10
    # with no correction it is scipy's one-sample t-test
    plain = verdicts.corrected_t_test(d, 0.0)
    assert plain.p_value == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-10)
    assert v.p_value > plain.p_value
    with pytest.raises(ValueError, match="test_share"):
        verdicts.corrected_t_test(d, -1.0)
    with pytest.raises(ValueError, match="at least 2 folds"):
        verdicts.corrected_t_test(d[:1], share)


def test_paired_cv_test_runs_the_corrected_test_per_epsilon():
    rng = np.random.default_rng(1)
    rows = [(v, 1.0, 0, f, dr, acc + rng.normal(0, 0.01)) for f in range(10) for dr in range(2)
            for v, acc in (("a", 0.8), ("b", 0.7))]
    cv = pd.DataFrame(rows, columns=["variant", "epsilon", "repeat", "fold", "draw", "accuracy"])
    out = verdicts.paired_cv_test(cv, "a", "b").loc[1.0]
    wide = cv.groupby(["variant", "fold"]).accuracy.mean().unstack("variant")
    v = verdicts.corrected_t_test((wide.a - wide.b).to_numpy(), 1 / 9)
    assert (out["t"], out["p"], out["se"], out["folds"], out["verdict"]) == (v.statistic, v.p_value, v.se, 10,
                                                                              "better")
    with pytest.raises(ValueError, match="must both be in cv"):
        verdicts.paired_cv_test(cv, "a", "c")


def test_z_by_group_is_the_z_test_per_group():
    rng = np.random.default_rng(2)
    f = pd.DataFrame({"split": np.repeat(["2:1", "1:2"], 20), "epsilon": np.tile([0.5, 1.0], 20),
                      "accuracy": rng.normal(0.8, 0.02, 40)})
    t = verdicts.z_by_group(f, "epsilon", "2:1", "1:2", column="split", metric="accuracy")
    x = f.query("split == '2:1' and epsilon == 0.5").accuracy
    y = f.query("split == '1:2' and epsilon == 0.5").accuracy
    assert t.loc[0.5, "z"] == pytest.approx(verdicts.z_test(x, y).statistic, rel=1e-12)
    with pytest.raises(ValueError, match="not in the frame"):
        verdicts.z_by_group(f, "epsilon", "2:1", "3:1", column="split", metric="accuracy")


def test_majority_class_accuracy_and_baseline():
    assert verdicts.majority_accuracy([0, 1, 1, 1]) == 0.75
    assert verdicts.majority_accuracy([0, 1, 1, 1], y_train=[0, 0, 1]) == 0.25
    with pytest.raises(ValueError, match="y_test"):
        verdicts.majority_accuracy([])
    v = verdicts.majority_baseline([0.80, 0.82, 0.81], [0.75, 0.76, 0.75], which=(1, 2, 3))
    ref = stats.ttest_1samp([0.05, 0.06, 0.06], 0.0)
    assert v.statistic == pytest.approx(ref.statistic) and v.p_value == pytest.approx(ref.pvalue)
    assert v.verdict == "above the majority class" and v.over == "splits"
    same = verdicts.majority_baseline([0.75, 0.76], [0.75, 0.76])
    assert same.verdict == "not above the majority class" and np.isnan(same.p_value)
    with pytest.raises(ValueError, match="accuracy must be"):
        verdicts.majority_baseline([1.5, 0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="one entry per split"):
        verdicts.majority_baseline([0.5, 0.5], [0.5])


def test_cells_over_splits_and_claim_verdict():
    rng = np.random.default_rng(3)
    rows = []
    for s in (1, 2):
        for m, err in (("a", 0.1), ("b", 0.3), ("c", 0.1)):
            for r in range(5):
                rows.append((m, 1.0, 1.0, s, r, err + rng.normal(0, 0.01)))
    f = pd.DataFrame(rows, columns=["method", "lam", "epsilon", "split", "repeat", "error"])
    c = verdicts.cells_over_splits(f, "a", "b")
    per = [(f.query(f"method == '{m}' and split == {s}").error) for s in (1, 2) for m in ("a", "b")]
    d = [(per[1].mean() - per[0].mean()), (per[3].mean() - per[2].mean())]
    v = sum(p.var(ddof=1) / 5 for p in per)
    assert c["diff"].iloc[0] == pytest.approx(np.mean(d), rel=1e-12)
    assert c["se"].iloc[0] == pytest.approx(math.sqrt(v) / 2, rel=1e-12)
    assert c["outcome"].iloc[0] == "win"
    assert verdicts.claim_verdict(["win", "same posterior"]) == "holds"
    assert verdicts.claim_verdict(["win", "tie"]) == "partly"
    assert verdicts.claim_verdict(["win", "loss"]) == "does not hold"
    with pytest.raises(ValueError, match="outcomes"):
        verdicts.claim_verdict(["better"])


# ------------------------------------------------------------------ budgets and margins (chapters 07-09)


def _flags(values, level="epsilon"):
    return pd.Series(values, index=pd.Index([0.001, 0.01, 0.1, 1.0], name=level))


def test_holds_up_to_and_clear_from_by_hand():
    assert verdicts.holds_up_to(_flags([True, True, False, True])) == 0.01
    assert verdicts.holds_up_to(_flags([True] * 4)) == 1.0
    assert np.isnan(verdicts.holds_up_to(_flags([False, True, True, True])))
    assert verdicts.clear_from(_flags([True, False, True, False], "epsilon_hat")) == 1.0
    assert verdicts.clear_from(_flags([False] * 4)) == 0.001
    assert verdicts.clear_from(_flags([False, False, False, True])) == np.inf
    # a (dataset, epsilon) index: the budget level is found by name
    two = pd.Series([True, False], index=pd.MultiIndex.from_tuples([("A", 0.1), ("A", 1.0)],
                                                                   names=["dataset", "epsilon"]))
    assert verdicts.holds_up_to(two) == 0.1
    with pytest.raises(ValueError, match="level 'epsilon'"):
        verdicts.clear_from(pd.Series([True], index=["x"]))
    with pytest.raises(TypeError, match="pandas Series"):
        verdicts.clear_from([True])


def test_small_against_large_by_hand():
    idx = pd.MultiIndex.from_product([["A"], [0.1, 0.2, 0.3, 1.0, 2.0, 3.0]], names=["dataset", "epsilon"])
    gap = pd.DataFrame({"diff": [3.0, 2.0, 1.0, 0.3, 0.2, 0.1], "se": [0.3, 0.4, 0.5, 0.1, 0.1, 0.1]}, index=idx)
    t = verdicts.small_against_large(gap).loc["A"]
    se_lo, se_hi = math.sqrt(0.09 + 0.16 + 0.25) / 3, math.sqrt(0.03) / 3
    assert t["gap, 3 smallest"] == pytest.approx(2.0) and t["gap, 3 largest"] == pytest.approx(0.2)
    assert t["z (small > 0)"] == pytest.approx(2.0 / se_lo)
    assert t["z (small > large)"] == pytest.approx(1.8 / math.hypot(se_lo, se_hi))
    with pytest.raises(ValueError, match="k must be at most"):
        verdicts.small_against_large(gap, k=7)


def test_behind_is_one_standard_error_below_the_reference():
    rows = [("A", "d", 1.0, r, v) for r, v in enumerate([0.70, 0.72, 0.74])]
    rows += [("A", "m", 1.0, r, 0.75) for r in range(3)]
    rows += [("A", "d", 2.0, r, v) for r, v in enumerate([0.74, 0.75, 0.76])]
    rows += [("A", "m", 2.0, r, 0.755) for r in range(3)]
    res = pd.DataFrame(rows, columns=["dataset", "model", "epsilon", "repeat", "accuracy"])
    b = verdicts.behind(res, "d", "m", "accuracy")
    se = np.std([0.70, 0.72, 0.74], ddof=1) / math.sqrt(3)
    assert b.loc[("A", 1.0)] and 0.75 - 0.72 > se
    assert not b.loc[("A", 2.0)]
    with pytest.raises(ValueError, match="no rows of mechanism"):
        verdicts.behind(res, "d", "x", "accuracy")


def test_budget_text():
    assert verdicts.budget_text(np.inf) == "never" and verdicts.budget_text(0.0599484) == "0.06"
    with pytest.raises(ValueError, match="epsilon"):
        verdicts.budget_text(np.nan)
