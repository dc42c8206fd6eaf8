"""The command line: ``python -m lib.experiments run --model MODEL --privacy PRIVACY --out DIR``.

Runs one grid of a task of the engine (:func:`lib.experiments.engine.run`) on the real data and writes
``DIR/<model>_<privacy>.csv`` and, beside it, ``<model>_<privacy>.json`` with the
parameters, the seed, the package versions and the elapsed time; ``--figures``
also writes the chapter's figures as PNG and SVG. Every argument and the output
folder are checked before any computation (a usage error exits with status 2
and a message, never a traceback); files are written to a temporary name and
renamed, so an interrupted run never leaves a truncated result, and get the
permissions of any new file (``0666`` less the user's umask).

Every task of the engine (:data:`lib.experiments.tasks.REGISTRY`) is a ``--model``; its defaults are
those of :data:`lib.experiments.defaults.FIGURES`. ``--privacy`` defaults to the task's first notion
there (``rdp`` where it has one); mixed naive Bayes runs under ``label-kept`` (its methods fix their
guarantee at each budget). The options a task's own release loop needs are checked like the others:
``--attribute`` (histogram), ``--lams`` (logistic regression), ``--prior`` (posterior).

``--epsilon 0.1 1 10`` runs explicit budgets instead of the log-spaced grid of
``--n-epsilons``. The JSON record holds the package version and, in a git
checkout, the commit. A misspelt dataset or mechanism gets a "did you mean".
``--help`` and ``--version`` import neither pandas nor matplotlib nor the
data loaders: the run's modules are imported inside :func:`main` after parsing.

Examples::

    python -m lib.experiments run --model naive-bayes --privacy rdp --out results/
    python -m lib.experiments run --model bayesian-network --privacy dp --datasets adult bank --out results/
    dirichlet-experiments run --model naive-bayes --epsilon 0.1 1 --mechanisms dirichlet mle --out results/
    python -m lib.experiments run --model histogram --attribute sex --out results/
    python -m lib.experiments run --model logistic-regression --lams 10 --datasets digit --out results/
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from lib._version import DISTRIBUTION, __version__

from lib.experiments.defaults import BN_DATASETS, DEFAULT_SEED, DP_DELTA, FIGURES, RDP_ORDER

if TYPE_CHECKING:
    import pandas as pd

    from lib.privacy.guarantees import Guarantee

# The dataset names the parser offers, kept here so that ``--help`` imports nothing heavy; a test checks
# them against lib.experiments.data.DATASETS. The mechanisms are not listed here: --mechanisms is checked
# in main against the mechanism registry (lib.mechanisms.protocol), for the task and target of the run.
DATASET_NAMES = ("CreditCard", "Thyroid", "Shopper", "Digit", "GermanCredit", "Bank", "Spam", "Adult")
BN_DATASET_NAMES = BN_DATASETS
#: The tasks the command line runs: every task of the engine (a test checks them against
#: lib.experiments.tasks.REGISTRY), each with its figure defaults.
MODELS = tuple(dict.fromkeys(task for task, _ in FIGURES))
#: The choices of --privacy, the only names of privacy notions in the package, and the notion (the
#: key of FIGURES) of each: :func:`target` turns rdp and dp into a typed target
#: (lib.privacy.guarantees), and everything after the parser uses that; label-kept is the guarantee
#: mixed naive Bayes's methods fix at each budget (no target is passed).
NOTIONS = {"rdp": "RenyiDP", "dp": "ApproximateDP", "label-kept": "LabelKeptDP"}
PRIVACY = tuple(NOTIONS)
#: The --privacy choices of each task: those of its FIGURES entries, the first its default.
TASK_PRIVACY = {model: tuple(p for kind in [n.__name__ for t, n in FIGURES if t == model]
                             for p, name in NOTIONS.items() if name == kind) for model in MODELS}


def notion(privacy: str) -> type:
    """The notion class (the key of FIGURES) of a --privacy choice."""
    return next(n for _, n in FIGURES if n.__name__ == NOTIONS[privacy])


#: The --privacy choice of each notion class of FIGURES.
_PRIVACY_NAME = {n: p for p, name in NOTIONS.items() for _, n in FIGURES if n.__name__ == name}
#: The tasks that take no target: their mechanisms fix the guarantee of each budget themselves.
OWN_GUARANTEE = ("mixed-naive-bayes", "logistic-regression")
#: The options of a task's own release loop that the command line exposes, and the task of each.
TASK_OPTIONS = {"attribute": "histogram", "lams": "logistic-regression", "prior": "posterior"}
#: The tasks whose scores the grid figures (lib.experiments.plotting.plot_grid) draw; a test checks
#: them against lib.experiments.analysis.METRICS.
FIGURE_MODELS = ("naive-bayes", "bayesian-network", "mixed-naive-bayes")
#: The budgets a run accepts: each in [1e-6, 1e4] (every calibration of the book's mechanisms is
#: defined there; 1e308 or 5e-324 are not budgets), at most MAX_EPSILONS of them, each once.
EPSILON_RANGE = (1e-6, 1e4)


def target(privacy: str, lam: float, delta: float) -> Guarantee | None:
    """The grid's target of a --privacy choice: ``RenyiDP(lam, 1)``, ``ApproximateDP(1, delta)`` or None.

    The level (1) is the template's: every budget replaces it
    (:func:`lib.experiments.engine.evaluate`). ``label-kept`` has no target
    (None): each method fixes its guarantee at each budget.

    Raises
    ------
    ValueError
        If ``privacy`` is not one of :data:`PRIVACY`, or ``lam`` / ``delta`` is out of range.
    """
    from lib.privacy.guarantees import ApproximateDP, RenyiDP

    build = {"rdp": lambda: RenyiDP(lam, 1.0), "dp": lambda: ApproximateDP(1.0, delta), "label-kept": lambda: None}
    if privacy not in build:
        raise ValueError(f"privacy must be one of {PRIVACY}; got {privacy!r}")
    return build[privacy]()


def run(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """:func:`lib.experiments.engine.run`, imported on first use."""
    from lib.experiments.engine import run as run_engine

    return run_engine(*args, **kwargs)


#: The budgets of the tasks whose release loop cannot mark a budget unmet (it stops), inside
#: EPSILON_RANGE: histogram's exact Dirichlet scale and Geumlek's samplers are not found below 1e-3;
#: mixed naive Bayes's tight rule takes a per-release budget of at most 100, which every total budget up
#: to 100 gives (lib.models.mixed_naive_bayes.budget divides it by at least 1).
TASK_EPSILON_RANGE = {"histogram": (1e-3, 1e3), "mixed-naive-bayes": (1e-6, 100.0)}
#: Mechanisms a task's release loop cannot run over its budget range: the classical Gaussian meets an
#: eps_hat below 1 only, and the histogram's loop has no unmet budget (NaN) as the grids have.
TASK_EXCLUDED = {"histogram": ("gaussian_classical",)}

#: Largest --n-epsilons and --n-repeats (a grid beyond them would run for days or exhaust memory).
MAX_EPSILONS, MAX_REPEATS = 1000, 10_000


def _int_in(low, high=None):
    """An argparse type: a whole number in ``[low, high]`` (no upper end if ``high`` is None)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        return value
    return parse


