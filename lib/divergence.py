"""Exact divergences between Dirichlet distributions (Appendix E)."""

from __future__ import annotations

import numpy as np
from scipy import special

from . import _validate

# Stirling series log Gamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_k c_k x^(1 - 2k),
# c_k = B_2k / (2k (2k - 1)); for x >= _STIRLING_FROM the first seven terms leave an
# error below 1e-15.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_STIRLING_FROM = 8.0
_TAYLOR_STEP = 1e-5


def _stirling_tail(x):
    inv2 = 1 / (x * x)
    acc = np.zeros_like(x)
    for c in reversed(_STIRLING):
        acc = acc * inv2 + c
    return acc / x


def _lgamma_diff(a, h):
    """``gammaln(a + h) - gammaln(a)`` without cancellation.

    Both Gamma values grow like ``a log a`` while their difference is close to
    ``h psi(a)``; subtracting two rounded ``gammaln`` values loses about
    ``log10(a log a)`` digits, and all of them when ``h`` is below the spacing of
    floats near ``a`` (an order lam within 1e-15 of 1). That matters when the
    exact divergence is compared with the bound of Theorem 1 near equality.
    Three regimes:

    * a step far below the argument, ``|h| <= 1e-5 a``: three Taylor terms
      ``h psi(a) + h^2 psi'(a)/2 + h^3 psi''(a)/6``; the first omitted term,
      ``h^4 psi'''(a)/24``, is below 1e-10 of the second;
    * both arguments at least 8: the difference of Stirling series in closed
      form, with ``log1p`` for the leading term;
    * otherwise the plain difference, whose terms are then small.
    """
    a, h = np.broadcast_arrays(np.asarray(a, float), np.asarray(h, float))
    out = np.empty(a.shape)
    tiny = np.abs(h) <= _TAYLOR_STEP * a
    at, ht = a[tiny], h[tiny]
    out[tiny] = ht * (
        special.digamma(at) + ht / 2 * (special.polygamma(1, at) + ht / 3 * special.polygamma(2, at))
    )
    big = ~tiny & (a >= _STIRLING_FROM) & (a + h >= _STIRLING_FROM)
    ab, hb = a[big], h[big]
    out[big] = (
        (ab - 0.5) * np.log1p(hb / ab)
        + hb * (np.log(ab + hb) - 1)
        + (_stirling_tail(ab + hb) - _stirling_tail(ab))
    )
    rest = ~tiny & ~big
    out[rest] = special.gammaln(a[rest] + h[rest]) - special.gammaln(a[rest])
    return out


def _excess(a, delta, lam):
    """One term of eq. (17) divided by ``lam - 1``: ``(G + H) / (lam - 1)``.

    With ``a = u_i`` and ``delta = u_i - u'_i``:
    ``G/(lam-1) = log Gamma(a - delta) - log Gamma(a)`` and
    ``H/(lam-1) = [log Gamma(a + (lam-1) delta) - log Gamma(a)] / (lam - 1)``;
    for ``lam = 1`` the second part is its limit ``delta psi(a)`` (Case 2).
    """
    g = _lgamma_diff(a, -delta)
    kl = lam == 1
    h = np.empty(a.shape)
    h[kl] = delta[kl] * special.digamma(a[kl])
    step = (lam[~kl] - 1) * delta[~kl]
    h[~kl] = _lgamma_diff(a[~kl], step) / (lam[~kl] - 1)
    return g + h


