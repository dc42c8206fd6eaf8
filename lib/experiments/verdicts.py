"""Every comparison the chapters make: one function per test, one typed result per verdict.

A chapter never computes a p-value itself: it calls one of the functions below
and glues the statistic, the p-value or the verdict text of the result.

**API summary.** Results:

* :class:`Verdict` (frozen): ``test`` (the test's name), ``statistic``,
  ``p_value``, ``verdict`` (the text a chapter glues), ``over`` (what the test
  runs over: ``"cells"``, ``"splits"``, ``"folds"``, ``"releases"`` or
  ``"datasets"``), ``which`` (the units, e.g. the split seeds) and ``n``
  (how many units).

Tests returning one :class:`Verdict`

* :func:`wins_over_cells` ``(z, threshold=3.0)``: the share of cells won
  (:math:`z >` threshold); "holds" if every cell is won, "does not hold" if
  fewer than half, else "partly"; p-value of the two-sided sign test of
  the cells won against the cells lost.
* :func:`sign_test` ``(diffs, over="datasets")``: two-sided binomial test of the
  signs of differences (exact zeros left out).
* :func:`t_over_splits` ``(diffs, which)``: one-sample t-test of the
  differences over splits (each split one observation).
* :func:`corrected_t_test` ``(diffs, test_share)``: Nadeau and Bengio's
  corrected resampled t-test over cross-validation folds.
* :func:`z_test` ``(x, y)``: two-sample z-test of the means of two sets of
  independent releases (unbiased variances).
* :func:`majority_baseline` ``(accuracy, majority, which)``: is a model more
  accurate than the majority class, over splits (one-sided t-test).

Frames of many comparisons at once (one row per cell, split or budget)

* :func:`cell_z` ``(results, a, b, metric)``: per (dataset, budget) cell of a
  grid, ``a`` minus ``b`` over the repeats: ``diff, se, z``.
* :func:`cells_over_splits` ``(grid, better, worse, ...)``: per cell, the
  difference pooled over splits with its z and outcome
  (:data:`OUTCOMES`); :func:`claim_verdict` reads the outcomes.
* :func:`over_splits` ``(table, a, b)``: per dataset, the t-test of
  :func:`t_over_splits` (``diff, se, t, p``).
* :func:`paired_cv_test` ``(cv, a, b)``: per budget, the test of
  :func:`corrected_t_test` on a cross-validation frame
  (``mean, se, t, p, folds, verdict``).
* :func:`z_by_group` ``(frame, by, a, b)``: per group, :func:`z_test`'s ``diff, se, z``.

* :func:`small_against_large` ``(gap, k=3)``: per dataset, the mean gap of
  :func:`cell_z` over the ``k`` smallest and the ``k`` largest budgets, with z statistics.
* :func:`behind` ``(results, a, b, metric)``: per cell, is ``a``'s mean more than one
  standard error below ``b``'s?

Budgets and margins

* :func:`holds_up_to` ``(flags)``: the largest budget up to which a per-budget
  condition holds without a break from the smallest.
* :func:`clear_from` ``(bad)``: the smallest budget from which on no budget is bad;
  :func:`budget_text` writes it (``"never"`` for infinity).
* :func:`majority_accuracy` ``(y_test, y_train=None)``: the accuracy of
  always predicting the majority class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special, stats

from lib import validation

#: What a verdict can be over.
OVER = ("cells", "splits", "folds", "releases", "datasets")

#: The outcomes of :func:`cells_over_splits`.
OUTCOMES = ("win", "tie", "loss", "same posterior")


@dataclass(frozen=True)
class Verdict:
    """The result of one comparison.

    Attributes
    ----------
    test : str
        The test, in words (e.g. ``"two-sided sign test"``).
    statistic : float
        Its statistic (a count, a share, t or z).
    p_value : float
        Its p-value (NaN where the test has none, e.g. no decided unit).
    verdict : str
        The text a chapter glues.
    over : str
        What the test runs over: one of :data:`OVER`.
    which : tuple
        The units it runs over (split seeds, datasets, cells), when named.
    n : int
        The number of units.
    estimate : float
        The compared quantity (a mean difference), NaN for a count test.
    se : float
        Its standard error as the test uses it, NaN for a count test.
    """

    test: str
    statistic: float
    p_value: float
    verdict: str
    over: str
    which: tuple = ()
    n: int = 0
    estimate: float = float("nan")
    se: float = float("nan")

    def __post_init__(self):
        if self.over not in OVER:
            raise ValueError(f"over must be one of {OVER}; got {self.over!r}")


def _direction(statistic, p, alpha, words=("higher", "lower", "no difference")):
    """``words[0]`` if significant and positive, ``words[1]`` if significant and negative, else ``words[2]``."""
    if p < alpha and statistic > 0:
        return words[0]
    return words[1] if p < alpha else words[2]


def _alpha(alpha):
    return validation.scalar(validation.open_unit(alpha, "alpha"), "alpha")


def _vector(values, name):
    arr = np.asarray(values, dtype=float) if not isinstance(values, (pd.Series, pd.DataFrame)) \
        else values.to_numpy(dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    return arr


# ------------------------------------------------------------------ cells of a grid


def cell_z(results: pd.DataFrame, a: str, b: str, metric: str) -> pd.DataFrame:
    """Mechanism ``a`` against ``b`` in every (dataset, budget) cell, over the repeats.

    The two mechanisms' repeats are independent draws, so the standard error of
    the difference of their means is :math:`\\sqrt{s_a^2/n_a + s_b^2/n_b}` with
    the unbiased sample variances (``ddof=1``); ``z`` is the difference over it.

    Parameters
    ----------
    results : pandas.DataFrame
        A grid frame (:func:`lib.experiments.engine.run`): columns ``dataset``,
        ``model``, the budget (``epsilon`` or ``epsilon_hat``) and ``metric``.
    a, b : str
        Values of ``model``.
    metric : str
        A score column.

    Returns
    -------
    pandas.DataFrame
        Indexed by (dataset, budget): ``diff`` (mean of ``a`` minus mean of
        ``b``), ``se`` and ``z``; cells where either has no attained repeat are NaN.
    """
    x = "epsilon_hat" if "epsilon_hat" in results.columns else "epsilon"
    if metric not in results.columns:
        raise ValueError(f"results has no column {metric!r}")
    moments = {}
    for name in (a, b):
        rows = results[results.model == name]
        if not len(rows):
            raise ValueError(f"results hold no rows of mechanism {name!r}")
        g = rows.groupby(["dataset", x], sort=False)[metric]
        moments[name] = pd.DataFrame({"mean": g.mean(), "var": g.var(ddof=1), "n": g.count()})
    sa, sb = moments[a], moments[b].reindex(moments[a].index)
    diff = sa["mean"] - sb["mean"]
    se = np.sqrt(sa["var"] / sa["n"] + sb["var"] / sb["n"])
    return pd.DataFrame({"diff": diff, "se": se, "z": diff / se})


def wins_over_cells(z: ArrayLike, threshold: float = 3.0) -> Verdict:
    """Does one mechanism win every cell? The z-scores of :func:`cell_z` read as a verdict.

    A cell is won where :math:`z >` ``threshold``, lost where :math:`z < -`
    ``threshold``, undecided otherwise. The verdict is ``"holds"`` if every cell
    is won, ``"does not hold"`` if fewer than half are, else ``"partly"``; the
    statistic is the share of cells won, and the p-value is the two-sided sign
    test (binomial, :math:`p = 1/2`) of the cells won against the cells lost
    (NaN if no cell is decided).

    Parameters
    ----------
    z : array_like or pandas.Series
        One z-score per cell (finite).
    threshold : float
        > 0.
    """
    threshold = validation.scalar(validation.positive(threshold, "threshold"), "threshold")
    values = _vector(z, "z")
    if values.size == 0:
        raise ValueError("z must hold at least one cell")
    validation.in_range(values, "z", -np.inf, open_low=True)
    won, lost = int((values > threshold).sum()), int((values < -threshold).sum())
    share = won / values.size
    verdict = "holds" if won == values.size else ("does not hold" if share < 0.5 else "partly")
    p = stats.binomtest(won, won + lost).pvalue if won + lost else np.nan
    which = tuple(z.index) if isinstance(z, pd.Series) else ()
    return Verdict(f"wins over cells (z > {threshold:g})", share, float(p), verdict, "cells", which, values.size)


def cells_over_splits(grid: pd.DataFrame, better: str, worse: str, *, metric: str = "error", threshold: float = 3.0,
                      by: Sequence[str] = ("lam", "epsilon"), model: str = "method") -> pd.DataFrame:
    """Is ``better``'s mean ``metric`` lower than ``worse``'s in each cell, over releases and splits?

    In each split :math:`s` and cell, :math:`d_s` is the difference of the mean
    ``metric`` of ``worse`` and of ``better`` over their releases, with variance
    :math:`v_s = \\mathrm{se}^2_{\\text{better},s} + \\mathrm{se}^2_{\\text{worse},s}`
    (the releases of the two are independent). Over the :math:`S` splits:
    :math:`D = \\bar d`, :math:`\\mathrm{se}(D) = \\sqrt{\\sum_s v_s}/S` (the splits
    are fixed: the test is about the mean over these splits), :math:`z = D/\\mathrm{se}`
    and its two-sided normal p-value. The outcome is ``"win"`` when
    :math:`z > ` ``threshold``, ``"loss"`` when :math:`z < -` ``threshold``, else
    ``"tie"``; and ``"same posterior"`` when the two sample one posterior (equal
    ``beta, rho, radius`` on every split: their draws are shared, :math:`D = 0`).
    ``agree`` is the share of splits whose :math:`d_s` has the sign of :math:`D`.

    Parameters
    ----------
    grid : pandas.DataFrame
        Rows of a logistic-regression grid (a missing ``split`` column is one split); or any frame
        with the columns ``model``, ``by``, ``metric`` (and ``beta, rho, radius`` to detect shared posteriors).
    better, worse : str
        Values of the column ``model``.
    threshold : float
        The z beyond which a difference is decided, > 0.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``by``: ``diff, se, z, p, agree, outcome``.
    """
    threshold = validation.scalar(validation.positive(threshold, "threshold"), "threshold")
    by = list(by)
    g = grid if "split" in grid.columns else grid.assign(split=0)
    for name in (better, worse):
        if not (g[model] == name).any():
            raise ValueError(f"{model} {name!r} is not in the grid")
    keys = by + ["split"]
    moments, posteriors = {}, {}
    for name in (better, worse):
        rows = g[g[model] == name].groupby(keys)
        moments[name] = pd.DataFrame({"mean": rows[metric].mean(), "var": rows[metric].var(ddof=1) / rows.size()})
        posteriors[name] = _posterior_keys(rows)
    a, b = moments[better].align(moments[worse], join="inner")
    if a.empty:
        raise ValueError(f"{better!r} and {worse!r} share no cell of {by} and split")
    if not (np.isfinite(a["var"]).all() and np.isfinite(b["var"]).all()):
        raise ValueError("every cell needs at least two releases of each model (a standard error)")
    same = [posteriors[better].get(i) is not None and posteriors[better].get(i) == posteriors[worse].get(i)
            for i in a.index]
    per = pd.DataFrame({"d": b["mean"] - a["mean"], "v": a["var"] + b["var"], "same": same}, index=a.index)
    cell = per.groupby(by)
    S = cell.size()
    out = pd.DataFrame({"diff": cell["d"].mean(), "se": np.sqrt(cell["v"].sum()) / S})
    same = cell["same"].all()
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(out["se"] > 0, out["diff"] / out["se"].where(out["se"] > 0, 1.0),
                     np.where(out["diff"] == 0, 0.0, np.copysign(np.inf, out["diff"])))
    out["z"] = np.where(same, 0.0, z)
    out["p"] = 2 * special.ndtr(-np.abs(out["z"]))
    overall = np.sign(out["diff"]).reindex(per.index.droplevel("split")).to_numpy()
    out["agree"] = pd.Series(np.sign(per["d"].to_numpy()) == overall, index=per.index).groupby(by).mean()
    out["outcome"] = np.select([same, out["z"] > threshold, out["z"] < -threshold], ["same posterior", "win", "loss"],
                               "tie")
    return out


def _posterior_keys(groups):
    """For each group of releases, the one posterior ``(beta, rho, radius)`` it sampled, if known and unique."""
    frame = groups.obj
    if not {"beta", "rho", "radius"} <= set(frame.columns):
        return {}
    k = groups[["beta", "rho", "radius"]]
    unique = (k.nunique() == 1).all(axis=1)
    first = k.first()
    return {i: tuple(first.loc[i]) for i in first.index if unique.loc[i]}


def claim_verdict(outcomes: Iterable[str]) -> str:
    """The verdict on "better is lower in every cell" from :func:`cells_over_splits`'s outcomes.

    ``"does not hold"`` if a cell is a loss; ``"holds"`` if every cell where the two
    sample different posteriors is a win (and there is one); ``"partly"`` otherwise
    (no loss, but some cells undecided, or no cell where they differ).
    """
    o = pd.Series(outcomes)
    if not o.isin(OUTCOMES).all():
        raise ValueError(f"outcomes must be among {OUTCOMES}")
    if (o == "loss").any():
        return "does not hold"
    differ = o[o != "same posterior"]
    return "holds" if len(differ) and (differ == "win").all() else "partly"


# ------------------------------------------------------------------ signs, splits, folds, releases


def sign_test(diffs: ArrayLike, *, over: str = "datasets", alpha: float = 0.05) -> Verdict:
    """Two-sided binomial test of the signs of ``diffs`` (exact zeros, ties, left out).

    Under "no difference" each nonzero difference is positive with probability
    1/2. The statistic is the number of positive differences; the verdict is
    ``"more often positive"`` / ``"more often negative"`` at ``p < alpha``,
    else ``"no difference"``. Eight positive of eight gives :math:`p = 2^{-7}`.

    Parameters
    ----------
    diffs : array_like or pandas.Series
        One difference per unit (a Series names its units in ``which``).
    over : str
        What the units are (one of :data:`OVER`).
    """
    alpha = _alpha(alpha)
    values = _vector(diffs, "diffs")
    validation.in_range(values, "diffs", -np.inf, open_low=True)
    up, nonzero = int((values > 0).sum()), int((values != 0).sum())
    if nonzero == 0:
        raise ValueError("diffs must hold at least one nonzero difference (the sign test leaves out ties)")
    p = float(stats.binomtest(up, nonzero).pvalue)
    verdict = _direction(up - nonzero / 2, p, alpha, ("more often positive", "more often negative", "no difference"))
    which = tuple(diffs.index) if isinstance(diffs, pd.Series) else ()
    return Verdict("two-sided sign test", float(up), p, verdict, over, which, nonzero)


def t_over_splits(diffs: ArrayLike, which: Sequence = (), *, alpha: float = 0.05) -> Verdict:
    """One-sample two-sided t-test of paired differences over splits (each split one observation).

    The variation of the data between splits, as well as of the noise, is in
    the test: :math:`t = \\bar d / (s/\\sqrt S)` with :math:`S - 1` degrees of
    freedom. Verdict ``"higher"`` / ``"lower"`` at ``p < alpha``, else ``"no difference"``.

    Parameters
    ----------
    diffs : array_like
        One difference per split (at least two).
    which : sequence
        The splits (their seeds), recorded in the result.
    """
    alpha = _alpha(alpha)
    values = _vector(diffs, "diffs")
    if values.size < 2:
        raise ValueError(f"diffs must hold at least 2 splits; got {values.size}")
    validation.in_range(values, "diffs", -np.inf, open_low=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        res = stats.ttest_1samp(values, 0.0)
    t, p = float(res.statistic), float(res.pvalue)
    se = float(values.std(ddof=1) / np.sqrt(values.size))
    return Verdict("one-sample t-test over splits", t, p, _direction(t, p, alpha) if np.isfinite(p) else
                   "no difference", "splits", tuple(which), values.size, float(values.mean()), se)


def over_splits(table: pd.DataFrame, a: str, b: str, *, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Per dataset, ``a - b`` over the splits: the mean, its standard error, t and the two-sided p.

    The test of :func:`t_over_splits` on every dataset at once.

    Parameters
    ----------
    table : pandas.DataFrame
        Indexed by (dataset, split), one column per model (e.g. its mean accuracy on that split).
    a, b : str
        Columns of ``table``.
    order : sequence, optional
        The datasets, in the order of the result (default: as in ``table``).

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset: ``diff`` (an exact tie, within 1e-12, is 0: accuracies are
        counts of test rows, whose means can cancel), ``se``, ``t`` and ``p``; a dataset
        whose differences are all equal has NaN ``t`` and ``p``.
    """
    for name in (a, b):
        if name not in table.columns:
            raise ValueError(f"table has no column {name!r}; its columns are {list(table.columns)}")
    d = (table[a] - table[b]).unstack("split")
    if order is not None:
        d = d.reindex(list(order))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = stats.ttest_1samp(d.to_numpy(), 0.0, axis=1)
    diff = d.mean(axis=1)
    return pd.DataFrame({"diff": diff.where(diff.abs() > 1e-12, 0.0), "se": d.sem(axis=1),
                         "t": t.statistic, "p": t.pvalue})


