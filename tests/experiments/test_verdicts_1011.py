"""Tests of the chapters 10-11 section of lib.experiments.verdicts against hand computations."""

import math

import numpy as np
import pandas as pd
import pytest

from lib.experiments.verdicts import combined_verdict, share_sign_test, split_means, z_against


def test_share_sign_test_against_binomial_sum():
    shares = pd.Series([0.9, 0.7, 0.6, 1.0, 0.5, 0.8, 0.55, 0.4], index=range(1, 9))
    v = share_sign_test(shares)
    # 6 above, 1 below (0.5 ties): two-sided p = 2 * P(X >= 6), X ~ Bin(7, 1/2)
    p = 2 * sum(math.comb(7, k) for k in range(6, 8)) / 2**7
    assert (v.statistic, v.n, v.over, v.which) == (6.0, 7, "splits", tuple(range(1, 9)))
    assert math.isclose(v.p_value, p, rel_tol=1e-12) and v.verdict == "no difference"  # p = 0.125
    assert math.isclose(v.estimate, shares.mean()) and math.isclose(v.se, shares.std(ddof=1) / math.sqrt(8))
    all_up = share_sign_test(np.full(8, 0.75), which=range(8))
    assert math.isclose(all_up.p_value, 2.0**-7) and all_up.verdict == "more often above" and all_up.se == 0
    assert share_sign_test(np.zeros(8)).verdict == "more often below"
    ties = share_sign_test([0.5, 0.5])
    assert ties.p_value == 1.0 and ties.n == 0 and ties.verdict == "no difference"


def test_share_sign_test_arguments():
    with pytest.raises(ValueError, match="shares"):
        share_sign_test([0.5])
    with pytest.raises(ValueError, match="shares"):
        share_sign_test([0.2, 1.2])
    with pytest.raises(ValueError, match="null"):
        share_sign_test([0.2, 0.3], null=1.0)


def test_split_means_by_hand():
    frame = pd.DataFrame({"m": ["a"] * 5 + ["b"] * 2, "split": [1, 1, 1, 2, 2, 1, 1],
                          "x": [1.0, 2.0, 4.0, 3.0, 5.0, 0.0, 2.0]})
    out = split_means(frame, ["m"], "x")
    # a: split 1 mean 7/3, var of mean (var 7/3) / 3; split 2 mean 4, var of mean 2 / 2
    mean_a = (7 / 3 + 4) / 2
    se_a = math.sqrt((7 / 3) / 3 + 2 / 2) / 2
    assert math.isclose(out.loc["a", "mean"], mean_a) and math.isclose(out.loc["a", "se"], se_a)
    assert math.isclose(out.loc["b", "mean"], 1.0) and math.isclose(out.loc["b", "se"], math.sqrt(2 / 2))
    with pytest.raises(ValueError, match="split"):
        split_means(frame.drop(columns="split"), ["m"], "x")


def test_combined_verdict():
    assert combined_verdict(["holds", "holds"]) == "holds"
    assert combined_verdict(["does not hold"]) == "does not hold"
    assert combined_verdict(["holds", "does not hold"]) == "partly"
    assert combined_verdict(["partly", "partly"]) == "partly"
    with pytest.raises(ValueError, match="verdicts"):
        combined_verdict([])
    with pytest.raises(ValueError, match="verdicts"):
        combined_verdict(["maybe"])


def test_z_against_by_hand():
    x = np.array([0.20, 0.25, 0.22, 0.30, 0.27])
    v = z_against(x, 0.2)
    se = math.sqrt(sum((xi - x.mean()) ** 2 for xi in x) / 4) / math.sqrt(5)
    z = (x.mean() - 0.2) / se
    assert math.isclose(v.statistic, z, rel_tol=1e-12) and math.isclose(v.se, se, rel_tol=1e-12)
    assert math.isclose(v.p_value, math.erfc(abs(z) / math.sqrt(2)), rel_tol=1e-12)  # 2 * (1 - Phi(|z|))
    assert v.verdict == ("higher" if v.p_value < 0.05 else "no difference") and v.over == "releases"
    assert z_against([0.1, 0.1], 0.1).statistic == 0.0
    with pytest.raises(ValueError, match="x"):
        z_against([0.1], 0.0)
    with pytest.raises(ValueError, match="value"):
        z_against([0.1, 0.2], np.nan)