_positive_int = _int_in(1)


def _float_in(low, high, *, open_low=True, open_high=True):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        ok_low = value > low if open_low else value >= low
        ok_high = value < high if open_high else value <= high
        if not (math.isfinite(value) and ok_low and ok_high):
            raise argparse.ArgumentTypeError(
                f"must be in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}, got {text}")
        return value
    return parse


class _HelpFormatter(argparse.HelpFormatter):
    """Shows "(default: X)" only for options that have a default (never "(default: None)")."""

    def _get_help_string(self, action):
        text = action.help or ""
        if ("%(default)" not in text and action.default not in (None, argparse.SUPPRESS, False)
                and action.option_strings and action.nargs != 0):
            text += " (default: %(default)s)"
        return text


def _suggest(value, choices):
    """" (did you mean 'x'?)" for the closest of ``choices`` (case-insensitive), or ""."""
    lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(value.lower(), list(lower), n=1, cutoff=0.6)
    return f" (did you mean {lower[close[0]]!r}?)" if close else ""


def _choice(choices, what):
    """An argparse type: one of ``choices`` (case-insensitive), returned in its canonical spelling."""
    lower = {c.lower(): c for c in choices}

    def parse(text):
        if text.lower() in lower:
            return lower[text.lower()]
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r}{_suggest(text, choices)}; the {what} are "
                                         + ", ".join(choices))
    return parse


