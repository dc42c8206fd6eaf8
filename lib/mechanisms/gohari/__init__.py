"""Gohari et al. (2021)'s :math:`(\\hat\\varepsilon, \\delta)` guarantee for one Dirichlet release.

Section 2.4 of the paper (eq. (7), Figure 2) and Section 3.2 (Figure 3, bottom)
compare Algorithm 1 with the approximate-DP guarantee of Gohari, Wu, Hawkins,
Hale and Topcu (2021) for the same mechanism. Here that guarantee is written
for one release :math:`y \\sim \\mathrm{Dirichlet}(r f + \\alpha)` of a
histogram :math:`f` with :math:`d` cells and a known total :math:`N`, under
replace-one neighbours, with Algorithm 1's pseudo-count
:math:`\\alpha = 1 + 4(\\lambda - 1) r` (prior 1, :math:`\\Delta_\\infty = 1`).

Gohari et al.'s mechanism takes a point :math:`p` of the simplex and releases
:math:`\\mathrm{Dirichlet}(k p)`. The release above is that mechanism with

.. math::
    k = r N + \\alpha d, \\qquad p = (r f + \\alpha) / k,

and neighbouring histograms give inputs :math:`p, p'` that differ in two
coordinates by :math:`r/k` each (:math:`\\ell_1` distance :math:`s = 2r/k`).
Every coordinate of an input is at least :math:`\\eta = \\alpha / k` (an empty
cell) and the :math:`d - 2` coordinates that do not change sum to at least
:math:`\\eta' = (d - 2)\\alpha / k`. For an output threshold :math:`\\gamma`,

.. math::
    \\delta(\\gamma) = 1 - \\min_{v} \\Pr[Z_1 > \\gamma, Z_2 > \\gamma, Z_3 > \\gamma],
    \\qquad Z \\sim \\mathrm{Dirichlet}(k v),

over the vertices :math:`v` of the input set aggregated to three parts (the
two changed coordinates and the rest; :math:`d = 2`: the Beta law of the first
coordinate), and

.. math::
    \\hat\\varepsilon(\\gamma) = \\log \\frac{B(k\\eta,\\, k(1 - \\eta - \\eta'))}
    {B(k(\\eta + s/2),\\, k(1 - \\eta - \\eta' - s/2))}
    + \\frac{k s}{2} \\log\\Big(\\frac{1}{\\gamma} - W + 1\\Big), \\qquad W = 2.

Numerics. :math:`\\delta` is computed directly as the small probability that
some part falls to :math:`\\gamma` or below, by inclusion-exclusion: the Beta
lower tails of the parts (``scipy.special.betainc``) minus the pairwise terms,
each a one-dimensional integral of a Beta density times a regularised
incomplete Beta function, done with a fixed 16-node Gauss-Legendre rule in
:math:`v = u^{1/3}`, where :math:`u = F(y) / F(\\gamma)` and :math:`F` is the Beta
distribution function of the first part of the pair. Subtracting a probability
close to one from one, as the original code did, cannot resolve
:math:`\\delta \\approx 10^{-5}` to more than a few digits; this formulation keeps
the relative error below 1e-12 against mpmath at 50 digits for
:math:`\\delta \\le 10^{-3}` over the parameters of the experiments (unit tests and
``benchmarks/bench_gohari.py``), below 1e-10 up to :math:`\\delta = 0.1`; only as
:math:`\\delta \\to 1`, where the pairwise terms are no longer small, does it grow
to about 1e-4.

Many calibrations at once: :func:`lib.mechanisms.gohari.batch.gohari_calibrate_many` runs
the searches of many releases and targets in lockstep (each takes the steps of
its scalar search, so the results are those of :func:`gohari_calibrate`), for the
experiment grids, which need some hundred of them. The high-precision mpmath
references and the original code's fixed quadrature rule, against which these
functions are checked, are in :mod:`lib.mechanisms.gohari.reference`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.polynomial import legendre
from scipy import special

from lib import _validate
from lib.mechanisms.dirichlet.divergence import _lgamma_diff

#: The ``W`` of Gohari et al.'s epsilon: the number of coordinates in which two
#: neighbouring inputs differ (one record moves from one cell to another).
W_CHANGED = 2
#: Relative tolerance on gamma of the root of delta(gamma) = delta.
GAMMA_RTOL = 1e-10
#: Relative tolerance on r of the calibration (before the final safety step).
R_RTOL = 1e-10

#: Largest known total of the release: beyond it the concentrations k of the
#: Beta tails are so large that the root searches crawl through thousands of
#: doublings of gamma (n_total = 1e300 took minutes per call).
N_TOTAL_MAX = 1e15
#: Largest scale r of a release (r = 1e100 did not finish in minutes; the
#: calibration searches r in [1e-300, 1e12]).
R_MAX = 1e12
#: Largest target of :func:`gohari_calibrate` (1e100 took minutes per call).
EPSILON_HAT_MAX = 1e4
#: Cap on the steps of every bracketing and bisection loop.
_MAX_STEPS = 2000

_N_NODES = 16
_x, _w = legendre.leggauss(_N_NODES)
_V = 0.5 * (_x + 1)
# u = v^3 on [0, 1]: grades the nodes towards u = 0 (the far lower tail of the
# conditioning part), where the integrand behaves like a fractional power of u.
_U_NODES = _V**3
_U_WEIGHTS = 0.5 * _w * 3 * _V**2
# A pairwise term is dropped when it is certainly below this fraction of the
# sum of the single tails (it is at most the smaller of its two tails).
_NEGLIGIBLE = 1e-17
#: Smallest delta the computation resolves: scipy's Beta quantiles (betaincinv),
#: used by the pairwise terms and the bracket, fail below about 1e-160.
DELTA_FLOOR = 1e-100


class GohariParameters(NamedTuple):
    """Gohari et al.'s parameters of one Algorithm 1 release.

    Attributes
    ----------
    alpha : float
        Pseudo-count :math:`\\alpha = 1 + 4(\\lambda - 1) r` (Line 2 of Algorithm 1).
    k : float
        Total concentration :math:`k = r N + \\alpha d`.
    eta : float
        Lower bound :math:`\\eta` of a changed coordinate of the input
        :math:`p = (r f + \\alpha)/k`: :math:`(m r + \\alpha)/k` for cells holding
        at least ``min_count = m`` records.
    eta_prime : float
        Lower bound :math:`\\eta' = (d-2)\\alpha/k` of the sum of the unchanged
        coordinates.
    """

    alpha: float
    k: float
    eta: float
    eta_prime: float


class GohariGuarantee(NamedTuple):
    """An :math:`(\\hat\\varepsilon, \\delta)` guarantee of Gohari et al. for one release.

    Attributes
    ----------
    epsilon_hat : float
        :math:`\\hat\\varepsilon` at the threshold ``gamma``.
    gamma : float
        The output threshold :math:`\\gamma` with :math:`\\delta(\\gamma) = \\delta`.
    r, alpha : float
        The release is :math:`\\mathrm{Dirichlet}(r f + \\alpha)`.
    """

    epsilon_hat: float
    gamma: float
    r: float
    alpha: float


def _scalar(value, name, check):
    return _validate.scalar(check(value, name), name)


def _check_setting(r, lam, n_total, d, min_count):
    """Validate one release's setting; return floats r, lam, n_total, int d, m."""
    r = _validate.scalar(_validate.in_range(r, "r", 0.0, R_MAX, open_low=True, open_high=False), "r")
    lam = _validate.scalar(_validate.order(lam, "lam"), "lam")
    d = _validate.integer(d, "d", 2)
    if min_count not in (0, 1) or isinstance(min_count, bool):
        raise ValueError(f"min_count must be 0 or 1; got {min_count!r}")
    n_total = _validate.scalar(
        _validate.in_range(n_total, "n_total", 1.0 + min_count, N_TOTAL_MAX, open_low=False,
                           open_high=False), "n_total"
    )
    return r, lam, n_total, int(d), int(min_count)


