"""The Dirichlet mechanism's :math:`(\\hat\\varepsilon, \\delta)`-DP target for a whole model (Appendix C).

A private naive Bayes model (:mod:`lib.models.naive_bayes`) or Bayesian network makes
:math:`m` histogram releases: one per table of counts. Under replace-one
neighbours every release moves two of its cells by one, so each has
:math:`\\Delta_2^2 = 2` and :math:`\\Delta_\\infty = 1`. The Dirichlet mechanism
meets one target :math:`(\\hat\\varepsilon, \\delta)` for all :math:`m` releases
together: all releases at one order :math:`\\lambda`, each
:math:`(\\lambda, \\varepsilon)`-RDP by Algorithm 1; they compose to
:math:`(\\lambda, m\\varepsilon)`-RDP, converted once by eq. (14)
(:func:`lib.privacy.accounting.dp_to_rdp`). The order minimises the expected KL
loss of *public* reference tables (:func:`public_reference`, :func:`model_order`,
the search of :func:`lib.mechanisms.dirichlet.order.optimal_order` summed over
the releases), or follows the author's rule :math:`\\lambda = 1 + 1/\\varepsilon`
(:func:`lib.mechanisms.dirichlet.order.fixed_order`); :func:`dirichlet_order`
chooses between them.

The other mechanisms' calibrations to the same target sit beside them: the
Gaussian and Laplace solvers in :mod:`lib.mechanisms.noise.calibration`, Gohari
et al.'s guarantee composed over the releases in
:mod:`lib.mechanisms.gohari.mechanism`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.privacy.accounting import blame_target, dp_to_rdp, search_order, search_order_many
from lib.mechanisms.dirichlet.order import OrderChoice, fixed_order
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.curve import search_exact_order
from lib.mechanisms.dirichlet.moments import expected_kl_rows
from lib.mechanisms.protocol import L2_SQ, LINF


def public_reference(n_total: float, domain_sizes: Sequence[int], n_rows: Sequence[int], *,
                     exponent: float = 1.0) -> list[np.ndarray]:
    """Data-independent reference tables for the choice of order.

    The order of the Dirichlet releases is chosen by the expected KL loss
    (chapter 04), which depends on the histograms; the private ones must not
    be used (the choice would itself be a release). These tables use only
    public quantities: release :math:`i` gets ``n_rows[i]`` rows of
    ``domain_sizes[i]`` cells, each row holding ``n_total / n_rows[i]``
    records (the average when the ``n_total`` training rows are spread evenly
    over the rows: the classes of a naive Bayes table, the parent
    configurations of a Bayesian-network table), shared in proportion to
    :math:`i^{-s}` (Zipf's law with exponent :math:`s`). A skewed shape is
    needed: for a uniform reference the pull of :math:`\\alpha` towards uniform
    costs nothing and the search runs to its largest order.

    Parameters
    ----------
    n_total : float
        Number of training rows, :math:`(0, \\infty)` (public).
    domain_sizes : sequence of int
        Cells of each release's rows, at least 2.
    n_rows : sequence of int
        Rows of each release, at least 1.
    exponent : float, default 1.0
        Zipf exponent :math:`s \\ge 0`.

    Returns
    -------
    list of ndarray, shape (n_rows[i], domain_sizes[i])

    Examples
    --------
    >>> public_reference(110.0, [3], [2])[0].round(3)
    array([[30., 15., 10.],
           [30., 15., 10.]])
    """
    n_total = validation.scalar(validation.positive(n_total, "n_total"), "n_total")
    sizes = validation.domain_sizes(domain_sizes)
    rows = np.asarray(n_rows)
    if rows.shape != (len(sizes),) or not np.issubdtype(rows.dtype, np.integer) or np.any(rows < 1):
        raise ValueError(f"n_rows must hold one integer in [1, inf) per release ({len(sizes)}); "
                         f"got {n_rows!r}")
    exponent = validation.scalar(validation.nonnegative(exponent, "exponent"), "exponent")
    validation.cells(sum(d * k for d, k in zip(sizes, rows.tolist())), "the public reference tables")
    out = []
    for d, k in zip(sizes, rows.tolist()):
        weights = np.arange(1, d + 1, dtype=float) ** -exponent
        out.append(np.tile(n_total / k * weights / weights.sum(), (k, 1)))
    return out


def _rows(histograms):
    """Every row with a positive total, grouped by length: list of (n, d) arrays."""
    groups = {}
    for h in histograms:
        h = validation.vectors(h, "histograms", positive_entries=False)
        rows = h.reshape(-1, h.shape[-1])
        rows = rows[rows.sum(axis=1) > 0]
        if rows.size:
            groups.setdefault(rows.shape[1], []).append(rows)
    if not groups:
        raise ValueError("histograms must hold at least one row with a positive total")
    return [np.concatenate(g) for g in groups.values()]


def total_expected_kl(histograms: Sequence[ArrayLike], r: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    """Sum of :func:`lib.expected_kl_loss` over every row of every histogram.

    The loss of a whole model released by Algorithm 1 at ``(r, alpha)``: each
    row with a positive total (an empty row has no target distribution) counts
    once. ``r`` and ``alpha`` broadcast together; the result has their shape.

    Parameters
    ----------
    histograms : sequence of array_like, shape (..., d_i)
        The tables of counts of the model's releases.
    r, alpha : array_like
        Algorithm 1's scale and pseudo-count.
    """
    r, alpha = validation.broadcast(r=validation.positive(r, "r"), alpha=validation.positive(alpha, "alpha"))
    return _summed_kl(_rows(histograms), r, alpha)


def _distinct(groups):
    """Each group of rows as (its distinct rows, the index of every row among them)."""
    out = []
    for rows in groups:
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        out.append((distinct, inverse.ravel()))
    return out


def _summed_kl_distinct(groups, r, alpha):
    """:func:`_summed_kl` of groups from :func:`_distinct`: the loss of each distinct row computed once.

    A row's loss depends on the row alone, so the losses of all rows, gathered
    from the distinct ones and summed in the original order, are exactly those
    that :func:`_summed_kl` sums (the public reference tables repeat one row
    per table, so this is most of the work of the order search saved).
    """
    total = np.zeros(np.shape(r))
    for distinct, inverse in groups:
        loss = expected_kl_rows(distinct, r[..., None], alpha[..., None])
        total = total + np.take(loss, inverse, axis=-1).sum(axis=-1)
    return total[()]


def _summed_kl(groups, r, alpha):
    """:func:`total_expected_kl` of rows already grouped by :func:`_rows`, at validated ``r`` and ``alpha``."""
    total = np.zeros(np.shape(r))
    for rows in groups:
        total = total + expected_kl_rows(rows, r[..., None], alpha[..., None]).sum(axis=-1)
    return total[()]


def model_order(epsilon_hat: float, delta: float, histograms: Sequence[ArrayLike], *, n_releases: int,
                grid_size: int = 128) -> OrderChoice:
    """The order that minimises :func:`total_expected_kl` of a model's tables.

    :func:`lib.mechanisms.dirichlet.order.optimal_order` for a model of several releases of
    different shapes: every order :math:`\\lambda > \\lambda_0` meets the target
    with the per-release level ``dp_to_rdp(epsilon_hat, lam, delta,
    n_releases=m)``, and the search (a grid of ``grid_size`` points in
    :math:`\\log(\\lambda - \\lambda_0)` up to :math:`1/\\delta`, refined on a finer grid
    with a tie rule, :func:`lib.privacy.accounting.search_order_many`) minimises the summed
    expected loss.

    .. warning:: With public tables (:func:`public_reference`) this is the
       choice the experiments release with. With the private tables it is an
       *oracle*: a measuring stick for the cost of the public guess, never to
       be used for a release.

    Returns
    -------
    OrderChoice
        ``expected_kl`` is the total over all rows of ``histograms``.
    """
    eps, dlt = validation.dp_target(epsilon_hat, delta)
    m = validation.integer(n_releases, "n_releases")
    grid_size = validation.integer(grid_size, "grid_size", 8)
    rows = _rows(histograms)
    def loss(lam):  # called once per step of the order search: the rows are grouped once, above
        r, alpha = calibrate(dp_to_rdp(eps, lam, dlt, n_releases=m), lam, L2_SQ, LINF)
        r, alpha = np.asarray(r, dtype=float), np.asarray(alpha, dtype=float)
        if r.shape == alpha.shape and np.all((r > 0) & (r < np.inf) & (alpha > 0) & (alpha < np.inf)):
            return _summed_kl(rows, r, alpha)
        return total_expected_kl(rows, r, alpha)  # validates, and raises as it always did

    with blame_target(eps, dlt):
        lam, _ = search_order(eps, dlt, loss, grid_size=grid_size)
        level = float(dp_to_rdp(eps, lam, dlt, n_releases=m))
        r, alpha = calibrate(level, lam, L2_SQ, LINF)
        return OrderChoice(lam, float(r), float(alpha), level, float(total_expected_kl(rows, r, alpha)))


def model_order_many(epsilon_hats: ArrayLike, delta: float, histograms: Sequence[ArrayLike], *, n_releases: int,
                     grid_size: int = 128) -> list:
    """:func:`model_order` at every target of ``epsilon_hats`` (one ``delta``), searched together.

    The searches of all targets run together
    (:func:`lib.privacy.accounting.search_order_many`), one evaluation of the summed loss
    per grid stage for all of them; every target gets the :class:`OrderChoice` that
    :func:`model_order` returns for it (the same steps; Line 1 of Algorithm 1
    solves each entry on its own, so the values do not depend on the batch).
    Where the vectorised path meets an input it does not handle (a calibration
    outside double precision), every target is searched by :func:`model_order`,
    which raises its usual error.

    Returns
    -------
    list of OrderChoice
    """
    targets = np.atleast_1d(validation.positive(epsilon_hats, "epsilon_hats"))
    if targets.ndim != 1:
        raise ValueError(f"epsilon_hats must be a 1-D sequence; got shape {targets.shape}")
    targets = [validation.dp_target(e, delta)[0] for e in targets]
    dlt = validation.dp_target(targets[0] if targets else 1.0, delta)[1]
    m = validation.integer(n_releases, "n_releases")
    grid_size = validation.integer(grid_size, "grid_size", 8)
    if not targets:
        return []
    try:
        return _order_search(targets, dlt, _rows(histograms), m, grid_size)
    except (_Irregular, ValueError):  # the target-by-target search raises the error that belongs to it
        return [model_order(e, dlt, histograms, n_releases=m, grid_size=grid_size) for e in targets]


class _Irregular(Exception):
    """An input the lockstep order search leaves to :func:`model_order` (which raises its error)."""


def _order_search(targets, dlt, rows, m, grid_size):
    """The lockstep search of :func:`model_order_many`: every target with the grouped ``rows``."""
    eps, per, distinct = np.array(targets), float(m), _distinct(rows)

    def loss(lam, which):
        shape = (-1,) + (1,) * (np.ndim(lam) - 1)
        # dp_to_rdp(..., n_releases=m) is the total divided by m: the same division here
        level = dp_to_rdp(eps[which].reshape(shape), lam, dlt) / per
        if not np.all(np.isfinite(level) & (level > 0)):
            raise _Irregular
        try:
            r, alpha = calibrate(level, lam, L2_SQ, LINF)
        except ValueError:
            raise _Irregular from None
        r, alpha = np.asarray(r, dtype=float), np.asarray(alpha, dtype=float)
        if not np.all((r > 0) & (r < np.inf) & (alpha > 0) & (alpha < np.inf)):
            raise _Irregular
        return _summed_kl_distinct(distinct, r, alpha)

    with np.errstate(all="ignore"):
        lam, _ = search_order_many(eps, dlt, loss, grid_size=grid_size)
        level = np.array([float(dp_to_rdp(e, l, dlt, n_releases=m)) for e, l in zip(targets, lam)])
        r, alpha = calibrate(level, lam, L2_SQ, LINF)
        kl = total_expected_kl(rows, r, alpha)
    return [OrderChoice(float(lam[i]), float(r[i]), float(alpha[i]), float(level[i]), float(kl[i]))
            for i in range(len(targets))]


def dirichlet_order(epsilon_hat: float, delta: float, n_releases: int, *, reference: Sequence[ArrayLike] | None = None,
                    rule: str = "optimal") -> OrderChoice:
    """The order, RDP level and Algorithm 1 calibration of ``n_releases`` Dirichlet releases.

    All releases are made at one order :math:`\\lambda`, each
    :math:`(\\lambda, \\varepsilon)`-RDP; together :math:`(\\lambda,
    m\\varepsilon)`-RDP, which eq. (14) turns into :math:`(\\hat\\varepsilon,
    \\delta)`-DP when :math:`\\varepsilon` = ``dp_to_rdp(epsilon_hat, lam, delta,
    n_releases=m)``.

    Parameters
    ----------
    epsilon_hat, delta : float
        Target for the whole model.
    n_releases : int
        :math:`m \\ge 1`.
    reference : sequence of array_like
        Public reference tables (:func:`public_reference`); required by
        ``rule="optimal"`` (:func:`model_order`), used only to report
        ``expected_kl`` by ``"fixed"``.
    rule : {"optimal", "fixed"}
        :func:`model_order` or the author's :func:`lib.mechanisms.dirichlet.order.fixed_order`
        (:math:`\\lambda = 1 + 1/\\varepsilon`).

    Returns
    -------
    OrderChoice
    """
    eps, dlt = validation.dp_target(epsilon_hat, delta)
    m = validation.integer(n_releases, "n_releases")
    if rule == "optimal":
        if reference is None:
            raise ValueError("reference is required for rule='optimal' (public tables)")
        return model_order(eps, dlt, reference, n_releases=m)
    if rule == "fixed":
        choice = fixed_order(eps, dlt, n_releases=m, l2_sq=L2_SQ, linf=LINF)
        if reference is not None:
            choice = choice._replace(expected_kl=float(total_expected_kl(reference, choice.r, choice.alpha)))
        return choice
    raise ValueError(f"rule must be 'optimal' or 'fixed'; got {rule!r}")


def exact_model_order_many(epsilon_hats: ArrayLike, delta: float, histograms: Sequence[ArrayLike], *,
                           n_releases: int) -> list:
    """The exact calibration of a model's ``n_releases`` releases at its best order, for every target.

    :func:`lib.mechanisms.dirichlet.curve.search_exact_order` with the loss of
    :func:`model_order`, :func:`total_expected_kl` of the tables ``histograms``
    (public reference tables, :func:`public_reference`): at every order the
    scale is the largest whose composed exact curves meet the target, and the
    order minimises the summed expected loss at that scale. The searches of all
    targets run in lockstep.

    Returns
    -------
    list of lib.mechanisms.dirichlet.curve.ExactCalibration
    """
    distinct = _distinct(_rows(histograms))

    def loss(r, alpha, which):
        return _summed_kl_distinct(distinct, r, alpha)

    return search_exact_order(epsilon_hats, delta, loss, n_releases=n_releases, l2_sq=L2_SQ, linf=LINF)
