"""Privacy accounting: from Renyi DP to approximate DP (Appendix B).

:func:`rdp_to_dp` is eq. (14); :func:`dp_to_rdp` and :func:`min_order` invert it
at a fixed order for a target :math:`(\\hat\\varepsilon, \\delta)`, with
composed releases; :func:`optimal_order` chooses the order by the expected KL
loss (:func:`expected_kl_loss`) and :func:`fixed_order` is the author's rule
:math:`\\lambda = 1 + 1/\\varepsilon`. :func:`search_order_many` runs the order
search of many targets in lockstep (each target takes the steps of
:func:`search_order`, so the results are the same), for the experiment grids.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np
from scipy import special

from . import _validate
from .calibration import calibrate
from .moments import expected_kl_loss


def rdp_to_dp(epsilon, lam, delta):
    """Convert :math:`(\\lambda, \\varepsilon)`-RDP to :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Lemma 3 (Canonne, Kamath and Steinke 2020, Proposition 12) solved for
    :math:`\\hat\\varepsilon` as in Appendix B:

    .. math::
        \\hat\\varepsilon = \\varepsilon + \\log(\\lambda - 1)
        - \\frac{\\log\\delta + \\lambda\\log\\lambda}{\\lambda - 1},

    eq. (14) with the RDP level of Algorithm 1 in place of :math:`\\varepsilon`.
    It is evaluated as :math:`\\varepsilon + \\log(1 - 1/\\lambda) -
    \\log(\\delta\\lambda)/(\\lambda - 1)`, the same quantity without the
    cancellation between :math:`\\log(\\lambda-1)` and
    :math:`\\lambda\\log\\lambda/(\\lambda-1)` at large :math:`\\lambda`.
    A negative value means the guarantee holds with :math:`\\hat\\varepsilon = 0`
    (since :math:`e^{\\hat\\varepsilon} < 1`), so the result is clipped at 0.

    Parameters
    ----------
    epsilon : array_like
        RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : array_like
        Order :math:`\\lambda \\in (1, \\infty)`.
    delta : array_like
        :math:`\\delta \\in (0, 1)`.

    Returns
    -------
    ndarray or float
        :math:`\\hat\\varepsilon \\ge 0`, broadcast over the inputs.
    """
    epsilon = _validate.positive(epsilon, "epsilon")
    lam = _validate.order(lam, "lam", strict=True)
    delta = _validate.open_unit(delta, "delta")
    epsilon, lam, delta = _validate.broadcast(epsilon=epsilon, lam=lam, delta=delta)
    eps_hat = epsilon + np.log1p(-1 / lam) - np.log(delta * lam) / (lam - 1)
    return np.maximum(eps_hat, 0.0)[()]


class OrderChoice(NamedTuple):
    """An order :math:`\\lambda` and the Algorithm 1 calibration it leads to.

    Attributes
    ----------
    lam : float
        Renyi order :math:`\\lambda`.
    r, alpha : float
        Lines 1-2 of Algorithm 1 at order ``lam`` and RDP level ``epsilon``.
    epsilon : float
        RDP level :math:`\\varepsilon` of each release; ``n_releases`` releases
        compose to :math:`(\\lambda, n\\varepsilon)`-RDP, which eq. (14) turns
        into the target :math:`(\\hat\\varepsilon, \\delta)`-DP.
    expected_kl : float
        :func:`expected_kl_loss` of the reference histogram at ``(r, alpha)``;
        NaN when :func:`fixed_order` was given no reference histogram.
    """

    lam: float
    r: float
    alpha: float
    epsilon: float
    expected_kl: float


def _target(epsilon_hat, delta, n_releases):
    """Validate a scalar (epsilon_hat, delta) target and a number of releases."""
    eps_hat = _validate.scalar(_validate.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    delta = _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
    return eps_hat, delta, _validate.integer(n_releases, "n_releases")


def dp_to_rdp(epsilon_hat, lam, delta, *, n_releases=1):
    """The RDP level per release that eq. (14) turns into :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Inverts :func:`rdp_to_dp` at a fixed order: ``n_releases`` releases, each
    :math:`(\\lambda, \\varepsilon)`-RDP, compose to :math:`(\\lambda,
    n\\varepsilon)`-RDP, and eq. (14) gives :math:`(\\hat\\varepsilon, \\delta)`-DP when

    .. math::
        n\\varepsilon = \\hat\\varepsilon - \\log(1 - 1/\\lambda)
        + \\frac{\\log(\\delta\\lambda)}{\\lambda - 1}.

    The right side tends to :math:`-\\infty` as :math:`\\lambda \\to 1`, increases
    strictly up to :math:`\\lambda = 1/\\delta` (its derivative in :math:`\\lambda`
    is :math:`-\\log(\\delta\\lambda)/(\\lambda-1)^2`) and then decreases to
    :math:`\\hat\\varepsilon`. A value :math:`\\le 0` means that no RDP level at
    that order meets the target (the order is infeasible); it is returned as is,
    not clipped, so that :func:`min_order` can locate the boundary.

    Parameters
    ----------
    epsilon_hat : array_like
        Target :math:`\\hat\\varepsilon \\in (0, \\infty)`.
    lam : array_like
        Order :math:`\\lambda \\in (1, \\infty)`.
    delta : array_like
        :math:`\\delta \\in (0, 1)`.
    n_releases : int, default 1
        Number :math:`n \\ge 1` of releases composed at the same order.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon` per release, broadcast over the inputs.

    Examples
    --------
    >>> from lib.accounting import dp_to_rdp, rdp_to_dp
    >>> eps = dp_to_rdp(1.0, 20.0, 1e-5)
    >>> round(float(rdp_to_dp(eps, 20.0, 1e-5)), 12)
    1.0
    """
    epsilon_hat = _validate.positive(epsilon_hat, "epsilon_hat")
    lam = _validate.order(lam, "lam", strict=True)
    delta = _validate.open_unit(delta, "delta")
    n = _validate.integer(n_releases, "n_releases")
    epsilon_hat, lam, delta = _validate.broadcast(epsilon_hat=epsilon_hat, lam=lam, delta=delta)
    total = epsilon_hat - np.log1p(-1 / lam) + np.log(delta * lam) / (lam - 1)
    return (total / n)[()]


def min_order(epsilon_hat, delta):
    """The smallest feasible order :math:`\\lambda_0` of a :math:`(\\hat\\varepsilon, \\delta)` target.

    :func:`dp_to_rdp` is positive exactly on :math:`(\\lambda_0, \\infty)`:
    it is strictly increasing on :math:`(1, 1/\\delta]`, tends to
    :math:`-\\infty` at 1 and is positive from :math:`1/\\delta` on, so it has a
    single root :math:`\\lambda_0 \\in (1, 1/\\delta)`, found by Brent's method
    in :math:`\\log(\\lambda - 1)`. Every target with :math:`\\hat\\varepsilon > 0`
    is feasible at some order; the number of releases does not move
    :math:`\\lambda_0`.

    Parameters
    ----------
    epsilon_hat : float
        Target :math:`\\hat\\varepsilon \\in (0, \\infty)`.
    delta : float
        :math:`\\delta \\in (0, 1)`.

    Returns
    -------
    float
        :math:`\\lambda_0`, accurate to about 1e-12 relative in :math:`\\lambda - 1`
        (in the value of :math:`\\lambda - 1` before rounding :math:`\\lambda`: where
        :math:`\\lambda_0 - 1` is below :math:`2.2 \\cdot 10^{-16}`, as for
        :math:`\\hat\\varepsilon` above about :math:`10^{17}` with :math:`\\delta = 10^{-5}`, the
        smallest double above 1 is returned, an order at which the target is feasible).
    """
    eps_hat, delta, _ = _target(epsilon_hat, delta, 1)
    log_delta = np.log(delta)

    def budget(t):
        if t > -20:
            lam = 1 + np.exp(t)
            return eps_hat - np.log1p(-1 / lam) + np.log(delta * lam) / (lam - 1)
        # lam - 1 = e^t is not representable as lam - 1 here: the same expression in t,
        # log1p(-1/lam) = t - log1p(e^t) and log(delta lam)/(lam - 1) = (log delta + log1p(e^t)) e^-t
        with np.errstate(over="ignore"):
            return eps_hat - (t - np.log1p(np.exp(t))) + (log_delta + np.log1p(np.exp(t))) * np.exp(-t)

    hi = np.log(1 / delta - 1) if delta < 0.5 else 0.0
    for _ in range(_MAX_BRACKET_STEPS):
        if budget(hi) > 0:  # only for delta near 1, where 1/delta - 1 is tiny
            break
        hi += 1.0
    else:  # pragma: no cover - budget -> epsilon_hat > 0 as lam -> inf
        raise ValueError(f"no feasible order found for epsilon_hat = {eps_hat:g}, delta = {delta:g}")
    lo = min(hi, 0.0) - 1.0
    for _ in range(_MAX_BRACKET_STEPS):
        if budget(lo) <= 0:  # budget -> -inf as lam -> 1, so this ends (by t = -746 at most)
            break
        lo -= 1.0
    else:  # pragma: no cover
        raise ValueError(f"the smallest feasible order of epsilon_hat = {eps_hat:g}, delta = {delta:g} "
                         "is below double precision")
    t = _validate.brentq(budget, lo, hi, f"the smallest order of epsilon_hat = {eps_hat:g}, delta = {delta:g}",
                         xtol=1e-13, rtol=4 * np.finfo(float).eps)
    # The smallest order above 1 that a double holds, where lam0 - 1 is below it.
    return float(max(1 + np.exp(t), np.nextafter(1.0, 2.0)))


#: Cap on the unit steps that grow a bracket (every bracket here closes within
#: about 750 steps in log space, the range of a double).
_MAX_BRACKET_STEPS = 2000


@contextlib.contextmanager
def blame_target(epsilon_hat, delta):
    """Re-raise a ValueError of an inner calibration as one about the caller's target.

    An order search calls Algorithm 1 at RDP levels the caller never chose; a
    failure there ("epsilon = ... beyond double precision") is reported as a
    failure of ``epsilon_hat`` and ``delta``, with the inner message kept.
    """
    try:
        yield
    except ValueError as exc:
        if str(exc).startswith("epsilon_hat"):
            raise
        raise ValueError(f"epsilon_hat = {epsilon_hat:g} with delta = {delta:g} cannot be calibrated: "
                         f"{exc}") from exc


def _reference(counts):
    """A reference histogram: shape (d,), non-negative, positive total."""
    counts = _validate.vectors(counts, "counts", positive_entries=False)
    if counts.ndim != 1 or counts.sum() <= 0:
        raise ValueError(f"counts must be one histogram of shape (d,) with a positive total; got {counts.shape}")
    return counts


def _choice(eps_per_release, lam, l2_sq, linf, counts):
    r, alpha = calibrate(eps_per_release, lam, l2_sq, linf)
    kl = float(expected_kl_loss(counts, r, alpha)) if counts is not None else float("nan")
    return OrderChoice(float(lam), float(r), float(alpha), float(eps_per_release), kl)


def fixed_order(epsilon_hat, delta, *, n_releases=1, l2_sq=2.0, linf=1.0, counts=None):
    """The author's rule :math:`\\lambda = 1 + 1/\\varepsilon` for an :math:`(\\hat\\varepsilon, \\delta)` target.

    The original code does not choose the order by optimisation: it solves
    eq. (14) for the RDP level :math:`\\varepsilon` under the constraint
    :math:`\\lambda = 1 + 1/\\varepsilon`, that is
    ``dp_to_rdp(epsilon_hat, 1 + 1/eps, delta, n_releases) = eps``, and then runs
    Algorithm 1 at that pair. On :math:`\\varepsilon > 1/(1/\\delta - 1)` the left
    side decreases in :math:`\\varepsilon` (the order falls below
    :math:`1/\\delta`) while the right side increases, and at
    :math:`\\varepsilon \\le \\min(\\delta, \\hat\\varepsilon/n)/2` the left side
    exceeds the right. So the root is unique whenever
    :math:`\\hat\\varepsilon / n > \\delta/(1-\\delta)` (every practical target);
    it is found by Brent's method in :math:`\\log\\varepsilon`.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target, :math:`\\hat\\varepsilon > 0`, :math:`\\delta \\in (0, 1)`.
    n_releases : int, default 1
        Releases composed at the same order (1 is the author's setting).
    l2_sq, linf : float
        Sensitivities, as in :func:`lib.calibrate`.
    counts : array_like, shape (d,), optional
        A reference histogram; only used to report ``expected_kl``.

    Returns
    -------
    OrderChoice
        With ``expected_kl`` NaN when ``counts`` is None (the rule involves no
        histogram).
    """
    eps_hat, delta, n = _target(epsilon_hat, delta, n_releases)
    if counts is not None:
        counts = _reference(counts)

    log_delta = np.log(delta)

    def gap(log_eps):
        eps = np.exp(log_eps)
        if log_eps < 20:
            lam = 1 + 1 / eps
            return eps_hat - np.log1p(-1 / lam) + np.log(delta * lam) / (lam - 1) - n * eps
        # lam - 1 = 1/eps is not representable as lam - 1: the same expression in log eps
        return eps_hat + log_eps + np.log1p(1 / eps) + (log_delta + np.log1p(1 / eps)) * eps - n * eps

    # At eps <= min(delta, eps_hat / n) / 2 the order is at least 1/delta, where
    # dp_to_rdp exceeds eps_hat / n, so the gap is positive.
    lo = np.log(0.5 * min(delta, eps_hat / n))
    hi = max(lo, 0.0) + 1.0
    for _ in range(_MAX_BRACKET_STEPS):
        if gap(hi) < 0:  # the gap tends to -inf as eps grows
            break
        hi += 1.0
    else:  # pragma: no cover - the gap is below 0 by log eps = 710
        raise ValueError(f"the fixed rule found no RDP level for epsilon_hat = {eps_hat:g}, delta = {delta:g}")
    eps = float(np.exp(_validate.brentq(gap, lo, hi, f"the fixed-rule RDP level of epsilon_hat = {eps_hat:g}, "
                                        f"delta = {delta:g}", xtol=1e-14, rtol=4 * np.finfo(float).eps)))
    if not 1 + 1 / eps > 1:
        raise ValueError(
            f"epsilon_hat / n_releases = {eps_hat / n:g} is too large for the fixed rule: its order "
            f"1 + 1/epsilon (epsilon = {eps:.3g}) rounds to 1 in double precision; the rule works for "
            "epsilon_hat / n_releases up to about 1e15")
    with blame_target(eps_hat, delta):
        return _choice(eps, 1 + 1 / eps, l2_sq, linf, counts)


def optimal_order(epsilon_hat, delta, counts, *, n_releases=1, l2_sq=2.0, linf=1.0, lam_max=None, grid_size=128):
    """The order that minimises the expected KL loss for an :math:`(\\hat\\varepsilon, \\delta)` target.

    Every order :math:`\\lambda > \\lambda_0` (:func:`min_order`) meets the target
    with the per-release RDP level :math:`\\varepsilon(\\lambda)` of
    :func:`dp_to_rdp`; Algorithm 1 then fixes :math:`r(\\lambda)` and
    :math:`\\alpha(\\lambda)`. The scale :math:`r` alone is not a measure of noise:
    it keeps growing with the order towards :math:`6\\hat\\varepsilon\\Delta_\\infty /
    (n\\Delta_2^2)` while the pseudo-count :math:`\\alpha \\ge 4(\\lambda-1) r
    \\Delta_\\infty` grows without bound and pulls the output to uniform. The
    order is therefore chosen to minimise :func:`expected_kl_loss` of a
    reference histogram.

    The search over orders is :func:`search_order`.

    .. warning:: A choice that depends on the private histogram is itself a
       release. Pass a public or synthetic reference histogram of realistic shape
       and size, not the data being privatised. Do not use a uniform reference:
       for it the pull towards uniform costs nothing and the search runs to
       ``lam_max``.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target :math:`(\\hat\\varepsilon, \\delta)` for all releases together.
    counts : array_like, shape (d,)
        Reference histogram (non-negative, positive total) for the loss.
    n_releases : int, default 1
        Number of releases composed at the chosen order; each gets RDP level
        ``dp_to_rdp(epsilon_hat, lam, delta) / n_releases``.
    l2_sq, linf : float
        Sensitivities, as in :func:`lib.calibrate`.
    lam_max : float, optional
        Largest order searched; default :math:`1/\\delta`, beyond which the
        per-release budget decreases while :math:`\\alpha` keeps growing.
    grid_size : int, default 128
        Points of the safeguard grid (at least 8).

    Returns
    -------
    OrderChoice

    Raises
    ------
    ValueError
        For invalid input, or when no order up to ``lam_max`` meets the target.
    """
    eps_hat, delta, n = _target(epsilon_hat, delta, n_releases)
    counts = _reference(counts)
    grid_size = _validate.integer(grid_size, "grid_size", 8)
    lam_max = 1 / delta if lam_max is None else _validate.scalar(_validate.order(lam_max, "lam_max", strict=True), "lam_max")
    l2_sq = _validate.scalar(_validate.positive(l2_sq, "l2_sq"), "l2_sq")
    linf = _validate.scalar(_validate.positive(linf, "linf"), "linf")
    def loss(lam):
        r, alpha = calibrate(dp_to_rdp(eps_hat, lam, delta, n_releases=n), lam, l2_sq, linf)
        return expected_kl_loss(counts, r, alpha)

    with blame_target(eps_hat, delta):
        lam, _ = search_order(eps_hat, delta, loss, lam_max=lam_max, grid_size=grid_size)
        return _choice(dp_to_rdp(eps_hat, lam, delta, n_releases=n), lam, l2_sq, linf, counts)


def search_order(epsilon_hat, delta, objective, *, lam_max=None, grid_size=128, xatol=1e-10):
    """The order :math:`\\lambda` in :math:`(\\lambda_0, \\lambda_{\\max}]` that minimises ``objective(lam)``.

    The search behind :func:`optimal_order`,
    :func:`lib.approximate_dp.model_order` and
    :func:`lib.approximate_dp.rdp_gaussian_sigma`. Every order above
    :math:`\\lambda_0` (:func:`min_order`) can meet the target
    :math:`(\\hat\\varepsilon, \\delta)`; the search runs over :math:`u =
    \\log(\\lambda - \\lambda_0)`: a grid of ``grid_size`` points from
    :math:`10^{-9}\\lambda_0` to :math:`\\lambda_{\\max} - \\lambda_0`, then a
    bounded scalar search (scipy's ``minimize_scalar``, absolute tolerance
    ``xatol`` on :math:`u`) between the neighbours of the best grid point; the
    better of the two wins. The grid is the safeguard: unimodality of the
    objective is observed, not proved.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target :math:`(\\hat\\varepsilon, \\delta)`, already validated.
    objective : callable
        ``objective(lam)`` for an array of orders, returning an array of the
        same shape.
    lam_max : float, optional
        Largest order searched; default :math:`1/\\delta`.
    grid_size : int, default 128
    xatol : float, default 1e-10

    Returns
    -------
    lam : float
        The best order found.
    value : float
        ``objective(lam)``.

    Raises
    ------
    ValueError
        When no order up to ``lam_max`` meets the target.
    """
    from scipy import optimize  # imported where used: about 0.4 s at start-up otherwise

    lam_max = 1 / delta if lam_max is None else lam_max
    lam0 = min_order(epsilon_hat, delta)
    if not lam0 * (1 + 1e-9) < lam_max:
        raise ValueError(
            f"no order in (1, lam_max = {lam_max:g}] meets epsilon_hat = {epsilon_hat:g}, delta = {delta:g}: "
            f"the smallest feasible order is {lam0:.6g}; raise lam_max (default 1/delta) or epsilon_hat"
        )

    def of_u(u):
        return objective(lam0 + np.exp(u))

    grid = np.linspace(np.log(1e-9 * lam0), np.log(lam_max - lam0), int(grid_size))
    values = of_u(grid)
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    refined = optimize.minimize_scalar(lambda u: float(of_u(u)), bounds=(lo, hi), method="bounded",
                                       options={"xatol": xatol})
    u, value = (refined.x, refined.fun) if refined.fun < values[best] else (grid[best], values[best])
    return lam0 + float(np.exp(u)), float(value)


#: Constants of the bounded scalar search (Brent's golden-section and parabola
#: steps), the values scipy's ``minimize_scalar(method="bounded")`` uses.
_GOLDEN = 0.5 * (3.0 - np.sqrt(5.0))
_SQRT_EPS = np.sqrt(2.2e-16)
#: Cap on the objective evaluations of one bounded search (scipy's default).
_MAX_BOUNDED_EVALUATIONS = 500


def _bounded_minimum(func, lo, hi, xatol):
    """Minima of many scalar functions on their intervals, searched in lockstep.

    Brent's bounded minimisation (golden-section steps, parabolic steps where
    the last three points allow one), the steps of scipy's
    ``minimize_scalar(method="bounded")`` for each element on its own: element
    ``i`` takes exactly the steps of a scalar search on ``[lo[i], hi[i]]``, and
    stops when its own interval is within ``xatol`` (or after
    :data:`_MAX_BOUNDED_EVALUATIONS` evaluations, as scipy does). ``func(x,
    which)`` evaluates the functions of the elements ``which`` at ``x``, both
    1-D. Returns the best points and their values, arrays of ``lo``'s shape.
    """
    a, b = np.array(lo, float), np.array(hi, float)
    x = a + _GOLDEN * (b - a)  # the best point so far
    w, v = x.copy(), x.copy()  # the second and third best
    fx = np.asarray(func(x, np.arange(x.size)), float).copy()
    fw, fv = fx.copy(), fx.copy()
    step, prev = np.zeros_like(x), np.zeros_like(x)  # the last step and the one before
    count = np.ones(x.size, int)
    for _ in range(_MAX_BOUNDED_EVALUATIONS):
        mid = 0.5 * (a + b)
        tol1 = _SQRT_EPS * np.abs(x) + xatol / 3.0
        tol2 = 2.0 * tol1
        act = np.flatnonzero((np.abs(x - mid) > tol2 - 0.5 * (b - a)) & (count < _MAX_BOUNDED_EVALUATIONS))
        if not act.size:
            break
        xa, wa, va, fxa, fwa, fva = x[act], w[act], v[act], fx[act], fw[act], fv[act]
        aa, ba, ma, t1, t2 = a[act], b[act], mid[act], tol1[act], tol2[act]
        ea, rat = prev[act], step[act]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            tried = np.abs(ea) > t1  # a parabola through the three best points
            rr = (xa - wa) * (fxa - fva)
            q = (xa - va) * (fxa - fwa)
            p = (xa - va) * q - (xa - wa) * rr
            q = 2.0 * (q - rr)
            p = np.where(q > 0.0, -p, p)
            q = np.abs(q)
            accept = tried & (np.abs(p) < np.abs(0.5 * q * ea)) & (p > q * (aa - xa)) & (p < q * (ba - xa))
            parabolic = (p + 0.0) / q
            near_end = ((xa + parabolic) - aa < t2) | (ba - (xa + parabolic) < t2)
            toward = np.sign(ma - xa) + ((ma - xa) == 0)
            parabolic = np.where(near_end, t1 * toward, parabolic)
        golden_e = np.where(xa >= ma, aa - xa, ba - xa)
        new_e = np.where(accept, np.where(tried, rat, ea), golden_e)
        rat = np.where(accept, parabolic, _GOLDEN * golden_e)
        sign = np.sign(rat) + (rat == 0)
        u = xa + sign * np.maximum(np.abs(rat), t1)
        fu = np.asarray(func(u, act), float)
        count[act] += 1
        better = fu <= fxa
        right = u >= xa
        a[act] = np.where(better, np.where(right, xa, aa), np.where(right, aa, u))
        b[act] = np.where(better, np.where(right, ba, xa), np.where(right, u, ba))
        second = ~better & ((fu <= fwa) | (wa == xa))
        third = ~better & ~second & ((fu <= fva) | (va == xa) | (va == wa))
        v[act] = np.where(better | second, wa, np.where(third, u, va))
        fv[act] = np.where(better | second, fwa, np.where(third, fu, fva))
        w[act] = np.where(better, xa, np.where(second, u, wa))
        fw[act] = np.where(better, fxa, np.where(second, fu, fwa))
        x[act] = np.where(better, u, xa)
        fx[act] = np.where(better, fu, fxa)
        step[act], prev[act] = rat, new_e
    return x, fx


def search_order_many(epsilon_hats, delta, objective, *, lam_max=None, grid_size=128, xatol=1e-10):
    """:func:`search_order` for many targets :math:`\\hat\\varepsilon_i` at one :math:`\\delta`, vectorised.

    The same search, target by target (the smallest order :math:`\\lambda_0`,
    the grid in :math:`\\log(\\lambda - \\lambda_0)`, the bounded refinement between
    the neighbours of the best grid point), with the objective evaluated for all
    targets in one call per step: ``objective(lam, which)`` returns the values of
    the targets ``which`` (1-D integer array) at orders ``lam`` of shape
    ``(len(which),)`` or ``(len(which), n)``. Each target's search is the one
    :func:`search_order` would run (same grid, same refinement steps).

    Parameters
    ----------
    epsilon_hats : sequence of float
        The targets, already validated.
    delta : float
        Already validated.
    objective : callable
    lam_max, grid_size, xatol
        As in :func:`search_order`.

    Returns
    -------
    lam, value : ndarray
        The best order of each target and its objective.

    Raises
    ------
    ValueError
        When no order up to ``lam_max`` meets some target (the first one).
    """
    eps = np.asarray(epsilon_hats, float)
    lam_max = 1 / delta if lam_max is None else lam_max
    lam0 = np.array([min_order(e, delta) for e in eps])
    for e, l0 in zip(eps, lam0):
        if not l0 * (1 + 1e-9) < lam_max:
            raise ValueError(
                f"no order in (1, lam_max = {lam_max:g}] meets epsilon_hat = {e:g}, delta = {delta:g}: "
                f"the smallest feasible order is {l0:.6g}; raise lam_max (default 1/delta) or epsilon_hat"
            )
    grid = np.stack([np.linspace(np.log(1e-9 * l0), np.log(lam_max - l0), int(grid_size)) for l0 in lam0])
    values = np.asarray(objective(lam0[:, None] + np.exp(grid), np.arange(eps.size)), float)
    best = np.argmin(values, axis=1)
    rows = np.arange(eps.size)
    lo = grid[rows, np.maximum(best - 1, 0)]
    hi = grid[rows, np.minimum(best + 1, grid.shape[1] - 1)]
    u, value = _bounded_minimum(lambda x, which: objective(lam0[which] + np.exp(x), which), lo, hi, xatol)
    at_grid = ~(value < values[rows, best])
    u = np.where(at_grid, grid[rows, best], u)
    value = np.where(at_grid, values[rows, best], value)
    return lam0 + np.exp(u), value