def _params(r, lam, n_total, d, m) -> GohariParameters:
    alpha = 1 + 4 * (lam - 1) * r
    k = n_total * r + alpha * d
    return GohariParameters(alpha, k, (m * r + alpha) / k, (d - 2) * alpha / k)


def gohari_parameters(r, lam, n_total, d, *, min_count=0) -> GohariParameters:
    """Gohari et al.'s :math:`(k, \\eta, \\eta')` for one Algorithm 1 release.

    Parameters
    ----------
    r : float
        Scale of the counts, :math:`r > 0`.
    lam : float
        Renyi order :math:`\\lambda \\ge 1` that fixes :math:`\\alpha = 1 + 4(\\lambda-1)r`.
    n_total : float
        Known total :math:`N` of the histogram (at least ``1 + min_count``).
    d : int
        Number of cells, at least 2.
    min_count : {0, 1}, default 0
        Smallest count a changed cell may hold after the change. 0 covers every
        pair of neighbouring histograms; 1 is the original code's
        :math:`\\eta = (r + \\alpha)/k`, which leaves out the pairs where a cell
        empties (see the chapter ``06_gohari_comparison``).

    Returns
    -------
    GohariParameters
    """
    return _params(*_check_setting(r, lam, n_total, d, min_count))


def _vertices(par: GohariParameters, d: int) -> np.ndarray:
    """Concentrations k v of the candidate vertices, shape (n_vertices, n_parts)."""
    k, e1, e2 = par.k, par.eta, par.eta_prime
    if d == 2:
        return np.array([[k * e1, k * (1 - e1)]])
    return np.array([[k * e1, k * e1, k * (1 - 2 * e1)], [k * e1, k * e2, k * (1 - e1 - e2)]])


