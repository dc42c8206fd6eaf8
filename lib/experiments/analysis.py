"""Analysis of grid results: summaries and wide tables.

The chapters call these instead of re-deriving them: :func:`summarise` (mean
and standard deviation per cell) and :func:`pivot` (one column per mechanism).
Comparisons of two mechanisms are verdicts (:func:`lib.experiments.verdicts.cell_z`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib import validation

#: The scores a grid can hold, in the column order of :func:`summarise`.
METRICS = ("cross_entropy", "accuracy", "log_likelihood")


def _x(frame):
    return "epsilon_hat" if "epsilon_hat" in frame.columns else "epsilon"


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof 0) over the repeats of every grid cell.

    Serves every grid of this module. A cell is (dataset, model, epsilon) in
    the RDP grids and (dataset, model, epsilon_hat) in the approximate-DP grids;
    every score column present (:data:`METRICS`) gets ``_mean`` and ``_std``.
    An ``attained`` column is kept: a cell whose target was not attained has
    NaN statistics.
    """
    if not isinstance(results, pd.DataFrame):
        raise validation.ArgumentTypeError(f"results must be a pandas DataFrame of a grid; got {type(results).__name__}")
    x = "epsilon_hat" if "epsilon_hat" in results.columns else "epsilon"
    missing = [c for c in ("dataset", "model", x) if c not in results.columns]
    scores = [m for m in METRICS if m in results.columns]
    if missing or not scores:
        raise ValueError(f"results must have the columns dataset, model, epsilon (or epsilon_hat) and at least one "
                         f"score of {METRICS}; missing {missing + ([] if scores else ['a score'])}")
    spec = {"attained": ("attained", "all")} if "attained" in results.columns else {}
    for metric in METRICS:
        if metric in results.columns:
            spec[f"{metric}_mean"] = (metric, "mean")
            spec[f"{metric}_std"] = (metric, lambda v: float(np.std(v)))
    return results.groupby(["dataset", "model", x], sort=False).agg(**spec).reset_index()


def pivot(summary: pd.DataFrame, metric: str, stat: str = "mean") -> pd.DataFrame:
    """One column per mechanism: ``summary[f"{metric}_{stat}"]`` indexed by (dataset, budget).

    Parameters
    ----------
    summary : pandas.DataFrame
        From :func:`summarise`.
    metric : str
        One of :data:`METRICS` present in ``summary``.
    stat : {"mean", "std"}
    """
    column = f"{metric}_{stat}"
    if column not in summary.columns:
        raise ValueError(f"summary has no column {column!r}; metric must be a score of the grid "
                         f"and stat 'mean' or 'std'")
    return summary.pivot_table(index=["dataset", _x(summary)], columns="model", values=column, sort=False)

