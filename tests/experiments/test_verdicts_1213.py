"""lib.experiments.verdicts, the section of chapters 12 and 13: z-tests from means and standard
errors against mpmath's erfc, the rows counted as won, and the distance from a tie, by hand."""

import mpmath as mp
import numpy as np
import pandas as pd
import pytest

from lib.experiments.verdicts import relative_gap, significantly_positive, z_of_means


def test_z_of_means_against_mpmath():
    ma, sa, mb, sb = np.array([1.0, 0.3, 5.0]), np.array([0.2, 0.1, 1.0]), np.array([0.5, 0.31, 1.0]), \
        np.array([0.1, 0.05, 0.0])
    res = z_of_means(ma, sa, mb, sb)
    for i in range(3):
        z = (ma[i] - mb[i]) / float(mp.sqrt(mp.mpf(sa[i]) ** 2 + mp.mpf(sb[i]) ** 2))
        assert res["z"][i] == pytest.approx(z, rel=1e-14)
        assert res["p"][i] == pytest.approx(float(mp.erfc(abs(mp.mpf(z)) / mp.sqrt(2))), rel=1e-12)
    assert res["p"][0] < 0.05 < res["p"][1]     # z = 2.24 and -0.089


def test_exact_sides_are_decided_by_the_sign():
    res = z_of_means([1.0, 1.0, 2.0], 0.0, [2.0, 1.0, 1.0], 0.0)
    assert list(res["z"]) == [-np.inf, 0.0, np.inf] and list(res["p"]) == [0.0, 1.0, 0.0]


def test_series_keep_their_index_and_must_agree():
    idx = pd.Index(["x", "y"])
    res = z_of_means(pd.Series([1.0, 2.0], idx), pd.Series([0.1, 0.1], idx), 0.5, 0.0)
    assert list(res.index) == ["x", "y"] and res.loc["x", "diff"] == 0.5
    with pytest.raises(ValueError, match="share one index"):
        z_of_means(pd.Series([1.0, 2.0], idx), 0.1, pd.Series([1.0, 2.0], ["y", "x"]), 0.1)
    with pytest.raises(ValueError, match="se_b"):
        z_of_means(1.0, 0.1, 1.0, -0.1)


def test_significantly_positive_by_hand():
    tests = pd.DataFrame({"diff": [0.5, 0.5, -0.5, 0.1], "p": [0.001, 0.2, 0.001, 0.009]}, index=list("abcd"))
    assert significantly_positive(tests, alpha=0.01) == ["a", "d"]
    assert significantly_positive(tests) == ["a", "d"]
    with pytest.raises(ValueError, match="diff and p"):
        significantly_positive(tests.drop(columns="p"))


def test_relative_gap_by_hand():
    assert relative_gap([1.0, 2.0, -4.0], [1.5, 2.0 * (1 + 1e-6), -3.0]) == pytest.approx(1e-6 / (1 + 1e-6), rel=1e-9)
    assert relative_gap(pd.Series([3.0]), pd.Series([1.0])) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="both be zero"):
        relative_gap([0.0], [0.0])
    with pytest.raises(ValueError, match="same length"):
        relative_gap([1.0], [1.0, 2.0])


def test_measured_verdict_never_says_holds():
    from lib.experiments.verdicts import MEASURED_NOT_PROVED, measured_verdict

    assert measured_verdict(np.array([True] * 5)) == MEASURED_NOT_PROVED == "holds where measured, not proved"
    assert measured_verdict(pd.Series([True, False, True])) == "does not hold"
    assert measured_verdict([False]) == "does not hold"
    for bad in ([], [1, 0], ["yes"]):
        with pytest.raises(ValueError, match="passes must hold at least one boolean"):
            measured_verdict(bad)
