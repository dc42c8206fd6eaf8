"""Experiment runners for Section 5 and Appendix C of the paper, and their command line.

``python -m lib.experiments EXPERIMENT --out DIR`` runs one grid on the real data
and writes ``DIR/<experiment>.csv``:

* ``naive-bayes``: private naive Bayes at (lam, eps)-RDP on the eight datasets of
  Table 1 (Section 5.1, Figures 4 and 5);
* ``bayesian-network``: private Bayesian networks at (lam, eps)-RDP on Adult,
  Bank and GermanCredit (Section 5.2, Figure 7);
* ``naive-bayes-dp`` and ``bayesian-network-dp``: the same models at
  (eps_hat, delta)-DP, with Gohari et al.'s calibration added (Appendix C,
  Figures 9 to 11).

Every (dataset, model, epsilon) cell draws its noise from its own
``numpy.random.SeedSequence``, keyed by the seed and by the names and value (not
the positions), so a result does not depend on which other cells are run or in
which order.
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
#: Legend labels of the paper's figures (Gohari et al. appears in Appendix C only).
MODEL_LABELS = {"random": "Random", "mle": "Non-private", "dirichlet": "Dirichlet",
                "gohari": "Gohari et al.", "gaussian": "Gaussian", "laplace": "Laplace",
                "gaussian_classical": "Gaussian (classical)"}
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


def _progress(jobs, enabled, desc):
    """``jobs`` wrapped in a tqdm bar when ``enabled`` (default: stderr is a terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return jobs
    from tqdm.auto import tqdm

    return tqdm(jobs, total=len(jobs), desc=desc, file=sys.stderr)


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
    n_repeats = _validate.integer(n_repeats, "n_repeats")
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
    for name, model in _progress(jobs, progress, "naive Bayes grid"):
        if current.get("name") != name:
            split = splits[name] if splits is not None else _load_split(name)
            current = {"name": name, "split": split,
                       "counts": count(split.X_train, split.y_train, split.n_values, split.n_classes)}
        frames.append(evaluate_naive_bayes(current["split"], model, epsilons, n_repeats, lam=lam,
                                           smoothing=smoothing, seed=seed, dataset=name,
                                           counts=current["counts"], clip_floor=clip_floor))
    return pd.concat(frames, ignore_index=True)


#: The scores a grid can hold, in the column order of :func:`summarise`.
METRICS = ("cross_entropy", "accuracy", "log_likelihood")


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof 0) over the repeats of every grid cell.

    Serves every grid of this module. A cell is (dataset, model, epsilon) in
    the RDP grids and (dataset, model, epsilon_hat) in the approximate-DP grids;
    every score column present (:data:`METRICS`) gets ``_mean`` and ``_std``.
    An ``attained`` column is kept: a cell whose target was not attained has
    NaN statistics.
    """
    x = "epsilon_hat" if "epsilon_hat" in results.columns else "epsilon"
    spec = {"attained": ("attained", "all")} if "attained" in results.columns else {}
    for metric in METRICS:
        if metric in results.columns:
            spec[f"{metric}_mean"] = (metric, "mean")
            spec[f"{metric}_std"] = (metric, lambda v: float(np.std(v)))
    return results.groupby(["dataset", "model", x], sort=False).agg(**spec).reset_index()


_STYLES = {"random": dict(color="0.5", ls=":"), "mle": dict(color="k", ls="--"),
           "dirichlet": dict(color="C0", marker="o"), "gohari": dict(color="C3", marker="v"),
           "gaussian": dict(color="C1", marker="s"), "laplace": dict(color="C2", marker="^"),
           "gaussian_classical": dict(color="C4", marker="x", ls="-.")}
_YLABELS = {"cross_entropy": "Test CE loss", "accuracy": "Test accuracy",
            "log_likelihood": "Test log-likelihood"}


def plot_grid(summary: pd.DataFrame, metric: str, datasets, models, *, random_on=None, ncols=4):
    """The paper's experiment figures: one panel per dataset, a score against log10 epsilon.

    Figures 4-5 (naive Bayes), 7 (Bayesian networks) and 9-11 (their
    approximate-DP versions): the mean over the repeats with standard-deviation
    error bars, from :func:`summarise`; the non-private model, which has no
    noise, as a dashed line. The x-axis is :math:`\\log_{10}\\varepsilon`, or
    :math:`\\log_{10}\\hat\\varepsilon` for an approximate-DP grid, whose cells
    not attained are left out, so that their line stops as in the paper's
    figures. Cross-entropy gets a log scale.

    Parameters
    ----------
    summary : pandas.DataFrame
        From :func:`summarise`.
    metric : {"cross_entropy", "accuracy", "log_likelihood"}
    datasets : sequence of str
        Panel order.
    models : sequence of str
        Legend order (keys of :data:`MODEL_LABELS`).
    random_on : collection of str, optional
        Datasets whose panel shows the ``"random"`` model (default all).
    ncols : int, default 4
        Panels per row.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : ndarray of matplotlib.axes.Axes, shape (rows, ncols)
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    if metric not in _YLABELS:
        raise ValueError(f"metric must be one of {tuple(_YLABELS)}; got {metric!r}")
    dp = "epsilon_hat" in summary.columns
    x = "epsilon_hat" if dp else "epsilon"
    ncols = min(ncols, len(datasets))
    nrows = -(-len(datasets) // ncols)
    width = 3.1 if metric == "log_likelihood" else 2.6  # inches per panel
    height = 2.4 * nrows + 0.4  # the panels and a row for the legend
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height), squeeze=False)
    for ax, name in zip(axes.flat, datasets):
        for model in models:
            if model == "random" and random_on is not None and name not in random_on:
                continue
            s = summary[(summary.dataset == name) & (summary.model == model)]
            if dp:
                s = s[s.attained]
            if not len(s):
                continue
            if model == "mle":
                ax.plot(np.log10(s[x]), s[f"{metric}_mean"], label=MODEL_LABELS[model], lw=1,
                        **_STYLES[model])
            else:
                ax.errorbar(np.log10(s[x]), s[f"{metric}_mean"], yerr=s[f"{metric}_std"],
                            label=MODEL_LABELS[model], ms=3, capsize=2, lw=1, **_STYLES[model])
        if metric == "cross_entropy":
            ax.set_yscale("log")
        if metric == "log_likelihood":
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_title(name)
        ax.set_xlabel(r"$\log_{10}(\hat\varepsilon)$" if dp else r"$\log_{10}(\varepsilon)$")
        ax.set_ylabel(_YLABELS[metric])
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    legend = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    labels = [MODEL_LABELS[m] for m in models if MODEL_LABELS[m] in legend]
    fig.legend([legend[label] for label in labels], labels, loc="lower center", ncol=len(labels),
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.4 / height, 1, 1))
    return fig, axes