def _union_tail(gamma, a):
    """``Pr[min_i Z_i <= gamma]`` for ``Z ~ Dirichlet(a)``, unvalidated.

    ``gamma``: 1-D array below 1/n_parts; ``a``: concentrations, shape
    (n_vertices, n_parts) with 2 or 3 parts. Returns shape (n_vertices, len(gamma)).
    """
    a = np.atleast_2d(np.asarray(a, dtype=float))
    a0 = a.sum(axis=1, keepdims=True)
    tails = special.betainc(a[:, :, None], (a0 - a)[:, :, None], gamma[None, None, :])
    total = tails.sum(axis=1)
    if a.shape[1] == 2:  # both parts at most gamma < 1/2 is impossible
        return total
    # the pairs (i, j) of parts, with l the third; integrate over the part i of
    # the smaller concentration (the larger tail)
    i, j, l = np.array([[0, 1, 2], [0, 2, 1], [1, 2, 0]]).T
    swap = a[:, j] < a[:, i]
    ii = np.where(swap, j, i)
    jj = np.where(swap, i, j)
    rows = np.arange(a.shape[0])[:, None]
    ai, aj, al = a[rows, ii], a[rows, jj], a[:, l]
    ti = np.take_along_axis(tails, ii[:, :, None], axis=1)
    tj = np.take_along_axis(tails, jj[:, :, None], axis=1)
    g = np.broadcast_to(gamma, ti.shape)
    need = (np.minimum(ti, tj) > _NEGLIGIBLE * total[:, None, :]) & (ti > 1e-130)
    if np.any(need):
        shape = need.shape
        aib, ajb, alb, a0b = (np.broadcast_to(x[..., None], shape)[need]
                              for x in (ai, aj, al, np.broadcast_to(a0, ai.shape)))
        tin = ti[need]
        y = special.betaincinv(aib[:, None], (a0b - aib)[:, None], tin[:, None] * _U_NODES)
        inner = special.betainc(ajb[:, None], alb[:, None], g[need][:, None] / (1 - y))
        pair = np.zeros(shape)
        pair[need] = tin * (inner @ _U_WEIGHTS)
        total = total - pair.sum(axis=1)
    return total


def min_part_cdf(gamma, a):
    """:math:`\\Pr[\\min_i Z_i \\le \\gamma]` for :math:`Z \\sim \\mathrm{Dirichlet}(a)` with 2 or 3 parts.

    One minus the probability in eq. (7) for one input :math:`v` (with
    :math:`a = k v`), computed as in :func:`gohari_delta` (inclusion-exclusion,
    see the module docstring): for checking where over the input set eq. (7)
    is smallest, and for the aggregation property.

    Parameters
    ----------
    gamma : array_like
        Thresholds in :math:`(0, 1/n)`, :math:`n` the number of parts.
    a : array_like, shape (n,) or (m, n), n in {2, 3}
        Positive concentrations, one row per input.

    Returns
    -------
    ndarray
        Shape ``(m, gamma.size)`` (``m = 1`` for a single row), gamma flattened.
    """
    a = np.atleast_2d(_validate.vectors(a, "a", positive_entries=True))
    if a.ndim != 2 or a.shape[1] not in (2, 3):
        raise ValueError(f"a must have shape (n,) or (m, n) with n = 2 or 3; got {a.shape}")
    gamma = _validate.in_range(gamma, "gamma", 0.0, 1 / a.shape[1], open_low=True)
    return _union_tail(np.atleast_1d(gamma).ravel(), a)


