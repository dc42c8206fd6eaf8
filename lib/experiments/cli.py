"""The command line: ``python -m lib.experiments run --model MODEL --privacy PRIVACY --out DIR``.

Runs one grid (:func:`lib.experiments.grid.run`) on the real data and writes
``DIR/<model>_<privacy>.csv`` and, beside it, ``<model>_<privacy>.json`` with the
parameters, the seed, the package versions and the elapsed time; ``--figures``
also writes the chapter's figures as PNG and SVG. Every argument and the output
folder are checked before any computation (a usage error exits with status 2
and a message, never a traceback); files are written to a temporary name and
renamed, so an interrupted run never leaves a truncated result, and get the
permissions of any new file (``0666`` less the user's umask).

``--epsilon 0.1 1 10`` runs explicit budgets instead of the log-spaced grid of
``--n-epsilons``. The JSON record holds the package version and, in a git
checkout, the commit. A misspelt dataset or mechanism gets a "did you mean".
``--help`` and ``--version`` import neither numpy nor pandas nor the
mechanisms: everything heavy is imported inside :func:`main` after parsing.

Examples::

    python -m lib.experiments run --model naive-bayes --privacy rdp --out results/
    python -m lib.experiments run --model bayesian-network --privacy dp --datasets adult bank --out results/
    dirichlet-experiments run --model naive-bayes --epsilon 0.1 1 --mechanisms dirichlet mle --out results/
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

from lib._version import DISTRIBUTION, __version__

# The names the parser offers, kept here so that ``--help`` imports nothing heavy; a test checks
# each against its source (lib.experiments.data.DATASETS, lib.mechanisms.protocol.names(), lib.experiments.grid).
# --mechanisms is checked against the registry itself, in main, so that a registered mechanism runs.
DATASET_NAMES = ("CreditCard", "Thyroid", "Shopper", "Digit", "GermanCredit", "Bank", "Spam", "Adult")
BN_DATASET_NAMES = ("Adult", "Bank", "GermanCredit")
MECHANISM_NAMES = ("gaussian", "laplace", "gaussian_classical", "mle", "random", "dirichlet", "dirichlet_exact", "gohari",
                   "geumlek_diffused", "geumlek_concentrated", "geumlek_true", "smoothed_hellinger", "hellinger_em",
                   "count_laplace", "count_gaussian")
MODELS = ("naive-bayes", "bayesian-network")
#: The choices of --privacy, the only names of privacy notions in the package: :func:`target` turns
#: each into a typed target (lib.privacy.guarantees), and everything after the parser uses that.
PRIVACY = ("rdp", "dp")
DEFAULT_SEED, DP_DELTA = 20230201, 1e-5


def target(privacy: str, lam: float, delta: float):
    """The grid's target of a --privacy choice: ``RenyiDP(lam, 1)`` or ``ApproximateDP(1, delta)``.

    The level (1) is the template's: every budget replaces it
    (:func:`lib.experiments.grid.evaluate`).

    Raises
    ------
    ValueError
        If ``privacy`` is not one of :data:`PRIVACY`, or ``lam`` / ``delta`` is out of range.
    """
    from lib.privacy.guarantees import ApproximateDP, RenyiDP

    build = {"rdp": lambda: RenyiDP(lam, 1.0), "dp": lambda: ApproximateDP(1.0, delta)}
    if privacy not in build:
        raise ValueError(f"privacy must be one of {PRIVACY}; got {privacy!r}")
    return build[privacy]()


def run(*args, **kwargs):
    """:func:`lib.experiments.grid.run`, imported on first use."""
    from lib.experiments.grid import run as run_grid

    return run_grid(*args, **kwargs)


#: Each (model, privacy) grid's default mechanisms, budget axis (log10 ends) and figures.
DEFAULTS = {
    ("naive-bayes", "rdp"): (("random", "mle", "dirichlet", "gaussian", "laplace"), (-3, 1),
                             ("cross_entropy", "accuracy")),
    ("naive-bayes", "dp"): (("random", "mle", "dirichlet", "gohari", "gaussian", "laplace"), (-2, 1),
                            ("cross_entropy", "accuracy")),
    ("bayesian-network", "rdp"): (("mle", "dirichlet", "gaussian", "laplace"), (-3, 1), ("log_likelihood",)),
    ("bayesian-network", "dp"): (("mle", "dirichlet", "gohari", "gaussian", "laplace"), (-1, 2),
                                 ("log_likelihood",)),
}


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
    p.add_argument("--model", required=True, choices=MODELS, help="the model whose tables are released")
    p.add_argument("--privacy", default="rdp", choices=PRIVACY,
                   help="rdp: (lam, eps)-RDP for the whole model; dp: (eps_hat, delta)-DP (Appendix C)")
    p.add_argument("--out", required=True, type=Path, help="folder for the CSV, the JSON record and figures")
    p.add_argument("--datasets", nargs="+", type=_choice(DATASET_NAMES, "datasets"), default=None,
                   metavar="DATASET", help="case-insensitive, among: " + ", ".join(DATASET_NAMES)
                   + "; default: all eight for naive-bayes, " + ", ".join(BN_DATASET_NAMES) + " for networks")
    p.add_argument("--mechanisms", nargs="+", default=None, metavar="MECHANISM",
                   help="among: " + ", ".join(MECHANISM_NAMES) + " (or any registered with "
                   "lib.mechanisms.protocol.register); default: the chapter's figure")
    budgets = p.add_mutually_exclusive_group()
    budgets.add_argument("--n-epsilons", type=_int_in(1, MAX_EPSILONS), default=10,
                         help=f"points of the log-spaced budget grid, 1 to {MAX_EPSILONS} (ends: 1e-3..10 for "
                         "rdp; 1e-2..10 (naive Bayes) or 1e-1..100 (networks) for dp)")
    budgets.add_argument("--epsilon", nargs="+", type=_float_in(0, math.inf), default=None, metavar="EPS",
                         help="one or more explicit budgets (eps of rdp, eps_hat of dp), each > 0, instead "
                         "of the grid of --n-epsilons")
    p.add_argument("--n-repeats", type=_int_in(1, MAX_REPEATS), default=10,
                   help=f"independent releases per budget, 1 to {MAX_REPEATS}")
    p.add_argument("--lam", type=_float_in(1, math.inf), default=5.0,
                   help="Renyi order of the rdp grid")
    p.add_argument("--delta", type=_float_in(0, 1), default=DP_DELTA, help="delta of the dp grid")
    p.add_argument("--seed", type=_int_in(0), default=DEFAULT_SEED,
                   help="root of every cell's seed, a non-negative whole number")
    p.add_argument("--figures", action="store_true", help="also write the figures as PNG and SVG")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return top


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


def main(argv=None) -> int:
    """Entry point of ``python -m lib.experiments``; returns the exit status."""
    top = parser()
    args = top.parse_args(argv)
    _check_out(args.out, top)
    import numpy as np   # after parsing: --help and usage errors need none of this

    from lib.mechanisms.protocol import get, names
    from lib.experiments.data import DataFileError
    from lib.experiments.grid import TASKS, runs_under
    privacy = target(args.privacy, args.lam, args.delta)
    mechanisms, ends, metrics = DEFAULTS[(args.model, args.privacy)]
    if args.mechanisms:   # checked against the registry (a registered mechanism runs too)
        registered = names(output="distribution")   # the models of the command line take counts
        for m in args.mechanisms:
            if m not in registered:
                top.error(f"argument --mechanisms: invalid choice: {m!r}{_suggest(m, registered)}; the "
                          f"mechanisms are {', '.join(registered)}")
        mechanisms = tuple(args.mechanisms)
    task = TASKS[args.model]
    datasets = tuple(args.datasets) if args.datasets else task.datasets
    available = [m for m in names() if runs_under(m, privacy) and task.supports(get(m))]
    bad = [m for m in mechanisms if m not in available]
    if bad:
        top.error(f"--mechanisms {' '.join(bad)}: not available for --model {args.model} --privacy "
                  f"{args.privacy} (available: {' '.join(available)})")
    unknown = [d for d in datasets if d not in task.datasets]
    if unknown:
        top.error(f"--datasets {' '.join(unknown)}: --model {args.model} runs on {', '.join(task.datasets)}")
    budgets = (np.array(args.epsilon, dtype=float) if args.epsilon is not None
               else np.logspace(*ends, args.n_epsilons))
    start = time.perf_counter()
    try:
        results = run(args.model, mechanisms, budgets, privacy=privacy, datasets=datasets,
                      n_repeats=args.n_repeats, seed=args.seed,
                      progress=False if args.no_progress else None)
    except DataFileError as exc:  # the data cannot be found: say where we looked, no traceback
        print(f"python -m lib.experiments: error: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start
    try:  # --out was checked before the run; a failure now (removed, full, permissions) is reported cleanly
        args.out.mkdir(parents=True, exist_ok=True)
        stem = f"{args.model.replace('-', '_')}_{args.privacy}"
        csv = args.out / f"{stem}.csv"
        _write_atomic(csv, lambda tmp: results.to_csv(tmp, index=False))
        record = {"model": args.model, "privacy": args.privacy, "datasets": list(datasets),
                  "mechanisms": list(mechanisms), "budgets": budgets.tolist(), "n_repeats": args.n_repeats,
                  "lam": args.lam, "delta": args.delta, "seed": args.seed, "elapsed_seconds": round(elapsed, 3),
                  "versions": _versions(), "commit": _commit(), "rows": len(results)}
        _write_atomic(args.out / f"{stem}.json",
                      lambda tmp: tmp.write_text(json.dumps(record, indent=2) + "\n"))
        if args.figures:  # matplotlib only when figures are asked for
            import matplotlib.pyplot as plt

            from lib.experiments.analysis import summarise
            from lib.experiments.plotting import plot_grid

            summary = summarise(results)
            for metric in metrics:
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
