"""The pseudo-count a Dirichlet-sampling release adds to every cell, and the empty cells it lands in.

Each Dirichlet-sampling mechanism of the book releases a draw from a Dirichlet
distribution whose parameter is an affine function of a table row's counts
:math:`c \\in \\mathbb N^d`:

* the Dirichlet mechanism (Algorithm 1, Line 3): :math:`\\mathrm{Dir}(r c + \\alpha)`;
* Geumlek et al.'s posteriors (:mod:`lib.mechanisms.posterior_sampling`):
  :math:`\\mathrm{Dir}(b + s c)`, the diffused one with base :math:`b = a` (the
  prior) and step :math:`s = r`, the concentrated one with :math:`b = a/m` and
  :math:`s = 1`.

Divided by the step, the parameter is :math:`c + p` with :math:`p = \\alpha/r`
(Algorithm 1) or :math:`p = \\bar b/s` (the posteriors): the counts at full
scale plus :math:`p` records in every cell. The release's mean,
:math:`(c + p)/(N + d p)`, is the non-private estimate smoothed with :math:`p`
pseudo-counts (additive smoothing, the estimate of eq. (10) with a prior), and
the release concentrates on it as :math:`r N` grows. Cells that hold no
training record get :math:`p/(N + dp)` of the mass from the pseudo-count alone,
which is why chapter 14 reports the share of empty cells beside :math:`p`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from lib.mechanisms.protocol import Mechanism


def pseudo_count(release: Mechanism) -> float:
    """The records per cell that a Dirichlet-sampling release adds to the counts.

    Parameters
    ----------
    release : object
        One release object of a calibration (``ModelCalibration.releases``): the
        Dirichlet mechanism's (attributes ``r`` and ``alpha``, Algorithm 1) or a
        posterior sampler's (attributes ``prior_value`` and ``scale``, its :math:`r` or :math:`m`).

    Returns
    -------
    float
        :math:`\\alpha / r` for Algorithm 1; :math:`\\bar b / s = \\bar a / r`
        (diffused) or :math:`\\bar a / m` (concentrated) for a posterior, with
        :math:`\\bar a` the prior's mean over the cells.

    Raises
    ------
    TypeError
        For a release whose parameter is not :math:`c + p` scaled (e.g. additive noise).
    """
    if hasattr(release, "prior_value") and hasattr(release, "scale"):
        # b / s: the prior over r (diffused: b = a, s = r) or a / m over 1 (concentrated: b = a / m, s = 1)
        return float(np.mean(release.prior_value) / release.scale)
    if hasattr(release, "alpha") and hasattr(release, "r"):
        return float(release.alpha / release.r)
    raise TypeError(f"release must be a Dirichlet-sampling release (Algorithm 1's r and alpha, or a posterior's "
                    f"prior_value and scale); got {type(release).__name__}")


def median_pseudo_count(releases: Sequence[Mechanism]) -> float:
    """The median of :func:`pseudo_count` over the releases of a model (e.g. one per table).

    Parameters
    ----------
    releases : sequence of release objects
        At least one.

    Returns
    -------
    float
    """
    values = [pseudo_count(o) for o in releases]
    if not values:
        raise ValueError("releases must hold at least one release object")
    return float(np.median(values))


def empty_cell_share(tables: Sequence[ArrayLike]) -> float:
    """The share of the cells of count tables that hold no record.

    Parameters
    ----------
    tables : sequence of array_like
        Count tables (any shapes, non-negative), e.g. a naive Bayes model's
        attribute tables (:func:`lib.models.naive_bayes.count`) or a network's
        conditional tables (:func:`lib.models.bayesian_network.count_tables`).

    Returns
    -------
    float
        In [0, 1]: cells equal to 0 over all cells of all tables.
    """
    cells = [np.asarray(t, dtype=float).ravel() for t in tables]
    if not cells or not sum(c.size for c in cells):
        raise ValueError("tables must hold at least one cell")
    flat = np.concatenate(cells)
    if not (np.isfinite(flat).all() and (flat >= 0).all()):
        raise ValueError("tables must hold finite, non-negative counts")
    return float(np.mean(flat == 0))
