"""The privacy guarantees, which are also the targets a mechanism is calibrated to.

A guarantee says what a released object meets: Renyi DP at one order (with its
curve over orders where one is known), pure DP, approximate DP, or nothing
(:class:`NotPrivate`). Nothing here is specific to a mechanism.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


class Guarantee:
    """Base class of the privacy statements a mechanism can make."""


@dataclass(frozen=True)
class RenyiDP(Guarantee):
    """:math:`(\\lambda, \\varepsilon)`-RDP at one order, with the whole curve where known.

    Attributes
    ----------
    lam, epsilon : float
        The order and level the mechanism was calibrated to.
    curve : callable or None
        :math:`\\lambda' \\mapsto \\varepsilon(\\lambda')` at every order where the
        mechanism has a closed form (Gaussian, Laplace); None where the
        guarantee is proved at the calibrated order only (Algorithm 1).
    """

    lam: float
    epsilon: float
    curve: Callable | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PureDP(Guarantee):
    """:math:`\\varepsilon`-DP (for every pair of neighbours and every event)."""

    epsilon: float


@dataclass(frozen=True)
class ApproximateDP(Guarantee):
    """:math:`(\\varepsilon, \\delta)`-DP."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class NotPrivate(Guarantee):
    """No privacy guarantee (a non-private estimate, or a reference)."""