def corrected_t_test(diffs: ArrayLike, test_share: float, *, alpha: float = 0.05,
                     words: tuple[str, str, str] = ("better", "worse", "no difference")) -> Verdict:
    """Nadeau and Bengio's corrected resampled t-test (2003) over cross-validation folds.

    The folds share training rows, so the variance of the mean difference
    :math:`\\bar d` over :math:`J` folds is :math:`(1/J + n_{test}/n_{train})\\,s^2`
    rather than :math:`s^2/J`; :math:`t = \\bar d / \\mathrm{se}` with
    :math:`J - 1` degrees of freedom, two-sided.

    Parameters
    ----------
    diffs : array_like
        One difference per fold (at least two).
    test_share : float
        :math:`n_{test}/n_{train}` (:math:`1/(K-1)` for :math:`K`-fold cross-validation), >= 0.
    words : three str
        The verdict for a significant positive, significant negative and undecided difference.
    """
    alpha = _alpha(alpha)
    share = validation.scalar(validation.nonnegative(test_share, "test_share"), "test_share")
    d = _vector(diffs, "diffs")
    j = d.size
    if j < 2:
        raise ValueError(f"at least 2 folds are needed; got {j}")
    validation.in_range(d, "diffs", -np.inf, open_low=True)
    mean = float(d.mean())
    se = float(np.sqrt((1.0 / j + share) * d.var(ddof=1)))
    t = mean / se if se > 0 else np.inf * np.sign(mean)
    p = float(2 * stats.t.sf(abs(t), j - 1))
    return Verdict("corrected resampled t-test (Nadeau-Bengio)", t, p, _direction(t, p, alpha, words), "folds",
                   (), j, mean, se)


