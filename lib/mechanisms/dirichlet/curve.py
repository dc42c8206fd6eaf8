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
* :func:`exact_scale` is the largest scale of Algorithm 1 at an order whose
  composed exact curves, converted by eq. (14) at their best order as
  :class:`lib.privacy.accountant.Accountant` converts them, meet an
  :math:`(\\hat\\varepsilon, \\delta)` target, where Theorem 1 with eq. (14) at
  one order (:func:`lib.privacy.accounting.dp_to_rdp`, the paper's
  calibration) leaves budget unused;
* :func:`calibrate_exact` calibrates Algorithm 1 to the target at that scale,
  at a given order or at the order that minimises the expected KL loss of a
  public reference histogram (:func:`search_exact_order`,
  :func:`calibrate_exact_many` for many targets together).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation
from lib.mechanisms.dirichlet.calibration import calibrate, rdp_epsilon
from lib.mechanisms.dirichlet.divergence import lgamma_diff, renyi_excess
from lib.mechanisms.dirichlet.moments import expected_kl_rows
from lib.privacy.accountant import DEFAULT_ORDERS, Accountant, Spent
from lib.privacy.accounting import validated_target, dp_to_rdp, search_order_many
from lib.privacy.guarantees import RenyiDP

#: The neighbouring relations that :func:`worst_case_divergence` knows.
RELATIONS = ("replace", "add-remove")


def divergence_term(a: ArrayLike, delta: ArrayLike, lam: ArrayLike) -> np.ndarray | float:
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


def worst_case_divergence(r: ArrayLike, alpha: ArrayLike, lam: ArrayLike, *,
                          relation: str = "replace") -> np.ndarray | float:
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


def order_limit(r: ArrayLike, alpha: ArrayLike, linf: ArrayLike = 1.0) -> np.ndarray | float:
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

    def __call__(self, lam: ArrayLike) -> np.ndarray | float:
        return worst_case_divergence(self.r, self.alpha, lam, relation=self.relation)


def exact_curve(r: float, alpha: float, l2_sq: float = 2.0, linf: float = 1.0) -> DirichletCurve | None:
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


def exact_epsilon_hat(r: float, alpha: float, delta: float, *, n_releases: int = 1, relation: str = "replace",
                      orders: ArrayLike | None = None) -> Spent:
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


def _relation(l2_sq, linf):
    """Validated sensitivities and the neighbouring relation of their exact curve (ValueError if none)."""
    l2_sq = validation.scalar(validation.positive(l2_sq, "l2_sq"), "l2_sq")
    linf = validation.scalar(validation.positive(linf, "linf"), "linf")
    probe = exact_curve(1.0, 1.0, l2_sq, linf)
    if probe is None:
        raise ValueError(f"l2_sq = {l2_sq:g} with linf = {linf:g} are not histogram sensitivities "
                         "(l2_sq = 2 linf^2 or linf^2): no exact curve to calibrate against")
    return l2_sq, linf, probe.relation


