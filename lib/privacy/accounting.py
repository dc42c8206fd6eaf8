"""Privacy accounting: from Renyi DP to approximate DP (Appendix B), for any mechanism.

:func:`rdp_to_dp` is eq. (14); :func:`dp_to_rdp` and :func:`min_order` invert it
at a fixed order for a target :math:`(\\hat\\varepsilon, \\delta)`, with
composed releases. :func:`search_order` finds the order that minimises any
objective (a mechanism's loss at the RDP level :func:`dp_to_rdp` leaves it), and
:func:`search_order_many` runs the searches of many targets in lockstep (each
target takes the steps of :func:`search_order`, so the results are the same).
The Dirichlet mechanism's choices of order are in
:mod:`lib.mechanisms.dirichlet.order`.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.privacy.guarantees import MAX_RELEASES, split_level


def rdp_to_dp(epsilon: ArrayLike, lam: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
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
        RDP level :math:`\\varepsilon \\in (0, \\infty]`; :math:`+\\infty` (an exact
        curve above its order limit, :func:`lib.mechanisms.dirichlet.curve.order_limit`)
        gives :math:`+\\infty`.
    lam : array_like
        Order :math:`\\lambda \\in (1, \\infty)`.
    delta : array_like
        :math:`\\delta \\in (0, 1)`.

    Returns
    -------
    ndarray or float
        :math:`\\hat\\varepsilon \\ge 0`, broadcast over the inputs.

    Raises
    ------
    ValueError
        If ``epsilon`` is NaN or not positive, ``lam`` not in :math:`(1, \\infty)`
        or ``delta`` not in :math:`(0, 1)`.

    Examples
    --------
    >>> from lib.privacy.accounting import rdp_to_dp
    >>> rdp_to_dp([0.5, float("inf")], 4.0, 1e-5).round(4)
    array([3.5879,    inf])
    """
    epsilon = _level(epsilon, "epsilon")
    lam = validation.order(lam, "lam", strict=True)
    delta = validation.open_unit(delta, "delta")
    epsilon, lam, delta = validation.broadcast(epsilon=epsilon, lam=lam, delta=delta)
    with np.errstate(invalid="ignore"):
        eps_hat = epsilon + np.log1p(-1 / lam) - np.log(delta * lam) / (lam - 1)
    return np.maximum(eps_hat, 0.0)[()]


def _level(epsilon, name):
    """An RDP level: every entry in :math:`(0, \\infty]` (a curve is infinite from its order limit on)."""
    value = np.asarray(epsilon)
    if not (np.issubdtype(value.dtype, np.floating) and np.any(np.isposinf(value))):
        return validation.positive(epsilon, name)  # no inf: the usual checks and messages
    bad = ~(value > 0)  # NaN and values <= 0 (with -inf)
    if np.any(bad):
        i = int(np.argmax(bad.ravel()))
        raise ValueError(f"{name} must be in (0, inf] (inf where a Renyi curve is infinite); "
                         f"got {float(value.ravel()[i])}" + (f" at index {i}" if value.ndim else ""))
    return value.astype(float)