def paired_cv_test(cv: pd.DataFrame, a: str, b: str, *, test_share: float | None = None) -> pd.DataFrame:
    """Paired comparison of variants ``a`` and ``b`` over the folds of a cross-validation, per epsilon.

    Per (repeat, fold) the accuracy of each variant is averaged over its
    draws and the difference ``a - b`` taken; over the :math:`J` folds of all
    repeats, :func:`corrected_t_test` with ``test_share`` (default
    :math:`1/(K-1)` for :math:`K` folds).

    Parameters
    ----------
    cv : pandas.DataFrame
        Columns ``variant, epsilon, repeat, fold, accuracy``
        (:func:`lib.experiments.tasks.mixed_naive_bayes.cross_validate`).

    Returns
    -------
    pandas.DataFrame
        Index epsilon; columns ``mean`` (of the differences), ``se`` (corrected),
        ``t``, ``p`` (two-sided), ``folds`` (:math:`J`) and ``verdict``
        (``"better"``/``"worse"`` at p < 0.05, else ``"no difference"``).
    """
    per_fold = cv[cv.variant.isin([a, b])].groupby(["variant", "epsilon", "repeat", "fold"])["accuracy"].mean()
    wide = per_fold.unstack("variant")
    if a not in wide or b not in wide:
        raise ValueError(f"variants {a!r} and {b!r} must both be in cv; got {sorted(cv.variant.unique())}")
    diff = (wide[a] - wide[b]).dropna()
    k = int(cv["fold"].max()) + 1
    share = 1.0 / (k - 1) if test_share is None else float(test_share)
    rows = {}
    for eps, d in diff.groupby(level="epsilon"):
        if d.size < 2:
            raise ValueError(f"at least 2 folds are needed per epsilon; got {d.size} at epsilon={eps:g}")
        v = corrected_t_test(d.to_numpy(), share)
        rows[eps] = {"mean": v.estimate, "se": v.se, "t": v.statistic, "p": v.p_value, "folds": v.n,
                     "verdict": v.verdict}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("epsilon")


