"""Plotting defaults shared by the chapters, so each figure cell shows only its data."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from ..protocol import get

BOOK_STYLE = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "font.size": 10,
}


def use_book_style() -> None:
    """Apply the book's matplotlib defaults (PNG at twice the pixel density, light grid, no top/right spines).

    Figures are PNG drawn at twice their display size ("retina"), so that
    they stay sharp on high-density screens while nbval, which does not
    compare PNG bytes, still ignores them (SVG would be compared as text).
    """
    mpl.rcParams.update(BOOK_STYLE)
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # outside IPython there is nothing to configure
        return
    set_matplotlib_formats("retina")


def loglog_axes(ncols: int = 1, *, sharey: bool = False, width: float = 6.4, height: float = 3.6):
    """A row of ``ncols`` log-log axes."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), sharey=sharey, squeeze=False)
    for ax in axes.flat:
        ax.set_xscale("log")
        ax.set_yscale("log")
    return fig, axes[0]


#: Line styles of the book's mechanisms; any other mechanism gets :func:`style`'s default.
_STYLES = {"random": dict(color="0.5", ls=":"), "mle": dict(color="k", ls="--"),
           "dirichlet": dict(color="C0", marker="o"), "gohari": dict(color="C3", marker="v"),
           "gaussian": dict(color="C1", marker="s"), "laplace": dict(color="C2", marker="^"),
           "gaussian_classical": dict(color="C4", marker="x", ls="-.")}


def style(name: str) -> dict:
    """Matplotlib keyword arguments of a mechanism's line (a fixed style, or a default from its name)."""
    if name in _STYLES:
        return _STYLES[name]
    markers = "DPh*<>d"
    return dict(color=f"C{5 + _key(name) % 5}", marker=markers[_key(name) % len(markers)])


def _key(name: str) -> int:
    return sum(name.encode())


def legend_label(name) -> str:
    """The legend label of a registered mechanism."""
    return get(name).label


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
        Legend order (registry names, :func:`lib.protocol.names`).
    random_on : collection of str, optional
        Datasets whose panel shows the ``"random"`` model (default all).
    ncols : int, default 4
        Panels per row.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : ndarray of matplotlib.axes.Axes, shape (rows, ncols)
    """
    if metric not in _YLABELS:
        raise ValueError(f"metric must be one of {tuple(_YLABELS)}; got {metric!r}")
    dp = "epsilon_hat" in summary.columns
    x = "epsilon_hat" if dp else "epsilon"
    ncols = min(ncols, len(datasets))
    nrows = -(-len(datasets) // ncols)
    width = 3.1 if metric == "log_likelihood" else 2.6  # inches per panel
    height = 2.4 * nrows + 0.4  # the panels and a row for the legend
    models = [get(m).name for m in models]
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
            cls = get(model)
            if not cls.private and not getattr(cls, "uninformative", False):  # no noise: a line
                ax.plot(np.log10(s[x]), s[f"{metric}_mean"], label=legend_label(model), lw=1,
                        **style(model))
            else:
                ax.errorbar(np.log10(s[x]), s[f"{metric}_mean"], yerr=s[f"{metric}_std"],
                            label=legend_label(model), ms=3, capsize=2, lw=1, **style(model))
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
    labels = [legend_label(m) for m in models if legend_label(m) in legend]
    fig.legend([legend[label] for label in labels], labels, loc="lower center", ncol=len(labels),
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.4 / height, 1, 1))
    return fig, axes
