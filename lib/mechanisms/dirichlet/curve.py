"""The Dirichlet mechanism's exact Renyi curve, and a calibration against it.

Theorem 1 bounds the Renyi divergence of Algorithm 1 at the one order it is
calibrated for. The exact largest divergence over *all* pairs of neighbouring
histograms is known in closed form at every order (Appendix E, eqs. (16)-(17)):

* :func:`divergence_term` is one summand of eq. (17), divided by
  :math:`\\lambda - 1`;
* :func:`worst_case_divergence` is the worst case over neighbours, vectorised
  over orders, with :func:`order_limit`, the order from which it is infinite;
* :class:`DirichletCurve` is that worst case as the curve
  :math:`\\lambda \\mapsto \\varepsilon(\\lambda)` of a
  :class:`~lib.privacy.guarantees.RenyiDP` guarantee
  (:func:`exact_curve` builds it for a mechanism's sensitivities);
* :func:`calibrate_exact` calibrates Algorithm 1 to an
  :math:`(\\hat\\varepsilon, \\delta)` target through the exact curve, composed
  and converted by :class:`lib.privacy.accountant.Accountant`, where Theorem 1
  with eq. (14) at one order (:func:`lib.privacy.accounting.dp_to_rdp`, the
  paper's calibration) leaves budget unused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from lib import validation
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.divergence import renyi_excess
from lib.privacy.accountant import Accountant
from lib.privacy.accounting import validated_target, dp_to_rdp
from lib.privacy.guarantees import RenyiDP

#: The neighbouring relations that :func:`worst_case_divergence` knows.
RELATIONS = ("replace", "add-remove")


def divergence_term(a, delta, lam):
    """One summand of eq. (17) divided by :math:`\\lambda - 1`.

    With :math:`a = u_i` and :math:`\\delta = u_i - u'_i`,

    .. math::
        \\phi(a, \\delta) = \\frac{G(a, a - \\delta) + H(a, a - \\delta)}{\\lambda - 1}
        = \\log\\Gamma(a - \\delta) - \\log\\Gamma(a)
        + \\frac{\\log\\Gamma(a + (\\lambda - 1)\\delta) - \\log\\Gamma(a)}{\\lambda - 1},

    and, for :math:`\\lambda = 1`, its limit :math:`\\log\\Gamma(a - \\delta) -
    \\log\\Gamma(a) + \\delta\\psi(a)` (Case 2 of Appendix E). The divergence of
    eq. (16) is :math:`\\sum_i \\phi(u_i, \\delta_i) - \\phi(u_0, \\delta_0)`.
    By the convexity of :math:`\\log\\Gamma`, :math:`\\phi \\ge 0` with equality
    only at :math:`\\delta = 0`, and :math:`\\phi` strictly decreases in
    :math:`a` for fixed :math:`\\delta \\ne 0` (concavity of :math:`\\psi`).

    Parameters
    ----------
    a : array_like
        The parameter :math:`u_i > 0`.
    delta : array_like
        The difference :math:`u_i - u'_i`, finite, with :math:`a - \\delta > 0`.
    lam : array_like
        Order :math:`\\lambda \\in [1, \\infty)`.

    Returns
    -------
    ndarray or float
        :math:`\\phi(a, \\delta) \\ge 0`; ``inf`` where
        :math:`a + (\\lambda - 1)\\delta \\le 0` (the integral of eq. (16) diverges).

    Raises
    ------
    ValueError
        If ``a`` is not positive, ``delta`` not finite or not below ``a``, or
        ``lam`` not in :math:`[1, \\infty)`.
    """
    a = validation.positive(a, "a")
    delta = validation.in_range(delta, "delta", -np.inf, open_low=True)
    lam = validation.order(lam, "lam")
    a, delta, lam = validation.broadcast(a=a, delta=delta, lam=lam)
    if np.any(a - delta <= 0):
        raise ValueError("delta must be below a, so that a - delta = u'_i is in (0, inf)")
    out = np.full(a.shape, np.inf)
    finite = a + (lam - 1) * delta > 0
    out[finite] = renyi_excess(a[finite], delta[finite], lam[finite])
    return np.maximum(out, 0.0)[()]


def worst_case_divergence(r, alpha, lam, *, relation: str = "replace"):
    """The exact largest Renyi divergence over all pairs of neighbouring histograms.

    For the mechanism :math:`\\mathrm{Dir}(r f + \\alpha)` the divergence between
    neighbours splits into the terms :math:`\\phi` of :func:`divergence_term`
    for the bins that change, minus the term of the totals. Each
    :math:`\\phi(a, \\pm r)` decreases in :math:`a`, so it is largest where the
    bin is as small as it can be: :math:`a = \\alpha + r` for the bin that loses
    a record, :math:`a = \\alpha` for the bin that gains one.

    * ``"replace"`` (one record added, removed or moved to another bin; the
      relation of :math:`\\Delta_2^2 = 2`, :math:`\\Delta_\\infty = 1`): a move leaves
      the total unchanged, so its divergence is
      :math:`\\phi(\\alpha + r, r) + \\phi(\\alpha, -r)`, attained by moving the only
      record of a bin into an empty bin, e.g. :math:`f = (1, 0)`,
      :math:`f' = (0, 1)`. It exceeds every addition or removal.
    * ``"add-remove"`` (one record added or removed; :math:`\\Delta_2^2 = 1`): the
      divergence is :math:`\\phi(a_i, \\pm r) - \\phi(u_0, \\pm r)`; the supremum
      :math:`\\max\\{\\phi(\\alpha + r, r), \\phi(\\alpha, -r)\\}` is approached as the
      total count grows, and not attained.

    Both directions of the divergence are covered (the reverse of an addition
    is a removal; a move reversed is a move).

    Parameters
    ----------
    r : array_like
        Scale :math:`r > 0` (Line 1 of Algorithm 1).
    alpha : array_like
        Pseudo-count :math:`\\alpha > 0` (Line 2).
    lam : array_like
        Order :math:`\\lambda \\in [1, \\infty)`.
    relation : {"replace", "add-remove"}
        Which histograms are neighbours.

    Returns
    -------
    ndarray or float
        The worst case (a supremum for ``"add-remove"``), broadcast over the
        inputs; ``inf`` where :math:`\\alpha \\le (\\lambda - 1) r`, that is from
        the order :func:`order_limit` on.

    Raises
    ------
    ValueError
        If ``r`` or ``alpha`` is not positive, ``lam`` not in :math:`[1, \\infty)`,
        or ``relation`` unknown.

    Examples
    --------
    >>> from lib import calibrate
    >>> from lib.mechanisms.dirichlet.curve import worst_case_divergence
    >>> r, alpha = calibrate(1.0, lam=2.0)
    >>> bool(worst_case_divergence(r, alpha, 2.0) < 1.0)
    True
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}; got {relation!r}")
    r, alpha, lam = validation.broadcast(
        r=validation.positive(r, "r"),
        alpha=validation.positive(alpha, "alpha"),
        lam=validation.order(lam, "lam"),
    )
    removed = divergence_term(alpha + r, r, lam)  # the bin that loses a record
    added = divergence_term(alpha, -r, lam)  # the bin that gains one
    if relation == "replace":
        return (removed + added)[()]
    return np.maximum(removed, added)[()]


