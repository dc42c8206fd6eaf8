"""Tests of lib.experiments.cli: ``python -m lib.experiments run ...``.

The command line prepares the real data through each task's ``prepare``; the fixture
``synthetic_data`` replaces those with the synthetic datasets of
``conftest.py`` under real dataset names, so that a run takes a fraction of a second.
"""

import json
import os
import re
import stat
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from lib.experiments import cli, run
from lib.experiments.cli import main
from lib.experiments.defaults import FIGURES
from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib._version import __version__ as lib_version
from lib.experiments.engine import prepared
from lib.experiments.tasks import REGISTRY, BayesianNetwork, NaiveBayes

RECORD_KEYS = {"model", "privacy", "datasets", "mechanisms", "budgets", "n_repeats", "lam", "delta", "options",
               "seed", "elapsed_seconds", "versions", "commit", "rows"}


@pytest.fixture
def synthetic_data(monkeypatch, splits, networks):
    """Real dataset names that load synthetic data: {name: data} of each model."""
    data = {"naive-bayes": {"GermanCredit": splits["one"], "Adult": splits["two"]},
            "bayesian-network": {"GermanCredit": networks["one"], "Adult": networks["two"],
                                 "Bank": networks["two"]}}
    for task in (NaiveBayes, BayesianNetwork):
        monkeypatch.setattr(task, "prepare", classmethod(
            lambda cls, name, seed, binning="public": prepared(data[cls.name][name], name, seed)))
    return data


@pytest.fixture
def no_grid(monkeypatch):
    """Any call of the grid fails the test: validation must come before computation."""
    def forbidden(*args, **kwargs):
        raise AssertionError("the grid ran before the arguments were checked")

    monkeypatch.setattr(cli, "run", forbidden)


def command(tmp_path, *extra, model="naive-bayes", privacy="rdp"):
    return ["run", "--model", model, "--privacy", privacy, "--out", str(tmp_path / "out"), "--no-progress",
            *extra]