def z_test(x: ArrayLike, y: ArrayLike, *, alpha: float = 0.05, which: Sequence = ()) -> Verdict:
    """Two-sample z-test of mean(x) - mean(y) over independent releases.

    :math:`z = (\\bar x - \\bar y) / \\sqrt{s_x^2/n_x + s_y^2/n_y}` with the
    unbiased variances (``ddof=1``); two-sided normal p-value. Verdict
    ``"higher"`` / ``"lower"`` at ``p < alpha``, else ``"no difference"``.

    Parameters
    ----------
    x, y : array_like
        The scores of two sets of releases (at least two each).
    """
    alpha = _alpha(alpha)
    a, b = _vector(x, "x"), _vector(y, "y")
    for arr, name in ((a, "x"), (b, "y")):
        if arr.size < 2:
            raise ValueError(f"{name} must hold at least 2 releases; got {arr.size}")
        validation.in_range(arr, name, -np.inf, open_low=True)
    diff = a.mean() - b.mean()
    se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    z = diff / se
    p = float(2 * special.ndtr(-abs(z)))
    return Verdict("two-sample z-test", float(z), p, _direction(z, p, alpha), "releases", tuple(which),
                   a.size + b.size, float(diff), float(se))


def z_by_group(frame: pd.DataFrame, by: str | Sequence[str], a: Hashable, b: Hashable, *, column: str,
               metric: str) -> pd.DataFrame:
    """Per group of ``by``, the two-sample z of ``metric`` between the rows with ``column == a`` and ``== b``.

    The standard error is :math:`\\sqrt{\\mathrm{sem}_a^2 + \\mathrm{sem}_b^2}`
    (the two sets of releases independent, ``ddof=1``), as in :func:`z_test`.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``by``: ``diff``, ``se``, ``z``.
    """
    by = [by] if isinstance(by, str) else list(by)
    g = frame.groupby([column] + by)[metric]
    m, s = g.mean(), g.sem()
    for name in (a, b):
        if name not in m.index.get_level_values(0):
            raise ValueError(f"{column} {name!r} is not in the frame")
    diff = m.loc[a] - m.loc[b]
    se = np.sqrt(s.loc[a] ** 2 + s.loc[b] ** 2)
    return pd.DataFrame({"diff": diff, "se": se, "z": diff / se})


# ------------------------------------------------------------------ the majority class


def majority_accuracy(y_test: ArrayLike, y_train: ArrayLike | None = None) -> float:
    """The accuracy on ``y_test`` of always predicting the majority class.

    The majority class is that of ``y_train`` when given (what a trained
    baseline predicts), else of ``y_test`` itself (the share of the test rows in
    their most frequent class). Ties go to the smallest class code.
    """
    test = validation.integer_array(y_test, "y_test")
    if test.size == 0:
        raise ValueError("y_test must hold at least one row")
    if y_train is None:
        return float(np.bincount(test).max() / test.size)
    train = validation.integer_array(y_train, "y_train")
    if train.size == 0:
        raise ValueError("y_train must hold at least one row")
    return float((test == np.bincount(train).argmax()).mean())


def majority_baseline(accuracy: ArrayLike, majority: ArrayLike, which: Sequence = (), *, alpha: float = 0.1) -> Verdict:
    """Is a model more accurate than the majority class? A t-test of ``accuracy - majority`` over splits.

    The verdict is ``"above the majority class"`` where the mean difference is
    positive at two-sided ``p < alpha`` (``alpha = 0.1``: one-sided 0.05), else
    ``"not above the majority class"``; a model that predicts the majority
    class on every test row has all differences 0 (p NaN) and is not above.

    Parameters
    ----------
    accuracy, majority : array_like
        Per split: the model's accuracy and the majority class's.
    which : sequence
        The splits.
    """
    alpha = _alpha(alpha)
    acc, maj = _vector(accuracy, "accuracy"), _vector(majority, "majority")
    if acc.shape != maj.shape:
        raise ValueError(f"accuracy and majority must have one entry per split; got {acc.size} and {maj.size}")
    if acc.size < 2:
        raise ValueError(f"accuracy must hold at least 2 splits; got {acc.size}")
    validation.in_range(acc, "accuracy", 0.0, 1.0, open_low=False, open_high=False)
    validation.in_range(maj, "majority", 0.0, 1.0, open_low=False, open_high=False)
    d = acc - maj
    with np.errstate(divide="ignore", invalid="ignore"):
        res = stats.ttest_1samp(d, 0.0)
    t, p = float(res.statistic), float(res.pvalue)
    above = bool(d.mean() > 0 and p < alpha)
    return Verdict("one-sample t-test over splits against the majority class", t, p,
                   "above the majority class" if above else "not above the majority class", "splits",
                   tuple(which), acc.size, float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)))


# ------------------------------------------------------------------ chapters 10 and 11