def _check_gamma(gamma, d):
    upper = 0.5 if d == 2 else 1 / 3
    return _validate.in_range(gamma, "gamma", 0.0, upper, open_low=True, open_high=True)


def gohari_delta(gamma, r, lam, n_total, d, *, min_count=0):
    """Gohari et al.'s :math:`\\delta(\\gamma)` (eq. (7)) for one Algorithm 1 release.

    :math:`\\delta(\\gamma) = 1 - \\min_v \\Pr[Z_i > \\gamma \\text{ for every part}]`
    with :math:`Z \\sim \\mathrm{Dirichlet}(k v)` and :math:`v` the vertices
    :math:`(\\eta, \\eta, 1 - 2\\eta)` and :math:`(\\eta, \\eta', 1 - \\eta -
    \\eta')` of the input set aggregated to three parts (for :math:`d = 2`:
    :math:`\\Pr[\\gamma < Z_1 < 1 - \\gamma]` with :math:`Z_1 \\sim
    \\mathrm{Beta}(k\\eta, k(1 - \\eta))`). Computed as the small probability that
    some part is at most :math:`\\gamma` (inclusion-exclusion, see the module
    docstring), with relative error below 1e-12 for :math:`\\delta \\le 10^{-3}`
    and 1e-10 for :math:`\\delta \\le 0.1` (about 1e-4 as :math:`\\delta \\to 1`).

    Parameters
    ----------
    gamma : array_like
        Output thresholds in :math:`(0, 1/3)` (:math:`(0, 1/2)` for ``d = 2``).
    r, lam, n_total, d, min_count
        As in :func:`gohari_parameters`.

    Returns
    -------
    ndarray or float
        :math:`\\delta(\\gamma) \\in [0, 1]`, increasing in :math:`\\gamma`.

    Examples
    --------
    >>> from lib.mechanisms.gohari import gohari_delta
    >>> print(f"{gohari_delta(0.002, 0.97, 2, 147, 6):.6e}")
    7.782015e-05
    """
    r, lam, n_total, d, m = _check_setting(r, lam, n_total, d, min_count)
    gamma = _check_gamma(gamma, d)
    verts = _vertices(_params(r, lam, n_total, d, m), d)
    flat = np.atleast_1d(gamma).ravel()
    out = _union_tail(flat, verts).max(axis=0)
    return np.clip(out, 0.0, 1.0).reshape(gamma.shape)[()]


def _ratio_term(r, par: GohariParameters):
    """log B(k eta, k c) - log B(k eta + r, k c - r), c = 1 - eta - eta', no cancellation."""
    a = par.k * par.eta
    c = par.k * (1 - par.eta - par.eta_prime)
    return float(_lgamma_diff(c - r, r)[()] - _lgamma_diff(a, r)[()])


def _eps_at(gamma, r, par):
    return _ratio_term(r, par) + r * (np.log1p(-(W_CHANGED - 1) * gamma) - np.log(gamma))


