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
:math:`\\delta \\to 1`, where the pairwise terms are not small, does it grow
to about 1e-4.

The other modules of :mod:`lib.mechanisms.gohari` build on this one: many calibrations at once
(:mod:`lib.mechanisms.gohari.batch`), the registered mechanism
(:mod:`lib.mechanisms.gohari.mechanism`) and the high-precision references
(:mod:`lib.mechanisms.gohari.reference`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.gohari.core import (MAX_STEPS, R_RTOL, GohariGuarantee, GohariParameters, check_delta,
                                         check_setting, check_target, epsilon_hat_at, illinois, params, solve_gamma,
                                         union_tail, vertices)


def gohari_parameters(r: float, lam: float, n_total: float, d: int, *, min_count: int = 0) -> GohariParameters:
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
    return params(*check_setting(r, lam, n_total, d, min_count))

def min_part_cdf(gamma: ArrayLike, a: ArrayLike) -> np.ndarray:
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
    a = np.atleast_2d(validation.vectors(a, "a", positive_entries=True))
    if a.ndim != 2 or a.shape[1] not in (2, 3):
        raise ValueError(f"a must have shape (n,) or (m, n) with n = 2 or 3; got {a.shape}")
    gamma = validation.in_range(gamma, "gamma", 0.0, 1 / a.shape[1], open_low=True)
    return union_tail(np.atleast_1d(gamma).ravel(), a)


def _check_gamma(gamma, d):
    upper = 0.5 if d == 2 else 1 / 3
    return validation.in_range(gamma, "gamma", 0.0, upper, open_low=True, open_high=True)


def gohari_delta(gamma: ArrayLike, r: float, lam: float, n_total: float, d: int, *,
                 min_count: int = 0) -> np.ndarray | float:
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
    >>> from lib.mechanisms.gohari.guarantee import gohari_delta
    >>> print(f"{gohari_delta(0.002, 0.97, 2, 147, 6):.6e}")
    7.782015e-05
    """
    r, lam, n_total, d, m = check_setting(r, lam, n_total, d, min_count)
    gamma = _check_gamma(gamma, d)
    verts = vertices(params(r, lam, n_total, d, m), d == 2)
    flat = np.atleast_1d(gamma).ravel()
    out = union_tail(flat, verts).max(axis=0)
    return np.clip(out, 0.0, 1.0).reshape(gamma.shape)[()]

def gohari_epsilon_at(gamma: ArrayLike, r: ArrayLike, *, lam: float, n_total: float, d: int,
                      min_count: int = 0) -> np.ndarray | float:
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
    r, lam, n_total, d, m = check_setting(r, lam, n_total, d, min_count)
    gamma = validation.in_range(gamma, "gamma", 0.0, 0.5, open_low=True, open_high=True)
    return np.asarray(epsilon_hat_at(gamma, r, params(r, lam, n_total, d, m)))[()]

def gohari_epsilon(r: float, delta: float, *, lam: float, n_total: float, d: int,
                   min_count: int = 0) -> GohariGuarantee:
    """Gohari et al.'s :math:`(\\hat\\varepsilon, \\delta)` guarantee of one release at scale ``r``.

    Solves :math:`\\delta(\\gamma) = \\delta` (:func:`gohari_delta`, increasing
    in :math:`\\gamma`) on a bracket from the Beta quantiles of the smallest part
    (:math:`\\delta(\\gamma)` lies between the largest single tail and three times
    it), by the Illinois (regula falsi) method on :math:`\\log\\delta` against
    :math:`\\log\\gamma`, until :math:`\\delta(\\gamma)` matches :math:`\\delta` to
    1e-13 relative or the bracket on :math:`\\log\\gamma` is below 1e-10, and
    evaluates :func:`gohari_epsilon_at` there. The unit tests check that
    :math:`\\delta(\\gamma(1 \\pm 10^{-6}))` brackets :math:`\\delta` (a relative
    tolerance of 1e-6 on :math:`\\gamma`, with room).

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
    >>> from lib.mechanisms.gohari.guarantee import gohari_epsilon
    >>> g = gohari_epsilon(1.0, 1e-5, lam=2, n_total=1283, d=6)
    >>> print(f"{g.epsilon_hat:.6f} {g.gamma:.6e}")
    14.172841 1.800296e-04
    """
    r, lam, n_total, d, m = check_setting(r, lam, n_total, d, min_count)
    delta = check_delta(delta)
    par = params(r, lam, n_total, d, m)
    gamma = solve_gamma(delta, par, d)
    return GohariGuarantee(float(epsilon_hat_at(gamma, r, par)), gamma, r, par.alpha)


def gohari_calibrate(epsilon_hat: float, delta: float, *, lam: float, n_total: float, d: int,
                     min_count: int = 0) -> GohariGuarantee:
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
    delta, lam, n_total, d, min_count
        As in :func:`gohari_epsilon`.

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
    >>> from lib.mechanisms.gohari.guarantee import gohari_calibrate
    >>> g = gohari_calibrate(1.0, 1e-5, lam=2, n_total=1283, d=6)
    >>> print(f"{g.r:.6f} {g.epsilon_hat:.9f}")
    0.053300 1.000000000
    """
    target = check_target(epsilon_hat)
    delta = check_delta(delta)
    _, lam, n_total, d, m = check_setting(1.0, lam, n_total, d, min_count)

    log_target = np.log(target)
    seen = {}

    def gap(t):  # log epsilon_hat(r) - log target, in t = log r
        r = float(np.exp(t))
        par = params(r, lam, n_total, d, m)
        gamma = solve_gamma(delta, par, d)
        value = float(epsilon_hat_at(gamma, r, par))
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
    t, _ = illinois(gap, t_lo, f_lo, t_hi, f_hi, xtol=R_RTOL, ftol=1e-12)
    for _ in range(MAX_STEPS):
        if not seen[t].epsilon_hat > target:  # never return a guarantee above the target
            return seen[t]
        t -= R_RTOL
        gap(t)
    raise ValueError(  # pragma: no cover - the root is accurate to R_RTOL
        f"could not bring epsilon_hat below the target {target:g} at delta = {delta:g}")