#: The models of Figure 7, in legend order, and its three datasets.
BN_MODELS = ("mle", "dirichlet", "gaussian", "laplace")
BN_DATASETS = ("Adult", "Bank", "GermanCredit")


def _load_network(name: str):
    from .bayesian_network import prepare_network

    return prepare_network(name)


def evaluate_bayesian_network(data, model, epsilons, n_repeats, *, lam=5.0, smoothing=0.1,
                              seed=DEFAULT_SEED, dataset="data", clip_floor=CLIP_FLOOR,
                              tables=None):
    """Test log-likelihood (eq. (11)) of one Bayesian-network model over a grid of epsilons.

    For every epsilon, ``n_repeats`` releases of all tables are drawn from the
    cell's own seed, ``cell_seed(seed, dataset, "bn:" + model, epsilon)`` (the
    prefix keeps the streams apart from the naive Bayes grid's); all
    ``len(epsilons) * n_repeats`` releases are scored in one call of
    :func:`lib.bayesian_network.log_likelihood`, which counts the test rows once.

    Parameters
    ----------
    data : NetworkData
        From :func:`lib.bayesian_network.prepare_network`.
    model : {"mle", "dirichlet", "gaussian", "laplace"}
    epsilons : array_like
        Total RDP levels of the whole network; ignored by ``"mle"``.
    n_repeats : int
        Independent releases per epsilon.
    tables : list of ndarray, optional
        ``count_tables(data.train, ...)`` if already computed.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, epsilon, repeat, log_likelihood``.
    """
    from .bayesian_network import MECHANISMS as BN_MECHANISMS
    from .bayesian_network import count_tables, log_likelihood, release_tables

    if not isinstance(model, str) or model not in BN_MECHANISMS:
        raise ValueError(f"model must be one of {BN_MECHANISMS}; got {model!r}")
    epsilons = np.atleast_1d(_validate.positive(epsilons, "epsilons"))
    if epsilons.ndim != 1:
        raise ValueError("epsilons must be a scalar or a 1-D array")
    n_repeats = _validate.integer(n_repeats, "n_repeats")
    if tables is None:
        tables = count_tables(data.train, data.n_values, data.parents)
    if model == "mle":
        logs = release_tables(tables, "mle", smoothing=smoothing)
        ll = np.broadcast_to(log_likelihood(data.test, logs, data.n_values, data.parents),
                             (len(epsilons), n_repeats))
    else:
        batches = []
        for eps in epsilons:
            rng = np.random.default_rng(cell_seed(seed, dataset, f"bn:{model}", eps))
            batches.append(release_tables(tables, model, epsilon=eps, lam=lam, n_draws=n_repeats,
                                          rng=rng, floor=clip_floor))
        logs = [np.concatenate([b[k] for b in batches]) for k in range(len(tables))]
        ll = log_likelihood(data.test, logs, data.n_values, data.parents).reshape(
            len(epsilons), n_repeats)
    grid_eps, grid_rep = np.meshgrid(epsilons, np.arange(n_repeats), indexing="ij")
    return pd.DataFrame({
        "dataset": dataset, "model": model, "epsilon": grid_eps.ravel(),
        "repeat": grid_rep.ravel(), "log_likelihood": np.asarray(ll, float).ravel(),
    })


