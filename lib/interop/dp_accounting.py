"""Google's dp-accounting with the Dirichlet mechanism's exact curve and every guarantee of lib.

dp-accounting's :class:`~dp_accounting.rdp.RdpAccountant` composes only the
events it knows. This module adds two events and an accountant that knows them:

* :class:`DirichletDpEvent`: one release of :math:`\\mathrm{Dir}(r f + \\alpha)`
  on a histogram, accounted with its exact worst-case Renyi curve
  (:class:`lib.mechanisms.dirichlet.curve.DirichletCurve`) under the
  accountant's neighbouring relation (replace-one or add/remove-one);
* :class:`RenyiCurveDpEvent`: any guarantee of :mod:`lib.privacy.guarantees`
  that has a Renyi curve (:func:`lib.privacy.accountant.renyi_curve`), under the
  relation it is stated for;
* :class:`RdpAccountant`: dp-accounting's RDP accountant with these two
  events; every event of dp-accounting (``GaussianDpEvent``,
  ``PoissonSampledDpEvent`` for DP-SGD, composed and self-composed events)
  composes with them on the same orders.

:func:`dp_event` turns a mechanism object of :mod:`lib` into its event:
every mechanism enters with the library's own curve (the Dirichlet
mechanism's exact worst case, the Gaussian's :math:`\\lambda\\Delta_2^2/(2\\sigma^2)`,
the Laplace mechanism's exact curve of its :math:`\\ell_1`-sensitivity), so the
composition does not depend on how dp-accounting reads its own events under
replace-one. :func:`gaussian_event` gives dp-accounting's own Gaussian event for
its other accountants (the PLD accountant). Needs the ``interop`` extra
(dp-accounting 0.6).

Notes
-----
The book's histograms are released under replace-one neighbours, dp-accounting's
``NeighboringRelation.REPLACE_ONE``; its default is add/remove-one. How
dp-accounting reads a ``GaussianDpEvent`` under ``REPLACE_ONE`` is a convention
of its own that differs between its accountants: the PLD accountant takes the
noise multiplier relative to a sensitivity of 2 there (a release of
:math:`\\ell_2`-sensitivity :math:`\\sqrt 2` passed as multiplier
:math:`\\sigma/\\sqrt 2` comes out far above its exact :math:`\\hat\\varepsilon`),
and open upstream work would change the RDP accountant the same way. The
bridge therefore never passes a Gaussian as dp-accounting's event under
replace-one: :func:`dp_event` gives its curve, and :func:`gaussian_event` gives
the one reading both accountants share, ``ADD_OR_REMOVE_ONE`` with multiplier
:math:`\\sigma/\\Delta_2` (two Gaussians :math:`\\Delta_2` apart, the privacy
loss of the replace-one release).

Examples
--------
>>> from dp_accounting import GaussianDpEvent, NeighboringRelation
>>> from lib import DirichletMechanism
>>> from lib.interop.dp_accounting import RdpAccountant, dp_event
>>> acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
>>> _ = acc.compose(dp_event(DirichletMechanism(0.5, 4.0)), 2).compose(GaussianDpEvent(10.0))
>>> round(float(acc.get_epsilon(1e-5)), 2)
2.8
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

try:
    import attr
    from dp_accounting import dp_event as _events
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dp_accounting.rdp import rdp_privacy_accountant as _rdp
except ImportError as exc:  # pragma: no cover - the optional extra is missing
    raise ImportError("lib.interop.dp_accounting needs dp-accounting: "
                      "pip install \"dirichlet-mechanism-book[interop]\" (or dp-accounting)") from exc

from lib.mechanisms.dirichlet.curve import DirichletCurve
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism, laplace_rdp
from lib.privacy.accountant import renyi_curve
from lib.privacy.guarantees import ApproximateDP, Guarantee, RenyiDP

__all__ = ["DirichletDpEvent", "RdpAccountant", "RenyiCurveDpEvent", "dp_event", "gaussian_event"]

#: Why an RDP accountant cannot take an (epsilon, delta)-only guarantee (said where it is refused).
NO_CURVE = ("an (epsilon, delta)-DP guarantee states no Renyi curve, and an RDP accountant composes curves "
            "order by order: there is no order at which it could add this release. Give the release's Renyi "
            "guarantee (its mechanism's guarantee for an RDP or zCDP target), or compose (epsilon, delta) "
            "guarantees with lib.privacy.accountant.Accountant, which adds them by basic composition")

#: dp-accounting's relations and the names :func:`lib.mechanisms.dirichlet.curve.worst_case_divergence` gives them.
_RELATIONS = {NeighboringRelation.REPLACE_ONE: "replace", NeighboringRelation.ADD_OR_REMOVE_ONE: "add-remove"}


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DirichletDpEvent(_events.DpEvent):
    """One Dirichlet release :math:`\\mathrm{Dir}(r f + \\alpha)` of a histogram (counts move by one).

    Attributes
    ----------
    r : float
        Scale :math:`r > 0` (Line 1 of Algorithm 1; times :math:`\\Delta_\\infty`
        when a record weighs :math:`\\Delta_\\infty`).
    alpha : float
        Pseudo-count :math:`\\alpha > 0`.
    """

    r: float
    alpha: float

    def curve(self, relation: NeighboringRelation) -> "DirichletCurve | None":
        """The exact curve under dp-accounting's ``relation`` (None for ``REPLACE_SPECIAL``)."""
        name = _RELATIONS.get(relation)
        return None if name is None else DirichletCurve(float(self.r), float(self.alpha), name)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RenyiCurveDpEvent(_events.DpEvent):
    """A release that meets a guarantee of :mod:`lib.privacy.guarantees` with a Renyi curve.

    Attributes
    ----------
    guarantee : lib.privacy.guarantees.Guarantee
        ``RenyiDP`` (its curve, or its level up to its order), ``ZeroConcentratedDP``,
        ``PureDP`` or ``NotPrivate``.
    neighboring_relation : NeighboringRelation, default REPLACE_ONE
        The relation the guarantee is stated for (the book's: replace-one); an
        accountant of another relation refuses the event.
    """

    guarantee: Guarantee
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE

    def __attrs_post_init__(self):
        if isinstance(self.guarantee, ApproximateDP):
            raise ValueError(f"RenyiCurveDpEvent refuses {self.guarantee!r}: {NO_CURVE}")
        if not isinstance(self.guarantee, Guarantee):
            raise TypeError(f"guarantee must be a guarantee of lib.privacy.guarantees; got "
                            f"{type(self.guarantee).__name__}")
        renyi_curve(self.guarantee)   # a ValueError naming what has no curve
        if not isinstance(self.neighboring_relation, NeighboringRelation):
            raise TypeError(f"neighboring_relation must be a dp_accounting NeighboringRelation; got "
                            f"{self.neighboring_relation!r:.60}")