def renyi_divergence_dirichlet(u, v, lam):
    """Exact Renyi divergence :math:`D_\\lambda(\\mathrm{Dir}(u) \\,\\|\\, \\mathrm{Dir}(v))`.

    For :math:`\\lambda > 1`, eq. (16) of Appendix E gives, with
    :math:`w = u + (\\lambda - 1)(u - v)`,

    .. math::
        D_\\lambda = \\log B(v) - \\log B(u) + \\frac{\\log B(w) - \\log B(u)}{\\lambda - 1},

    which is eq. (17) divided by :math:`\\lambda - 1`: a sum of
    :math:`(G(u_i, v_i) + H(u_i, v_i))/(\\lambda - 1)` minus the same term at the totals
    :math:`(u_0, v_0)`. The integral behind eq. (16) is finite only when every
    :math:`w_i > 0`; otherwise the divergence is ``inf``. For :math:`\\lambda = 1` the
    KL divergence of Appendix E, Case 2, is returned.

    Each log-Gamma difference is evaluated without cancellation (a Stirling
    difference for arguments of 8 and above), so the result keeps about ten
    significant digits even when the parameters are in the millions.

    Parameters
    ----------
    u, v : array_like, shape (..., d)
        Positive Dirichlet parameters, ``d >= 2``; the leading axes broadcast.
    lam : array_like
        Order :math:`\\lambda \\in [1, \\infty)`, broadcast against the leading axes.

    Returns
    -------
    ndarray or float
        The divergence, non-negative, ``inf`` where the order-:math:`\\lambda`
        integral diverges.
    """
    u = _validate.vectors(u, "u", positive_entries=True)
    v = _validate.vectors(v, "v", positive_entries=True)
    lam = _validate.order(lam, "lam")
    if u.shape[-1] != v.shape[-1]:
        raise ValueError(
            f"u and v must have the same length d along the last axis; got shapes {u.shape} and {v.shape}"
        )
    try:
        batch = np.broadcast_shapes(u.shape[:-1], v.shape[:-1], lam.shape)
    except ValueError as exc:
        raise ValueError(
            f"the leading axes of u and v and the shape of lam must broadcast together; "
            f"got shapes {u.shape}, {v.shape} and {lam.shape}"
        ) from exc
    d = u.shape[-1]
    u = np.broadcast_to(u, batch + (d,)).reshape(-1, d)
    v = np.broadcast_to(v, batch + (d,)).reshape(-1, d)
    lam = np.broadcast_to(lam, batch).reshape(-1)
    delta = u - v
    finite = np.all(u + (lam[:, None] - 1) * delta > 0, axis=-1)
    out = np.full(lam.shape, np.inf)
    uf, df, lf = u[finite], delta[finite], lam[finite]
    per_coordinate = _excess(uf, df, np.broadcast_to(lf[:, None], uf.shape)).sum(axis=-1)
    total = _excess(uf.sum(axis=-1), df.sum(axis=-1), lf)
    # The exact value is >= 0; rounding can leave a tiny negative number when u == v.
    out[finite] = np.maximum(per_coordinate - total, 0.0)
    return out.reshape(batch)[()]


def kl_divergence(p, q):
    """KL divergence :math:`D_{KL}(p \\| q) = \\sum_i p_i \\log(p_i / q_i)` of categorical distributions.

    The loss that the Dirichlet mechanism minimises (Section 2.2), with the
    convention :math:`0 \\log 0 = 0`.

    Parameters
    ----------
    p, q : array_like, shape (..., d)
        Probability vectors along the last axis (non-negative, summing to one
        within 1e-9); the leading axes broadcast. ``q`` must be positive wherever
        ``p`` is.

    Returns
    -------
    ndarray or float
        The divergence, ``inf`` where ``q_i = 0 < p_i``.
    """
    p = _probability_vectors(p, "p")
    q = _probability_vectors(q, "q")
    if p.shape[-1] != q.shape[-1]:
        raise ValueError(f"p and q must have the same length d along the last axis; got shapes {p.shape} and {q.shape}")
    p, q = _validate.broadcast(p=p, q=q)
    with np.errstate(divide="ignore"):
        terms = np.where(p > 0, special.xlogy(p, p) - special.xlogy(p, q), 0.0)
    return terms.sum(axis=-1)[()]


def _probability_vectors(value, name):
    arr = _validate.vectors(value, name, positive_entries=False)
    if np.any(np.abs(arr.sum(axis=-1) - 1) > 1e-9):
        raise ValueError(f"{name} must sum to 1 along its last axis (within 1e-9)")
    return arr