def usage_error(capsys, argv):
    """Run ``main(argv)``; it must exit with status 2 and a usage message, no traceback."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "usage:" in err and "error:" in err and "Traceback" not in err
    return err


# ----------------------------------------------------------------------------- argument validation

@pytest.mark.parametrize("extra, message", [
    (["--n-repeats", "0"], "must be at least 1"),
    (["--n-repeats", "two"], "expected a whole number"),
    (["--n-epsilons", "0"], "must be at least 1"),
    (["--n-epsilons", "1e9"], "expected a whole number"),
    (["--n-epsilons", "1000000000"], "must be at most 1000"),      # ran out of memory (or hung)
    (["--n-repeats", "100000"], "must be at most 10000"),
    (["--seed", "-1"], "must be at least 0"),                      # was a traceback from SeedSequence
    (["--seed", "1.5"], "expected a whole number"),
    (["--delta", "0"], r"must be in \(0, 1\)"),
    (["--delta", "1"], r"must be in \(0, 1\)"),
    (["--delta", "1.5"], r"must be in \(0, 1\)"),
    (["--delta", "nan"], r"must be in \(0, 1\)"),
    (["--lam", "0.5"], r"must be in \(1, inf\)"),
    (["--lam", "1"], r"must be in \(1, inf\)"),
    (["--datasets", "iris"], "invalid choice: 'iris'"),
    (["--mechanisms", "svm"], "invalid choice: 'svm'"),
    (["--datasets", "germancredt"], r"invalid choice: 'germancredt' \(did you mean 'GermanCredit'\?\)"),
    (["--mechanisms", "dirichelt"], r"invalid choice: 'dirichelt' \(did you mean 'dirichlet'\?\)"),
    (["--epsilon", "0"], r"must be in \[1e-06, 10000\]"),
    (["--epsilon", "1", "-2"], r"must be in \[1e-06, 10000\]"),
    (["--epsilon", "inf"], r"must be in \[1e-06, 10000\]"),
    # issue 41: what the parser offers, the run must do
    (["--epsilon", "1e308"], r"must be in \[1e-06, 10000\], got 1e308"),
    (["--epsilon", "5e-324"], r"must be in \[1e-06, 10000\], got 5e-324"),
    (["--epsilon", "1", "1"], r"--epsilon: each value once; 1.0 is repeated"),
    (["--epsilon", *["1"] * 1001], r"--epsilon: at most 1000 values; got 1001"),
    (["--datasets", "adult", "Adult"], r"--datasets: each value once; 'Adult' is repeated"),
    (["--mechanisms", "mle", "mle"], r"--mechanisms: each value once; 'mle' is repeated"),
    (["--epsilon", "1", "--n-epsilons", "3"], "not allowed with argument"),
])
def test_bad_arguments_exit_2_before_any_computation(tmp_path, capsys, no_grid, extra, message):
    err = usage_error(capsys, command(tmp_path, *extra))
    assert re.search(message, err)
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_and_missing_arguments(tmp_path, capsys, no_grid):
    target = tmp_path / "results.csv"
    target.write_text("keep me")
    err = usage_error(capsys, ["run", "--model", "naive-bayes", "--out", str(target)])
    assert "exists and is not a folder" in err and target.read_text() == "keep me"
    usage_error(capsys, [])
    usage_error(capsys, ["run", "--out", str(tmp_path)])  # --model is required
    usage_error(capsys, ["run", "--model", "svm", "--out", str(tmp_path)])
    usage_error(capsys, ["run", "--model", "naive-bayes", "--privacy", "zcdp", "--out", str(tmp_path)])


def test_out_under_a_file_is_a_usage_error(tmp_path, capsys, no_grid):
    # --out results.csv/sub: the folder cannot be created; it was a NotADirectoryError traceback after the run.
    target = tmp_path / "results.csv"
    target.write_text("keep me")
    err = usage_error(capsys, ["run", "--model", "naive-bayes", "--out", str(target / "sub" / "deeper")])
    assert f"{target} is a file, not a folder" in err and target.read_text() == "keep me"


def test_a_failure_to_write_after_the_run_is_a_clean_error(tmp_path, capsys, synthetic_data, monkeypatch):
    def failing(path, write):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cli, "_write_atomic", failing)
    assert main(command(tmp_path, "--n-epsilons", "1", "--n-repeats", "1", "--datasets", "germancredit",
                        "--mechanisms", "mle")) == 2
    err = capsys.readouterr().err
    assert "error: --out" in err and "Permission denied" in err and "Traceback" not in err


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077], ids=oct)
def test_results_are_written_with_the_users_umask(tmp_path, synthetic_data, umask):
    # The temporary files of mkstemp are 0600 and were renamed as they were; a result file gets the mode
    # of any new file, 0666 less the umask.
    old = os.umask(umask)
    try:
        assert main(command(tmp_path, "--n-epsilons", "1", "--n-repeats", "1", "--datasets", "germancredit",
                            "--mechanisms", "mle", "--figures")) == 0
    finally:
        os.umask(old)
    files = list((tmp_path / "out").iterdir())
    assert len(files) == 6                                       # csv, json, two figures in two formats
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask, f.name


@pytest.mark.parametrize("model, extra", [
    ("naive-bayes", ["--mechanisms", "geumlek_true"]),         # issue 41: offered, then a traceback
    ("naive-bayes", ["--mechanisms", "smoothed_hellinger"]),   # a vector of public total, not tables
    ("naive-bayes", ["--privacy", "dp", "--mechanisms", "hellinger_em"]),
    ("naive-bayes", ["--privacy", "dp", "--mechanisms", "count_laplace"]),
    ("naive-bayes", ["--mechanisms", "sample_moments"]),       # moments, not tables
    ("bayesian-network", ["--privacy", "dp", "--mechanisms", "lr_posterior"]),
    ("naive-bayes", ["--mechanisms", "gohari"]),               # no RDP calibration
    ("naive-bayes", ["--mechanisms", "gaussian_classical"]),   # no RDP calibration
    ("bayesian-network", ["--mechanisms", "random"]),          # a network has no uninformative model
    ("bayesian-network", ["--datasets", "digit"]),             # no network for Digit
])
def test_a_combination_the_grid_cannot_run_is_a_usage_error(tmp_path, capsys, no_grid, model, extra):
    usage_error(capsys, command(tmp_path, *extra, model=model))


@pytest.mark.parametrize("extra, option", [(["--n-repeats", "0"], "--n-repeats"), (["--seed", "-1"], "--seed")])
def test_usage_error_from_a_real_process(tmp_path, extra, option):
    done = subprocess.run([sys.executable, "-m", "lib.experiments", "run", "--model", "naive-bayes", "--out",
                           str(tmp_path), *extra], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr and option in done.stderr


# ----------------------------------------------------------------------------- what a run writes

#: The --privacy choice of each type of target.
CHOICE = {RenyiDP: "rdp", ApproximateDP: "dp"}
#: The grids the synthetic data of conftest.py stand in for (the other tasks run on the real data below).
GRIDS = [(model, CHOICE[notion]) for model, notion in FIGURES if model in ("naive-bayes", "bayesian-network")]


@pytest.mark.parametrize("model, privacy", GRIDS)
def test_case_insensitive_datasets_and_the_csv(tmp_path, capsys, synthetic_data, model, privacy):
    """The CSV is the grid of ``run`` with the chapter's mechanisms and budget axis."""
    assert main(command(tmp_path, "--datasets", "GERMANCREDIT", "adult", "--n-epsilons", "3", "--n-repeats",
                        "2", "--seed", "5", model=model, privacy=privacy)) == 0
    written = pd.read_csv(tmp_path / "out" / f"{model.replace('-', '_')}_{privacy}.csv")
    assert list(dict.fromkeys(written.dataset)) == ["GermanCredit", "Adult"]
    figure = FIGURES[(model, {v: k for k, v in CHOICE.items()}[privacy])]
    mechanisms, ends = figure.mechanisms, figure.decades
    expected = run(model, mechanisms, np.logspace(*ends, 3), target=cli.target(privacy, 5.0, 1e-5),
                   data=synthetic_data[model],
                   datasets=["GermanCredit", "Adult"], n_repeats=2, seed=5, progress=False)
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-14)
    assert f"wrote {len(expected)} rows" in capsys.readouterr().out


