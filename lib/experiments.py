"""Experiment runners for Section 5 of the paper, and their command line.

``python -m lib.experiments naive-bayes --out DIR`` runs the naive Bayes grid of
Section 5.1 (Figures 4 and 5) on the eight datasets of Table 1 and writes
``DIR/naive_bayes.csv``. Every (dataset, model, epsilon) cell draws its noise
from its own ``numpy.random.SeedSequence``, keyed by the seed and by the names and
value (not the positions), so a result does not depend on which other cells are
run or in which order.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from . import _validate
from .baselines import CLIP_FLOOR
from .naive_bayes import MECHANISMS, accuracy, count, cross_entropy, log_proba, release_parameters

#: The models of Figures 4 and 5, in legend order.
NB_MODELS = ("random", "mle", "dirichlet", "gaussian", "laplace")
#: Legend labels of the paper.
MODEL_LABELS = {"random": "Random", "mle": "Non-private", "dirichlet": "Dirichlet",
                "gaussian": "Gaussian", "laplace": "Laplace"}
DEFAULT_EPSILONS = np.logspace(-3, 1, 10)
DEFAULT_SEED = 20230201


def _key(text: str) -> int:
    return zlib.crc32(text.encode())


def cell_seed(seed: int, dataset: str, model: str, epsilon: float) -> np.random.SeedSequence:
    """The seed sequence of one (dataset, model, epsilon) cell of a grid."""
    return np.random.SeedSequence(seed, spawn_key=(_key(dataset), _key(model), _key(repr(float(epsilon)))))


def _load_split(name: str):
    from .preprocessing import prepare  # the data layer is only needed for real data

    return prepare(name)


def _progress(iterable, enabled, total):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc="naive Bayes grid", file=sys.stderr)


def evaluate_naive_bayes(split, model, epsilons, n_repeats, *, lam=5.0, smoothing=0.1,
                         seed=DEFAULT_SEED, dataset="data", counts=None, clip_floor=CLIP_FLOOR):
    """Test cross-entropy and accuracy of one model over a grid of epsilons.

    All ``len(epsilons) * n_repeats`` releases are scored in one batched call of
    :func:`lib.naive_bayes.log_proba`.

    Parameters
    ----------
    split : Split
        Encoded train and test data (:class:`lib.preprocessing.Split`).
    model : str
        One of :data:`lib.naive_bayes.MECHANISMS`.
    epsilons : array_like
        Total RDP levels; ignored by ``"mle"`` and ``"random"``.
    n_repeats : int
        Independent releases per epsilon.
    counts : tuple, optional
        ``count(split.X_train, ...)`` if already computed.
    clip_floor : float, default :data:`lib.baselines.CLIP_FLOOR`
        Clipping level of the Gaussian and Laplace post-processing.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, epsilon, repeat, cross_entropy, accuracy``.
    """
    if model not in MECHANISMS:
        raise ValueError(f"model must be one of {MECHANISMS}; got {model!r}")
    epsilons = np.atleast_1d(_validate.positive(epsilons, "epsilons"))
    if epsilons.ndim != 1:
        raise ValueError("epsilons must be a scalar or a 1-D array")
    if (not isinstance(n_repeats, (int, np.integer)) or isinstance(n_repeats, bool) or n_repeats < 1):
        raise ValueError(f"n_repeats must be an integer in [1, inf); got {n_repeats!r}")
    if counts is None:
        counts = count(split.X_train, split.y_train, split.n_values, split.n_classes)
    class_counts, feature_counts = counts
    y = np.asarray(split.y_test)
    if model == "random":
        # CE of the uniform posterior is log d exactly; accuracy of uniform guesses is simulated.
        ce = np.full((len(epsilons), n_repeats), np.log(split.n_classes))
        acc = np.stack([
            (np.random.default_rng(cell_seed(seed, dataset, model, eps))
             .integers(split.n_classes, size=(n_repeats, len(y))) == y).mean(axis=-1)
            for eps in epsilons
        ])
    else:
        if model == "mle":
            prior, tables = release_parameters(class_counts, feature_counts, "mle", smoothing=smoothing)
            lp = log_proba(split.X_test, prior, tables, split.n_values)
            ce = np.broadcast_to(cross_entropy(lp, y), (len(epsilons), n_repeats))
            acc = np.broadcast_to(accuracy(lp, y), (len(epsilons), n_repeats))
        else:
            priors, tables = [], []
            for eps in epsilons:
                rng = np.random.default_rng(cell_seed(seed, dataset, model, eps))
                p, t = release_parameters(class_counts, feature_counts, model, epsilon=eps, lam=lam,
                                          n_draws=n_repeats, rng=rng, floor=clip_floor)
                priors.append(p)
                tables.append(t)
            prior = np.concatenate(priors)
            table = [np.concatenate([t[k] for t in tables]) for k in range(len(feature_counts))]
            lp = log_proba(split.X_test, prior, table, split.n_values)
            ce = cross_entropy(lp, y).reshape(len(epsilons), n_repeats)
            acc = accuracy(lp, y).reshape(len(epsilons), n_repeats)
    grid_eps, grid_rep = np.meshgrid(epsilons, np.arange(n_repeats), indexing="ij")
    return pd.DataFrame({
        "dataset": dataset, "model": model, "epsilon": grid_eps.ravel(),
        "repeat": grid_rep.ravel(), "cross_entropy": np.asarray(ce, float).ravel(),
        "accuracy": np.asarray(acc, float).ravel(),
    })


def run_naive_bayes(datasets=None, epsilons=DEFAULT_EPSILONS, n_repeats=10, lam=5.0, seed=DEFAULT_SEED,
                    progress=None, models=NB_MODELS, smoothing=0.1, splits=None, clip_floor=CLIP_FLOOR):
    """The naive Bayes grid of Section 5.1 (Figures 4 and 5).

    For every dataset, the model counts the training split once and every model
    releases ``n_repeats`` parameter sets per epsilon, scored on the test split.

    Parameters
    ----------
    datasets : sequence of str, optional
        Default :data:`lib.data.DATASETS` (or the keys of ``splits``).
    epsilons : array_like, default ``np.logspace(-3, 1, 10)``
        Total RDP levels :math:`\\varepsilon` of a whole model.
    n_repeats : int, default 10
        Independent releases of each private model per epsilon.
    lam : float, default 5.0
        Renyi order :math:`\\lambda`.
    seed : int
        Root of every cell's :func:`cell_seed`.
    progress : bool, optional
        Show a tqdm progress bar; default only when stderr is a terminal.
    models : sequence of str, default :data:`NB_MODELS`
    smoothing : float, default 0.1
        Pseudo-count of the non-private model.
    splits : mapping of str to Split, optional
        Use these encoded datasets instead of :func:`lib.preprocessing.prepare`.
    clip_floor : float, default :data:`lib.baselines.CLIP_FLOOR`
        Clipping level of the Gaussian and Laplace post-processing.

    Returns
    -------
    pandas.DataFrame
        Tidy results: ``dataset, model, epsilon, repeat, cross_entropy, accuracy``.
    """
    if datasets is None:
        if splits is not None:
            datasets = tuple(splits)
        else:
            from .data import DATASETS

            datasets = DATASETS
    bad = [m for m in models if m not in MECHANISMS]
    if bad:
        raise ValueError(f"models must be among {MECHANISMS}; got {bad}")
    frames = []
    jobs = [(name, model) for name in datasets for model in models]
    current = {}
    for name, model in _progress(jobs, progress, len(jobs)):
        if current.get("name") != name:
            split = splits[name] if splits is not None else _load_split(name)
            current = {"name": name, "split": split,
                       "counts": count(split.X_train, split.y_train, split.n_values, split.n_classes)}
        frames.append(evaluate_naive_bayes(current["split"], model, epsilons, n_repeats, lam=lam,
                                           smoothing=smoothing, seed=seed, dataset=name,
                                           counts=current["counts"], clip_floor=clip_floor))
    return pd.concat(frames, ignore_index=True)


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof 0) over repeats of every grid cell."""
    grouped = results.groupby(["dataset", "model", "epsilon"], sort=False)
    out = grouped.agg(
        cross_entropy_mean=("cross_entropy", "mean"),
        cross_entropy_std=("cross_entropy", lambda v: float(np.std(v))),
        accuracy_mean=("accuracy", "mean"),
        accuracy_std=("accuracy", lambda v: float(np.std(v))),
    )
    return out.reset_index()


