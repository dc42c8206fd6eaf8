"""lib.experiments.engine and its tasks: the frames of the old grid, the defaults table, hostile input."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lib.experiments import defaults, engine
from lib.experiments.engine import DP_TARGET, RDP_TARGET, Prepared
from lib.experiments.tasks import REGISTRY, BayesianNetwork, NaiveBayes
from lib.privacy.guarantees import ApproximateDP, NotPrivate

pytestmark = pytest.mark.usefixtures("real_data")

OLD_PATH = Path(__file__).parent / "data" / "engine_old_path.csv"
SETUPS = {"naive-bayes": (("Thyroid", "GermanCredit"), ("random", "mle", "dirichlet", "gaussian", "laplace", "gohari")),
          "bayesian-network": (("GermanCredit",), ("mle", "dirichlet", "gaussian", "laplace", "gohari"))}


@pytest.fixture(scope="module")
def real_data():
    from lib.experiments.data import DATA_ENV
    import os

    if not os.environ.get(DATA_ENV):
        pytest.skip(f"{DATA_ENV} is not set (the real data)")


@pytest.mark.parametrize("task", list(SETUPS))
@pytest.mark.parametrize("notion", ["rdp", "dp"])
def test_engine_frames_equal_the_old_grids(task, notion):
    """The frames of grid.run before the engine (stored by that path, commit ad26e59), split by split.

    The old path ran one grid per split seed s with root seed ``7 + s - 1``; the
    engine runs both splits in one call. Seeds, attainment and every score
    are the same (scores to 1e-12: the stored file holds 17 digits, and exp/log
    may differ in the last bit between CPUs).
    """
    old = pd.read_csv(OLD_PATH).query("task == @task and notion == @notion")
    datasets, mechanisms = SETUPS[task]
    target = {"rdp": RDP_TARGET, "dp": DP_TARGET}[notion]
    mechanisms = [m for m in mechanisms if engine.runs_under(m, target)]
    new = engine.run(task, mechanisms, np.logspace(-1, 1, 3), target=target, datasets=datasets, n_repeats=2,
                     seed=7, splits=[1, 3]).rename(columns={"epsilon_hat": "epsilon"})
    assert len(new) == len(old) > 0
    for col in ("split", "dataset", "model", "repeat"):
        assert new[col].tolist() == old[col].tolist()
    np.testing.assert_array_equal(new.epsilon, old.epsilon)
    if notion == "dp":
        assert new.attained.tolist() == old.attained.astype(bool).tolist()
    for metric in REGISTRY[task].metrics:
        np.testing.assert_allclose(new[metric], old[metric], rtol=1e-12, atol=0)


def test_one_split_without_a_split_column_and_data_given():
    prep = NaiveBayes.prepare("Thyroid", 1)
    a = engine.run("naive-bayes", ["dirichlet"], [1.0], data={"Thyroid": prep}, n_repeats=2)
    b = engine.run("naive-bayes", ["dirichlet"], [1.0], datasets=["Thyroid"], n_repeats=2)
    assert "split" not in a.columns
    pd.testing.assert_frame_equal(a, b)


def test_prepared_is_one_type_for_both_tasks():
    from lib.experiments.networks import prepare_network
    from lib.experiments.preprocessing import prepare

    nb = NaiveBayes.prepare("GermanCredit", 2)
    split = prepare("GermanCredit", seed=2)
    assert isinstance(nb, Prepared) and nb.dataset == "GermanCredit" and nb.seed == 2
    np.testing.assert_array_equal(nb.X_train, split.X_train)
    assert nb.attributes == split.attributes and nb.n_classes == split.n_classes
    bn = BayesianNetwork.prepare("GermanCredit", 2)
    net = prepare_network("GermanCredit", 2)
    assert isinstance(bn, Prepared) and bn.attributes == net.nodes and bn.parents == net.parents
    np.testing.assert_array_equal(bn.X_test, net.test)
    assert bn.y_train is None and bn.n_classes == 0
    with pytest.raises(ValueError, match="parents"):
        BayesianNetwork(nb)
    with pytest.raises(TypeError, match="data must be a Prepared"):
        engine.prepared({"X": 1})
    with pytest.raises(AttributeError):
        nb.seed = 3


def test_one_table_of_figure_defaults():
    from lib.experiments import cli

    assert {task for task, _ in defaults.FIGURES} <= set(REGISTRY)
    from lib.models.mixed_naive_bayes import LabelKeptDP

    for (task, notion), fig in defaults.FIGURES.items():
        assert task in REGISTRY and notion in (engine.RenyiDP, engine.ApproximateDP, LabelKeptDP)
        b = engine.budgets(task, notion)
        assert b.size == defaults.N_BUDGETS and np.log10(b[[0, -1]]).tolist() == list(fig.decades)
        for m in fig.mechanisms:
            if task in cli.OWN_GUARANTEE:   # its mechanisms fix the guarantee of each budget themselves
                assert not engine.get(m).notions
            else:
                assert engine.runs_under(m, {engine.RenyiDP: RDP_TARGET, engine.ApproximateDP: DP_TARGET}[notion])
            assert REGISTRY[task].supports(engine.get(m))
        assert set(fig.metrics) == set(REGISTRY[task].metrics)
    assert cli.FIGURES is defaults.FIGURES
    with pytest.raises(ValueError, match="task, notion"):
        engine.figure("naive-bayes", NotPrivate)


def test_registry_is_explicit():
    assert engine.task_names() == tuple(REGISTRY)
    assert all(engine.task_class(name).name == name for name in REGISTRY)
    assert engine.task_class(NaiveBayes) is NaiveBayes
    with pytest.raises(ValueError, match="task must be one of"):
        engine.task_class("svm")


# Issue 41, older leftovers: one parametrised test per class of input.

@pytest.mark.parametrize("kwargs, match", [
    ({"mechanisms": []}, "mechanisms must hold at least one"),
    ({"mechanisms": ["dirichlet", "dirichlet"]}, "mechanisms must be distinct"),
    ({"datasets": []}, "datasets must hold at least one"),
    ({"datasets": ["Thyroid", "Thyroid"]}, "datasets must be distinct"),
    ({"data": {}}, "data must hold at least one"),
    ({"data": [1]}, "data must be a mapping"),
    ({"splits": []}, "splits must hold at least one"),
    ({"splits": [1, 1]}, "splits must be distinct"),
    ({"splits": [-1]}, "splits"),
    ({"budgets": []}, "epsilons must be a scalar or a non-empty"),
    ({"task": "svm"}, "task must be one of"),
    ({"datasets": ["Thyroid"], "data": {"Adult": None}}, "not keys of data"),
])
def test_run_refuses_empty_or_repeated_inputs(kwargs, match):
    args = {"task": "naive-bayes", "mechanisms": ["dirichlet"], "budgets": [1.0], "datasets": ["Thyroid"],
            "n_repeats": 1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        engine.run(args.pop("task"), args.pop("mechanisms"), args.pop("budgets"), **args)


@pytest.mark.parametrize("seed", ["x", 1.5, -1, None, True, np.nan])
def test_run_and_evaluate_refuse_a_seed_that_is_not_a_whole_number(seed):
    with pytest.raises(ValueError, match="seed"):
        engine.run("naive-bayes", ["dirichlet"], [1.0], datasets=["Thyroid"], n_repeats=1, seed=seed)
    task = NaiveBayes(NaiveBayes.prepare("Thyroid", 1))
    with pytest.raises(ValueError, match="seed"):
        engine.evaluate(task, "dirichlet", [1.0], 1, seed=seed)


@pytest.mark.parametrize("poison", ["nan", "foreign", "other mechanism"])
def test_a_cache_filled_by_something_else_is_refused(poison):
    task = NaiveBayes(NaiveBayes.prepare("Thyroid", 1))
    target = RDP_TARGET.with_level(1.0)
    key = engine.calibration_key(engine.get("dirichlet"), target, task.spec)
    if poison == "nan":
        cache = {key: np.nan}
    elif poison == "foreign":
        cache = {key: {"scale": 1.0}}
    else:
        cache = {key: engine.calibrate("gaussian", target, task.spec)}
    with pytest.raises(ValueError, match="cache holds"):
        engine.evaluate(task, "dirichlet", [1.0], 1, cache=cache)
    with pytest.raises(TypeError, match="cache must be None or a dict"):
        engine.calibrate_many("dirichlet", [target], task.spec, cache=[1])


def test_a_shared_cache_gives_the_same_frame():
    cache = {}
    a = engine.run("naive-bayes", ["dirichlet", "gohari"], [0.5, 1.0], target=DP_TARGET, datasets=["Thyroid"],
                   n_repeats=2, cache=cache)
    assert cache
    b = engine.run("naive-bayes", ["dirichlet", "gohari"], [0.5, 1.0], target=DP_TARGET, datasets=["Thyroid"],
                   n_repeats=2, cache=cache)
    pd.testing.assert_frame_equal(a, b)


# ------------------------------------------------------------------ the mixed naive-Bayes task

MIXED_OLD = Path(__file__).parent / "data" / "mixed_old_path.csv"
MIXED_CV_OLD = Path(__file__).parent / "data" / "mixed_cv_old_path.csv"


def test_mixed_task_frames_equal_the_old_evaluate():
    """The engine's mixed naive-Bayes frames equal the former lib.experiments.mixed.evaluate's (commit 2770786).

    The old path drew split s's releases from ``default_rng(s - 1)``, as chapter 14 does; the
    engine's split s runs with root seed ``seed + s - 1``, here with seed 0.
    """
    old = pd.read_csv(MIXED_OLD)
    new = pd.concat([engine.run("mixed-naive-bayes", [m], [0.5, 2.0], target=None, datasets=[name], splits=[1, 2],
                                n_repeats=3, seed=0, options={"max_distance": 1000})
                     for name in ("GermanCredit", "Thyroid") for m in ("zc", "vaidya", "sample_moments")])
    new = new.sort_values(["dataset", "split", "model", "epsilon", "repeat"], kind="stable")
    old = old.sort_values(["dataset", "split", "model", "epsilon", "repeat"], kind="stable")
    assert len(new) == len(old) == 72
    for col in ("dataset", "split", "model", "epsilon", "repeat"):
        assert new[col].tolist() == old[col].tolist()
    for metric in ("accuracy", "cross_entropy"):
        np.testing.assert_allclose(new[metric], old[metric], rtol=1e-12, atol=0)


def test_mixed_cross_validation_equals_the_old_one():
    from lib.experiments.tasks.mixed_naive_bayes import cross_validate, mixed_data

    old = pd.read_csv(MIXED_CV_OLD)
    new = cross_validate(mixed_data("GermanCredit"), {"zc": {"method": "zc"}, "v": {"method": "vaidya"},
                                                      "np": {"method": "sample_moments"}},
                         [1.0], n_folds=3, n_repeats=1, n_draws=2, seed=0)
    pd.testing.assert_frame_equal(new[["variant", "repeat", "fold", "draw"]], old[["variant", "repeat", "fold", "draw"]])
    np.testing.assert_array_equal(new.epsilon.isna(), old.epsilon.isna())
    for metric in ("accuracy", "cross_entropy"):
        np.testing.assert_allclose(new[metric], old[metric], rtol=1e-12, atol=0)


@pytest.mark.parametrize("kwargs, match", [
    ({"target": RDP_TARGET}, "target must be None"),
    ({"mechanisms": ["dirichlet"]}, "cannot score the 'dirichlet' mechanism"),
    ({"binning": "quantile"}, "binning must be 'public'"),
])
def test_mixed_task_refuses_what_it_cannot_run(kwargs, match):
    args = {"mechanisms": ["zc"], "target": None}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        engine.run("mixed-naive-bayes", args.pop("mechanisms"), [1.0], datasets=["GermanCredit"], n_repeats=1,
                   **args)


@pytest.mark.parametrize("frame, match", [
    (pd.DataFrame(), "missing"),
    (pd.DataFrame({"dataset": ["a"], "model": ["m"], "epsilon": [1.0]}), "a score"),
    (pd.DataFrame({"dataset": ["a"], "epsilon": [1.0], "accuracy": [0.5]}), r"missing \['model'\]"),
    (pd.DataFrame({"model": ["m"], "epsilon_hat": [1.0], "accuracy": [0.5]}), r"missing \['dataset'\]"),
    ([1, 2], "must be a pandas DataFrame"),
])
def test_summarise_refuses_a_frame_without_its_columns(frame, match):
    from lib.experiments.analysis import summarise

    with pytest.raises(ValueError, match=match):
        summarise(frame)


@pytest.mark.parametrize("parents", [None, "ab", 3, [None], [(1.5,)], [("a",)], [(True,)]])
def test_topological_order_refuses_what_is_not_a_graph(parents):
    from lib.models.bayesian_network import topological_order

    with pytest.raises(TypeError, match="parents"):
        topological_order(parents)
    assert topological_order([(1,), (), (0, 1)]) == [1, 0, 2]


# ------------------------------------------------------------------ the logistic-regression task

LOGISTIC_OLD = Path(__file__).parent / "data" / "logistic_old_path.csv"


def test_logistic_task_frames_equal_the_old_run_splits():
    """The engine's logistic-regression frames equal the former glm.run_splits's (commit ac0dfe2).

    The old path sampled split k (the k-th of [1, 2]) with seed ``11 + k``; the engine's split s
    runs with ``seed + s - 1``: the same seeds.
    """
    from lib.mechanisms.logistic_posterior import SAMPLERS

    old = pd.read_csv(LOGISTIC_OLD)
    new = engine.run("logistic-regression", SAMPLERS, [0.5, 5.0], target=None, datasets=["Digit"], splits=[1, 2],
                     n_repeats=3, seed=11, options={"lams": [2.0, 10.0], "n_sweeps": 2})
    assert list(new.columns) == ["dataset", "split"] + [c for c in old.columns if c not in ("dataset", "split")]
    new = new[list(old.columns)]
    for col in ("dataset", "split", "method", "lam", "epsilon", "repeat"):
        assert new[col].tolist() == old[col].tolist()
    for col in ("beta", "rho", "radius", "error", "cross_entropy", "acceptance"):
        np.testing.assert_allclose(new[col], old[col], rtol=1e-12, atol=0)


@pytest.mark.parametrize("kwargs, match", [
    ({"target": RDP_TARGET}, "target must be None"),
    ({"options": {}}, "options must give lams"),
    ({"mechanisms": ["dirichlet"]}, "cannot score the 'dirichlet' mechanism"),
    ({"datasets": ["Thyroid"]}, "dataset must be one of"),
])
def test_logistic_task_refuses_what_it_cannot_run(kwargs, match):
    from lib.mechanisms.logistic_posterior import SAMPLERS

    args = {"mechanisms": list(SAMPLERS)[:1], "target": None, "datasets": ["Digit"], "options": {"lams": [2.0]}}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        engine.run("logistic-regression", args.pop("mechanisms"), [1.0], n_repeats=2, **args)


# ------------------------------------------------------------------ the histogram task

HISTOGRAM_OLD = Path(__file__).parent / "data" / "histogram_old_path.csv"
PRIVATE = ("dirichlet", "gohari", "gaussian", "laplace", "geumlek_diffused", "geumlek_concentrated")


@pytest.mark.parametrize("attribute, seed, eps", [("income", 1, 1.0), ("native-country", 2, 1.0),
                                                  ("income", 3, 0.1), ("native-country", 4, 10.0)])
def test_histogram_task_frames_equal_chapter_14s(attribute, seed, eps):
    """The engine's histogram frames equal those of chapter 14's histogram_task (commit 47ac17f).

    The chapter keyed the k-th mechanism's releases by ``[seed, k]`` and the smoothed-Hellinger
    mechanism (at d = 2 only) by ``[seed, 99]``; the task takes these keys.
    """
    old = pd.read_csv(HISTOGRAM_OLD).query("dataset == @attribute and epsilon_hat == @eps")
    two = attribute == "income"
    mechanisms = PRIVATE + (("smoothed_hellinger",) if two else ())
    keys = list(range(len(PRIVATE))) + ([99] if two else [])
    new = engine.run("histogram", mechanisms, [eps], target=DP_TARGET, datasets=["Adult"], n_repeats=50,
                     seed=seed, options={"attribute": attribute, "keys": keys})
    assert new.model.tolist() == old.model.replace({"hellinger": "smoothed_hellinger"}).tolist()
    assert new.dataset.tolist() == old.dataset.tolist() and new.repeat.tolist() == old.repeat.tolist()
    for metric in ("kl", "tv"):
        np.testing.assert_allclose(new[metric], old[metric], rtol=1e-12, atol=0)


def test_kl_tv_by_hand_and_histogram_refusals():
    from lib.experiments.tasks.histogram import histogram_counts, kl_tv

    kl, tv = kl_tv([0.5, 0.5, 0.0], [[0.25, 0.5, 0.25]])
    assert kl[0] == pytest.approx(0.5 * np.log(2)) and tv[0] == pytest.approx(0.25)
    prep = engine.task_class("histogram").prepare("GermanCredit", 1)
    counts = histogram_counts(prep, "credit_risk")   # the label: the class counts
    assert counts.sum() == len(prep.y_train)
    with pytest.raises(ValueError, match="attribute must be a column"):
        histogram_counts(prep, "no such column")
    with pytest.raises(ValueError, match="keys must hold one seed key per mechanism"):
        engine.run("histogram", ["dirichlet"], [1.0], target=DP_TARGET, datasets=["GermanCredit"], n_repeats=2,
                   options={"attribute": prep.attributes[0], "keys": [1, 2]})


# ------------------------------------------------------------------ the single-posterior task


def test_posterior_task_frames_equal_chapter_12s_head_to_head():
    """The engine's posterior frames equal chapter 12's loop over hellinger.head_to_head (same keys)."""
    from lib.experiments import hellinger as hx
    from lib.experiments.tasks.posterior import counts_data

    eps_hats, delta = (0.3, 3.0), 1e-6
    old = []
    for ones, n in ((48, 100), (6, 100)):
        for k, eps_hat in enumerate(eps_hats):
            res = hx.head_to_head((1.0, 1.0), (ones, n - ones), eps_hat, delta, reference=np.array([0.3 * n, 0.7 * n]),
                                  repeats=200, rng=np.random.default_rng([13, k, n]))
            old += [(f"{ones}/{n}", m, eps_hat, metric, mean, se) for m in hx.MECHANISMS
                    for metric, (mean, se) in res[m].items()]
    old = pd.DataFrame(old, columns=["dataset", "model", "epsilon_hat", "metric", "mean", "se"])
    registry = sorted({name for _, name, _ in hx.ENTRIES})
    new = engine.run("posterior", registry, eps_hats, target=ApproximateDP(1.0, delta), n_repeats=200, seed=13,
                     data={f"{o}/{n}": counts_data(o, n, f"{o}/{n}") for o, n in ((48, 100), (6, 100))})
    assert len(new) == len(old) > 0
    for col in ("dataset", "model", "epsilon_hat", "metric"):
        assert new[col].tolist() == old[col].tolist()
    np.testing.assert_allclose(new[["mean", "se"]].to_numpy(), old[["mean", "se"]].to_numpy(), rtol=1e-12, atol=0)
    # asking for fewer mechanisms keeps their rows and draws the same numbers
    few = engine.run("posterior", ["count_laplace"], eps_hats[:1], target=ApproximateDP(1.0, delta),
                     n_repeats=200, seed=13, data={"48/100": counts_data(48, 100, "48/100")})
    assert set(few.model) == {"Laplace"}
    pd.testing.assert_frame_equal(few.reset_index(drop=True),
                                  new.query("model == 'Laplace' and dataset == '48/100' and epsilon_hat == 0.3")
                                  .reset_index(drop=True))
    with pytest.raises(ValueError, match="cannot score the 'gohari' mechanism"):
        engine.run("posterior", ["gohari"], [1.0], n_repeats=2, data={"a": counts_data(1, 3)})
    with pytest.raises(ValueError, match="ones"):
        counts_data(5, 3)


def test_a_histogram_release_a_mechanism_cannot_calibrate_is_a_named_error():
    """One release has no other calibration to fall back on: a mechanism that cannot meet the
    target (the classical Gaussian bound above eps_hat = 1) is refused by name, never an IndexError."""
    with pytest.raises(ValueError, match="gaussian_classical cannot meet"):
        engine.run("histogram", ["gaussian_classical"], [2.0], target=DP_TARGET, datasets=["GermanCredit"],
                   n_repeats=2, options={"attribute": "credit_risk"})


def test_logistic_task_at_a_dp_target_equals_samplers_at_dp():
    """At an ApproximateDP target the engine's logistic-regression task runs samplers_at_dp on each
    split, split s with seed ``seed + s - 1`` for every sampler; a sampler's rows do not depend on
    which others run."""
    from lib.experiments.tasks import logistic_regression as lr_task

    eps_hats, target = [0.3, 3.0], ApproximateDP(1.0, 1e-5)
    new = engine.run("logistic-regression", lr_task.DP_SAMPLERS, eps_hats, target=target, datasets=["Digit"],
                     splits=[1, 2], n_repeats=3, seed=5, options={"n_sweeps": 2})
    assert list(new.columns[:2]) == ["dataset", "split"] and set(new.dataset) == {"Digit"}
    for s in (1, 2):
        old = lr_task.samplers_at_dp(lr_task.digits(seed=s), eps_hats, 3, seed=5 + s - 1, n_sweeps=2, delta=1e-5)
        got = new[new.split == s].drop(columns=["dataset", "split"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, old, check_exact=True)
    ops = engine.run("logistic-regression", [lr_task.OPSLogistic], eps_hats, target=target, datasets=["Digit"],
                     n_repeats=3, seed=5, options={"n_sweeps": 2, "labels": {"ops": "OPS"}})
    assert set(ops.model) == {"LR OPS"}
    np.testing.assert_array_equal(ops.error, new[(new.split == 1) & (new.model == "LR ops")].error)


@pytest.mark.parametrize("mechanisms, options, match", [
    (["logistic_posterior"], {}, "methods must be among the private samplers"),
    (None, {"lams": [2.0]}, "lams must be None"),
])
def test_logistic_task_at_a_dp_target_refuses(mechanisms, options, match):
    from lib.experiments.tasks import logistic_regression as lr_task
    from lib.mechanisms.logistic_posterior import LogisticPosterior

    mechs = [LogisticPosterior] if mechanisms else list(lr_task.DP_SAMPLERS)
    with pytest.raises(ValueError, match=match):
        engine.run("logistic-regression", mechs, [1.0], target=ApproximateDP(1.0, 1e-5), datasets=["Digit"],
                   n_repeats=2, options=options)


def test_posterior_task_seed_keys_and_synthetic_splits():
    """The posterior task's seed key: ("split", "budget", "n") draws split s's budget k from
    ``default_rng([seed, s - 1, k, n])`` with the engine's root seed on every split, and ("budget",)
    from ``default_rng([seed, k])``; a synthetic dataset on split s is the draw of
    ``synthetic_counts(default_rng([SYNTHETIC_ROOT, s - 1]))``."""
    from lib.experiments import hellinger as hx
    from lib.experiments.tasks.posterior import SYNTHETIC, SYNTHETIC_ROOT, counts_data, synthetic_counts

    eps_hats, delta, name = (0.3, 3.0), 1e-6, "theta=0.05, n=100"
    new = engine.run("posterior", ["count_laplace", "smoothed_hellinger"], eps_hats, target=ApproximateDP(1.0, delta),
                     datasets=[name], splits=[1, 2], n_repeats=50, seed=13, options={"key": ("split", "budget", "n")})
    for s in (1, 2):
        ones, n = synthetic_counts(np.random.default_rng([SYNTHETIC_ROOT, s - 1]))[name]
        assert set(new[new.split == s].ones) == {ones} and SYNTHETIC[name][1] == n
        for k, e in enumerate(eps_hats):
            res = hx.head_to_head((1.0, 1.0), (ones, n - ones), e, delta, reference=np.array([0.3 * n, 0.7 * n]),
                                  repeats=50, rng=np.random.default_rng([13, s - 1, k, n]))
            got = new[(new.split == s) & (new.epsilon_hat == e) & (new.metric == "hellinger")].set_index("model")
            for m in ("Laplace", "M_H"):
                assert got.loc[m, "mean"] == res[m]["hellinger"][0]
    few = engine.run("posterior", ["count_laplace"], eps_hats, target=ApproximateDP(1.0, delta), n_repeats=50,
                     seed=13, data={"a": counts_data(30, 100, "a")}, options={"key": ("budget",)})
    for k, e in enumerate(eps_hats):
        res = hx.head_to_head((1.0, 1.0), (30, 70), e, delta, reference=np.array([30.0, 70.0]), repeats=50,
                              rng=np.random.default_rng([13, k]))
        assert few[(few.epsilon_hat == e) & (few.metric == "kl")]["mean"].item() == res["Laplace"]["kl"][0]


@pytest.mark.parametrize("key, match", [(("split",), "needs data prepared on a split"),
                                        (("budget", "seed"), "key must hold distinct parts"),
                                        (("n", "n"), "key must hold distinct parts")])
def test_posterior_task_refuses_a_bad_seed_key(key, match):
    from lib.experiments.tasks.posterior import counts_data

    with pytest.raises(ValueError, match=match):
        engine.run("posterior", ["count_laplace"], [1.0], target=ApproximateDP(1.0, 1e-6), n_repeats=2,
                   data={"a": counts_data(1, 3)}, options={"key": key})


def test_posterior_task_on_a_histogram_of_three_categories():
    """For k = 3 the task draws M_H^D (its exact expectation over the candidates, as the dense
    log_pmf gives it) and Appendix B's Dirichlet mechanism (the draws of Generator.dirichlet from the
    same generator, post-processed to prior + n y); a histogram needs its public reference."""
    from lib.experiments import hellinger as hx
    from lib.experiments.tasks.posterior import histogram_data
    from lib.mechanisms import hellinger as hm
    from lib.mechanisms.dirichlet.order import optimal_order

    prior, counts, delta, ref = (1.0, 1.0, 1.0), (2, 3, 7), 1e-6, (2.0, 4.0, 6.0)
    new = engine.run("posterior", ["smoothed_hellinger", "dirichlet"], [1.0], target=ApproximateDP(1.0, delta),
                     n_repeats=300, seed=31, data={"h": histogram_data(counts, "h")},
                     options={"prior": prior, "reference": ref, "key": ("budget",)})
    assert set(new.model) == set(hx.K_ENTRIES) and set(new["counts"]) == {counts}
    got = new[new.metric == "hellinger"].set_index("model")["mean"]
    mech = hm.SmoothedHellinger(prior, 12, 1.0, delta)
    idx = int(np.flatnonzero((mech.cand == counts).all(axis=1))[0])
    true_post = np.asarray(counts, float) + prior
    cand_post = mech.cand + np.asarray(prior)
    util = hx.posterior_utility(np.broadcast_to(true_post, cand_post.shape), cand_post)["hellinger"]
    assert got["M_H"] == pytest.approx(np.exp(mech.log_pmf[idx]) @ util, rel=1e-12)
    choice = optimal_order(1.0, delta, np.array(ref))
    y = np.random.default_rng([31, 0]).dirichlet(choice.r * np.asarray(counts) + choice.alpha, 300)
    mc = hx.posterior_utility(np.broadcast_to(true_post, y.shape), np.asarray(prior) + 12 * y)["hellinger"]
    assert got["Dirichlet (App. B)"] == pytest.approx(mc.mean(), rel=1e-12)
    with pytest.raises(ValueError, match="reference must be given for a histogram of 3 categories"):
        engine.run("posterior", ["dirichlet"], [1.0], target=ApproximateDP(1.0, delta), n_repeats=2,
                   data={"h": histogram_data(counts, "h")}, options={"prior": prior})
    with pytest.raises(ValueError, match="counts must be a histogram"):
        histogram_data([3])


def test_naive_bayes_majority_share_scores_the_same_releases():
    """``options={"majority_share": True}``: the other columns are those of the plain run, and each
    release's share equals :func:`verdicts.majority_share` of its log posteriors, released by hand
    with the engine's cell seed."""
    from lib.experiments.cells import cell_seed
    from lib.experiments.verdicts import majority_share
    from lib.models.naive_bayes.scoring import log_proba

    mechs, eps = ["random", "mle", "dirichlet", "laplace"], [0.5, 4.0]
    plain = engine.run("naive-bayes", mechs, eps, datasets=["Thyroid"], n_repeats=3, target=DP_TARGET)
    shares = engine.run("naive-bayes", mechs, eps, datasets=["Thyroid"], n_repeats=3, target=DP_TARGET,
                        options={"majority_share": True})
    pd.testing.assert_frame_equal(shares.drop(columns="majority_share"), plain)
    task = NaiveBayes(NaiveBayes.prepare("Thyroid", 1))
    for e in eps:
        cal = engine.calibrate("dirichlet", DP_TARGET.with_level(e), task.spec)
        rng = np.random.default_rng(cell_seed(defaults.DEFAULT_SEED, "Thyroid", "dp:dirichlet", e))
        prior, tables = task.release(cal, 3, rng)
        lp = log_proba(task.data.X_test, prior, tables, task.data.n_values)
        got = shares.query("model == 'dirichlet' and epsilon_hat == @e").majority_share.to_numpy()
        np.testing.assert_array_equal(got, [majority_share(lp[b], task.data.y_test) for b in range(3)])
    # uniform guesses: about a third of Thyroid's three classes; the non-private model: one value repeated
    random = shares.query("model == 'random'").majority_share
    assert random.between(0.3, 0.37).all()
    assert shares.query("model == 'mle'").majority_share.nunique() == 1