def _finish(eps_hat, delta, n, lam, scale, l2_sq, linf, orders):
    """The :class:`ExactCalibration` of each target at its order ``lam`` from the scale ``s = r linf`` of :func:`exact_scale`.

    Line 1 solved for the level of that scale, Lines 1-2 at that level (the
    values :class:`~lib.mechanisms.dirichlet.mechanism.DirichletMechanism`
    computes), and the target checked as :class:`lib.privacy.accountant.Accountant`
    checks it: the stated level up to ``lam`` and the exact curve
    (:func:`worst_case_divergence`) at every order, composed ``n`` times and
    converted by eq. (14); where rounding puts the round trip a hair above the
    target, the level is lowered by 1e-12 (relative) until it is met.
    Vectorised over the targets (1-D arrays ``eps_hat``, ``lam``, ``scale``).
    """
    relation = exact_curve(1.0, 1.0, l2_sq, linf).relation
    eps = np.asarray(rdp_epsilon(scale / linf, lam, l2_sq, linf), float).reshape(-1)
    conversion = np.log1p(-1 / orders) - np.log(delta * orders) / (orders - 1)
    r, alpha, met = np.empty(eps.size), np.empty(eps.size), np.empty(eps.size)
    best = np.empty(eps.size, int)
    todo = np.arange(eps.size)  # the targets still to check: after the first pass, those lowered by rounding
    for _ in range(64):
        r[todo], alpha[todo] = (np.asarray(v, float).reshape(-1) for v in calibrate(eps[todo], lam[todo], l2_sq, linf))
        curve = worst_case_divergence((r[todo] * linf)[:, None], alpha[todo, None], orders, relation=relation)
        curve = np.where(orders <= lam[todo, None], np.minimum(curve, eps[todo, None]), curve)
        with np.errstate(invalid="ignore"):
            converted = n * curve + conversion
        converted = np.where(np.isnan(converted), np.inf, converted)
        best[todo] = np.argmin(converted, axis=1)
        met[todo] = np.maximum(converted[np.arange(todo.size), best[todo]], 0.0)
        over = met[todo] > eps_hat[todo]
        if not over.any():
            paper = np.asarray(dp_to_rdp(eps_hat, lam, delta, n_releases=n), float).reshape(-1)
            return [ExactCalibration(float(lam[i]), float(eps[i]), float(r[i]), float(alpha[i]), float(met[i]),
                                     float(orders[best[i]]), float(paper[i])) for i in range(eps.size)]
        todo = todo[over]
        eps[todo] = eps[todo] * (1 - 1e-12)
    raise ValueError(  # pragma: no cover - exact_scale stops at a scale that meets the target
        f"the exact calibration does not meet epsilon_hat = {eps_hat[todo][0]:g}, delta = {delta:g}")


def calibrate_exact(epsilon_hat: float, delta: float, lam: float | None = None, *, counts: ArrayLike | None = None,
                    n_releases: int = 1, l2_sq: float = 2.0, linf: float = 1.0, orders: ArrayLike | None = None,
                    grid_size: int = 128) -> ExactCalibration:
    """Algorithm 1 calibrated to an :math:`(\\hat\\varepsilon, \\delta)` target by its exact curve, at its best order.

    The paper calibrates :math:`m` releases to :math:`(\\hat\\varepsilon, \\delta)`
    with Theorem 1 at one order and eq. (14): :math:`\\varepsilon_0 =`
    :func:`lib.privacy.accounting.dp_to_rdp` per release. The exact curve is
    below Theorem 1's level, and other orders convert it better, so the same
    target admits a larger level at every order. At each order
    :math:`\\lambda` of Algorithm 1 the largest scale whose :math:`m` composed
    exact curves, converted at their best order, meet the target is
    :func:`exact_scale`; the order is the one that minimises the expected KL
    loss of the reference histogram ``counts`` at that scale
    (:func:`search_exact_order`), searched from 1 up: the exact curve makes
    orders feasible that eq. (14) at Theorem 1's level is not.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target :math:`(\\hat\\varepsilon, \\delta)`, with :math:`\\hat\\varepsilon > 0`
        and :math:`\\delta \\in (0, 1)`.
    lam : float, optional
        Calibrate at this order of Algorithm 1, in :math:`(1, \\infty)`, instead of
        the best one (for instance the order the paper's calibration chose,
        :func:`lib.mechanisms.dirichlet.order.optimal_order`).
    counts : array_like, shape (d,) or (k, d)
        A public reference histogram (or rows of one), whose summed expected KL
        loss chooses the order; required when ``lam`` is None. See the warning of
        :func:`lib.mechanisms.dirichlet.order.optimal_order`: never the private data.
    n_releases : int, default 1
        Number :math:`m` of releases of this calibration.
    l2_sq, linf : float
        Histogram sensitivities (:func:`exact_curve` must know them).
    orders : array_like, optional
        The accountant's orders (default :data:`lib.privacy.accountant.DEFAULT_ORDERS`).
    grid_size : int, default 128
        Points of the first grid of the order search.

    Returns
    -------
    ExactCalibration

    Raises
    ------
    ValueError
        For bad arguments, sensitivities with no exact curve, or no ``counts``
        where the order is to be chosen.

    Notes
    -----
    The level is a public function of the target, ``n_releases``, the order
    and (through the order) the reference histogram. It is the level of the
    scale :func:`exact_scale` finds (to about 1e-12, relative), lowered by
    1e-12 where rounding would put the result above the target: the target is
    met by the accountant's own conversion of the composed curves.

    Examples
    --------
    >>> cal = calibrate_exact(1.0, 1e-5, 10.0)
    >>> bool(cal.epsilon > cal.paper_epsilon and cal.epsilon_hat <= 1.0)
    True
    >>> best = calibrate_exact(1.0, 1e-5, counts=[119, 74, 618, 272, 13, 187])
    >>> round(best.lam, 1), round(best.epsilon, 3)
    (4.6, 0.149)
    """
    eps_hat, delta, n = validated_target(epsilon_hat, delta, n_releases)
    l2_sq, linf, relation = _relation(l2_sq, linf)
    if lam is None:
        if counts is None:
            raise ValueError("counts (a public reference histogram) is required to choose the order; "
                             "or pass lam")
        return calibrate_exact_many([eps_hat], delta, counts, n_releases=n, l2_sq=l2_sq, linf=linf, orders=orders,
                                    grid_size=grid_size)[0]
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    grid = _grid(orders)
    lam, eps_hat = np.array([lam]), np.array([eps_hat])
    return _finish(eps_hat, delta, n, lam, _scales(lam, eps_hat, delta, n, relation, grid), l2_sq, linf, grid)[0]


