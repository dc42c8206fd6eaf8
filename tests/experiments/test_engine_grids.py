"""Tests of the grids of the engine (lib.experiments.engine with the naive-Bayes and network tasks), their analysis
and their figures.

Every grid here runs on the synthetic datasets of ``conftest.py`` (fixtures
``splits`` and ``networks``); the command line is tested in ``test_cli.py``.
"""

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from lib.privacy.guarantees import ApproximateDP, PureDP, RenyiDP
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism
from lib.models.bayesian_network import count_tables, log_likelihood, network_spec, release_tables
from lib.experiments.analysis import pivot, summarise
from lib.experiments import engine
from lib.experiments.defaults import FIGURES
from lib.experiments.engine import calibrate, cell_seed, evaluate, run
from lib.experiments.tasks import BayesianNetwork as NetworkTask
from lib.experiments.tasks import NaiveBayes as NaiveBayesTask
from lib.experiments.verdicts import cell_z as compare
from lib.models.naive_bayes import PrivateNaiveBayes, cross_entropy, log_proba, release_parameters
from lib.mechanisms.protocol import get
from tests._reference import nb_scores_by_direct_sum, random_nb_models

NB_MODELS, BN_MODELS = FIGURES["naive-bayes", RenyiDP].mechanisms, FIGURES["bayesian-network", RenyiDP].mechanisms
NB_DP_MODELS = FIGURES["naive-bayes", ApproximateDP].mechanisms
BN_DP_MODELS = FIGURES["bayesian-network", ApproximateDP].mechanisms

DP = ApproximateDP(1.0, 1e-5)  # the approximate-DP grid's target (each budget replaces its level)

EPS = np.logspace(-2, 1, 4)
EPS_DP = np.array([0.3, 3.0])
KEY = ["dataset", "model", "epsilon", "repeat"]


def grid(model, splits, networks, **kwargs):
    """``run`` on the synthetic data of ``model`` without a progress bar."""
    data = splits if model == "naive-bayes" else networks
    kwargs.setdefault("progress", False)
    return run(model, kwargs.pop("mechanisms"), kwargs.pop("budgets"), data=data, **kwargs)


# ------------------------------------------------------------------ naive Bayes, RDP

def test_tidy_frame(splits, networks):
    res = grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=3)
    assert list(res.columns) == ["dataset", "model", "epsilon", "repeat", "cross_entropy", "accuracy"]
    assert len(res) == 2 * 5 * 4 * 3
    assert res.set_index(KEY).index.is_unique
    assert np.isfinite(res[["cross_entropy", "accuracy"]].to_numpy()).all()
    rnd = res[res.model == "random"]
    expected = np.log(rnd.dataset.map({"one": 2, "two": 3}))
    np.testing.assert_allclose(rnd.cross_entropy, expected)
    mle = res[res.model == "mle"].groupby("dataset")[["cross_entropy", "accuracy"]].nunique()
    assert (mle == 1).all().all()


def test_cells_do_not_depend_on_the_rest_of_the_grid(splits, networks):
    full = grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=3, seed=11)
    part = grid("naive-bayes", splits, networks, mechanisms=("laplace", "dirichlet"), budgets=EPS[::-1][:2],
                n_repeats=3, seed=11, datasets=["two"])
    merged = part.merge(full, on=KEY, suffixes=("", "_full"))
    assert len(merged) == len(part) == 2 * 2 * 3
    np.testing.assert_array_equal(merged.cross_entropy, merged.cross_entropy_full)
    np.testing.assert_array_equal(merged.accuracy, merged.accuracy_full)
    again = grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=3, seed=11)
    pd.testing.assert_frame_equal(full, again)
    other = grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=3, seed=12)
    assert not np.array_equal(full.cross_entropy, other.cross_entropy)


