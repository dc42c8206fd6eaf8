"""Geumlek, Song and Chaudhuri (NeurIPS 2017) as the paper states it, for chapter 10.

:mod:`lib.mechanisms.posterior_sampling` implements the book's mechanisms (the exact worst case over
reachable data sets, the calibrations, the samplers). This module restates the paper's own
objects in its own parameterisation, independently of that module, so that the chapter can
check one against the other and judge the paper's claims:

* the Beta-Bernoulli system in natural parameters :math:`\\eta = (\\alpha, \\alpha + \\beta)`
  (Section 3), its log-partition function :math:`C(\\eta)` and the closed-form Rényi divergence
  of eq. (5) (:func:`log_partition`, :func:`renyi_natural`);
* the critical order of Theorem 12 from its definition (:func:`theorem12_critical_order`);
* the corners of ``pset`` (Definition 9) and the relaxed check of Theorem 15 / Corollary 2,
  with the neighbour :math:`\\eta_Q` *not* required to lie in ``pset``
  (:func:`pset_corners`, :func:`corollary2_relaxation`), against the supremum over pairs that
  do lie in ``pset`` (:func:`pset_supremum`);
* how far Corollary 2's check exceeds that supremum, for one setting and over random priors,
  data sizes, scales and orders (:func:`corollary2_excess`, :func:`corollary2_excess_sweep`);
* the two readings of the held-out log-likelihood of Figure 2 (c, d)
  (:func:`heldout_neg_loglik`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special

from lib import validation

__all__ = ["log_partition", "renyi_natural", "theorem12_critical_order", "pset_corners",
           "corollary2_relaxation", "pset_supremum", "corollary2_excess", "corollary2_excess_sweep",
           "heldout_neg_loglik"]

#: Largest data size :func:`pset_supremum` enumerates (one pair per count, so linear in n).
MAX_PSET_N = 10**6


def _eta(eta, name):
    arr = validation.as_float(eta, name)
    if arr.shape[-1:] != (2,):
        raise ValueError(f"{name} must have last axis of length 2 (eta = (alpha, alpha + beta)); "
                         f"got shape {arr.shape}")
    return arr


def _normalizable(eta):
    """Definition 8 for the Beta family: :math:`\\eta^{(1)} > 0` and :math:`\\eta^{(2)} - \\eta^{(1)} > 0`."""
    return (eta[..., 0] > 0) & (eta[..., 1] - eta[..., 0] > 0)


def log_partition(eta: ArrayLike) -> np.ndarray | float:
    """:math:`C(\\eta)` of the Beta prior in natural parameters (Section 3, eq. (4)).

    The paper prints :math:`C(\\eta) = \\Gamma(\\eta^{(1)}) + \\Gamma(\\eta^{(2)} - \\eta^{(1)})
    - \\Gamma(\\eta^{(2)})`; the log-partition function is the same expression with
    :math:`\\log\\Gamma` (finding ``geumlek-c-eta-logarithms``), i.e.
    :math:`\\log B(\\alpha, \\beta)` with :math:`\\eta = (\\alpha, \\alpha + \\beta)`.

    Parameters
    ----------
    eta : array_like, shape (..., 2)

    Returns
    -------
    ndarray
        :math:`C(\\eta)`, ``inf`` where :math:`\\eta` is not normalizable (Definition 8).
    """
    eta = _eta(eta, "eta")
    a, b = eta[..., 0], eta[..., 1] - eta[..., 0]
    ok = _normalizable(eta)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = special.gammaln(np.where(ok, a, 1.0)) + special.gammaln(np.where(ok, b, 1.0)) \
            - special.gammaln(np.where(ok, eta[..., 1], 2.0))
    return np.where(ok, out, np.inf)[()]


def renyi_natural(eta_p: ArrayLike, eta_q: ArrayLike, lam: ArrayLike) -> np.ndarray | float:
    """Eq. (5): :math:`D_\\lambda(p(\\theta|\\eta_P) \\| p(\\theta|\\eta_Q))` from :math:`C` alone.

    :math:`(C(\\lambda\\eta_P + (1 - \\lambda)\\eta_Q) - \\lambda C(\\eta_P))/(\\lambda - 1) + C(\\eta_Q)`,
    infinite where the mixture :math:`\\lambda\\eta_P + (1-\\lambda)\\eta_Q` is not normalizable.
    Written from the paper's formula, independently of :mod:`lib.mechanisms.dirichlet.divergence`.

    Parameters
    ----------
    eta_p, eta_q : array_like, shape (..., 2)
        Normalizable natural parameters; broadcast.
    lam : float or array_like
        Orders in :math:`(1, \\infty)`; broadcast against the leading axes.
    """
    p, q = _eta(eta_p, "eta_p"), _eta(eta_q, "eta_q")
    for arr, name in ((p, "eta_p"), (q, "eta_q")):
        if not np.all(_normalizable(arr)):
            raise ValueError(f"{name} must be normalizable (0 < eta[0] < eta[1])")
    lam = validation.order(lam, "lam", strict=True)
    lam_ = np.asarray(lam)[..., None]
    mix = lam_ * p + (1 - lam_) * q
    return ((log_partition(mix) - lam * log_partition(p)) / (lam - 1) + log_partition(q))[()]


def theorem12_critical_order(eta0: ArrayLike, *, bracket: float = 1e6) -> float:
    """Theorem 12's :math:`\\lambda^*` for the Beta-Bernoulli system, from its definition.

    ":math:`\\lambda^*` is the supremum over all :math:`\\lambda` such that all :math:`\\eta` in
    the set :math:`\\eta_0 + (\\lambda - 1)\\mathrm{Diff}` are normalizable." With
    :math:`S(x) = x \\in \\{0, 1\\}`, Diff (Definition 10) is the segment between
    :math:`(\\pm 1, 0)`; its image is a segment, normalizable iff both ends are (the normalizable
    set is convex). The supremum is found by bisection on that predicate, without the closed
    form :math:`1 + \\min(\\alpha_0, \\beta_0)` of Corollary 1 (which the chapter checks against it).

    Parameters
    ----------
    eta0 : array_like, shape (2,)
        The prior :math:`(\\alpha_0, \\alpha_0 + \\beta_0)`, normalizable.
    bracket : float
        Upper end of the search for :math:`\\lambda^* - 1`.

    Returns
    -------
    float
        :math:`\\lambda^*`, to the bisection's resolution (adjacent floats).
    """
    eta0 = _eta(eta0, "eta0")
    if eta0.shape != (2,) or not _normalizable(eta0):
        raise ValueError("eta0 must be one normalizable pair (0 < eta0[0] < eta0[1])")
    ends = np.array([[1.0, 0.0], [-1.0, 0.0]])

    def ok(t):
        return bool(np.all(_normalizable(eta0 + t * ends)))

    lo, hi = 0.0, float(bracket)
    if ok(hi):
        raise ValueError(f"eta0 + t Diff is normalizable up to t = bracket = {bracket:g}; raise bracket")
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return 1.0 + lo
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)


def pset_corners(eta0: ArrayLike, n: float) -> np.ndarray:
    """Definition 9 for the Beta-Bernoulli system: the corners :math:`\\eta_0 + n(S(x), 1)`, :math:`x \\in \\{0, 1\\}`.

    ``pset(eta0, n)`` is their convex hull. Corollary 2 is stated for ``pset(eta0, n)``;
    Algorithm 2 needs ``pset(eta0, r n)`` (pass ``n = r * n``), Algorithm 3 ``pset(eta0 / m, n)``.

    Parameters
    ----------
    eta0 : array_like, shape (2,)
    n : float
        The mass of the data (non-negative; need not be an integer).

    Returns
    -------
    ndarray, shape (2, 2)
        Rows :math:`\\eta_0 + (0, n)` (every record 0) and :math:`\\eta_0 + (n, n)` (every record 1).
    """
    eta0 = _eta(eta0, "eta0")
    n = validation.scalar(validation.nonnegative(n, "n"), "n")
    return eta0 + np.array([[0.0, n], [n, n]])


def corollary2_relaxation(eta0: ArrayLike, n: float, step: float, lam: ArrayLike) -> np.ndarray | float:
    """Corollary 2's check as printed: the maximum over :math:`\\eta_P` at the corners of
    ``pset(eta0, n)`` and :math:`\\eta_Q = \\eta_P \\pm (\\mathrm{step}, 0)`.

    Theorem 15 makes :math:`f_\\lambda(\\eta_P) = \\sup e(\\eta_P, \\eta_Q, \\lambda)` over *all*
    r-neighbours :math:`\\eta_Q` convex, so its maximum over ``pset`` sits at a corner; that sup
    does not ask :math:`\\eta_Q \\in` ``pset``. At the corner :math:`\\eta_0 + (0, n)`, the neighbour
    :math:`\\eta_P - (\\mathrm{step}, 0)` has fewer successes than no data set has. The value is
    therefore an upper bound on :func:`pset_supremum`; Corollary 2 calls the two "equivalent".
    At most 4 pairs ("at most 4 pairs of distributions", Section 3.1).

    Parameters
    ----------
    eta0 : array_like, shape (2,)
        The prior, or :math:`\\eta_0/m` for Algorithm 3.
    n : float
        Mass of the data: :math:`rn` for Algorithm 2, :math:`n` for Algorithms 1 and 3.
    step : float
        Size of a neighbour: :math:`r` for Algorithm 2 (r-neighbouring), 1 otherwise.
    lam : float or array_like
        Orders in :math:`(1, \\infty)`.

    Returns
    -------
    ndarray
        The maximum per order; ``inf`` where a neighbour or a mixture is not normalizable.
    """
    step = validation.scalar(validation.positive(step, "step"), "step")
    lam = validation.order(lam, "lam", strict=True)
    best = np.zeros(np.shape(lam))
    for corner in pset_corners(eta0, n):
        for sign in (1.0, -1.0):
            q = corner + sign * np.array([step, 0.0])
            if not _normalizable(q):
                return np.full(np.shape(lam), np.inf)[()]
            best = np.maximum(best, renyi_natural(corner, q, lam))
    return best[()]


def pset_supremum(eta0: ArrayLike, n: int, mass: float, lam: float) -> float:
    """The supremum of Algorithms 1-3's divergence over neighbouring pairs that both lie in ``pset``.

    For an integer data size ``n`` and a mass ``mass`` per record (:math:`r` for Algorithm 2,
    1 otherwise), the reachable parameters are :math:`\\eta_0 + \\mathrm{mass}\\,(k, n)`,
    :math:`k = 0..n` successes; a neighbour changes one record, :math:`k \\to k \\pm 1`. Every pair,
    both directions, by eq. (5): a brute force independent of :mod:`lib.mechanisms.posterior_sampling`.
    (On the convex hull the maximum is the same: for fixed :math:`\\eta_P` the divergence is
    convex in :math:`\\eta_Q`, Theorem 15, and the segment's ends are these pairs.)

    Parameters
    ----------
    eta0 : array_like, shape (2,)
    n : int
        Records, at most :data:`MAX_PSET_N`.
    mass : float
        Weight of one record (positive).
    lam : float
        Order in :math:`(1, \\infty)`.
    """
    eta0 = _eta(eta0, "eta0")
    n = validation.integer(n, "n", 1, MAX_PSET_N)
    mass = validation.scalar(validation.positive(mass, "mass"), "mass")
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    k = np.arange(n)  # pairs (k, k + 1)
    lo = eta0 + mass * np.stack([k, np.full(n, n)], axis=1)
    hi = lo + np.array([mass, 0.0])
    with np.errstate(invalid="ignore"):
        mixes = [lam * a + (1 - lam) * b for a, b in ((lo, hi), (hi, lo))]
    if not all(np.all(_normalizable(m)) for m in mixes):
        return np.inf
    return float(max(renyi_natural(lo, hi, lam).max(), renyi_natural(hi, lo, lam).max()))


#: Relative tolerance under which Corollary 2's check and the supremum count as equal (the same
#: pair attains both). Eq. (5) subtracts log-partition values of size up to about
#: :math:`n \\log n` to leave divergences of order :math:`10^{-3}` to 1, so evaluating it twice at
#: the same pair by different additions differs by up to about :math:`10^{-11}` relative; a
#: genuine excess below order 2 is many orders of magnitude larger.
EQUAL_RTOL = 1e-9


def _kind_arguments(eta0, n, scale, kind):
    """(prior, data mass, neighbour step, mass per record) of Algorithm 2 or 3 in eq. (5)'s terms."""
    if kind == "diffused":          # Algorithm 2: the data weighted by r
        return eta0, scale * n, scale, scale
    if kind == "concentrated":      # Algorithm 3: the prior divided by m
        return eta0 / scale, n, 1.0, 1.0
    raise ValueError(f"kind must be 'diffused' or 'concentrated'; got {kind!r}")


def corollary2_excess(eta0: ArrayLike, n: int, scale: float, lam: float, *, kind: str) -> dict:
    """How far Corollary 2's four-pair check exceeds the supremum over reachable pairs.

    Algorithm 2 (``kind="diffused"``, ``scale`` = :math:`r`) checks
    ``corollary2_relaxation(eta0, r n, r, lam)`` against ``pset_supremum(eta0, n, r, lam)``;
    Algorithm 3 (``kind="concentrated"``, ``scale`` = :math:`m`) checks
    ``corollary2_relaxation(eta0 / m, n, 1, lam)`` against ``pset_supremum(eta0 / m, n, 1, lam)``.

    Parameters
    ----------
    eta0 : array_like, shape (2,)
        The prior :math:`(\\alpha_0, \\alpha_0 + \\beta_0)`, normalizable.
    n : int
        Records, at most :data:`MAX_PSET_N`.
    scale : float
        :math:`r` or :math:`m`, positive.
    lam : float
        Order in :math:`(1, \\infty)`, below the critical order :math:`1 + \\min(\\alpha_0, \\beta_0)/s`
        of Corollary 1 (where the supremum is finite).
    kind : {"diffused", "concentrated"}

    Returns
    -------
    dict
        ``relaxed`` (Corollary 2's check), ``exact`` (the supremum) and ``excess`` =
        ``relaxed / exact - 1``: 0 where the two agree to :data:`EQUAL_RTOL`, ``inf`` where the
        check is infinite (a neighbour outside ``pset`` is not normalizable) and the supremum
        finite.
    """
    eta0 = _eta(eta0, "eta0")
    if eta0.shape != (2,) or not _normalizable(eta0):
        raise ValueError(f"eta0 must be one normalizable prior (0 < eta0[0] < eta0[1]); got {eta0}")
    scale = validation.scalar(validation.positive(scale, "scale"), "scale")
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    critical = 1 + min(eta0[0], eta0[1] - eta0[0]) / scale
    if lam >= critical:
        raise ValueError(f"lam must lie below the critical order 1 + min(alpha0, beta0) / scale "
                         f"= {critical:g}; got {lam:g}")
    prior, data_mass, step, mass = _kind_arguments(eta0, n, scale, kind)
    exact = pset_supremum(prior, n, mass, lam)
    relaxed = float(corollary2_relaxation(prior, data_mass, step, lam))
    if np.isclose(relaxed, exact, rtol=EQUAL_RTOL, atol=0.0):
        excess = 0.0
    else:
        excess = relaxed / exact - 1
    return {"relaxed": relaxed, "exact": exact, "excess": float(excess)}


def corollary2_excess_sweep(rng: np.random.Generator, settings: int, *,
                            prior_range: tuple[float, float] = (0.1, 30.0), n_range: tuple[int, int] = (10, 1000),
                            scale_range: tuple[float, float] = (0.05, 1.0),
                            orders: tuple[float, float] = (1.0, 2.0)) -> pd.DataFrame:
    """Corollary 2's excess (:func:`corollary2_excess`) over random settings.

    Each setting draws the algorithm (diffused or concentrated, equally likely), the prior's
    :math:`\\alpha_0` and :math:`\\beta_0` log-uniformly in ``prior_range``, the number of records
    log-uniformly in ``n_range`` (rounded down), the scale :math:`r` or :math:`m` uniformly in
    ``scale_range``, and the order uniformly between ``orders[0]`` and the smaller of
    ``orders[1]`` and the critical order :math:`1 + \\min(\\alpha_0, \\beta_0)/s` (Corollary 1).

    Parameters
    ----------
    rng : numpy.random.Generator
    settings : int
        Number of settings, at least 1.
    prior_range : (float, float)
        Positive bounds of :math:`\\alpha_0` and :math:`\\beta_0`.
    n_range : (int, int)
        Bounds of the number of records, at least 1.
    scale_range : (float, float)
        Positive bounds of :math:`r` or :math:`m`.
    orders : (float, float)
        Bounds of the order, ``1 <= orders[0] < orders[1]``.

    Returns
    -------
    pandas.DataFrame
        One row per setting: ``kind``, ``alpha0``, ``beta0``, ``n``, ``scale``, ``lambda``,
        ``relaxed``, ``exact``, ``excess``.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    settings = validation.integer(settings, "settings", 1)
    lo_p, hi_p = (float(v) for v in prior_range)
    lo_n, hi_n = (int(v) for v in n_range)
    lo_s, hi_s = (float(v) for v in scale_range)
    lo_o, hi_o = (float(v) for v in orders)
    if not 0 < lo_p <= hi_p:
        raise ValueError(f"prior_range must satisfy 0 < low <= high; got {prior_range}")
    if not 1 <= lo_n <= hi_n <= MAX_PSET_N:
        raise ValueError(f"n_range must satisfy 1 <= low <= high <= {MAX_PSET_N}; got {n_range}")
    if not 0 < lo_s <= hi_s:
        raise ValueError(f"scale_range must satisfy 0 < low <= high; got {scale_range}")
    if not 1 <= lo_o < hi_o:
        raise ValueError(f"orders must satisfy 1 <= low < high; got {orders}")
    rows = []
    for _ in range(100 * settings):
        if len(rows) == settings:
            break
        kind = ("diffused", "concentrated")[int(rng.integers(2))]
        # math.exp and math.log (the C library's, correctly rounded) rather than NumPy's, whose
        # vectorised versions may differ in the last bit between CPUs
        a0, b0 = (math.exp(u) for u in rng.uniform(math.log(lo_p), math.log(hi_p), 2))
        n = int(math.exp(rng.uniform(math.log(lo_n), math.log(hi_n + 1))))
        n = min(max(n, lo_n), hi_n)
        scale = rng.uniform(lo_s, hi_s)
        top = min(hi_o, 1 + min(a0, b0) / scale)
        if top <= lo_o:                        # no order in range for this draw: draw again
            continue
        lam = rng.uniform(lo_o, top)
        if not lo_o < lam < top or lam <= 1:
            continue
        out = corollary2_excess([a0, a0 + b0], n, scale, lam, kind=kind)
        rows.append({"kind": kind, "alpha0": a0, "beta0": b0, "n": n, "scale": scale,
                     "lambda": lam, **out})
    if len(rows) < settings:
        raise ValueError("the ranges leave almost no order between orders[0] and the critical "
                         "order: widen prior_range or orders, or lower scale_range")
    return pd.DataFrame(rows)


def heldout_neg_loglik(theta: ArrayLike, k: ArrayLike, n: int, *, reading: str) -> np.ndarray | float:
    """The two readings of Figure 2 (c, d)'s ":math:`-\\log p(X_H \\mid \\theta)`".

    Parameters
    ----------
    theta : array_like
        Success probabilities in :math:`(0, 1)`.
    k : array_like of int
        Successes among the ``n`` held-out trials; broadcasts with ``theta``.
    n : int
        Held-out trials (100 in the paper).
    reading : {"sequence", "count"}
        ``"sequence"``: the likelihood of the ordered trials,
        :math:`-(k\\log\\theta + (n-k)\\log(1-\\theta))`, at least :math:`n H(k/n)`, near
        :math:`100\\log 2 \\approx 69.3` for Bernoulli(0.5) data. ``"count"``: the binomial pmf of
        the count, the same minus :math:`\\log\\binom{n}{k}`.
    """
    if reading not in ("sequence", "count"):
        raise ValueError(f"reading must be 'sequence' or 'count'; got {reading!r}")
    theta = validation.open_unit(theta, "theta")
    n = validation.integer(n, "n")
    k = validation.integer_array(k, "k")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"k must lie in [0, n] = [0, {n}]")
    out = -(k * np.log(theta) + (n - k) * np.log1p(-theta))
    if reading == "count":
        out = out - (special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1))
    return out[()]