@pytest.mark.parametrize("model, privacy", GRIDS)
def test_json_record(tmp_path, synthetic_data, model, privacy):
    assert main(command(tmp_path, "--n-epsilons", "2", "--n-repeats", "2", "--datasets", "germancredit",
                        model=model, privacy=privacy)) == 0
    stem = f"{model.replace('-', '_')}_{privacy}"
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [f"{stem}.csv", f"{stem}.json"]  # no temporary file left
    record = json.loads((out / f"{stem}.json").read_text())
    assert set(record) == RECORD_KEYS
    figure = FIGURES[(model, {v: k for k, v in CHOICE.items()}[privacy])]
    mechanisms, ends = figure.mechanisms, figure.decades
    assert record["model"] == model and record["privacy"] == privacy
    assert record["datasets"] == ["GermanCredit"] and record["mechanisms"] == list(mechanisms)
    np.testing.assert_allclose(record["budgets"], np.logspace(*ends, 2), rtol=1e-15)
    assert (record["n_repeats"], record["seed"], record["options"]) == (2, 20230201, {})
    assert (record["lam"], record["delta"]) == ((5.0, None) if privacy == "rdp" else (None, 1e-5))
    assert set(record["versions"]) == {"python", "numpy", "scipy", "pandas", "matplotlib",
                                       "dirichlet-mechanism-book"}
    assert record["versions"]["dirichlet-mechanism-book"] == lib_version
    # this test runs from the git checkout: the record names its commit (+dirty with local changes)
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", record["commit"]), record["commit"]
    assert record["versions"]["numpy"] == np.__version__
    assert record["rows"] == len(pd.read_csv(out / f"{stem}.csv")) == len(mechanisms) * 2 * 2
    assert record["elapsed_seconds"] >= 0