def test_batched_grid_equals_model_by_model(splits):
    """One release of the grid is the same model PrivateNaiveBayes fits with that cell's seed."""
    split = splits["one"]
    res = evaluate(NaiveBayesTask(split), "dirichlet", [0.5], 1, seed=3, dataset="one")
    rng = np.random.default_rng(cell_seed(3, "one", "dirichlet", 0.5))
    model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 0.5), random_state=rng)
    model.fit(split.X_train, split.y_train, n_values=split.n_values, n_classes=split.n_classes)
    lp = model.predict_log_proba(split.X_test)
    ce = -lp[np.arange(len(split.y_test)), split.y_test].mean()
    assert res.cross_entropy.iloc[0] == pytest.approx(ce, rel=1e-12)
    assert res.accuracy.iloc[0] == np.mean(model.predict(split.X_test) == split.y_test)


def test_summarise(splits, networks):
    res = grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=4)
    summary = summarise(res)
    assert len(summary) == 2 * 5 * 4
    cell = res[(res.dataset == "one") & (res.model == "gaussian") & (res.epsilon == EPS[1])]
    row = summary[(summary.dataset == "one") & (summary.model == "gaussian") & (summary.epsilon == EPS[1])]
    assert row.cross_entropy_mean.item() == pytest.approx(cell.cross_entropy.mean())
    assert row.accuracy_std.item() == pytest.approx(cell.accuracy.std(ddof=0))


def test_pivot_and_compare_use_the_unbiased_standard_error(splits, networks):
    res = grid("naive-bayes", splits, networks, mechanisms=("dirichlet", "gaussian"), budgets=EPS, n_repeats=5)
    wide = pivot(summarise(res), "cross_entropy")
    assert list(wide.columns) == ["dirichlet", "gaussian"] and len(wide) == 2 * 4
    cmp = compare(res, "dirichlet", "gaussian", "cross_entropy")
    for (name, eps), row in cmp.iterrows():
        a = res[(res.dataset == name) & (res.epsilon == eps) & (res.model == "dirichlet")].cross_entropy
        b = res[(res.dataset == name) & (res.epsilon == eps) & (res.model == "gaussian")].cross_entropy
        assert wide.loc[(name, eps), "dirichlet"] == pytest.approx(a.mean(), rel=1e-14)
        assert row["diff"] == pytest.approx(a.mean() - b.mean(), rel=1e-12)
        se = np.sqrt(np.var(a, ddof=1) / 5 + np.var(b, ddof=1) / 5)
        assert row["se"] == pytest.approx(se, rel=1e-12) and row["z"] == pytest.approx(row["diff"] / se)
    with pytest.raises(ValueError, match="no rows of mechanism 'laplace'"):
        compare(res, "dirichlet", "laplace", "cross_entropy")
    with pytest.raises(ValueError, match="no column"):
        compare(res, "dirichlet", "gaussian", "log_likelihood")
    with pytest.raises(ValueError, match="no column"):
        pivot(summarise(res), "cross_entropy", "median")


def test_progress_bar_only_when_asked(splits, networks, capsys):
    for progress, shown in ((False, False), (None, False), (True, True)):  # None: stderr is not a TTY
        grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS[:1], n_repeats=1,
             progress=progress)
        assert ("naive-bayes RenyiDP grid" in capsys.readouterr().err) == shown


def test_validation(splits, networks):
    task = NaiveBayesTask(splits["one"])
    with pytest.raises(ValueError, match="mechanism must be one of"):
        grid("naive-bayes", splits, networks, mechanisms=("svm",), budgets=EPS)
    with pytest.raises(ValueError, match="task must be one of"):
        run("svm", ("dirichlet",), EPS, data=splits)
    with pytest.raises(ValueError, match="epsilons"):
        evaluate(task, "dirichlet", [0.0, 1.0], 2)
    with pytest.raises(ValueError, match="epsilon_hats"):
        evaluate(task, "dirichlet", [[1.0]], 2, target=DP)
    with pytest.raises(ValueError, match="n_repeats"):
        evaluate(task, "dirichlet", [1.0], 0)
    with pytest.raises(ValueError, match="mechanism"):
        evaluate(task, "svm", [1.0], 1)
    with pytest.raises(ValueError, match="target must be of type RenyiDP or ApproximateDP"):
        evaluate(task, "dirichlet", [1.0], 1, target="rdp")
    with pytest.raises(ValueError, match="target must be of type RenyiDP or ApproximateDP"):
        evaluate(task, "laplace", [1.0], 1, target=PureDP(1.0))
    with pytest.raises(ValueError, match="'gohari' mechanism cannot meet a RenyiDP target"):
        evaluate(task, "gohari", [1.0], 1)