def order_limit(r, alpha, linf=1.0):
    """The order :math:`1 + \\alpha/(r\\Delta_\\infty)` from which the worst case is infinite.

    Parameters
    ----------
    r, alpha : array_like
        Lines 1-2 of Algorithm 1, positive.
    linf : array_like, default 1.0
        :math:`\\ell_\\infty`-sensitivity :math:`\\Delta_\\infty > 0` of the counts.

    Returns
    -------
    ndarray or float
        :math:`\\lambda^* = 1 + \\alpha/(r\\Delta_\\infty)`: the worst-case divergence
        is finite exactly on :math:`[1, \\lambda^*)`.

    Notes
    -----
    The bin that gains a record has parameters :math:`\\alpha` and
    :math:`\\alpha + r\\Delta_\\infty`; the integral of eq. (16) converges when
    :math:`\\lambda\\alpha + (1 - \\lambda)(\\alpha + r\\Delta_\\infty) > 0`, i.e.
    :math:`\\lambda < 1 + \\alpha/(r\\Delta_\\infty)`. Theorem 1's proof needs
    the stronger :math:`\\alpha \\ge 1 + (\\lambda - 1)r\\Delta_\\infty` (Remark 1),
    that is :math:`\\lambda \\le 1 + (\\alpha - 1)/(r\\Delta_\\infty)`: the
    divergence is finite somewhat beyond the orders the theorem covers.

    Examples
    --------
    >>> round(float(order_limit(0.5, 9.0)), 12)
    19.0
    """
    r, alpha, linf = validation.broadcast(r=validation.positive(r, "r"), alpha=validation.positive(alpha, "alpha"),
                                         linf=validation.positive(linf, "linf"))
    return (1 + alpha / (r * linf))[()]


