"""The privacy guarantees, which are also the targets a mechanism is calibrated to.

A guarantee says what a released object meets: Renyi DP at one order (with its
curve over orders where one is known), zero-concentrated DP, pure DP,
approximate DP, or nothing (:class:`NotPrivate`). The same objects are the
*targets* of every calibration: ``Mechanism.calibrate(RenyiDP(5.0, 1.0), spec)``
asks for a whole model that is :math:`(5, 1)`-RDP, and the mechanism's
calibration is chosen by the target's type, never by a string.

Nothing here is specific to a mechanism. The one budget split of the book is
:meth:`Guarantee.split`: :math:`m` releases that each meet ``g.split(m)``
together meet ``g`` by basic composition, and :func:`compose` states what
several releases meet together (a model's guarantee from its releases').

Notes
-----
Basic composition (Lemma 1 of the paper for Renyi DP; Dwork and Roth 2014,
Theorem 3.16 for pure and approximate DP; Bun and Steinke 2016, Lemma 2.3 for
zCDP): levels add, and for approximate DP the :math:`\\delta` add too. Splitting
a budget equally is therefore one division by :math:`m` of every additive
level.

Examples
--------
>>> from lib.privacy.guarantees import ApproximateDP, RenyiDP
>>> RenyiDP(5.0, 1.0).split(4)
RenyiDP(lam=5.0, epsilon=0.25)
>>> ApproximateDP(1.0, 1e-4).split(4)
ApproximateDP(epsilon=0.25, delta=2.5e-05)
>>> RenyiDP(5.0, 1.0).with_level(2.0)
RenyiDP(lam=5.0, epsilon=2.0)
>>> compose([RenyiDP(5.0, 0.25)] * 4)
RenyiDP(lam=5.0, epsilon=1.0)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable

from lib import validation

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike


def _level(value, name, *, zero_ok=True):
    """A finite, non-negative (or positive) Python float, else an error naming ``name``.

    A value that is not a real number (a string, a bool, a complex) raises
    :class:`lib.validation.ArgumentTypeError` (a TypeError that is also a
    ValueError); a real number out of range a ValueError.
    """
    return validation.scalar((validation.nonnegative if zero_ok else validation.positive)(value, name), name)


#: Largest number of releases a budget is split into or composed over: every count up to it is an
#: exact double, so a level divided or multiplied by it is computed without overflow of the count.
MAX_RELEASES = 2**53


def _split_count(m):
    """``m``, the number of releases, an integer in ``[1, MAX_RELEASES]`` (else an error naming ``m``)."""
    return validation.integer(m, "m", 1, MAX_RELEASES)


class Guarantee:
    """Base class of the privacy statements a mechanism can make (and of calibration targets)."""

    #: The name of the additive level a grid sweeps (``None``: nothing to sweep).
    level_name: ClassVar[str | None] = "epsilon"

    @property
    def level(self) -> float | None:
        """The additive level that budgets sweep: :math:`\\varepsilon` (:math:`\\rho` for zCDP)."""
        return None if self.level_name is None else getattr(self, self.level_name)

    def with_level(self, value: float) -> "Guarantee":
        """The same notion (same order, same :math:`\\delta`) at another level."""
        if self.level_name is None:
            raise ValueError(f"{type(self).__name__} has no level to change")
        return dataclasses.replace(self, **{self.level_name: value})

    def split(self, m: int) -> "Guarantee":
        """The per-release guarantee of an equal split over ``m`` releases (basic composition)."""
        m = _split_count(m)
        return dataclasses.replace(self, **{self.level_name: split_level(self.level, m)})

    def _compose(self, others) -> "Guarantee":
        """This guarantee composed with ``others`` (same type): the additive levels add."""
        return dataclasses.replace(self, **{self.level_name: math.fsum(
            [self.level] + [g.level for g in others])})


@dataclass(frozen=True)
class RenyiDP(Guarantee):
    """:math:`(\\lambda, \\varepsilon)`-Renyi DP, with the whole curve where it is known.

    Parameters
    ----------
    lam : float
        The order :math:`\\lambda \\in (1, \\infty)` the statement is made at.
    epsilon : float
        The level :math:`\\varepsilon \\ge 0` at that order.
    curve : callable, optional
        :math:`\\lambda' \\mapsto \\varepsilon(\\lambda')` at every order where the
        mechanism has one (Gaussian, Laplace); None where the guarantee is proved
        at the calibrated order only. Not part of equality. Its values must be
        finite or :math:`+\\infty` and non-negative: the accountant checks them
        where it converts (:func:`lib.privacy.accountant.renyi_curve`).

    Raises
    ------
    ValueError
        If ``lam`` is not in :math:`(1, \\infty)` or ``epsilon`` not in :math:`[0, \\infty)`;
        a :class:`lib.validation.ArgumentTypeError` if ``curve`` is neither None nor callable.

    Notes
    -----
    Definition 2 of the paper (Mironov 2017): for neighbours :math:`x, x'`,
    :math:`D_\\lambda(M(x) \\| M(x')) \\le \\varepsilon`.
    """

    lam: float
    epsilon: float
    curve: Callable | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "lam", validation.scalar(validation.order(self.lam, "lam", strict=True), "lam"))
        object.__setattr__(self, "epsilon", _level(self.epsilon, "epsilon"))
        if self.curve is not None and not callable(self.curve):
            raise validation.ArgumentTypeError(f"curve must be a function of the order (orders -> levels in "
                                               f"[0, inf]) or None; got {type(self.curve).__name__} "
                                               f"{self.curve!r:.60}")

    def split(self, m: int) -> "RenyiDP":
        # the curve of one release is not the curve of the whole divided by m; drop it
        m = _split_count(m)
        return RenyiDP(self.lam, split_level(self.epsilon, m))

    def _compose(self, others) -> "RenyiDP":
        lams = {self.lam} | {g.lam for g in others}
        if len(lams) != 1:
            raise ValueError(f"guarantees must be RenyiDP at one common order to compose; got orders "
                             f"{sorted(lams)}")
        curves = (self.curve,) + tuple(g.curve for g in others)
        curve = functools.partial(_sum_of_curves, curves) if all(c is not None for c in curves) else None
        return RenyiDP(self.lam, math.fsum([self.epsilon] + [g.epsilon for g in others]), curve)


@dataclass(frozen=True)
class ZeroConcentratedDP(Guarantee):
    """:math:`\\rho`-zCDP: :math:`(\\lambda, \\rho\\lambda)`-RDP at every order :math:`\\lambda > 1`.

    Parameters
    ----------
    rho : float
        The level :math:`\\rho \\ge 0`.

    References
    ----------
    Bun and Steinke (2016), Definition 1.1.
    """

    level_name: ClassVar[str] = "rho"
    rho: float

    def __post_init__(self):
        object.__setattr__(self, "rho", _level(self.rho, "rho"))

    def curve(self, lam: ArrayLike) -> np.ndarray | float:
        """:math:`\\varepsilon(\\lambda) = \\rho\\lambda`."""
        return self.rho * lam


@dataclass(frozen=True)
class PureDP(Guarantee):
    """:math:`\\varepsilon`-DP, for every pair of neighbours and every event.

    Parameters
    ----------
    epsilon : float
        The level :math:`\\varepsilon \\ge 0`.
    """

    epsilon: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _level(self.epsilon, "epsilon"))


@dataclass(frozen=True)
class ApproximateDP(Guarantee):
    """:math:`(\\varepsilon, \\delta)`-DP.

    Parameters
    ----------
    epsilon : float
        The level :math:`\\varepsilon \\ge 0`.
    delta : float
        The failure probability :math:`\\delta \\in (0, 1)`.
    """

    epsilon: float
    delta: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _level(self.epsilon, "epsilon"))
        delta = _level(self.delta, "delta")
        if not 0 < delta < 1:
            raise ValueError(f"delta must be in (0, 1); got {self.delta!r}")
        object.__setattr__(self, "delta", delta)

    def split(self, m: int) -> "ApproximateDP":
        m = _split_count(m)
        return ApproximateDP(split_level(self.epsilon, m), split_level(self.delta, m))

    def _compose(self, others) -> "ApproximateDP":
        return ApproximateDP(math.fsum([self.epsilon] + [g.epsilon for g in others]),
                             math.fsum([self.delta] + [g.delta for g in others]))


@dataclass(frozen=True)
class NotPrivate(Guarantee):
    """No privacy guarantee (a non-private estimate, or a reference)."""

    level_name: ClassVar[None] = None

    def split(self, m: int) -> "NotPrivate":
        _split_count(m)
        return self

    def _compose(self, others) -> "NotPrivate":
        return self


def _sum_of_curves(curves, lam):
    """:math:`\\sum_i \\varepsilon_i(\\lambda)`: the curve of composed releases (picklable through a partial)."""
    return sum(c(lam) for c in curves)


def sequence(values: Iterable[Any], name: str) -> list[Any]:
    """``values`` (guarantees, or releases that state one) as a list; a TypeError naming ``name`` if it is
    not a sequence (None, a number, a string, a single guarantee)."""
    if isinstance(values, (str, bytes, Guarantee)):
        raise validation.ArgumentTypeError(f"{name} must be a sequence; got {type(values).__name__} {values!r:.60}")
    try:
        return list(values)
    except TypeError:
        raise validation.ArgumentTypeError(f"{name} must be a sequence; got {type(values).__name__} "
                                           f"{values!r:.60}") from None


def split_level(level: float | np.ndarray, m: int) -> float | np.ndarray:
    """The level of each of ``m`` equal shares of ``level``: :math:`\\ell/m`.

    The one division of a budget among releases: :meth:`Guarantee.split` uses
    it for every additive level, and so does every conversion that composes
    releases at one order (:func:`lib.privacy.accounting.dp_to_rdp` with
    ``n_releases``). ``level`` may be an array; ``m`` must be validated.
    """
    return level / m


def compose(guarantees: Iterable[Guarantee]) -> Guarantee:
    """What a sequence of releases meets together, by basic composition.

    Parameters
    ----------
    guarantees : iterable of Guarantee
        The guarantee of each release (one entry per release: an object used
        for :math:`m` releases appears :math:`m` times).

    Returns
    -------
    Guarantee
        :class:`NotPrivate` if any release is not private; otherwise a
        guarantee of the releases' common type whose additive levels are the
        sums of theirs: :math:`\\varepsilon` (pure DP, and Renyi DP at one
        common order, whose curve is the sum of the curves where every release
        has one), :math:`\\rho` (zCDP), and :math:`\\varepsilon` and
        :math:`\\delta` (approximate DP).

    Raises
    ------
    ValueError
        If ``guarantees`` is empty, holds something that is not a
        :class:`Guarantee`, mixes types (other than with :class:`NotPrivate`),
        holds Renyi DP at different orders, or (approximate DP) its
        :math:`\\delta` add up to 1 or more.

    Notes
    -----
    Lemma 1 of the paper (Renyi DP at one order), Dwork and Roth (2014),
    Theorem 3.16 (pure and approximate DP), Bun and Steinke (2016), Lemma 2.3
    (zCDP). Statements of different types are not converted into each other
    here: a conversion is a choice (of an order, of a :math:`\\delta`) that
    belongs to the caller.

    Examples
    --------
    >>> compose([ApproximateDP(0.5, 1e-6), ApproximateDP(0.25, 1e-6)])
    ApproximateDP(epsilon=0.75, delta=2e-06)
    >>> compose([PureDP(1.0), NotPrivate()])
    NotPrivate()
    """
    items = sequence(guarantees, "guarantees")
    if not items:
        raise ValueError("guarantees must hold at least one Guarantee to compose")
    bad = [g for g in items if not isinstance(g, Guarantee)]
    if bad:
        raise ValueError(f"guarantees must all be Guarantee objects; got {bad[0]!r}")
    if any(isinstance(g, NotPrivate) for g in items):
        return NotPrivate()
    kinds = {type(g) for g in items}
    if len(kinds) != 1:
        raise ValueError(f"guarantees must be of one type to compose (convert them first); got "
                         f"{sorted(k.__name__ for k in kinds)}")
    return items[0]._compose(items[1:])