def test_clip_floor_reaches_the_noise_mechanisms_only(splits, networks):
    """A configured variant keeps its name (and so its seeds): only the clipping differs."""
    low = grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=2)
    variants = ("random", "mle", "dirichlet", GaussianMechanism.configured(clip_floor=1.0),
                LaplaceMechanism.configured(clip_floor=1.0))
    high = grid("naive-bayes", splits, networks, mechanisms=variants, budgets=EPS, n_repeats=2)
    pd.testing.assert_frame_equal(low[KEY], high[KEY])
    same = low.model.isin(["dirichlet", "mle", "random"])
    pd.testing.assert_frame_equal(low[same], high[same])
    assert not np.array_equal(low[~same].cross_entropy, high[~same].cross_entropy)


def test_plot_has_one_panel_per_dataset_and_the_paper_legend(splits, networks):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.experiments.plotting import plot_grid

    summary = summarise(grid("naive-bayes", splits, networks, mechanisms=NB_MODELS, budgets=EPS, n_repeats=2))
    fig, axes = plot_grid(summary, "cross_entropy", ["one", "two"], NB_MODELS, ncols=4)
    assert [ax.get_title() for ax in axes.flat if ax.get_visible()] == ["one", "two"]
    assert axes[0, 0].get_yscale() == "log"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "Random", "Non-private", "Dirichlet", "Gaussian", "Laplace"]
    fig, axes = plot_grid(summary, "accuracy", ["one", "two"], NB_MODELS, random_on={"two"})
    assert axes[0, 0].get_yscale() == "linear"
    assert "Random" in [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close("all")


# ------------------------------------------------------------------ Bayesian networks, RDP

def test_bayesian_network_tidy_frame_and_seeding(splits, networks):
    res = grid("bayesian-network", splits, networks, mechanisms=BN_MODELS, budgets=EPS, n_repeats=3, seed=3)
    assert list(res.columns) == ["dataset", "model", "epsilon", "repeat", "log_likelihood"]
    assert len(res) == 2 * 4 * 4 * 3
    assert res.set_index(KEY).index.is_unique
    assert np.isfinite(res.log_likelihood).all() and (res.log_likelihood < 0).all()
    assert (res[res.model == "mle"].groupby("dataset").log_likelihood.nunique() == 1).all()
    # a cell does not depend on the rest of the grid; reruns are identical
    part = grid("bayesian-network", splits, networks, mechanisms=("laplace",), budgets=EPS[:1], n_repeats=3,
                seed=3, datasets=["two"])
    merged = part.merge(res, on=KEY, suffixes=("", "_full"))
    assert len(merged) == 3
    np.testing.assert_array_equal(merged.log_likelihood, merged.log_likelihood_full)
    again = grid("bayesian-network", splits, networks, mechanisms=BN_MODELS, budgets=EPS, n_repeats=3, seed=3)
    pd.testing.assert_frame_equal(res, again)


def test_bayesian_network_batched_grid_equals_one_release_at_a_time(networks):
    data = networks["one"]
    task = NetworkTask(data)
    res = evaluate(task, "dirichlet", EPS, 4, seed=9, dataset="one")
    tables = count_tables(data.train, data.n_values, data.parents)
    spec = network_spec(data.n_values, data.parents, len(data.train))
    assert task.spec == spec
    for eps in EPS:
        rng = np.random.default_rng(cell_seed(9, "one", "bn:dirichlet", eps))
        logs = release_tables(tables, get("dirichlet").calibrate(RenyiDP(5.0, eps), spec), n_draws=4, rng=rng)
        want = log_likelihood(data.test, logs, data.n_values, data.parents)
        got = res[res.epsilon == eps].sort_values("repeat").log_likelihood
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="cannot score the .random. mechanism"):
        evaluate(task, "random", EPS, 2)
    with pytest.raises(ValueError, match="n_repeats"):
        evaluate(task, "mle", EPS, 0)
    with pytest.raises(ValueError, match="epsilons"):
        evaluate(task, "gaussian", [0.0], 2)


