"""Moments of the Dirichlet mechanism's output (Section 2.2).

The mechanism releases :math:`y \\sim \\mathrm{Dirichlet}(r f(x) + \\alpha)`. Write
:math:`a_i = r f_i(x) + \\alpha` for the parameters and
:math:`a_0 = \\sum_i a_i = r N_f + d\\alpha` for their total, where
:math:`N_f = \\sum_i f_i(x)`. Each coordinate :math:`y_i` is
:math:`\\mathrm{Beta}(a_i, a_0 - a_i)`, so its moments are ratios of rising
factorials. The functions below give the mean, the bias of eq. (3) and the
variance that follows it in closed form, and the expected KL loss
:func:`expected_kl_loss` that Section 4 bounds, vectorised over histograms and
over :math:`(r, \\alpha)`. Differences such as :math:`a_0 - a_i` and
:math:`E[y_i] - f_i / N_f` are written out algebraically rather than computed
by subtraction, so no digits are lost to cancellation.

All functions take

counts : array_like, shape (..., d)
    Non-negative finite counts :math:`f(x)` along the last axis, ``d >= 2``.
r : array_like
    Scale :math:`r > 0`, broadcast against the leading axes of ``counts``.
alpha : array_like
    Pseudo-count :math:`\\alpha > 0`, broadcast against the leading axes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation


def _parameters(counts, r, alpha, *, need_total: bool = False):
    """Validate and broadcast; return ``counts, r, alpha, n_f, d`` with ``r``,
    ``alpha`` and ``n_f`` carrying a trailing axis of length one."""
    counts = validation.vectors(counts, "counts", positive_entries=False)
    r = validation.positive(r, "r")
    alpha = validation.positive(alpha, "alpha")
    try:
        batch = np.broadcast_shapes(counts.shape[:-1], r.shape, alpha.shape)
    except ValueError as exc:
        raise ValueError(
            "the leading axes of counts and the shapes of r and alpha must broadcast "
            f"together; got shapes {counts.shape}, {r.shape} and {alpha.shape}"
        ) from exc
    d = counts.shape[-1]
    counts = np.broadcast_to(counts, batch + (d,))
    r = np.broadcast_to(r, batch)[..., None]
    alpha = np.broadcast_to(alpha, batch)[..., None]
    with np.errstate(over="ignore"):
        n_f = counts.sum(axis=-1, keepdims=True)
    if not np.all(np.isfinite(n_f)):
        raise ValueError("counts sum to more than double precision holds along the last axis; rescale them")
    if need_total and np.any(n_f <= 0):
        raise ValueError("counts must have a positive total N_f along the last axis (the bias "
                         "compares y with f(x) / N_f); got a histogram of zeros")
    return counts, r, alpha, n_f, d


def output_mean(counts: ArrayLike, r: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Mean of the mechanism's output, :math:`E[y_i] = (r f_i + \\alpha) / (r N_f + d\\alpha)`.

    The Dirichlet mean :math:`a_i / a_0` (Section 2.2, inside eq. (3)). It is the
    convex combination :math:`w \\tilde f(x) + (1 - w) / d` with
    :math:`w = r N_f / (r N_f + d\\alpha)`: the empirical distribution shrunk
    towards the uniform one.

    Parameters
    ----------
    counts, r, alpha
        See the module docstring.

    Returns
    -------
    ndarray, shape (..., d)
        A probability vector for every histogram.

    Examples
    --------
    >>> output_mean([1, 3], r=1.0, alpha=1.0)
    array([0.33333333, 0.66666667])
    """
    counts, r, alpha, n_f, d = _parameters(counts, r, alpha)
    return (r * counts + alpha) / (r * n_f + d * alpha)


