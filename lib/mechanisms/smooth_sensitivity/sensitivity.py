"""The sensitivities of bounded means, trimmed means and standard deviations (global, local, smooth).

The geometry behind the noise of :mod:`lib.mechanisms.smooth_sensitivity.cauchy`: the
local sensitivity at distance :math:`k` and the :math:`\\beta`-smooth sensitivity
(Nissim, Raskhodnikova and Smith 2007, Definitions 3.3-3.4) of a bounded mean (their
Theorem 4), of a trimmed mean (Bun and Steinke 2019) and of a standard deviation (an
upper bound from the smallest sums of squared deviations of sub-samples, computed in
blocks of distances and kept as a :class:`StdProfile`), the paper's variance recipe,
and the sample's :func:`fingerprint` that keys every cached profile.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from lib import validation


_BLOCK = 512

#: Smallest positive normal double: a sensitivity below it has lost its relative precision.
_TINY = float(np.finfo(float).tiny)


def checked_bounds(lower: float, upper: float) -> tuple[float, float, float]:
    """Scalar bounds ``lower < upper`` whose width ``upper - lower`` is a finite double."""
    lower = validation.scalar(validation.in_range(lower, "lower", -np.inf, np.inf, open_low=True), "lower")
    upper = validation.scalar(validation.in_range(upper, "upper", -np.inf, np.inf, open_low=True), "upper")
    if not upper > lower:
        raise ValueError(f"upper must exceed lower; got lower={lower:g}, upper={upper:g}")
    width = upper - lower
    if not np.isfinite(width):
        raise ValueError(f"upper - lower must be a finite double; got lower={lower:g}, upper={upper:g}")
    return lower, upper, width


def checked_sample(x: ArrayLike, lower: float, upper: float) -> tuple[np.ndarray, float, float]:
    """Sorted float sample and scalar bounds, validated."""
    lower, upper, _ = checked_bounds(lower, upper)
    x = validation.in_range(x, "x", lower, upper, open_low=False, open_high=False)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"x must be a 1-D sample of at least 2 values; got shape {x.shape}")
    return sorted_once(x), lower, upper


def sorted_once(x: np.ndarray) -> np.ndarray:
    """``np.sort(x)`` of a 1-D float array, without sorting again what is already sorted.

    The callers pass sorted samples (every function of this module sorts its
    input, and the models sort each class's column once), and ``np.sort`` of
    sorted doubles costs about a hundred times the check (0.7 ms against 8 us
    at n = 33,000). Already sorted means non-decreasing and without a negative
    zero, whose order next to a positive zero ``np.sort`` leaves open (NaN is
    refused before). The result is the same values in the same order as
    ``np.sort(x)``; it may be ``x`` itself, which no caller writes to.
    """
    if x.size < 2 or (bool(np.all(x[1:] >= x[:-1])) and not np.any(np.signbit(x) & (x == 0.0))):
        return x
    return np.sort(x)


def _unit(x, lower, upper):
    """The sorted sample in units of the width, ``(x - lower) / (upper - lower)`` in ``[0, 1]``.

    The sensitivities of the variance and the standard deviation are computed
    on this scale and multiplied back (by the width or its square): sums of
    squares of raw values would overflow, underflow or cancel (values near
    1e8 in a range of width 1 lose every digit of their variance).
    """
    return np.clip((x - lower) / (upper - lower), 0.0, 1.0)


def _positive(value, what: str, lower, upper):
    """``value`` if every entry is a finite positive normal double; else a ValueError naming the bounds.

    A sensitivity that underflows to 0 (or into the subnormal range, where it
    has lost its relative precision) would give noise of scale 0; one that
    overflows would give infinite noise. Both are refused.
    """
    arr = np.asarray(value, dtype=float)
    if not (np.all(np.isfinite(arr)) and np.all(arr >= _TINY)):
        raise ValueError(f"{what} is not a positive normal double for lower={lower:g}, upper={upper:g} "
                         f"(got {float(np.min(arr)) if np.all(np.isfinite(arr)) else float(np.max(arr)):g}); "
                         "rescale the data so that upper - lower is nearer 1")
    return value


def _beta(beta):
    return validation.scalar(validation.positive(beta, "beta"), "beta")


def fingerprint(kind: str, x: ArrayLike, lower: float, upper: float, *options: object) -> str:
    """A hash of a sorted sample, its bounds and the options of a sensitivity computation.

    The key of a stored profile (:class:`StdProfile`) and of the caches of
    :func:`lib.models.mixed_naive_bayes.fit_statistics`: an entry is found only
    for the sample, bounds and options it was computed for, so a profile or
    cache filled on other data cannot lower the noise of this data.

    Parameters
    ----------
    kind : str
        What is stored (``"std"``, ``"trimmed"``).
    x : ndarray
        The sorted sample, as floats.
    lower, upper : float
    *options
        Further values the stored result depends on (their ``repr`` is hashed).

    Returns
    -------
    str
        A hexadecimal digest (BLAKE2b, 160 bits).

    Notes
    -----
    What is hashed after the bounds, shape and options is an encoding of the
    values that determines them bit for bit: the values themselves, or, when
    runs of equal values (equal bit patterns) make it shorter, the number of
    runs, the index where each run starts and its value. The book's samples
    are sorted integer-valued attributes with a few dozen runs in tens of
    thousands of values, whose hash then costs a comparison pass rather than
    hashing every value (0.3 ms at n = 33,000). The encoding is marked in the
    hashed header, so no sample of one kind collides with one of the other.
    """
    v = np.ascontiguousarray(x, dtype=np.float64).ravel()
    bits = v.view(np.int64)
    starts = np.flatnonzero(bits[1:] != bits[:-1]) + 1      # where a run of equal bit patterns starts (after 0)
    h = hashlib.blake2b(digest_size=20)
    if 2 * (starts.size + 1) < v.size:
        h.update(repr((kind, float(lower), float(upper), np.shape(x), options, "runs", starts.size + 1)).encode())
        h.update(starts.astype(np.int64).tobytes())
        h.update(v[np.concatenate([[0], starts])].tobytes())
    else:
        h.update(repr((kind, float(lower), float(upper), np.shape(x), options)).encode())
        h.update(v.tobytes())
    return h.hexdigest()


class StdProfile(NamedTuple):
    """The profile :math:`\\hat A^{(0)}, \\hat A^{(1)}, \\ldots` of :func:`smooth_sensitivity_std_profile`.

    Attributes
    ----------
    key : str
        :func:`fingerprint` of the sample, bounds, ``resolution`` and
        ``max_distance`` it was computed for; a profile is accepted only for
        the same ones.
    values : ndarray
        :math:`\\hat A^{(k)}`, :math:`k = 0, 1, \\ldots`, in units of ``upper - lower``.
    """

    key: str
    values: np.ndarray


# --------------------------------------------------------------------------- mean
def global_sensitivity_mean(n: int, lower: float, upper: float) -> float:
    """Global sensitivity :math:`(U - L)/n` of the mean of :math:`n` values in :math:`[L, U]`.

    Raises
    ------
    ValueError
        If ``upper <= lower``, a bound is not finite, or the result is not a
        positive normal double (a width so small that the sensitivity underflows).
    """
    n = validation.integer(n, "n", 1)
    lower, upper, width = checked_bounds(lower, upper)
    return float(_positive(width / n, "the global sensitivity of the mean", lower, upper))


def local_sensitivity_mean(x: ArrayLike, lower: float, upper: float) -> float:
    """:math:`LS(x) = \\max(U - x_{(1)}, x_{(n)} - L)/n` for the mean (replace one value by a bound)."""
    x, lower, upper = checked_sample(x, lower, upper)
    return _local_mean(x, lower, upper)


def _local_mean(x, lower, upper):
    """:func:`local_sensitivity_mean` of a checked sorted sample (:func:`checked_sample`)."""
    return float(_positive(max(upper - x[0], x[-1] - lower) / x.size, "the local sensitivity of the mean",
                           lower, upper))


def smooth_sensitivity_mean(x: ArrayLike, lower: float, upper: float, beta: float) -> float:
    """:math:`\\beta`-smooth sensitivity of the mean of a bounded sample (Zafarani-Clifton Theorem 4).

    One replaced value can sit at a bound, after which the next replacement
    moves the mean by the full :math:`(U - L)/n`; so :math:`A^{(k)} = (U-L)/n`
    for :math:`k \\ge 1` and
    :math:`S^* = \\max(LS(x), e^{-\\beta}(U - L)/n)` -- in :math:`O(n)`, not the
    :math:`O(n^2)` of Theorem 4.

    Examples
    --------
    >>> round(smooth_sensitivity_mean([2.0, 3.0, 4.0], 0.0, 10.0, 0.5), 6)
    2.666667
    """
    beta = _beta(beta)
    x, lower, upper = checked_sample(x, lower, upper)
    return smooth_sensitivity_mean_sorted(x, lower, upper, beta)


def smooth_sensitivity_mean_sorted(x: np.ndarray, lower: float, upper: float, beta: float) -> float:
    """:func:`smooth_sensitivity_mean` of a checked sorted sample (:func:`checked_sample`) and a checked ``beta``."""
    return float(_positive(max(_local_mean(x, lower, upper), np.exp(-beta) * (upper - lower) / x.size),
                           "the smooth sensitivity of the mean", lower, upper))


# ------------------------------------------------------------------ trimmed mean
def trimmed_mean(x: ArrayLike, m: int) -> float:
    """Mean of the sorted sample without its ``m`` smallest and ``m`` largest values (Definition 4.1)."""
    x = validation.in_range(x, "x", -np.inf, np.inf, open_low=True)
    if x.ndim != 1 or x.size < 1:
        raise ValueError(f"x must be a non-empty 1-D sample; got shape {x.shape}")
    m = validation.integer(m, "m", 0)
    if 2 * m >= x.size:
        raise ValueError(f"m must be below n/2 = {x.size / 2:g}; got {m}")
    return float(sorted_once(x)[m:x.size - m].mean())


def trimmed_mean_sensitivity_at_distance(x: ArrayLike, lower: float, upper: float, m: int, k: ArrayLike) -> np.ndarray:
    """:math:`A^{(k)}(x)` of the ``m``-trimmed mean (Bun and Steinke 2019; checked against enumeration in the tests).

    With the sorted sample extended by :math:`x_{(i)} = L` for :math:`i \\le 0`
    and :math:`x_{(i)} = U` for :math:`i > n`,
    :math:`A^{(k)}(x) = \\max_{0 \\le l \\le k+1} (x_{(n-m+1+k-l)} - x_{(m+1-l)})/(n - 2m)`.
    A term with :math:`l > m + 1` has the same lower end :math:`L` as
    :math:`l = m + 1` and a lower upper end, so :math:`l \\le m + 1` suffices;
    from :math:`k = 2m + 1` on, :math:`l = m + 1` reaches from :math:`L` to
    :math:`U` and :math:`A^{(k)} = (U - L)/(n - 2m)`. Vectorised over ``k``
    (:math:`O(m)` passes, memory linear in the number of ``k``).

    Parameters
    ----------
    x : array_like, shape (n,)
        The sample, every value in ``[lower, upper]``.
    lower, upper : float
        Public bounds.
    m : int
        Values trimmed at each end, :math:`0 \\le 2m < n`.
    k : int or array_like of int
        Distances, non-negative.

    Returns
    -------
    ndarray
        :math:`A^{(k)}` with the shape of ``k`` (at least 1-D).
    """
    x, lower, upper = checked_sample(x, lower, upper)
    n = x.size
    m = validation.integer(m, "m", 0)
    if 2 * m >= n:
        raise ValueError(f"m must be below n/2 = {n / 2:g}; got {m}")
    k = np.atleast_1d(np.asarray(k))
    if k.dtype.kind not in "iu":
        raise validation.ArgumentTypeError(f"k must hold non-negative integers; got dtype {k.dtype}")
    if k.size == 0 or k.min() < 0:
        raise ValueError("k must hold at least one distance, every one a non-negative integer")
    kc = np.minimum(k, 2 * m + 1).astype(np.int64)   # A^(k) is constant from k = 2m + 1 on
    return _trimmed_profile(x, lower, upper, m, int(kc.max()) + 1)[kc] / (n - 2 * m)


def _trimmed_profile(x, lower, upper, m, size):
    """:math:`(n - 2m) A^{(k)}` of the ``m``-trimmed mean for :math:`k = 0, \\ldots,` ``size - 1``.

    The maximum over :math:`l \\le \\min(k + 1, m + 1)` of
    :math:`x_{(n-m+1+k-l)} - x_{(m+1-l)}` (extended order statistics, see
    :func:`trimmed_mean_sensitivity_at_distance`). Only the :math:`l` that
    start a run of equal lower ends :math:`x_{(m+1-l)}` are evaluated: within a
    run the lower end is the same and the upper end is largest at the run's
    first :math:`l` (the order statistics are sorted, and rounding the
    difference is monotone), which is allowed whenever a later :math:`l` of the
    run is. The maximum over these :math:`l` is therefore the same double as
    over all of them. Each :math:`l` updates the :math:`k \\ge l - 1` it
    reaches with one contiguous slice: :math:`O(R \\cdot m)` work for
    :math:`R \\le m + 2` runs (a few dozen on the book's integer-valued data).
    """
    n = x.size
    ext = np.concatenate([[lower], x, np.full(size + 1, upper)])   # ext[i] = x_(i), L below 1, U above n
    low = ext[m + 1::-1]                                           # low[l] = x_(m+1-l), l = 0 .. m+1
    starts = np.flatnonzero(np.concatenate([[True], low[1:] != low[:-1]]))
    out = np.full(size, -np.inf)
    top = n - m + 1                                                # upper end of l = 0, k = 0
    for ell in starts.tolist():
        k0 = max(ell - 1, 0)
        if k0 >= size:
            break
        seg = out[k0:]
        np.maximum(seg, ext[top + k0 - ell:top + size - ell] - low[ell], out=seg)
    return out


def smooth_sensitivity_trimmed_mean(x: ArrayLike, lower: float, upper: float, m: int, beta: float) -> float:
    """:math:`\\beta`-smooth sensitivity of the ``m``-trimmed mean (Bun and Steinke 2019).

    :math:`\\max_k e^{-k\\beta} A^{(k)}(x)` with
    :func:`trimmed_mean_sensitivity_at_distance`. :math:`A^{(k)}` is constant
    from :math:`k = 2m + 1` on (it reaches from :math:`L` to :math:`U` there,
    not before in general: ``x = (2, 2, 3, 3, 3, 4)`` on :math:`[0, 6]` with
    :math:`m = 1` has :math:`A^{(2)} = 1 < A^{(3)} = 1.5`), so the maximum runs
    over :math:`k \\le 2m + 1` (:math:`O(m^2)` work).

    Raises
    ------
    ValueError
        On bad input, or if the result is not a positive normal double (a
        width or a ``beta`` so extreme that it underflows).
    """
    beta = _beta(beta)
    x, lower, upper = checked_sample(x, lower, upper)
    ks = np.arange(2 * validation.integer(m, "m", 0) + 2)
    a = trimmed_mean_sensitivity_at_distance(x, lower, upper, m, ks)
    return float(_positive(np.max(np.exp(-beta * ks) * a), "the smooth sensitivity of the trimmed mean",
                           lower, upper))


# ------------------------------------------------------- variance and std
def global_sensitivity_std(n: int, lower: float, upper: float) -> float:
    """Global sensitivity :math:`(U-L)\\sqrt{n-1}/n` of the population standard deviation.

    Centring is a projection, so replacing one value by :math:`\\Delta` moves the
    centred vector by at most :math:`|\\Delta|\\sqrt{(n-1)/n}`; equality when all
    other values sit at one bound.

    Raises
    ------
    ValueError
        If ``upper <= lower``, a bound is not finite, or the result is not a
        positive normal double.
    """
    n = validation.integer(n, "n", 2)
    lower, upper, width = checked_bounds(lower, upper)
    return float(_positive(width * (np.sqrt(n - 1.0) / n), "the global sensitivity of the standard deviation",
                           lower, upper))


def local_sensitivity_variance(x: ArrayLike, lower: float, upper: float) -> float:
    """Local sensitivity of the population variance, exactly.

    Replacing :math:`x_i` by :math:`v` changes the variance by
    :math:`\\frac{n-1}{n^2}[(v - \\mu_{-i})^2 - (x_i - \\mu_{-i})^2]`
    (:math:`\\mu_{-i}` the mean of the others), so the extreme :math:`v` are
    :math:`L`, :math:`U` and :math:`\\mu_{-i}`. Computed in units of
    :math:`U - L` and multiplied by :math:`(U - L)^2`.
    """
    x, lower, upper = checked_sample(x, lower, upper)
    u = _unit(x, lower, upper)
    n = u.size
    mu = (u.sum() - u) / (n - 1)
    d_far = np.maximum(1.0 - mu, mu) ** 2
    d_now = (u - mu) ** 2
    unit = float((n - 1) / n**2 * np.max(np.maximum(d_far - d_now, d_now)))
    width = upper - lower
    with np.errstate(over="ignore", under="ignore"):
        value = unit * width * width
    return float(_positive(value, "the local sensitivity of the variance", lower, upper))


def local_sensitivity_std(x: ArrayLike, lower: float, upper: float) -> float:
    """Local sensitivity of the population standard deviation, exactly (same extreme :math:`v`).

    With :math:`\\mathrm{SSD}_{-i} = \\mathrm{SSD} - \\frac{n}{n-1}(x_i - \\bar x)^2`
    the others' sum of squared deviations, replacing :math:`x_i` by :math:`v`
    gives :math:`n\\,\\mathrm{sd}^2 = \\mathrm{SSD}_{-i} + \\frac{n-1}{n}(v - \\mu_{-i})^2`;
    the largest change is at :math:`v \\in \\{L, U, \\mu_{-i}\\}`. Computed on
    centred values in units of :math:`U - L` (raw sums of squares cancel or
    overflow) and multiplied by :math:`U - L`.
    """
    x, lower, upper = checked_sample(x, lower, upper)
    u = _unit(x, lower, upper)
    n = u.size
    z = u - u.mean()
    ssd = float(np.dot(z, z))
    ssd_rest = np.maximum(ssd - n / (n - 1) * z * z, 0.0)
    # The identity cancels only where one value carries almost all of the SSD, which is then the
    # smallest or the largest (a value with others on both sides has SSD_{-i} >= z_i^2 / 2):
    # recompute those two directly (u is sorted).
    for i, rest in ((0, u[1:]), (n - 1, u[:-1])):
        r = rest - rest.mean()
        ssd_rest[i] = float(np.dot(r, r))
    mu = (u.sum() - u) / (n - 1)
    sd = np.sqrt(ssd / n)
    c = (n - 1) / n
    far = np.sqrt((ssd_rest + c * np.maximum(1.0 - mu, mu) ** 2) / n)
    near = np.sqrt(ssd_rest / n)
    unit = float(np.max(np.maximum(far - sd, sd - near)))
    return float(_positive(unit * (upper - lower), "the local sensitivity of the standard deviation", lower, upper))


def _runs_candidates(x):
    """Start and end indices (inclusive) of the runs of equal values of sorted ``x``."""
    change = np.flatnonzero(np.diff(x) != 0)
    starts = np.concatenate([[0], change + 1])
    ends = np.concatenate([change, [x.size - 1]])
    return starts, ends


def min_ssd_windows(x: ArrayLike, sizes: ArrayLike) -> np.ndarray:
    """Smallest sum of squared deviations over sub-samples of each size, :math:`M_w(x)`.

    A sub-sample of minimal variance of a given size is a run of consecutive
    order statistics (Zafarani-Clifton Theorem 6). Sliding a window while its
    two ends stay inside runs of equal values changes the sum linearly and the
    sum of squares linearly, so the SSD is concave along the slide and its
    minimum sits where an end meets a run boundary: only windows that start at
    a run start or end at a run end are evaluated (:math:`O(D)` per size for
    :math:`D` distinct values); with few ties (:math:`16D \\ge n`) every window is
    scanned instead, which is cheaper then. Values are centred at the median before the
    prefix sums; the result is clipped at 0 (rounding can only make it smaller,
    which makes the bound of :func:`smooth_sensitivity_std` larger).

    Parameters
    ----------
    x : array_like, shape (n,)
        Sorted sample of finite values.
    sizes : array_like of int
        Window sizes :math:`w \\in [1, n]`.

    Returns
    -------
    ndarray, shape (len(sizes),)
    """
    x = validation.in_range(x, "x", -np.inf, np.inf, open_low=True)
    if x.ndim != 1 or x.size < 1:
        raise ValueError(f"x must be a non-empty 1-D sample; got shape {x.shape}")
    if np.any(np.diff(x) < 0):
        raise ValueError("x must be sorted in increasing order")
    sizes = np.atleast_1d(np.asarray(sizes))
    if sizes.dtype.kind not in "iu" or sizes.ndim != 1:
        raise validation.ArgumentTypeError(f"sizes must be a 1-D array of integers; got {sizes.dtype} {sizes.shape}")
    if sizes.size and (sizes.min() < 1 or sizes.max() > x.size):
        raise ValueError(f"sizes must be window sizes in [1, {x.size}]; got {sizes.min()} .. {sizes.max()}")
    return _min_ssd_windows(x, sizes.astype(np.int64))


def _min_ssd_windows(x, sizes):
    """:func:`min_ssd_windows` of a checked sorted float sample and checked int64 sizes."""
    return _windows_min(_windows(x), sizes)


def _windows(x):
    """What :func:`_min_ssd_windows` needs of a sorted sample for any sizes: prefix sums and runs.

    Computed once per sample by :func:`smooth_sensitivity_std_profile_sorted`, which asks for the
    sizes block by block.
    """
    n = x.size
    xc = x - x[n // 2]
    c1 = np.concatenate([[0.0], np.cumsum(xc)])
    c2 = np.concatenate([[0.0], np.cumsum(xc * xc)])
    starts, ends = _runs_candidates(x)
    return n, c1, c2, starts, ends


def _windows_min(windows, sizes):
    """:func:`_min_ssd_windows` for ``sizes`` from the :func:`_windows` of the sample."""
    n, c1, c2, starts, ends = windows
    if 16 * starts.size >= n:
        # Few ties: gathering 2D candidates costs more than slicing all windows (measured), so slice.
        out = np.empty(len(sizes))
        for i, w in enumerate(sizes):
            s = c1[w:] - c1[:-w]
            out[i] = np.min((c2[w:] - c2[:-w]) - s * s / w)
        return np.maximum(out, 0.0)
    w = sizes[:, None]
    cand = np.concatenate([np.broadcast_to(starts, (w.shape[0], starts.size)), ends[None, :] - w + 1], axis=1)
    cand = np.clip(cand, 0, n - w)
    s = c1[cand + w] - c1[cand]
    q = c2[cand + w] - c2[cand]
    return np.maximum(np.min(q - s * s / w.astype(np.float64), axis=1), 0.0)   # as above: the same quotients


def _h_unit(n, ssd):
    """:func:`std_sensitivity_bound` for :math:`W = 1` (``ssd`` in units of :math:`W^2`), a stable form."""
    c = (n - 1) / n
    ssd = np.asarray(ssd, dtype=float)
    return c / n / (np.sqrt((ssd + c) / n) + np.sqrt(ssd / n))


def std_sensitivity_bound(n: int, lower: float, upper: float, ssd: ArrayLike) -> np.ndarray:
    """:math:`h(s) = \\sqrt{(s + cW^2)/n} - \\sqrt{s/n}`, :math:`c = (n-1)/n`, :math:`W = U - L`.

    Bounds the change of the standard deviation when one value is replaced, if
    the others have sum of squared deviations at least :math:`s`; decreasing in
    :math:`s`, with :math:`h(0)` the global sensitivity. Evaluated as
    :math:`W\\,h_1(s/W^2)` with :math:`h_1` the same function for :math:`W = 1`.

    Parameters
    ----------
    n : int
        Sample size, at least 2.
    lower, upper : float
        Public bounds, ``lower < upper``.
    ssd : array_like
        :math:`s \\ge 0`, finite.

    Returns
    -------
    ndarray
    """
    n = validation.integer(n, "n", 2)
    lower, upper, width = checked_bounds(lower, upper)
    ssd = validation.nonnegative(ssd, "ssd")
    with np.errstate(over="ignore"):
        unit = _h_unit(n, ssd / width / width)
    return _positive(width * unit, "the bound h(ssd) on the sensitivity of the standard deviation", lower, upper)


def _at_distance_unit(u, ks, resolution):
    """:math:`\\hat A^{(k)}` of a sorted sample ``u`` in ``[0, 1]`` (units of the width), checked ``ks``."""
    return _at_distance_windows(_unit_windows(u, resolution), ks, resolution)


def _unit_windows(u, resolution):
    """The :func:`_windows` of ``u``, or of ``u`` rounded down to the grid of ``resolution`` cells."""
    if resolution is None:
        return _windows(u)
    q = 1.0 / resolution
    return _windows(q * np.floor(u / q))


def _at_distance_windows(windows, ks, resolution):
    """:func:`_at_distance_unit` from the :func:`_unit_windows` of the sample (computed once per sample)."""
    n = windows[0]
    w = np.maximum(n - 1 - ks, 1)
    if resolution is None:
        m = _windows_min(windows, w)
    else:
        q = 1.0 / resolution
        m = np.maximum(np.sqrt(_windows_min(windows, w)) - q * np.sqrt(n), 0.0) ** 2
    return _h_unit(n, m)


def _resolution(resolution):
    return None if resolution is None else validation.integer(resolution, "resolution", 1)


def distance_cap(n: int, max_distance: int | None) -> int:
    """:math:`K` of :func:`smooth_sensitivity_std`: ``max_distance`` capped at ``n`` (None is ``n``)."""
    return n if max_distance is None else min(n, validation.integer(max_distance, "max_distance", 0))


def std_profile_key(x: ArrayLike, lower: float, upper: float, *, resolution: int | None = None,
                    max_distance: int | None = None) -> str:
    """The :attr:`StdProfile.key` of the profile of ``x`` with these bounds and options.

    For callers that keep profiles in a dictionary (the cache of
    :func:`lib.models.mixed_naive_bayes.fit_statistics`): keyed by this value, a
    profile is found only for the sample and options it was computed for.
    """
    x, lower, upper = checked_sample(x, lower, upper)
    return fingerprint("std", x, lower, upper, _resolution(resolution), distance_cap(x.size, max_distance))


def _distances(k):
    """Distances ``k`` as a 1-D int64 array of non-negative integers."""
    k = np.atleast_1d(np.asarray(k))
    if k.dtype.kind not in "iu" or k.ndim != 1:
        raise validation.ArgumentTypeError(f"k must be a non-negative integer or a 1-D array of them; got "
                                          f"{k.dtype} {k.shape}")
    if k.size == 0 or k.min() < 0:
        raise ValueError("k must hold at least one distance, every one a non-negative integer")
    return k.astype(np.int64)


def std_sensitivity_at_distance(x: ArrayLike, lower: float, upper: float, k: ArrayLike, *,
                                resolution: int | None = None) -> np.ndarray:
    """Upper bound :math:`\\hat A^{(k)}(x) = h(M_{n-1-k}(x)) \\ge A^{(k)}(x)` for the standard deviation.

    Why it bounds :math:`A^{(k)}`: replacing :math:`y_i` by :math:`v` gives
    :math:`n\\,\\mathrm{sd}^2 = \\mathrm{SSD}_{-i} + \\frac{n-1}{n}(v-\\mu_{-i})^2`,
    so :math:`LS(y) \\le h(\\min_i \\mathrm{SSD}_{-i}(y))`
    (:func:`std_sensitivity_bound`). Removing a value never increases an SSD, so
    any :math:`(n-1)`-sub-sample of a :math:`y` within distance :math:`k` has
    SSD at least :math:`M_{n-1-k}(x)` (:func:`min_ssd_windows`), and
    :math:`h` is decreasing. The same argument gives
    :math:`\\hat A^{(k)}(y) \\le \\hat A^{(k+1)}(x)` for neighbours, which makes
    :math:`\\max_k e^{-k\\beta}\\hat A^{(k)}` a :math:`\\beta`-smooth upper bound
    (the argument NRS use for their smooth bounds). Vectorised over ``k``.

    With ``resolution`` :math:`R`, :math:`M_w(x)` is replaced by the lower bound
    :math:`(\\sqrt{M_w(\\tilde x)} - q\\sqrt n)_+^2`, where
    :math:`\\tilde x = L + q\\lfloor (x - L)/q \\rfloor` and :math:`q = (U-L)/R`
    (rounding moves a centred window by at most :math:`q\\sqrt w` in
    :math:`\\ell_2`; the penalty :math:`q\\sqrt n` does not depend on :math:`w`,
    so the neighbour property survives). Then at most :math:`R + 1` distinct
    values enter :func:`min_ssd_windows`: fast on continuous data.

    Computed in units of :math:`U - L` (the bound is homogeneous of degree 1)
    and multiplied by :math:`U - L`.
    """
    x, lower, upper = checked_sample(x, lower, upper)
    ks = _distances(k)
    unit = _at_distance_unit(_unit(x, lower, upper), ks, _resolution(resolution))
    return _positive(unit * (upper - lower), "the sensitivity bound of the standard deviation", lower, upper)


def smooth_sensitivity_std(x: ArrayLike, lower: float, upper: float, beta: float, *, resolution: int | None = None,
                           max_distance: int | None = None) -> float:
    """:math:`\\beta`-smooth upper bound on the local sensitivity of the standard deviation.

    :math:`S(x) = \\max_{0 \\le k \\le K} e^{-k\\beta}\\hat A^{(k)}(x)` with
    :func:`std_sensitivity_at_distance`, and :math:`e^{-(K+1)\\beta}` times the
    global sensitivity if :math:`K` (``max_distance``) is below :math:`n`:
    setting :math:`\\hat A^{(k)}` to the global sensitivity for every
    :math:`k > K` keeps both properties of a smooth bound for any public
    :math:`K`. The loop over :math:`k` stops once :math:`e^{-k\\beta}` times the
    global sensitivity is below the running maximum (no later term can exceed
    it), so the work is :math:`O(\\min(K, \\log(GS/S)/\\beta) \\cdot D)` for
    :math:`D` distinct values, not the :math:`O(n^2)` of a scan over every
    window of every size.

    Parameters
    ----------
    x, lower, upper
        The sample, an array of shape (n,), and its public bounds (floats),
        ``lower <= x <= upper``.
    beta : float
        Smoothing parameter, in :math:`(0, \\infty)`.
    resolution : int, optional
        Round to a grid of this many cells first (see
        :func:`std_sensitivity_at_distance`); None computes exactly.
    max_distance : int, optional
        :math:`K`; None is :math:`n` (exact).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On bad input, or if the bound is not a positive normal double.

    Examples
    --------
    >>> x = np.linspace(0.0, 1.0, 101)
    >>> s = smooth_sensitivity_std(x, 0.0, 1.0, 0.5)
    >>> bool(local_sensitivity_std(x, 0.0, 1.0) <= s < global_sensitivity_std(101, 0.0, 1.0))
    True
    """
    return smooth_sensitivity_std_profile(x, lower, upper, beta, resolution=resolution,
                                          max_distance=max_distance)[0]


def smooth_sensitivity_std_profile(x: ArrayLike, lower: float, upper: float, beta: float,
                                   profile: StdProfile | None = None, *,
                                   resolution: int | None = None,
                                   max_distance: int | None = None) -> tuple[float, StdProfile]:
    """:func:`smooth_sensitivity_std` and the profile :math:`\\hat A^{(0)}, \\hat A^{(1)}, \\ldots` it used.

    The profile does not depend on :math:`\\beta`: pass it back (with the same
    ``x``, bounds, ``resolution`` and ``max_distance``) to get the bound for
    another :math:`\\beta` without recomputing; it is extended only as far as
    the new :math:`\\beta` needs. A profile carries the :func:`fingerprint` of
    the sample, bounds and options it was computed for and is refused for any
    other (a profile of other data could give a smaller bound than this data
    needs); its values must be finite and non-negative.

    Parameters
    ----------
    x, lower, upper, beta, resolution, max_distance
        As :func:`smooth_sensitivity_std`.
    profile : StdProfile, optional
        Returned by an earlier call with the same ``x``, bounds, ``resolution``
        and ``max_distance``.

    Returns
    -------
    float, StdProfile

    Raises
    ------
    TypeError
        If ``profile`` is not a :class:`StdProfile`.
    ValueError
        If ``profile`` was computed for another sample, other bounds or other
        options, or holds a value that is not finite and non-negative.
    """
    beta = _beta(beta)
    x, lower, upper = checked_sample(x, lower, upper)
    resolution = _resolution(resolution)
    last = distance_cap(x.size, max_distance)
    return smooth_sensitivity_std_profile_sorted(x, lower, upper, beta, profile, fingerprint("std", x, lower, upper, resolution, last),
                        resolution, last)


def smooth_sensitivity_std_profile_sorted(x: np.ndarray, lower: float, upper: float, beta: float,
                                          profile: StdProfile | None, key: str, resolution: int | None,
                                          last: int) -> tuple[float, StdProfile]:
    """:func:`smooth_sensitivity_std_profile` of a checked sorted sample whose :func:`fingerprint` is ``key``.

    For a caller that has already checked ``x`` (:func:`checked_sample`), ``beta``,
    ``resolution`` and ``last`` (:func:`distance_cap`) and computed ``key``, so that
    the sample is hashed once: ``profile`` is still refused unless it carries
    ``key``.
    """
    n = x.size
    if profile is None:
        prof = np.empty(0)
    else:
        if not isinstance(profile, StdProfile):
            raise validation.ArgumentTypeError(f"profile must be a StdProfile returned by "
                                              f"smooth_sensitivity_std_profile; got {type(profile).__name__}")
        if profile.key != key:
            raise ValueError("profile was computed for another sample, other bounds or another resolution or "
                             "max_distance; pass the profile returned for this x and these options (or None)")
        prof = validation.nonnegative(profile.values, "profile.values")
        if prof.ndim != 1:
            raise ValueError(f"profile.values must be 1-D; got shape {prof.shape}")
    u = _unit(x, lower, upper)
    gs = float(_h_unit(n, 0.0))
    tail = float(np.exp(-beta * (last + 1)) * gs) if last < n else 0.0
    windows = None          # prefix sums and runs of the (rounded) sample, once for every block
    while True:
        k0 = prof.size
        best = max(tail, float(np.max(np.exp(-beta * np.arange(k0)) * prof))) if k0 else tail
        if k0 > last or best >= np.exp(-beta * k0) * gs:
            value = _positive(best * (upper - lower), "the smooth sensitivity of the standard deviation",
                              lower, upper)
            return float(value), StdProfile(key, prof)
        ks = np.arange(k0, min(k0 + _BLOCK, last + 1))
        windows = _unit_windows(u, resolution) if windows is None else windows
        prof = np.concatenate([prof, _at_distance_windows(windows, ks, resolution)])


def smooth_sensitivity_std_naive(x: ArrayLike, lower: float, upper: float, beta: float) -> float:
    """Same bound as :func:`smooth_sensitivity_std`, by scanning every window of every size.

    The quadratic computation a direct reading of Theorem 7 suggests (all
    :math:`n - w + 1` windows for each of the :math:`n` sizes, no early stop);
    kept for the tests and the benchmark. In units of :math:`U - L`, as the fast path.
    """
    beta = _beta(beta)
    x, lower, upper = checked_sample(x, lower, upper)
    u = _unit(x, lower, upper)
    n = u.size
    xc = u - u[n // 2]
    c1 = np.concatenate([[0.0], np.cumsum(xc)])
    c2 = np.concatenate([[0.0], np.cumsum(xc * xc)])
    best = 0.0
    for k in range(n + 1):
        w = max(n - 1 - k, 1)
        s = c1[w:] - c1[:-w]
        q = c2[w:] - c2[:-w]
        m = max(float(np.min(q - s * s / w)), 0.0)
        best = max(best, float(np.exp(-beta * k) * _h_unit(n, m)))
    return float(_positive(best * (upper - lower), "the smooth sensitivity of the standard deviation",
                           lower, upper))


# ------------------------------------------------- the paper's variance recipe
def _subset_args(x, k):
    """Sorted finite 1-D sample and a subset size ``k`` in ``[1, n]``."""
    x = validation.in_range(x, "x", -np.inf, np.inf, open_low=True)
    if x.ndim != 1 or x.size < 1:
        raise ValueError(f"x must be a non-empty 1-D sample; got shape {x.shape}")
    return np.sort(x), validation.integer(k, "k", 1, x.size)


def max_variance_subset(x: ArrayLike, k: int) -> np.ndarray:
    """Zafarani-Clifton Theorem 5: the ``k``-subset of largest variance, among the ``i`` smallest plus ``k - i`` largest."""
    x, k = _subset_args(x, k)
    best = None
    for i in range(k + 1):
        sub = np.concatenate([x[:i], x[x.size - (k - i):]])
        if best is None or sub.var() > best.var():
            best = sub
    return best


def min_variance_subset(x: ArrayLike, k: int) -> np.ndarray:
    """Zafarani-Clifton Theorem 6: the ``k``-subset of smallest variance, a run of consecutive order statistics."""
    x, k = _subset_args(x, k)
    variances = [x[i:i + k].var() for i in range(x.size - k + 1)]
    i = int(np.argmin(variances))
    return x[i:i + k]


def paper_sensitivity_at_distance(x: ArrayLike, lower: float, upper: float, k: int,
                                  statistic: str = "variance") -> float:
    """:math:`A^{(k)}` by the recipe of Zafarani-Clifton's proof of Theorem 7.

    Candidates at distance :math:`k`: (a) every window of :math:`k` consecutive
    order statistics with :math:`t` of them moved to :math:`L` and :math:`k - t`
    to :math:`U`; (b) the :math:`t` smallest and :math:`k - t` largest moved to
    the mean of the rest. The recipe's value is the largest local sensitivity
    among these candidates, of the variance (Theorem 7) or of the standard
    deviation (what Algorithm 1, line 17, asks for). Quadratic in :math:`n` per
    :math:`k`; for checking the recipe only.
    """
    if statistic not in ("variance", "std"):
        raise ValueError(f"statistic must be 'variance' or 'std'; got {statistic!r}")
    local = local_sensitivity_variance if statistic == "variance" else local_sensitivity_std
    x, lower, upper = checked_sample(x, lower, upper)
    k = validation.integer(k, "k", 0)
    if k == 0:
        return local(x, lower, upper)
    best = 0.0
    for _, y in _paper_candidates(x, lower, upper, k):
        best = max(best, local(y, lower, upper))
    return best


def _paper_candidates(x, lower, upper, k):
    """The candidate samples at distance ``k >= 1`` of the proof of Zafarani-Clifton's Theorem 7.

    Yields ``(to_bounds, y)``: first, with ``to_bounds`` true, every window of
    ``k`` consecutive order statistics with ``t`` of them moved to ``lower``
    and ``k - t`` to ``upper``; then, with ``to_bounds`` false, the ``t``
    smallest and ``k - t`` largest moved to the mean of the rest. Raises
    ValueError (on the first draw) unless ``k`` is below ``n``.
    """
    n = x.size
    if k >= n:
        raise ValueError(f"k must be below n = {n}; got {k}")
    for start in range(n - k + 1):
        for t in range(k + 1):
            y = x.copy()
            y[start:start + t] = lower
            y[start + t:start + k] = upper
            yield True, y
    for t in range(k + 1):
        rest = x[t:n - (k - t)]
        y = x.copy()
        y[:t] = rest.mean()
        y[n - (k - t):] = rest.mean()
        yield False, y


def paper_literal_sensitivity_at_distance(x: ArrayLike, lower: float, upper: float, k: int) -> float:
    """:math:`A^{(k)}` of the variance as the proof of Zafarani-Clifton's Theorem 7 reads.

    The proof builds two samples at distance :math:`k` and then makes one
    change: (a) the *maximal-variance* configuration, over every window of
    :math:`k` consecutive order statistics with :math:`t` of them moved to
    :math:`L` and :math:`k - t` to :math:`U` (Corollary 5.1), and (b) the
    *minimal-variance* one, over the :math:`t` smallest and :math:`k - t`
    largest moved to the mean of the rest (Theorem 6); "changing one element
    to its extreme case (U or L), or to the mean of the sequence" of each gives
    its local sensitivity. The value is the larger of the two local
    sensitivities. :func:`paper_sensitivity_at_distance` is the repaired
    reading the library uses to check the recipe (the largest local
    sensitivity over *all* candidates, not only the two extreme-variance ones).
    """
    x, lower, upper = checked_sample(x, lower, upper)
    k = validation.integer(k, "k", 0)
    if k == 0:
        return local_sensitivity_variance(x, lower, upper)
    y_max, y_min = None, None
    for to_bounds, y in _paper_candidates(x, lower, upper, k):
        if to_bounds:
            if y_max is None or y.var() > y_max.var():
                y_max = y
        elif y_min is None or y.var() < y_min.var():
            y_min = y
    return max(local_sensitivity_variance(y_max, lower, upper), local_sensitivity_variance(y_min, lower, upper))