@dataclass(frozen=True)
class DirichletCurve:
    """The exact worst-case Renyi curve of :math:`\\mathrm{Dir}(r f + \\alpha)` over neighbouring histograms.

    Calling it with orders returns :func:`worst_case_divergence` at them: the
    curve of a :class:`~lib.privacy.guarantees.RenyiDP` guarantee.

    Parameters
    ----------
    r, alpha : float
        Scale and pseudo-count, positive (counts changing by one).
    relation : {"replace", "add-remove"}, default "replace"

    Raises
    ------
    ValueError
        If ``r`` or ``alpha`` is not positive or ``relation`` unknown.

    Examples
    --------
    >>> curve = DirichletCurve(0.5, 9.0)
    >>> curve([2.0, 19.0]).round(6)
    array([0.057158,      inf])
    >>> curve.limit
    19.0
    """

    r: float
    alpha: float
    relation: str = "replace"

    def __post_init__(self):
        object.__setattr__(self, "r", validation.scalar(validation.positive(self.r, "r"), "r"))
        object.__setattr__(self, "alpha", validation.scalar(validation.positive(self.alpha, "alpha"), "alpha"))
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}; got {self.relation!r}")

    @property
    def limit(self) -> float:
        """:func:`order_limit`: the curve is ``inf`` from this order on."""
        return float(order_limit(self.r, self.alpha))

    def __call__(self, lam):
        return worst_case_divergence(self.r, self.alpha, lam, relation=self.relation)


def exact_curve(r, alpha, l2_sq=2.0, linf=1.0):
    """The exact curve of a Dirichlet release with sensitivities ``(l2_sq, linf)``, where one is known.

    Parameters
    ----------
    r, alpha : float
        Lines 1-2 of Algorithm 1, positive.
    l2_sq, linf : float
        The sensitivities the mechanism was calibrated for.

    Returns
    -------
    DirichletCurve or None
        For histogram sensitivities, a record of weight :math:`w = \\Delta_\\infty`
        moved (:math:`\\Delta_2^2 = 2w^2`, ``"replace"``) or added or removed
        (:math:`\\Delta_2^2 = w^2`, ``"add-remove"``), the curve of
        :math:`\\mathrm{Dir}(rw g + \\alpha)` over unit-count histograms
        :math:`g`; None for any other pair, where the worst case over a query's
        neighbours is not determined by its sensitivities.

    Examples
    --------
    >>> exact_curve(0.5, 9.0).relation, exact_curve(0.5, 9.0, l2_sq=1.0).relation
    ('replace', 'add-remove')
    >>> exact_curve(0.5, 9.0, l2_sq=3.0) is None
    True
    """
    l2_sq = validation.scalar(validation.positive(l2_sq, "l2_sq"), "l2_sq")
    linf = validation.scalar(validation.positive(linf, "linf"), "linf")
    for relation, moved in (("replace", 2.0), ("add-remove", 1.0)):
        if math.isclose(l2_sq, moved * linf**2, rel_tol=1e-12):
            return DirichletCurve(float(r) * linf, alpha, relation)
    return None


class ExactCalibration(NamedTuple):
    """Algorithm 1 calibrated to an :math:`(\\hat\\varepsilon, \\delta)` target through the exact curve.

    Attributes
    ----------
    lam : float
        The order of Algorithm 1 (Lines 1-2).
    epsilon : float
        Algorithm 1's RDP level at ``lam`` (Theorem 1's :math:`\\varepsilon`):
        each release is :math:`(\\lambda, \\varepsilon)`-RDP.
    r, alpha : float
        Lines 1-2 at ``(epsilon, lam)``.
    epsilon_hat : float
        The :math:`\\hat\\varepsilon` that ``n_releases`` releases meet at
        :math:`\\delta` by the exact curve, at most the target.
    order : float
        The order at which the exact curve gives ``epsilon_hat``.
    paper_epsilon : float
        The paper's calibration at the same order: Theorem 1 and eq. (14),
        :func:`lib.privacy.accounting.dp_to_rdp` (not positive where that
        order is infeasible for it).
    """

    lam: float
    epsilon: float
    r: float
    alpha: float
    epsilon_hat: float
    order: float
    paper_epsilon: float


def exact_epsilon_hat(r, alpha, delta, *, n_releases=1, relation="replace", orders=None):
    """The :math:`\\hat\\varepsilon` at ``delta`` of ``n_releases`` releases of :math:`\\mathrm{Dir}(r f + \\alpha)`.

    The exact curve (:class:`DirichletCurve`) composed ``n_releases`` times
    and converted at the best order by :class:`lib.privacy.accountant.Accountant`.

    Parameters
    ----------
    r, alpha : float
        Positive.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    n_releases : int, default 1
    relation : {"replace", "add-remove"}
    orders : array_like, optional
        The accountant's orders (default :data:`lib.privacy.accountant.DEFAULT_ORDERS`).

    Returns
    -------
    lib.privacy.accountant.Spent
        ``(epsilon, delta, order)``.

    Examples
    --------
    >>> from lib import calibrate
    >>> r, alpha = calibrate(0.5, 4.0)
    >>> round(exact_epsilon_hat(r, alpha, 1e-5, n_releases=2).epsilon, 2)
    2.76
    """
    n = validation.integer(n_releases, "n_releases")
    curve = DirichletCurve(r, alpha, relation)
    stated = 1 + (curve.limit - 1) / 2  # any order where the curve is finite; the curve is used at all
    return Accountant(orders).add(RenyiDP(stated, float(curve(stated)), curve=curve), count=n).epsilon(delta)


