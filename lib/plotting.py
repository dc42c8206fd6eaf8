"""Plotting defaults shared by the chapters, so each figure cell shows only its data."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt

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
    """Apply the book's matplotlib defaults (PNG output, light grid, no top/right spines)."""
    mpl.rcParams.update(BOOK_STYLE)
    # nbval does not compare PNG bytes, while SVG output would be compared as text.
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # outside IPython there is nothing to configure
        return
    set_matplotlib_formats("png")


def loglog_axes(ncols: int = 1, *, sharey: bool = False, width: float = 6.4, height: float = 3.6):
    """A row of ``ncols`` log-log axes."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), sharey=sharey, squeeze=False)
    for ax in axes.flat:
        ax.set_xscale("log")
        ax.set_yscale("log")
    return fig, axes[0]