def test_bayesian_network_summary_and_plot(splits, networks):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.experiments.plotting import plot_grid

    res = grid("bayesian-network", splits, networks, mechanisms=BN_MODELS, budgets=EPS, n_repeats=3)
    summary = summarise(res)
    assert len(summary) == 2 * 4 * 4
    assert list(summary.columns) == ["dataset", "model", "epsilon", "log_likelihood_mean",
                                     "log_likelihood_std"]
    cell = res[(res.dataset == "two") & (res.model == "gaussian") & (res.epsilon == EPS[1])]
    row = summary[(summary.dataset == "two") & (summary.model == "gaussian")
                  & (summary.epsilon == EPS[1])].iloc[0]
    assert row.log_likelihood_mean == pytest.approx(cell.log_likelihood.mean(), rel=1e-14)
    assert row.log_likelihood_std == pytest.approx(np.std(cell.log_likelihood), rel=1e-12)
    fig, axes = plot_grid(summary, "log_likelihood", ["one", "two"], BN_MODELS)
    assert [ax.get_title() for ax in axes.flat] == ["one", "two"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "Non-private", "Dirichlet", "Gaussian", "Laplace"]
    plt.close("all")


# ------------------------------------------------------------------ approximate DP (Appendix C)

def test_naive_bayes_dp_tidy_frame_and_seeding(splits, networks):
    res = grid("naive-bayes", splits, networks, mechanisms=NB_DP_MODELS, budgets=EPS_DP, target=DP,
               n_repeats=3, seed=4)
    assert list(res.columns) == ["dataset", "model", "epsilon_hat", "delta", "repeat", "attained",
                                 "cross_entropy", "accuracy"]
    assert len(res) == 2 * len(NB_DP_MODELS) * 2 * 3
    assert res.set_index(["dataset", "model", "epsilon_hat", "repeat"]).index.is_unique
    ok = res[res.attained]
    assert np.isfinite(ok[["cross_entropy", "accuracy"]].to_numpy()).all()
    assert res[~res.attained][["cross_entropy", "accuracy"]].isna().all().all()
    # a cell does not depend on the rest of the grid; reruns are identical
    part = grid("naive-bayes", splits, networks, mechanisms=("gaussian",), budgets=EPS_DP[1:], target=DP,
                n_repeats=3, seed=4, datasets=["two"])
    full = res[(res.dataset == "two") & (res.model == "gaussian") & (res.epsilon_hat == EPS_DP[1])]
    np.testing.assert_array_equal(part.cross_entropy, full.cross_entropy)
    again = grid("naive-bayes", splits, networks, mechanisms=NB_DP_MODELS, budgets=EPS_DP, target=DP,
                 n_repeats=3, seed=4)
    pd.testing.assert_frame_equal(res, again)
    # the non-private models do not depend on the privacy notion: the RDP grid's scores
    rdp = grid("naive-bayes", splits, networks, mechanisms=("random", "mle"), budgets=EPS_DP, n_repeats=3,
               seed=4)
    flat = res[res.model.isin(["random", "mle"])].reset_index(drop=True)
    np.testing.assert_array_equal(flat.cross_entropy, rdp.cross_entropy)
    np.testing.assert_array_equal(flat.accuracy, rdp.accuracy)


def test_naive_bayes_dp_uses_the_calibrated_per_release_objects(splits):
    split = splits["two"]
    task = NaiveBayesTask(split)
    assert task.spec.shapes == ((1, 3), (3, 3), (3, 3)) and task.spec.n_total == len(split.y_train)
    res = evaluate(task, "laplace", EPS_DP, 2, target=DP, seed=1, dataset="two")
    for eps in EPS_DP:
        cal = calibrate("laplace", DP.with_level(eps), task.spec)
        assert cal.parameters["scale"] == pytest.approx(2 * 3 / eps)  # m = K + 1 = 3
        rng = np.random.default_rng(cell_seed(1, "two", "dp:laplace", eps))
        prior, tables = release_parameters(*task.counts, cal, n_draws=2, rng=rng)
        lp = log_proba(split.X_test, prior, tables, split.n_values)
        np.testing.assert_allclose(res[res.epsilon_hat == eps].cross_entropy,
                                   cross_entropy(lp, split.y_test), rtol=1e-12)
    # a non-private mechanism ignores the budget
    smoothing = [[m.smoothing for m in calibrate("mle", target, task.spec).releases]
                 for target in (ApproximateDP(0.01, 1e-5), RenyiDP(5.0, 9.0))]
    assert smoothing[0] == smoothing[1] == [0.0, 0.1, 0.1]
    with pytest.raises(ValueError, match="mechanism must be one of"):
        evaluate(task, "exponential", EPS_DP, 2, target=DP)
    with pytest.raises(ValueError, match="delta"):
        evaluate(task, "gaussian", EPS_DP, 2, target=ApproximateDP(1.0, 0.0))
    with pytest.raises(ValueError, match="n_repeats"):
        evaluate(task, "gaussian", EPS_DP, 0, target=DP)


