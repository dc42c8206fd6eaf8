"""The approximate-DP measurements of Appendix C (chapter 9): calibrations checked and compared.

* :func:`gaussian_delta_multiprecision`: Balle and Wang's exact :math:`\\delta` of a
  Gaussian mechanism, in 50-digit arithmetic (the reference for
  :func:`lib.mechanisms.noise.calibration.analytic_gaussian_delta`);
* :func:`classical_gaussian_breaks`: the :math:`\\hat\\varepsilon` above which the classical
  :math:`\\sigma` of Dwork and Roth's Theorem A.1 stops meeting its :math:`\\delta`;
* :func:`order_costs`: the expected KL loss of the Dirichlet mechanism at its public order,
  and at the author's fixed order, against the order chosen with the private tables;
* :func:`flat_price`: Gohari et al.'s pseudo-count with each table flattened against the one
  for its row length (what the proven guarantee costs);
* :func:`noise_scales`: the standard deviations of the Gaussian and Laplace noise for a model
  of ``m`` releases, and the budget at which they are equal.
"""

from __future__ import annotations

from typing import Sequence

import mpmath
import numpy as np
from scipy import optimize

from lib import validation
from lib.mechanisms.dirichlet.approximate_dp import dirichlet_order, model_order_many, total_expected_kl
from lib.mechanisms.gohari import gohari_calibrate
from lib.mechanisms.noise.calibration import (analytic_gaussian_delta, analytic_gaussian_sigma,
                                              classical_gaussian_sigma, laplace_dp_scale)
from lib.mechanisms.protocol import ReleaseSpec, get
from lib.privacy.guarantees import ApproximateDP


def gaussian_delta_multiprecision(sigma: float, epsilon_hat: float, sensitivity: float, *, dps: int = 50) -> float:
    """The exact :math:`\\delta` of a Gaussian mechanism at :math:`\\hat\\varepsilon`, in ``dps``-digit arithmetic.

    Balle and Wang (2018), Theorem 8: :math:`\\delta = \\Phi(\\Delta/(2\\sigma) - \\hat\\varepsilon\\sigma/\\Delta)
    - e^{\\hat\\varepsilon}\\,\\Phi(-\\Delta/(2\\sigma) - \\hat\\varepsilon\\sigma/\\Delta)`.

    Parameters
    ----------
    sigma, epsilon_hat, sensitivity : float
        > 0 each.
    dps : int
        Decimal digits of the mpmath evaluation, >= 15.
    """
    s, eps, sens = (validation.scalar(validation.positive(v, n), n)
                    for v, n in ((sigma, "sigma"), (epsilon_hat, "epsilon_hat"), (sensitivity, "sensitivity")))
    dps = validation.integer(dps, "dps", 15)
    with mpmath.workdps(dps):
        s, eps, sens = (mpmath.mpf(v) for v in (s, eps, sens))
        return float(mpmath.ncdf(sens / (2 * s) - eps * s / sens) - mpmath.exp(eps)
                     * mpmath.ncdf(-sens / (2 * s) - eps * s / sens))


def classical_gaussian_breaks(delta: float, *, upper: float = 50.0) -> float:
    """The :math:`\\hat\\varepsilon` in ``(1, upper)`` above which the classical :math:`\\sigma` misses ``delta``.

    :math:`\\sigma = \\sqrt{2\\log(1.25/\\delta)}\\,\\Delta/\\hat\\varepsilon` (Dwork and Roth 2014,
    Theorem A.1, proved for :math:`\\hat\\varepsilon < 1`) meets :math:`\\delta` exactly where
    the analytic :math:`\\delta(\\sigma)` equals it; :math:`\\delta(\\sigma)` depends on
    :math:`\\sigma` only through :math:`\\Delta/\\sigma`, so the answer holds for every sensitivity.
    """
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    upper = validation.scalar(validation.in_range(upper, "upper", 1.0, open_low=True), "upper")

    return float(np.exp(optimize.brentq(
        lambda log_eps: np.log(analytic_gaussian_delta(classical_gaussian_sigma(np.exp(log_eps), delta, 1.0),
                                                       np.exp(log_eps), 1.0) / delta), 0.0, np.log(upper))))


