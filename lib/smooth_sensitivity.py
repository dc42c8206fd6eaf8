"""Smooth sensitivity of bounded means, trimmed means and standard deviations.

Zafarani and Clifton release the Gaussian parameters of a naive Bayes model
with Cauchy noise scaled to the *smooth sensitivity* of Nissim, Raskhodnikova
and Smith (NRS, 2007). This module holds the sensitivities and the noise
calibration; :mod:`lib.gaussian_naive_bayes` uses them. Brute-force references
(the local sensitivity at distance :math:`k` by enumeration) live in
``tests/test_smooth_sensitivity.py``.

Neighbours are replace-one: two samples of the same size :math:`n` differ in one
entry, every entry in the public range :math:`[L, U]` (Zafarani-Clifton,
Section 2.2). For a function :math:`f` the local sensitivity is
:math:`LS_f(x) = \\max_{y: d(x, y) = 1} |f(x) - f(y)|`, the sensitivity at
distance :math:`k` is :math:`A^{(k)}(x) = \\max_{d(x, y) \\le k} LS_f(y)`
(their Definition 3.4) and the :math:`\\beta`-smooth sensitivity is
:math:`S^*_{f, \\beta}(x) = \\max_k e^{-k\\beta} A^{(k)}(x)` (Definition 3.3).

What is computed
----------------
* Mean (their Theorem 4): :math:`A^{(k)}(x) = (U - L)/n` for every
  :math:`k \\ge 1`, so the smooth sensitivity of a bounded mean is at least
  :math:`e^{-\\beta}` times the global one -- smooth sensitivity cannot help a
  bounded mean (:func:`smooth_sensitivity_mean`).
* Trimmed mean (Bun and Steinke 2019, the version Zafarani and Clifton compare
  with): the closed form of :func:`trimmed_mean_sensitivity_at_distance`.
* Standard deviation (what Algorithm 1, line 17, perturbs; their Theorem 7 is
  about the variance): a :math:`\\beta`-smooth *upper bound*
  :func:`smooth_sensitivity_std` built from the smallest sum of squared
  deviations of a sub-sample, valid by the argument in its docstring and
  checked against enumeration in the tests. The variance itself gains at most a
  factor 4 from smooth sensitivity (:func:`local_sensitivity_variance` is
  between a quarter of and the global sensitivity), which is why the standard
  deviation is the parameter that profits.

Calibration (:func:`calibrate`): NRS's calibration with the admissible density
:math:`h(z) \\propto 1/(1 + |z|^\\gamma)`, :math:`\\gamma = 2` (Cauchy),
restated as Zafarani-Clifton Theorem 2: :math:`\\beta = \\varepsilon/6` and noise
:math:`6 S(x)/\\varepsilon \\cdot Z`. Their Algorithm 1 prints
:math:`\\sqrt 2 S/\\varepsilon'` instead; it is kept as the labelled variant
``rule="printed"``. :func:`cauchy_privacy_loss` gives the exact pure-DP loss of
a Cauchy release, which both rules are checked against.
"""

from __future__ import annotations

import numpy as np

from . import _validate

#: Tail exponent of the admissible density of NRS used here: gamma = 2 is the Cauchy.
GAMMA = 2.0

#: Calibration rules accepted by :func:`calibrate`.
RULES = ("theorem2", "printed")

_BLOCK = 512


def _sample(x, lower, upper):
    """Sorted float sample and scalar bounds, validated."""
    lower = _validate.scalar(_validate.in_range(lower, "lower", -np.inf, np.inf, open_low=True), "lower")
    upper = _validate.scalar(_validate.in_range(upper, "upper", -np.inf, np.inf, open_low=True), "upper")
    if not upper > lower:
        raise ValueError(f"upper must exceed lower; got lower={lower:g}, upper={upper:g}")
    x = _validate.in_range(x, "x", lower, upper, open_low=False, open_high=False)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"x must be a 1-D sample of at least 2 values; got shape {x.shape}")
    return np.sort(x), lower, upper


def _beta(beta):
    return _validate.scalar(_validate.positive(beta, "beta"), "beta")