def gohari_epsilon_at(gamma, r, *, lam, n_total, d, min_count=0):
    """Gohari et al.'s :math:`\\hat\\varepsilon(\\gamma)` for one Algorithm 1 release.

    .. math::
        \\hat\\varepsilon = \\log\\frac{B(k\\eta, k c)}{B(k\\eta + r, k c - r)}
        + r \\log\\Big(\\frac{1}{\\gamma} - 1\\Big), \\qquad c = 1 - \\eta - \\eta',

    (:math:`k s / 2 = r`). The first term is the largest log-ratio of the
    normalising constants of two neighbouring releases, the second bounds the
    log-ratio of their densities where the two changed coordinates exceed
    :math:`\\gamma`. The log-Beta difference is evaluated as two differences of
    log-Gamma values at a shift :math:`r` (no cancellation for small :math:`r`).

    Parameters
    ----------
    gamma : array_like
        Thresholds in :math:`(0, 1/2)`.
    r, lam, n_total, d, min_count
        As in :func:`gohari_parameters`.

    Returns
    -------
    ndarray or float
    """
    r, lam, n_total, d, m = _check_setting(r, lam, n_total, d, min_count)
    gamma = _validate.in_range(gamma, "gamma", 0.0, 0.5, open_low=True, open_high=True)
    return np.asarray(_eps_at(gamma, r, _params(r, lam, n_total, d, m)))[()]


def _illinois(func, lo, f_lo, hi, f_hi, *, xtol, ftol):
    """Root of an increasing ``func`` on a bracket, by the Illinois method.

    ``f_lo <= 0 <= f_hi`` are the values at the ends. Regula falsi keeps the
    root bracketed; halving the weight of an end that is kept twice makes the
    convergence superlinear. Stops when ``|func| <= ftol`` or the bracket is
    narrower than ``xtol``; returns ``(t, func(t))``, or the better end.
    """
    if f_lo == 0:
        return lo, f_lo
    if f_hi == 0:
        return hi, f_hi
    side = 0
    for _ in range(200):
        t = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < t < hi:
            t = 0.5 * (lo + hi)
        f = func(t)
        if abs(f) <= ftol:
            return t, f
        if f < 0:
            lo, f_lo = t, f
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = t, f
            if side == 1:
                f_lo *= 0.5
            side = 1
        if hi - lo <= xtol:
            return (lo, f_lo) if abs(f_lo) <= abs(f_hi) else (hi, f_hi)
    raise ValueError(  # pragma: no cover - regula falsi with the Illinois weights converges
        "the root search of Gohari et al.'s guarantee did not converge in 200 steps; the arguments "
        "are outside the range where it was verified")


def _solve_gamma(delta, par, d):
    """The root gamma of delta(gamma) = delta, in log gamma against log delta.

    In the tail delta(gamma) behaves like a power of gamma, so log delta is
    close to linear in log gamma and regula falsi converges in a few steps.
    """
    verts = _vertices(par, d)
    upper = 0.5 if d == 2 else 1 / 3
    g_max = upper * (1 - 1e-12)
    tiny = np.finfo(float).tiny
    log_delta = np.log(delta)

    def value(t):
        return float(_union_tail(np.array([np.exp(t)]), verts).max())

    def excess(t):
        v = value(t)
        return np.log(v) - log_delta if v > 0 else -np.inf

    # delta(gamma) lies between the largest single tail T and n_parts * T; the largest
    # tail belongs to the smallest concentration a (Beta(a, a0 - a) grows with a).
    a = verts.min()
    a0 = verts.sum(axis=1)[0]
    n_parts = verts.shape[1]
    hi = min(float(special.betaincinv(a, a0 - a, delta)) * (1 + 1e-9), g_max)
    lo = min(max(float(special.betaincinv(a, a0 - a, delta / n_parts)) * (1 - 1e-9), tiny), hi)
    f_hi = excess(np.log(hi))
    if np.isnan(f_hi):
        raise ValueError(_unresolved(delta, par, d))
    while f_hi < 0:  # doubling up to g_max: at most about 1075 steps
        if hi >= g_max:
            raise ValueError(
                f"delta = {delta:g} cannot be reached: delta(gamma) is at most "
                f"{value(np.log(hi)):.6g} for gamma < {upper:.6g}"
            )
        lo, hi = hi, min(2 * hi, g_max)
        f_hi = excess(np.log(hi))
    f_lo = excess(np.log(lo))
    while f_lo > 0:  # halving down to tiny: at most about 1075 steps
        if lo <= tiny:
            raise ValueError(
                f"delta = {delta:g} cannot be reached: its floor, delta(gamma) at the "
                f"smallest positive gamma ({tiny:.3g}), is {value(np.log(lo)):.6g}"
            )
        hi, f_hi = lo, f_lo
        lo = max(lo / 2, tiny)
        f_lo = excess(np.log(lo))
    if not np.isfinite(f_lo):  # delta(lo) underflowed: move up until it is positive
        for _ in range(_MAX_STEPS):
            if np.isfinite(f_lo) or not hi / lo > 1 + 1e-12:
                break
            # the geometric mean; lo * hi underflows when both are tiny
            mid = np.sqrt(lo * hi) if lo * hi > 1e-300 else np.sqrt(lo) * np.sqrt(hi)
            f_mid = excess(np.log(mid))
            if np.isnan(f_mid):
                raise ValueError(_unresolved(delta, par, d))
            if f_mid > 0:
                hi, f_hi = mid, f_mid
            else:
                lo, f_lo = mid, f_mid
    t, _ = _illinois(excess, np.log(lo), f_lo, np.log(hi), f_hi, xtol=GAMMA_RTOL, ftol=1e-13)
    return float(np.exp(t))