def share_sign_test(shares: ArrayLike, which: Sequence = (), *, null: float = 0.5, alpha: float = 0.05) -> Verdict:
    """Is a per-split share (e.g. of a group's cells won) above ``null`` on more splits than chance allows?

    Each split (its own train/test split and seed) gives one share in [0, 1]. The
    splits are independent; the two-sided sign test (binomial, :math:`p = 1/2`) of
    the splits strictly above ``null`` against those strictly below (ties left out)
    needs no variance, so it also works when every split gives the same share.
    Eight splits of eight on one side give :math:`p = 2^{-7}`.

    Parameters
    ----------
    shares : array_like or pandas.Series
        One share per split, at least two (a Series names its splits in ``which``).
    which : sequence
        The splits, recorded in the result (a Series' index when empty).
    null : float
        The share under no preference, in (0, 1).
    alpha : float
        The level of the verdict.

    Returns
    -------
    Verdict
        ``statistic``: splits above ``null``; ``n``: splits above or below (``n -
        statistic`` below); ``p_value`` (1 when every split ties); ``estimate`` and
        ``se``: the mean share and its standard error over the splits (``ddof=1``);
        ``verdict``: ``"more often above"`` / ``"more often below"`` at ``p < alpha``,
        else ``"no difference"``; ``over``: ``"splits"``.
    """
    alpha = _alpha(alpha)
    null = validation.scalar(validation.open_unit(null, "null"), "null")
    values = _vector(shares, "shares")
    validation.in_range(values, "shares", 0.0, 1.0, open_low=False, open_high=False)
    if values.size < 2:
        raise ValueError(f"shares must hold at least 2 splits; got {values.size}")
    above, below = int((values > null).sum()), int((values < null).sum())
    p = float(stats.binomtest(above, above + below).pvalue) if above + below else 1.0
    verdict = _direction(above - below, p, alpha, ("more often above", "more often below", "no difference"))
    if not which and isinstance(shares, pd.Series):
        which = tuple(shares.index)
    return Verdict("two-sided sign test over splits", float(above), p, verdict, "splits", tuple(which),
                   above + below, float(values.mean()), float(values.std(ddof=1) / np.sqrt(values.size)))


