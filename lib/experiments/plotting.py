"""Plotting defaults shared by the chapters, so each figure cell shows only its data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from lib.mechanisms.protocol import Mechanism, get

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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


#: The book's text column on a desktop screen, in CSS pixels (sphinx-book-theme 1.1 in a window
#: 1280 px wide), and the same width in inches of a figure drawn at ``BOOK_STYLE["figure.dpi"]``
#: (one figure inch is ``figure.dpi`` CSS pixels on the page). A figure at most this wide is shown
#: at its natural size, so its 10-pt tick labels appear at 10 * 110 / 72 = 15.3 px, close to the
#: body text's 16 px; a wider one is scaled down to the column, and its labels with it.
COLUMN_PX = 730
COLUMN_INCHES = COLUMN_PX / BOOK_STYLE["figure.dpi"]


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


def loglog_axes(ncols: int = 1, *, sharey: bool = False, width: float = 6.4,
                height: float = 3.6) -> tuple[Figure, np.ndarray]:
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


def legend_label(name: str | type[Mechanism]) -> str:
    """The legend label of a registered mechanism."""
    return get(name).label


_YLABELS = {"cross_entropy": "Test CE loss", "accuracy": "Test accuracy",
            "log_likelihood": "Test log-likelihood"}


def plot_grid(summary: pd.DataFrame, metric: str, datasets: Sequence[str], models: Sequence[str | type[Mechanism]], *,
              random_on: Collection[str] | None = None, ncols: int = 2) -> tuple[Figure, np.ndarray]:
    """The paper's experiment figures: one panel per dataset, a score against log10 epsilon.

    Figures 4-5 (naive Bayes), 7 (Bayesian networks) and 9-11 (their
    approximate-DP versions): the mean over the repeats with standard-deviation
    error bars, from :func:`summarise`; the non-private model, which has no
    noise, as a dashed line. The x-axis is :math:`\\log_{10}\\varepsilon`, or
    :math:`\\log_{10}\\hat\\varepsilon` for an approximate-DP grid, whose cells
    not attained are left out, so that their line stops as in the paper's
    figures. Cross-entropy gets a log scale.

    The figure is never wider than the book's text column (:data:`COLUMN_INCHES`),
    so that the page shows it at its natural size and its tick labels at
    their point size, close to the body text's. The paper's four panels per
    row would be about 10 inches wide and shrunk to 64 % on the page (tick
    labels at 10 px against 16-px text); two per row keep them at 15 px.
    With an odd number of datasets the legend fills the empty panel,
    otherwise it is a row below the panels.

    Parameters
    ----------
    summary : pandas.DataFrame
        From :func:`summarise`.
    metric : {"cross_entropy", "accuracy", "log_likelihood"}
    datasets : sequence of str
        Panel order.
    models : sequence of str
        Legend order (registry names, :func:`lib.mechanisms.protocol.names`).
    random_on : collection of str, optional
        Datasets whose panel shows the ``"random"`` model (default all).
    ncols : int, default 2
        Panels per row. More panels per row make them narrower (the figure
        keeps the column's width), not the labels smaller.

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
    panel = 3.1 if metric == "log_likelihood" else 2.6  # inches per panel, at most
    width = min(panel * ncols, COLUMN_INCHES)
    models = [get(m).name for m in models]
    # The legend: in the empty panel when there is one, else in rows of at most three entries
    # below the panels (about 0.22 in per row at 10 pt).
    in_panel = len(datasets) < nrows * ncols
    legend_rows = 0 if in_panel else -(-len(models) // min(3, len(models)))
    legend_height = 0.22 * legend_rows + 0.1 * (legend_rows > 0)
    height = 2.4 * nrows + legend_height
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False)
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
    handles = [legend[label] for label in labels]
    fig.tight_layout(rect=(0, legend_height / height, 1, 1))
    if in_panel:
        box = list(axes.flat)[len(datasets)].get_position()
        fig.legend(handles, labels, loc="center", ncol=1,
                   bbox_to_anchor=((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2))
    else:
        fig.legend(handles, labels, loc="lower center", ncol=min(3, max(len(labels), 1)),
                   bbox_to_anchor=(0.5, 0))
    return fig, axes


# ---------------------------------------------------------------------------------------------
# Chapter 14 (every system at one budget): names and markers of systems outside the registry of
# count-table mechanisms, and the dot plot of its four tasks.

def _system_looks() -> dict:
    from lib.mechanisms.bounded_moments import VaidyaLaplace, ZafaraniClifton

    return {ZafaraniClifton.name: dict(label=ZafaraniClifton.label, color="C7", marker="P"),
            VaidyaLaplace.name: dict(label=VaidyaLaplace.label, color="C9", marker="X"),
            "hellinger": dict(label=get("smoothed_hellinger").label, color="C6", marker="*")}


#: Label, colour and marker of the systems that chapter 14 compares beside the registered
#: count-table mechanisms: the smooth-sensitivity naive Bayes methods (by their method names,
#: ``"zc"`` and ``"vaidya"``) and the smoothed-Hellinger mechanism's single-posterior release
#: (``"hellinger"``). Their labels are the classes' own.
SYSTEM_LOOKS = _system_looks()


def system_label(name: str) -> str:
    """The label of a system in chapter 14's tables and legends.

    Parameters
    ----------
    name : str
        A registered mechanism's name (its registry label) or a key of :data:`SYSTEM_LOOKS`.

    Returns
    -------
    str
    """
    return SYSTEM_LOOKS[name]["label"] if name in SYSTEM_LOOKS else get(name).label


def system_look(name: str) -> dict:
    """Colour and marker of a system's points (:func:`style`'s for a registered mechanism).

    Parameters
    ----------
    name : str
        As for :func:`system_label`.

    Returns
    -------
    dict
        Keyword arguments ``color`` and ``marker`` for matplotlib.
    """
    if name in SYSTEM_LOOKS:
        return {k: v for k, v in SYSTEM_LOOKS[name].items() if k != "label"}
    return {k: v for k, v in style(name).items() if k in ("color", "marker")}


def dotplot(ax: Axes, mean: pd.DataFrame, err: pd.DataFrame | None = None, *, log: bool = False) -> None:
    """One marker per (group, system): groups along the x axis, systems side by side within a group.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    mean : pandas.DataFrame
        One row per group (the x tick labels), one column per system (names as for
        :func:`system_label`, which labels the legend).
    err : pandas.DataFrame, optional
        Standard errors, shaped as ``mean``: the bars span two of them on either side.
    log : bool, default False
        A logarithmic y axis.
    """
    cols = list(mean.columns)
    width = 0.8 / len(cols)
    x = np.arange(len(mean.index))
    for k, name in enumerate(cols):
        e = None if err is None else 2 * err[name].to_numpy()
        ax.errorbar(x + (k - (len(cols) - 1) / 2) * width, mean[name].to_numpy(), yerr=e,
                    ls="none", ms=5, capsize=2, label=system_label(name), **system_look(name))
    ax.set_xticks(x, mean.index, rotation=30, ha="right")
    if log:
        ax.set_yscale("log")