def _unresolved(delta, par, d):
    return (f"delta(gamma) cannot be evaluated in double precision for k = {par.k:.6g}, "
            f"eta = {par.eta:.6g} (d = {d}) at delta = {delta:g}; n_total or r is too large "
            f"(n_total at most {N_TOTAL_MAX:g} is supported)")


def _check_delta(delta):
    delta = _scalar(delta, "delta", _validate.open_unit)
    if delta < DELTA_FLOOR:
        raise ValueError(
            f"delta = {delta:g} is below the floor {DELTA_FLOOR:g} of the double-precision "
            "computation of delta(gamma) (scipy's Beta quantiles fail below about 1e-160)"
        )
    return delta


def gohari_epsilon(r, delta, *, lam, n_total, d, min_count=0) -> GohariGuarantee:
    """Gohari et al.'s :math:`(\\hat\\varepsilon, \\delta)` guarantee of one release at scale ``r``.

    Solves :math:`\\delta(\\gamma) = \\delta` (:func:`gohari_delta`, increasing
    in :math:`\\gamma`) on a bracket from the Beta quantiles of the smallest part
    (:math:`\\delta(\\gamma)` lies between the largest single tail and three times
    it), by the Illinois (regula falsi) method on :math:`\\log\\delta` against
    :math:`\\log\\gamma`, until :math:`\\delta(\\gamma)` matches :math:`\\delta` to
    1e-13 relative or the bracket on :math:`\\log\\gamma` is below 1e-10, and
    evaluates :func:`gohari_epsilon_at` there. The unit tests check that
    :math:`\\delta(\\gamma(1 \\pm 10^{-6}))` brackets :math:`\\delta` (a relative
    tolerance of 1e-6 on :math:`\\gamma`, the issue's requirement, with room).

    Parameters
    ----------
    r : float
        Scale of the counts, :math:`r > 0`.
    delta : float
        Target :math:`\\delta \\in (0, 1)`.
    lam, n_total, d, min_count
        As in :func:`gohari_parameters`.

    Returns
    -------
    GohariGuarantee

    Raises
    ------
    ValueError
        On invalid arguments, or when :math:`\\delta` is out of reach: below the
        floor :math:`\\delta(\\gamma)` at the smallest positive double, or above
        the largest value before :math:`\\gamma` reaches 1/3 (1/2 for ``d = 2``).
        The first is :data:`DELTA_FLOOR` = 1e-100 (scipy's Beta quantiles,
        used in the computation, fail below about 1e-160); with the accurate
        :math:`\\delta(\\gamma)` the second does not happen for
        :math:`\\delta \\le 1 - 10^{-9}` (:math:`\\delta(\\gamma) \\to 1` as
        :math:`\\gamma \\to 1/3`).

    Examples
    --------
    >>> from lib.mechanisms.gohari import gohari_epsilon
    >>> g = gohari_epsilon(1.0, 1e-5, lam=2, n_total=1283, d=6)
    >>> print(f"{g.epsilon_hat:.6f} {g.gamma:.6e}")
    14.172841 1.800296e-04
    """
    r, lam, n_total, d, m = _check_setting(r, lam, n_total, d, min_count)
    delta = _check_delta(delta)
    par = _params(r, lam, n_total, d, m)
    gamma = _solve_gamma(delta, par, d)
    return GohariGuarantee(float(_eps_at(gamma, r, par)), gamma, r, par.alpha)