def validated_target(epsilon_hat: float, delta: float, n_releases: int) -> tuple[float, float, int]:
    """Validate a scalar (epsilon_hat, delta) target and a number of releases."""
    eps_hat = validation.scalar(validation.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    return eps_hat, delta, validation.integer(n_releases, "n_releases", 1, MAX_RELEASES)


def dp_to_rdp(epsilon_hat: ArrayLike, lam: ArrayLike, delta: ArrayLike, *, n_releases: int = 1) -> np.ndarray | float:
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
    >>> from lib.privacy.accounting import dp_to_rdp, rdp_to_dp
    >>> eps = dp_to_rdp(1.0, 20.0, 1e-5)
    >>> round(float(rdp_to_dp(eps, 20.0, 1e-5)), 12)
    1.0
    """
    epsilon_hat = validation.positive(epsilon_hat, "epsilon_hat")
    lam = validation.order(lam, "lam", strict=True)
    delta = validation.open_unit(delta, "delta")
    n = validation.integer(n_releases, "n_releases", 1, MAX_RELEASES)
    epsilon_hat, lam, delta = validation.broadcast(epsilon_hat=epsilon_hat, lam=lam, delta=delta)
    total = epsilon_hat - np.log1p(-1 / lam) + np.log(delta * lam) / (lam - 1)
    return np.asarray(split_level(total, n))[()]   # the one budget split (Guarantee.split's)


def min_order(epsilon_hat: float, delta: float) -> float:
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
    eps_hat, delta, _ = validated_target(epsilon_hat, delta, 1)
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
    for _ in range(MAX_BRACKET_STEPS):
        if budget(hi) > 0:  # only for delta near 1, where 1/delta - 1 is tiny
            break
        hi += 1.0
    else:  # pragma: no cover - budget -> epsilon_hat > 0 as lam -> inf
        raise ValueError(f"no feasible order found for epsilon_hat = {eps_hat:g}, delta = {delta:g}")
    lo = min(hi, 0.0) - 1.0
    for _ in range(MAX_BRACKET_STEPS):
        if budget(lo) <= 0:  # budget -> -inf as lam -> 1, so this ends (by t = -746 at most)
            break
        lo -= 1.0
    else:  # pragma: no cover
        raise ValueError(f"the smallest feasible order of epsilon_hat = {eps_hat:g}, delta = {delta:g} "
                         "is below double precision")
    t = validation.brentq(budget, lo, hi, f"the smallest order of epsilon_hat = {eps_hat:g}, delta = {delta:g}",
                         xtol=1e-13, rtol=4 * np.finfo(float).eps)
    # The smallest order above 1 that a double holds, where lam0 - 1 is below it.
    return float(max(1 + np.exp(t), np.nextafter(1.0, 2.0)))


#: Cap on the unit steps in log space that grow a bracket of a root search (a
#: double spans about 1500 of them, so every bracket closes well within it).
MAX_BRACKET_STEPS = 2000


@contextlib.contextmanager
def blame_target(epsilon_hat: float, delta: float) -> Iterator[None]:
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


def search_order(epsilon_hat: float, delta: float, objective: Callable[[np.ndarray], ArrayLike], *,
                 lam_max: float | None = None, grid_size: int = 128) -> tuple[float, float]:
    """The order :math:`\\lambda` in :math:`(\\lambda_0, \\lambda_{\\max}]` that minimises ``objective(lam)``.

    The search behind :func:`optimal_order`,
    :func:`lib.mechanisms.dirichlet.approximate_dp.model_order` and
    :func:`lib.mechanisms.noise.calibration.rdp_gaussian_sigma`: :func:`search_order_many` for
    one target. ``objective(lam)`` takes a 1-D array of orders and returns an
    array of the same shape.

    Returns
    -------
    lam : float
        The chosen order.
    value : float
        ``objective(lam)``.

    Raises
    ------
    ValueError
        When no order up to ``lam_max`` meets the target.
    """
    lam, value = search_order_many([epsilon_hat], delta, lambda lam, which: np.asarray(objective(lam[0]))[None],
                                   lam_max=lam_max, grid_size=grid_size)
    return float(lam[0]), float(value[0])


#: Points of each refinement stage of the order search (odd: the centre is a point).
_REFINE_POINTS = 33
#: One refinement stage after the first grid, across the two grid steps around the
#: chosen point: its step is 1/16 of the first one, about 0.016 in log(lambda -
#: lambda_0) for the default grid. A finer last stage gains nothing a reader can
#: see (the objective is flat there) and makes the choice fragile: near the
#: minimum neighbouring values differ by less than the objective's own rounding.
_REFINE_STAGES = 1
#: Objective values within this relative distance of the minimum count as tied;
#: the smallest tied order is chosen (see :func:`search_order_many`).
ORDER_TIE_RTOL = 1e-6


def _first_near_minimum(values, rtol):
    """Per row, the first index whose value is within ``rtol`` (relative) of the row's minimum.

    NaN counts as worse than every number. A plain ``argmin`` of a flat
    objective picks between points whose values differ only in their last bits,
    which differ between CPUs; this choice changes only when a value crosses the
    threshold ``min * (1 + rtol)``, which rounding (about 1e-15) almost never does.
    """
    values = np.where(np.isnan(values), np.inf, values)
    low = values.min(axis=1)
    threshold = low + rtol * np.abs(np.where(np.isfinite(low), low, 0.0))
    return np.argmax(values <= threshold[:, None], axis=1)


def search_order_many(epsilon_hats: ArrayLike, delta: float, objective: Callable[[np.ndarray, np.ndarray], np.ndarray],
                      *, lam_max: float | None = None, grid_size: int = 128,
                      lam_min: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The best order of each of many targets :math:`(\\hat\\varepsilon_i, \\delta)`, on fixed grids.

    Every order above :math:`\\lambda_0` (:func:`min_order`) meets the target,
    and the guarantee holds at whichever is used: the order serves only the
    utility. It is therefore chosen on *grids fixed by the public inputs*, the
    same on every machine, rather than by an iterative minimiser whose stopping
    point moves with the last bits of the objective (a flat minimum turns
    one-ulp differences of ``exp`` and ``log`` between CPUs into different
    orders, and a different order into a different random stream). In :math:`u =
    \\log(\\lambda - \\lambda_0)`:

    1. ``grid_size`` equally spaced points from :math:`\\log(10^{-9}\\lambda_0)` to
       :math:`\\log(\\lambda_{\\max} - \\lambda_0)`;
    2. 33 equally spaced points across the two steps around the chosen point.

    At each stage the chosen point is the *smallest* order whose objective is
    within :data:`ORDER_TIE_RTOL` (relative) of the stage's minimum, so near-ties
    are broken the same way everywhere. The choice changes between machines only
    if an objective value sits within its own rounding error of that threshold;
    the chance is about the objective's relative rounding error divided by
    :math:`2\\sqrt{10^{-6}}` times the last step, below 1e-10 for a well-conditioned
    objective and about 1e-4 for an expected KL loss of 1e-6 (which cancellation
    leaves with 1e-9 relative accuracy). The last step is about 0.016 in
    :math:`u` for the default grid: the chosen objective is within about 1e-4
    (relative) of its minimum. The grid is also the safeguard: unimodality of the
    objective is observed, not proved. The objective is evaluated for all
    targets in one call per stage: ``objective(lam, which)`` returns the values of
    the targets ``which`` (1-D integer array) at the orders ``lam`` of shape
    ``(len(which), n)``.

    Parameters
    ----------
    epsilon_hats : sequence of float
        The targets, already validated.
    delta : float
        Already validated.
    objective : callable
    lam_max : float, optional
        Largest order searched; default :math:`1/\\delta`.
    grid_size : int, default 128
        Points of the first grid.
    lam_min : float, optional
        The lower end :math:`\\lambda_0` of the orders searched, the same for
        every target, in :math:`[1, \\lambda_{\\max})`; default :func:`min_order`
        of each target (eq. (14) is infeasible below it). An accounting that
        does not go through eq. (14) at the order searched (the exact curve of
        :func:`lib.mechanisms.dirichlet.curve.calibrate_exact`) passes 1.

    Returns
    -------
    lam, value : ndarray
        The chosen order of each target and its objective.

    Raises
    ------
    ValueError
        When no order up to ``lam_max`` meets some target (the first one).
    """
    eps = np.asarray(epsilon_hats, float)
    lam_max = 1 / delta if lam_max is None else lam_max
    if lam_min is None:
        lam0 = np.array([min_order(e, delta) for e in eps])
    else:
        lam_min = validation.scalar(validation.order(lam_min, "lam_min"), "lam_min")
        lam0 = np.full(eps.shape, lam_min)
    for e, l0 in zip(eps, lam0):
        if not l0 * (1 + 1e-9) < lam_max:
            raise ValueError(
                f"no order in (1, lam_max = {lam_max:g}] meets epsilon_hat = {e:g}, delta = {delta:g}: "
                f"the smallest feasible order is {l0:.6g}; raise lam_max (default 1/delta) or epsilon_hat"
            )
    rows = np.arange(eps.size)
    lo, hi = np.log(1e-9 * lam0), np.log(lam_max - lam0)
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, int(grid_size))
    for stage in range(_REFINE_STAGES + 1):
        values = np.asarray(objective(lam0[:, None] + np.exp(grid), rows), float)
        best = _first_near_minimum(values, ORDER_TIE_RTOL)
        if stage == _REFINE_STAGES:
            break
        centre, step = grid[rows, best], grid[:, 1] - grid[:, 0]
        left, right = np.maximum(centre - step, lo), np.minimum(centre + step, hi)
        grid = left[:, None] + (right - left)[:, None] * np.linspace(0.0, 1.0, _REFINE_POINTS)
    return lam0 + np.exp(grid[rows, best]), values[rows, best]