def split_means(frame: pd.DataFrame, by: Sequence[str], metric: str, *, split: str = "split") -> pd.DataFrame:
    """Per group, the mean over splits of each split's mean ``metric``, and its standard error.

    In split :math:`s` a group's releases give the mean :math:`m_s` and the variance
    of that mean :math:`v_s = s^2_s / n_s` (unbiased sample variance). Over the
    :math:`S` splits: :math:`\\bar m` and :math:`\\mathrm{se} = \\sqrt{\\sum_s v_s}/S`.
    The splits are held fixed (the standard error is that of the mean over *these*
    splits, as in :func:`cells_over_splits`).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per release, with the columns ``by``, ``split`` and ``metric``.
    by : sequence of str
        The group columns.
    metric : str
        The score column.
    split : str
        The split column.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``by``: ``mean`` and ``se``.
    """
    by = list(by)
    missing = [c for c in by + [split, metric] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column {missing[0]!r}")
    g = frame.groupby(by + [split])[metric]
    per = pd.DataFrame({"mean": g.mean(), "var": g.var(ddof=1) / g.size()}).groupby(by)
    return pd.DataFrame({"mean": per["mean"].mean(), "se": np.sqrt(per["var"].sum()) / per.size()})


def combined_verdict(verdicts: Iterable[str]) -> str:
    """One verdict from the verdicts on several datasets: the common one if all are alike, else ``"partly"``.

    ``"holds"`` (``"does not hold"``) only if it holds (does not hold) on every
    dataset; any mixture, or any ``"partly"``, is ``"partly"``.

    Parameters
    ----------
    verdicts : iterable of str
        Each ``"holds"``, ``"partly"`` or ``"does not hold"``; at least one.
    """
    v = list(verdicts)
    allowed = ("holds", "partly", "does not hold")
    if not v or not set(v) <= set(allowed):
        raise ValueError(f"verdicts must be one or more of {allowed}; got {v!r}")
    kinds = set(v)
    return kinds.pop() if len(kinds) == 1 and kinds <= {"holds", "does not hold"} else "partly"


def z_against(x: ArrayLike, value: float, *, alpha: float = 0.05, which: Sequence = ()) -> Verdict:
    """Is the mean of independent releases ``x`` different from a fixed ``value``? A one-sample z-test.

    For a comparison with a deterministic reference (e.g. a non-private model's
    score): :math:`z = (\\bar x - v)/\\mathrm{se}` with
    :math:`\\mathrm{se} = s/\\sqrt n` (unbiased sample variance) and the two-sided
    normal p-value. Verdict ``"higher"`` / ``"lower"`` at ``p < alpha``, else
    ``"no difference"``.

    Parameters
    ----------
    x : array_like
        One score per release, at least two, finite.
    value : float
        The reference, finite.
    which : sequence
        The releases, when named.

    Returns
    -------
    Verdict
        ``statistic`` z, ``estimate`` :math:`\\bar x - v`, ``se``, ``over="releases"``.
    """
    alpha = _alpha(alpha)
    values = _vector(x, "x")
    if values.size < 2:
        raise ValueError(f"x must hold at least 2 releases; got {values.size}")
    validation.in_range(values, "x", -np.inf, open_low=True)
    value = validation.scalar(validation.in_range(value, "value", -np.inf, open_low=True), "value")
    se = values.std(ddof=1) / np.sqrt(values.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (values.mean() - value) / se
    if se == 0:
        z = 0.0 if values.mean() == value else np.copysign(np.inf, values.mean() - value)
    p = float(2 * special.ndtr(-abs(z)))
    return Verdict("one-sample z-test against a fixed value", float(z), p, _direction(z, p, alpha), "releases",
                   tuple(which), values.size, float(values.mean() - value), float(se))


# ------------------------------------------------------------------ chapter 14: cells won, regrets
# Chapter 14 compares many systems at once: which one wins a (dataset, budget) cell, how often each
# wins, and how far each falls behind the best of a cell at worst.


def cell_winners(frame: pd.DataFrame, metric: str, *, best: str, threshold: float = 2.0) -> pd.DataFrame:
    """Per (dataset, budget) cell, the model with the best mean and whether it leads every other by z.

    The leader of a cell is the model with the highest (``best="max"``) or lowest
    (``best="min"``) mean ``metric`` over its repeats; its lead is the smallest,
    over the other models present in the cell, of the two-sample z of
    :func:`cell_z` (leader minus other, its sign turned so that a positive z
    favours the leader). The leader wins the cell where its lead exceeds
    ``threshold``. Two models with constant, equal scores in a cell (e.g. both
    predicting the majority class for every test row) are tied exactly: their z,
    0/0, counts as a lead of 0. A lead that cannot be computed (a model with a
    single repeat) is NaN, and the cell stays undecided.

    Parameters
    ----------
    frame : pandas.DataFrame
        A grid frame (columns ``dataset``, ``model``, the budget ``epsilon`` or
        ``epsilon_hat``, ``metric``).
    metric : str
        A score column.
    best : {"max", "min"}
        Whether a higher or a lower score is better.
    threshold : float
        The lead beyond which the leader wins, > 0.

    Returns
    -------
    pandas.DataFrame
        Indexed by (dataset, budget): ``leader``, ``lead`` and ``winner`` (the
        leader where it wins, else None).
    """
    if best not in ("max", "min"):
        raise ValueError(f"best must be 'max' or 'min'; got {best!r}")
    threshold = validation.scalar(validation.positive(threshold, "threshold"), "threshold")
    if metric not in frame.columns:
        raise ValueError(f"frame has no column {metric!r}")
    x = "epsilon_hat" if "epsilon_hat" in frame.columns else "epsilon"
    means = frame.groupby(["dataset", x, "model"])[metric].mean().unstack("model")
    top = means.idxmax(axis=1) if best == "max" else means.idxmin(axis=1)
    sign = 1.0 if best == "max" else -1.0
    z = {}
    for w in top.unique():
        for o in means.columns:
            if o != w:
                c = cell_z(frame, w, o, metric)
                # two models with constant, equal scores: an exact tie, a lead of 0 (not 0/0)
                z[w, o] = sign * c.z.mask((c["diff"] == 0) & (c.se == 0), 0.0)
    lead = []
    for cell, w in top.items():
        leads = [z[w, o].loc[cell] for o in means.columns if o != w and pd.notna(means.loc[cell, o])]
        lead.append(np.nan if np.isnan(leads).any() else min(leads))
    lead = pd.Series(lead, index=top.index, dtype=float)
    top = top.astype(object)
    return pd.DataFrame({"leader": top, "lead": lead, "winner": top.where(lead > threshold, None)})


def win_counts(winner: pd.Series) -> pd.DataFrame:
    """How many cells each model wins at each budget, and how many no model wins.

    Parameters
    ----------
    winner : pandas.Series
        Indexed by (dataset, budget), the winning model or None: the column
        ``winner`` of :func:`cell_winners`.

    Returns
    -------
    pandas.DataFrame
        Indexed by budget: one integer column per model that wins a cell,
        ``decided`` (cells won by a model), ``undecided`` and ``cells``.
    """
    level = winner.index.names[-1]
    rows = {}
    for budget, w in winner.groupby(level=level, sort=True):
        row = w.dropna().value_counts().to_dict()
        row["decided"] = int(w.notna().sum())
        row["undecided"] = int(w.isna().sum())
        row["cells"] = len(w)
        rows[budget] = row
    counts = pd.DataFrame.from_dict(rows, orient="index").fillna(0).astype(int).rename_axis(level)
    totals = ["decided", "undecided", "cells"]
    return counts[[c for c in counts.columns if c not in totals] + totals]


def win_summary(winner: pd.Series, label: Callable[[str], str] = str) -> pd.Series:
    """The cells won at each budget in words, e.g. ``"Laplace 2/2"`` or ``"Dirichlet 1/8, undecided 7/8"``.

    Models are listed by the cells they win (most first, then by label), the
    undecided cells last when there are any.

    Parameters
    ----------
    winner : pandas.Series
        As for :func:`win_counts`.
    label : callable
        A model's name in the text (default: the name itself).

    Returns
    -------
    pandas.Series of str
        Indexed by budget.
    """
    counts = win_counts(winner)
    text = {}
    for budget, row in counts.iterrows():
        won = {}
        for name in row.index.drop(["decided", "undecided", "cells"]):
            if row[name]:
                won[label(name)] = won.get(label(name), 0) + int(row[name])
        parts = [f"{k} {v}/{row['cells']}" for k, v in sorted(won.items(), key=lambda kv: (-kv[1], kv[0]))]
        if row["undecided"]:
            parts.append(f"undecided {row['undecided']}/{row['cells']}")
        text[budget] = ", ".join(parts)
    return pd.Series(text, name=None).rename_axis(counts.index.name)


def regrets(frame: pd.DataFrame, metric: str, kind: str, per: pd.Series | None = None) -> pd.DataFrame:
    """How far each model's mean falls behind the best model's, in every (budget, dataset) cell.

    With :math:`\\bar s_{m}` the mean ``metric`` of model :math:`m` over its
    repeats in a cell: ``kind="shortfall"`` gives
    :math:`\\max_{m'} \\bar s_{m'} - \\bar s_m` (a score where higher is
    better, e.g. accuracy or log-likelihood), divided by ``per[dataset]`` when
    given (e.g. the number of test records); ``kind="ratio"`` gives
    :math:`\\bar s_m / \\min_{m'} \\bar s_{m'}` (a positive loss, e.g.
    cross-entropy). The best model of a cell has regret 0 (shortfall) or 1
    (ratio); a model's worst case over the cells is the column's maximum.

    Parameters
    ----------
    frame, metric
        As in :func:`cell_winners`.
    kind : {"shortfall", "ratio"}
    per : pandas.Series, optional
        Indexed by dataset: the divisor of a shortfall.

    Returns
    -------
    pandas.DataFrame
        Indexed by (budget, dataset), one column per model.
    """
    if kind not in ("shortfall", "ratio"):
        raise ValueError(f"kind must be 'shortfall' or 'ratio'; got {kind!r}")
    if per is not None and kind != "shortfall":
        raise ValueError("per divides a shortfall only (kind='shortfall')")
    if metric not in frame.columns:
        raise ValueError(f"frame has no column {metric!r}")
    x = "epsilon_hat" if "epsilon_hat" in frame.columns else "epsilon"
    means = frame.groupby([x, "dataset", "model"])[metric].mean().unstack("model")
    if kind == "ratio":
        if not (means.to_numpy()[np.isfinite(means.to_numpy())] > 0).all():
            raise ValueError(f"a ratio regret needs positive means of {metric!r}")
        return means.div(means.min(axis=1), axis=0)
    r = means.rsub(means.max(axis=1), axis=0)
    if per is not None:
        divisor = pd.Series(per).reindex(r.index.get_level_values("dataset"))
        if divisor.isna().any():
            raise ValueError("per must give a divisor for every dataset of the frame")
        r = r.div(divisor.to_numpy(), axis=0)
    return r



# ------------------------------------------------------------------ chapters 12 and 13


def z_of_means(mean_a: ArrayLike, se_a: ArrayLike, mean_b: ArrayLike, se_b: ArrayLike) -> pd.DataFrame:
    """Two-sided z-test of ``mean_a - mean_b`` from two means and their standard errors, entry by entry.

    For comparisons where each side is summarised by its mean and standard error only: a Monte
    Carlo mean over independent releases, or an exact expectation (standard error 0).
    :math:`z = (m_a - m_b)/\\sqrt{s_a^2 + s_b^2}` and :math:`p = 2\\Phi(-|z|)`. Where both sides
    are exact the difference is decided by its sign: :math:`z = \\pm\\infty` (:math:`p = 0`),
    or :math:`z = 0` (:math:`p = 1`) for equal means.

    Parameters
    ----------
    mean_a, se_a, mean_b, se_b : array_like or pandas.Series
        Finite means and non-negative standard errors of the same shape (scalars broadcast);
        Series must share one index, which the result keeps.

    Returns
    -------
    pandas.DataFrame
        ``diff`` (:math:`m_a - m_b`), ``se``, ``z``, ``p``.
    """
    given = {"mean_a": mean_a, "se_a": se_a, "mean_b": mean_b, "se_b": se_b}
    series = [v for v in given.values() if isinstance(v, pd.Series)]
    index = series[0].index if series else None
    if any(not s.index.equals(index) for s in series):
        raise ValueError("mean_a, se_a, mean_b and se_b must share one index where they are Series")
    arrays = {k: v.to_numpy(dtype=float) if isinstance(v, pd.Series) else np.asarray(v, dtype=float)
              for k, v in given.items()}
    ma, sa, mb, sb = validation.broadcast(**arrays)
    if ma.ndim > 1:
        raise ValueError(f"the means must be scalars or one-dimensional; got shape {ma.shape}")
    for arr, name in ((ma, "mean_a"), (mb, "mean_b")):
        validation.in_range(arr, name, -np.inf, open_low=True)
    validation.nonnegative(sa, "se_a")
    validation.nonnegative(sb, "se_b")
    diff = np.atleast_1d(ma - mb)
    se = np.atleast_1d(np.hypot(sa, sb))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff == 0, 0.0, np.copysign(np.inf, diff)))
    return pd.DataFrame({"diff": diff, "se": se, "z": z, "p": 2 * special.ndtr(-np.abs(z))}, index=index)


