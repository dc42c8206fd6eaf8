"""Tests of lib.experiments: the naive Bayes grid runner and its command line."""

import numpy as np
import pandas as pd
import pytest

from lib import experiments
from lib.experiments import evaluate_naive_bayes, main, run_naive_bayes, summarise
from lib.preprocessing import Split


def synthetic_split(n=900, n_values=(2, 4, 6), n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    cols = []
    for v in n_values:
        theta = rng.dirichlet(np.ones(v), size=n_classes)
        cols.append((theta[y].cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1))
    X = np.stack(cols, axis=1).astype(np.int64)
    m = int(0.7 * n)
    return Split(X[:m], X[m:], y[:m], y[m:], np.array(n_values, dtype=np.int64), n_classes,
                 tuple(f"a{k}" for k in range(len(n_values))), tuple(range(n_classes)))


SPLITS = {"one": synthetic_split(), "two": synthetic_split(n=600, n_values=(3, 3), n_classes=3, seed=1)}
EPS = np.logspace(-2, 1, 4)


def test_tidy_frame():
    res = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=3, progress=False)
    assert list(res.columns) == ["dataset", "model", "epsilon", "repeat", "cross_entropy", "accuracy"]
    assert len(res) == 2 * 5 * 4 * 3
    assert res.set_index(["dataset", "model", "epsilon", "repeat"]).index.is_unique
    assert np.isfinite(res[["cross_entropy", "accuracy"]].to_numpy()).all()
    rnd = res[res.model == "random"]
    expected = np.log(rnd.dataset.map({"one": 2, "two": 3}))
    np.testing.assert_allclose(rnd.cross_entropy, expected)
    mle = res[res.model == "mle"].groupby("dataset")[["cross_entropy", "accuracy"]].nunique()
    assert (mle == 1).all().all()


def test_cells_do_not_depend_on_the_rest_of_the_grid():
    full = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=3, progress=False, seed=11)
    part = run_naive_bayes(splits={"two": SPLITS["two"]}, epsilons=EPS[::-1][:2], n_repeats=3,
                           models=("laplace", "dirichlet"), progress=False, seed=11)
    key = ["dataset", "model", "epsilon", "repeat"]
    merged = part.merge(full, on=key, suffixes=("", "_full"))
    assert len(merged) == len(part)
    np.testing.assert_array_equal(merged.cross_entropy, merged.cross_entropy_full)
    again = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=3, progress=False, seed=11)
    pd.testing.assert_frame_equal(full, again)
    other = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=3, progress=False, seed=12)
    assert not np.array_equal(full.cross_entropy, other.cross_entropy)


def test_batched_grid_equals_model_by_model():
    """One release of the grid is the same model PrivateNaiveBayes fits with that cell's seed."""
    from lib.naive_bayes import PrivateNaiveBayes

    split = SPLITS["one"]
    res = evaluate_naive_bayes(split, "dirichlet", [0.5], 1, seed=3, dataset="one")
    rng = np.random.default_rng(experiments.cell_seed(3, "one", "dirichlet", 0.5))
    model = PrivateNaiveBayes("dirichlet", epsilon=0.5, random_state=rng)
    model.fit(split.X_train, split.y_train, n_values=split.n_values, n_classes=split.n_classes)
    lp = model.predict_log_proba(split.X_test)
    ce = -lp[np.arange(len(split.y_test)), split.y_test].mean()
    assert res.cross_entropy.iloc[0] == pytest.approx(ce, rel=1e-12)
    assert res.accuracy.iloc[0] == np.mean(model.predict(split.X_test) == split.y_test)


def test_summarise():
    res = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=4, progress=False)
    summary = summarise(res)
    assert len(summary) == 2 * 5 * 4
    cell = res[(res.dataset == "one") & (res.model == "gaussian") & (res.epsilon == EPS[1])]
    row = summary[(summary.dataset == "one") & (summary.model == "gaussian") & (summary.epsilon == EPS[1])]
    assert row.cross_entropy_mean.item() == pytest.approx(cell.cross_entropy.mean())
    assert row.accuracy_std.item() == pytest.approx(cell.accuracy.std(ddof=0))