def plot_naive_bayes(summary: pd.DataFrame, metric: str, datasets, *, random_on=None, ncols=4):
    """One panel per dataset: ``metric`` against log10 epsilon, mean with std error bars.

    Parameters
    ----------
    summary : pandas.DataFrame
        From :func:`summarise`.
    metric : {"cross_entropy", "accuracy"}
    datasets : sequence of str
        Panel order.
    random_on : collection of str, optional
        Datasets whose panel shows the random-guessing model (default all).
    """
    import matplotlib.pyplot as plt

    nrows = -(-len(datasets) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.4 * nrows), squeeze=False)
    styles = {"random": dict(color="0.5", ls=":"), "mle": dict(color="k", ls="--"),
              "dirichlet": dict(color="C0", marker="o"), "gaussian": dict(color="C1", marker="s"),
              "laplace": dict(color="C2", marker="^")}
    for ax, name in zip(axes.flat, datasets):
        for model in NB_MODELS:
            if model == "random" and random_on is not None and name not in random_on:
                continue
            s = summary[(summary.dataset == name) & (summary.model == model)]
            ax.errorbar(np.log10(s.epsilon), s[f"{metric}_mean"], yerr=s[f"{metric}_std"],
                        label=MODEL_LABELS[model], ms=3, capsize=2, lw=1, **styles[model])
        if metric == "cross_entropy":
            ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel(r"$\log_{10}(\varepsilon)$")
        ax.set_ylabel("Test CE loss" if metric == "cross_entropy" else "Test accuracy")
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    legend = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    labels = [MODEL_LABELS[m] for m in NB_MODELS if MODEL_LABELS[m] in legend]
    handles = [legend[label] for label in labels]
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig, axes