def test_default_datasets_of_the_network_grid(tmp_path, synthetic_data):
    assert main(command(tmp_path, "--n-epsilons", "1", "--n-repeats", "1", "--mechanisms", "mle",
                        model="bayesian-network")) == 0
    record = json.loads((tmp_path / "out" / "bayesian_network_rdp.json").read_text())
    assert record["datasets"] == ["Adult", "Bank", "GermanCredit"]


@pytest.mark.parametrize("model, metrics", [("naive-bayes", ("cross_entropy", "accuracy")),
                                            ("bayesian-network", ("log_likelihood",))])
def test_figures_are_written_as_png_and_svg(tmp_path, synthetic_data, model, metrics):
    assert main(command(tmp_path, "--n-epsilons", "2", "--n-repeats", "2", "--datasets", "germancredit",
                        "adult", "--figures", model=model)) == 0
    stem = f"{model.replace('-', '_')}_rdp"
    out = tmp_path / "out"
    figures = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".svg"))
    assert figures == sorted(f"{stem}_{m}.{ext}" for m in metrics for ext in ("png", "svg"))
    for m in metrics:
        assert (out / f"{stem}_{m}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in (out / f"{stem}_{m}.svg").read_text()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


# ----------------------------------------------------------------------------- issue 27: budgets, names, help

def test_explicit_budgets_with_epsilon(tmp_path, synthetic_data):
    assert main(command(tmp_path, "--epsilon", "1", "--n-repeats", "1", "--datasets", "germancredit",
                        "--mechanisms", "dirichlet", "mle")) == 0
    record = json.loads((tmp_path / "out" / "naive_bayes_rdp.json").read_text())
    assert record["budgets"] == [1.0] and record["mechanisms"] == ["dirichlet", "mle"]
    written = pd.read_csv(tmp_path / "out" / "naive_bayes_rdp.csv")
    assert sorted(set(written.epsilon)) == [1.0] and len(written) == 2
    assert main(command(tmp_path, "--epsilon", "0.5", "2", "--n-repeats", "1", "--datasets", "germancredit",
                        "--mechanisms", "mle")) == 0
    assert json.loads((tmp_path / "out" / "naive_bayes_rdp.json").read_text())["budgets"] == [0.5, 2.0]


def test_the_static_names_of_the_parser_are_the_registry_s():
    from lib.experiments import engine
    from lib.experiments.data import DATASETS
    from lib.experiments.defaults import BN_DATASETS

    assert cli.DATASET_NAMES == DATASETS and cli.BN_DATASET_NAMES == BN_DATASETS
    from lib.experiments.analysis import METRICS
    from lib.models.mixed_naive_bayes import LabelKeptDP

    # every task of the engine, each with its figure defaults
    assert cli.MODELS == tuple(REGISTRY) and not hasattr(cli, "MECHANISM_NAMES")
    assert {task for task, _ in FIGURES} == set(REGISTRY)
    # the --privacy choices are the only notion names; rdp and dp become typed targets, label-kept none
    assert cli.PRIVACY == ("rdp", "dp", "label-kept") and cli.target("rdp", 5.0, 1e-5) == engine.RDP_TARGET
    assert cli.target("dp", 5.0, 1e-5) == engine.DP_TARGET and cli.target("label-kept", None, None) is None
    assert cli.TASK_PRIVACY == {"naive-bayes": ("rdp", "dp"), "bayesian-network": ("rdp", "dp"),
                                "mixed-naive-bayes": ("label-kept",), "logistic-regression": ("rdp",),
                                "histogram": ("dp",), "posterior": ("dp",)}
    assert FIGURES[("mixed-naive-bayes", LabelKeptDP)].mechanisms == ("zc", "vaidya", "sample_moments")
    # the tasks whose mechanisms fix their own guarantee take no target (the engine's tasks refuse one)
    own = [m for (t, _), f in FIGURES.items() if t in cli.OWN_GUARANTEE for m in f.mechanisms]
    assert own and not any(engine.get(m).notions for m in own)
    # --figures: exactly the tasks whose scores the grid figures summarise
    assert cli.FIGURE_MODELS == tuple(t for t in REGISTRY if set(REGISTRY[t].metrics) <= set(METRICS))
    assert set(cli.TASK_OPTIONS.values()) <= set(REGISTRY)
    with pytest.raises(ValueError, match="privacy must be one of"):
        cli.target("zcdp", 5.0, 1e-5)


@pytest.mark.parametrize("model", ["naive-bayes", "bayesian-network"])
@pytest.mark.parametrize("privacy", ["rdp", "dp"])
def test_every_mechanism_the_run_accepts_runs(tmp_path, capsys, synthetic_data, model, privacy):
    """Issue 41: what the command line offers it runs, at both ends of the budget range."""
    from lib.experiments import engine

    available = engine.supported(model, cli.target(privacy, 5.0, 1e-5))
    assert {"mle", "dirichlet", "gaussian", "laplace"} <= set(available)
    assert main(command(tmp_path, "--epsilon", "1e-6", "10000", "--n-repeats", "1", "--datasets", "germancredit",
                        "--mechanisms", *available, model=model, privacy=privacy)) == 0
    written = pd.read_csv(tmp_path / "out" / f"{model.replace('-', '_')}_{privacy}.csv")
    assert sorted(set(written.model)) == sorted(available)
    assert "Traceback" not in capsys.readouterr().err


def test_an_empty_out_is_refused(tmp_path, capsys, no_grid, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = usage_error(capsys, ["run", "--model", "naive-bayes", "--out", ""])
    assert "--out: expected a folder, got an empty path" in err and not list(tmp_path.iterdir())


def test_help_shows_defaults_only_where_there_is_one_and_imports_nothing_heavy():
    code = ("import sys\nfrom lib.experiments.cli import main\ntry:\n    main(['run', '--help'])\n"
            "except SystemExit:\n    pass\nprint(sorted(m for m in ('pandas', 'matplotlib', 'lib.experiments.grid', "
            "'lib.experiments.data', 'tqdm') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "(default: None)" not in done.stdout and "(default: 20230201)" in done.stdout
    assert "--out OUT             folder for the CSV, the JSON record and figures\n" in done.stdout


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip().endswith(lib_version)


# ----------------------------------------------------------------------------- issue 36: every task of the engine

#: One small real run of each task the synthetic data do not stand in for: the task, its --privacy,
#: one dataset, the extra arguments.
REAL = [("mixed-naive-bayes", "label-kept", "GermanCredit", []),
        ("logistic-regression", "rdp", "Digit", ["--lams", "2"]),
        ("histogram", "dp", "Adult", []),
        ("posterior", "dp", "Adult", [])]


def _available(model, privacy):
    from lib.experiments import engine
    from lib.mechanisms.protocol import get, names

    if model in cli.OWN_GUARANTEE:
        found = tuple(m for m in names() if engine.task_class(model).supports(get(m)))
    else:
        found = engine.supported(model, cli.target(privacy, 5.0, 1e-5))
    return tuple(m for m in found if m not in cli.TASK_EXCLUDED.get(model, ()))


@pytest.mark.needs_data
@pytest.mark.parametrize("model, privacy, dataset, extra", REAL, ids=[r[0] for r in REAL])
def test_every_mechanism_of_every_task_runs_at_both_ends_on_real_data(tmp_path, capsys, model, privacy, dataset,
                                                                      extra):
    """What the parser offers the run does: each mechanism at both ends of the task's budget range."""
    available = _available(model, privacy)
    assert set(FIGURES[(model, cli.notion(privacy))].mechanisms) <= set(available)
    low, high = cli.TASK_EPSILON_RANGE.get(model, cli.EPSILON_RANGE)
    repeats = "2" if model == "posterior" else "1"
    assert main(command(tmp_path, "--epsilon", f"{low:g}", f"{high:g}", "--n-repeats", repeats, "--datasets",
                        dataset, "--mechanisms", *available, *extra, model=model, privacy=privacy)) == 0
    stem = f"{model.replace('-', '_')}_{privacy.replace('-', '_')}"
    written = pd.read_csv(tmp_path / "out" / f"{stem}.csv")
    record = json.loads((tmp_path / "out" / f"{stem}.json").read_text())
    assert set(record) == RECORD_KEYS and record["rows"] == len(written) > 0
    assert record["budgets"] == [low, high] and record["mechanisms"] == list(available)
    column = "method" if model == "logistic-regression" else "model"
    budget = "epsilon_hat" if privacy == "dp" else "epsilon"
    assert sorted(set(written[budget])) == [low, high]
    if model == "logistic-regression":   # each sampler by its short name
        from lib.mechanisms.protocol import get
        assert sorted(set(written[column])) == sorted(get(m).short for m in available)
        assert set(written.lam) == {2.0}
    elif model == "posterior":           # each by its display name (the Dirichlet twice)
        from lib.experiments.hellinger import ENTRIES
        assert sorted(set(written[column])) == sorted(d for d, name, _ in ENTRIES if name in available)
    else:
        assert sorted(set(written[column])) == sorted(available)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.needs_data
@pytest.mark.parametrize("model, privacy, dataset, extra", REAL, ids=[r[0] for r in REAL])
def test_the_default_mechanisms_and_options_of_every_task(tmp_path, model, privacy, dataset, extra):
    """Without --privacy and --mechanisms a task runs its FIGURES entry, its options in the record; the
    figures of the tasks whose scores the grid figures draw."""
    figures = ["--figures"] if model in cli.FIGURE_MODELS else []
    assert main(["run", "--model", model, "--out", str(tmp_path / "out"), "--no-progress", "--n-epsilons", "2",
                 "--n-repeats", "2", "--datasets", dataset, *extra, *figures]) == 0
    stem = f"{model.replace('-', '_')}_{privacy.replace('-', '_')}"
    pictures = sorted(p.name for p in (tmp_path / "out").iterdir() if p.suffix in (".png", ".svg"))
    assert pictures == (sorted(f"{stem}_{m}.{ext}" for m in REGISTRY[model].metrics for ext in ("png", "svg"))
                        if figures else [])
    record = json.loads((tmp_path / "out" / f"{stem}.json").read_text())
    figure = FIGURES[(model, cli.notion(privacy))]
    assert record["privacy"] == privacy and record["mechanisms"] == list(figure.mechanisms)
    np.testing.assert_allclose(record["budgets"], np.logspace(*figure.decades, 2), rtol=1e-15)
    expected = {k: list(v) if isinstance(v, tuple) else v for k, v in figure.options.items()}
    if model == "logistic-regression":
        expected["lams"] = [2.0]
    assert record["options"] == expected
    assert record["delta"] == (figure.delta or 1e-5 if privacy == "dp" else None)


@pytest.mark.parametrize("argv, message", [
    (["--model", "histogram", "--attribute", "salary"], r"--attribute: invalid choice: 'salary'; the attributes"),
    (["--model", "histogram", "--attribute", "fnlwgt"], r"--attribute: invalid choice: 'fnlwgt'"),   # excluded
    (["--model", "histogram", "--attribute", "race", "--mechanisms", "smoothed_hellinger"], "two cells"),
    (["--model", "histogram", "--mechanisms", "gaussian_classical"], "not available for --model histogram"),
    (["--model", "histogram", "--epsilon", "1e-6"], r"runs budgets in \[0.001, 1000\]; got 1e-06"),
    (["--model", "histogram", "--privacy", "rdp"], "--model histogram runs under dp"),
    (["--model", "histogram", "--figures"], "--model histogram writes its CSV and JSON record only"),
    (["--model", "mixed-naive-bayes", "--epsilon", "101"], r"runs budgets in \[1e-06, 100\]; got 101"),
    (["--model", "mixed-naive-bayes", "--privacy", "rdp"], "--model mixed-naive-bayes runs under label-kept"),
    (["--model", "mixed-naive-bayes", "--mechanisms", "dirichlet"], "not available for --model mixed-naive-bayes"),
    (["--model", "mixed-naive-bayes", "--lam", "3"], "--lam: only for --privacy rdp"),
    (["--model", "logistic-regression", "--lam", "3"], "logistic-regression runs every order of --lams"),
    (["--model", "logistic-regression", "--lams", "0.5"], r"must be in \[1, inf\)"),
    (["--model", "logistic-regression", "--lams", "2", "2"], "--lams: each value once"),
    (["--model", "logistic-regression", "--datasets", "adult", "bank"], "runs on Adult, Digit"),
    (["--model", "posterior", "--prior", "0", "1"], r"must be in \(0, inf\)"),
    (["--model", "posterior", "--prior", "1"], "expected 2 arguments"),
    (["--model", "posterior", "--n-repeats", "1"], "at least 2"),
    (["--model", "posterior", "--delta", "1"], r"must be in \(0, 1\)"),
    (["--model", "naive-bayes", "--prior", "1", "1"], "--prior: only for --model posterior"),
    (["--model", "naive-bayes", "--privacy", "dp", "--lam", "3"], "--lam: only for --privacy rdp"),
    (["--model", "naive-bayes", "--delta", "1e-6"], "--delta: only for --privacy dp"),
    (["--model", "naive-bayes", "--attribute", "income"], "--attribute: only for --model histogram"),
])
def test_the_options_of_the_other_tasks_are_checked_before_any_computation(tmp_path, capsys, no_grid, argv, message):
    err = usage_error(capsys, ["run", *argv, "--out", str(tmp_path / "out")])
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists()



@pytest.mark.parametrize("model", cli.MODELS)
def test_each_task_gets_its_chapter_s_defaults(tmp_path, monkeypatch, model):
    """Without options, the engine is called with the task's FIGURES entry: notion, target, repeats, options."""
    from lib.experiments import engine

    seen = {}

    def recording(task, mechanisms, budgets, **kwargs):
        seen.update(kwargs, task=task, mechanisms=mechanisms, budgets=budgets)
        return pd.DataFrame({"model": list(mechanisms)})

    monkeypatch.setattr(cli, "run", recording)
    assert main(["run", "--model", model, "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    privacy = cli.TASK_PRIVACY[model][0]
    figure = FIGURES[(model, cli.notion(privacy))]
    assert seen["task"] == model and seen["mechanisms"] == figure.mechanisms
    np.testing.assert_array_equal(seen["budgets"], engine.budgets(model, cli.notion(privacy)))
    assert seen["n_repeats"] == figure.n_repeats and seen["options"] == (dict(figure.options) or None)
    assert seen["datasets"] == REGISTRY[model].datasets and seen["seed"] == 20230201
    expected_target = {"rdp": engine.RDP_TARGET, "dp": ApproximateDP(1.0, figure.delta or 1e-5),
                       "label-kept": None}[privacy]
    assert seen["target"] == (None if model in cli.OWN_GUARANTEE else expected_target)
    assert (tmp_path / "out" / f"{model.replace('-', '_')}_{privacy.replace('-', '_')}.json").exists()
