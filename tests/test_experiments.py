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
    fig, axes = experiments.plot_naive_bayes(summary, "cross_entropy", ["one", "two"], ncols=4)
    assert [ax.get_title() for ax in axes.flat if ax.get_visible()] == ["one", "two"]
    assert axes[0, 0].get_yscale() == "log"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "Random", "Non-private", "Dirichlet", "Gaussian", "Laplace"]
    fig, axes = experiments.plot_naive_bayes(summary, "accuracy", ["one", "two"], random_on={"two"})
    assert axes[0, 0].get_yscale() == "linear"
    assert "Random" in [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close("all")