def order_costs(name: str, tables: Sequence[np.ndarray], spec: ReleaseSpec, epsilon_hats: Sequence[float], delta: float,
                *, cache: dict | None = None) -> list:
    """The cost of choosing the Dirichlet mechanism's order without the private tables, at each budget.

    At each :math:`\\hat\\varepsilon` of ``epsilon_hats``: the order of the
    Dirichlet calibration (chosen on public reference tables of ``spec``'s
    shapes), the author's fixed rule :math:`\\lambda = 1 + 1/\\varepsilon`
    (:func:`lib.mechanisms.dirichlet.approximate_dp.dirichlet_order`, ``rule="fixed"``)
    and the oracle order chosen with ``tables`` themselves
    (:func:`~lib.mechanisms.dirichlet.approximate_dp.model_order_many`); the cost of an
    order is the private tables' expected KL loss at it over the oracle's.

    Parameters
    ----------
    name : str
        The dataset (a column of the rows).
    tables : list of ndarray
        The model's private count tables, one per release.
    spec : lib.mechanisms.protocol.ReleaseSpec
        Their public shapes.
    epsilon_hats : array_like
        The budgets of the whole model.
    delta : float
    cache : dict, optional
        Shared with the calibrations of the grid, which then reuse the public choice.

    Returns
    -------
    list of dict
        One row per budget: ``dataset, eps_hat, lam public, lam oracle, lam fixed, cost public, cost fixed``.
    """
    calibrated = get("dirichlet").calibrate_many([ApproximateDP(eps, delta) for eps in epsilon_hats], spec,
                                                 cache=cache)
    oracles = model_order_many(epsilon_hats, delta, tables, n_releases=len(tables))
    out = []
    for eps, cal, oracle in zip(epsilon_hats, calibrated, oracles):
        public = cal.releases[0]
        fixed = dirichlet_order(eps, delta, len(tables), rule="fixed")
        cost = [total_expected_kl(tables, c.r, c.alpha) / oracle.expected_kl for c in (public, fixed)]
        out.append({"dataset": name, "eps_hat": eps, "lam public": public.lam, "lam oracle": oracle.lam,
                    "lam fixed": fixed.lam, "cost public": cost[0], "cost fixed": cost[1]})
    return out


def flat_price(spec: ReleaseSpec, delta: float, epsilon_hat: float = 1.0, *, lam: float = 5.0) -> np.ndarray:
    """Per release of ``spec``: Gohari et al.'s :math:`r` for the flattened table over :math:`r` for its row length.

    Each release gets :math:`(\\hat\\varepsilon/m, \\delta/m)`; the book applies Gohari
    et al.'s guarantee to the whole table (``rows * d`` cells, the rows' totals
    private), the author's reading to one row (``d`` cells). A ratio below one is
    the price of the proven guarantee; a one-row table has ratio 1.
    """
    m_rel = spec.n_releases

    def r(d):
        return gohari_calibrate(epsilon_hat / m_rel, delta / m_rel, lam=lam, n_total=spec.n_total, d=d).r

    r_flat = {rows * d: r(rows * d) for rows, d in spec.shapes}
    r_row = {d: r(d) for _, d in spec.shapes}
    return np.array([r_flat[rows * d] / r_row[d] for rows, d in spec.shapes])


def noise_scales(m: int, delta: float, epsilon_hats: Sequence[float] = (0.1, 1.0, 10.0)) -> dict:
    """The noise of the two baselines for a model of ``m`` count releases, and where they are equal.

    The analytic Gaussian :math:`\\sigma` at the joint :math:`\\ell_2`-sensitivity
    :math:`\\sqrt{2m}`, and the standard deviation :math:`\\sqrt2\\,b` of pure-DP
    Laplace noise of scale :math:`b = 2m/\\hat\\varepsilon`, at each budget; their
    ratio at :math:`\\hat\\varepsilon = 1` (if listed); and the budget in
    :math:`[0.1, 10^4]` at which the two are equal.

    Returns
    -------
    dict
        ``m``, ``sigma (e)`` and ``Laplace sd (e)`` for each budget ``e``,
        ``Laplace sd / sigma (1)`` and ``equal at eps_hat``.
    """
    m = validation.integer(m, "m")
    sd_g = {e: analytic_gaussian_sigma(e, delta, np.sqrt(2 * m)) for e in epsilon_hats}
    sd_l = {e: np.sqrt(2) * laplace_dp_scale(e, m) for e in sd_g}
    cross = np.exp(optimize.brentq(
        lambda t: np.log(np.sqrt(2) * laplace_dp_scale(np.exp(t), m)
                         / analytic_gaussian_sigma(np.exp(t), delta, np.sqrt(2 * m))), np.log(0.1), np.log(1e4)))
    row = {"m": m}
    for e in sd_g:
        row[f"sigma ({e:g})"] = sd_g[e]
        row[f"Laplace sd ({e:g})"] = sd_l[e]
    if 1.0 in sd_g:
        row["Laplace sd / sigma (1)"] = sd_l[1.0] / sd_g[1.0]
    row["equal at eps_hat"] = cross
    return row