def test_naive_bayes_dp_unattained_cells_are_flagged(splits, monkeypatch):
    from lib.mechanisms.gohari import mechanism

    def refuse(*args, **kwargs):
        raise ValueError("delta below the floor")

    monkeypatch.setattr(mechanism, "gohari_releases", refuse)
    res = evaluate(NaiveBayesTask(splits["one"]), "gohari", EPS_DP, 2, target=DP, dataset="one")
    assert not res.attained.any() and res.cross_entropy.isna().all()
    summary = summarise(res)
    assert not summary.attained.any() and summary.cross_entropy_mean.isna().all()


def test_bayesian_network_dp_grid_and_shapes(splits, networks):
    data = networks["one"]
    task = NetworkTask(data)
    assert task.spec.shapes == ((1, 2), (1, 3), (6, 4), (4, 2))
    res = grid("bayesian-network", splits, networks, mechanisms=BN_DP_MODELS, budgets=EPS_DP, target=DP,
               n_repeats=2, seed=2)
    assert list(res.columns) == ["dataset", "model", "epsilon_hat", "delta", "repeat", "attained",
                                 "log_likelihood"]
    assert len(res) == 2 * 5 * 2 * 2
    assert (res[res.attained].log_likelihood < 0).all()
    cal = calibrate("gaussian", DP.with_level(EPS_DP[0]), task.spec)
    rng = np.random.default_rng(cell_seed(2, "one", "bn-dp:gaussian", EPS_DP[0]))
    want = log_likelihood(data.test, release_tables(task.tables, cal, n_draws=2, rng=rng),
                          data.n_values, data.parents)
    got = res[(res.dataset == "one") & (res.model == "gaussian") & (res.epsilon_hat == EPS_DP[0])]
    np.testing.assert_allclose(got.log_likelihood, want, rtol=1e-12)
    summary = summarise(res)
    assert len(summary) == 2 * 5 * 2 and "log_likelihood_mean" in summary


def test_plot_grid_dp_legend_and_panels(splits, networks):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.experiments.plotting import plot_grid

    summary = summarise(grid("naive-bayes", splits, networks, mechanisms=NB_DP_MODELS, budgets=EPS_DP,
                             target=DP, n_repeats=2))
    fig, axes = plot_grid(summary, "cross_entropy", ["one", "two"], NB_DP_MODELS)
    assert [ax.get_title() for ax in axes.flat if ax.get_visible()] == ["one", "two"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "Random", "Non-private", "Dirichlet", "Gohari et al.", "Gaussian", "Laplace"]
    assert axes[0, 0].get_xlabel() == r"$\log_{10}(\hat\varepsilon)$"
    plt.close("all")


# ------------------------------------------------------------------ figure legibility

#: The body text of the book's pages, in CSS pixels (sphinx-book-theme 1.1: 1 rem = 16 px; the
#: browser check tests/book/test_browser.py reads the real value from the page's computed style).
BODY_PX = 16.0
#: A tick label must be displayed at least this fraction of the body text. Matplotlib's 10-pt
#: labels at the book's 110 dpi are 15.3 px, 0.96 of the body text, when a figure is shown at
#: its natural size; 0.8 (12.8 px) is the size of the theme's own small print (captions, code,
#: 0.8-0.875 rem) and is reached by a figure up to 7.9 in wide. The paper's layout, four panels
#: of 2.6 in per row (10.4 in), is shown at 64 % on the column: labels at 9.8 px, 0.61.
LEGIBLE = 0.8


