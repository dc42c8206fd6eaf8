"""Brute-force checks of the privacy of logistic-regression posteriors, by quadrature in one dimension.

Geumlek, Song and Chaudhuri (NeurIPS 2017) state that one exact sample from the posterior

.. math::

    p_{\\beta,\\rho}(w \\mid D) \\propto \\exp\\Big(-\\frac{n\\beta}{2}\\|w\\|_2^2
    + \\rho \\sum_{i=1}^n \\log p(y_i \\mid w, x_i)\\Big)

(their eq. (6), with Theorem 17's temperature :math:`\\rho`) is
:math:`(\\lambda, 2c^2B^2\\rho^2\\lambda/(n\\beta))`-RDP (Theorems 16 and 17), and Section 5.2
that One Posterior Sample (OPS), the same posterior with the prior truncated to the ball
:math:`\\|w\\| \\le c/\\beta`, is pure DP. Their proofs are in an appendix chapter 11 does not
have, so the chapter checks the statements directly: it draws random one-dimensional data sets
of ``n`` rows with :math:`|x_i| \\le c`, replaces the first row by a neighbour, evaluates both
posteriors on a fine grid of weights and takes the Rényi divergence (eq. (2) of the paper,
:math:`D_\\lambda(P\\|Q) = \\log\\sum_w p^\\lambda q^{1-\\lambda}/(\\lambda - 1)`) or the largest
log density ratio (the pure-DP privacy loss) over the grid. Nothing here uses the bounds being
checked; the privacy statements themselves live in :mod:`lib.mechanisms.logistic_posterior`.

* :func:`random_neighbours` draws one data set and its neighbour;
* :func:`log_posterior_on_grid` normalises :math:`p_{\\beta,\\rho}` on a grid;
* :func:`renyi_on_grid` and :func:`log_ratio_on_grid` compare two such posteriors;
* :func:`worst_renyi` and :func:`worst_log_ratio` take the largest over random pairs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation
from lib.models.logistic_regression import log_likelihood, ops_radius

__all__ = ["random_neighbours", "log_posterior_on_grid", "renyi_on_grid", "log_ratio_on_grid",
           "worst_renyi", "worst_log_ratio"]

#: Largest grid points times rows that one evaluation of a posterior may allocate.
MAX_GRID_CELLS = 10**8

_LABELS = ("flip", "random")


def random_neighbours(n: int, rng: np.random.Generator, *, c: float = 1.0,
                      label: str = "flip") -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """One random one-dimensional data set and a neighbour that replaces its first row.

    Features are uniform on :math:`[-c, c]` and labels uniform on {0, 1}. The neighbour's
    first feature is :math:`\\pm c` (the extreme of Assumption 1's bound, where a row moves the
    posterior most), and its first label is the opposite one (``label="flip"``, the worst case
    of Theorem 16's gradient argument) or a fresh uniform label (``label="random"``).

    Parameters
    ----------
    n : int
        Rows of each data set, at least 1.
    rng : numpy.random.Generator
        The source of the data; it is advanced by the draws (in the order: features, labels,
        the neighbour's feature, the neighbour's label when random).
    c : float
        The feature bound of Assumption 1, :math:`(0, \\infty)`.
    label : {"flip", "random"}
        The neighbour's first label.

    Returns
    -------
    (x, y), (x2, y2) : tuple of tuples of ndarray
        Features (shape (n,)) and labels (shape (n,), integers 0 and 1) of the two data sets.
    """
    n = validation.integer(n, "n")
    c = validation.scalar(validation.positive(c, "c"), "c")
    if label not in _LABELS:
        raise ValueError(f"label must be one of {_LABELS}; got {label!r}")
    rng = validation.generator(rng)
    x, y = rng.uniform(-c, c, n), rng.integers(0, 2, n)
    x2, y2 = x.copy(), y.copy()
    x2[0], y2[0] = rng.choice([-c, c]), (1 - y[0] if label == "flip" else rng.integers(0, 2))
    return (x, y), (x2, y2)


def log_posterior_on_grid(grid: ArrayLike, x: ArrayLike, y: ArrayLike, beta: float, *, rho: float = 1.0) -> np.ndarray:
    """The log posterior :math:`p_{\\beta,\\rho}(w \\mid D)` of eq. (6) on a grid of weights.

    One-dimensional weights and features; the log density is normalised so that its
    exponentials sum to 1 over the grid (a Riemann sum whose spacing cancels in every ratio
    and divergence taken on the same grid).

    Parameters
    ----------
    grid : array_like, shape (g,)
        Weights, finite.
    x : array_like, shape (n,)
        Features, finite.
    y : array_like, shape (n,)
        Labels, 0 or 1.
    beta : float
        Prior precision per row, :math:`(0, \\infty)`: the prior is :math:`N(0, (n\\beta)^{-1})`.
    rho : float
        Likelihood temperature, :math:`(0, 1]`.

    Returns
    -------
    ndarray, shape (g,)
    """
    grid = validation.in_range(grid, "grid", -np.inf, open_low=True).ravel()
    x = validation.in_range(x, "x", -np.inf, open_low=True).ravel()
    beta = validation.scalar(validation.positive(beta, "beta"), "beta")
    rho = validation.scalar(validation.in_range(rho, "rho", 0.0, 1.0, open_low=True, open_high=False), "rho")
    validation.cells(grid.size * x.size, "grid points times rows", MAX_GRID_CELLS)
    n = x.size
    lp = rho * log_likelihood(grid[:, None], x[:, None], y) - 0.5 * n * beta * grid**2
    return lp - special.logsumexp(lp)


def renyi_on_grid(lp: ArrayLike, lq: ArrayLike, orders: ArrayLike) -> np.ndarray:
    """Rényi divergences :math:`D_\\lambda(P\\|Q)` of two laws given by normalised log masses on one grid.

    :math:`D_\\lambda = \\log\\sum_w p(w)^\\lambda q(w)^{1-\\lambda} / (\\lambda - 1)` (eq. (2) of
    Geumlek et al.), computed in log space.

    Parameters
    ----------
    lp, lq : array_like, shape (g,)
        Log masses that each sum (after exponentiation) to 1, as :func:`log_posterior_on_grid`
        returns.
    orders : array_like, shape (k,)
        Orders, :math:`(1, \\infty)`.

    Returns
    -------
    ndarray, shape (k,)

    Examples
    --------
    Two normal laws of unit variance a distance 1 apart have :math:`D_\\lambda = \\lambda/2`:

    >>> w = np.linspace(-12, 13, 20001)
    >>> lp, lq = -w**2 / 2, -(w - 1) ** 2 / 2
    >>> lp, lq = lp - special.logsumexp(lp), lq - special.logsumexp(lq)
    >>> np.round(renyi_on_grid(lp, lq, [2.0, 5.0]), 9)
    array([1. , 2.5])
    """
    lp, lq = np.asarray(lp, float), np.asarray(lq, float)
    if lp.shape != lq.shape or lp.ndim != 1:
        raise ValueError(f"lp and lq must be 1-d of the same shape; got {lp.shape} and {lq.shape}")
    orders = validation.order(orders, "orders", strict=True).ravel()
    return np.array([special.logsumexp(o * lp + (1 - o) * lq) / (o - 1) for o in orders])


def log_ratio_on_grid(lp: ArrayLike, lq: ArrayLike) -> float:
    """The largest :math:`|\\log p(w) - \\log q(w)|` over a grid: the pure-DP privacy loss there.

    Parameters
    ----------
    lp, lq : array_like, shape (g,)
        Normalised log masses on one grid.
    """
    lp, lq = np.asarray(lp, float), np.asarray(lq, float)
    if lp.shape != lq.shape or lp.ndim != 1:
        raise ValueError(f"lp and lq must be 1-d of the same shape; got {lp.shape} and {lq.shape}")
    return float(np.abs(lp - lq).max())


def _grid(half_width, n_grid):
    half_width = validation.scalar(validation.positive(half_width, "half_width"), "half_width")
    n_grid = validation.integer(n_grid, "n_grid", low=3)
    return np.linspace(-half_width, half_width, n_grid)


def worst_renyi(n: int, beta: float, orders: ArrayLike, rng: np.random.Generator, *, rho: float = 1.0,
                n_pairs: int = 30, c: float = 1.0, half_width: float = 20.0, n_grid: int = 40001) -> np.ndarray:
    """Largest Rényi divergence at each order between the posteriors of random one-dimensional neighbours.

    For each of ``n_pairs`` pairs from :func:`random_neighbours` (label flipped), both
    posteriors :math:`p_{\\beta,\\rho}` of eq. (6) on the grid ``linspace(-half_width,
    half_width, n_grid)`` (:func:`log_posterior_on_grid`) and their divergence at every order
    (:func:`renyi_on_grid`); the largest over the pairs. Theorems 16 and 17 bound it by
    :math:`2c^2\\rho^2\\lambda/(n\\beta)`; in one dimension the gradient difference of the
    theorems' argument is at most :math:`c`, not :math:`2c`, so a quarter of that.

    Parameters
    ----------
    n : int
        Rows per data set.
    beta : float
        Prior precision per row, :math:`(0, \\infty)`.
    orders : array_like, shape (k,)
        Orders, :math:`(1, \\infty)`.
    rng : numpy.random.Generator
        The source of the pairs (advanced).
    rho : float
        Likelihood temperature, :math:`(0, 1]`.
    n_pairs : int
        Random pairs.
    c : float
        Feature bound.
    half_width, n_grid
        The grid of weights; it must hold the posteriors' mass (a posterior of precision at
        least :math:`n\\beta` has standard deviation at most :math:`(n\\beta)^{-1/2}`).

    Returns
    -------
    ndarray, shape (k,)
    """
    n_pairs = validation.integer(n_pairs, "n_pairs")
    orders = validation.order(orders, "orders", strict=True).ravel()
    grid = _grid(half_width, n_grid)
    rng = validation.generator(rng)
    worst = np.zeros(orders.size)
    for _ in range(n_pairs):
        (x, y), (x2, y2) = random_neighbours(n, rng, c=c)
        lp = log_posterior_on_grid(grid, x, y, beta, rho=rho)
        lq = log_posterior_on_grid(grid, x2, y2, beta, rho=rho)
        worst = np.maximum(worst, renyi_on_grid(lp, lq, orders))
    return worst


def worst_log_ratio(n: int, beta: float, rho: float, rng: np.random.Generator, *, n_pairs: int = 100, c: float = 1.0,
                    n_grid: int = 20001) -> float:
    """Largest log density ratio between the OPS posteriors of random one-dimensional neighbours.

    OPS samples :math:`p_{\\beta,\\rho}` with the prior truncated to :math:`|w| \\le c/\\beta`
    (Section 5.2 of Geumlek et al.; :func:`lib.models.logistic_regression.ops_radius`); the grid
    covers that ball with ``n_grid`` points. Each pair comes from :func:`random_neighbours`
    with a random label. Section 5.2 states the privacy loss is at most
    :math:`4c^2\\rho/\\beta`; the span of one row's log-likelihood on the ball gives
    :math:`2c^2\\rho/\\beta`.

    Parameters
    ----------
    n, beta
        As in :func:`worst_renyi`.
    rho : float
        Likelihood temperature, :math:`(0, 1]`.
    rng : numpy.random.Generator
        The source of the pairs (advanced).
    n_pairs, c, n_grid
        Random pairs, the feature bound, grid points on the ball.

    Returns
    -------
    float
    """
    n_pairs = validation.integer(n_pairs, "n_pairs")
    grid = _grid(float(ops_radius(beta, c)), n_grid)
    rng = validation.generator(rng)
    worst = 0.0
    for _ in range(n_pairs):
        (x, y), (x2, y2) = random_neighbours(n, rng, c=c, label="random")
        lp = log_posterior_on_grid(grid, x, y, beta, rho=rho)
        lq = log_posterior_on_grid(grid, x2, y2, beta, rho=rho)
        worst = max(worst, log_ratio_on_grid(lp, lq))
    return worst
