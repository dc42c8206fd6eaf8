"""The double-precision core shared by Gohari et al.'s guarantee, its batched search and its references.

:mod:`lib.mechanisms.gohari` (one release), :mod:`lib.mechanisms.gohari.batch`
(many calibrations in lockstep) and :mod:`lib.mechanisms.gohari.reference`
(the mpmath checks) compute the same quantities; this module is their one
home: the constants and tolerances, the parameter and result types, the checks
of a release's setting, the vertices of the input set, the union tail
:math:`\\Pr[\\min_i Z_i \\le \\gamma]` (inclusion-exclusion with a fixed
Gauss-Legendre rule), :math:`\\hat\\varepsilon(\\gamma)`, the Illinois root
search and the root :math:`\\gamma` of :math:`\\delta(\\gamma) = \\delta`.
The mathematics is in the docstring of :mod:`lib.mechanisms.gohari`.

Everything here takes checked arguments; the public functions of the
sub-package validate and then call it.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from numpy.polynomial import legendre
from scipy import special

from lib import validation
from lib.mechanisms.dirichlet.divergence import lgamma_diff



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
MAX_STEPS = 2000

_N_NODES = 16
_x, _w = legendre.leggauss(_N_NODES)
_V = 0.5 * (_x + 1)
# u = v^3 on [0, 1]: grades the nodes towards u = 0 (the far lower tail of the
# conditioning part), where the integrand behaves like a fractional power of u.
U_NODES = _V**3
U_WEIGHTS = 0.5 * _w * 3 * _V**2
# A pairwise term is dropped when it is certainly below this fraction of the
# sum of the single tails (it is at most the smaller of its two tails).
NEGLIGIBLE = 1e-17
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

    __module__ = "lib.mechanisms.gohari"  # documented, and pickled, under its public home

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

    __module__ = "lib.mechanisms.gohari"  # documented, and pickled, under its public home

    epsilon_hat: float
    gamma: float
    r: float
    alpha: float


def _scalar(value, name, check):
    return validation.scalar(check(value, name), name)


def check_target(epsilon_hat: float) -> float:
    """The target :math:`\\hat\\varepsilon` of a calibration as a float in ``(0, EPSILON_HAT_MAX]``."""
    target = _scalar(epsilon_hat, "epsilon_hat", validation.positive)
    if target > EPSILON_HAT_MAX:
        raise ValueError(f"epsilon_hat must be in (0, {EPSILON_HAT_MAX:g}] for Gohari et al.'s calibration "
                         f"(larger targets need r so large that the root searches crawl); got {target:g}")
    return target


def check_setting(r: float, lam: float, n_total: float, d: int, min_count: int) -> tuple[float, float, float, int, int]:
    """Validate one release's setting; return floats r, lam, n_total, int d, m."""
    r = validation.scalar(validation.in_range(r, "r", 0.0, R_MAX, open_low=True, open_high=False), "r")
    lam = validation.scalar(validation.order(lam, "lam"), "lam")
    d = validation.integer(d, "d", 2)
    if min_count not in (0, 1) or isinstance(min_count, bool):
        raise ValueError(f"min_count must be 0 or 1; got {min_count!r}")
    n_total = validation.scalar(
        validation.in_range(n_total, "n_total", 1.0 + min_count, N_TOTAL_MAX, open_low=False,
                           open_high=False), "n_total"
    )
    return r, lam, n_total, int(d), int(min_count)


def params(r: ArrayLike, lam: ArrayLike, n_total: ArrayLike, d: ArrayLike, m: ArrayLike) -> GohariParameters:
    """:class:`GohariParameters` of checked arguments (scalars, or arrays broadcast together)."""
    alpha = 1 + 4 * (lam - 1) * r
    k = n_total * r + alpha * d
    return GohariParameters(alpha, k, (m * r + alpha) / k, (d - 2) * alpha / k)