def test_progress_bar_only_when_asked(capsys):
    run_naive_bayes(splits=SPLITS, epsilons=EPS[:1], n_repeats=1, progress=False)
    assert capsys.readouterr().err == ""
    run_naive_bayes(splits=SPLITS, epsilons=EPS[:1], n_repeats=1, progress=None)  # stderr not a TTY
    assert capsys.readouterr().err == ""
    run_naive_bayes(splits=SPLITS, epsilons=EPS[:1], n_repeats=1, progress=True)
    assert "naive Bayes grid" in capsys.readouterr().err


def test_validation():
    with pytest.raises(ValueError, match="models"):
        run_naive_bayes(splits=SPLITS, models=("svm",))
    with pytest.raises(ValueError, match="epsilons"):
        evaluate_naive_bayes(SPLITS["one"], "dirichlet", [0.0, 1.0], 2)
    with pytest.raises(ValueError, match="n_repeats"):
        evaluate_naive_bayes(SPLITS["one"], "dirichlet", [1.0], 0)
    with pytest.raises(ValueError, match="model"):
        evaluate_naive_bayes(SPLITS["one"], "svm", [1.0], 1)


def test_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(experiments, "_load_split", lambda name: SPLITS[name])
    assert main(["naive-bayes", "--out", str(tmp_path / "out"), "--datasets", "one", "two",
                 "--n-epsilons", "3", "--n-repeats", "2", "--seed", "5"]) == 0
    written = pd.read_csv(tmp_path / "out" / "naive_bayes.csv")
    expected = run_naive_bayes(splits=SPLITS, epsilons=np.logspace(-3, 1, 3), n_repeats=2, seed=5,
                               progress=False)
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-14)
    assert "wrote 60 rows" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([])
    with pytest.raises(SystemExit):
        main(["naive-bayes", "--out", str(tmp_path), "--n-epsilons", "0"])


def test_clip_floor_reaches_the_noise_mechanisms_only():
    low = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=2, progress=False)
    high = run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=2, progress=False, clip_floor=1.0)
    same = low.model.isin(["dirichlet", "mle", "random"])
    pd.testing.assert_frame_equal(low[same], high[same])
    assert not np.array_equal(low[~same].cross_entropy, high[~same].cross_entropy)


