"""Sensitivities of a sample statistic by enumeration on a grid of values (Zafarani and Clifton, Section 3).

For samples :math:`x` of :math:`n` values and neighbours that replace one value, the local
sensitivity is :math:`LS_f(x) = \\max_{d(x,y)=1}|f(x) - f(y)|` and the sensitivity at distance
:math:`k` is :math:`A^{(k)}(x) = \\max_{d(x,y)\\le k} LS_f(y)` (their Definitions 3.1 and 3.4).
These functions compute both by brute force, the replacement values taken from a finite grid
(plus, for the local sensitivity, the mean of the other values, where the variance and the
standard deviation reach their smallest value). A grid maximum is a lower bound on the
supremum, exact when the grid holds the maximisers; it is the reference against which the
closed forms and recipes of :mod:`lib.mechanisms.smooth_sensitivity` are checked.
"""

from __future__ import annotations

from typing import Callable

import itertools

import numpy as np
from numpy.typing import ArrayLike

from lib import validation

def _grid(grid) -> np.ndarray:
    g = np.asarray(grid, dtype=float)
    if g.ndim != 1 or g.size == 0 or not np.isfinite(g).all():
        raise ValueError(f"grid must be a non-empty 1-D array of finite values; got shape {g.shape}")
    return g


def _statistic(f):
    if not callable(f):
        raise TypeError(f"f must be a callable statistic f(z, axis=-1); got {type(f).__name__}")
    return f


def local_sensitivity_enumerated(f: Callable[..., np.ndarray], y: ArrayLike, grid: ArrayLike) -> float:
    """Largest change of ``f`` when one value of a sample is replaced by a grid point or the mean of the others.

    Parameters
    ----------
    f : callable
        The statistic, ``f(z, axis=-1)`` over the last axis of an array of samples
        (``numpy.mean``, ``numpy.var``, ``numpy.std``, ...).
    y : array_like (n,) or (m, n)
        One sample of ``n >= 2`` finite values, or a stack of ``m`` samples, all enumerated at once.
    grid : array_like (G,)
        Replacement values.

    Returns
    -------
    float
        :math:`\\max_y LS_f(y)` over the samples given, with the replacements restricted to the
        grid and the others' mean (0 when no replacement changes ``f``).
    """
    f = _statistic(f)
    grid = _grid(grid)
    y = np.atleast_2d(np.asarray(y, dtype=float))
    if y.ndim != 2 or y.shape[-1] < 2 or y.shape[0] == 0 or not np.isfinite(y).all():
        raise ValueError(f"y must be one sample (n,) or samples (m, n) of n >= 2 finite values; got shape {y.shape}")
    n = y.shape[-1]
    others = y[:, [[j for j in range(n) if j != i] for i in range(n)]]          # (m, n, n - 1)
    values = np.concatenate([np.broadcast_to(grid, (*y.shape, len(grid))),       # (m, n, G + 1)
                             others.mean(axis=-1)[..., None]], axis=-1)
    slot = np.arange(n)[:, None, None] == np.arange(n)                          # (n, 1, n): value i replaced
    z = np.where(slot, values[..., None], y[:, None, None, :])                  # (m, n, G + 1, n)
    return max(0.0, float(np.max(np.abs(f(z, axis=-1) - f(y, axis=-1)[:, None, None]))))


def sensitivity_at_distance_enumerated(f: Callable[..., np.ndarray], x: ArrayLike, k: int, grid: ArrayLike) -> float:
    """:math:`A^{(k)}(x)` by enumeration: the largest local sensitivity over every sample within distance ``k``.

    Every choice of at most ``k`` positions of ``x`` and grid values for them is enumerated
    (``x`` itself included), and :func:`local_sensitivity_enumerated` taken over all of them.

    Parameters
    ----------
    f : callable
        The statistic, as in :func:`local_sensitivity_enumerated`.
    x : array_like (n,)
        The sample, ``n >= 2`` finite values.
    k : int
        The distance, at least 0.
    grid : array_like (G,)
        Values of the replaced positions and of the replacements.

    Returns
    -------
    float
        A lower bound on :math:`A^{(k)}(x)`, exact when the grid holds the maximisers.
    """
    f = _statistic(f)
    grid = _grid(grid)
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 2 or not np.isfinite(x).all():
        raise ValueError(f"x must be one sample of n >= 2 finite values; got shape {x.shape}")
    k = validation.integer(k, "k", 0, x.size)
    total = sum(len(list(itertools.combinations(range(x.size), j))) * grid.size ** j for j in range(k + 1))
    validation.cells(total * x.size ** 2 * (grid.size + 1), "the enumeration within distance k",
                     hint="; lower k or use a coarser grid")
    samples = [x[None]]
    for idx in itertools.chain.from_iterable(itertools.combinations(range(x.size), j) for j in range(1, k + 1)):
        y = np.repeat(x[None], grid.size ** len(idx), axis=0)
        y[:, list(idx)] = list(itertools.product(grid, repeat=len(idx)))
        samples.append(y)
    return local_sensitivity_enumerated(f, np.concatenate(samples), grid)