def vertices(par: GohariParameters, two: bool) -> np.ndarray:
    """Concentrations :math:`k v` of the candidate vertices of the input set aggregated to parts.

    ``par`` holds scalars (shape ``(n_vertices, n_parts)`` out) or arrays of
    ``n`` releases of one kind (shape ``(n, n_vertices, n_parts)``); ``two``:
    :math:`d = 2` (one vertex of two parts), else the two vertices
    :math:`(\\eta, \\eta, 1 - 2\\eta)` and :math:`(\\eta, \\eta', 1 - \\eta - \\eta')`.
    """
    k, e1, e2 = par.k, par.eta, par.eta_prime
    if two:
        return np.stack([k * e1, k * (1 - e1)], axis=-1)[..., None, :]
    return np.stack([np.stack([k * e1, k * e1, k * (1 - 2 * e1)], axis=-1),
                     np.stack([k * e1, k * e2, k * (1 - e1 - e2)], axis=-1)], axis=-2)


def union_tail(gamma: np.ndarray, a: np.ndarray) -> np.ndarray:
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
    need = (np.minimum(ti, tj) > NEGLIGIBLE * total[:, None, :]) & (ti > 1e-130)
    if np.any(need):
        shape = need.shape
        aib, ajb, alb, a0b = (np.broadcast_to(x[..., None], shape)[need]
                              for x in (ai, aj, al, np.broadcast_to(a0, ai.shape)))
        tin = ti[need]
        y = special.betaincinv(aib[:, None], (a0b - aib)[:, None], tin[:, None] * U_NODES)
        inner = special.betainc(ajb[:, None], alb[:, None], g[need][:, None] / (1 - y))
        pair = np.zeros(shape)
        pair[need] = tin * (inner @ U_WEIGHTS)
        total = total - pair.sum(axis=1)
    return total


def epsilon_hat_at(gamma: ArrayLike, r: ArrayLike, par: GohariParameters) -> np.ndarray | float:
    """:math:`\\hat\\varepsilon(\\gamma)` of checked arguments (arrays broadcast together).

    ``log B(k eta, k c) - log B(k eta + r, k c - r)``, ``c = 1 - eta - eta'``,
    as two differences of log-Gamma values at the shift ``r`` (no cancellation
    for small ``r``), plus ``r log(1/gamma - (W - 1))``.
    """
    a = par.k * par.eta
    c = par.k * (1 - par.eta - par.eta_prime)
    return (lgamma_diff(c - r, r) - lgamma_diff(a, r)) + r * (np.log1p(-(W_CHANGED - 1) * gamma) - np.log(gamma))


def illinois(func: Callable[[float], float], lo: float, f_lo: float, hi: float, f_hi: float, *, xtol: float,
             ftol: float) -> tuple[float, float]:
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


def solve_gamma(delta: float, par: GohariParameters, d: int) -> float:
    """The root gamma of delta(gamma) = delta, in log gamma against log delta.

    In the tail delta(gamma) behaves like a power of gamma, so log delta is
    close to linear in log gamma and regula falsi converges in a few steps.
    """
    verts = vertices(par, d == 2)
    upper = 0.5 if d == 2 else 1 / 3
    g_max = upper * (1 - 1e-12)
    tiny = np.finfo(float).tiny
    log_delta = np.log(delta)

    def value(t):
        return float(union_tail(np.array([np.exp(t)]), verts).max())

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
        for _ in range(MAX_STEPS):
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
    t, _ = illinois(excess, np.log(lo), f_lo, np.log(hi), f_hi, xtol=GAMMA_RTOL, ftol=1e-13)
    return float(np.exp(t))


def _unresolved(delta, par, d):
    return (f"delta(gamma) cannot be evaluated in double precision for k = {par.k:.6g}, "
            f"eta = {par.eta:.6g} (d = {d}) at delta = {delta:g}; n_total or r is too large "
            f"(n_total at most {N_TOTAL_MAX:g} is supported)")


def check_delta(delta: float) -> float:
    """The target :math:`\\delta` as a float in ``[DELTA_FLOOR, 1)``."""
    delta = _scalar(delta, "delta", validation.open_unit)
    if delta < DELTA_FLOOR:
        raise ValueError(
            f"delta = {delta:g} is below the floor {DELTA_FLOOR:g} of the double-precision "
            "computation of delta(gamma) (scipy's Beta quantiles fail below about 1e-160)"
        )
    return delta