def _reference_rows(counts):
    """A reference histogram as rows ``(k, d)``, non-negative, each with a positive total."""
    rows = validation.vectors(counts, "counts", positive_entries=False)
    rows = rows.reshape(-1, rows.shape[-1]) if rows.ndim else rows
    if rows.ndim != 2 or rows.shape[1] < 2 or np.any(rows.sum(axis=1) <= 0):
        raise ValueError("counts must be a histogram of shape (d,) or rows (k, d), d >= 2, each with a positive "
                         f"total; got shape {np.shape(counts)}")
    return rows


def calibrate_exact_many(epsilon_hats: ArrayLike, delta: float, counts: ArrayLike, *, n_releases: int = 1,
                         l2_sq: float = 2.0, linf: float = 1.0, orders: ArrayLike | None = None,
                         grid_size: int = 128) -> list:
    """:func:`calibrate_exact` at its best order for every target of ``epsilon_hats``, searched together.

    The loss of an order is the expected KL loss summed over the rows of
    ``counts`` (:func:`lib.mechanisms.dirichlet.moments.expected_kl_rows`); the
    searches of all targets run in lockstep (:func:`search_exact_order`).

    Returns
    -------
    list of ExactCalibration
    """
    rows = _reference_rows(counts)

    def loss(r, alpha, which):
        return expected_kl_rows(rows, r[..., None], alpha[..., None]).sum(axis=-1)

    return search_exact_order(epsilon_hats, delta, loss, n_releases=n_releases, l2_sq=l2_sq, linf=linf,
                              orders=orders, grid_size=grid_size)


#: The scales of a grid stage of :func:`search_exact_order` are solved at every 32nd order from the
#: default start, then at every 8th and at all, each from the interpolation of the last (fewer Newton steps).
_START_STRIDES = (32, 8, 1)