def parser() -> argparse.ArgumentParser:
    """The argument parser (every option with its help text, and its default where it has one)."""
    top = argparse.ArgumentParser(prog="python -m lib.experiments",
                                  description="Run the experiment grids of the book and write CSV files.")
    top.add_argument("--version", action="version",
                     version=f"%(prog)s ({DISTRIBUTION}) {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run one grid: model x mechanism x budget x repeat",
                       formatter_class=_HelpFormatter)
    p.add_argument("--model", required=True, choices=MODELS, help="the task: the model whose tables are released")
    p.add_argument("--privacy", default=None, choices=PRIVACY,
                   help="rdp: (lam, eps)-RDP for the whole model; dp: (eps_hat, delta)-DP (Appendix C); label-kept: "
                   "eps-DP between neighbours that keep the label (mixed naive Bayes); the notions of each model: "
                   + "; ".join(f"{m} {', '.join(TASK_PRIVACY[m])}" for m in MODELS) + " (default: the first)")
    p.add_argument("--out", required=True, type=_folder, help="folder for the CSV, the JSON record and figures")
    p.add_argument("--datasets", nargs="+", type=_choice(DATASET_NAMES, "datasets"), default=None,
                   metavar="DATASET", help="case-insensitive, among: " + ", ".join(DATASET_NAMES)
                   + "; default: all eight for naive-bayes and mixed-naive-bayes, " + ", ".join(BN_DATASET_NAMES)
                   + " for networks, Adult and Digit (3 versus 8) for logistic-regression, Adult for histogram and "
                   "posterior")
    p.add_argument("--mechanisms", nargs="+", default=None, metavar="MECHANISM",
                   help="registry names (lib.mechanisms.protocol) of mechanisms whose releases the task scores "
                   "under --privacy; a name that cannot run lists those that can; "
                   "default: the chapter's figure")
    budgets = p.add_mutually_exclusive_group()
    budgets.add_argument("--n-epsilons", type=_int_in(1, MAX_EPSILONS), default=10,
                         help=f"points of the log-spaced budget grid, 1 to {MAX_EPSILONS} (ends: "
                         + "; ".join(f"{t} {_PRIVACY_NAME[n]} 1e{a}..1e{b}" for (t, n), (_, (a, b), *_) in FIGURES.items())
                         + ")")
    budgets.add_argument("--epsilon", nargs="+", type=_float_in(*EPSILON_RANGE, open_low=False, open_high=False),
                         default=None, metavar="EPS",
                         help=f"one to {MAX_EPSILONS} distinct explicit budgets (eps of rdp, eps_hat of dp), each "
                         f"in [{EPSILON_RANGE[0]:g}, {EPSILON_RANGE[1]:g}] ("
                         + "; ".join(f"{t} [{a:g}, {b:g}]" for t, (a, b) in TASK_EPSILON_RANGE.items())
                         + "), instead of the grid of --n-epsilons")
    p.add_argument("--n-repeats", type=_int_in(1, MAX_REPEATS), default=None,
                   help=f"independent releases per budget, 1 to {MAX_REPEATS} (default: 10; "
                   + "; ".join(f"{t} {f.n_repeats}" for (t, _), f in FIGURES.items() if f.n_repeats != 10) + ")")
    p.add_argument("--lam", type=_float_in(1, math.inf), default=None,
                   help=f"Renyi order of the rdp grid, in (1, inf) (default: {RDP_ORDER:g}; "
                   "logistic-regression takes --lams)")
    p.add_argument("--delta", type=_float_in(0, 1), default=None,
                   help=f"delta of the dp grid, in (0, 1) (default: {DP_DELTA:g}; posterior "
                   f"{FIGURES[('posterior', notion('dp'))].delta:g})")
    p.add_argument("--attribute", default=None,
                   help="histogram: the attribute of the dataset (or its label) whose histogram is released, "
                   f"a column of the dataset (default: {FIGURES[('histogram', notion('dp'))].options['attribute']})")
    p.add_argument("--lams", nargs="+", type=_float_in(1, math.inf, open_low=False), default=None,
                   metavar="LAM", help="logistic-regression: the Renyi orders of the grid, each in [1, inf), "
                   "every pair with a budget is run (default: "
                   + " ".join(f"{x:g}" for x in FIGURES[("logistic-regression", notion("rdp"))].options["lams"]) + ")")
    p.add_argument("--prior", nargs=2, type=_float_in(0, math.inf), default=None,
                   metavar=("ALPHA", "BETA"), help="posterior: the Beta prior, each in (0, inf) (default: "
                   + " ".join(f"{x:g}" for x in FIGURES[("posterior", notion("dp"))].options["prior"]) + ")")
    p.add_argument("--seed", type=_int_in(0), default=DEFAULT_SEED,
                   help="root of every cell's seed, a non-negative whole number")
    p.add_argument("--figures", action="store_true", help="also write the figures as PNG and SVG")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return top