def cauchy_privacy_loss(slide, dilation):
    """Exact pure-DP loss of :math:`f(x) + (S(x)/s) Z`, :math:`Z` standard Cauchy.

    For neighbours the centre moves by at most :math:`S(x)` (so by at most
    ``slide`` :math:`= s` noise units) and the scale changes by a factor in
    :math:`[e^{-\\beta}, e^{\\beta}]` (``dilation`` :math:`= \\beta`, as for a
    :math:`\\beta`-smooth :math:`S`). The log density ratio splits into a shift,
    whose supremum for the Cauchy is
    :math:`\\sup_u \\log\\frac{1 + (u + s)^2}{1 + u^2} = 2\\,\\mathrm{asinh}(s/2)`,
    and a dilation, bounded by :math:`\\beta` (NRS's sliding
    and dilation properties). So the release is
    :math:`(2\\,\\mathrm{asinh}(s/2) + \\beta)`-DP.

    Parameters
    ----------
    slide : array_like
        :math:`s \\ge 0`.
    dilation : array_like
        :math:`\\beta \\ge 0`.

    Returns
    -------
    ndarray
        The privacy loss :math:`\\varepsilon`.

    Examples
    --------
    >>> round(float(cauchy_privacy_loss(1/6, 1/6)), 6)  # Theorem 2 at epsilon = 1
    0.333141
    """
    s = _validate.nonnegative(slide, "slide")
    b = _validate.nonnegative(dilation, "dilation")
    return 2.0 * np.arcsinh(s / 2.0) + b


def calibrate(epsilon, rule: str = "theorem2"):
    """Smoothing :math:`\\beta` and noise multiplier for an :math:`\\varepsilon`-DP Cauchy release.

    The release is :math:`f(x) + \\text{multiplier} \\cdot S_\\beta(x) \\cdot Z`
    with :math:`Z` standard Cauchy and :math:`S_\\beta` a :math:`\\beta`-smooth
    upper bound on the local sensitivity.

    * ``"theorem2"``: Zafarani-Clifton Theorem 2 (NRS's calibration) with the
      :math:`(\\varepsilon/(2(\\gamma+1)), \\varepsilon/(2(\\gamma+1)))`-admissible
      density (their Theorem 3, :math:`\\gamma = 2`): :math:`\\beta = \\varepsilon/6`,
      multiplier :math:`6/\\varepsilon`.
    * ``"printed"``: Algorithm 1, lines 15 and 18, multiplier
      :math:`\\sqrt 2/\\varepsilon`; Algorithm 1 does not say which
      :math:`\\beta`, we take Theorem 2's :math:`\\varepsilon/6`. Not covered by
      Theorem 2 (the multiplier is 4.2 times smaller); by
      :func:`cauchy_privacy_loss` it is still :math:`\\varepsilon`-DP.

    Parameters
    ----------
    epsilon : float
        Per-release privacy level, in :math:`(0, \\infty)`.
    rule : {"theorem2", "printed"}

    Returns
    -------
    beta, multiplier : float

    Examples
    --------
    >>> calibrate(3.0)
    (0.5, 2.0)
    """
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    beta = epsilon / (2.0 * (GAMMA + 1.0))
    if rule == "theorem2":
        return beta, 2.0 * (GAMMA + 1.0) / epsilon
    return beta, float(np.sqrt(2.0)) / epsilon


# --------------------------------------------------------------------------- mean
def global_sensitivity_mean(n, lower, upper):
    """Global sensitivity :math:`(U - L)/n` of the mean of :math:`n` values in :math:`[L, U]`."""
    n = _validate.integer(n, "n", 1)
    return (float(upper) - float(lower)) / n


def local_sensitivity_mean(x, lower, upper):
    """:math:`LS(x) = \\max(U - x_{(1)}, x_{(n)} - L)/n` for the mean (replace one value by a bound)."""
    x, lower, upper = _sample(x, lower, upper)
    return float(max(upper - x[0], x[-1] - lower) / x.size)


def smooth_sensitivity_mean(x, lower, upper, beta):
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
    x, lower, upper = _sample(x, lower, upper)
    return float(max(local_sensitivity_mean(x, lower, upper), np.exp(-beta) * (upper - lower) / x.size))


# ------------------------------------------------------------------ trimmed mean
def trimmed_mean(x, m):
    """Mean of the sorted sample without its ``m`` smallest and ``m`` largest values (Definition 4.1)."""
    x = np.sort(np.asarray(x, dtype=float))
    m = _validate.integer(m, "m", 0)
    if 2 * m >= x.size:
        raise ValueError(f"m must be below n/2 = {x.size / 2:g}; got {m}")
    return float(x[m:x.size - m].mean())