def search_exact_order(epsilon_hats: ArrayLike, delta: float, loss: Callable[..., np.ndarray], *, n_releases: int = 1,
                       l2_sq: float = 2.0, linf: float = 1.0, orders: ArrayLike | None = None,
                       grid_size: int = 128) -> list:
    """The order of Algorithm 1 that minimises ``loss`` at the exact calibration, for each target.

    At every order :math:`\\lambda` the scale is :func:`exact_scale` (the largest
    whose ``n_releases`` composed exact curves meet the target) and
    :math:`\\alpha = 1 + 4(\\lambda - 1) r\\Delta_\\infty` (Line 2). The orders are
    searched by :func:`lib.privacy.accounting.search_order_many` from
    :math:`\\lambda_0 = 1` to :math:`1/\\delta`, on grids fixed by the public
    inputs, with its tie rule (:data:`lib.privacy.accounting.ORDER_TIE_RTOL`):
    the chosen order does not hinge on the last bits of the loss.

    Parameters
    ----------
    epsilon_hats : sequence of float
        The targets :math:`\\hat\\varepsilon > 0`.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    loss : callable
        ``loss(r, alpha, which)``: the loss of the targets ``which`` (1-D
        integer array) at scales and pseudo-counts of shape ``(len(which), k)``,
        of that shape.
    n_releases, l2_sq, linf, orders, grid_size
        As in :func:`calibrate_exact`.

    Returns
    -------
    list of ExactCalibration
    """
    targets = np.atleast_1d(validation.positive(epsilon_hats, "epsilon_hats")).astype(float)
    if targets.ndim != 1:
        raise ValueError(f"epsilon_hats must be a 1-D sequence; got shape {targets.shape}")
    checked = [validated_target(e, delta, n_releases) for e in targets]
    if not checked:
        return []
    delta, n = checked[0][1], checked[0][2]
    l2_sq, linf, relation = _relation(l2_sq, linf)
    grid_size = validation.integer(grid_size, "grid_size", 8)
    grid = _grid(orders)
    check_above_floor(targets, delta, orders)

    solved = {}  # target index -> (log(lam - 1), log s) of the first grid, the start of the finer ones

    def objective(lam, which):
        target = np.broadcast_to(targets[which][:, None], lam.shape)
        x = np.log(lam - 1)
        if solved:  # a finer stage: start from the interpolation of the first grid's scales and orders
            start = np.array([np.interp(x[i], *solved[w][:2]) for i, w in enumerate(which)])
            near = np.array([np.rint(np.interp(x[i], solved[w][0], solved[w][2])) for i, w in enumerate(which)])
            strides = (1,)
        else:
            start, near, strides = None, None, _START_STRIDES
        done = None if start is None else np.arange(lam.shape[1])
        for stride in strides:  # solve every stride-th order, from the interpolation of the last solve
            cols = np.unique(np.append(np.arange(0, lam.shape[1], stride), lam.shape[1] - 1))
            if done is not None and done.size != lam.shape[1]:
                start = np.array([np.interp(x[i, cols], x[i, done], start[i]) for i in range(lam.shape[0])])
                near = np.array([np.rint(np.interp(x[i, cols], x[i, done], near[i])) for i in range(lam.shape[0])])
            scale, near = _scales(lam[:, cols], target[:, cols], delta, n, relation, grid, start, meet=False,
                                  near=near, with_orders=True)
            start, done = np.log(scale), cols
        if not solved:
            solved.update({w: (x[i], start[i], near[i]) for i, w in enumerate(which)})
        scale = np.exp(start)
        return loss(scale / linf, 1 + 4 * (lam - 1) * scale, which)

    with np.errstate(over="ignore", under="ignore"):
        lam, _ = search_order_many(targets, delta, objective, grid_size=grid_size, lam_min=1.0)
    x = np.log(lam - 1)  # the last solve starts from the search's scales and orders, interpolated
    start = np.array([np.interp(x[i], *solved[i][:2]) for i in range(targets.size)])
    near = np.array([np.rint(np.interp(x[i], solved[i][0], solved[i][2])) for i in range(targets.size)])
    scale = _scales(lam, targets, delta, n, relation, grid, start, near=near)
    return _finish(targets, delta, n, lam, scale, l2_sq, linf, grid)


#: Strides of the search for the best conversion order on the accountant's grid
#: (:func:`exact_scale`): every 32nd order, then every 4th within 32 of the best,
#: then every order within 4 of the best.
_ORDER_STRIDES = (32, 4, 1)
#: Newton steps of :func:`exact_scale` (each also narrows a bracket; about 8 are used).
_MAX_SCALE_STEPS = 200
#: A Newton step in log r below this ends :func:`exact_scale` (r to about 1e-12, relative).
_SCALE_TOL = 1e-12
#: In the order search, a Newton step below this ends the solve: the update is then within about its
#: square of the root (a switch of the best conversion order between neighbours of the grid adds about
#: 1e-7), far below the tie rule of the search, ORDER_TIE_RTOL = 1e-6 (the chosen orders of 47 targets
#: are the same with 1e-5, 1e-7 and 1e-9).
_SEARCH_TOL = 1e-5