@pytest.mark.parametrize("options, match", [({"majority_share": 1}, "majority_share must be True or False"),
                                            ({"bins": 3}, "unexpected keyword")])
def test_naive_bayes_options_are_checked(options, match):
    with pytest.raises((TypeError, ValueError), match=match):
        engine.run("naive-bayes", ["dirichlet"], [1.0], datasets=["Thyroid"], n_repeats=1, options=options)
    with pytest.raises(ValueError, match="takes none"):
        engine.run("bayesian-network", ["dirichlet"], [1.0], datasets=["GermanCredit"], n_repeats=1,
                   options={"majority_share": True})


def test_histogram_entropy_orders_the_seed_of_each_release_batch():
    """``entropy=(N, "mechanism", j, "seed")`` gives the releases of chapter 14's sweep over the number
    of rows: the k-th mechanism on the first N rows of split s drawn from ``default_rng([N, k, j, s])``."""
    from lib.mechanisms.protocol import ReleaseSpec, get
    from lib.experiments.tasks.histogram import histogram_counts, kl_tv

    n_rows, j = 30, 1
    new = engine.run("histogram", ["dirichlet", "laplace"], [1.0], target=DP_TARGET, splits=[1, 2], seed=1,
                     n_repeats=40, options={"attribute": "income", "n_rows": n_rows,
                                            "entropy": (n_rows, "mechanism", j, "seed")})
    for s in (1, 2):
        counts = histogram_counts(engine.task_class("histogram").prepare("Adult", s), "income", n_rows)
        spec = ReleaseSpec.of([counts], n_rows)
        for k, name in enumerate(("dirichlet", "laplace")):
            mech = get(name).calibrate(DP_TARGET, spec).releases[0]
            y = mech.release(np.broadcast_to(counts, (40, 2)), np.random.default_rng([n_rows, k, j, s]))
            got = new.query("split == @s and model == @name").kl.to_numpy()
            np.testing.assert_array_equal(got, kl_tv(counts / n_rows, y)[0])


@pytest.mark.parametrize("entropy, match", [("seed", "entropy must be a sequence"), ((), "at least one"),
                                            (("seed", "seed"), "at most once"), (("split",), "may name"),
                                            ((-1, "mechanism"), "entropy must be an integer"),
                                            ((1.5,), "entropy must be an integer")])
def test_histogram_entropy_is_checked(entropy, match):
    with pytest.raises((TypeError, ValueError), match=match):
        engine.run("histogram", ["laplace"], [1.0], target=DP_TARGET, datasets=["Adult"], n_repeats=2,
                   options={"attribute": "income", "entropy": entropy})
