"""Composition of privacy guarantees, order by order, and the :math:`(\\hat\\varepsilon, \\delta)` it gives.

An :class:`Accountant` collects the guarantees of a sequence of releases (each
with a count of repetitions), adds their Renyi curves order by order on a grid
of orders, and converts the sum to :math:`(\\hat\\varepsilon, \\delta)`-DP with
eq. (14) at the best order of the grid. Every guarantee of
:mod:`lib.privacy.guarantees` enters through its curve
(:func:`renyi_curve`):

* :class:`~lib.privacy.guarantees.RenyiDP` with a curve: the curve, at every
  order; where a release states only one order :math:`\\lambda` (no curve), its
  level holds at every order up to :math:`\\lambda` (the Renyi divergence does
  not decrease with the order) and nothing is known above, where the curve is
  :math:`\\infty`;
* :class:`~lib.privacy.guarantees.ZeroConcentratedDP`: :math:`\\rho\\lambda`;
* :class:`~lib.privacy.guarantees.PureDP`: the tight bound of
  :func:`pure_dp_to_rdp`, and also basic composition of the pure levels (the
  accountant reports the better of the two);
* :class:`~lib.privacy.guarantees.ApproximateDP` has no Renyi curve: it is
  composed by basic composition with the rest (its :math:`\\varepsilon` and
  :math:`\\delta` are added to those of the Renyi part);
* :class:`~lib.privacy.guarantees.NotPrivate`: :math:`\\infty` everywhere.

:func:`release_guarantee` is the guarantee of a whole model's releases (any
objects with a ``guarantee``), through one accountant.

Notes
-----
Composition of Renyi DP (Mironov 2017, Proposition 1; Lemma 1 of the paper):
the divergences of independent releases add at every order, so curves add
pointwise, :math:`\\varepsilon(\\lambda) = \\sum_i k_i\\varepsilon_i(\\lambda)`.
The conversion (Lemma 3 of the paper, Canonne, Kamath and Steinke 2020,
Proposition 12; eq. (14) and Appendix B) holds at every order, so the smallest
value over the grid is a valid :math:`\\hat\\varepsilon`:

.. math::
    \\hat\\varepsilon(\\delta) = \\min_{\\lambda}\\;\\varepsilon(\\lambda)
    + \\log(1 - 1/\\lambda) - \\frac{\\log(\\delta\\lambda)}{\\lambda - 1}.

:mod:`lib.privacy.accounting` holds this conversion (:func:`lib.privacy.accounting.rdp_to_dp`) and no tighter
one, so it is the one used here. Guarantees of approximate DP join by basic
composition (Dwork and Roth 2014, Theorem 3.16): with :math:`(\\varepsilon_j,
\\delta_j)` of those, the total is :math:`\\hat\\varepsilon(\\delta - \\sum_j
\\delta_j) + \\sum_j \\varepsilon_j` at :math:`\\delta`.

Examples
--------
>>> from lib.privacy.accountant import Accountant
>>> from lib.privacy.guarantees import RenyiDP, ZeroConcentratedDP
>>> acc = Accountant().add(RenyiDP(4.0, 0.5), count=2)      # one order, no curve
>>> round(acc.epsilon(1e-5).epsilon, 4)                     # eq. (14) at lam = 4
4.0879
>>> acc = Accountant().add(ZeroConcentratedDP(0.01), count=100)
>>> round(acc.epsilon(1e-5).epsilon, 2)                     # rho = 1 in total
7.08
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.privacy.guarantees import (MAX_RELEASES, ApproximateDP, Guarantee, NotPrivate, PureDP, RenyiDP,
                                    ZeroConcentratedDP, sequence)

#: The orders of every accountant unless it is given its own: :math:`\\lambda - 1` from
#: :math:`10^{-3}` to :math:`10^{4}`, 200 points per decade (a step of about 1.2 % in
#: :math:`\\lambda - 1`, which moves :math:`\\hat\\varepsilon` by far less than its
#: displayed digits). Orders that guarantees state are added to it.
DEFAULT_ORDERS = 1.0 + np.geomspace(1e-3, 1e4, 1401)


def pure_dp_to_rdp(epsilon: ArrayLike, lam: ArrayLike) -> np.ndarray | float:
    """The tight Renyi level of an :math:`\\varepsilon`-DP mechanism at order :math:`\\lambda > 1`.

    Parameters
    ----------
    epsilon : array_like
        Pure-DP level :math:`\\varepsilon \\in [0, \\infty)`.
    lam : array_like
        Order :math:`\\lambda \\in (1, \\infty)`.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon(\\lambda)`, broadcast over the inputs.

    Notes
    -----
    .. math::
        \\varepsilon(\\lambda) = \\frac{1}{\\lambda - 1}
        \\log\\frac{e^{\\lambda\\varepsilon} + e^{(1-\\lambda)\\varepsilon}}{1 + e^{\\varepsilon}},

    the Renyi divergence of randomised response with likelihood ratio
    :math:`e^{\\varepsilon}` (Bun and Steinke 2016, Proposition 3.3 and its
    proof), which is :math:`\\varepsilon`-DP: so no smaller bound holds for
    every :math:`\\varepsilon`-DP mechanism. It is at most
    :math:`\\min(\\varepsilon, \\lambda\\varepsilon^2/2)` and is computed in logarithms.

    Examples
    --------
    >>> round(float(pure_dp_to_rdp(1.0, 5.0)), 6)
    0.921715
    """
    eps = validation.nonnegative(epsilon, "epsilon")
    lam = validation.order(lam, "lam", strict=True)
    eps, lam = validation.broadcast(epsilon=eps, lam=lam)
    num = np.logaddexp(lam * eps, (1.0 - lam) * eps)
    return ((num - np.logaddexp(0.0, eps)) / (lam - 1.0))[()]


def _evaluate(curve, orders):
    """``curve`` at an array of orders; a curve written for one order at a time is called per order."""
    try:
        values = np.asarray(curve(orders), float)
    except TypeError:  # e.g. float() of an array: a scalar curve
        values = np.array([float(curve(float(v))) for v in orders.ravel()]).reshape(orders.shape)
    return np.broadcast_to(values, orders.shape)


def renyi_curve(guarantee: Guarantee) -> Callable:
    """The Renyi curve :math:`\\lambda \\mapsto \\varepsilon(\\lambda)` that a guarantee implies.

    Parameters
    ----------
    guarantee : Guarantee
        A :class:`~lib.privacy.guarantees.RenyiDP`,
        :class:`~lib.privacy.guarantees.ZeroConcentratedDP`,
        :class:`~lib.privacy.guarantees.PureDP` or
        :class:`~lib.privacy.guarantees.NotPrivate`.

    Returns
    -------
    callable
        Maps an array of orders in :math:`(1, \\infty)` to an array of levels
        in :math:`[0, \\infty]` of the same shape.

    Raises
    ------
    ValueError
        For an :class:`~lib.privacy.guarantees.ApproximateDP` (no Renyi curve
        follows from it), a guarantee of another type (a model's own notion,
        such as mixed naive Bayes' label-kept DP), or anything that is not a
        guarantee; and, from the returned function, where a
        :class:`~lib.privacy.guarantees.RenyiDP`'s curve gives a level that is
        NaN or negative (a level is finite or :math:`+\\infty` and non-negative).

    Notes
    -----
    A :class:`RenyiDP` with a curve gives :math:`\\min(\\text{curve}(\\lambda'),
    \\varepsilon)` at :math:`\\lambda' \\le \\lambda` and the curve above; one
    without a curve gives :math:`\\varepsilon` at :math:`\\lambda' \\le \\lambda` and
    :math:`\\infty` above, since :math:`D_{\\lambda'} \\le D_\\lambda` for
    :math:`\\lambda' \\le \\lambda` (van Erven and Harremoës 2014, Theorem 3).
    zCDP is :math:`\\rho\\lambda` (Bun and Steinke 2016, Definition 1.1); pure DP
    is :func:`pure_dp_to_rdp`.

    Examples
    --------
    >>> from lib.privacy.guarantees import RenyiDP
    >>> renyi_curve(RenyiDP(4.0, 0.5))([2.0, 4.0, 8.0])
    array([0.5, 0.5, inf])
    """
    if isinstance(guarantee, RenyiDP):
        lam, eps, curve = guarantee.lam, guarantee.epsilon, guarantee.curve

        def stated(orders):
            orders = np.asarray(orders, float)
            below = np.where(orders <= lam, eps, np.inf)
            if curve is None:
                return below
            try:
                values = np.asarray(_evaluate(curve, orders), dtype=float)
            except (TypeError, ValueError) as exc:  # a curve of another shape, or of what is not a number
                raise ValueError(f"the curve of {guarantee!r} must map an array of orders to an array of levels "
                                 f"in [0, inf] of its shape; it gave: {exc}") from None
            bad = np.isnan(values) | (values < 0)
            if bad.any():
                i = np.flatnonzero(bad.ravel())[0]
                raise ValueError(f"the curve of {guarantee!r} must give a level in [0, inf] (finite or +inf, "
                                 f"non-negative) at every order; got {float(values.ravel()[i])!r} at order "
                                 f"{orders.ravel()[i]:g}")
            return np.minimum(values, below)

        return stated
    if isinstance(guarantee, ZeroConcentratedDP):
        return lambda orders: guarantee.rho * np.asarray(orders, float)
    if isinstance(guarantee, PureDP):
        return lambda orders: np.asarray(pure_dp_to_rdp(guarantee.epsilon, np.asarray(orders, float)), float)
    if isinstance(guarantee, NotPrivate):
        return lambda orders: np.full(np.shape(orders), np.inf)
    if isinstance(guarantee, ApproximateDP):
        raise ValueError("an ApproximateDP guarantee implies no Renyi curve; compose it with Accountant.add, "
                         "which uses basic composition for it")
    if isinstance(guarantee, Guarantee):
        raise ValueError(f"{type(guarantee).__name__} has no Renyi curve the accountant knows; state the release's "
                         "guarantee as RenyiDP, ZeroConcentratedDP, PureDP or ApproximateDP")
    raise ValueError(f"guarantee must be a lib.privacy.guarantees.Guarantee; got {guarantee!r}")


class Spent(NamedTuple):
    """The :math:`(\\hat\\varepsilon, \\delta)` of a composition (see :meth:`Accountant.epsilon`).

    Attributes
    ----------
    epsilon : float
        :math:`\\hat\\varepsilon`; ``inf`` when no order of the grid gives a finite value.
    delta : float
        The :math:`\\delta` asked for.
    order : float
        The order that attains ``epsilon`` (NaN when the pure-DP levels composed
        by basic composition do better than every order, or ``epsilon`` is ``inf``).
    """

    epsilon: float
    delta: float
    order: float


class Budget(NamedTuple):
    """What a composition spends of an :math:`(\\hat\\varepsilon, \\delta)` target (see :meth:`Accountant.remaining`).

    Attributes
    ----------
    target : ApproximateDP
        The target.
    spent : Spent
        :math:`\\hat\\varepsilon` spent at the target's :math:`\\delta`.
    left : float
        ``target.epsilon - spent.epsilon``; negative when the target is exceeded.
    """

    target: ApproximateDP
    spent: Spent
    left: float


def _count(count):
    """``count`` as an int in ``[1, MAX_RELEASES]``: an integer, or a float equal to one (else an error naming it)."""
    allowed = f"count must be an integer in [1, {MAX_RELEASES}]"
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer, float, np.floating)):
        raise validation.ArgumentTypeError(f"{allowed}; got {type(count).__name__} {count!r:.60}")
    if isinstance(count, (float, np.floating)):
        if not (math.isfinite(count) and float(count).is_integer()):
            raise ValueError(f"{allowed}; got {count!r}")
        count = int(count)
    if not 1 <= count <= MAX_RELEASES:
        raise ValueError(f"{allowed}; got {count!r:.60}")
    return int(count)


class Accountant:
    """Composes privacy guarantees on a grid of Renyi orders (see the module notes).

    Parameters
    ----------
    orders : array_like, optional
        Renyi orders in :math:`(1, \\infty)` to account at; default
        :data:`DEFAULT_ORDERS`. Orders stated by single-order
        :class:`~lib.privacy.guarantees.RenyiDP` guarantees are added.

    Examples
    --------
    >>> from lib.privacy.guarantees import ApproximateDP, PureDP, RenyiDP
    >>> acc = Accountant().add(RenyiDP(4.0, 0.5)).add(PureDP(0.1), count=3)
    >>> spent = acc.epsilon(1e-5)
    >>> bool(spent.epsilon < 4)
    True
    >>> left = acc.remaining(ApproximateDP(4.0, 1e-5)).left
    >>> bool(abs(left - (4.0 - spent.epsilon)) < 1e-12)
    True
    """

    def __init__(self, orders: ArrayLike | None = None) -> None:
        grid = DEFAULT_ORDERS if orders is None else validation.order(orders, "orders", strict=True)
        grid = np.unique(np.atleast_1d(np.asarray(grid, float)))
        if grid.size == 0:
            raise ValueError("orders must hold at least one order in (1, inf)")
        self._grid = grid
        self._entries = []  # (guarantee, count)

    def add(self, guarantee: Guarantee, count: int = 1) -> "Accountant":
        """Compose ``count`` releases that each meet ``guarantee``; returns the accountant.

        Parameters
        ----------
        guarantee : Guarantee
            Any guarantee of :mod:`lib.privacy.guarantees`.
        count : int, default 1
            Number of releases, at least 1.

        Raises
        ------
        ValueError
            If ``guarantee`` is not a guarantee (None, the guarantee of a
            release that states none, included), is one with no Renyi curve
            (:func:`renyi_curve`) other than ApproximateDP, or ``count`` is not a
            positive integer.
        """
        if not isinstance(guarantee, ApproximateDP):
            renyi_curve(guarantee)  # a ValueError for anything the accountant cannot compose
        self._entries.append((guarantee, _count(count)))
        return self

    @property
    def guarantees(self) -> tuple:
        """The composed ``(guarantee, count)`` pairs, in order."""
        return tuple(self._entries)

    @property
    def orders(self) -> np.ndarray:
        """The orders accounted at: the grid and every order a single-order guarantee states."""
        stated = [g.lam for g, _ in self._entries if isinstance(g, RenyiDP)]
        return np.unique(np.concatenate([self._grid, np.asarray(stated, float)]))

    def _parts(self, orders, pure_by_curve):
        """The Renyi sum at ``orders`` and the (epsilon, delta) composed by basic composition."""
        total = np.zeros(orders.shape)
        eps_basic, delta_basic = 0.0, 0.0
        for g, k in self._entries:
            if isinstance(g, ApproximateDP):
                eps_basic += k * g.epsilon
                delta_basic += k * g.delta
            elif isinstance(g, PureDP) and not pure_by_curve:
                eps_basic += k * g.epsilon
            else:
                total = total + k * renyi_curve(g)(orders)
        return total, eps_basic, delta_basic

    def curve(self, orders: ArrayLike | None = None) -> np.ndarray:
        """The composed Renyi curve :math:`\\sum_i k_i\\varepsilon_i(\\lambda)` at ``orders`` (default :attr:`orders`).

        Raises
        ------
        ValueError
            If an :class:`~lib.privacy.guarantees.ApproximateDP` was composed (it has no curve).
        """
        if any(isinstance(g, ApproximateDP) for g, _ in self._entries):
            raise ValueError("an ApproximateDP guarantee was composed: the composition has no Renyi curve")
        orders = self.orders if orders is None else validation.order(orders, "orders", strict=True)
        return self._parts(np.asarray(orders, float), True)[0]

    def epsilon(self, delta: float) -> Spent:
        """The smallest :math:`\\hat\\varepsilon` of the composition at ``delta`` over the orders.

        Parameters
        ----------
        delta : float
            :math:`\\delta \\in (0, 1)`, above the sum of the composed
            :class:`~lib.privacy.guarantees.ApproximateDP` deltas.

        Returns
        -------
        Spent

        Raises
        ------
        ValueError
            If ``delta`` is not in :math:`(0, 1)` or does not exceed the deltas
            already composed by basic composition.
        """
        delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
        orders = self.orders
        best = Spent(math.inf, delta, math.nan)
        pure = any(isinstance(g, PureDP) for g, _ in self._entries)
        for pure_by_curve in ((True, False) if pure else (True,)):
            total, eps_basic, delta_basic = self._parts(orders, pure_by_curve)
            left = delta - delta_basic
            if not left > 0:
                raise ValueError(f"delta = {delta:g} must exceed the composed ApproximateDP deltas, "
                                 f"{delta_basic:g} in total")
            renyi = any(isinstance(g, (RenyiDP, ZeroConcentratedDP, NotPrivate))
                        or (pure_by_curve and isinstance(g, PureDP)) for g, _ in self._entries)
            if not renyi:  # pure and approximate parts only, by basic composition
                candidate = Spent(eps_basic, delta, math.nan)
            else:
                with np.errstate(invalid="ignore"):
                    # eq. (14) (rdp_to_dp) at every order, for levels in [0, inf]
                    converted = total + np.log1p(-1 / orders) - np.log(left * orders) / (orders - 1)
                converted = np.where(np.isnan(converted), np.inf, converted)
                i = int(np.argmin(converted))
                value = max(float(converted[i]), 0.0) + eps_basic
                candidate = Spent(value, delta, float(orders[i]) if math.isfinite(value) else math.nan)
            if candidate.epsilon < best.epsilon:
                best = candidate
        return best

    def guarantee(self, delta: float) -> ApproximateDP:
        """The composition as :class:`~lib.privacy.guarantees.ApproximateDP` at ``delta``.

        Raises
        ------
        ValueError
            If no order gives a finite :math:`\\hat\\varepsilon` (a non-private
            release, or single orders too small for ``delta``).
        """
        spent = self.epsilon(delta)
        if not math.isfinite(spent.epsilon):
            raise ValueError(f"the composition meets no (epsilon, {spent.delta:g})-DP guarantee on the orders "
                             "accounted at (a non-private release, or stated orders too low for this delta)")
        return ApproximateDP(spent.epsilon, spent.delta)

    def remaining(self, target: ApproximateDP) -> Budget:
        """What is left of an :math:`(\\hat\\varepsilon, \\delta)` target after the composition.

        Parameters
        ----------
        target : ApproximateDP

        Returns
        -------
        Budget
        """
        if not isinstance(target, ApproximateDP):
            raise ValueError(f"target must be an ApproximateDP; got {target!r}")
        spent = self.epsilon(target.delta)
        return Budget(target, spent, target.epsilon - spent.epsilon)

    def fits(self, guarantee: Guarantee, target: ApproximateDP, *, limit: int = 10**6) -> int:
        """How many more releases meeting ``guarantee`` the target still allows.

        The largest :math:`k \\le` ``limit`` with the composition plus
        :math:`k` such releases within ``target`` (0 if none fits); found by
        bisection, since :math:`\\hat\\varepsilon` grows with :math:`k`.

        Raises
        ------
        ValueError
            If ``target`` is not an ApproximateDP or ``limit`` is not a positive integer.
        """
        if not isinstance(target, ApproximateDP):
            raise ValueError(f"target must be an ApproximateDP; got {target!r}")
        limit = validation.integer(limit, "limit", 1, MAX_RELEASES)

        def within(k):
            trial = Accountant(self._grid)
            trial._entries = list(self._entries) + [(guarantee, k)]
            return trial.epsilon(target.delta).epsilon <= target.epsilon

        if not within(1):
            return 0
        lo, hi = 1, limit
        if within(hi):
            return hi
        while hi - lo > 1:  # within(lo), not within(hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if within(mid) else (lo, mid)
        return lo


def account(guarantees: Iterable[Guarantee], *, orders: ArrayLike | None = None) -> Accountant:
    """An :class:`Accountant` holding every guarantee of ``guarantees`` once.

    Parameters
    ----------
    guarantees : iterable of Guarantee
    orders : array_like, optional
        As in :class:`Accountant`.

    Returns
    -------
    Accountant
    """
    acc = Accountant(orders)
    for g in sequence(guarantees, "guarantees"):
        acc.add(g)
    return acc


def release_guarantee(releases: Iterable[Any], delta: float, *, orders: ArrayLike | None = None) -> ApproximateDP:
    """The :math:`(\\hat\\varepsilon, \\delta)`-DP guarantee of a whole release (a model's, say).

    Parameters
    ----------
    releases : iterable
        Objects with a ``guarantee`` (the mechanism objects of a calibration,
        ``ModelCalibration.releases``), one per release.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    orders : array_like, optional
        As in :class:`Accountant`.

    Returns
    -------
    ApproximateDP
        From :meth:`Accountant.guarantee`.

    Raises
    ------
    ValueError
        If a release states no guarantee (``None``), or the composition meets none at ``delta``.
    """
    acc = Accountant(orders)
    for i, obj in enumerate(sequence(releases, "releases")):
        g = getattr(obj, "guarantee", None)
        if not isinstance(g, Guarantee):
            raise ValueError(f"release {i} ({obj!r}) states no guarantee; it cannot be accounted for")
        acc.add(g)
    return acc.guarantee(delta)