def trimmed_mean_sensitivity_at_distance(x, lower, upper, m, k):
    """:math:`A^{(k)}(x)` of the ``m``-trimmed mean (Bun and Steinke 2019; checked against enumeration in the tests).

    With the sorted sample extended by :math:`x_{(i)} = L` for :math:`i \\le 0`
    and :math:`x_{(i)} = U` for :math:`i > n`,
    :math:`A^{(k)}(x) = \\max_{0 \\le l \\le k+1} (x_{(n-m+1+k-l)} - x_{(m+1-l)})/(n - 2m)`.
    Vectorised over ``k``.
    """
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    m = _validate.integer(m, "m", 0)
    if 2 * m >= n:
        raise ValueError(f"m must be below n/2 = {n / 2:g}; got {m}")
    k = np.atleast_1d(np.asarray(k))
    if k.dtype.kind not in "iu" or k.min() < 0:
        raise ValueError("k must hold non-negative integers")
    ext = np.concatenate([[lower], x, [upper]])   # ext[i] = x_(i) for i = 0 .. n+1

    kk = k.reshape(-1, 1)
    ell = np.arange(int(k.max()) + 2)[None, :]
    upper_i = np.clip(n - m + 1 + kk - ell, 0, n + 1)
    lower_i = np.clip(m + 1 - ell, 0, n + 1)
    diff = np.where(ell <= kk + 1, ext[upper_i] - ext[lower_i], -np.inf)
    out = diff.max(axis=1).reshape(k.shape)
    return out / (n - 2 * m)


def smooth_sensitivity_trimmed_mean(x, lower, upper, m, beta):
    """:math:`\\beta`-smooth sensitivity of the ``m``-trimmed mean (Bun and Steinke 2019).

    :math:`\\max_k e^{-k\\beta} A^{(k)}(x)` with
    :func:`trimmed_mean_sensitivity_at_distance`; for :math:`k \\ge m + 1`
    every difference reaches from :math:`L` to :math:`U`, so the maximum runs
    over :math:`k \\le m + 1` only (:math:`O(m^2)` work).
    """
    beta = _beta(beta)
    x, lower, upper = _sample(x, lower, upper)
    ks = np.arange(_validate.integer(m, "m", 0) + 2)
    a = trimmed_mean_sensitivity_at_distance(x, lower, upper, m, ks)
    return float(np.max(np.exp(-beta * ks) * a))


# ------------------------------------------------------- variance and std
def global_sensitivity_std(n, lower, upper):
    """Global sensitivity :math:`(U-L)\\sqrt{n-1}/n` of the population standard deviation.

    Centring is a projection, so replacing one value by :math:`\\Delta` moves the
    centred vector by at most :math:`|\\Delta|\\sqrt{(n-1)/n}`; equality when all
    other values sit at one bound.
    """
    n = _validate.integer(n, "n", 2)
    return (float(upper) - float(lower)) * np.sqrt(n - 1.0) / n


def local_sensitivity_variance(x, lower, upper):
    """Local sensitivity of the population variance, exactly.

    Replacing :math:`x_i` by :math:`v` changes the variance by
    :math:`\\frac{n-1}{n^2}[(v - \\mu_{-i})^2 - (x_i - \\mu_{-i})^2]`
    (:math:`\\mu_{-i}` the mean of the others), so the extreme :math:`v` are
    :math:`L`, :math:`U` and :math:`\\mu_{-i}`.
    """
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    mu = (x.sum() - x) / (n - 1)
    d_far = np.maximum(upper - mu, mu - lower) ** 2
    d_now = (x - mu) ** 2
    return float((n - 1) / n**2 * np.max(np.maximum(d_far - d_now, d_now)))


def local_sensitivity_std(x, lower, upper):
    """Local sensitivity of the population standard deviation, exactly (same extreme :math:`v`)."""
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    s, q = x.sum(), (x * x).sum()
    mu = (s - x) / (n - 1)
    ssd_rest = np.maximum((q - x * x) - (s - x) ** 2 / (n - 1), 0.0)
    sd = np.sqrt(max(q / n - (s / n) ** 2, 0.0))
    c = (n - 1) / n
    far = np.sqrt((ssd_rest + c * np.maximum(upper - mu, mu - lower) ** 2) / n)
    near = np.sqrt(ssd_rest / n)
    return float(np.max(np.maximum(far - sd, sd - near)))


def _runs_candidates(x):
    """Start and end indices (inclusive) of the runs of equal values of sorted ``x``."""
    change = np.flatnonzero(np.diff(x) != 0)
    starts = np.concatenate([[0], change + 1])
    ends = np.concatenate([change, [x.size - 1]])
    return starts, ends