def run_bayesian_network(datasets=BN_DATASETS, epsilons=DEFAULT_EPSILONS, n_repeats=10, lam=5.0,
                         seed=DEFAULT_SEED, progress=None, models=BN_MODELS, smoothing=0.1,
                         networks=None, clip_floor=CLIP_FLOOR):
    """The Bayesian-network grid of Section 5.2 (Figure 7).

    For every dataset the training tables are counted once; every model
    releases ``n_repeats`` parameter sets per epsilon, scored by the test
    log-likelihood of eq. (11).

    Parameters
    ----------
    datasets : sequence of str, default ``("Adult", "Bank", "GermanCredit")``
        Keys of :data:`lib.bayesian_network.NETWORKS` (or of ``networks``).
    epsilons : array_like, default ``np.logspace(-3, 1, 10)``
        Total RDP levels :math:`\\varepsilon` of a whole network.
    n_repeats : int, default 10
    lam : float, default 5.0
        Renyi order :math:`\\lambda`.
    seed : int
        Root of every cell's :func:`cell_seed`.
    progress : bool, optional
        Show a tqdm progress bar; default only when stderr is a terminal.
    models : sequence of str, default :data:`BN_MODELS`
    smoothing : float, default 0.1
        Pseudo-count of the non-private model.
    networks : mapping of str to NetworkData, optional
        Use these encoded networks instead of
        :func:`lib.bayesian_network.prepare_network`.
    clip_floor : float, default :data:`lib.baselines.CLIP_FLOOR`

    Returns
    -------
    pandas.DataFrame
        Tidy results: ``dataset, model, epsilon, repeat, log_likelihood``.
    """
    from .bayesian_network import MECHANISMS as BN_MECHANISMS
    from .bayesian_network import count_tables

    bad = [m for m in models if m not in BN_MECHANISMS]
    if bad:
        raise ValueError(f"models must be among {BN_MECHANISMS}; got {bad}")
    jobs = [(name, model) for name in datasets for model in models]
    frames, current = [], {}
    for name, model in _progress(jobs, progress, "Bayesian network grid"):
        if current.get("name") != name:
            data = networks[name] if networks is not None else _load_network(name)
            current = {"name": name, "data": data,
                       "tables": count_tables(data.train, data.n_values, data.parents)}
        frames.append(evaluate_bayesian_network(
            current["data"], model, epsilons, n_repeats, lam=lam, smoothing=smoothing, seed=seed,
            dataset=name, clip_floor=clip_floor, tables=current["tables"]))
    return pd.concat(frames, ignore_index=True)


def _add_bayesian_network_parser(sub):
    bnp = sub.add_parser("bayesian-network",
                         help="Section 5.2: private Bayesian networks (Figure 7)")
    bnp.add_argument("--out", required=True, type=Path, help="folder for bayesian_network.csv")
    bnp.add_argument("--datasets", nargs="+", default=list(BN_DATASETS),
                     help="default: Adult Bank GermanCredit")
    bnp.add_argument("--n-epsilons", type=int, default=10, help="points of the log grid 1e-3..10")
    bnp.add_argument("--n-repeats", type=int, default=10)
    bnp.add_argument("--lam", type=float, default=5.0)
    bnp.add_argument("--seed", type=int, default=DEFAULT_SEED)
    bnp.add_argument("--no-progress", action="store_true")