#: From this pseudo-count on, :func:`_sides` takes differences of log-Gamma values without cancellation
#: when asked to be accurate: below it, plain differences lose at most about 1e-13 of a term of order 0.1.
_PLAIN_BELOW = 64.0
#: The same in the order search (:func:`_scales` without ``meet``): below it plain differences lose at
#: most about 1e-9 of the conversion (the spacing of doubles near log Gamma(1e6)), far below the
#: search's tolerance :data:`_SEARCH_TOL` (the chosen orders are those of tighter solves: tests).
_SEARCH_PLAIN_BELOW = 1e6


def _sides(r, alpha, a, *, accurate=True, plain_below=_PLAIN_BELOW):
    """The two terms of the worst case at orders ``a``: the bin that loses a record and the one that gains it.

    :math:`\\phi(\\alpha + r, r)` and :math:`\\phi(\\alpha, -r)` of
    :func:`divergence_term` (``r`` and ``alpha`` of shape ``(N, 1)``, ``a`` of
    shape ``(N, M)``), ``inf`` from :func:`order_limit` on, by differences of
    plain log-Gamma values, which lose about :math:`\\log_{10}(\\alpha\\log\\alpha)`
    digits; with ``accurate``, rows with :math:`\\alpha \\ge` ``plain_below`` use differences
    without cancellation (:func:`lib.mechanisms.dirichlet.divergence.lgamma_diff`,
    about three times slower).
    """
    a = np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(r)))
    gain = alpha - (a - 1) * r
    finite = gain > 0
    with np.errstate(invalid="ignore"):
        l0, l1 = special.gammaln(alpha), special.gammaln(alpha + r)
        removed = l0 - l1 + (special.gammaln(alpha + a * r) - l1) / (a - 1)
        added = l1 - l0 + (special.gammaln(np.where(finite, gain, 1.0)) - l0) / (a - 1)
        large = np.broadcast_to(alpha >= plain_below, a.shape) if accurate else np.zeros(a.shape, bool)
        if np.any(large):
            rl, al, ol, fl = (np.broadcast_to(v, a.shape)[large] for v in (r, alpha, a, finite))
            # the terms of renyi_excess (worst_case_divergence), in the same order of operations
            removed[large] = lgamma_diff(al + rl, -rl) + lgamma_diff(al + rl, (ol - 1) * rl) / (ol - 1)
            added[large] = lgamma_diff(al, rl) + lgamma_diff(al, np.where(fl, -(ol - 1) * rl, 0.0)) / (ol - 1)
    return np.maximum(removed, 0.0), np.where(finite, np.maximum(added, 0.0), np.inf)


def _combined(removed, added, relation):
    return removed + added if relation == "replace" else np.maximum(removed, added)


#: Re-centrings of the window of :func:`_best_conversion` before it falls back to the full search.
_MAX_WALK = 8


def _best_conversion(r, alpha, n, orders, conversion, relation, near=None, plain_below=_PLAIN_BELOW):
    """Per row, the smallest eq. (14) conversion of ``n`` composed exact curves over the grid ``orders``.

    ``conversion`` is eq. (14)'s term of each order (the value for a level 0).
    Searched with the strides of :data:`_ORDER_STRIDES`, the last with accurate
    terms (the conversion, an increasing curve plus eq. (14)'s decreasing term,
    is unimodal along the grid; tests compare the result with every order).
    With ``near`` (an index per row, the best order of a nearby scale; -1 for
    none), a window of 9 orders around it instead, moved downhill while its
    best order is at its edge (the full search after :data:`_MAX_WALK` moves).
    Returns the value and the index of the order that gives it.
    """
    size = orders.size
    rows = np.arange(r.shape[0])
    if near is not None and np.any(near >= 0):
        span = _ORDER_STRIDES[-2]
        out, best = np.empty(rows.size), np.asarray(near).copy()
        walk = near >= 0
        for _ in range(_MAX_WALK):
            w = np.flatnonzero(walk)
            index = np.minimum(np.maximum(best[w, None] + np.arange(-span, span + 1), 0), size - 1)
            value = n * _combined(*_sides(r[w], alpha[w], orders[index], plain_below=plain_below), relation) \
                + conversion[index]
            j = np.argmin(value, axis=1)
            best[w], out[w] = index[np.arange(w.size), j], value[np.arange(w.size), j]
            edge = ((j == 0) & (index[:, 0] > 0)) | ((j == 2 * span) & (index[:, -1] < size - 1))
            walk[:] = False
            walk[w[edge]] = True
            if not walk.any():
                break
        full = (near < 0) | walk
        if np.any(full):
            out[full], best[full] = _best_conversion(r[full], alpha[full], n, orders, conversion, relation,
                                                     plain_below=plain_below)
        return out, best
    coarse = np.append(np.arange(0, size, _ORDER_STRIDES[0]), size - 1)
    index = np.broadcast_to(coarse, (rows.size, coarse.size))
    for stage, stride in enumerate(_ORDER_STRIDES):
        if stage:
            width = _ORDER_STRIDES[stage - 1]
            index = np.minimum(np.maximum(best[:, None] + np.arange(-width, width + 1, stride), 0), size - 1)
        last = stage == len(_ORDER_STRIDES) - 1
        value = n * _combined(*_sides(r, alpha, orders[index], accurate=last, plain_below=plain_below), relation) \
            + conversion[index]
        j = np.argmin(value, axis=1)
        best = index[rows, j]
    return value[rows, j], best


