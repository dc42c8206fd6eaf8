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
from lib.experiments.tasks import BayesianNetwork, NaiveBayes

RECORD_KEYS = {"model", "privacy", "datasets", "mechanisms", "budgets", "n_repeats", "lam", "delta", "seed",
               "elapsed_seconds", "versions", "commit", "rows"}


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
GRIDS = [(model, CHOICE[notion]) for model, notion in FIGURES]


@pytest.mark.parametrize("model, privacy", GRIDS)
def test_case_insensitive_datasets_and_the_csv(tmp_path, capsys, synthetic_data, model, privacy):
    """The CSV is the grid of ``run`` with the chapter's mechanisms and budget axis."""
    assert main(command(tmp_path, "--datasets", "GERMANCREDIT", "adult", "--n-epsilons", "3", "--n-repeats",
                        "2", "--seed", "5", model=model, privacy=privacy)) == 0
    written = pd.read_csv(tmp_path / "out" / f"{model.replace('-', '_')}_{privacy}.csv")
    assert list(dict.fromkeys(written.dataset)) == ["GermanCredit", "Adult"]
    mechanisms, ends, _ = FIGURES[(model, {v: k for k, v in CHOICE.items()}[privacy])]
    expected = run(model, mechanisms, np.logspace(*ends, 3), privacy=cli.target(privacy, 5.0, 1e-5),
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
    mechanisms, ends, _ = FIGURES[(model, {v: k for k, v in CHOICE.items()}[privacy])]
    assert record["model"] == model and record["privacy"] == privacy
    assert record["datasets"] == ["GermanCredit"] and record["mechanisms"] == list(mechanisms)
    np.testing.assert_allclose(record["budgets"], np.logspace(*ends, 2), rtol=1e-15)
    assert (record["n_repeats"], record["lam"], record["delta"], record["seed"]) == (2, 5.0, 1e-5, 20230201)
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
    from lib.experiments.tasks import REGISTRY

    assert cli.DATASET_NAMES == DATASETS and cli.BN_DATASET_NAMES == BN_DATASETS
    # every task of the engine that has figure defaults (the grids of Section 5 and Appendix C)
    assert cli.MODELS == tuple(t for t in REGISTRY if (t, RenyiDP) in FIGURES) and not hasattr(cli, "MECHANISM_NAMES")
    # the --privacy choices are the only notion names; each becomes a typed target
    assert cli.PRIVACY == ("rdp", "dp") and cli.target("rdp", 5.0, 1e-5) == engine.RDP_TARGET
    assert cli.target("dp", 5.0, 1e-5) == engine.DP_TARGET
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