def test_plot_has_one_panel_per_dataset_and_the_paper_legend():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarise(run_naive_bayes(splits=SPLITS, epsilons=EPS, n_repeats=2, progress=False))
    fig, axes = experiments.plot_grid(summary, "cross_entropy", ["one", "two"], experiments.NB_MODELS, ncols=4)
    assert [ax.get_title() for ax in axes.flat if ax.get_visible()] == ["one", "two"]
    assert axes[0, 0].get_yscale() == "log"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "Random", "Non-private", "Dirichlet", "Gaussian", "Laplace"]
    fig, axes = experiments.plot_grid(summary, "accuracy", ["one", "two"], experiments.NB_MODELS,
                                       random_on={"two"})
    assert axes[0, 0].get_yscale() == "linear"
    assert "Random" in [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close("all")


# ------------------------------------------------------------------ Bayesian networks

def synthetic_network_bayesian(n=700, seed=0):
    """A NetworkData on four nodes (0 -> 2 <- 1, 2 -> 3), rows from a random network."""
    from lib.bayesian_network import NetworkData

    rng = np.random.default_rng(seed)
    n_values = np.array([2, 3, 4, 2], dtype=np.int64)
    parents = ((), (), (0, 1), (2,))
    codes = np.zeros((n, 4), dtype=np.int64)
    for k, ps in enumerate(parents):
        conf = np.zeros(n, dtype=np.int64)
        for p in ps:
            conf = conf * n_values[p] + codes[:, p]
        theta = rng.dirichlet(np.ones(n_values[k]), size=int(conf.max()) + 1 if ps else 1)
        codes[:, k] = (theta[conf].cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    m = int(0.7 * n)
    return NetworkData(("a", "b", "c", "d"), parents, n_values, codes[:m], codes[m:])


NETWORKS_BAYESIAN = {"one": synthetic_network_bayesian(),
                     "two": synthetic_network_bayesian(n=400, seed=1)}


def test_bayesian_network_tidy_frame_and_seeding():
    from lib.experiments import run_bayesian_network

    res = run_bayesian_network(datasets=["one", "two"], networks=NETWORKS_BAYESIAN, epsilons=EPS,
                               n_repeats=3, progress=False, seed=3)
    assert list(res.columns) == ["dataset", "model", "epsilon", "repeat", "log_likelihood"]
    assert len(res) == 2 * 4 * 4 * 3
    assert res.set_index(["dataset", "model", "epsilon", "repeat"]).index.is_unique
    assert np.isfinite(res.log_likelihood).all() and (res.log_likelihood < 0).all()
    assert (res[res.model == "mle"].groupby("dataset").log_likelihood.nunique() == 1).all()
    # a cell does not depend on the rest of the grid; reruns are identical
    part = run_bayesian_network(datasets=["two"], networks=NETWORKS_BAYESIAN, epsilons=EPS[:1],
                                n_repeats=3, models=("laplace",), progress=False, seed=3)
    merged = part.merge(res, on=["dataset", "model", "epsilon", "repeat"], suffixes=("", "_full"))
    assert len(merged) == 3
    np.testing.assert_array_equal(merged.log_likelihood, merged.log_likelihood_full)
    again = run_bayesian_network(datasets=["one", "two"], networks=NETWORKS_BAYESIAN,
                                 epsilons=EPS, n_repeats=3, progress=False, seed=3)
    pd.testing.assert_frame_equal(res, again)


def test_bayesian_network_batched_grid_equals_one_release_at_a_time():
    from lib.bayesian_network import count_tables, log_likelihood, release_tables
    from lib.experiments import cell_seed, evaluate_bayesian_network

    data = NETWORKS_BAYESIAN["one"]
    res = evaluate_bayesian_network(data, "dirichlet", EPS, 4, seed=9, dataset="one")
    tables = count_tables(data.train, data.n_values, data.parents)
    for eps in EPS:
        rng = np.random.default_rng(cell_seed(9, "one", "bn:dirichlet", eps))
        logs = release_tables(tables, "dirichlet", epsilon=eps, n_draws=4, rng=rng)
        want = log_likelihood(data.test, logs, data.n_values, data.parents)
        got = res[res.epsilon == eps].sort_values("repeat").log_likelihood
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="model"):
        evaluate_bayesian_network(data, "random", EPS, 2)
    with pytest.raises(ValueError, match="n_repeats"):
        evaluate_bayesian_network(data, "mle", EPS, 0)
    with pytest.raises(ValueError, match="epsilons"):
        evaluate_bayesian_network(data, "gaussian", [0.0], 2)


def test_bayesian_network_summary_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.experiments import BN_MODELS, plot_grid, run_bayesian_network, summarise

    res = run_bayesian_network(datasets=["one", "two"], networks=NETWORKS_BAYESIAN, epsilons=EPS,
                               n_repeats=3, progress=False)
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


def test_bayesian_network_command_line(tmp_path, monkeypatch, capsys):
    from lib.experiments import run_bayesian_network

    monkeypatch.setattr(experiments, "_load_network", lambda name: NETWORKS_BAYESIAN[name])
    assert main(["bayesian-network", "--out", str(tmp_path / "out"), "--datasets", "one", "two",
                 "--n-epsilons", "3", "--n-repeats", "2", "--seed", "5", "--no-progress"]) == 0
    written = pd.read_csv(tmp_path / "out" / "bayesian_network.csv")
    expected = run_bayesian_network(datasets=["one", "two"], networks=NETWORKS_BAYESIAN,
                                    epsilons=np.logspace(-3, 1, 3), n_repeats=2, seed=5,
                                    progress=False)
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-14)
    assert "wrote 48 rows" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["bayesian-network", "--out", str(tmp_path), "--n-epsilons", "0"])
    with pytest.raises(ValueError, match="models"):
        run_bayesian_network(networks=NETWORKS_BAYESIAN, datasets=["one"], models=("random",))


