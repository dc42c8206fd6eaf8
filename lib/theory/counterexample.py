"""Appendix A: the Dirichlet mechanism is not pure differentially private.

Proposition 3 of the paper compares the output densities of
:math:`\\mathrm{Dirichlet}(r f(x) + \\alpha)` on two neighbouring datasets and shows
that their ratio is unbounded. This module makes the argument computable:

* :func:`log_density_ratio`, the log ratio of two Dirichlet densities at a point;
* :func:`density_witness`, a point at which that ratio exceeds :math:`e^\\varepsilon`;
* :func:`log_beta_cdf` and :func:`event_log_ratio`, the exact ratio of the
  probabilities of the event :math:`\\{y_i < t\\}` from the Beta marginal
  :math:`y_i \\sim \\mathrm{Beta}(a_i, a_0 - a_i)`, in log space so that it stays
  finite where the probabilities underflow;
* :func:`event_power_law` and :func:`event_threshold`, its behaviour as
  :math:`t \\to 0` and the explicit :math:`t` below which it exceeds
  :math:`e^\\varepsilon`;
* :func:`exact_delta`, the smallest :math:`\\delta` for which one pair of
  neighbouring outputs satisfies the :math:`(\\varepsilon, \\delta)` inequality.

Throughout, ``a`` and ``b`` are the Dirichlet parameters of the outputs on the two
datasets, :math:`a_0 = \\sum_i a_i`, and
:math:`B(u) = \\prod_i \\Gamma(u_i) / \\Gamma(\\sum_i u_i)` is the multivariate Beta
function.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from lib import validation
from lib.mechanisms.dirichlet.special import log_multivariate_beta

# Below this value betainc is computed by the power series instead: its result is
# then near the underflow threshold (or zero) and has lost relative precision.
_BETAINC_FLOOR = 1e-280
_SERIES_MAX_TERMS = 1_000_000


def _pair(a, b):
    """Validate two Dirichlet parameter vectors of the same length."""
    a = validation.vectors(a, "a", positive_entries=True)
    b = validation.vectors(b, "b", positive_entries=True)
    if a.ndim != 1 or b.ndim != 1 or a.size != b.size:
        raise ValueError(
            f"a and b must be one-dimensional of the same length d >= 2; got shapes {a.shape} and {b.shape}"
        )
    return a, b


def _coordinate(i, d):
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < d:
        raise ValueError(f"i must be an integer in [0, {d - 1}]; got {i!r}")
    return int(i)


def log_density_ratio(y: ArrayLike, a: ArrayLike, b: ArrayLike) -> np.ndarray | float:
    """Log ratio of two Dirichlet densities, the quantity of Proposition 3.

    .. math::
        \\log\\frac{p_a(y)}{p_b(y)} = \\log B(b) - \\log B(a)
        + \\sum_i (a_i - b_i)\\log y_i,

    where :math:`p_u(y) = \\prod_i y_i^{u_i - 1} / B(u)` is the density of
    :math:`\\mathrm{Dirichlet}(u)` on the simplex.

    Parameters
    ----------
    y : array_like, shape (..., d)
        Points of the open simplex: positive entries summing to one (within 1e-9).
    a, b : array_like, shape (d,)
        Positive Dirichlet parameters, ``d >= 2``.

    Returns
    -------
    ndarray or float
        The log ratio at every point.

    Examples
    --------
    With ``b`` one record more than ``a`` in bin 1 at :math:`r = 1`,
    :math:`B(b)/B(a) = 1/3` and the ratio at :math:`y_1 = 0.01` is
    :math:`(1/3)/0.01 = 100/3`:

    >>> import numpy as np
    >>> from lib.theory.counterexample import log_density_ratio
    >>> ratio = log_density_ratio([0.01, 0.495, 0.495], [2, 2, 2], [3, 2, 2])
    >>> bool(np.isclose(np.exp(ratio), 100 / 3, rtol=1e-12))
    True
    """
    a, b = _pair(a, b)
    y = validation.vectors(y, "y", positive_entries=True)
    if y.shape[-1] != a.size:
        raise ValueError(f"y must have length d = {a.size} along its last axis; got shape {y.shape}")
    if np.any(np.abs(y.sum(axis=-1) - 1) > 1e-9):
        raise ValueError("y must sum to 1 along its last axis (within 1e-9)")
    constant = log_multivariate_beta(b) - log_multivariate_beta(a)
    return (constant + np.log(y) @ (a - b))[()]


def density_witness(a: ArrayLike, b: ArrayLike, epsilon: float) -> np.ndarray:
    """A point where the density ratio :math:`p_a(y) / p_b(y)` exceeds :math:`e^\\varepsilon`.

    If some :math:`a_k < b_k`, the ratio of :func:`log_density_ratio` is unbounded:
    it grows like :math:`y_k^{-(b_k - a_k)}` as :math:`y_k \\to 0` (Proposition 3).
    The witness takes the coordinate :math:`k` with the most negative
    :math:`a_k - b_k` and the points :math:`y(t)` with :math:`y_k = t` and
    :math:`(1 - t)/(d - 1)` elsewhere. For :math:`t \\le 1/2` the other
    coordinates lie in :math:`[1/(2(d-1)), 1/(d-1)]`, which bounds their
    contribution from below by a constant :math:`K`; the returned point has
    :math:`t` half of :math:`\\min(1/2, \\exp(-(\\varepsilon - K)/(b_k - a_k)))`,
    so its log ratio exceeds :math:`\\varepsilon` by at least
    :math:`(b_k - a_k)\\log 2`.

    Parameters
    ----------
    a, b : array_like, shape (d,)
        Positive Dirichlet parameters with :math:`a_k < b_k` for some :math:`k`.
    epsilon : float
        Privacy level :math:`\\varepsilon \\in [0, \\infty)`.

    Returns
    -------
    ndarray, shape (d,)
        A point of the open simplex with ``log_density_ratio(y, a, b) > epsilon``.
    """
    a, b = _pair(a, b)
    epsilon = validation.scalar(validation.nonnegative(epsilon, "epsilon"), "epsilon")
    diff = a - b
    k = int(np.argmin(diff))
    if diff[k] >= 0:
        raise ValueError("the density ratio p_a / p_b is bounded when a_i >= b_i for every i; need some a_k < b_k")
    d = a.size
    rest = diff.sum() - diff[k]
    constant = log_multivariate_beta(b) - log_multivariate_beta(a)
    lowest = constant + min(rest * np.log(1 / (2 * (d - 1))), rest * np.log(1 / (d - 1)))
    log_t = min(np.log(0.5), (epsilon - lowest) / diff[k]) - np.log(2)
    if log_t < np.log(np.finfo(float).tiny):
        raise ValueError(
            f"the witness for epsilon = {epsilon:g} needs y_k = exp({log_t:.4g}), below the smallest "
            "positive float"
        )
    t = np.exp(log_t)
    y = np.full(d, (1 - t) / (d - 1))
    y[k] = t
    return y


def log_beta_cdf(t: ArrayLike, p: ArrayLike, q: ArrayLike) -> np.ndarray | float:
    """Logarithm of the regularized incomplete Beta function :math:`\\log I_t(p, q)`.

    :math:`I_t(p, q) = \\Pr[Y < t]` for :math:`Y \\sim \\mathrm{Beta}(p, q)`. Where
    ``scipy.special.betainc`` is at least 1e-280 its logarithm is returned;
    below that (where it underflows or loses precision) the power series

    .. math::
        I_t(p, q) = \\frac{t^p (1-t)^q}{p\\,B(p, q)}
        \\sum_{n \\ge 0} \\prod_{m=0}^{n-1} \\frac{(p + q + m)\\,t}{p + 1 + m}

    is summed with its prefactor in log space. All its terms are positive, so the
    sum has no cancellation; it is summed until a term falls below 1e-17 of the sum.

    Parameters
    ----------
    t : array_like
        Points in :math:`(0, 1)`.
    p, q : array_like
        Shape parameters in :math:`(0, \\infty)`; broadcast with ``t``.

    Returns
    -------
    ndarray or float
        :math:`\\log I_t(p, q) \\le 0`.
    """
    t = validation.open_unit(t, "t")
    p = validation.positive(p, "p")
    q = validation.positive(q, "q")
    t, p, q = (np.array(x, dtype=float) for x in validation.broadcast(t=t, p=p, q=q))
    value = special.betainc(p, q, t)
    out = np.empty(t.shape)
    direct = value >= _BETAINC_FLOOR
    out[direct] = np.log(value[direct])
    tail = ~direct
    if np.any(tail):
        out[tail] = _log_beta_cdf_series(t[tail], p[tail], q[tail])
    return out[()]


def _log_beta_cdf_series(t, p, q):
    """The series of :func:`log_beta_cdf`, for points far in the lower tail."""
    prefactor = p * np.log(t) + q * np.log1p(-t) - np.log(p) - special.betaln(p, q)
    total = np.ones(t.shape)
    term = np.ones(t.shape)
    active = np.ones(t.shape, dtype=bool)
    for m in range(_SERIES_MAX_TERMS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return prefactor + np.log(total)
        ratio = (p[idx] + q[idx] + m) * t[idx] / (p[idx] + 1 + m)
        term[idx] *= ratio
        total[idx] += term[idx]
        # Once the ratio of successive terms is below one it stays below
        # max(ratio, t) < 1, so the remainder is at most term / (1 - that).
        bound = np.maximum(ratio, t[idx])
        done = (bound < 1) & (term[idx] < 1e-17 * (1 - bound) * total[idx])
        active[idx[done]] = False
    raise RuntimeError("the series of log_beta_cdf did not converge")  # pragma: no cover


def _marginal(u, i):
    """Shape parameters of the Beta marginal of coordinate i of Dirichlet(u)."""
    return u[i], u.sum() - u[i]


def event_log_ratio(t: ArrayLike, a: ArrayLike, b: ArrayLike, i: int = 0) -> np.ndarray | float:
    """Exact log ratio :math:`\\log(\\Pr_a[y_i < t] / \\Pr_b[y_i < t])`.

    Under :math:`y \\sim \\mathrm{Dirichlet}(u)` the coordinate :math:`y_i` has the
    Beta marginal :math:`\\mathrm{Beta}(u_i, u_0 - u_i)`, so each probability is a
    regularized incomplete Beta function, evaluated by :func:`log_beta_cdf`.

    Parameters
    ----------
    t : array_like
        Thresholds in :math:`(0, 1)`.
    a, b : array_like, shape (d,)
        Positive Dirichlet parameters of the two output distributions.
    i : int, default 0
        The coordinate of the event.

    Returns
    -------
    ndarray or float
        The log ratio at every threshold.
    """
    a, b = _pair(a, b)
    i = _coordinate(i, a.size)
    return (log_beta_cdf(t, *_marginal(a, i)) - log_beta_cdf(t, *_marginal(b, i)))[()]


def event_power_law(a: ArrayLike, b: ArrayLike, i: int = 0) -> tuple[float, float]:
    """Leading behaviour of :func:`event_log_ratio` as :math:`t \\to 0`.

    Since :math:`I_t(p, q) = t^p / (p\\,B(p, q))\\,(1 + O(t))`,

    .. math::
        \\log\\frac{\\Pr_a[y_i < t]}{\\Pr_b[y_i < t]}
        = \\log C - (b_i - a_i)\\log t + O(t),
        \\qquad C = \\frac{b_i\\,B(b_i, b_0 - b_i)}{a_i\\,B(a_i, a_0 - a_i)}:

    a power law :math:`C\\,t^{-(b_i - a_i)}`, unbounded when :math:`a_i < b_i`.

    Parameters
    ----------
    a, b : array_like, shape (d,)
        Positive Dirichlet parameters.
    i : int, default 0
        The coordinate of the event.

    Returns
    -------
    exponent, log_constant : float
        :math:`b_i - a_i` and :math:`\\log C`.
    """
    a, b = _pair(a, b)
    i = _coordinate(i, a.size)
    (pa, qa), (pb, qb) = _marginal(a, i), _marginal(b, i)
    log_constant = np.log(pb) + special.betaln(pb, qb) - np.log(pa) - special.betaln(pa, qa)
    return float(pb - pa), float(log_constant)


def event_threshold(a: ArrayLike, b: ArrayLike, epsilon: float, i: int = 0) -> float:
    """The threshold :math:`t^*` below which :math:`\\Pr_a[y_i < t] > e^\\varepsilon \\Pr_b[y_i < t]`.

    Requires :math:`a_i < b_i` and :math:`a_0 - a_i \\ge b_0 - b_i` (the latter to
    a relative 1e-12, the rounding of the sums): the marginal
    density ratio :math:`\\propto y^{a_i - b_i} (1 - y)^{(a_0 - a_i) - (b_0 - b_i)}`
    is then strictly decreasing, so the ratio of the distribution functions is
    non-increasing in :math:`t` (monotone likelihood ratio), tends to 1 as
    :math:`t \\to 1` and to infinity as :math:`t \\to 0`. Every pair of
    neighbouring histograms in which ``b`` has one more record in bin ``i``
    (added there, or moved there from another bin) satisfies this. The root
    :math:`t^*` of :math:`\\log R(t) = \\varepsilon` is found by Brent's method in
    :math:`\\log t`, starting from the power law of :func:`event_power_law`; by the
    monotonicity every :math:`t \\le t^*` is a witness.

    Parameters
    ----------
    a, b : array_like, shape (d,)
        Positive Dirichlet parameters as above.
    epsilon : float
        Privacy level :math:`\\varepsilon \\in (0, \\infty)`.
    i : int, default 0
        The coordinate of the event.

    Returns
    -------
    float
        :math:`t^* \\in (0, 1)` with :math:`\\log R(t^*) = \\varepsilon` to a relative
        error of about 1e-12 in :math:`\\log t^*`.
    """
    a, b = _pair(a, b)
    i = _coordinate(i, a.size)
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    (pa, qa), (pb, qb) = _marginal(a, i), _marginal(b, i)
    # a_0 - a_i and b_0 - b_i are equal for a move to bin i; computed as sums of
    # rounded parameters they may differ by a few ulps either way (and which way
    # differs between CPUs), so equality is accepted to 1e-12 relative.
    if not (pa < pb and qa >= qb * (1 - 1e-12)):
        raise ValueError(
            "event_threshold needs a_i < b_i and a_0 - a_i >= b_0 - b_i (b has one more record in bin i); "
            f"got a_i = {pa:g}, b_i = {pb:g}, a_0 - a_i = {qa:g}, b_0 - b_i = {qb:g}"
        )

    def excess(log_t):
        return event_log_ratio(np.exp(log_t), a, b, i) - epsilon

    exponent, log_constant = event_power_law(a, b, i)
    lo = min((log_constant - epsilon) / exponent, np.log(0.5))
    while excess(lo) <= 0:
        lo -= 1.0 + abs(lo)
        if lo < np.log(np.finfo(float).tiny):
            raise ValueError(f"the threshold for epsilon = {epsilon:g} is below the smallest positive float")
    hi = np.log1p(-1e-12)
    if excess(hi) > 0:  # pragma: no cover - the ratio tends to 1 as t -> 1
        return float(np.exp(hi))
    root = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-13)
    return float(np.exp(root))


def _one_dimensional_statistic(a, b):
    """Reduce the privacy loss of a neighbouring pair to one Beta variable.

    Returns Beta parameters ``(pa, qa, pb, qb)`` of a statistic ``s`` with
    ``log p_a(y) / p_b(y) = log f_a(s) / f_b(s)``: ``s = y_i`` when ``a`` and ``b``
    differ in coordinate ``i`` only, and ``s = y_i / (y_i + y_j)`` when they differ
    in ``i`` and ``j`` by opposite amounts (aggregation property of the Dirichlet).
    """
    scale = np.maximum(np.abs(a), np.abs(b))
    differ = np.flatnonzero(np.abs(a - b) > 1e-12 * scale)
    if differ.size == 0:
        return None
    if differ.size == 1:
        (i,) = differ
        rest = a.sum() - a[i]  # the other coordinates agree: one shared q
        return a[i], rest, b[i], rest
    if differ.size == 2:
        i, j = differ
        if abs((a[i] - b[i]) + (a[j] - b[j])) <= 1e-12 * (scale[i] + scale[j]):
            return a[i], a[j], b[i], b[j]
    raise ValueError(
        "exact_delta needs a and b to differ in one coordinate (a record added or removed) "
        "or in two coordinates by opposite amounts (a record moved)"
    )


def exact_delta(a: ArrayLike, b: ArrayLike, epsilon: float) -> float:
    """Smallest :math:`\\delta` with :math:`P(E) \\le e^\\varepsilon Q(E) + \\delta` for all events.

    For :math:`P = \\mathrm{Dirichlet}(a)` and :math:`Q = \\mathrm{Dirichlet}(b)` this is
    the hockey-stick divergence :math:`\\int (p - e^\\varepsilon q)_+ =
    P(L > \\varepsilon) - e^\\varepsilon Q(L > \\varepsilon)` with the privacy loss
    :math:`L = \\log p/q`, eq. (1) of Definition 2.1 for one pair of datasets. For
    neighbouring histograms :math:`L` is a monotone function of one Beta variable
    :math:`s` (``s = y_i`` for a record added to or removed from bin ``i``,
    ``s = y_i / (y_i + y_j)`` for a record moved between bins ``i`` and ``j``), so the
    event :math:`\\{L > \\varepsilon\\}` is :math:`\\{s < s_\\varepsilon\\}` or
    :math:`\\{s > s_\\varepsilon\\}`, with :math:`s_\\varepsilon` found by Brent's
    method, and both probabilities are exact Beta probabilities
    (:func:`log_beta_cdf`).

    Parameters
    ----------
    a, b : array_like, shape (d,)
        Positive Dirichlet parameters that differ in one coordinate, or in two by
        opposite amounts (relative tolerance 1e-12).
    epsilon : float
        :math:`\\varepsilon \\in [0, \\infty)`.

    Returns
    -------
    float
        :math:`\\delta \\in [0, 1]`; it underflows to 0 below about 1e-308.
    """
    a, b = _pair(a, b)
    epsilon = validation.scalar(validation.nonnegative(epsilon, "epsilon"), "epsilon")
    stat = _one_dimensional_statistic(a, b)
    if stat is None:
        return 0.0
    pa, qa, pb, qb = stat
    if pa > pb or (pa == pb and qa < qb):  # L increases in s: use 1 - s ~ Beta(q, p)
        pa, qa, pb, qb = qa, pa, qb, pb
    dp, dq = pa - pb, qa - qb  # now dp <= 0 <= dq, not both zero: L decreases in s
    log_c = special.betaln(pb, qb) - special.betaln(pa, qa)

    def loss(z):  # L at s = expit(z)
        return log_c + dp * special.log_expit(z) + dq * special.log_expit(-z)

    # L runs from log_c (or +inf if dp < 0) at s = 0 down to log_c (or -inf if dq > 0).
    if dp == 0 and log_c <= epsilon:
        return 0.0  # the event {L > epsilon} is empty
    if dq == 0 and log_c > epsilon:
        return 0.0  # the event is everything: P - e^eps Q = 1 - e^eps <= 0
    lo, hi = -1.0, 1.0
    while loss(lo) <= epsilon:
        lo *= 2
        if lo < -2000:  # pragma: no cover - would need Beta parameters near 1e-300
            raise RuntimeError("exact_delta: the event {L > epsilon} is beyond double precision")
    while loss(hi) > epsilon:
        hi *= 2
        if hi > 2000:  # L > epsilon up to s = 1 - 1e-800 (epsilon at the limit log_c)
            return 0.0
    z = optimize.brentq(lambda z: loss(z) - epsilon, lo, hi, xtol=1e-14, rtol=1e-13)
    if z <= 0:  # s_eps <= 1/2: both probabilities from the lower tail, in log space
        s = special.expit(z)
        log_p, log_q = log_beta_cdf(s, pa, qa), log_beta_cdf(s, pb, qb)
        gap = epsilon + log_q - log_p  # < 0: the loss exceeds epsilon on the event
        return float(np.exp(log_p) * -np.expm1(gap)) if gap < 0 else 0.0
    # s_eps > 1/2: the event is most of the space; use its complement {s > s_eps},
    # whose probabilities are lower tails of 1 - s ~ Beta(q, p) at expit(-z).
    upper = special.expit(-z)
    p_event = -np.expm1(log_beta_cdf(upper, qa, pa))
    q_event = -np.expm1(log_beta_cdf(upper, qb, pb))
    return float(max(p_event - np.exp(epsilon) * q_event, 0.0))


def exact_epsilon(a: ArrayLike, b: ArrayLike, delta: float) -> float:
    """Smallest :math:`\\varepsilon \\ge 0` with ``exact_delta(a, b, epsilon) <= delta``.

    The hockey-stick divergence of :func:`exact_delta` is continuous and
    non-increasing in :math:`\\varepsilon`, so the level is found by Brent's method
    in :math:`\\varepsilon` (to an absolute error of about 1e-10). It is the
    :math:`(\\varepsilon, \\delta)` guarantee that one pair of neighbouring outputs
    actually needs, to be compared with the bound that Lemma 3 derives from RDP.

    Parameters
    ----------
    a, b : array_like, shape (d,)
        As in :func:`exact_delta`.
    delta : float
        :math:`\\delta \\in (0, 1)`.

    Returns
    -------
    float
        The smallest such :math:`\\varepsilon`.
    """
    a, b = _pair(a, b)
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    if exact_delta(a, b, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while exact_delta(a, b, hi) > delta:
        hi *= 2
    return float(optimize.brentq(lambda e: exact_delta(a, b, e) - delta, 0.0, hi, xtol=1e-10, rtol=1e-12))
