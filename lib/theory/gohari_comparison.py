"""The comparison with Gohari et al.'s Dirichlet mechanism (Section 5.1 and Figures 2-3 of the paper).

Chapter 6 recomputes the paper's comparison of Algorithm 1 with the (approximate-DP)
calibration of Gohari et al. (:mod:`lib.mechanisms.gohari`). These functions are the parts of
that comparison that are not a mechanism:

- :func:`worst_log_beta_ratio`: the worst ratio of normalising constants over neighbouring
  histograms, by brute force, to check which lower bound :math:`\\eta` the guarantee needs;
- :func:`fixed_rule_delta`: :math:`\\delta(\\gamma)` of eq. (7) computed the way the original
  code did (a fixed product quadrature rule), the source of Figure 2's floor;
- :func:`sampled_kl_losses`: the loss :math:`D_{KL}(\\tilde f \\| y)` of independent releases,
  the points of Figure 3 (bottom);
- :func:`limiting_kl_loss`: the loss that Algorithm 1's output mean tends to as
  :math:`r \\to \\infty` (Section 5.1's remark on large :math:`\\lambda`).
"""

from __future__ import annotations

from typing import Sequence

import itertools

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.dirichlet.divergence import kl_divergence
from lib.mechanisms.dirichlet.special import log_multivariate_beta
from lib.mechanisms.gohari.reference import delta_by_fixed_rule

#: Largest number of histograms :func:`worst_log_beta_ratio` enumerates.
MAX_HISTOGRAMS = 10**5


def worst_log_beta_ratio(n_total: int, d: int, r: float, lam: float) -> float:
    """:math:`\\max \\log B(r f' + \\alpha) - \\log B(r f + \\alpha)` over moves :math:`f \\to f'`, by brute force.

    Gohari et al.'s guarantee (eq. (7) of the paper) bounds the ratio of the normalising
    constants of two neighbouring Dirichlet releases. This enumerates every histogram
    :math:`f` of :math:`N` records in :math:`d` bins and every move of one record from bin
    :math:`i` to bin :math:`j`, with Algorithm 1's :math:`\\alpha = 1 + 4(\\lambda - 1) r`
    (Line 2, :math:`\\Delta_\\infty = 1`).

    Parameters
    ----------
    n_total : int
        The number of records :math:`N \\ge 1`.
    d : int
        The number of bins :math:`d \\ge 2`; at most :data:`MAX_HISTOGRAMS` histograms
        :math:`(N + 1)^d` are enumerated.
    r : float
        The scale :math:`r > 0`.
    lam : float
        The order :math:`\\lambda \\ge 1`.

    Returns
    -------
    float
        The largest log-ratio.

    Examples
    --------
    >>> import math
    >>> ratio = worst_log_beta_ratio(1, 2, 1.0, 1.0)   # (1, 0) -> (0, 1): B(1, 2) / B(2, 1)
    >>> math.isclose(ratio, 0.0, abs_tol=1e-12)
    True
    """
    n_total = validation.integer(n_total, "n_total", low=1)
    d = validation.integer(d, "d", low=2)
    validation.cells((n_total + 1) ** d, "the enumeration of histograms (n_total + 1)**d", MAX_HISTOGRAMS)
    r = validation.scalar(validation.positive(r, "r"), "r")
    lam = validation.scalar(validation.order(lam, "lam"), "lam")
    alpha = 1 + 4 * (lam - 1) * r
    worst = -np.inf
    for f in itertools.product(range(n_total + 1), repeat=d):
        if sum(f) != n_total:
            continue
        f = np.array(f, dtype=float)
        for i, j in itertools.permutations(range(d), 2):
            if f[i] > 0:
                g = f.copy()
                g[i], g[j] = g[i] - 1, g[j] + 1
                worst = max(worst, log_multivariate_beta(r * g + alpha)
                            - log_multivariate_beta(r * f + alpha))
    return worst


