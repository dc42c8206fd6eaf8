"""Chapter 14's comparisons of many systems (lib.experiments.verdicts, its chapter 14 section),
each against a computation written out with the standard library."""
import math
import statistics

import numpy as np
import pandas as pd
import pytest

from lib.experiments.verdicts import cell_winners, regrets, win_counts, win_summary


def _frame(scores):
    """A grid frame from {(dataset, eps, model): [scores of the repeats]}."""
    return pd.DataFrame([{"dataset": d, "epsilon_hat": e, "model": m, "repeat": i, "score": v}
                         for (d, e, m), values in scores.items() for i, v in enumerate(values)])


def _z(x, y):
    return (statistics.fmean(x) - statistics.fmean(y)) / math.sqrt(
        statistics.variance(x) / len(x) + statistics.variance(y) / len(y))


RNG = np.random.default_rng(7)
SCORES = {(d, e, m): list(RNG.normal(loc, 1.0, size=6))
          for d in ("A", "B", "C") for e in (0.1, 10.0)
          for m, loc in (("x", 3.0 if d == "A" else 0.0), ("y", 0.5 if d == "B" else 0.0), ("z", 0.2))}


@pytest.mark.parametrize("best", ["max", "min"])
def test_cell_winners_against_brute_force(best):
    out = cell_winners(_frame(SCORES), "score", best=best)
    for d in ("A", "B", "C"):
        for e in (0.1, 10.0):
            means = {m: statistics.fmean(SCORES[d, e, m]) for m in "xyz"}
            leader = (max if best == "max" else min)(means, key=means.get)
            sign = 1 if best == "max" else -1
            lead = min(sign * _z(SCORES[d, e, leader], SCORES[d, e, o]) for o in "xyz" if o != leader)
            row = out.loc[(d, e)]
            assert row["leader"] == leader
            assert row["lead"] == pytest.approx(lead, rel=1e-12)
            assert row["winner"] == (leader if lead > 2 else None)
    if best == "max":   # x leads on A by three standard deviations of one repeat: won at both budgets
        assert out.loc[("A", 0.1), "winner"] == "x" and out.loc[("A", 10.0), "winner"] == "x"


def test_constant_equal_scores_are_an_exact_tie():
    scores = {("A", 1.0, "x"): [1.0, 1.0, 1.0], ("A", 1.0, "y"): [1.0, 1.0, 1.0], ("A", 1.0, "z"): [0.0, 0.1, 0.2]}
    out = cell_winners(_frame(scores), "score", best="max")
    assert out.loc[("A", 1.0), "lead"] == 0.0 and out.loc[("A", 1.0), "winner"] is None
    # one repeat: no standard error, no lead
    single = cell_winners(_frame({("A", 1.0, "x"): [2.0], ("A", 1.0, "y"): [1.0]}), "score", best="max")
    assert np.isnan(single.loc[("A", 1.0), "lead"]) and single.loc[("A", 1.0), "winner"] is None


def test_win_counts_and_summary():
    idx = pd.MultiIndex.from_tuples([(d, e) for d in "ABCD" for e in (0.1, 10.0)], names=["dataset", "epsilon_hat"])
    winner = pd.Series(["x", "x", "y", "x", None, "y", "x", "y"], index=idx, dtype=object)
    counts = win_counts(winner)
    # by hand: at 0.1, A x, B y, C None, D x; at 10, A x, B x, C y, D y
    assert counts.loc[0.1].to_dict() == {"x": 2, "y": 1, "decided": 3, "undecided": 1, "cells": 4}
    assert counts.loc[10.0].to_dict() == {"x": 2, "y": 2, "decided": 4, "undecided": 0, "cells": 4}
    text = win_summary(winner, label=str.upper)
    assert text.to_dict() == {0.1: "X 2/4, Y 1/4, undecided 1/4", 10.0: "X 2/4, Y 2/4"}
    assert text.index.name == "epsilon_hat"


def test_regrets_against_brute_force():
    frame = _frame(SCORES)
    short = regrets(frame, "score", "shortfall", per=pd.Series({"A": 2.0, "B": 4.0, "C": 1.0}))
    scores = {k: [abs(v) + 0.1 for v in vals] for k, vals in SCORES.items()}
    ratio = regrets(_frame(scores), "score", "ratio")
    for d, per in (("A", 2.0), ("B", 4.0), ("C", 1.0)):
        for e in (0.1, 10.0):
            means = {m: statistics.fmean(SCORES[d, e, m]) for m in "xyz"}
            pos = {m: statistics.fmean(scores[d, e, m]) for m in "xyz"}
            for m in "xyz":
                assert short.loc[(e, d), m] == pytest.approx((max(means.values()) - means[m]) / per, abs=1e-14)
                assert ratio.loc[(e, d), m] == pytest.approx(pos[m] / min(pos.values()), rel=1e-14)
    assert (short.min(axis=1) == 0).all() and (ratio.min(axis=1) == 1).all()


def test_bad_input_is_refused():
    frame = _frame(SCORES)
    with pytest.raises(ValueError, match="best"):
        cell_winners(frame, "score", best="median")
    with pytest.raises(ValueError, match="threshold"):
        cell_winners(frame, "score", best="max", threshold=0.0)
    with pytest.raises(ValueError, match="column"):
        cell_winners(frame, "accuracy", best="max")
    with pytest.raises(ValueError, match="kind"):
        regrets(frame, "score", "difference")
    with pytest.raises(ValueError, match="per"):
        regrets(frame, "score", "ratio", per=pd.Series({"A": 1.0}))
    with pytest.raises(ValueError, match="positive"):
        regrets(frame, "score", "ratio")
    with pytest.raises(ValueError, match="every dataset"):
        regrets(frame, "score", "shortfall", per=pd.Series({"A": 1.0}))


def test_majority_share_by_hand():
    from lib.experiments.verdicts import majority_share
    y = [1, 1, 0, 2, 1]                     # class 1 is the majority
    lp = np.log([[[0.2, 0.7, 0.1], [0.5, 0.4, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.1, 0.2, 0.7]],
                 [[0.1, 0.8, 0.1], [0.1, 0.8, 0.1], [0.1, 0.8, 0.1], [0.1, 0.8, 0.1], [0.1, 0.8, 0.1]]])
    # first release: rows 0 and 2 predict class 1; second release: all five
    assert majority_share(lp, y) == (2 + 5) / 10
    assert majority_share(lp[0], y) == 2 / 5
    with pytest.raises(ValueError, match="shape"):
        majority_share(lp[:, :4], y)
    with pytest.raises(ValueError, match="class outside"):
        majority_share(lp, [3, 1, 1, 1, 1])


@pytest.mark.parametrize("outcomes, expected", [
    (["better"] * 4, "holds"),
    (["better", "no difference", "no difference"], "partly"),
    (["no difference"] * 4, "does not hold"),
    (["better", "worse"], "does not hold"),
    (["worse"], "does not hold"),
])
def test_improvement_verdict(outcomes, expected):
    from lib.experiments.verdicts import improvement_verdict

    assert improvement_verdict(outcomes) == expected
    assert improvement_verdict(pd.Series(outcomes)) == expected


@pytest.mark.parametrize("bad", [[], ["better", "maybe"], ["holds"]])
def test_improvement_verdict_refuses_unknown_outcomes(bad):
    from lib.experiments.verdicts import improvement_verdict

    with pytest.raises(ValueError, match="outcomes"):
        improvement_verdict(bad)