def _main_bayesian_network(args, parser) -> int:
    if args.n_epsilons < 1:
        parser.error("--n-epsilons must be at least 1")
    if args.n_repeats < 1:
        parser.error("--n-repeats must be at least 1")
    results = run_bayesian_network(
        datasets=args.datasets, epsilons=np.logspace(-3, 1, args.n_epsilons),
        n_repeats=args.n_repeats, lam=args.lam, seed=args.seed,
        progress=False if args.no_progress else None)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "bayesian_network.csv"
    results.to_csv(path, index=False)
    print(f"wrote {len(results)} rows to {path}")
    return 0


# ----------------------------------------------------------------------------- (eps_hat, delta)-DP

#: Models of Figures 9 and 10 (naive Bayes, approximate DP), in legend order.
NB_DP_MODELS = ("random", "mle", "dirichlet", "gohari", "gaussian", "laplace")
#: Models of Figure 11 (Bayesian networks, approximate DP).
BN_DP_MODELS = ("mle", "dirichlet", "gohari", "gaussian", "laplace")
#: The epsilon-hat axes of Figures 9-10 and of Figure 11, and their delta.
DP_NB_EPSILONS = np.logspace(-2, 1, 10)
DP_BN_EPSILONS = np.logspace(-1, 2, 10)
DP_DELTA = 1e-5


def naive_bayes_dp_shapes(split):
    """Public shapes of a naive Bayes model's releases: ``(domain_sizes, n_rows)``.

    Release 0 is the class counts (one row of ``n_classes`` cells), release
    :math:`k` the table of attribute :math:`k` (``n_classes`` rows of
    ``n_values[k]`` cells).
    """
    d, K = int(split.n_classes), len(split.n_values)
    return [d] + [int(v) for v in split.n_values], [1] + [d] * K


def bayesian_network_dp_shapes(data):
    """Public shapes of a Bayesian network's releases: ``(domain_sizes, n_rows)``.

    Table :math:`k` has one row per parent configuration (the product of the
    parents' domain sizes, 1 for a root) and ``n_values[k]`` cells.
    """
    sizes = [int(v) for v in data.n_values]
    rows = [int(np.prod([data.n_values[p] for p in parents], dtype=np.int64)) for parents in data.parents]
    return sizes, rows


def _calibrate_dp(model, epsilon_hat, delta, shapes, n_total, *, order_rule, cache, clip_floor):
    from .approximate_dp import calibrate_model, public_reference

    sizes, rows = shapes
    reference = public_reference(n_total, sizes, rows) if model == "dirichlet" else None
    return calibrate_model(model, epsilon_hat, delta, sizes, n_total=n_total, reference=reference,
                           order_rule=order_rule, floor=clip_floor, cache=cache)


def calibrate_naive_bayes_dp(split, model, epsilon_hat, delta=DP_DELTA, *, order_rule="optimal",
                             cache=None, clip_floor=CLIP_FLOOR):
    """The per-release mechanisms of a naive Bayes model at one :math:`(\\hat\\varepsilon, \\delta)`.

    :func:`lib.approximate_dp.calibrate_model` for the :math:`K + 1` releases of
    :func:`naive_bayes_dp_shapes`, with the number of training rows as
    Gohari et al.'s total and the Dirichlet order chosen on
    :func:`lib.approximate_dp.public_reference` tables of the same shapes
    (public quantities only).
    """
    return _calibrate_dp(model, epsilon_hat, delta, naive_bayes_dp_shapes(split), len(split.y_train),
                         order_rule=order_rule, cache=cache, clip_floor=clip_floor)


def calibrate_bayesian_network_dp(data, model, epsilon_hat, delta=DP_DELTA, *, order_rule="optimal",
                                  cache=None, clip_floor=CLIP_FLOOR):
    """The per-table mechanisms of a Bayesian network at one :math:`(\\hat\\varepsilon, \\delta)`.

    As :func:`calibrate_naive_bayes_dp`, for the :math:`K` tables of
    :func:`bayesian_network_dp_shapes`.
    """
    return _calibrate_dp(model, epsilon_hat, delta, bayesian_network_dp_shapes(data), data.train.shape[0],
                         order_rule=order_rule, cache=cache, clip_floor=clip_floor)