def exact_scale(lam: ArrayLike, epsilon_hat: ArrayLike, delta: float, *, n_releases: int = 1, relation: str = "replace",
                orders: ArrayLike | None = None) -> np.ndarray | float:
    """The largest scale at order ``lam`` whose exact curve meets an :math:`(\\hat\\varepsilon, \\delta)` target.

    Algorithm 1 at order :math:`\\lambda` releases :math:`\\mathrm{Dir}(r f +
    \\alpha)` with :math:`\\alpha = 1 + 4(\\lambda - 1) r\\Delta_\\infty` (Line 2);
    its exact curve depends on :math:`s = r\\Delta_\\infty` and :math:`\\alpha`
    only. This returns the largest :math:`s` for which ``n_releases`` such
    curves, composed and converted by eq. (14) at the best order of the grid
    ``orders`` (as :class:`lib.privacy.accountant.Accountant` does), give at
    most :math:`\\hat\\varepsilon`: the root in :math:`\\log s` of the
    conversion minus the target, which increases with :math:`s`, by Newton
    steps (the slope of the curve at the best conversion order, in closed form
    with :math:`\\psi`) inside a bracket that shrinks with the sign, stopped
    when a step is below 1e-12, at a point that meets the target (as computed
    here: to about 1e-13 of :math:`\\hat\\varepsilon`, the rounding of the plain
    log-Gamma differences used below :math:`\\alpha = 64`; :func:`calibrate_exact`
    checks the target as the accountant computes it). Vectorised
    over ``lam`` and ``epsilon_hat``; each entry stops on its own, so a batch
    returns the values of single calls.

    Parameters
    ----------
    lam : array_like
        Orders of Algorithm 1, in :math:`(1, \\infty)`.
    epsilon_hat : array_like
        Targets :math:`\\hat\\varepsilon > 0`, broadcast with ``lam``.
    delta, n_releases, relation, orders
        As in :func:`exact_epsilon_hat`.

    Returns
    -------
    ndarray or float
        :math:`s = r\\Delta_\\infty`.

    Examples
    --------
    >>> s = exact_scale(4.6, 1.0, 1e-5)
    >>> round(float(s), 4), round(float(exact_epsilon_hat(s, 1 + 4 * 3.6 * s, 1e-5).epsilon), 9)
    (0.3927, 1.0)
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}; got {relation!r}")
    lam, eps_hat = validation.broadcast(lam=validation.order(lam, "lam", strict=True),
                                        epsilon_hat=validation.positive(epsilon_hat, "epsilon_hat"))
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    n = validation.integer(n_releases, "n_releases")
    check_above_floor(eps_hat, delta, orders)
    return _scales(lam, eps_hat, delta, n, relation, _grid(orders))[()]


def _grid(orders):
    """The accountant's orders, validated and sorted (default :data:`lib.privacy.accountant.DEFAULT_ORDERS`)."""
    return np.sort(np.asarray(DEFAULT_ORDERS if orders is None else validation.order(orders, "orders", strict=True),
                              float).ravel())