def main(argv=None) -> int:
    """Command line: ``python -m lib.experiments naive-bayes --out DIR``."""
    parser = argparse.ArgumentParser(prog="python -m lib.experiments",
                                     description="Run the experiments of Section 5 and write CSV files.")
    sub = parser.add_subparsers(dest="experiment", required=True)
    nb = sub.add_parser("naive-bayes", help="Section 5.1: private naive Bayes (Figures 4 and 5)")
    nb.add_argument("--out", required=True, type=Path, help="folder for naive_bayes.csv")
    nb.add_argument("--datasets", nargs="+", default=None, help="default: all eight of Table 1")
    nb.add_argument("--n-epsilons", type=int, default=10, help="points of the log grid 1e-3..10")
    nb.add_argument("--n-repeats", type=int, default=10)
    nb.add_argument("--lam", type=float, default=5.0)
    nb.add_argument("--seed", type=int, default=DEFAULT_SEED)
    nb.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.n_epsilons < 1:
        parser.error("--n-epsilons must be at least 1")
    results = run_naive_bayes(
        datasets=args.datasets, epsilons=np.logspace(-3, 1, args.n_epsilons), n_repeats=args.n_repeats,
        lam=args.lam, seed=args.seed, progress=False if args.no_progress else None,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "naive_bayes.csv"
    results.to_csv(path, index=False)
    print(f"wrote {len(results)} rows to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
