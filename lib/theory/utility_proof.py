"""Independent checks of the proof of Theorem 2 (Appendix F of the paper).

:mod:`lib.theory.utility` gives each ingredient of the proof (the moment identity of eq. (20),
the exponent :math:`f(t)` of eq. (21), its minimiser through the Lambert W function of
eq. (22)). Chapter 5 checks them against computations that do not share their code:

- :func:`moment_by_quadrature`: eq. (20) for :math:`d = 2` by adaptive quadrature against the
  Beta density;
- :func:`worst_chernoff_gap`: the step from eq. (20) to eq. (21), over a grid of
  :math:`(d, \\eta, \\beta)` and of points :math:`p` (:func:`probe_points`);
- :func:`use_lambert_identity`: the substitution :math:`\\log W(x) = \\log x - W(x)` with which
  SymPy verifies eq. (22);
- :func:`geometric_distribution`: the skewed distributions :math:`p_i \\propto 2^{-i}` of the
  Monte Carlo test;
- :func:`digamma_gap_excess`: the limit in which Theorem 2 fails for small :math:`\\alpha`.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
import sympy as sp
from scipy import integrate, special, stats

from lib import validation
from lib.validation import SeedLike
from lib.theory.utility import chernoff_exponent, log_moment, min_beta, optimal_t


def moment_by_quadrature(t: float, p1: float, alpha: float, beta: float) -> float:
    """:math:`E[e^{t D_{KL}(p \\| q)}]` for :math:`d = 2`, by quadrature against the Beta density.

    For :math:`p = (p_1, 1 - p_1)` and :math:`q \\sim \\mathrm{Dirichlet}(\\beta p + \\alpha)`, the
    first coordinate is :math:`q_1 \\sim \\mathrm{Beta}(\\beta p_1 + \\alpha, \\beta(1 - p_1) +
    \\alpha)`, and the expectation of eq. (20) is a one-dimensional integral. It is computed
    with ``scipy.integrate.quad`` (relative tolerance :math:`10^{-12}`, a break point at
    :math:`q_1 = p_1`, where the integrand is smallest), independently of the Gamma-function
    form that :func:`lib.theory.utility.log_moment` evaluates.

    Parameters
    ----------
    t : float
        The exponent; the integral is finite when every :math:`(\\beta - t)p_i + \\alpha > 0`.
    p1 : float
        :math:`p_1 \\in (0, 1)`.
    alpha, beta : float
        The pseudo-count :math:`\\alpha > 0` and the scale :math:`\\beta > 0`.

    Returns
    -------
    float
        The expectation.

    Examples
    --------
    >>> round(moment_by_quadrature(0.0, 0.3, 1.0, 5.0), 12)   # E[e^0] = 1
    1.0
    """
    t = validation.scalar(validation.in_range(t, "t", -np.inf, open_low=True), "t")
    p1 = validation.scalar(validation.open_unit(p1, "p1"), "p1")
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    beta = validation.scalar(validation.positive(beta, "beta"), "beta")
    a1, a2 = beta * p1 + alpha, beta * (1 - p1) + alpha
    if a1 - t * p1 <= 0 or a2 - t * (1 - p1) <= 0:
        raise ValueError("t is too large: every (beta - t) p_i + alpha must be in (0, inf) "
                         "for the expectation of eq. (20) to be finite")

    def integrand(q):
        kl = p1 * np.log(p1 / q) + (1 - p1) * np.log((1 - p1) / (1 - q))
        return np.exp(t * kl) * stats.beta.pdf(q, a1, a2)

    value, _ = integrate.quad(integrand, 0, 1, points=[p1], epsabs=0, epsrel=1e-12, limit=200)
    return value


def probe_points(d: int, rng: SeedLike) -> list[np.ndarray]:
    """Three points :math:`p` of the simplex on which chapter 5 tests the proof of Theorem 2.

    The uniform distribution, a skewed one (:math:`p_i = 10^{-3}` for :math:`i \\ge 2`, the rest
    on the first coordinate) and a uniformly random point of the simplex, drawn from ``rng``.

    Parameters
    ----------
    d : int
        The dimension, :math:`2 \\le d < 1000`.
    rng : numpy.random.Generator or int
        The source of the random point.

    Returns
    -------
    list of ndarray
        The three probability vectors, each of shape ``(d,)``.
    """
    d = validation.integer(d, "d", low=2, high=999)
    rng = validation.generator(rng)
    skewed = np.r_[1 - (d - 1) * 1e-3, np.full(d - 1, 1e-3)]
    dirichlet = rng.dirichlet(np.ones(d))
    return [np.full(d, 1 / d), skewed, dirichlet]


def worst_chernoff_gap(alpha: float, grid: Iterable[tuple[int, float, float]],
                       points: Mapping[int, Sequence[ArrayLike]]) -> float:
    """The largest :math:`\\log(e^{-t^*\\eta} E[e^{t^* D_{KL}}]) - f(t^*)` over a grid: Step 2 of Appendix F.

    Appendix F bounds the Chernoff quantity :math:`e^{-t\\eta}E[e^{tD_{KL}(p\\|q)}]` of eq. (20)
    by :math:`e^{f(t)}` of eq. (21). At the minimiser :math:`t^*` of eq. (22) this returns the
    largest logarithm of their ratio over the grid: a value :math:`\\le 0` means the step holds
    everywhere on it (it needs :math:`\\alpha \\ge 1/2`).

    Parameters
    ----------
    alpha : float
        The pseudo-count :math:`\\alpha > 0`.
    grid : iterable of (d, eta, multiple)
        Dimension, threshold :math:`\\eta` and :math:`\\beta` as a multiple of Theorem 2's
        requirement :func:`lib.theory.utility.min_beta`.
    points : mapping from d to a sequence of probability vectors
        The points :math:`p` at which to evaluate eq. (20) for each dimension (for instance
        :func:`probe_points`).

    Returns
    -------
    float
        The largest log-ratio over the grid and the points.
    """
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    worst = -np.inf
    for d, eta, m in grid:
        b = m * min_beta(d, alpha, eta)
        t_star = optimal_t(d, alpha, b, eta)
        f_star = chernoff_exponent(t_star, d, alpha, b, eta)
        for p in points[d]:
            gap = -t_star * eta + log_moment(t_star, p, alpha, b) - f_star
            worst = max(worst, gap)
    if worst == -np.inf:
        raise ValueError("grid must hold at least one (d, eta, multiple) with points for d")
    return worst


def use_lambert_identity(expr: sp.Expr, w: sp.Symbol, x: sp.Expr) -> sp.Expr:
    """Expand the logarithms of ``expr`` and replace :math:`\\log w` by :math:`\\log x - w`.

    With :math:`w = W(x)` the Lambert W function satisfies :math:`w e^w = x`, that is
    :math:`\\log w = \\log x - w`. Substituting it lets SymPy simplify :math:`f'(t^*)` and
    :math:`f(t^*)` of eq. (22) (Appendix F) to closed forms. Each logarithm's argument is
    first factored, so that :math:`\\log w` appears as a term of the expansion.

    Parameters
    ----------
    expr : sympy.Expr
        An expression in :math:`w` (and other symbols).
    w : sympy.Symbol
        The symbol that stands for :math:`W(x)`; it must be positive, so that the
        logarithms expand.
    x : sympy.Expr
        The argument of the Lambert W function.

    Returns
    -------
    sympy.Expr
        ``expr`` with logarithms expanded and :math:`\\log w` replaced.

    Examples
    --------
    >>> w, x = sp.symbols("w x", positive=True)
    >>> use_lambert_identity(sp.log(w * x), w, x)
    -w + 2*log(x)
    """
    if not isinstance(w, sp.Symbol):
        raise TypeError(f"w must be a sympy Symbol standing for W(x) (got {type(w).__name__})")
    expr = sp.sympify(expr)
    expr = expr.replace(sp.log, lambda a: sp.log(sp.factor(sp.cancel(a))))
    expr = sp.expand_log(expr, force=True)
    return expr.subs(sp.log(w), sp.expand_log(sp.log(x), force=True) - w)


def geometric_distribution(d: int) -> np.ndarray:
    """The distribution :math:`p_i \\propto 2^{-i}`, :math:`i = 0, \\dots, d - 1`.

    A skewed point of the simplex whose smallest entry is about :math:`2^{-(d-1)}`; chapter 5
    draws from :math:`\\mathrm{Dirichlet}(\\beta p + \\alpha)` at it to test Theorem 2 where
    some :math:`p_i` are tiny.

    Parameters
    ----------
    d : int
        The number of categories, :math:`d \\ge 2`.

    Returns
    -------
    ndarray, shape (d,)
        The probability vector.

    Examples
    --------
    >>> geometric_distribution(3).tolist() == [4 / 7, 2 / 7, 1 / 7]
    True
    """
    d = validation.integer(d, "d", low=2, high=1000)
    weights = 0.5 ** np.arange(d)
    return weights / weights.sum()


def digamma_gap_excess(alpha: float, eta_grid: ArrayLike) -> float:
    """:math:`\\max_\\eta\\,[\\log a - \\psi(a) - \\eta]` with :math:`a = \\alpha e^{\\eta/2}/(e^{\\eta/2} - 1)`.

    For :math:`p` uniform and :math:`\\beta` at Theorem 2's requirement :math:`d\\alpha /
    (e^{\\eta/2} - 1)`, every coordinate of :math:`q` has the shape :math:`a` above, and as
    :math:`d \\to \\infty` the loss :math:`D_{KL}(p \\| q)` concentrates at
    :math:`\\log a - \\psi(a)` while the bound of Theorem 2 tends to zero. The theorem then
    fails for large :math:`d` exactly when this maximum is positive: the threshold
    :math:`\\alpha^*` of chapter 5 is its root in :math:`\\alpha`.

    Parameters
    ----------
    alpha : float
        The pseudo-count :math:`\\alpha > 0`.
    eta_grid : array_like
        Thresholds :math:`\\eta > 0` over which to maximise.

    Returns
    -------
    float
        The largest excess over the grid.
    """
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    eta_grid = validation.positive(eta_grid, "eta_grid")
    if eta_grid.size == 0:
        raise ValueError("eta_grid must hold at least one threshold")
    shape = alpha * np.exp(eta_grid / 2) / np.expm1(eta_grid / 2)
    return np.max(np.log(shape) - special.digamma(shape) - eta_grid)