def significantly_positive(tests: pd.DataFrame, *, alpha: float = 0.05) -> list:
    """The rows of a frame of tests whose difference is positive at ``p < alpha``, as a list of index labels.

    Reads the frames of :func:`over_splits`, :func:`z_by_group` and :func:`z_of_means` (columns
    ``diff`` and ``p``): with ``diff`` defined as "worse minus better" these are the units a
    comparison counts as won.

    Parameters
    ----------
    tests : pandas.DataFrame
        Columns ``diff`` and ``p``.
    alpha : float
        In (0, 1).
    """
    alpha = _alpha(alpha)
    missing = {"diff", "p"} - set(tests.columns)
    if missing:
        raise ValueError(f"tests must have the columns diff and p; missing {sorted(missing)}")
    return tests[(tests["diff"] > 0) & (tests["p"] < alpha)].index.tolist()


def relative_gap(a: ArrayLike, b: ArrayLike) -> float:
    """How far paired values are from a tie: :math:`\\min_i |a_i - b_i| / \\max(|a_i|, |b_i|)`.

    A count of wins is stable under rounding between machines when no compared pair is within
    rounding of a tie; this is the margin a chapter asserts.

    Parameters
    ----------
    a, b : array_like or pandas.Series
        Finite values of the same length, not both zero at any entry.
    """
    x = _vector(a, "a")
    y = _vector(b, "b")
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"a and b must be non-empty and of the same length; got {x.size} and {y.size}")
    validation.in_range(x, "a", -np.inf, open_low=True)
    validation.in_range(y, "b", -np.inf, open_low=True)
    scale = np.maximum(np.abs(x), np.abs(y))
    if (scale == 0).any():
        raise ValueError("a and b must not both be zero at an entry (the relative gap is undefined)")
    return float((np.abs(x - y) / scale).min())


def majority_share(log_proba: ArrayLike, y_test: ArrayLike) -> float:
    """The share of test rows a classifier assigns to the majority class of the test rows.

    A model more accurate than :func:`majority_accuracy` may only predict the
    majority class more often; this measures how often it does. Ties of the
    class counts go to the smallest class code, and a row's prediction is its
    most probable class (the first of equal ones).

    Parameters
    ----------
    log_proba : array_like, shape (..., n_test, n_classes)
        Log-probabilities (or any scores) of each class for each test row; leading
        axes (e.g. releases) are pooled.
    y_test : array_like of int, shape (n_test,)
        The test rows' classes.

    Returns
    -------
    float
        In [0, 1].
    """
    test = validation.integer_array(y_test, "y_test")
    if test.size == 0:
        raise ValueError("y_test must hold at least one row")
    lp = np.asarray(log_proba, dtype=float)
    if lp.ndim < 2 or lp.shape[-2] != test.size:
        raise ValueError(f"log_proba must have shape (..., {test.size}, n_classes); got {lp.shape}")
    if test.max() >= lp.shape[-1]:
        raise ValueError(f"y_test holds a class outside the {lp.shape[-1]} columns of log_proba")
    top = np.bincount(test).argmax()
    return float((lp.argmax(-1) == top).mean())


# ------------------------------------------------------------------ budgets and margins


def _budget_values(flags, name):
    if not isinstance(flags, pd.Series):
        raise validation.ArgumentTypeError(f"{name} must be a pandas Series indexed by budget; "
                                           f"got {type(flags).__name__}")
    if len(flags) == 0:
        raise ValueError(f"{name} must hold at least one budget")
    level = "epsilon" if "epsilon" in (flags.index.names or ()) else (
        "epsilon_hat" if "epsilon_hat" in (flags.index.names or ()) else None)
    if level is None:
        raise ValueError(f"{name} must be indexed by a level 'epsilon' or 'epsilon_hat'; got {flags.index.names}")
    return flags.index.get_level_values(level), flags.to_numpy(dtype=bool)


def holds_up_to(flags: pd.Series) -> float:
    """The largest budget up to which ``flags`` holds at every budget from the smallest.

    ``flags`` is one boolean per budget (index level ``epsilon`` or
    ``epsilon_hat``). If it holds everywhere, the largest budget; if it fails
    at the smallest, NaN (nothing below the first failure).
    """
    eps, ok = _budget_values(flags, "flags")
    bad = eps[~ok]
    if len(bad) == 0:
        return float(eps.max())
    below = eps[eps < bad.min()]
    return float(below.max()) if len(below) else float("nan")


def clear_from(bad: pd.Series) -> float:
    """The smallest budget from which on (it included) no budget is ``bad``.

    The smallest budget if none is bad; ``inf`` if the largest budget is bad.
    """
    eps, flagged = _budget_values(bad, "bad")
    if not flagged.any():
        return float(eps.min())
    after = eps[eps > eps[flagged].max()]
    return float(after.min()) if len(after) else float("inf")