def exact_floor(delta: float, orders: ArrayLike | None = None) -> float:
    """The smallest :math:`\\hat\\varepsilon` an exact calibration can meet at ``delta`` on the orders ``orders``.

    The conversion of eq. (14) adds :math:`\\log(1 - 1/a) - \\log(\\delta a) / (a - 1)`
    to the Rényi level at order :math:`a`; at a scale tending to 0 the level
    tends to 0, so no scale meets a target at or below the smallest of these
    terms over the accountant's orders (about 1.3e-4 at :math:`\\delta = 10^{-5}`
    with the default orders, which end at 10001).

    Examples
    --------
    >>> round(exact_floor(1e-5), 6)
    0.00013
    """
    grid = _grid(orders)
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    return float((np.log1p(-1 / grid) - np.log(delta * grid) / (grid - 1)).min())


def check_above_floor(epsilon_hat: float, delta: float, orders: ArrayLike | None = None) -> None:
    """Refuse targets that no scale can meet (:func:`exact_floor`), naming ``epsilon_hat`` and the floor.

    Raises
    ------
    ValueError
        If some ``epsilon_hat`` is at or below the floor of ``delta`` on ``orders``.
    """
    floor = exact_floor(delta, orders)
    low = np.asarray(epsilon_hat, float) <= floor
    if np.any(low):
        raise ValueError(f"epsilon_hat must exceed {floor:.3g}, the smallest (epsilon_hat, delta = {delta:g}) an "
                         f"exact calibration can meet on the accountant's orders (up to {_grid(orders).max():g}); "
                         f"got {np.asarray(epsilon_hat, float)[low].ravel()[:3]}")


#: Offsets in log s from Line 1's scale at which :func:`_first_guess` evaluates the conversion.
_GUESS_OFFSETS = np.arange(-4.0, 12.0, 2.0)


def _first_guess(k, target, n, delta, relation, grid, lam):
    """A start for :func:`_scales`: the root of the conversion, interpolated on a coarse scan.

    Line 1's scale at order ``lam`` with the whole target as each release's
    level is off the root by a factor between about e^-4 and e^9; the
    conversion (every 32nd order of the grid, plain log-Gamma) at eight scales
    around it, in one evaluation, brackets the root, which is interpolated
    linearly in log s (Newton then needs about four steps instead of eight).
    """
    t0 = np.log(np.atleast_1d(calibrate(target / n, lam).r))
    t = t0[:, None] + _GUESS_OFFSETS
    s = np.exp(t)[..., None]
    alpha = 1 + k[:, None, None] * s
    coarse = grid[::_ORDER_STRIDES[0]]
    conversion = np.log1p(-1 / coarse) - np.log(delta * coarse) / (coarse - 1)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = (n * _combined(*_sides(s, alpha, coarse, accurate=False), relation) + conversion).min(axis=-1) \
            - target[:, None]
    above = gap > 0
    j = np.where(above.any(axis=1), np.argmax(above, axis=1), t.shape[1] - 1)
    i = np.maximum(j - 1, 0)
    rows = np.arange(t.shape[0])
    g0, g1 = gap[rows, i], gap[rows, j]
    with np.errstate(invalid="ignore", divide="ignore"):
        root = t[rows, i] - g0 * (t[rows, j] - t[rows, i]) / (g1 - g0)
    return np.where((j > i) & np.isfinite(root), root, t[rows, j])