def output_bias(counts: ArrayLike, r: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Signed bias :math:`E[y_i] - \\tilde f_i(x)` of the output, eq. (3).

    .. math::
        E[y_i] - \\frac{f_i(x)}{N_f} = \\frac{\\alpha\\,(N_f - d f_i(x))}{N_f\\,(r N_f + d\\alpha)},

    whose absolute value is eq. (3) of the paper. The sign is that of
    :math:`1/d - \\tilde f_i(x)`: the output is pulled towards uniform.

    Parameters
    ----------
    counts, r, alpha
        See the module docstring; every histogram needs a positive total
        :math:`N_f`.

    Returns
    -------
    ndarray, shape (..., d)
        The bias of every coordinate; it sums to zero along the last axis.

    Examples
    --------
    >>> output_bias([1, 3], r=1.0, alpha=1.0)
    array([ 0.08333333, -0.08333333])
    """
    counts, r, alpha, n_f, d = _parameters(counts, r, alpha, need_total=True)
    return alpha * (n_f - d * counts) / (n_f * (r * n_f + d * alpha))


def output_variance(counts: ArrayLike, r: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Variance of each coordinate of the output (Section 2.2, after eq. (3)).

    .. math::
        \\operatorname{Var}[y_i] = \\frac{(r f_i(x) + \\alpha)\\,(r(N_f - f_i(x)) + (d-1)\\alpha)}
        {(r N_f + d\\alpha)^2\\,(r N_f + d\\alpha + 1)},

    the Dirichlet variance :math:`a_i (a_0 - a_i) / (a_0^2 (a_0 + 1))`; it is
    :math:`O(1/r)` as :math:`r \\to \\infty` and :math:`O(1/\\alpha)` as
    :math:`\\alpha \\to \\infty`.

    Parameters
    ----------
    counts, r, alpha
        See the module docstring; a histogram of zeros is allowed.

    Returns
    -------
    ndarray, shape (..., d)
        :math:`\\operatorname{Var}[y_i]` of every coordinate.

    Examples
    --------
    >>> output_variance([1, 3], r=1.0, alpha=1.0)
    array([0.03174603, 0.03174603])
    """
    counts, r, alpha, n_f, d = _parameters(counts, r, alpha)
    a, total = r * counts + alpha, r * n_f + d * alpha
    rest = r * (n_f - counts) + (d - 1) * alpha
    return a * rest / (total**2 * (total + 1))


#: Largest order of :func:`output_raw_moment` (one pass over the batch per order).
MAX_MOMENT_ORDER = 10_000


def output_raw_moment(counts: ArrayLike, r: ArrayLike, alpha: ArrayLike, k: int) -> np.ndarray:
    """Raw moment :math:`E[y_i^k]` of each coordinate of the output.

    The marginal :math:`y_i \\sim \\mathrm{Beta}(a_i, a_0 - a_i)` has
    :math:`E[y_i^k] = B(a_i + k, a_0 - a_i) / B(a_i, a_0 - a_i)
    = \\prod_{j=0}^{k-1} (a_i + j) / (a_0 + j)`. The first two give
    :func:`output_mean` and :func:`output_variance`; the third and fourth give
    the standard error of a sample variance.

    Parameters
    ----------
    counts, r, alpha
        See the module docstring.
    k : int
        Order, an integer in ``[0, MAX_MOMENT_ORDER]``.

    Returns
    -------
    ndarray, shape (..., d)

    Examples
    --------
    >>> output_raw_moment([1, 3], r=1.0, alpha=1.0, k=2)
    array([0.14285714, 0.47619048])
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise validation.ArgumentTypeError(f"k must be a non-negative integer (at most {MAX_MOMENT_ORDER}); "
                                          f"got {type(k).__name__} {k!r}")
    if not 0 <= k <= MAX_MOMENT_ORDER:
        raise ValueError(f"k must be a non-negative integer, at most {MAX_MOMENT_ORDER}; got {k!r}")
    counts, r, alpha, n_f, d = _parameters(counts, r, alpha)
    a, total = r * counts + alpha, r * n_f + d * alpha
    out = np.ones(a.shape)
    for j in range(int(k)):
        out *= (a + j) / (total + j)
    return out


def expected_kl_loss(counts: ArrayLike, r: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    """Expected KL loss :math:`E\\,D_{KL}(\\tilde f \\,\\|\\, y)` of one Algorithm 1 release.

    For :math:`y \\sim \\mathrm{Dirichlet}(a)` with :math:`a = r f + \\alpha`,
    :math:`E \\log y_i = \\psi(a_i) - \\psi(\\sum_j a_j)` (:math:`\\psi` the digamma
    function), so with :math:`\\tilde f = f / N_f`

    .. math::
        E\\, D_{KL}(\\tilde f \\,\\|\\, y) = \\sum_i \\tilde f_i \\log \\tilde f_i
        - \\sum_i \\tilde f_i \\psi(r f_i + \\alpha) + \\psi(r N_f + d\\alpha),

    the loss that Section 4 of the paper bounds, here in closed form.

    Parameters
    ----------
    counts : array_like, shape (..., d)
        Non-negative counts :math:`f`, ``d >= 2``, not all zero.
    r, alpha : array_like
        Positive scale and pseudo-count, broadcast against ``counts[..., 0]``.

    Returns
    -------
    ndarray or float
        The expected loss, one per histogram / parameter pair.
    """
    counts = validation.vectors(counts, "counts", positive_entries=False)
    total = _finite_totals(counts)
    if np.any(total <= 0):
        raise ValueError("counts must have a positive total along the last axis")
    r = validation.positive(r, "r")
    alpha = validation.positive(alpha, "alpha")
    total, r, alpha = validation.broadcast(total=total, r=r, alpha=alpha)
    psi = special.digamma(r[..., None] * counts + alpha[..., None])
    return _expected_kl(counts, total, r, alpha, psi)[()]


def _finite_totals(counts):
    """The totals of ``counts`` along the last axis; a ValueError if one overflows."""
    with np.errstate(over="ignore"):
        total = counts.sum(axis=-1)
    if not np.all(np.isfinite(total)):
        raise ValueError("counts sum to more than double precision holds along the last axis; rescale them")
    return total


def _expected_kl(counts, total, r, alpha, psi):
    """The closed form of :func:`expected_kl_loss` from ``psi`` :math:`= \\psi(r f_i + \\alpha)`."""
    share = counts / counts.sum(axis=-1, keepdims=True)
    entropy = special.xlogy(share, share).sum(axis=-1)
    return entropy - (share * psi).sum(axis=-1) + special.digamma(r * total + counts.shape[-1] * alpha)


def expected_kl_rows(rows: np.ndarray, r: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """:func:`expected_kl_loss` of ``rows`` (validated, shape (n, d), positive totals) at ``r`` and ``alpha``
    of one shape ``(..., 1)`` (one scale per leading index, the same for every row), shape ``(..., n)``.

    The same operations on the same numbers, value by value, with each
    :math:`\\psi(r f_i + \\alpha)` computed once per distinct count :math:`f_i` of
    ``rows`` (the private tables of a model repeat their counts: Digit's 6410 cells
    hold 332 values), then gathered.
    """
    total = _finite_totals(rows)
    values, inverse = np.unique(rows, return_inverse=True)
    psi = special.digamma(r[..., None] * values + alpha[..., None])  # (..., 1, k): the a of each distinct count
    psi = np.take(psi[..., 0, :], inverse.reshape(rows.shape), axis=-1)  # (..., n, d)
    return _expected_kl(rows, total, r, alpha, psi)