def budget_text(epsilon: float) -> str:
    """A budget of :func:`clear_from` as a chapter writes it: two significant digits, ``"never"`` for infinity."""
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise validation.ArgumentTypeError(f"epsilon must be a number; got {type(epsilon).__name__}")
    if np.isinf(epsilon) and epsilon > 0:
        return "never"
    value = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    return f"{value:.2g}"


def small_against_large(gap: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """Per dataset: is a gap of :func:`cell_z` positive at small budgets, and larger there than at large ones?

    Over the ``k`` smallest budgets of a dataset the mean gap :math:`\\bar d_{lo}`
    has standard error :math:`\\sqrt{\\sum \\mathrm{se}^2}/k` (the cells are independent),
    likewise over the ``k`` largest; ``z (small > 0)`` is :math:`\\bar d_{lo}/\\mathrm{se}_{lo}`
    and ``z (small > large)`` is :math:`(\\bar d_{lo} - \\bar d_{hi}) / \\sqrt{\\mathrm{se}_{lo}^2 + \\mathrm{se}_{hi}^2}`.

    Parameters
    ----------
    gap : pandas.DataFrame
        From :func:`cell_z`: indexed by (dataset, budget), columns ``diff`` and ``se``.
    k : int
        Budgets at each end, >= 1; each dataset needs at least ``k``.

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset: ``gap, k smallest``, ``gap, k largest`` (with ``k`` written out),
        ``z (small > 0)``, ``z (small > large)``.
    """
    k = validation.integer(k, "k")
    rows = {}
    for name, g in gap.groupby(level="dataset", sort=False):
        if len(g) < k:
            raise ValueError(f"dataset {name!r} has {len(g)} budgets; k must be at most that")
        g = g.sort_index(level=1)
        lo, hi = g.iloc[:k], g.iloc[-k:]
        se_lo, se_hi = np.sqrt((lo.se ** 2).sum()) / k, np.sqrt((hi.se ** 2).sum()) / k
        rows[name] = {f"gap, {k} smallest": lo["diff"].mean(), f"gap, {k} largest": hi["diff"].mean(),
                      "z (small > 0)": lo["diff"].mean() / se_lo,
                      "z (small > large)": (lo["diff"].mean() - hi["diff"].mean()) / np.hypot(se_lo, se_hi)}
    return pd.DataFrame(rows).T


def behind(results: pd.DataFrame, a: str, b: str, metric: str) -> pd.Series:
    """Per (dataset, budget) cell: is ``a``'s mean ``metric`` more than one standard error of it below ``b``'s?

    The standard error is that of ``a``'s mean over its repeats (``ddof=1``); ``b``
    is a reference without noise (e.g. the non-private model), whose repeats are equal.
    """
    x = "epsilon_hat" if "epsilon_hat" in results.columns else "epsilon"
    for name in (a, b):
        if not (results.model == name).any():
            raise ValueError(f"results hold no rows of mechanism {name!r}")
    g = results[results.model == a].groupby(["dataset", x], sort=False)[metric]
    ref = results[results.model == b].groupby(["dataset", x], sort=False)[metric].mean()
    return ref - g.mean() > g.std(ddof=1) / np.sqrt(g.count())


# ------------------------------------------------------------------ a Monte Carlo check of many means (chapter 1)

def z_union_bound(threshold: float, comparisons: int) -> tuple[float, float]:
    """The chance that one of ``comparisons`` z-scores exceeds ``threshold`` in absolute value by luck.

    Each z-score of a correct mean is approximately standard normal, so
    :math:`P(|Z| > t) = 2\\bar\\Phi(t)`, and by the union bound at most
    ``comparisons`` times that for all of them together: the false-alarm rate
    of asserting every :math:`|z| < t`.

    Parameters
    ----------
    threshold : float
        :math:`t > 0`.
    comparisons : int
        How many z-scores are checked, at least 1.

    Returns
    -------
    (float, float)
        :math:`P(|Z| > t)` and the union bound ``comparisons`` times it (not capped at 1).

    Examples
    --------
    >>> tail, bound = z_union_bound(5.0, 100)
    >>> f"{tail:.2e} {bound:.2e}"
    '5.73e-07 5.73e-05'
    """
    threshold = validation.scalar(validation.positive(threshold, "threshold"), "threshold")
    comparisons = validation.integer(comparisons, "comparisons")
    tail = float(2 * stats.norm.sf(threshold))
    return tail, comparisons * tail


def improvement_verdict(outcomes: Iterable[str]) -> str:
    """The verdict on "A improves on B" from the per-budget outcomes of :func:`paired_cv_test`.

    ``"holds"`` if A is better at every budget; ``"partly"`` if better at some and
    worse at none; ``"does not hold"`` otherwise (never better, or worse somewhere).

    Parameters
    ----------
    outcomes : iterable of str
        Each ``"better"``, ``"worse"`` or ``"no difference"`` (the ``verdict`` column
        of :func:`paired_cv_test`); at least one.

    Examples
    --------
    >>> improvement_verdict(["better", "no difference"])
    'partly'
    """
    o = list(outcomes)
    allowed = ("better", "worse", "no difference")
    if not o or not set(o) <= set(allowed):
        raise ValueError(f"outcomes must be one or more of {allowed}; got {o!r:.200}")
    if "worse" in o or "better" not in o:
        return "does not hold"
    return "holds" if set(o) == {"better"} else "partly"


#: The verdict of a claim measured to hold on every setting run (an exact audit, an enumeration)
#: whose proof is invalid; distinct from "proof gap" (holds, the proof needs an extra condition).
MEASURED_NOT_PROVED = "holds where measured, not proved"


def measured_verdict(passes: ArrayLike) -> str:
    """The verdict on a claim without a valid proof, judged by audits: :data:`MEASURED_NOT_PROVED` or "does not hold".

    Parameters
    ----------
    passes : array_like of bool
        One flag per setting audited: does the claim hold there (e.g. the exact
        :math:`\\delta(\\varepsilon)` of every neighbouring pair at most :math:`\\delta`)?
        At least one.

    Returns
    -------
    str
        :data:`MEASURED_NOT_PROVED` if the claim holds on every setting run, "does not hold"
        if it fails on one (a counterexample settles the claim; a pass only covers what was
        run, hence never "holds").

    Raises
    ------
    ValueError
        If ``passes`` is empty or not boolean.

    Examples
    --------
    >>> measured_verdict([True, True])
    'holds where measured, not proved'
    >>> measured_verdict([True, False])
    'does not hold'
    """
    flags = np.asarray(passes)
    if flags.size == 0 or flags.dtype != bool:
        raise ValueError(f"passes must hold at least one boolean flag; got {flags.size} of dtype {flags.dtype}")
    return MEASURED_NOT_PROVED if bool(flags.all()) else "does not hold"