def _displayed_tick_px(fig) -> list[float]:
    """The size on the page, in CSS px, of every visible tick label of ``fig``.

    The notebook saves the figure with ``bbox_inches="tight"`` (matplotlib-inline's default),
    one figure inch being ``figure.dpi`` CSS px on the page; the page scales an image wider than
    the text column (``COLUMN_PX``) down to the column.
    """
    from lib.experiments.plotting import COLUMN_PX

    fig.canvas.draw()
    natural_px = fig.get_tightbbox(fig.canvas.get_renderer()).width * fig.dpi
    scale = min(1.0, COLUMN_PX / natural_px)
    return [label.get_fontsize() * fig.dpi / 72 * scale
            for ax in fig.axes if ax.get_visible()
            for label in ax.get_xticklabels() + ax.get_yticklabels() if label.get_text()]


def _summary(datasets, models, metric, dp):
    rng = np.random.default_rng(0)
    value = {"cross_entropy": (0.3, 3.0), "accuracy": (0.5, 0.9), "log_likelihood": (-4e4, -2e4)}
    rows = [{"dataset": d, "model": m, "epsilon_hat" if dp else "epsilon": e,
             f"{metric}_mean": rng.uniform(*value[metric]), f"{metric}_std": 0.01, "attained": True}
            for d in datasets for m in models for e in np.logspace(-3, 1, 5)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("metric, n_datasets, models, dp", [
    ("cross_entropy", 8, NB_MODELS, False), ("accuracy", 8, NB_MODELS, False),
    ("cross_entropy", 8, NB_DP_MODELS, True), ("log_likelihood", 3, BN_MODELS, False),
    ("log_likelihood", 3, BN_DP_MODELS, True)])
def test_plot_grid_tick_labels_are_legible_in_the_column(metric, n_datasets, models, dp):
    """The paper's 8-panel and 3-panel figures fit the 730-px column, so their tick labels are
    displayed at >= 0.8 x the body text, and the legend neither leaves the figure nor covers a panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.experiments.plotting import BOOK_STYLE, COLUMN_INCHES, plot_grid

    datasets = [f"data{i}" for i in range(n_datasets)]
    with matplotlib.rc_context(BOOK_STYLE):
        fig, axes = plot_grid(_summary(datasets, models, metric, dp), metric, datasets, models)
        sizes = _displayed_tick_px(fig)
        assert len(sizes) >= 4 * n_datasets
        assert min(sizes) >= LEGIBLE * BODY_PX, (min(sizes), fig.get_size_inches())
        assert fig.get_size_inches()[0] <= COLUMN_INCHES + 1e-9
        renderer = fig.canvas.get_renderer()
        legend = fig.legends[0].get_window_extent(renderer)
        page = fig.bbox
        assert page.x0 - 1 <= legend.x0 and legend.x1 <= page.x1 + 1 and page.y0 - 1 <= legend.y0
        for ax in axes.flat:
            if ax.get_visible():
                assert not legend.overlaps(ax.get_tightbbox(renderer)), ax.get_title()

        # The measure can fail: the paper's 4-per-row layout of the same figure is too small.
        wide, _ = plt.subplots(2, 4, figsize=(4 * 2.6, 5.2))
        assert min(_displayed_tick_px(wide)) < LEGIBLE * BODY_PX
    plt.close("all")


def test_budget_keys_do_not_hinge_on_the_last_bit():
    """Issue 29: a budget one CPU computes a few ulps away from another's draws from the same stream.

    The fifth point of np.logspace(-3, 1, 10) is 0x1.eb18f59ead9cap-5 with numpy's AVX-512
    power and 0x1.eb18f59ead9cbp-5 with libm's; keyed by repr, the two machines drew the whole
    cell from different streams. Every grid the book runs, moved by up to 4 ulps, keeps its key.
    """
    from lib.experiments.cells import budget_key
    from lib.experiments.engine import budgets

    DEFAULT_EPSILONS = budgets("naive-bayes", RenyiDP)
    DP_NB_EPSILONS, DP_BN_EPSILONS = budgets("naive-bayes", ApproximateDP), budgets("bayesian-network", ApproximateDP)

    a, b = float.fromhex("0x1.eb18f59ead9cap-5"), float.fromhex("0x1.eb18f59ead9cbp-5")
    assert repr(a) != repr(b) and budget_key(a) == budget_key(b)
    grids = [DEFAULT_EPSILONS, DP_NB_EPSILONS, DP_BN_EPSILONS, np.logspace(-3, 1, 10),
             np.geomspace(np.logspace(-3, 1, 10)[7], np.logspace(-3, 1, 10)[8], 8)]
    for grid in grids:
        for eps in grid:
            moved = eps + np.arange(-4, 5) * np.spacing(eps)
            assert {budget_key(m) for m in moved} == {budget_key(eps)}
    assert cell_seed(1, "d", "m", a).spawn_key == cell_seed(1, "d", "m", b).spawn_key


# ------------------------------------------------------------------ the engine's fast paths
# The naive-Bayes task's scorer equals a direct sum over the tables, the vectorised and cached
# calibrations equal one calibration per budget, and importing lib or lib.experiments imports
# neither scipy.optimize nor pandas nor the engine.

def test_engine_scorer_equals_the_reference():
    rng = np.random.default_rng(11)
    n_values = np.array([3, 3, 5])
    X = np.column_stack([rng.integers(v, size=400) for v in n_values])
    y = rng.integers(2, size=400)
    split = SimpleNamespace(X_train=X[:300], y_train=y[:300], X_test=X[300:], y_test=y[300:],
                            n_values=n_values, n_classes=2)
    task = NaiveBayesTask(split)
    batches = [random_nb_models(rng, 3, 2, n_values), random_nb_models(rng, 2, 2, n_values)]
    got = task.score(batches)
    prior = np.concatenate([p for p, _ in batches])
    tables = [np.concatenate([t[k] for _, t in batches]) for k in range(3)]
    _, ce, acc = nb_scores_by_direct_sum(split.X_test, split.y_test, prior, tables)
    np.testing.assert_allclose(got["cross_entropy"], ce, rtol=1e-12)
    np.testing.assert_array_equal(got["accuracy"], acc)


def test_scipy_optimize_is_not_imported_at_start_up():
    code = ("import sys, lib, lib.experiments, lib.mechanisms.gohari.mechanism, lib.mechanisms.noise.calibration, "
            "lib.mechanisms.dirichlet.approximate_dp; "
            "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _spec_of(shapes, n_total):
    from lib.mechanisms.protocol import ReleaseSpec

    return ReleaseSpec(tuple(shapes), n_total)


def test_engine_rdp_path_equals_budget_by_budget():
    """lib.experiments.engine.calibrate_many (one vectorised search of RenyiDP targets) equals calibrate per budget."""
    spec = _spec_of([(1, 3), (3, 5), (3, 2)], 2000)
    budgets = np.logspace(-3, 1, 7)
    for name in ("geumlek_diffused", "geumlek_concentrated"):
        many = engine.calibrate_many(name, [RenyiDP(5.0, b) for b in budgets], spec)
        for eps, cal in zip(budgets, many):
            one = engine.calibrate(name, RenyiDP(5.0, eps), spec)
            assert cal.attained and one.attained
            assert [o.scale for o in cal.releases] == [o.scale for o in one.releases]
            assert cal.parameters == one.parameters


def test_the_experiment_package_imports_its_names_on_first_use():
    """import lib.experiments imports neither pandas nor the engine; every name of __all__ still resolves."""
    code = ("import sys, lib.experiments as e; "
            "before = 'pandas' in sys.modules or 'lib.experiments.engine' in sys.modules; "
            "from lib.experiments import *; from lib.experiments.tasks import mixed_naive_bayes; "
            "print(before, [callable(getattr(e, n)) for n in e.__all__].count(True) == len(e.__all__), "
            "e.run is sys.modules['lib.experiments.engine'].run)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]
    import lib.experiments as e

    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        e.nonexistent  # noqa: B018 (the attribute access is what raises)


def test_engine_cache_calibrates_each_spec_once(monkeypatch):
    """engine.calibrate_many with a cache returns, element by element, the calibrations made without one, and
    calls the class only for the targets it does not hold (a second split of the same spec: none)."""
    from lib.mechanisms.protocol import ReleaseSpec

    spec = ReleaseSpec(((1, 2), (2, 3), (2, 5)), 500)
    for name, targets in (("geumlek_diffused", [RenyiDP(5.0, e) for e in (0.1, 1.0)]),
                          ("geumlek_concentrated", [ApproximateDP(e, 1e-5) for e in (0.5, 2.0)]),
                          ("dirichlet", [ApproximateDP(e, 1e-5) for e in (0.5, 2.0)]),
                          ("gaussian", [RenyiDP(5.0, 1.0)])):
        cls = get(name)
        plain = engine.calibrate_many(cls, targets, spec)
        calls = []
        original = cls.calibrate_many.__func__
        monkeypatch.setattr(cls, "calibrate_many",
                            classmethod(lambda c, t, s, cache=None: calls.append(len(t)) or original(c, t, s, cache=cache)))
        cache = {}
        first = engine.calibrate_many(cls, targets, spec, cache=cache)
        again = engine.calibrate_many(cls, targets[::-1] + targets, ReleaseSpec(tuple(spec.shapes), 500), cache=cache)
        monkeypatch.undo()
        assert calls == [len(targets)]  # the second call found every target
        for a, b in zip(plain, first):
            assert a.parameters == b.parameters and a.guarantee == b.guarantee
            assert [getattr(m, "scale", getattr(m, "r", None)) for m in a.releases] == \
                   [getattr(m, "scale", getattr(m, "r", None)) for m in b.releases]
        assert [c is f for c, f in zip(again, first[::-1] + first)] == [True] * (2 * len(targets))
    # another setting of the class is another key
    other = get("geumlek_diffused").configured(prior=2.0)
    k0 = engine.calibration_key("geumlek_diffused", RenyiDP(5.0, 1.0), spec)
    assert engine.calibration_key(other, RenyiDP(5.0, 1.0), spec) != k0
    assert engine.calibration_key("geumlek_diffused", RenyiDP(5.0, 1.0), ReleaseSpec(spec.shapes, 501)) != k0
    with pytest.raises(TypeError, match="cache must be None or a dict"):
        engine.calibrate_many("dirichlet", [RenyiDP(5.0, 1.0)], spec, cache=[])


def test_run_over_splits_with_a_shared_cache_equals_runs_without(monkeypatch):
    """run() over two splits sharing one cache: the frames of runs with fresh caches, and the second split
    calibrates nothing."""
    from lib.experiments.preprocessing import Split

    rng = np.random.default_rng(12)
    n_values = np.array([3, 4, 2])

    def split():
        X = np.column_stack([rng.integers(v, size=300) for v in n_values])
        y = rng.integers(2, size=300)
        return Split(X[:200], X[200:], y[:200], y[200:], n_values, 2, ("a", "b", "c"), (0, 1))

    data = [{"toy": split()} for _ in range(2)]
    mechanisms = ["dirichlet", "geumlek_diffused", "geumlek_concentrated"]
    for privacy, budgets in ((RenyiDP(5.0, 1.0), [0.1, 1.0]), (ApproximateDP(1.0, 1e-5), [0.5, 2.0])):
        plain = [engine.run("naive-bayes", mechanisms, budgets, target=privacy, data=d, n_repeats=3, seed=k)
                 for k, d in enumerate(data)]
        shared = {}
        first = engine.run("naive-bayes", mechanisms, budgets, target=privacy, data=data[0], n_repeats=3, seed=0,
                         cache=shared)
        for name in mechanisms:
            monkeypatch.setattr(get(name), "calibrate_many", classmethod(_calibrated_again))
        second = engine.run("naive-bayes", mechanisms, budgets, target=privacy, data=data[1], n_repeats=3, seed=1,
                          cache=shared)
        monkeypatch.undo()
        for want, got in zip(plain, (first, second)):
            assert want.equals(got)


def _calibrated_again(cls, *args, **kwargs):
    raise AssertionError(f"{cls.name} calibrated again: the cache must answer")