class RdpAccountant(_rdp.RdpAccountant):
    """dp-accounting's RDP accountant that also composes :class:`DirichletDpEvent` and :class:`RenyiCurveDpEvent`.

    Takes the arguments of :class:`dp_accounting.rdp.RdpAccountant` (``orders``,
    ``neighboring_relation``); every event of dp-accounting composes as there.
    A curve is added at every order of the accountant; ``inf`` where the
    curve is infinite (above a Dirichlet release's
    :func:`~lib.mechanisms.dirichlet.curve.order_limit`), which
    ``get_epsilon`` then never chooses.
    """

    def _maybe_compose(self, event, count, do_compose):
        if isinstance(event, DirichletDpEvent):
            curve = event.curve(self.neighboring_relation)
            if curve is None:
                return self.CompositionErrorDetails(
                    invalid_event=event,
                    error_message=(f"DirichletDpEvent has an exact curve under REPLACE_ONE and ADD_OR_REMOVE_ONE, "
                                   f"not {self.neighboring_relation}"))
            if do_compose:
                self._rdp = self._rdp + count * np.asarray(curve(self._orders), float)
            return None
        if isinstance(event, RenyiCurveDpEvent):
            if event.neighboring_relation is not self.neighboring_relation:
                return self.CompositionErrorDetails(
                    invalid_event=event,
                    error_message=(f"the guarantee is stated for {event.neighboring_relation}, the accountant "
                                   f"uses {self.neighboring_relation}"))
            try:
                curve = renyi_curve(event.guarantee)
            except ValueError as exc:
                return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
            if do_compose:
                self._rdp = self._rdp + count * np.asarray(curve(self._orders), float)
            return None
        return super()._maybe_compose(event, count, do_compose)


def _laplace_curve(scale: float, l1: float, lam: Any) -> np.ndarray:
    return np.asarray(laplace_rdp(scale, lam, l1), float)


