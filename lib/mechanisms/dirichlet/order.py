"""The Dirichlet mechanism's order :math:`\\lambda` for an :math:`(\\hat\\varepsilon, \\delta)` target.

:func:`optimal_order` chooses the order by the expected KL loss
(:func:`~lib.mechanisms.dirichlet.moments.expected_kl_loss`) with the generic
search of :mod:`lib.privacy.accounting`; :func:`fixed_order` is the author's rule
:math:`\\lambda = 1 + 1/\\varepsilon`. Both return an :class:`OrderChoice`: the
order and the calibration of Algorithm 1 it leads to.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.moments import expected_kl_loss
from lib.privacy.accounting import MAX_BRACKET_STEPS, validated_target, blame_target, dp_to_rdp, search_order


class OrderChoice(NamedTuple):
    """An order :math:`\\lambda` and the Algorithm 1 calibration it leads to.

    Attributes
    ----------
    lam : float
        Renyi order :math:`\\lambda`.
    r, alpha : float
        Lines 1-2 of Algorithm 1 at order ``lam`` and RDP level ``epsilon``.
    epsilon : float
        RDP level :math:`\\varepsilon` of each release; ``n_releases`` releases
        compose to :math:`(\\lambda, n\\varepsilon)`-RDP, which eq. (14) turns
        into the target :math:`(\\hat\\varepsilon, \\delta)`-DP.
    expected_kl : float
        :func:`expected_kl_loss` of the reference histogram at ``(r, alpha)``;
        NaN when :func:`fixed_order` was given no reference histogram.
    """

    lam: float
    r: float
    alpha: float
    epsilon: float
    expected_kl: float


def _reference(counts):
    """A reference histogram: shape (d,), non-negative, positive total."""
    counts = validation.vectors(counts, "counts", positive_entries=False)
    if counts.ndim != 1 or counts.sum() <= 0:
        raise ValueError(f"counts must be one histogram of shape (d,) with a positive total; got {counts.shape}")
    return counts


def _choice(eps_per_release, lam, l2_sq, linf, counts):
    r, alpha = calibrate(eps_per_release, lam, l2_sq, linf)
    kl = float(expected_kl_loss(counts, r, alpha)) if counts is not None else float("nan")
    return OrderChoice(float(lam), float(r), float(alpha), float(eps_per_release), kl)


def fixed_order(epsilon_hat: float, delta: float, *, n_releases: int = 1, l2_sq: float = 2.0, linf: float = 1.0,
                counts: ArrayLike | None = None) -> OrderChoice:
    """The author's rule :math:`\\lambda = 1 + 1/\\varepsilon` for an :math:`(\\hat\\varepsilon, \\delta)` target.

    The original code does not choose the order by optimisation: it solves
    eq. (14) for the RDP level :math:`\\varepsilon` under the constraint
    :math:`\\lambda = 1 + 1/\\varepsilon`, that is
    ``dp_to_rdp(epsilon_hat, 1 + 1/eps, delta, n_releases) = eps``, and then runs
    Algorithm 1 at that pair. On :math:`\\varepsilon > 1/(1/\\delta - 1)` the left
    side decreases in :math:`\\varepsilon` (the order falls below
    :math:`1/\\delta`) while the right side increases, and at
    :math:`\\varepsilon \\le \\min(\\delta, \\hat\\varepsilon/n)/2` the left side
    exceeds the right. So the root is unique whenever
    :math:`\\hat\\varepsilon / n > \\delta/(1-\\delta)` (every practical target);
    it is found by Brent's method in :math:`\\log\\varepsilon`.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target, :math:`\\hat\\varepsilon > 0`, :math:`\\delta \\in (0, 1)`.
    n_releases : int, default 1
        Releases composed at the same order (1 is the author's setting).
    l2_sq, linf : float
        Sensitivities, as in :func:`lib.calibrate`.
    counts : array_like, shape (d,), optional
        A reference histogram; only used to report ``expected_kl``.

    Returns
    -------
    OrderChoice
        With ``expected_kl`` NaN when ``counts`` is None (the rule involves no
        histogram).
    """
    eps_hat, delta, n = validated_target(epsilon_hat, delta, n_releases)
    if counts is not None:
        counts = _reference(counts)

    log_delta = np.log(delta)

    def gap(log_eps):
        eps = np.exp(log_eps)
        if log_eps < 20:
            lam = 1 + 1 / eps
            return eps_hat - np.log1p(-1 / lam) + np.log(delta * lam) / (lam - 1) - n * eps
        # lam - 1 = 1/eps is not representable as lam - 1: the same expression in log eps
        return eps_hat + log_eps + np.log1p(1 / eps) + (log_delta + np.log1p(1 / eps)) * eps - n * eps

    # At eps <= min(delta, eps_hat / n) / 2 the order is at least 1/delta, where
    # dp_to_rdp exceeds eps_hat / n, so the gap is positive.
    lo = np.log(0.5 * min(delta, eps_hat / n))
    hi = max(lo, 0.0) + 1.0
    for _ in range(MAX_BRACKET_STEPS):
        if gap(hi) < 0:  # the gap tends to -inf as eps grows
            break
        hi += 1.0
    else:  # pragma: no cover - the gap is below 0 by log eps = 710
        raise ValueError(f"the fixed rule found no RDP level for epsilon_hat = {eps_hat:g}, delta = {delta:g}")
    eps = float(np.exp(validation.brentq(gap, lo, hi, f"the fixed-rule RDP level of epsilon_hat = {eps_hat:g}, "
                                        f"delta = {delta:g}", xtol=1e-14, rtol=4 * np.finfo(float).eps)))
    if not 1 + 1 / eps > 1:
        raise ValueError(
            f"epsilon_hat / n_releases = {eps_hat / n:g} is too large for the fixed rule: its order "
            f"1 + 1/epsilon (epsilon = {eps:.3g}) rounds to 1 in double precision; the rule works for "
            "epsilon_hat / n_releases up to about 1e15")
    with blame_target(eps_hat, delta):
        return _choice(eps, 1 + 1 / eps, l2_sq, linf, counts)


def optimal_order(epsilon_hat: float, delta: float, counts: ArrayLike, *, n_releases: int = 1, l2_sq: float = 2.0,
                  linf: float = 1.0, lam_max: float | None = None, grid_size: int = 128) -> OrderChoice:
    """The order that minimises the expected KL loss for an :math:`(\\hat\\varepsilon, \\delta)` target.

    Every order :math:`\\lambda > \\lambda_0` (:func:`min_order`) meets the target
    with the per-release RDP level :math:`\\varepsilon(\\lambda)` of
    :func:`dp_to_rdp`; Algorithm 1 then fixes :math:`r(\\lambda)` and
    :math:`\\alpha(\\lambda)`. The scale :math:`r` alone is not a measure of noise:
    it keeps growing with the order towards :math:`6\\hat\\varepsilon\\Delta_\\infty /
    (n\\Delta_2^2)` while the pseudo-count :math:`\\alpha \\ge 4(\\lambda-1) r
    \\Delta_\\infty` grows without bound and pulls the output to uniform. The
    order is therefore chosen to minimise :func:`expected_kl_loss` of a
    reference histogram.

    The search over orders is :func:`search_order`.

    .. warning:: A choice that depends on the private histogram is itself a
       release. Pass a public or synthetic reference histogram of realistic shape
       and size, not the data being privatised. Do not use a uniform reference:
       for it the pull towards uniform costs nothing and the search runs to
       ``lam_max``.

    Parameters
    ----------
    epsilon_hat, delta : float
        The target :math:`(\\hat\\varepsilon, \\delta)` for all releases together.
    counts : array_like, shape (d,)
        Reference histogram (non-negative, positive total) for the loss.
    n_releases : int, default 1
        Number of releases composed at the chosen order; each gets RDP level
        ``dp_to_rdp(epsilon_hat, lam, delta) / n_releases``.
    l2_sq, linf : float
        Sensitivities, as in :func:`lib.calibrate`.
    lam_max : float, optional
        Largest order searched; default :math:`1/\\delta`, beyond which the
        per-release budget decreases while :math:`\\alpha` keeps growing.
    grid_size : int, default 128
        Points of the safeguard grid (at least 8).

    Returns
    -------
    OrderChoice

    Raises
    ------
    ValueError
        For invalid input, or when no order up to ``lam_max`` meets the target.
    """
    eps_hat, delta, n = validated_target(epsilon_hat, delta, n_releases)
    counts = _reference(counts)
    grid_size = validation.integer(grid_size, "grid_size", 8)
    lam_max = 1 / delta if lam_max is None else validation.scalar(validation.order(lam_max, "lam_max", strict=True), "lam_max")
    l2_sq = validation.scalar(validation.positive(l2_sq, "l2_sq"), "l2_sq")
    linf = validation.scalar(validation.positive(linf, "linf"), "linf")
    def loss(lam):
        r, alpha = calibrate(dp_to_rdp(eps_hat, lam, delta, n_releases=n), lam, l2_sq, linf)
        return expected_kl_loss(counts, r, alpha)

    with blame_target(eps_hat, delta):
        lam, _ = search_order(eps_hat, delta, loss, lam_max=lam_max, grid_size=grid_size)
        return _choice(dp_to_rdp(eps_hat, lam, delta, n_releases=n), lam, l2_sq, linf, counts)