def gohari_calibrate(epsilon_hat, delta, *, lam, n_total, d, min_count=0) -> GohariGuarantee:
    """The largest scale ``r`` whose Gohari et al. guarantee is at most :math:`(\\hat\\varepsilon, \\delta)`.

    :math:`\\hat\\varepsilon(r)` of :func:`gohari_epsilon` at fixed :math:`\\delta`
    increases from 0 (as :math:`r \\to 0`) to infinity (the unit tests and the
    chapter check the monotonicity on grids), so the target is met exactly at one
    :math:`r`. It is found on a bracket grown from the guess
    :math:`r = \\hat\\varepsilon / \\hat\\varepsilon(1)`, by the Illinois
    (regula falsi) method on :math:`\\log\\hat\\varepsilon` against :math:`\\log r`,
    until :math:`\\hat\\varepsilon(r)` matches the target to 1e-12 relative (or the
    bracket on :math:`\\log r` is below 1e-10); if rounding leaves
    :math:`\\hat\\varepsilon(r)` above the target, ``r`` is lowered by 1e-10
    relative until it is not, so the returned guarantee never exceeds the target.

    Parameters
    ----------
    epsilon_hat : float
        Target :math:`\\hat\\varepsilon > 0`.
    delta : float
        Target :math:`\\delta \\in (0, 1)`.
    lam, n_total, d, min_count
        As in :func:`gohari_parameters`.

    Returns
    -------
    GohariGuarantee
        With ``epsilon_hat`` the attained value (at most the target, equal to it
        within 1e-9 relative).

    Raises
    ------
    ValueError
        On invalid arguments, or when no :math:`r > 0` meets the target.

    Examples
    --------
    >>> from lib.mechanisms.gohari import gohari_calibrate
    >>> g = gohari_calibrate(1.0, 1e-5, lam=2, n_total=1283, d=6)
    >>> print(f"{g.r:.6f} {g.epsilon_hat:.9f}")
    0.053300 1.000000000
    """
    target = _scalar(epsilon_hat, "epsilon_hat", _validate.positive)
    if target > EPSILON_HAT_MAX:
        raise ValueError(f"epsilon_hat must be in (0, {EPSILON_HAT_MAX:g}] for Gohari et al.'s calibration "
                         f"(larger targets need r so large that the root searches crawl); got {target:g}")
    delta = _check_delta(delta)
    _, lam, n_total, d, m = _check_setting(1.0, lam, n_total, d, min_count)

    log_target = np.log(target)
    seen = {}

    def gap(t):  # log epsilon_hat(r) - log target, in t = log r
        r = float(np.exp(t))
        par = _params(r, lam, n_total, d, m)
        gamma = _solve_gamma(delta, par, d)
        value = float(_eps_at(gamma, r, par))
        seen[t] = GohariGuarantee(value, gamma, r, par.alpha)
        return np.log(value) - log_target

    # epsilon_hat(r) grows roughly like r, so one evaluation at r = 1 gives a
    # starting point; the bracket then grows by doubling steps in log r.
    step = np.log(2.0)
    t = -gap(0.0)
    f = gap(t)
    direction = 1.0 if f < 0 else -1.0
    while True:
        t_next = t + direction * step
        if not np.log(1e-300) < t_next < np.log(1e12):
            raise ValueError(
                f"no r in [1e-300, 1e12] meets epsilon_hat = {target:g} at delta = {delta:g}"
            )
        f_next = gap(t_next)
        if (f_next < 0) != (f < 0):
            break
        t, f = t_next, f_next
        step *= 2
    (t_lo, f_lo), (t_hi, f_hi) = sorted([(t, f), (t_next, f_next)])
    t, _ = _illinois(gap, t_lo, f_lo, t_hi, f_hi, xtol=R_RTOL, ftol=1e-12)
    for _ in range(_MAX_STEPS):
        if not seen[t].epsilon_hat > target:  # never return a guarantee above the target
            return seen[t]
        t -= R_RTOL
        gap(t)
    raise ValueError(  # pragma: no cover - the root is accurate to R_RTOL
        f"could not bring epsilon_hat below the target {target:g} at delta = {delta:g}")
