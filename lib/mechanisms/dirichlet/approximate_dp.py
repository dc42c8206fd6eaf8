"""One :math:`(\\hat\\varepsilon, \\delta)`-DP target for a whole model (Appendix C).

A private naive Bayes model (:mod:`lib.models.naive_bayes`) or Bayesian network makes
:math:`m` histogram releases: one per table of counts. Under replace-one
neighbours every release moves two of its cells by one, so each has
:math:`\\Delta_2^2 = 2`, :math:`\\Delta_\\infty = 1`, :math:`\\Delta_1 = 2`. This
module meets one target :math:`(\\hat\\varepsilon, \\delta)` for all :math:`m`
releases together, with four mechanisms, and returns one mechanism object per
release (:func:`calibrate_model`):

* ``"dirichlet"``: all releases at one order :math:`\\lambda`, each
  :math:`(\\lambda, \\varepsilon)`-RDP by Algorithm 1; they compose to
  :math:`(\\lambda, m\\varepsilon)`-RDP, converted once by eq. (14)
  (:func:`lib.privacy.accounting.dp_to_rdp`). The order minimises the expected KL loss
  of *public* reference tables (:func:`public_reference`, :func:`model_order`,
  the search of :func:`lib.mechanisms.dirichlet.order.optimal_order` summed over the
  releases), or follows the author's rule
  :math:`\\lambda = 1 + 1/\\varepsilon` (:func:`lib.mechanisms.dirichlet.order.fixed_order`).
* ``"gaussian"``: the :math:`m` releases with i.i.d. :math:`N(0, \\sigma^2)` noise
  are one Gaussian mechanism of joint :math:`\\ell_2`-sensitivity
  :math:`\\sqrt{2m}`; :math:`\\sigma` is the exact one of Balle and Wang's
  analytic Gaussian mechanism (:func:`analytic_gaussian_sigma`).
* ``"laplace"``: pure DP, basic composition: each release
  :math:`\\hat\\varepsilon/m`-DP, scale :math:`2m/\\hat\\varepsilon`
  (:func:`laplace_dp_scale`); :math:`\\delta` is not used.
* ``"gohari"``: Algorithm 1's release :math:`\\mathrm{Dirichlet}(r f + \\alpha)`,
  :math:`\\alpha = 1 + 4(\\lambda - 1) r`, with :math:`r` from Gohari et al.'s
  guarantee (:func:`lib.mechanisms.gohari.gohari_calibrate`) at
  :math:`(\\hat\\varepsilon/m, \\delta/m)` per release (basic composition of
  approximate DP). A target that no :math:`r` reaches is reported as not
  attained, never replaced by another calibration.
* ``"gaussian_classical"``: the classical
  :math:`\\sigma = \\sqrt{2\\log(1.25/\\delta)}\\,\\Delta_2/\\hat\\varepsilon`
  at the joint sensitivity, for comparison only: it is proved for
  :math:`\\hat\\varepsilon < 1` and fails above (:func:`analytic_gaussian_delta`
  measures by how much).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special

from lib import _validate
from lib.privacy.accounting import _MAX_BRACKET_STEPS, blame_target, dp_to_rdp, min_order, search_order, search_order_many
from lib.mechanisms.dirichlet.order import OrderChoice, fixed_order
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.gohari import gohari_calibrate
from lib.mechanisms.gohari.batch import gohari_calibrate_many
from lib.mechanisms.dirichlet.moments import expected_kl_loss
from lib.mechanisms.protocol import L1, L2_SQ, LINF
#: Largest epsilon_hat of :func:`analytic_gaussian_sigma`: above it the terms of
#: delta cancel beyond double precision (checked by the hardening tests).
GAUSSIAN_EPSILON_HAT_MAX = 1e10
#: Order of Gohari et al.'s release, :math:`\alpha = 1 + 4(\lambda - 1) r` (the author's value).
GOHARI_LAM = 5.0


def _target(epsilon_hat, delta):
    eps = _validate.scalar(_validate.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    dlt = _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
    return eps, dlt


def _domain_sizes(domain_sizes):
    sizes = np.asarray(domain_sizes)
    if (sizes.ndim != 1 or sizes.size < 1 or not np.issubdtype(sizes.dtype, np.integer)
            or np.any(sizes < 2)):
        raise ValueError(
            f"domain_sizes must be a non-empty 1-D sequence of integers in [2, inf), one per "
            f"release; got {domain_sizes!r}"
        )
    sizes = tuple(int(v) for v in sizes)
    _validate.cells(sum(sizes), f"domain_sizes (summing to {sum(sizes)})")
    return sizes


# ----------------------------------------------------------------------------- Dirichlet


def public_reference(n_total, domain_sizes, n_rows, *, exponent=1.0):
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
    n_total = _validate.scalar(_validate.positive(n_total, "n_total"), "n_total")
    sizes = _domain_sizes(domain_sizes)
    rows = np.asarray(n_rows)
    if rows.shape != (len(sizes),) or not np.issubdtype(rows.dtype, np.integer) or np.any(rows < 1):
        raise ValueError(f"n_rows must hold one integer in [1, inf) per release ({len(sizes)}); "
                         f"got {n_rows!r}")
    exponent = _validate.scalar(_validate.nonnegative(exponent, "exponent"), "exponent")
    _validate.cells(sum(d * k for d, k in zip(sizes, rows.tolist())), "the public reference tables")
    out = []
    for d, k in zip(sizes, rows.tolist()):
        weights = np.arange(1, d + 1, dtype=float) ** -exponent
        out.append(np.tile(n_total / k * weights / weights.sum(), (k, 1)))
    return out


def _rows(histograms):
    """Every row with a positive total, grouped by length: list of (n, d) arrays."""
    groups = {}
    for h in histograms:
        h = _validate.vectors(h, "histograms", positive_entries=False)
        rows = h.reshape(-1, h.shape[-1])
        rows = rows[rows.sum(axis=1) > 0]
        if rows.size:
            groups.setdefault(rows.shape[1], []).append(rows)
    if not groups:
        raise ValueError("histograms must hold at least one row with a positive total")
    return [np.concatenate(g) for g in groups.values()]


def total_expected_kl(histograms, r, alpha):
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
    r, alpha = _validate.broadcast(r=_validate.positive(r, "r"), alpha=_validate.positive(alpha, "alpha"))
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
        loss = expected_kl_loss(distinct, r[..., None], alpha[..., None])
        total = total + np.take(loss, inverse, axis=-1).sum(axis=-1)
    return total[()]


def _summed_kl(groups, r, alpha):
    """:func:`total_expected_kl` of rows already grouped by :func:`_rows`, at validated ``r`` and ``alpha``."""
    total = np.zeros(np.shape(r))
    for rows in groups:
        total = total + expected_kl_loss(rows, r[..., None], alpha[..., None]).sum(axis=-1)
    return total[()]


def model_order(epsilon_hat, delta, histograms, *, n_releases, grid_size=128) -> OrderChoice:
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
    eps, dlt = _target(epsilon_hat, delta)
    m = _validate.integer(n_releases, "n_releases")
    grid_size = _validate.integer(grid_size, "grid_size", 8)
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


def model_order_many(epsilon_hats, delta, histograms, *, n_releases, grid_size=128) -> list:
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
    targets = np.atleast_1d(_validate.positive(epsilon_hats, "epsilon_hats"))
    if targets.ndim != 1:
        raise ValueError(f"epsilon_hats must be a 1-D sequence; got shape {targets.shape}")
    targets = [_target(e, delta)[0] for e in targets]
    dlt = _target(targets[0] if targets else 1.0, delta)[1]
    m = _validate.integer(n_releases, "n_releases")
    grid_size = _validate.integer(grid_size, "grid_size", 8)
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


def dirichlet_order(epsilon_hat, delta, n_releases, *, reference=None, rule="optimal") -> OrderChoice:
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
    eps, dlt = _target(epsilon_hat, delta)
    m = _validate.integer(n_releases, "n_releases")
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


# ----------------------------------------------------------------------------- Gaussian


def analytic_gaussian_delta(sigma, epsilon_hat, sensitivity):
    """Exact :math:`\\delta(\\hat\\varepsilon)` of the Gaussian mechanism (Balle and Wang 2018, Thm 8).

    Adding :math:`N(0, \\sigma^2 I)` to a query of :math:`\\ell_2`-sensitivity
    :math:`\\Delta` is :math:`(\\hat\\varepsilon, \\delta)`-DP exactly for

    .. math::
        \\delta = \\Phi\\Big(\\frac{\\Delta}{2\\sigma} - \\frac{\\hat\\varepsilon\\sigma}{\\Delta}\\Big)
        - e^{\\hat\\varepsilon}\\,\\Phi\\Big(-\\frac{\\Delta}{2\\sigma}
        - \\frac{\\hat\\varepsilon\\sigma}{\\Delta}\\Big)

    and for no smaller :math:`\\delta` (the privacy loss of a Gaussian is itself
    Gaussian). Evaluated as :math:`\\Phi(a)\\,(1 - e^{\\hat\\varepsilon + \\log\\Phi(b)
    - \\log\\Phi(a)})` with ``scipy.special.log_ndtr``, accurate far into the tails.

    Parameters
    ----------
    sigma, epsilon_hat, sensitivity : array_like
        Positive; broadcast together.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(float(analytic_gaussian_delta(1.0, 0.5, 1.0)), 6)
    0.238422
    """
    sigma, eps, sens = _validate.broadcast(
        sigma=_validate.positive(sigma, "sigma"),
        epsilon_hat=_validate.positive(epsilon_hat, "epsilon_hat"),
        sensitivity=_validate.positive(sensitivity, "sensitivity"),
    )
    return _gaussian_delta(sigma, eps, sens)


def _gaussian_delta(sigma, eps, sens):
    """:func:`analytic_gaussian_delta` of checked, broadcast arrays (the root search's inner loop)."""
    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    log_a = special.log_ndtr(a)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.exp(log_a) * -np.expm1(eps + special.log_ndtr(b) - log_a)
    # Phi(a) underflows to 0 far in the tail (-inf - -inf is NaN): delta is 0 there;
    # rounding can leave a hair below 0 where delta is far below Phi(a).
    out = np.where(np.isneginf(log_a), 0.0, out)
    return np.maximum(out, 0.0)[()]


def analytic_gaussian_sigma(epsilon_hat, delta, sensitivity):
    """The smallest :math:`\\sigma` with :func:`analytic_gaussian_delta` :math:`\\le \\delta`.

    :math:`\\delta(\\sigma)` decreases strictly from 1 (as :math:`\\sigma \\to 0`) to
    0, so the root is unique. It is bracketed by doubling and halving from
    :math:`\\sigma = \\Delta`, then found in :math:`\\log\\sigma` by Brent's method
    to a relative :math:`10^{-12}` in :math:`\\sigma`. Valid for every
    :math:`\\hat\\varepsilon > 0`.

    Parameters
    ----------
    epsilon_hat : float
        :math:`\\hat\\varepsilon \\in (0, \\infty)`.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    sensitivity : float
        :math:`\\ell_2`-sensitivity :math:`\\Delta > 0` of the whole query
        (:math:`\\sqrt{2m}` for :math:`m` histogram releases).

    Returns
    -------
    float

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5, 2.0)
    >>> round(float(analytic_gaussian_delta(s, 1.0, 2.0)) / 1e-5, 9)
    1.0
    """
    eps, dlt = _target(epsilon_hat, delta)
    sens = _validate.scalar(_validate.positive(sensitivity, "sensitivity"), "sensitivity")
    if eps > GAUSSIAN_EPSILON_HAT_MAX:
        raise ValueError(f"epsilon_hat must be in (0, {GAUSSIAN_EPSILON_HAT_MAX:g}] for the analytic Gaussian "
                         f"calibration (beyond it double precision cannot resolve delta); got {eps:g}")

    def gap(t):  # delta underflows to 0 only far above the root: log(0) = -inf is fine
        with np.errstate(divide="ignore"):
            sigma = np.exp(t)
            if not 0 < sigma < np.inf:  # outside double precision: the checked path raises
                analytic_gaussian_delta(sigma, eps, sens)
            return np.log(_gaussian_delta(sigma, eps, sens)) - np.log(dlt)

    lo = hi = np.log(sens)
    for _ in range(_MAX_BRACKET_STEPS):  # delta -> 1 as sigma -> 0
        if gap(lo) > 0:
            break
        lo -= 1.0
    else:
        raise ValueError(f"no sigma above {np.exp(lo):.3g} reaches delta = {dlt:g} at epsilon_hat = {eps:g} "
                         f"and sensitivity = {sens:g}; epsilon_hat / sensitivity is beyond double precision")
    for _ in range(_MAX_BRACKET_STEPS):  # delta -> 0 as sigma -> inf
        if gap(hi) <= 0:
            break
        hi += 1.0
    else:
        raise ValueError(f"no sigma below {np.exp(hi):.3g} reaches delta = {dlt:g} at epsilon_hat = {eps:g} "
                         f"and sensitivity = {sens:g}; epsilon_hat / sensitivity is beyond double precision")
    t = _validate.brentq(gap, lo, hi, f"the Gaussian sigma of epsilon_hat = {eps:g}, delta = {dlt:g}",
                         xtol=1e-13, rtol=4 * np.finfo(float).eps)
    sigma = float(np.exp(t))
    if not 0 < sigma < np.inf:
        raise ValueError(f"sigma for epsilon_hat = {eps:g}, delta = {dlt:g}, sensitivity = {sens:g} is "
                         "outside double precision")
    return sigma


def classical_gaussian_sigma(epsilon_hat, delta, sensitivity):
    """The classical :math:`\\sigma = \\sqrt{2\\log(1.25/\\delta)}\\,\\Delta/\\hat\\varepsilon`.

    Dwork and Roth (2014), Theorem A.1, proved for :math:`\\hat\\varepsilon < 1`
    only; for larger :math:`\\hat\\varepsilon` the exact :math:`\\delta` of this
    :math:`\\sigma` (:func:`analytic_gaussian_delta`) exceeds the target. Used
    here only to show that (the author's code used it for every
    :math:`\\hat\\varepsilon`).
    """
    eps, dlt = _target(epsilon_hat, delta)
    sens = _validate.scalar(_validate.positive(sensitivity, "sensitivity"), "sensitivity")
    with np.errstate(over="ignore", under="ignore"):
        sigma = float(np.sqrt(2 * np.log(1.25 / dlt)) * sens / eps)
    if not 0 < sigma < np.inf:
        raise ValueError(f"sigma = sqrt(2 log(1.25/delta)) sensitivity / epsilon_hat is outside double precision "
                         f"for epsilon_hat = {eps:g}, delta = {dlt:g}, sensitivity = {sens:g}")
    return sigma


def rdp_gaussian_sigma(epsilon_hat, delta, sensitivity, *, grid_size=256):
    """:math:`\\sigma` from RDP (Mironov 2017, Cor. 3) and eq. (14) at the best order.

    The Gaussian mechanism is :math:`(\\lambda, \\lambda\\Delta^2/(2\\sigma^2))`-RDP
    at every order; eq. (14) at order :math:`\\lambda` then needs
    :math:`\\sigma^2 = \\lambda\\Delta^2 / (2\\,\\varepsilon(\\lambda))` with
    :math:`\\varepsilon(\\lambda)` = ``dp_to_rdp(epsilon_hat, lam, delta)``. The
    order is chosen to minimise :math:`\\sigma` (grid in
    :math:`\\log(\\lambda - \\lambda_0)`, then two finer grids, :func:`lib.privacy.accounting.search_order`). A valid
    but looser calibration than :func:`analytic_gaussian_sigma`, kept for the
    comparison.
    """
    eps, dlt = _target(epsilon_hat, delta)
    sens = _validate.scalar(_validate.positive(sensitivity, "sensitivity"), "sensitivity")

    def log_var(lam):
        return np.log(lam * sens**2 / 2) - np.log(dp_to_rdp(eps, lam, dlt))

    lam0 = min_order(eps, dlt)
    _, value = search_order(eps, dlt, log_var, lam_max=lam0 + 1e4 / dlt,
                            grid_size=_validate.integer(grid_size, "grid_size", 8))
    return float(np.exp(value / 2))


# ----------------------------------------------------------------------------- Laplace


def laplace_dp_scale(epsilon_hat, n_releases, l1=L1):
    """Laplace scale :math:`b = m\\Delta_1/\\hat\\varepsilon`: pure DP, basic composition.

    Each of the :math:`m` releases is :math:`\\Delta_1/b = \\hat\\varepsilon/m`-DP;
    :math:`m` of them compose to :math:`\\hat\\varepsilon`-DP, hence
    :math:`(\\hat\\varepsilon, \\delta)`-DP for every :math:`\\delta \\ge 0`.

    Examples
    --------
    >>> laplace_dp_scale(1.0, 14)
    28.0
    """
    eps = _validate.scalar(_validate.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    l1 = _validate.scalar(_validate.positive(l1, "l1"), "l1")
    return float(_validate.integer(n_releases, "n_releases") * l1 / eps)


def author_laplace_scale(epsilon_hat, delta, l1=L1):
    """The author's per-release Laplace scale, recorded for comparison only.

    :math:`\\Delta_1/\\hat\\varepsilon\\cdot\\sqrt{\\log(0.5/\\delta)/\\log(1/\\delta)}`
    (``ORIGINAL_CODE_NOTES.md`` §4): a factor just below one on the pure-DP scale
    of ONE release, with :math:`\\delta` entering although the Laplace mechanism
    needs none.
    """
    eps, dlt = _target(epsilon_hat, delta)
    l1 = _validate.scalar(_validate.positive(l1, "l1"), "l1")
    return float(l1 / eps * np.sqrt(np.log(0.5 / dlt) / np.log(1 / dlt)))


# ----------------------------------------------------------------------------- Gohari


def gohari_releases(epsilon_hat, delta, domain_sizes, *, n_total, lam=GOHARI_LAM, cache=None):
    """Gohari et al.'s calibration of every release, by basic composition.

    Each of the :math:`m` releases gets :math:`(\\hat\\varepsilon/m, \\delta/m)`
    (equal shares), so that the model is :math:`(\\hat\\varepsilon, \\delta)`-DP
    by basic composition of approximate DP -- not the average of per-release
    epsilons that the author's code used. One
    :func:`lib.mechanisms.gohari.gohari_calibrate` call per distinct domain size.

    Gohari et al.'s guarantee is for one vector with a known, fixed total
    ``n_total``. The rows of a naive Bayes or Bayesian-network table have
    private totals (class or parent-configuration counts), so a caller with a
    table passes its flattened size ``rows * d`` as the domain size and the
    public number of records as ``n_total``, as
    :meth:`lib.mechanisms.dirichlet.mechanism.GohariMechanism.calibrate_dp` does (its class notes
    give the proof). Passing the row length ``d`` with ``n_total = N``, as the
    author's code did, gives a guarantee that is not proven.

    Parameters
    ----------
    epsilon_hat, delta : float
        Target of the whole model.
    domain_sizes : sequence of int
        :math:`d_i \\ge 2`, the length of the vectors of release :math:`i`.
    n_total : float
        The total passed to Gohari et al.'s formulas.
    lam : float, default :data:`GOHARI_LAM`
        Order in :math:`\\alpha = 1 + 4(\\lambda - 1) r`.
    cache : dict, optional
        Memo of ``gohari_calibrate`` results (or the ``ValueError`` it raised),
        keyed by its arguments; pass one dict to share calibrations across calls.

    Returns
    -------
    list of GohariGuarantee
        One per release.

    Raises
    ------
    ValueError
        When some release cannot reach its share (the message says which
        domain size and why).
    """
    eps, dlt = _target(epsilon_hat, delta)
    sizes = _domain_sizes(domain_sizes)
    n_total = _validate.scalar(_validate.positive(n_total, "n_total"), "n_total")
    lam = _validate.scalar(_validate.order(lam, "lam", strict=True), "lam")
    cache = {} if cache is None else cache
    m = len(sizes)
    out = {}
    for d in sorted(set(sizes)):
        key = (eps / m, dlt / m, lam, n_total, d)
        if key not in cache:
            try:
                cache[key] = gohari_calibrate(eps / m, dlt / m, lam=lam, n_total=n_total, d=d)
            except ValueError as exc:
                cache[key] = exc
        if isinstance(cache[key], ValueError):
            raise ValueError(f"Gohari et al.'s guarantee cannot reach ({eps / m:.4g}, {dlt / m:.3g}) "
                             f"for a release with d = {d}: {cache[key]}") from cache[key]
        out[d] = cache[key]
    return [out[d] for d in sizes]


def gohari_prefill(epsilon_hats, delta, domain_sizes, *, n_total, lam=GOHARI_LAM, cache):
    """Solve the calibrations :func:`gohari_releases` needs at every target together, into ``cache``.

    For each target :math:`\\hat\\varepsilon_i` and each distinct domain size,
    the entry that :func:`gohari_releases` would compute (a
    :class:`lib.mechanisms.gohari.GohariGuarantee` or the ``ValueError`` raised), found by
    one lockstep search (:func:`lib.mechanisms.gohari.batch.gohari_calibrate_many`) with the same
    results; entries already in ``cache`` are kept. :func:`gohari_releases` then
    reads them from the cache.
    """
    targets = np.atleast_1d(_validate.positive(epsilon_hats, "epsilon_hats")).ravel()
    dlt = _target(1.0, delta)[1]
    sizes = _domain_sizes(domain_sizes)
    n_total = _validate.scalar(_validate.positive(n_total, "n_total"), "n_total")
    lam = _validate.scalar(_validate.order(lam, "lam", strict=True), "lam")
    m = len(sizes)
    keys = []
    for e in targets:
        eps = _target(e, dlt)[0]
        for d in sorted(set(sizes)):
            key = (eps / m, dlt / m, lam, n_total, d)
            if key not in cache and key not in keys:
                keys.append(key)
    if keys:
        found = gohari_calibrate_many([k[0] for k in keys], dlt / m, lam=lam, n_total=n_total,
                                      d=[k[4] for k in keys])
        for key, res in zip(keys, found):
            cache[key] = res
    return cache
