"""The utility of the Dirichlet mechanism: Theorem 2 (Section 4, Appendix F).

Theorem 2 bounds the upper tail of :math:`D_{KL}(p \\| q)` for
:math:`q \\sim \\mathrm{Dirichlet}(\\beta p + \\alpha)`:

.. math::
    \\Pr[D_{KL}(p \\| q) > \\eta] \\le e^{-\\beta\\eta^2 / (2(2+\\eta)(4+3\\eta))}
    \\quad\\text{whenever}\\quad \\beta \\ge d\\alpha / (e^{\\eta/2} - 1).

The proof (Appendix F) is a Chernoff bound: the moment identity of eq. (20),
the digamma bounds of eq. (19), the exponent :math:`f(t)` of eq. (21), its
minimiser :math:`t^*` through the Lambert W function (eq. (22)) and the lower
bound on :math:`W` of Hoorfar and Hassani (2008, Theorem 2.7). This module gives
each ingredient as a function, the Monte Carlo tools that test the theorem, and
the sample complexity of Algorithm 1 that Section 4 derives from it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.moments import expected_kl_loss
from lib.mechanisms.dirichlet.special import log_multivariate_beta

#: ``beta`` may fall short of :func:`min_beta` by this relative amount (rounding).
BETA_RTOL = 1e-12
_MAX_NEWTON_STEPS = 100
_CHUNK_ROWS = 1 << 15


def _dimension(d) -> np.ndarray:
    d = validation.in_range(d, "d", 2.0, open_low=False)
    if np.any(d != np.round(d)):
        raise ValueError("d must be an integer (the number of categories) in [2, inf)")
    return d


def min_beta(d: ArrayLike, alpha: ArrayLike, eta: ArrayLike) -> np.ndarray | float:
    """The smallest :math:`\\beta` that Theorem 2 allows: :math:`d\\alpha / (e^{\\eta/2} - 1)`.

    Parameters
    ----------
    d : array_like
        Number of categories, an integer :math:`\\ge 2`.
    alpha : array_like
        Pseudo-count :math:`\\alpha \\in (0, \\infty)`.
    eta : array_like
        KL threshold :math:`\\eta \\in (0, \\infty)`.

    Returns
    -------
    ndarray or float
        :math:`d\\alpha / (e^{\\eta/2} - 1)`, evaluated with ``expm1``.
    """
    d, alpha, eta = validation.broadcast(
        d=_dimension(d), alpha=validation.positive(alpha, "alpha"), eta=validation.positive(eta, "eta")
    )
    return (d * alpha / np.expm1(eta / 2))[()]


def _theorem2_inputs(d, alpha, beta, eta):
    d, alpha, beta, eta = validation.broadcast(
        d=_dimension(d),
        alpha=validation.positive(alpha, "alpha"),
        beta=validation.positive(beta, "beta"),
        eta=validation.positive(eta, "eta"),
    )
    required = d * alpha / np.expm1(eta / 2)
    short = beta < required * (1 - BETA_RTOL)
    if np.any(short):
        i = np.flatnonzero(short.ravel())[0]
        raise ValueError(
            "beta must be in [d alpha / (exp(eta/2) - 1), inf) for Theorem 2; "
            f"got beta = {beta.ravel()[i]:g} < {required.ravel()[i]:g} "
            f"(d = {d.ravel()[i]:g}, alpha = {alpha.ravel()[i]:g}, eta = {eta.ravel()[i]:g})"
        )
    return d, alpha, beta, eta


def theorem2_exponent(eta: ArrayLike) -> np.ndarray | float:
    """The rate :math:`\\eta^2 / (2(2+\\eta)(4+3\\eta))` of Theorem 2, per unit of :math:`\\beta`.

    Parameters
    ----------
    eta : array_like
        :math:`\\eta \\in (0, \\infty)`.

    Returns
    -------
    ndarray or float
        The constant :math:`c(\\eta)` with bound :math:`e^{-\\beta c(\\eta)}`.
    """
    eta = validation.positive(eta, "eta")
    return (eta**2 / (2 * (2 + eta) * (4 + 3 * eta)))[()]


def theorem2_bound(d: ArrayLike, alpha: ArrayLike, beta: ArrayLike, eta: ArrayLike) -> np.ndarray | float:
    """Theorem 2: the bound on :math:`\\Pr[D_{KL}(p \\| q) > \\eta]`, :math:`q \\sim \\mathrm{Dir}(\\beta p + \\alpha)`.

    .. math::
        \\Pr[D_{KL}(p\\|q) > \\eta] \\le \\exp\\Bigl(-\\frac{\\beta\\eta^2}{2(2+\\eta)(4+3\\eta)}\\Bigr),

    valid for every :math:`p` in the simplex :math:`S^{d-1}` once
    :math:`\\beta \\ge d\\alpha/(e^{\\eta/2}-1)`.

    Parameters
    ----------
    d : array_like
        Number of categories, an integer :math:`\\ge 2`.
    alpha : array_like
        :math:`\\alpha \\in (0, \\infty)`.
    beta : array_like
        :math:`\\beta \\ge d\\alpha/(e^{\\eta/2} - 1)` (see :func:`min_beta`; a relative
        shortfall of ``BETA_RTOL`` = 1e-12 is forgiven as rounding).
    eta : array_like
        :math:`\\eta \\in (0, \\infty)`.

    Returns
    -------
    ndarray or float
        The bound, in :math:`(0, 1)`.

    Raises
    ------
    ValueError
        If an argument is out of range, in particular ``beta`` below the requirement.

    Warnings
    --------
    The paper states the theorem for every :math:`\\alpha > 0`, and the function
    accepts that range so the statement can be tested. Appendix F's proof needs
    :math:`\\alpha \\ge 1/2` (the step to eq. (21)), and for :math:`\\alpha` below about
    0.25 the statement is false for large :math:`d` (see :func:`cantelli_tail_lower_bound`
    and the chapter on Theorem 2). Algorithm 1 always has :math:`\\alpha \\ge 1`.

    Examples
    --------
    >>> from lib.theory.utility import min_beta, theorem2_bound
    >>> beta = 4 * float(min_beta(3, 1.0, 0.5))
    >>> round(float(theorem2_bound(3, 1.0, beta, 0.5)), 4)
    0.6811
    """
    _, _, beta, eta = _theorem2_inputs(d, alpha, beta, eta)
    return np.exp(-beta * eta**2 / (2 * (2 + eta) * (4 + 3 * eta)))[()]


def chernoff_exponent(t: ArrayLike, d: ArrayLike, alpha: ArrayLike, beta: ArrayLike,
                      eta: ArrayLike) -> np.ndarray | float:
    """The exponent :math:`f(t)` of eq. (21).

    .. math::
        f(t) = -t\\eta + t \\log\\frac{\\beta + d\\alpha}{\\beta - t},

    so that :math:`\\Pr[D_{KL}(p\\|q) > \\eta] \\le e^{f(t)}` for :math:`0 \\le t < \\beta`
    when :math:`\\alpha \\ge 1/2` (Appendix F).

    Parameters
    ----------
    t : array_like
        Chernoff parameter :math:`t \\in [0, \\beta)`.
    d, alpha, beta, eta : array_like
        As in :func:`theorem2_bound`, except that ``beta`` is not required to meet
        Theorem 2's lower bound (eq. (21) holds for any :math:`\\beta > 0`).

    Returns
    -------
    ndarray or float
        :math:`f(t)`.
    """
    d, alpha, beta, eta, t = validation.broadcast(
        d=_dimension(d),
        alpha=validation.positive(alpha, "alpha"),
        beta=validation.positive(beta, "beta"),
        eta=validation.positive(eta, "eta"),
        t=validation.nonnegative(t, "t"),
    )
    if np.any(t >= beta):
        raise ValueError("t must be in [0, beta) for eq. (21)")
    # log((beta + d alpha) / (beta - t)) as log1p, without the cancellation of two logs
    return (-t * eta + t * np.log1p((d * alpha + t) / (beta - t)))[()]


def _w_minus_one(z):
    """``v = W(e^(1+z)) - 1`` for ``z > 0``, the root of ``v + log1p(v) = z``.

    ``h(v) = v + log1p(v) - z`` is increasing and concave, so Newton's method started
    below the root stays below it and increases monotonically (quadratically near
    the root). Both ``z/2`` and ``z - log1p(z)`` are below the root. Solving for
    ``W - 1`` rather than ``W`` keeps full relative precision when ``z`` is tiny.
    """
    v = np.maximum(z / 2, z - np.log1p(z))
    for _ in range(_MAX_NEWTON_STEPS):
        step = (v + np.log1p(v) - z) / (1 + 1 / (1 + v))
        v = v - step
        if np.all(np.abs(step) <= 4e-16 * v):
            return v
    raise RuntimeError("Lambert W iteration did not converge")  # pragma: no cover


def lambert_argument_log(d: ArrayLike, alpha: ArrayLike, beta: ArrayLike, eta: ArrayLike) -> np.ndarray | float:
    """:math:`\\log x` for the argument :math:`x = \\beta e^{1+\\eta}/(\\beta + d\\alpha)` of :math:`W` in eq. (22).

    Returned as a logarithm, :math:`1 + \\eta - \\log(1 + d\\alpha/\\beta)`, because
    :math:`x` overflows for :math:`\\eta > 708`. Arguments as in :func:`theorem2_bound`.
    """
    d, alpha, beta, eta = _theorem2_inputs(d, alpha, beta, eta)
    return (1 + eta - np.log1p(d * alpha / beta))[()]


def optimal_t(d: ArrayLike, alpha: ArrayLike, beta: ArrayLike, eta: ArrayLike) -> np.ndarray | float:
    """The minimiser :math:`t^*` of :math:`f` in eq. (21), through the Lambert W function.

    .. math::
        t^* = \\beta\\Bigl(1 - W\\Bigl(\\frac{\\beta e^{1+\\eta}}{\\beta + d\\alpha}\\Bigr)^{-1}\\Bigr),

    the point where :math:`f'(t) = 0` (Appendix F). Under Theorem 2's requirement
    the argument of :math:`W` is at least :math:`e^{1+\\eta/2} > e`, so :math:`W > 1`
    and :math:`0 < t^* < \\beta`. :math:`W - 1` is computed directly, by Newton's
    method on :math:`v + \\log(1+v) = \\log x - 1`, which stays accurate for tiny
    :math:`\\eta` and for arguments beyond the range of doubles.

    Parameters
    ----------
    d, alpha, beta, eta : array_like
        As in :func:`theorem2_bound`.

    Returns
    -------
    ndarray or float
        :math:`t^* \\in (0, \\beta)`.
    """
    d, alpha, beta, eta = _theorem2_inputs(d, alpha, beta, eta)
    v = _w_minus_one(eta - np.log1p(d * alpha / beta))
    return (beta * v / (1 + v))[()]


def chernoff_bound(d: ArrayLike, alpha: ArrayLike, beta: ArrayLike, eta: ArrayLike) -> np.ndarray | float:
    """The bound :math:`e^{f(t^*)}` of eq. (22), before the Hoorfar-Hassani step.

    .. math::
        e^{f(t^*)} = \\exp\\bigl(-\\beta (W - 1)^2 / W\\bigr), \\qquad
        W = W\\Bigl(\\frac{\\beta e^{1+\\eta}}{\\beta + d\\alpha}\\Bigr),

    which is at most :func:`theorem2_bound` (Appendix F). Arguments as in
    :func:`theorem2_bound`.

    Returns
    -------
    ndarray or float
        :math:`e^{f(t^*)} \\in (0, 1)`.
    """
    d, alpha, beta, eta = _theorem2_inputs(d, alpha, beta, eta)
    v = _w_minus_one(eta - np.log1p(d * alpha / beta))
    return np.exp(-beta * v**2 / (1 + v))[()]


def lambertw_lower_bound(x: ArrayLike) -> np.ndarray | float:
    """Hoorfar and Hassani (2008, Theorem 2.7): a lower bound on :math:`W(x)` for :math:`x \\ge e`.

    .. math::
        W(x) \\ge \\log x - \\log\\log x + \\frac{\\log\\log x}{2\\log x}.

    Parameters
    ----------
    x : array_like
        Points in :math:`[e, \\infty)`.

    Returns
    -------
    ndarray or float
        The lower bound.
    """
    x = validation.in_range(x, "x", np.e, open_low=False)
    lx = np.log(x)
    llx = np.log(lx)
    return (lx - llx + llx / (2 * lx))[()]


def digamma_bounds(x: ArrayLike) -> tuple[np.ndarray | float, np.ndarray | float]:
    """The digamma bounds of eq. (19): :math:`\\log(x - 1/2) < \\psi(x) < \\log x` for :math:`x > 1/2`.

    Parameters
    ----------
    x : array_like
        Points in :math:`(1/2, \\infty)`.

    Returns
    -------
    lower, upper : ndarray or float
        :math:`\\log(x - 1/2)` and :math:`\\log x`.
    """
    x = validation.in_range(x, "x", 0.5, open_low=True)
    return np.log(x - 0.5)[()], np.log(x)[()]


def _simplex_point(p):
    p = validation.vectors(p, "p", positive_entries=False)
    if p.ndim != 1:
        raise ValueError(f"p must be one probability vector of shape (d,); got shape {p.shape}")
    if abs(p.sum() - 1) > 1e-9:
        raise ValueError("p must sum to 1 (within 1e-9)")
    return p


def log_moment(t: ArrayLike, p: ArrayLike, alpha: float, beta: float) -> np.ndarray | float:
    """The logarithm of :math:`E[e^{t D_{KL}(p\\|q)}]`, :math:`q \\sim \\mathrm{Dir}(\\beta p + \\alpha)`, by eq. (20).

    .. math::
        E\\bigl[e^{tD_{KL}(p\\|q)}\\bigr] = \\prod_i p_i^{tp_i}\\,
        E\\Bigl[\\prod_i q_i^{-tp_i}\\Bigr]
        = \\prod_i p_i^{tp_i}\\,\\frac{B((\\beta - t)p + \\alpha)}{B(\\beta p + \\alpha)},

    with :math:`B` the multivariate Beta function. (The paper prints the numerator
    as :math:`B(\\beta p - tp_i + \\alpha)`; the vector is :math:`(\\beta - t)p + \\alpha`.)
    The expectation is finite exactly when every :math:`(\\beta - t)p_i + \\alpha > 0`.

    Parameters
    ----------
    t : array_like
        Points :math:`t < \\beta + \\alpha/\\max_i p_i` (negative values allowed).
    p : array_like, shape (d,)
        A point of the simplex (entries may be zero).
    alpha, beta : float
        :math:`\\alpha > 0`, :math:`\\beta > 0`.

    Returns
    -------
    ndarray or float
        :math:`\\log E[e^{tD_{KL}(p\\|q)}]`, one value per ``t``.
    """
    p = _simplex_point(p)
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    beta = validation.scalar(validation.positive(beta, "beta"), "beta")
    t = validation.as_float(t, "t")
    limit = beta + alpha / p.max()
    if not np.all(np.isfinite(t)) or np.any(t >= limit):
        raise ValueError(f"t must be finite and in (-inf, beta + alpha / max(p)) = (-inf, {limit:g})")
    shifted = (beta - t[..., None]) * p + alpha
    return (
        t * special.xlogy(p, p).sum()
        + log_multivariate_beta(shifted)
        - log_multivariate_beta(beta * p + alpha)
    )[()]


def exact_chernoff_bound(p: ArrayLike, alpha: float, beta: float, eta: float) -> float:
    """The best Chernoff bound :math:`\\min_{t \\ge 0} e^{-t\\eta} E[e^{tD_{KL}(p\\|q)}]` from eq. (20).

    The first line of Appendix F's chain, optimised over :math:`t` without the
    estimates that lead to eq. (21). The log-moment is convex in :math:`t`, so a
    bounded scalar minimisation over :math:`[0, \\beta + \\alpha/\\max_i p_i)` finds the
    optimum.

    Parameters
    ----------
    p : array_like, shape (d,)
        A point of the simplex.
    alpha, beta, eta : float
        Positive scalars; ``beta`` need not meet Theorem 2's requirement.

    Returns
    -------
    float
        The bound, in :math:`(0, 1]`.
    """
    p = _simplex_point(p)
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    beta = validation.scalar(validation.positive(beta, "beta"), "beta")
    eta = validation.scalar(validation.positive(eta, "eta"), "eta")
    limit = beta + alpha / p.max()

    def objective(t):
        return float(-t * eta + log_moment(t, p, alpha, beta))

    best = optimize.minimize_scalar(
        objective, bounds=(0.0, limit * (1 - 1e-12)), method="bounded", options={"xatol": 1e-10 * limit}
    )
    return float(np.exp(min(best.fun, 0.0)))


def sample_kl(p: ArrayLike, alpha: float, beta: float, size: int, rng: SeedLike = None) -> np.ndarray:
    """Draws of :math:`D_{KL}(p \\| q)` with :math:`q \\sim \\mathrm{Dirichlet}(\\beta p + \\alpha)`.

    :math:`q` is a vector of independent Gamma variables divided by their sum. A
    Gamma variable of small shape :math:`a` underflows to 0 with probability about
    :math:`(10^{-308})^a / \\Gamma(1 + a)`, which is 1e-3 at :math:`a = 0.01`, and
    :math:`\\log q_i = -\\infty` would make the divergence infinite. So the draws are
    made in logarithms: :math:`\\log G_a = \\log G_{a+1} + \\log(U)/a` with
    :math:`U` uniform on :math:`(0, 1]` (a :math:`\\mathrm{Gamma}(a+1)` variable times
    :math:`U^{1/a}` is :math:`\\mathrm{Gamma}(a)`), :math:`\\log q = \\log G -
    \\operatorname{logsumexp}(\\log G)`, and
    :math:`D_{KL} = \\sum_{p_i > 0} p_i (\\log p_i - \\log q_i)`.

    Parameters
    ----------
    p : array_like, shape (d,)
        A point of the simplex (entries may be zero).
    alpha : float
        :math:`\\alpha > 0`.
    beta : float
        :math:`\\beta > 0`.
    size : int
        Number of draws, at least 1.
    rng : numpy.random.Generator or int or None
        Source of randomness.

    Returns
    -------
    ndarray, shape (size,)
        Non-negative, finite divergences.
    """
    p = _simplex_point(p)
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    beta = validation.scalar(validation.positive(beta, "beta"), "beta")
    size = validation.integer(size, "size")
    rng = validation.generator(rng)
    shape = beta * p + alpha
    support = p > 0
    entropy_part = special.xlogy(p, p).sum()
    out = np.empty(int(size))
    for start in range(0, int(size), _CHUNK_ROWS):
        rows = min(_CHUNK_ROWS, int(size) - start)
        log_g = np.log(rng.standard_gamma(shape + 1, size=(rows, p.size)))
        log_g += np.log1p(-rng.random((rows, p.size))) / shape  # log U, U in (0, 1]
        log_q = log_g - special.logsumexp(log_g, axis=1, keepdims=True)
        out[start : start + rows] = entropy_part - log_q[:, support] @ p[support]
    # Rounding can leave -1e-16 when q is p to machine precision.
    return np.maximum(out, 0.0)


def clopper_pearson_lower(k: ArrayLike, n: ArrayLike, confidence: float = 0.999) -> np.ndarray | float:
    """One-sided Clopper-Pearson lower confidence bound for a binomial proportion.

    With :math:`k` successes in :math:`n` trials, the bound is the quantile of
    order :math:`\\gamma = 1 -` ``confidence`` of :math:`\\mathrm{Beta}(k, n - k + 1)`,
    and 0 when :math:`k = 0`. Whatever the true proportion :math:`P`,
    :math:`\\Pr[\\text{bound} > P] \\le \\gamma`.

    Parameters
    ----------
    k : array_like of int
        Successes, :math:`0 \\le k \\le n`.
    n : array_like of int
        Trials, :math:`n \\ge 1`.
    confidence : float, default 0.999
        :math:`1 - \\gamma \\in (0, 1)`.

    Returns
    -------
    ndarray or float
        The lower bound.
    """
    k = validation.nonnegative(k, "k")
    n = validation.in_range(n, "n", 1.0, open_low=False)
    confidence = validation.open_unit(confidence, "confidence")
    k, n, confidence = validation.broadcast(k=k, n=n, confidence=confidence)
    if np.any(k > n) or np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ValueError("k and n must be whole numbers with 0 <= k <= n")
    safe_k = np.where(k > 0, k, 1.0)
    bound = stats.beta.ppf(1 - confidence, safe_k, n - k + 1)
    return np.where(k > 0, bound, 0.0)[()]


def sample_complexity(epsilon: ArrayLike, lam: ArrayLike, d: ArrayLike, eta: ArrayLike, delta: ArrayLike,
                      l2_sq: ArrayLike = 2.0, linf: ArrayLike = 1.0) -> np.ndarray | float:
    """The smallest total count :math:`N_f` for which Theorem 2 guarantees utility (Section 4).

    Algorithm 1 releases :math:`y \\sim \\mathrm{Dir}(rN_f\\tilde f(x) + \\alpha)`, so
    Theorem 2 applies with :math:`\\beta = rN_f` (:math:`r, \\alpha` from
    :func:`lib.calibrate`). It gives :math:`\\Pr[D_{KL}(\\tilde f(x)\\|y) > \\eta] \\le
    \\delta` as soon as both :math:`rN_f \\ge d\\alpha/(e^{\\eta/2} - 1)` (Theorem 2's
    requirement) and :math:`e^{-rN_f\\eta^2/(2(2+\\eta)(4+3\\eta))} \\le \\delta`, that is

    .. math::
        N_f = \\frac{1}{r}\\max\\Bigl(\\frac{d\\alpha}{e^{\\eta/2} - 1},\\;
        \\frac{2(2+\\eta)(4+3\\eta)\\log(1/\\delta)}{\\eta^2}\\Bigr).

    This is the explicit form of the :math:`\\Omega(\\cdot)` statement at the end of
    Section 4 (see :func:`sample_complexity_rate`).

    Parameters
    ----------
    epsilon : array_like
        RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : array_like
        Renyi order :math:`\\lambda \\in [1, \\infty)`.
    d : array_like
        Number of categories, an integer :math:`\\ge 2`.
    eta : array_like
        KL threshold :math:`\\eta > 0`.
    delta : array_like
        Failure probability :math:`\\delta \\in (0, 1)`.
    l2_sq, linf : array_like
        Sensitivities, as in :func:`lib.calibrate`.

    Returns
    -------
    ndarray or float
        :math:`N_f` (a real number; round up for a count).
    """
    d = _dimension(d)
    eta = validation.positive(eta, "eta")
    delta = validation.open_unit(delta, "delta")
    r, alpha = calibrate(epsilon, lam, l2_sq, linf)
    d, eta, delta, r, alpha = validation.broadcast(d=d, eta=eta, delta=delta, r=np.asarray(r), alpha=np.asarray(alpha))
    requirement = d * alpha / np.expm1(eta / 2)
    tail = -np.log(delta) / (eta**2 / (2 * (2 + eta) * (4 + 3 * eta)))
    return (np.maximum(requirement, tail) / r)[()]


def sample_complexity_rate(epsilon: ArrayLike, lam: ArrayLike, d: ArrayLike, eta: ArrayLike) -> np.ndarray | float:
    """The order of growth of :math:`N_f` stated at the end of Section 4 (no constants).

    .. math::
        N_f = \\begin{cases}
        \\Omega\\bigl(\\frac{1}{\\varepsilon\\eta^2} + \\frac{d(\\lambda-1)}{e^{\\eta/2}-1}\\bigr)
        & \\varepsilon \\ge 1,\\\\
        \\Omega\\bigl(\\sqrt{\\lambda/\\varepsilon}\\,\\bigl[\\frac{1}{\\eta^2} + \\frac{d}{e^{\\eta/2}-1}\\bigr]\\bigr)
        & \\varepsilon < 1,
        \\end{cases}

    under the paper's assumptions :math:`\\lambda \\ge 2` and :math:`\\eta \\ll 1`. The
    function returns the expression inside :math:`\\Omega`.

    Parameters
    ----------
    epsilon : array_like
        :math:`\\varepsilon \\in (0, \\infty)`.
    lam : array_like
        :math:`\\lambda \\in [2, \\infty)`.
    d : array_like
        Number of categories, an integer :math:`\\ge 2`.
    eta : array_like
        :math:`\\eta > 0`.

    Returns
    -------
    ndarray or float
        The rate.
    """
    epsilon, lam, d, eta = validation.broadcast(
        epsilon=validation.positive(epsilon, "epsilon"),
        lam=validation.in_range(lam, "lam", 2.0, open_low=False),
        d=_dimension(d),
        eta=validation.positive(eta, "eta"),
    )
    large = 1 / (epsilon * eta**2) + d * (lam - 1) / np.expm1(eta / 2)
    small = np.sqrt(lam / epsilon) * (1 / eta**2 + d / np.expm1(eta / 2))
    return np.where(epsilon >= 1, large, small)[()]


def kl_moments(p: ArrayLike, alpha: float, beta: float) -> tuple[float, float]:
    """Exact mean and variance of :math:`D_{KL}(p \\| q)`, :math:`q \\sim \\mathrm{Dirichlet}(a)`, :math:`a = \\beta p + \\alpha`.

    With :math:`a_0 = \\sum_i a_i`, the Dirichlet facts
    :math:`E[\\log q_i] = \\psi(a_i) - \\psi(a_0)` and
    :math:`\\mathrm{Cov}(\\log q_i, \\log q_j) = \\psi'(a_i)[i = j] - \\psi'(a_0)` give

    .. math::
        E[D_{KL}] = \\sum_i p_i\\log p_i - \\sum_i p_i(\\psi(a_i) - \\psi(a_0)), \\qquad
        \\mathrm{Var}[D_{KL}] = \\sum_i p_i^2\\psi'(a_i) - \\psi'(a_0).

    The mean is also the derivative at :math:`t = 0` of :func:`log_moment`.

    Parameters
    ----------
    p : array_like, shape (d,)
        A point of the simplex.
    alpha, beta : float
        :math:`\\alpha > 0`, :math:`\\beta > 0` (no requirement from Theorem 2).

    Returns
    -------
    mean, variance : float
    """
    p = _simplex_point(p)
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    beta = validation.scalar(validation.positive(beta, "beta"), "beta")
    a = beta * p + alpha
    a0 = a.sum()
    mean = expected_kl_loss(p, beta, alpha)
    variance = np.dot(p**2, special.polygamma(1, a)) - special.polygamma(1, a0)
    return float(mean), float(max(variance, 0.0))


def cantelli_tail_lower_bound(p: ArrayLike, alpha: float, beta: float, eta: float) -> float:
    """A rigorous lower bound on :math:`\\Pr[D_{KL}(p\\|q) > \\eta]` from the exact moments.

    Cantelli's one-sided inequality, :math:`\\Pr[X \\le \\mu - s] \\le \\sigma^2/(\\sigma^2 + s^2)`
    for :math:`s > 0`, applied with :math:`s = \\mu - \\eta` gives

    .. math::
        \\Pr[D_{KL}(p\\|q) > \\eta] \\ge \\frac{(\\mu - \\eta)^2}{\\sigma^2 + (\\mu - \\eta)^2}
        \\quad\\text{when}\\quad \\mu > \\eta,

    with :math:`\\mu, \\sigma^2` from :func:`kl_moments`; the bound is 0 when
    :math:`\\mu \\le \\eta`. No sampling is involved, so a value above
    :func:`theorem2_bound` is a proof that the theorem fails at that point.

    Parameters
    ----------
    p : array_like, shape (d,)
        A point of the simplex.
    alpha, beta, eta : float
        Positive scalars.

    Returns
    -------
    float
        The lower bound, in :math:`[0, 1)`.
    """
    eta = validation.scalar(validation.positive(eta, "eta"), "eta")
    mean, variance = kl_moments(p, alpha, beta)
    gap = mean - eta
    if gap <= 0:
        return 0.0
    return float(gap**2 / (variance + gap**2))
