"""Neighbouring histograms: the pairs that the privacy guarantees quantify over.

Two datasets are neighbours when they differ in one record (Section 2.1). For a
histogram of counts this means one record added, one removed, or one moved from
one bin to another; every such pair has :math:`\\|f - f'\\|_2^2 \\le 2` and
:math:`\\|f - f'\\|_\\infty \\le 1`, the sensitivities Algorithm 1 uses by default.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike


#: Largest array :func:`all_neighbours` builds (about d^3 cells for d bins):
#: 3e7 float64 cells are 240 MB, d up to about 310.
MAX_NEIGHBOUR_CELLS = 3 * 10**7


def all_neighbours(counts: ArrayLike) -> np.ndarray:
    """Every histogram that differs from ``counts`` by one record.

    Parameters
    ----------
    counts : array_like of int, shape (d,)
        Non-negative integer counts, ``d >= 2``.

    Returns
    -------
    ndarray, shape (m, d)
        The ``d`` additions, the removals from non-empty bins and the moves of
        one record from a non-empty bin to another bin, in that order.
    """
    counts = validation.vectors(counts, "counts", positive_entries=False)
    if counts.ndim != 1 or np.any(counts != np.round(counts)):
        raise ValueError("counts must be a one-dimensional vector of whole numbers")
    d = counts.size
    n_rows = d + int(np.count_nonzero(counts)) * d  # d additions, then per non-empty bin 1 removal, d - 1 moves
    if n_rows * d > MAX_NEIGHBOUR_CELLS:
        raise ValueError(
            f"all_neighbours of a histogram with d = {d} bins needs {n_rows} x {d} = {n_rows * d} "
            f"cells; at most {MAX_NEIGHBOUR_CELLS} are allowed (d up to about 310 when every bin "
            "is non-empty); use random_neighbours for larger d")
    eye = np.eye(d)
    nonempty = np.flatnonzero(counts > 0)
    moves = [counts - eye[i] + eye[j] for i in nonempty for j in range(d) if j != i]
    return np.vstack([counts + eye, counts - eye[nonempty], *(np.array(moves).reshape(-1, d),)])


def random_neighbours(n_pairs: int, d: int, *, max_count: int, min_count: int = 0,
                      rng: SeedLike = None) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs of neighbouring histograms.

    Parameters
    ----------
    n_pairs : int
        Number of pairs, at least 1.
    d : int
        Number of bins, at least 2.
    max_count : int
        Counts of the first histogram are uniform on ``[min_count, max_count]``.
    min_count : int, default 0
        A floor that both histograms respect (Remark 2's :math:`b`): a record is
        removed or moved only from a bin above the floor.
    rng : numpy.random.Generator or int or None
        Source of randomness.

    Returns
    -------
    f, f_prime : ndarray, shape (n_pairs, d)
        Each row of ``f_prime`` is ``f`` with one record added, removed or
        moved (each with probability 1/3; an addition where no bin is above
        the floor).
    """
    rng = validation.generator(rng)
    n_pairs = validation.integer(n_pairs, "n_pairs", 1)
    d = validation.integer(d, "d", 2)
    min_count = validation.integer(min_count, "min_count", 0)
    if isinstance(max_count, (bool, np.bool_)) or not isinstance(max_count, (int, np.integer)):
        raise validation.ArgumentTypeError(f"max_count must be an integer in [min_count, inf) = [{min_count}, inf); "
                                          f"got {type(max_count).__name__} {max_count!r}")
    if max_count < min_count:
        raise ValueError(f"max_count must be an integer in [min_count, inf) = [{min_count}, inf); got {max_count!r}")
    validation.cells(n_pairs * d, f"random_neighbours with n_pairs = {n_pairs} and d = {d}")
    f = rng.integers(min_count, max_count, size=(n_pairs, d), endpoint=True).astype(float)
    kind = rng.integers(0, 3, size=n_pairs)  # 0 add, 1 remove, 2 move
    # A bin above the floor to take from, chosen uniformly among those that exist.
    above = f > min_count
    has_source = above.any(axis=1)
    kind[~has_source] = 0
    weights = above / np.maximum(above.sum(axis=1, keepdims=True), 1)
    source = (weights.cumsum(axis=1) < rng.random((n_pairs, 1))).sum(axis=1).clip(max=d - 1)
    target = (source + rng.integers(1, d, size=n_pairs)) % d  # any bin but the source
    add_to = rng.integers(0, d, size=n_pairs)
    rows = np.arange(n_pairs)
    f_prime = f.copy()
    f_prime[rows[kind == 0], add_to[kind == 0]] += 1
    f_prime[rows[kind >= 1], source[kind >= 1]] -= 1
    f_prime[rows[kind == 2], target[kind == 2]] += 1
    return f, f_prime
