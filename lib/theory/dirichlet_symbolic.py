"""The Dirichlet distribution in SymPy: the expressions Section 2.2 and Appendix A derive with.

Chapter 1 derives the Dirichlet mechanism from the exponential mechanism (eq. (2) of the paper
with the KL loss) and the bias of eq. (3) from the Beta moments; the counterexample of
Appendix A (Proposition 3) writes the ratio of two Dirichlet densities. These functions build
the symbolic expressions those derivations start from; the chapters simplify and assert.

Every function takes SymPy symbols or expressions (numbers are accepted too) and returns an
unevaluated SymPy expression: no simplification is done here, so that the chapter's
``sympy.simplify`` is the step that proves the identity.
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp


def _same_length(y, u, y_name: str, u_name: str) -> tuple[list, list]:
    y, u = list(y), list(u)
    if len(y) != len(u) or len(u) < 2:
        raise ValueError(f"{y_name} and {u_name} must have the same length, at least 2 "
                         f"(got {len(y)} and {len(u)})")
    return y, u


def multivariate_beta(u: Sequence[sp.Expr]) -> sp.Expr:
    """The multivariate Beta function :math:`B(u) = \\prod_i \\Gamma(u_i) / \\Gamma(\\sum_i u_i)`.

    The normalising constant of :math:`\\mathrm{Dirichlet}(u)` (Section 2.2 of the paper).

    Parameters
    ----------
    u : sequence of sympy expressions
        The concentration parameters :math:`u_1, \\dots, u_d`, :math:`d \\ge 2`.

    Returns
    -------
    sympy.Expr
        :math:`\\prod_i \\Gamma(u_i) / \\Gamma(\\sum_i u_i)`, unevaluated.

    Examples
    --------
    >>> multivariate_beta([1, 2, 3])
    1/60
    """
    u = list(u)
    if len(u) < 2:
        raise ValueError(f"u must have at least 2 entries (got {len(u)})")
    return sp.Mul(*[sp.gamma(v) for v in u]) / sp.gamma(sum(u))


def dirichlet_density(y: Sequence[sp.Expr], u: Sequence[sp.Expr]) -> sp.Expr:
    """The density :math:`\\prod_i y_i^{u_i - 1} / B(u)` of :math:`\\mathrm{Dirichlet}(u)`.

    The output density of the Dirichlet mechanism with :math:`u = r f(x) + \\alpha`
    (Section 2.2); Proposition 3 of Appendix A compares two of them.

    Parameters
    ----------
    y : sequence of sympy expressions
        A point :math:`(y_1, \\dots, y_d)` of the simplex (the caller may substitute
        :math:`y_d = 1 - \\sum_{i<d} y_i`).
    u : sequence of sympy expressions
        The concentration parameters, of the same length as ``y``.

    Returns
    -------
    sympy.Expr
        The density, unevaluated (:func:`multivariate_beta` in the denominator).
    """
    y, u = _same_length(y, u, "y", "u")
    return sp.Mul(*[yi ** (ui - 1) for yi, ui in zip(y, u)]) / multivariate_beta(u)


def beta_moment(a: sp.Expr, b: sp.Expr, order: int) -> sp.Expr:
    """The raw moment :math:`E[z^k] = B(a + k, b) / B(a, b)` of :math:`z \\sim \\mathrm{Beta}(a, b)`.

    Each coordinate of a Dirichlet release is Beta distributed, :math:`y_i \\sim
    \\mathrm{Beta}(a_i, a_0 - a_i)` with :math:`a_i = r f_i(x) + \\alpha`; the first two moments
    give the bias of eq. (3) and the variance of Section 2.2.

    Parameters
    ----------
    a, b : sympy expressions
        The two shape parameters.
    order : int
        The order :math:`k \\ge 0`.

    Returns
    -------
    sympy.Expr
        :math:`\\Gamma(a + k)\\Gamma(a + b) / (\\Gamma(a)\\Gamma(a + b + k))`, after
        ``sympy.gammasimp`` (a rational function of ``a`` and ``b``).

    Examples
    --------
    >>> a, b = sp.symbols("a b", positive=True)
    >>> beta_moment(a, b, 1)
    a/(a + b)
    """
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise ValueError(f"order must be an integer in [0, inf) (got {order!r})")
    return sp.gammasimp(sp.gamma(a + order) * sp.gamma(a + b)
                        / (sp.gamma(a) * sp.gamma(a + b + order)))


def exponential_mechanism_log_ratio(f: Sequence[sp.Expr], y: Sequence[sp.Expr], r: sp.Expr,
                                    alpha: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """The log of eq. (2) with the KL loss over the Dirichlet kernel, and :math:`N_f H(\\tilde f)`.

    Section 2.2 of the paper: with the loss :math:`D_{KL}(\\tilde f(x) \\| y)`, the scale
    :math:`\\beta = r N_f` and the base measure :math:`\\mathrm{Dirichlet}(\\alpha)`, the
    exponential mechanism's density :math:`e^{-r N_f D_{KL}(\\tilde f \\| y)} \\prod_i
    y_i^{\\alpha - 1}` is proportional to :math:`\\prod_i y_i^{r f_i + \\alpha - 1}`. The
    logarithm of the ratio of the two is the constant :math:`r N_f H(\\tilde f)`.

    Parameters
    ----------
    f : sequence of sympy expressions
        The counts :math:`f_1(x), \\dots, f_d(x)`; an entry that is the number ``0`` is an
        empty bin, dropped from the KL sum (the convention :math:`0 \\log 0 = 0`).
    y : sequence of sympy expressions
        The point of the simplex, of the same length as ``f``.
    r, alpha : sympy expressions
        The mechanism's scale and pseudo-count.

    Returns
    -------
    log_ratio : sympy.Expr
        :math:`\\log(\\text{eq. (2)}) - \\log\\prod_i y_i^{r f_i + \\alpha - 1}`, with
        logarithms expanded.
    n_entropy : sympy.Expr
        :math:`N_f H(\\tilde f)`, the entropy of :math:`\\tilde f = f / N_f` times its total.
    """
    f, y = _same_length(f, y, "f", "y")
    n_f = sum(f)
    support = [(fi / n_f, yi) for fi, yi in zip(f, y) if fi != 0]
    kl = sum(q * sp.log(q / yi) for q, yi in support)  # 0 log 0 = 0
    log_em = -r * n_f * kl + sum((alpha - 1) * sp.log(yi) for yi in y)
    log_dirichlet = sum((r * fi + alpha - 1) * sp.log(yi) for fi, yi in zip(f, y))
    entropy = -sum(q * sp.log(q) for q, _ in support)
    return sp.expand_log(log_em - log_dirichlet, force=True), n_f * entropy