def _folder(text: str) -> Path:
    """An argparse type: a non-empty path (an empty --out would write into the working directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder, got an empty path")
    return Path(text)


def _distinct(values, option: str, parser_: argparse.ArgumentParser, limit=None) -> None:
    """Usage error if ``values`` repeats an entry or holds more than ``limit``."""
    if values is None:
        return
    if limit is not None and len(values) > limit:
        parser_.error(f"argument {option}: at most {limit} values; got {len(values)}")
    seen = [v for i, v in enumerate(values) if v in values[:i]]
    if seen:
        parser_.error(f"argument {option}: each value once; {seen[0]!r} is repeated")


def _check_attribute(attribute: str, datasets, mechanisms, parser_: argparse.ArgumentParser) -> None:
    """Usage error unless ``attribute`` is a column of every dataset's prepared data (or its label), and
    a mechanism that releases two cells only (smoothed_hellinger) gets a two-valued attribute."""
    from lib.experiments import datasets as registry

    for name in datasets:
        entry = registry.get(name)
        columns = [c for c in (*entry.domains, *entry.bounds) if c not in entry.excluded] + [entry.label]
        if attribute not in columns:
            parser_.error(f"argument --attribute: invalid choice: {attribute!r}{_suggest(attribute, columns)}; the "
                          f"attributes of {name} are {', '.join(columns)}")
        size = (entry.classes.size if attribute == entry.label
                else entry.domains[attribute].size if attribute in entry.domains else None)
        if "smoothed_hellinger" in mechanisms and size != 2:
            parser_.error(f"--mechanisms smoothed_hellinger releases a histogram of two cells; --attribute "
                          f"{attribute} of {name} has " + (f"{size}" if size else "more than two (bins)"))


def _check_out(folder: Path, parser_: argparse.ArgumentParser) -> None:
    """Usage error unless ``folder`` is, or can be created as, a writable folder."""
    if folder.exists() and not folder.is_dir():
        parser_.error(f"--out {folder} exists and is not a folder")
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():   # e.g. --out results.csv/sub: a file on the way
        parser_.error(f"--out {folder}: {probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        parser_.error(f"--out {folder}: {probe} is not writable")


def _new_file_mode() -> int:
    """``0o666`` less the process's umask: the mode ``open`` gives a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write_atomic(path: Path, write) -> None:
    """Write through ``write(temporary_path)`` next to ``path``, then rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, _new_file_mode())   # mkstemp creates 0600; a result file is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _versions() -> dict:
    out = {"python": platform.python_version(), DISTRIBUTION: __version__}
    for package in ("numpy", "scipy", "pandas", "matplotlib"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - the requirements install them
            out[package] = None
    return out


def _commit():
    """The git commit of the source tree ``lib`` runs from (``+dirty`` if tracked files differ), or None.

    None for an installed wheel (no repository around it) and where git is missing; a repository
    that merely encloses the installation is not taken for the source tree.
    """
    root = Path(__file__).resolve().parents[2]
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()
    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:
            return None
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m lib.experiments``; returns the exit status."""
    top = parser()
    args = top.parse_args(argv)
    _check_out(args.out, top)
    _distinct(args.epsilon, "--epsilon", top, MAX_EPSILONS)
    _distinct(args.datasets, "--datasets", top)
    _distinct(args.mechanisms, "--mechanisms", top)
    privacy_name = args.privacy or TASK_PRIVACY[args.model][0]
    if privacy_name not in TASK_PRIVACY[args.model]:
        top.error(f"argument --privacy: --model {args.model} runs under {', '.join(TASK_PRIVACY[args.model])}; "
                  f"got {privacy_name!r}")
    figure = FIGURES[(args.model, notion(privacy_name))]
    for option, model in TASK_OPTIONS.items():
        if getattr(args, option) is not None and model != args.model:
            top.error(f"argument --{option}: only for --model {model}")
    if args.lam is not None and privacy_name != "rdp":
        top.error(f"argument --lam: only for --privacy rdp (--model {args.model} --privacy {privacy_name})")
    if args.lam is not None and args.model == "logistic-regression":
        top.error("argument --lam: logistic-regression runs every order of --lams")
    if args.delta is not None and privacy_name != "dp":
        top.error(f"argument --delta: only for --privacy dp (--model {args.model} --privacy {privacy_name})")
    if args.figures and args.model not in FIGURE_MODELS:
        top.error(f"argument --figures: the grid figures draw the scores of {', '.join(FIGURE_MODELS)}; "
                  f"--model {args.model} writes its CSV and JSON record only")
    _distinct(args.lams, "--lams", top)
    lam = (args.lam if args.lam is not None else RDP_ORDER) if privacy_name == "rdp" else None
    delta = (args.delta if args.delta is not None else figure.delta or DP_DELTA) if privacy_name == "dp" else None
    if args.model == "logistic-regression":
        lam = None
    import numpy as np   # after parsing: --help and usage errors need none of this

    from lib.mechanisms.protocol import get, names
    from lib.experiments.data import DataFileError
    from lib.experiments.engine import budgets as budget_axis, supported, task_class
    privacy = None if args.model in OWN_GUARANTEE else target(privacy_name, lam, delta)
    task = task_class(args.model)
    # what the registry holds that this task runs under this target: the only names offered or accepted
    available = tuple(m for m in (tuple(m for m in names() if task.supports(get(m))) if args.model in OWN_GUARANTEE
                                  else supported(args.model, privacy)) if m not in TASK_EXCLUDED.get(args.model, ()))
    mechanisms = figure.mechanisms
    if args.mechanisms:
        registered = names()
        for m in args.mechanisms:
            if m not in registered:
                top.error(f"argument --mechanisms: invalid choice: {m!r}{_suggest(m, available)}; the "
                          f"mechanisms of --model {args.model} --privacy {privacy_name} are {', '.join(available)}")
        mechanisms = tuple(args.mechanisms)
    bad = [m for m in mechanisms if m not in available]
    if bad:
        top.error(f"--mechanisms {' '.join(bad)}: not available for --model {args.model} --privacy "
                  f"{privacy_name} (available: {' '.join(available)})")
    datasets = tuple(args.datasets) if args.datasets else task.datasets
    unknown = [d for d in datasets if d not in task.datasets]
    if unknown:
        top.error(f"--datasets {' '.join(unknown)}: --model {args.model} runs on {', '.join(task.datasets)}")
    options = dict(figure.options)
    options.update({k: (tuple(v) if isinstance(v, list) else v) for k in TASK_OPTIONS
                    if TASK_OPTIONS[k] == args.model and (v := getattr(args, k)) is not None})
    if args.model == "histogram":
        _check_attribute(options["attribute"], datasets, mechanisms, top)
    n_repeats = args.n_repeats if args.n_repeats is not None else figure.n_repeats
    if args.model == "posterior" and n_repeats < 2:
        top.error("argument --n-repeats: --model posterior scores Monte Carlo means with their standard "
                  "errors: at least 2")
    low, high = TASK_EPSILON_RANGE.get(args.model, EPSILON_RANGE)
    outside = [e for e in args.epsilon or () if not low <= e <= high]
    if outside:
        top.error(f"argument --epsilon: --model {args.model} runs budgets in [{low:g}, {high:g}]; got {outside[0]:g}")
    budgets = (np.array(args.epsilon, dtype=float) if args.epsilon is not None
               else budget_axis(args.model, notion(privacy_name), args.n_epsilons))
    start = time.perf_counter()
    try:
        results = run(args.model, mechanisms, budgets, target=privacy, datasets=datasets,
                      n_repeats=n_repeats, seed=args.seed, options=options or None,
                      progress=False if args.no_progress else None)
    except DataFileError as exc:  # the data cannot be found: say where we looked, no traceback
        print(f"python -m lib.experiments: error: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start
    try:  # --out was checked before the run; a failure now (removed, full, permissions) is reported cleanly
        args.out.mkdir(parents=True, exist_ok=True)
        stem = f"{args.model.replace('-', '_')}_{privacy_name.replace('-', '_')}"
        csv = args.out / f"{stem}.csv"
        _write_atomic(csv, lambda tmp: results.to_csv(tmp, index=False))
        record = {"model": args.model, "privacy": privacy_name, "datasets": list(datasets),
                  "mechanisms": list(mechanisms), "budgets": budgets.tolist(), "n_repeats": n_repeats,
                  "lam": lam, "delta": delta, "options": {k: list(v) if isinstance(v, tuple) else v
                                                          for k, v in options.items()},
                  "seed": args.seed, "elapsed_seconds": round(elapsed, 3),
                  "versions": _versions(), "commit": _commit(), "rows": len(results)}
        _write_atomic(args.out / f"{stem}.json",
                      lambda tmp: tmp.write_text(json.dumps(record, indent=2) + "\n"))
        if args.figures:  # matplotlib only when figures are asked for
            import matplotlib.pyplot as plt

            from lib.experiments.analysis import summarise
            from lib.experiments.plotting import plot_grid

            summary = summarise(results)
            for metric in figure.metrics:
                fig, _ = plot_grid(summary, metric, datasets, mechanisms)
                for ext in ("png", "svg"):
                    _write_atomic(args.out / f"{stem}_{metric}.{ext}",
                                  lambda tmp, ext=ext: fig.savefig(tmp, format=ext, bbox_inches="tight"))
                plt.close(fig)
    except OSError as exc:
        print(f"python -m lib.experiments run: error: --out {args.out}: cannot write the results ({exc})",
              file=sys.stderr)
        return 2
    print(f"wrote {len(results)} rows to {csv} ({elapsed:.1f} s)")
    return 0


def entry_point() -> None:
    """The console script ``dirichlet-experiments`` (``[project.scripts]`` of pyproject.toml)."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