def calibrate_exact(epsilon_hat, delta, lam, *, n_releases=1, l2_sq=2.0, linf=1.0, orders=None) -> ExactCalibration:
    """Algorithm 1 at order ``lam`` with the largest RDP level the exact curve allows for a target.

    The paper calibrates :math:`m` releases to :math:`(\\hat\\varepsilon, \\delta)`
    with Theorem 1 at one order and eq. (14): :math:`\\varepsilon_0 =`
    :func:`lib.privacy.accounting.dp_to_rdp` per release. The exact curve is
    below Theorem 1's level, and other orders convert it better, so the same
    target admits a larger level. This raises Algorithm 1's :math:`\\varepsilon`
    at the same order (a larger :math:`r`, less noise) while the exact curve,
    composed :math:`m` times and converted at the best order
    (:func:`exact_epsilon_hat`), stays within the target.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target :math:`(\\hat\\varepsilon, \\delta)`, with :math:`\\hat\\varepsilon > 0`
        and :math:`\\delta \\in (0, 1)`.
    lam : float
        The order of Algorithm 1, in :math:`(1, \\infty)` (for instance the one the
        paper's calibration chose, :func:`lib.mechanisms.dirichlet.order.optimal_order`).
    n_releases : int, default 1
        Number :math:`m` of releases of this calibration.
    l2_sq, linf : float
        Histogram sensitivities (:func:`exact_curve` must know them).
    orders : array_like, optional
        The accountant's orders.

    Returns
    -------
    ExactCalibration

    Raises
    ------
    ValueError
        For bad arguments, sensitivities with no exact curve, or a target
        that no level at ``lam`` meets.

    Notes
    -----
    Bisection in :math:`\\log\\varepsilon` on the exact :math:`\\hat\\varepsilon`,
    keeping a lower end that meets the target, to a relative width of
    :math:`10^{-9}`; the lower end is returned, so the target is met whatever the
    shape of the map from :math:`\\varepsilon` to :math:`\\hat\\varepsilon`. Where
    the paper's calibration is feasible at ``lam`` it starts the bracket, and
    the result is never below it. The level is a public function of the target,
    ``lam`` and ``n_releases`` only.

    Examples
    --------
    >>> cal = calibrate_exact(1.0, 1e-5, 10.0)
    >>> bool(cal.epsilon > cal.paper_epsilon and cal.epsilon_hat <= 1.0)
    True
    """
    eps_hat, delta, n = validated_target(epsilon_hat, delta, n_releases)
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    l2_sq = validation.scalar(validation.positive(l2_sq, "l2_sq"), "l2_sq")
    linf = validation.scalar(validation.positive(linf, "linf"), "linf")
    probe = exact_curve(1.0, 1.0, l2_sq, linf)
    if probe is None:
        raise ValueError(f"l2_sq = {l2_sq:g} with linf = {linf:g} are not histogram sensitivities "
                         "(l2_sq = 2 linf^2 or linf^2): no exact curve to calibrate against")

    def achieved(eps):
        r, alpha = calibrate(eps, lam, l2_sq, linf)
        curve = exact_curve(r, alpha, l2_sq, linf)
        return Accountant(orders).add(RenyiDP(lam, eps, curve=curve), count=n).epsilon(delta)

    paper = float(dp_to_rdp(eps_hat, lam, delta, n_releases=n))
    lo = paper if paper > 0 else eps_hat / n * 1e-6
    for _ in range(60):
        if achieved(lo).epsilon <= eps_hat:
            break
        lo /= 4
    else:
        raise ValueError(f"no RDP level at lam = {lam:g} meets epsilon_hat = {eps_hat:g}, delta = {delta:g} "
                         f"over {n} releases")
    hi = lo * 2
    for _ in range(200):
        if achieved(hi).epsilon > eps_hat:
            break
        lo, hi = hi, hi * 2
    else:  # pragma: no cover - the exact level grows without bound with epsilon
        raise ValueError(f"the exact epsilon_hat stays below {eps_hat:g} at every level; check the inputs")
    while math.log(hi / lo) > 1e-9:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if achieved(mid).epsilon <= eps_hat else (lo, mid)
    spent = achieved(lo)
    r, alpha = calibrate(lo, lam, l2_sq, linf)
    return ExactCalibration(lam, lo, float(r), float(alpha), spent.epsilon, spent.order, paper)