def _dp_grid(epsilon_hats, n_repeats, delta):
    epsilon_hats = np.atleast_1d(_validate.positive(epsilon_hats, "epsilon_hats"))
    if epsilon_hats.ndim != 1:
        raise ValueError("epsilon_hats must be a scalar or a 1-D array")
    n_repeats = _validate.integer(n_repeats, "n_repeats")
    _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
    return epsilon_hats


def _dp_frame(dataset, model, epsilon_hats, n_repeats, delta, attained, metrics):
    grid_eps, grid_rep = np.meshgrid(epsilon_hats, np.arange(n_repeats), indexing="ij")
    frame = pd.DataFrame({"dataset": dataset, "model": model, "epsilon_hat": grid_eps.ravel(),
                          "delta": float(delta), "repeat": grid_rep.ravel(),
                          "attained": np.repeat(np.asarray(attained, bool), n_repeats)})
    for name, values in metrics.items():
        frame[name] = np.asarray(values, float).ravel()
    return frame


def evaluate_naive_bayes_dp(split, model, epsilon_hats, n_repeats, *, delta=DP_DELTA, smoothing=0.1,
                            seed=DEFAULT_SEED, dataset="data", counts=None, clip_floor=CLIP_FLOOR,
                            order_rule="optimal", cache=None):
    """Test CE and accuracy of one naive Bayes model at :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Every :math:`\\hat\\varepsilon` is met by the whole model (all :math:`K + 1`
    releases together, :func:`calibrate_naive_bayes_dp`); its ``n_repeats``
    releases come from ``cell_seed(seed, dataset, "dp:" + model,
    epsilon_hat)``. A cell whose target the mechanism cannot meet (Gohari et
    al.'s, where no :math:`r` reaches it) has ``attained`` False and NaN
    metrics. ``"random"`` and ``"mle"`` are those of
    :func:`evaluate_naive_bayes` (they do not depend on the target).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, epsilon_hat, delta, repeat, attained,
        cross_entropy, accuracy``.
    """
    from .approximate_dp import DP_MECHANISMS

    epsilon_hats = _dp_grid(epsilon_hats, n_repeats, delta)
    if model in ("random", "mle"):
        res = evaluate_naive_bayes(split, model, epsilon_hats, n_repeats, smoothing=smoothing, seed=seed,
                                   dataset=dataset, counts=counts)
        return _dp_frame(dataset, model, epsilon_hats, n_repeats, delta, np.ones(len(epsilon_hats)),
                         {"cross_entropy": res.cross_entropy, "accuracy": res.accuracy})
    if not isinstance(model, str) or model not in DP_MECHANISMS:
        raise ValueError(f"model must be 'random', 'mle' or one of {DP_MECHANISMS}; got {model!r}")
    if counts is None:
        counts = count(split.X_train, split.y_train, split.n_values, split.n_classes)
    class_counts, feature_counts = counts
    attained, priors, tables = [], [], []
    for eps in epsilon_hats:
        cal = calibrate_naive_bayes_dp(split, model, eps, delta, order_rule=order_rule, cache=cache,
                                       clip_floor=clip_floor)
        attained.append(cal.attained)
        if cal.attained:
            rng = np.random.default_rng(cell_seed(seed, dataset, f"dp:{model}", eps))
            p, t = release_parameters(class_counts, feature_counts, cal.releases, n_draws=n_repeats, rng=rng)
            priors.append(p)
            tables.append(t)
    ce = np.full((len(epsilon_hats), n_repeats), np.nan)
    acc = np.full((len(epsilon_hats), n_repeats), np.nan)
    if priors:
        table = [np.concatenate([t[k] for t in tables]) for k in range(len(feature_counts))]
        lp = log_proba(split.X_test, np.concatenate(priors), table, split.n_values)
        y = np.asarray(split.y_test)
        ce[attained] = cross_entropy(lp, y).reshape(-1, n_repeats)
        acc[attained] = accuracy(lp, y).reshape(-1, n_repeats)
    return _dp_frame(dataset, model, epsilon_hats, n_repeats, delta, attained,
                     {"cross_entropy": ce, "accuracy": acc})