# ------------------------------------------------------------------ approximate DP (Appendix C)

EPS_DP = np.array([0.3, 3.0])


def test_naive_bayes_dp_tidy_frame_and_seeding():
    from lib.experiments import NB_DP_MODELS, run_naive_bayes_dp

    res = run_naive_bayes_dp(splits=SPLITS, epsilon_hats=EPS_DP, n_repeats=3, progress=False, seed=4)
    assert list(res.columns) == ["dataset", "model", "epsilon_hat", "delta", "repeat", "attained",
                                 "cross_entropy", "accuracy"]
    assert len(res) == 2 * len(NB_DP_MODELS) * 2 * 3
    assert res.set_index(["dataset", "model", "epsilon_hat", "repeat"]).index.is_unique
    ok = res[res.attained]
    assert np.isfinite(ok[["cross_entropy", "accuracy"]].to_numpy()).all()
    assert res[~res.attained][["cross_entropy", "accuracy"]].isna().all().all()
    # a cell does not depend on the rest of the grid; reruns are identical
    part = run_naive_bayes_dp(splits={"two": SPLITS["two"]}, epsilon_hats=EPS_DP[1:], n_repeats=3,
                              models=("gaussian",), progress=False, seed=4)
    full = res[(res.dataset == "two") & (res.model == "gaussian") & (res.epsilon_hat == EPS_DP[1])]
    np.testing.assert_array_equal(part.cross_entropy, full.cross_entropy)
    pd.testing.assert_frame_equal(res, run_naive_bayes_dp(splits=SPLITS, epsilon_hats=EPS_DP, n_repeats=3,
                                                          progress=False, seed=4))


def test_naive_bayes_dp_uses_the_calibrated_per_release_objects():
    from lib.experiments import calibrate_naive_bayes_dp, evaluate_naive_bayes_dp, naive_bayes_dp_shapes

    split = SPLITS["two"]
    assert naive_bayes_dp_shapes(split) == ([3, 3, 3], [1, 3, 3])
    counts = experiments.count(split.X_train, split.y_train, split.n_values, split.n_classes)
    res = evaluate_naive_bayes_dp(split, "laplace", EPS_DP, 2, seed=1, dataset="two")
    for eps in EPS_DP:
        cal = calibrate_naive_bayes_dp(split, "laplace", eps)
        assert cal.parameters["scale"] == pytest.approx(2 * 3 / eps)  # m = K + 1 = 3
        rng = np.random.default_rng(experiments.cell_seed(1, "two", "dp:laplace", eps))
        prior, tables = experiments.release_parameters(*counts, cal.releases, n_draws=2, rng=rng)
        lp = experiments.log_proba(split.X_test, prior, tables, split.n_values)
        np.testing.assert_allclose(res[res.epsilon_hat == eps].cross_entropy,
                                   experiments.cross_entropy(lp, split.y_test), rtol=1e-12)
    with pytest.raises(ValueError, match="model must be"):
        evaluate_naive_bayes_dp(split, "exponential", EPS_DP, 2)
    with pytest.raises(ValueError, match="delta"):
        evaluate_naive_bayes_dp(split, "gaussian", EPS_DP, 2, delta=0.0)
    with pytest.raises(ValueError, match="n_repeats"):
        evaluate_naive_bayes_dp(split, "gaussian", EPS_DP, 0)


def test_naive_bayes_dp_unattained_cells_are_flagged(monkeypatch):
    from lib import approximate_dp
    from lib.experiments import evaluate_naive_bayes_dp, summarise

    def refuse(*args, **kwargs):
        raise ValueError("delta below the floor")

    monkeypatch.setattr(approximate_dp, "gohari_releases", refuse)
    res = evaluate_naive_bayes_dp(SPLITS["one"], "gohari", EPS_DP, 2, dataset="one")
    assert not res.attained.any() and res.cross_entropy.isna().all()
    summary = summarise(res)
    assert not summary.attained.any() and summary.cross_entropy_mean.isna().all()