def fixed_rule_delta(gammas: ArrayLike, vertices: Sequence[ArrayLike], n_nodes: int) -> np.ndarray:
    """The largest :math:`\\delta(\\gamma)` over the vertices of :math:`\\Omega`, by a fixed product rule.

    The original code evaluates :math:`\\delta(\\gamma)` of eq. (7) at each vertex of the set
    :math:`\\Omega` with a fixed product quadrature rule
    (:func:`lib.mechanisms.gohari.reference.delta_by_fixed_rule`) and takes the largest. Its
    error does not vanish as :math:`\\gamma \\to 0`, which is the floor of the paper's Figure 2.

    Parameters
    ----------
    gammas : array_like
        Thresholds :math:`\\gamma`.
    vertices : sequence of array_like, shape (3,)
        The Dirichlet parameters of the three-part aggregation at each vertex of
        :math:`\\Omega`.
    n_nodes : int
        Nodes of the rule per axis.

    Returns
    -------
    ndarray
        :math:`\\max_v (1 - \\text{rule})` at each :math:`\\gamma`, with the rule's sign (it may be
        negative).
    """
    vertices = list(vertices)
    if not vertices:
        raise ValueError("vertices must hold at least one vertex of Omega")
    return np.max([delta_by_fixed_rule(gammas, v, n_nodes) for v in vertices], axis=0)


def sampled_kl_losses(counts: ArrayLike, r: float, alpha: float, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """:math:`D_{KL}(\\tilde f \\| y)` of ``n_draws`` independent releases :math:`y \\sim \\mathrm{Dirichlet}(r f + \\alpha)`.

    The loss the paper's Figure 3 (bottom) plots, with :math:`\\tilde f = f / N`: one
    Dirichlet release per draw, drawn by ``rng.dirichlet``.

    Parameters
    ----------
    counts : array_like, shape (d,)
        The histogram :math:`f`, non-negative with a positive total.
    r, alpha : float
        The scale and the pseudo-count, both positive.
    n_draws : int
        Number of releases.
    rng : numpy.random.Generator
        The source of randomness.

    Returns
    -------
    ndarray, shape (n_draws,)
        The loss of each release.
    """
    counts = validation.vectors(counts, "counts", positive_entries=False)
    if counts.ndim != 1 or counts.sum() <= 0:
        raise ValueError("counts must be one histogram with a positive total")
    r = validation.scalar(validation.positive(r, "r"), "r")
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    n_draws = validation.integer(n_draws, "n_draws", low=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (got {type(rng).__name__})")
    y = rng.dirichlet(r * counts + alpha, size=n_draws)
    return kl_divergence(counts / counts.sum(), y)


def limiting_kl_loss(counts: ArrayLike, lam: float) -> float:
    """:math:`D_{KL}(\\tilde f \\| m_\\infty)`, the loss of the limit of Algorithm 1's output mean as :math:`r \\to \\infty`.

    With Line 2's :math:`\\alpha = 1 + 4(\\lambda - 1) r` (:math:`\\Delta_\\infty = 1`) the mean
    of a release, :math:`(r f + \\alpha) / (r N + d\\alpha)`, tends to
    :math:`m_\\infty = (f + 4(\\lambda - 1)) / (N + 4(\\lambda - 1) d)` as :math:`r \\to \\infty`:
    the output is pulled towards uniform however large the privacy budget, more so for larger
    :math:`\\lambda` (Section 5.1 of the paper).

    Parameters
    ----------
    counts : array_like, shape (d,)
        The histogram :math:`f`, with positive entries.
    lam : float
        The order :math:`\\lambda \\ge 1`.

    Returns
    -------
    float
        :math:`D_{KL}(f / N \\| m_\\infty)`; zero at :math:`\\lambda = 1`.

    Examples
    --------
    >>> limiting_kl_loss([3.0, 1.0], 1.0)
    0.0
    """
    counts = validation.vectors(counts, "counts", positive_entries=True)
    if counts.ndim != 1:
        raise ValueError(f"counts must be one histogram (got shape {counts.shape})")
    lam = validation.scalar(validation.order(lam, "lam"), "lam")
    n_f, d = counts.sum(), counts.size
    m = (counts + 4 * (lam - 1)) / (n_f + 4 * (lam - 1) * d)
    return float(kl_divergence(counts / n_f, m))