def run_naive_bayes_dp(datasets=None, epsilon_hats=DP_NB_EPSILONS, delta=DP_DELTA, n_repeats=10,
                       seed=DEFAULT_SEED, progress=None, models=NB_DP_MODELS, smoothing=0.1, splits=None,
                       clip_floor=CLIP_FLOOR, order_rule="optimal", cache=None):
    """The naive Bayes grid of Appendix C (Figures 9 and 10) at :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Parameters
    ----------
    datasets : sequence of str, optional
        Default :data:`lib.data.DATASETS` (or the keys of ``splits``).
    epsilon_hats : array_like, default ``np.logspace(-2, 1, 10)``
        Targets :math:`\\hat\\varepsilon` of a whole model.
    delta : float, default 1e-5
    n_repeats : int, default 10
    seed : int
    progress : bool, optional
    models : sequence of str, default :data:`NB_DP_MODELS`
        ``"random"``, ``"mle"`` and any of
        :data:`lib.approximate_dp.DP_MECHANISMS`.
    smoothing : float, default 0.1
    splits : mapping of str to Split, optional
    clip_floor : float, default :data:`lib.baselines.CLIP_FLOOR`
    order_rule : {"optimal", "fixed"}
        Dirichlet order (:func:`lib.approximate_dp.calibrate_model`).
    cache : dict, optional
        Memo of Gohari et al.'s calibrations, shared across the grid.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, epsilon_hat, delta, repeat, attained, cross_entropy,
        accuracy``.
    """
    if datasets is None:
        if splits is not None:
            datasets = tuple(splits)
        else:
            from .data import DATASETS

            datasets = DATASETS
    cache = {} if cache is None else cache
    frames, current = [], {}
    for name, model in _progress([(n, m) for n in datasets for m in models], progress, "naive Bayes DP grid"):
        if current.get("name") != name:
            split = splits[name] if splits is not None else _load_split(name)
            current = {"name": name, "split": split,
                       "counts": count(split.X_train, split.y_train, split.n_values, split.n_classes)}
        frames.append(evaluate_naive_bayes_dp(
            current["split"], model, epsilon_hats, n_repeats, delta=delta, smoothing=smoothing, seed=seed,
            dataset=name, counts=current["counts"], clip_floor=clip_floor, order_rule=order_rule,
            cache=cache))
    return pd.concat(frames, ignore_index=True)


def evaluate_bayesian_network_dp(data, model, epsilon_hats, n_repeats, *, delta=DP_DELTA, smoothing=0.1,
                                 seed=DEFAULT_SEED, dataset="data", tables=None, clip_floor=CLIP_FLOOR,
                                 order_rule="optimal", cache=None):
    """Test log-likelihood (eq. (11)) of one network model at :math:`(\\hat\\varepsilon, \\delta)`-DP.

    As :func:`evaluate_naive_bayes_dp` for the :math:`K` tables of a network
    (:func:`calibrate_bayesian_network_dp`); seeds ``cell_seed(seed, dataset,
    "bn-dp:" + model, epsilon_hat)``; ``"mle"`` is that of
    :func:`evaluate_bayesian_network`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, epsilon_hat, delta, repeat, attained,
        log_likelihood``.
    """
    from .approximate_dp import DP_MECHANISMS
    from .bayesian_network import count_tables, log_likelihood, release_tables

    epsilon_hats = _dp_grid(epsilon_hats, n_repeats, delta)
    if tables is None:
        tables = count_tables(data.train, data.n_values, data.parents)
    if model == "mle":
        res = evaluate_bayesian_network(data, "mle", epsilon_hats, n_repeats, smoothing=smoothing,
                                        dataset=dataset, tables=tables)
        return _dp_frame(dataset, model, epsilon_hats, n_repeats, delta, np.ones(len(epsilon_hats)),
                         {"log_likelihood": res.log_likelihood})
    if not isinstance(model, str) or model not in DP_MECHANISMS:
        raise ValueError(f"model must be 'mle' or one of {DP_MECHANISMS}; got {model!r}")
    attained, batches = [], []
    for eps in epsilon_hats:
        cal = calibrate_bayesian_network_dp(data, model, eps, delta, order_rule=order_rule, cache=cache,
                                            clip_floor=clip_floor)
        attained.append(cal.attained)
        if cal.attained:
            rng = np.random.default_rng(cell_seed(seed, dataset, f"bn-dp:{model}", eps))
            batches.append(release_tables(tables, cal.releases, n_draws=n_repeats, rng=rng))
    ll = np.full((len(epsilon_hats), n_repeats), np.nan)
    if batches:
        logs = [np.concatenate([b[k] for b in batches]) for k in range(len(tables))]
        ll[attained] = log_likelihood(data.test, logs, data.n_values, data.parents).reshape(-1, n_repeats)
    return _dp_frame(dataset, model, epsilon_hats, n_repeats, delta, attained, {"log_likelihood": ll})