def test_bayesian_network_dp_grid_and_shapes():
    from lib.bayesian_network import count_tables, log_likelihood, release_tables
    from lib.experiments import (bayesian_network_dp_shapes, calibrate_bayesian_network_dp,
                                 run_bayesian_network_dp, summarise)

    data = NETWORKS_BAYESIAN["one"]
    assert bayesian_network_dp_shapes(data) == ([2, 3, 4, 2], [1, 1, 6, 4])
    res = run_bayesian_network_dp(datasets=["one", "two"], networks=NETWORKS_BAYESIAN, epsilon_hats=EPS_DP,
                                  n_repeats=2, progress=False, seed=2)
    assert list(res.columns) == ["dataset", "model", "epsilon_hat", "delta", "repeat", "attained",
                                 "log_likelihood"]
    assert len(res) == 2 * 5 * 2 * 2
    assert (res[res.attained].log_likelihood < 0).all()
    tables = count_tables(data.train, data.n_values, data.parents)
    cal = calibrate_bayesian_network_dp(data, "gaussian", EPS_DP[0])
    rng = np.random.default_rng(experiments.cell_seed(2, "one", "bn-dp:gaussian", EPS_DP[0]))
    want = log_likelihood(data.test, release_tables(tables, cal.releases, n_draws=2, rng=rng),
                          data.n_values, data.parents)
    got = res[(res.dataset == "one") & (res.model == "gaussian") & (res.epsilon_hat == EPS_DP[0])]
    np.testing.assert_allclose(got.log_likelihood, want, rtol=1e-12)
    summary = summarise(res)
    assert len(summary) == 2 * 5 * 2 and "log_likelihood_mean" in summary


def test_plot_grid_dp_legend_and_panels():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.experiments import NB_DP_MODELS, plot_grid, run_naive_bayes_dp, summarise

    summary = summarise(run_naive_bayes_dp(splits=SPLITS, epsilon_hats=EPS_DP, n_repeats=2,
                                              progress=False))
    fig, axes = plot_grid(summary, "cross_entropy", ["one", "two"], NB_DP_MODELS)
    assert [ax.get_title() for ax in axes.flat if ax.get_visible()] == ["one", "two"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "Random", "Non-private", "Dirichlet", "Gohari et al.", "Gaussian", "Laplace"]
    assert axes[0, 0].get_xlabel() == r"$\log_{10}(\hat\varepsilon)$"
    plt.close("all")


def test_dp_command_line(tmp_path, monkeypatch, capsys):
    from lib.experiments import run_bayesian_network_dp, run_naive_bayes_dp

    monkeypatch.setattr(experiments, "_load_split", lambda name: SPLITS[name])
    monkeypatch.setattr(experiments, "_load_network", lambda name: NETWORKS_BAYESIAN[name])
    assert main(["naive-bayes-dp", "--out", str(tmp_path), "--datasets", "two", "--n-epsilons", "2",
                 "--n-repeats", "2", "--seed", "5", "--no-progress"]) == 0
    written = pd.read_csv(tmp_path / "naive_bayes_dp.csv")
    expected = run_naive_bayes_dp(splits={"two": SPLITS["two"]}, epsilon_hats=np.logspace(-2, 1, 2),
                                  n_repeats=2, seed=5, progress=False)
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-14)
    assert main(["bayesian-network-dp", "--out", str(tmp_path), "--datasets", "one", "--n-epsilons", "2",
                 "--n-repeats", "2", "--no-progress"]) == 0
    written = pd.read_csv(tmp_path / "bayesian_network_dp.csv")
    expected = run_bayesian_network_dp(datasets=["one"], networks=NETWORKS_BAYESIAN,
                                       epsilon_hats=np.logspace(-1, 2, 2), n_repeats=2, progress=False)
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-14)
    assert "wrote" in capsys.readouterr().out
    for bad in (["--delta", "1.5"], ["--n-epsilons", "0"]):
        with pytest.raises(SystemExit):
            main(["naive-bayes-dp", "--out", str(tmp_path)] + bad)