def _scales(lam, eps_hat, delta, n, relation, grid, start=None, *, meet=True, near=None, with_orders=False):
    """:func:`exact_scale` of validated arrays of one shape; ``start``, optional, a first guess of ``log s``.

    Without ``meet``, for the order search, where only the loss at the scale
    matters: the Newton update of the first step below :data:`_SEARCH_TOL`
    (accurate to about its square), whether or not it meets the target.
    ``near``, optional, a guess of the index of each entry's best conversion
    order (as :func:`_best_conversion` takes it); with ``with_orders`` the
    indices found are returned too.
    """
    shape = lam.shape
    k, target = (4 * (lam - 1)).ravel(), eps_hat.ravel()
    if start is None:
        t = _first_guess(k, target, n, delta, relation, grid, lam.ravel())
    else:
        t = np.array(start, float).ravel()
    lo, hi = np.full(t.shape, -np.inf), np.full(t.shape, np.inf)
    g_lo, g_hi = np.full(t.shape, -np.inf), np.full(t.shape, np.inf)  # the gaps at the ends
    out = np.empty(t.shape)
    todo = np.arange(t.size)
    conversion = np.log1p(-1 / grid) - np.log(delta * grid) / (grid - 1)
    found = np.zeros(t.size, int)  # the index of each entry's best conversion order at its end
    near = None if near is None else np.asarray(near, int).ravel()  # the best orders of the last step
    for _ in range(_MAX_SCALE_STEPS):
        s = np.exp(t)
        alpha = 1 + k * s
        value, best = _best_conversion(s[:, None], alpha[:, None], n, grid, conversion, relation, near,
                                       _PLAIN_BELOW if meet else _SEARCH_PLAIN_BELOW)
        gap = value - target
        a = grid[best]
        removed, added = _sides(s[:, None], alpha[:, None], a[:, None], accurate=False)
        p0, p1 = special.digamma(alpha), special.digamma(alpha + s)
        d_removed = p0 * k - p1 * (k + 1) + (special.digamma(alpha + a * s) * (k + a) - p1 * (k + 1)) / (a - 1)
        d_added = p1 * (k + 1) - p0 * k + (special.digamma(alpha - (a - 1) * s) * (k - (a - 1)) - p0 * k) / (a - 1)
        if relation == "replace":
            slope = d_removed + d_added
        else:
            slope = np.where(removed[:, 0] >= added[:, 0], d_removed, d_added)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = gap / (n * s * slope)
        # a slope that rounds to 0 (a curve far below its rounding): a bounded step towards the root
        step = np.where(np.isfinite(step), step, np.where(gap > 0, 2.0, np.where(gap < 0, -2.0, 0.0)))
        meets = gap <= 0
        lo, g_lo = np.where(meets & (t > lo), t, lo), np.where(meets & (t > lo), gap, g_lo)
        hi, g_hi = np.where(~meets & (t < hi), t, hi), np.where(~meets & (t < hi), gap, g_hi)
        closed = np.isfinite(lo) & (hi - lo <= _SCALE_TOL)
        if meet:
            done = (meets & (np.abs(step) <= _SCALE_TOL)) | closed
            out[todo[done]] = np.where(closed, np.exp(lo), s)[done]
        else:
            done = (np.abs(step) <= _SEARCH_TOL) | closed
            out[todo[done]] = np.exp(np.where(closed, lo, t - step))[done]
        found[todo[done]] = best[done]
        if done.all():
            return (out.reshape(shape), found.reshape(shape)) if with_orders else out.reshape(shape)
        # a converged step that misses the target by rounding: just below the predicted root
        newton = np.where(np.abs(step) <= _SCALE_TOL, t - np.abs(step) - _SCALE_TOL, t - step)
        newton = np.minimum(np.maximum(newton, t - 2.0), t + 2.0)  # at most a factor e^2 per step while unbracketed
        inside = (newton > lo) & (newton < hi)
        both = np.isfinite(lo) & np.isfinite(hi)
        with np.errstate(invalid="ignore", divide="ignore"):
            # where Newton leaves a closed bracket: the secant through its ends, kept off the ends
            secant = lo - g_lo * (hi - lo) / (g_hi - g_lo)
            secant = np.minimum(np.maximum(secant, lo + 0.05 * (hi - lo)), hi - 0.05 * (hi - lo))
        t = np.where(inside, newton, np.where(both, secant, newton))
        keep = ~done
        near = best[keep]
        todo, t, lo, hi, k, target = todo[keep], t[keep], lo[keep], hi[keep], k[keep], target[keep]
        g_lo, g_hi = g_lo[keep], g_hi[keep]
    raise ValueError(  # pragma: no cover - the conversion increases with the scale and the bracket closes
        f"the exact scale did not converge in {_MAX_SCALE_STEPS} steps for epsilon_hat = {target[:3]}, "
        f"lam = {1 + k[:3] / 4}")