def min_ssd_windows(x, sizes):
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
    x : array_like
        Sorted sample.
    sizes : array_like of int
        Window sizes :math:`w \\in [1, n]`.
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    xc = x - x[n // 2]
    c1 = np.concatenate([[0.0], np.cumsum(xc)])
    c2 = np.concatenate([[0.0], np.cumsum(xc * xc)])
    starts, ends = _runs_candidates(x)
    if 16 * starts.size >= n:
        # Few ties: gathering 2D candidates costs more than slicing all windows (measured), so slice.
        out = np.empty(len(sizes))
        for i, w in enumerate(np.asarray(sizes, dtype=np.int64)):
            s = c1[w:] - c1[:-w]
            out[i] = np.min((c2[w:] - c2[:-w]) - s * s / w)
        return np.maximum(out, 0.0)
    w = np.asarray(sizes, dtype=np.int64)[:, None]
    cand = np.concatenate([np.broadcast_to(starts, (w.shape[0], starts.size)), ends[None, :] - w + 1], axis=1)
    cand = np.clip(cand, 0, n - w)
    s = c1[cand + w] - c1[cand]
    q = c2[cand + w] - c2[cand]
    return np.maximum(np.min(q - s * s / w, axis=1), 0.0)


def std_sensitivity_bound(n, lower, upper, ssd):
    """:math:`h(s) = \\sqrt{(s + cW^2)/n} - \\sqrt{s/n}`, :math:`c = (n-1)/n`, :math:`W = U - L`.

    Bounds the change of the standard deviation when one value is replaced, if
    the others have sum of squared deviations at least :math:`s`; decreasing in
    :math:`s`, with :math:`h(0)` the global sensitivity.
    """
    ssd = np.asarray(ssd, dtype=float)
    cw2 = (n - 1) / n * (float(upper) - float(lower)) ** 2
    return cw2 / n / (np.sqrt((ssd + cw2) / n) + np.sqrt(ssd / n))


def std_sensitivity_at_distance(x, lower, upper, k, *, resolution: int | None = None):
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
    """
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    k = np.atleast_1d(np.asarray(k, dtype=np.int64))
    w = np.maximum(n - 1 - k, 1)
    if resolution is None:
        m = min_ssd_windows(x, w)
    else:
        resolution = _validate.integer(resolution, "resolution", 1)
        q = (upper - lower) / resolution
        xr = lower + q * np.floor((x - lower) / q)
        m = np.maximum(np.sqrt(min_ssd_windows(xr, w)) - q * np.sqrt(n), 0.0) ** 2
    return std_sensitivity_bound(n, lower, upper, m)


def smooth_sensitivity_std(x, lower, upper, beta, *, resolution: int | None = None,
                           max_distance: int | None = None):
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
    x : array_like, shape (n,)
        The sample, every value in ``[lower, upper]``.
    lower, upper : float
        Public bounds.
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

    Examples
    --------
    >>> x = np.linspace(0.0, 1.0, 101)
    >>> s = smooth_sensitivity_std(x, 0.0, 1.0, 0.5)
    >>> bool(local_sensitivity_std(x, 0.0, 1.0) <= s < global_sensitivity_std(101, 0.0, 1.0))
    True
    """
    return smooth_sensitivity_std_profile(x, lower, upper, beta, resolution=resolution,
                                          max_distance=max_distance)[0]


def smooth_sensitivity_std_profile(x, lower, upper, beta, profile=None, *, resolution: int | None = None,
                                   max_distance: int | None = None):
    """:func:`smooth_sensitivity_std` and the profile :math:`\\hat A^{(0)}, \\hat A^{(1)}, \\ldots` it used.

    The profile does not depend on :math:`\\beta`: pass it back (with the same
    ``x``, bounds, ``resolution`` and ``max_distance``) to get the bound for
    another :math:`\\beta` without recomputing; it is extended only as far as
    the new :math:`\\beta` needs.

    Returns
    -------
    float, ndarray
    """
    beta = _beta(beta)
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    last = n if max_distance is None else min(n, _validate.integer(max_distance, "max_distance", 0))
    gs = float(std_sensitivity_bound(n, lower, upper, 0.0))
    tail = float(np.exp(-beta * (last + 1)) * gs) if last < n else 0.0
    prof = np.empty(0) if profile is None else np.asarray(profile, dtype=float)
    while True:
        k0 = prof.size
        best = max(tail, float(np.max(np.exp(-beta * np.arange(k0)) * prof))) if k0 else tail
        if k0 > last or best >= np.exp(-beta * k0) * gs:
            return best, prof
        ks = np.arange(k0, min(k0 + _BLOCK, last + 1))
        prof = np.concatenate([prof, std_sensitivity_at_distance(x, lower, upper, ks, resolution=resolution)])


def smooth_sensitivity_std_naive(x, lower, upper, beta):
    """Same bound as :func:`smooth_sensitivity_std`, by scanning every window of every size.

    The quadratic computation a direct reading of Theorem 7 suggests (all
    :math:`n - w + 1` windows for each of the :math:`n` sizes, no early stop);
    kept for the tests and the benchmark.
    """
    beta = _beta(beta)
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    xc = x - x[n // 2]
    c1 = np.concatenate([[0.0], np.cumsum(xc)])
    c2 = np.concatenate([[0.0], np.cumsum(xc * xc)])
    best = 0.0
    for k in range(n + 1):
        w = max(n - 1 - k, 1)
        s = c1[w:] - c1[:-w]
        q = c2[w:] - c2[:-w]
        m = max(float(np.min(q - s * s / w)), 0.0)
        best = max(best, float(np.exp(-beta * k) * std_sensitivity_bound(n, lower, upper, m)))
    return best


# ------------------------------------------------- the paper's variance recipe
def max_variance_subset(x, k):
    """Zafarani-Clifton Theorem 5: the ``k``-subset of largest variance, among the ``i`` smallest plus ``k - i`` largest."""
    x = np.sort(np.asarray(x, dtype=float))
    k = _validate.integer(k, "k", 1)
    best = None
    for i in range(k + 1):
        sub = np.concatenate([x[:i], x[x.size - (k - i):]])
        if best is None or sub.var() > best.var():
            best = sub
    return best


def min_variance_subset(x, k):
    """Zafarani-Clifton Theorem 6: the ``k``-subset of smallest variance, a run of consecutive order statistics."""
    x = np.sort(np.asarray(x, dtype=float))
    k = _validate.integer(k, "k", 1)
    variances = [x[i:i + k].var() for i in range(x.size - k + 1)]
    i = int(np.argmin(variances))
    return x[i:i + k]


def paper_sensitivity_at_distance(x, lower, upper, k, statistic="variance"):
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
    x, lower, upper = _sample(x, lower, upper)
    n = x.size
    k = _validate.integer(k, "k", 0)
    if k == 0:
        return local(x, lower, upper)
    if k >= n:
        raise ValueError(f"k must be below n = {n}; got {k}")
    best = 0.0
    for start in range(n - k + 1):
        for t in range(k + 1):
            y = x.copy()
            y[start:start + t] = lower
            y[start + t:start + k] = upper
            best = max(best, local(y, lower, upper))
    for t in range(k + 1):
        rest = x[t:n - (k - t)]
        y = x.copy()
        y[:t] = rest.mean()
        y[n - (k - t):] = rest.mean()
        best = max(best, local(y, lower, upper))
    return best


# -------------------------------------------------------------- accounting
def pure_dp_to_rdp(epsilon, lam):
    """Tight Rényi level of an :math:`\\varepsilon`-DP mechanism at order :math:`\\lambda > 1`.

    :math:`\\frac{1}{\\lambda - 1}\\log\\frac{\\sinh(\\lambda\\varepsilon) - \\sinh((\\lambda-1)\\varepsilon)}{\\sinh\\varepsilon}`
    (Bun and Steinke 2016, in the proof that pure DP implies zCDP; the value autodp's
    ``RDP_pureDP`` computes). It equals the Rényi divergence of randomised
    response with ratio :math:`e^{\\varepsilon}`, so no smaller bound holds
    for every :math:`\\varepsilon`-DP mechanism; it is below
    :math:`\\min(\\varepsilon, \\lambda\\varepsilon^2/2)`. Computed in log space.

    Examples
    --------
    >>> round(float(pure_dp_to_rdp(1.0, 5.0)), 6)
    0.921715
    """
    eps = _validate.positive(epsilon, "epsilon")
    lam = _validate.order(lam, "lam", strict=True)
    eps, lam = np.broadcast_arrays(eps, lam)
    # (e^{lam eps} + e^{(1-lam) eps}) / (1 + e^{eps}), the randomised-response form
    num = np.logaddexp(lam * eps, (1.0 - lam) * eps)
    return (num - np.logaddexp(0.0, eps)) / (lam - 1.0)