def dp_event(mechanism: Any) -> "_events.DpEvent":
    """The dp-accounting event of one release by a mechanism object of :mod:`lib`, with the library's curve.

    Parameters
    ----------
    mechanism : lib.mechanisms.protocol.Mechanism
        A :class:`lib.DirichletMechanism` (also one built by
        ``from_concentration``), a :class:`lib.mechanisms.noise.GaussianMechanism`
        or :class:`lib.mechanisms.noise.LaplaceMechanism`, or any object whose
        ``guarantee`` has a Renyi curve.

    Returns
    -------
    dp_accounting.DpEvent
        :class:`DirichletDpEvent` (its exact curve under either relation);
        for every other mechanism :class:`RenyiCurveDpEvent` of its curve
        under replace-one: the Gaussian's :math:`\\lambda\\Delta_2^2/(2\\sigma^2)`
        (:math:`\\Delta_2^2 = 2` unless the object states another), the Laplace
        mechanism's exact curve :func:`lib.mechanisms.noise.laplace_rdp` of its
        :math:`\\ell_1`-sensitivity (2 unless stated; also for an object built by
        ``from_scale``, whose ``guarantee`` states pure DP only), otherwise the
        curve of its ``guarantee``. None of them depends on how dp-accounting
        reads its own events under replace-one (see the module notes).

    Raises
    ------
    ValueError
        If a Dirichlet release has sensitivities other than a histogram's
        (no exact curve), the object states no guarantee, or its guarantee is
        an (epsilon, delta)-DP one (no Renyi curve: the message says why).
    """
    if isinstance(mechanism, DirichletMechanism):
        linf = 1.0 if mechanism.linf is None else mechanism.linf
        if mechanism.l2_sq is not None and not math.isclose(mechanism.l2_sq, 2 * linf**2, rel_tol=1e-12):
            raise ValueError(f"the Dirichlet release has l2_sq = {mechanism.l2_sq:g} and linf = {linf:g}, not "
                             "replace-one histogram sensitivities (2 linf^2, linf); use RenyiCurveDpEvent of its "
                             "guarantee")
        return DirichletDpEvent(float(mechanism.r) * linf, float(mechanism.alpha))
    if isinstance(mechanism, LaplaceMechanism):
        l1 = 2.0 if mechanism.l1 is None else float(mechanism.l1)
        curve = functools.partial(_laplace_curve, float(mechanism.scale), l1)
        return RenyiCurveDpEvent(RenyiDP(2.0, float(curve(2.0)), curve=curve))
    guarantee = getattr(mechanism, "guarantee", None)
    if not isinstance(guarantee, Guarantee):
        raise ValueError(f"{mechanism!r} states no guarantee; it has no dp-accounting event")
    if isinstance(guarantee, ApproximateDP):
        raise ValueError(f"{mechanism!r} states {guarantee!r}: {NO_CURVE}")
    return RenyiCurveDpEvent(guarantee)


def gaussian_event(mechanism: GaussianMechanism) -> "tuple[_events.GaussianDpEvent, NeighboringRelation]":
    """dp-accounting's own Gaussian event of a Gaussian release, and the relation to account it under.

    For dp-accounting's accountants other than :class:`RdpAccountant` (its PLD
    accountant, which does not know :class:`RenyiCurveDpEvent`): the release of
    :math:`\\ell_2`-sensitivity :math:`\\Delta_2` (:math:`\\sqrt 2` for a
    histogram under replace-one) has the privacy loss of two Gaussians
    :math:`\\Delta_2` apart, which dp-accounting states as
    ``GaussianDpEvent(sigma / Delta_2)`` under ``ADD_OR_REMOVE_ONE`` (its
    sensitivity-1 reading, the same in its RDP and PLD accountants). Compose
    it in an accountant of that relation.

    Returns
    -------
    (dp_accounting.GaussianDpEvent, NeighboringRelation.ADD_OR_REMOVE_ONE)

    Raises
    ------
    TypeError
        If ``mechanism`` is not a :class:`lib.mechanisms.noise.GaussianMechanism`.
    """
    if not isinstance(mechanism, GaussianMechanism):
        raise TypeError(f"mechanism must be a GaussianMechanism; got {type(mechanism).__name__}")
    l2_sq = 2.0 if mechanism.l2_sq is None else float(mechanism.l2_sq)
    return _events.GaussianDpEvent(float(mechanism.sigma) / math.sqrt(l2_sq)), NeighboringRelation.ADD_OR_REMOVE_ONE
