"""The privacy guarantees, which are also the targets a mechanism is calibrated to.

A guarantee says what a released object meets: Renyi DP at one order (with its
curve over orders where one is known), zero-concentrated DP, pure DP,
approximate DP, or nothing (:class:`NotPrivate`). The same objects are the
*targets* of every calibration: ``Mechanism.calibrate(RenyiDP(5.0, 1.0), spec)``
asks for a whole model that is :math:`(5, 1)`-RDP, and the mechanism's
calibration is chosen by the target's type, never by a string.

Nothing here is specific to a mechanism. The one budget split of the book is
:meth:`Guarantee.split`: :math:`m` releases that each meet ``g.split(m)``
together meet ``g`` by basic composition.

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
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar


def _level(value, name, *, zero_ok=True):
    """A finite, non-negative (or positive) Python float, else a ValueError naming ``name``."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {value!r}") from None
    low_ok = value >= 0 if zero_ok else value > 0
    if not (math.isfinite(value) and low_ok):
        allowed = "[0, inf)" if zero_ok else "(0, inf)"
        raise ValueError(f"{name} must be finite and in {allowed}; got {value!r}")
    return value


def _split_count(m):
    if isinstance(m, bool) or not float(m).is_integer() or int(m) < 1:
        raise ValueError(f"m (the number of releases) must be an integer >= 1; got {m!r}")
    return int(m)


class Guarantee:
    """Base class of the privacy statements a mechanism can make (and of calibration targets)."""

    #: The name of the additive level a grid sweeps (``None``: nothing to sweep).
    level_name: ClassVar[str | None] = "epsilon"

    @property
    def level(self) -> float | None:
        """The additive level that budgets sweep: :math:`\\varepsilon` (:math:`\\rho` for zCDP)."""
        return None if self.level_name is None else getattr(self, self.level_name)

    def with_level(self, value) -> "Guarantee":
        """The same notion (same order, same :math:`\\delta`) at another level."""
        if self.level_name is None:
            raise ValueError(f"{type(self).__name__} has no level to change")
        return dataclasses.replace(self, **{self.level_name: value})

    def split(self, m) -> "Guarantee":
        """The per-release guarantee of an equal split over ``m`` releases (basic composition)."""
        m = _split_count(m)
        return dataclasses.replace(self, **{self.level_name: self.level / m})


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
        at the calibrated order only. Not part of equality.

    Raises
    ------
    ValueError
        If ``lam`` is not in :math:`(1, \\infty)` or ``epsilon`` not in :math:`[0, \\infty)`.

    Notes
    -----
    Definition 2 of the paper (Mironov 2017): for neighbours :math:`x, x'`,
    :math:`D_\\lambda(M(x) \\| M(x')) \\le \\varepsilon`.
    """

    lam: float
    epsilon: float
    curve: Callable | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        lam = float(self.lam) if not isinstance(self.lam, bool) else math.nan
        if not (math.isfinite(lam) and lam > 1):
            raise ValueError(f"lam must be a finite order in (1, inf); got {self.lam!r}")
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "epsilon", _level(self.epsilon, "epsilon"))

    def split(self, m) -> "RenyiDP":
        # the curve of one release is not the curve of the whole divided by m; drop it
        m = _split_count(m)
        return RenyiDP(self.lam, self.epsilon / m)


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

    def curve(self, lam):
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

    def split(self, m) -> "ApproximateDP":
        m = _split_count(m)
        return ApproximateDP(self.epsilon / m, self.delta / m)


@dataclass(frozen=True)
class NotPrivate(Guarantee):
    """No privacy guarantee (a non-private estimate, or a reference)."""

    level_name: ClassVar[None] = None

    def split(self, m) -> "NotPrivate":
        _split_count(m)
        return self