def run_bayesian_network_dp(datasets=BN_DATASETS, epsilon_hats=DP_BN_EPSILONS, delta=DP_DELTA, n_repeats=10,
                            seed=DEFAULT_SEED, progress=None, models=BN_DP_MODELS, smoothing=0.1,
                            networks=None, clip_floor=CLIP_FLOOR, order_rule="optimal", cache=None):
    """The Bayesian-network grid of Appendix C (Figure 11) at :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Parameters as :func:`run_naive_bayes_dp`; ``networks`` maps names to
    :class:`lib.bayesian_network.NetworkData` (default
    :func:`lib.bayesian_network.prepare_network`).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, epsilon_hat, delta, repeat, attained, log_likelihood``.
    """
    from .bayesian_network import count_tables

    cache = {} if cache is None else cache
    frames, current = [], {}
    for name, model in _progress([(n, m) for n in datasets for m in models], progress,
                                 "Bayesian network DP grid"):
        if current.get("name") != name:
            data = networks[name] if networks is not None else _load_network(name)
            current = {"name": name, "data": data,
                       "tables": count_tables(data.train, data.n_values, data.parents)}
        frames.append(evaluate_bayesian_network_dp(
            current["data"], model, epsilon_hats, n_repeats, delta=delta, smoothing=smoothing, seed=seed,
            dataset=name, tables=current["tables"], clip_floor=clip_floor, order_rule=order_rule,
            cache=cache))
    return pd.concat(frames, ignore_index=True)


def _add_dp_parsers(sub):
    for name, what, default in (("naive-bayes-dp", "Appendix C: naive Bayes at (eps_hat, delta)-DP "
                                 "(Figures 9 and 10)", None),
                                ("bayesian-network-dp", "Appendix C: Bayesian networks at "
                                 "(eps_hat, delta)-DP (Figure 11)", list(BN_DATASETS))):
        p = sub.add_parser(name, help=what)
        p.add_argument("--out", required=True, type=Path, help=f"folder for {name.replace('-', '_')}.csv")
        p.add_argument("--datasets", nargs="+", default=default,
                       help="default: all eight of Table 1" if default is None else "default: Adult Bank "
                       "GermanCredit")
        p.add_argument("--n-epsilons", type=int, default=10,
                       help="points of the log grid " + ("1e-2..10" if default is None else "1e-1..100"))
        p.add_argument("--delta", type=float, default=DP_DELTA)
        p.add_argument("--n-repeats", type=int, default=10)
        p.add_argument("--seed", type=int, default=DEFAULT_SEED)
        p.add_argument("--no-progress", action="store_true")


def _main_dp(args, parser) -> int:
    if args.n_epsilons < 1:
        parser.error("--n-epsilons must be at least 1")
    if args.n_repeats < 1:
        parser.error("--n-repeats must be at least 1")
    if not 0 < args.delta < 1:
        parser.error("--delta must be in (0, 1)")
    progress = False if args.no_progress else None
    if args.experiment == "naive-bayes-dp":
        results = run_naive_bayes_dp(datasets=args.datasets, epsilon_hats=np.logspace(-2, 1, args.n_epsilons),
                                     delta=args.delta, n_repeats=args.n_repeats, seed=args.seed,
                                     progress=progress)
    else:
        results = run_bayesian_network_dp(datasets=args.datasets,
                                          epsilon_hats=np.logspace(-1, 2, args.n_epsilons),
                                          delta=args.delta, n_repeats=args.n_repeats, seed=args.seed,
                                          progress=progress)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.experiment.replace('-', '_')}.csv"
    results.to_csv(path, index=False)
    print(f"wrote {len(results)} rows to {path}")
    return 0


def main(argv=None) -> int:
    """Command line: ``python -m lib.experiments EXPERIMENT --out DIR`` (see the module docstring)."""
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
    _add_bayesian_network_parser(sub)
    _add_dp_parsers(sub)
    args = parser.parse_args(argv)
    if args.experiment in ("naive-bayes-dp", "bayesian-network-dp"):
        return _main_dp(args, parser)
    if args.experiment == "bayesian-network":
        return _main_bayesian_network(args, parser)
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
