"""Exact divergences between Dirichlet distributions (Appendix E)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation

# Stirling series log Gamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_k c_k x^(1 - 2k),
# c_k = B_2k / (2k (2k - 1)); for x >= _STIRLING_FROM the first seven terms leave an
# error below 1e-15.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_STIRLING_FROM = 8.0
_TAYLOR_STEP = 1e-5
# Below this argument psi'(a) ~ 1/a^2 is near overflow; _lgamma_diff_small is used.
_SMALL_ARGUMENT = 1e-100
# Orders below one: Taylor series of the excess (first-order terms cancel) where
# |delta| <= 1e-3 a, to k = 6; the first omitted term is below (delta/a)^5 <= 1e-15
# of the leading one.
_SERIES_STEP = 1e-3
_SERIES_TERMS = 5


def _stirling_tail(x):
    inv2 = 1 / (x * x)
    acc = np.zeros_like(x)
    for c in reversed(_STIRLING):
        acc = acc * inv2 + c
    return acc / x


def lgamma_diff(a: ArrayLike, h: ArrayLike) -> np.ndarray:
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
    zero = h == 0
    out[zero] = 0.0
    # Below _SMALL_ARGUMENT the Taylor terms psi'(a), psi''(a) overflow (0 * inf = NaN
    # for parameters below about 1e-150); such arguments use the exact identity of
    # _lgamma_diff_small instead.
    small = ~zero & (a < _SMALL_ARGUMENT)
    out[small] = _lgamma_diff_small(a[small], h[small])
    tiny = ~zero & ~small & (np.abs(h) <= _TAYLOR_STEP * a)
    at, ht = a[tiny], h[tiny]
    out[tiny] = ht * (
        special.digamma(at) + ht / 2 * (special.polygamma(1, at) + ht / 3 * special.polygamma(2, at))
    )
    big = ~zero & ~small & ~tiny & (a >= _STIRLING_FROM) & (a + h >= _STIRLING_FROM)
    ab, hb = a[big], h[big]
    out[big] = (
        (ab - 0.5) * np.log1p(hb / ab)
        + hb * (np.log(ab + hb) - 1)
        + (_stirling_tail(ab + hb) - _stirling_tail(ab))
    )
    rest = ~zero & ~small & ~tiny & ~big
    out[rest] = special.gammaln(a[rest] + h[rest]) - special.gammaln(a[rest])
    return out


def _lgamma_diff_small(a, h):
    r"""``gammaln(a + h) - gammaln(a)`` for ``0 < a < _SMALL_ARGUMENT``.

    From :math:`\Gamma(x) = \Gamma(1 + x)/x`:
    ``gammaln(1 + a + h) - gammaln(1 + a) - log1p(h / a)``, where ``gammaln`` is
    evaluated near 1 (no large terms) and ``h / a`` may be huge without harm.
    """
    with np.errstate(over="ignore"):
        ratio = h / a
    # h / a overflows only when a is subnormal-small and h of order one; then
    # log1p(h/a) = log(h) - log(a) + log1p(a/h).
    logs = np.where(np.isfinite(ratio), np.log1p(np.where(np.isfinite(ratio), ratio, 0.0)),
                    np.log(np.abs(h)) - np.log(a))
    return special.gammaln(1 + a + h) - special.gammaln(1 + a) - logs


#: Fewest arguments from which :func:`_distinct` sorts out the repeated ones.
_DISTINCT_FROM = 64


def _distinct(x):
    """``(values, back)``: the distinct entries of the 1-D float array ``x`` and the map back.

    ``back(f(values))`` is ``f(x)`` entry by entry for an elementwise ``f`` (the same
    arguments give the same values); below :data:`_DISTINCT_FROM` entries ``x`` is
    returned as it is (sorting would cost more than it saves). ``x`` holds no NaN.
    """
    if x.size < _DISTINCT_FROM:
        return x, lambda v: v
    values, inverse = np.unique(x, return_inverse=True)
    return values, lambda v: v[inverse]


def lgamma_diff_fused(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    """:func:`lgamma_diff` for 1-D float arrays, empty regimes skipped (the posterior samplers' search).

    The same regimes and formulas value by value (``polygamma(1, x)`` is
    ``zeta(2, x)`` and ``polygamma(2, x)`` is ``-2 zeta(3, x)`` in scipy, both exact
    products); only the calls on empty selections are left out.
    """
    out = np.empty(a.shape)
    zero = h == 0
    out[zero] = 0.0
    small = ~zero & (a < _SMALL_ARGUMENT)
    if small.any():
        out[small] = _lgamma_diff_small(a[small], h[small])
        rest = ~zero & ~small
    else:
        rest = ~zero
    tiny = rest & (np.abs(h) <= _TAYLOR_STEP * a)
    if tiny.any():
        at, ht = a[tiny], h[tiny]
        # the search's arguments repeat (the vertices share coordinates, a = (u_i, u_j, u_0) appears
        # with two steps): each special function is evaluated once per distinct argument, the same values
        at, back = _distinct(at)
        psi, z2, z3 = (back(f) for f in (special.digamma(at), special.zeta(2, at), special.zeta(3, at)))
        out[tiny] = ht * (psi + ht / 2 * (z2 + ht / 3 * (-2.0 * z3)))
        rest = rest & ~tiny
    ah = a + h
    big = rest & (a >= _STIRLING_FROM) & (ah >= _STIRLING_FROM)
    if big.any():
        ab, hb = a[big], h[big]
        out[big] = ((ab - 0.5) * np.log1p(hb / ab) + hb * (np.log(ab + hb) - 1)
                    + (_stirling_tail(ab + hb) - _stirling_tail(ab)))
        rest = rest & ~big
    if rest.any():
        out[rest] = special.gammaln(a[rest] + h[rest]) - special.gammaln(a[rest])
    return out


def _excess_below_one(a, delta, lam):
    r"""``(G + H) / (lam - 1)`` of :func:`renyi_excess` for orders ``lam`` in (0, 1).

    Both parts are about ``-delta psi(a)`` and ``+delta psi(a)``; their sum is of order
    ``lam delta^2 psi'(a) / 2``, which is ~1/a for neighbouring posteriors. Subtracting
    the two rounded parts would lose ``log10(a)`` digits (eight for a = 1e8). Where
    ``|delta| <= 1e-3 a`` the Taylor series of the sum is used instead, in which the
    first-order terms cancel exactly:

    .. math::
        \sum_{k \ge 2} \frac{\psi^{(k-1)}(a)\,\delta^k}{k!}\,[(-1)^k + (\lambda-1)^{k-1}],

    summed to ``k = 6`` (the first omitted term is below ``(delta/a)^5 <= 1e-15`` of the
    first). Elsewhere (``a < 1000 |delta|``, where the cancellation costs at most about
    ``log10(a log a)`` digits) the two parts are evaluated as in :func:`renyi_excess`.
    """
    out = np.empty(a.shape)
    # a >= 1 keeps every polygamma finite; below it psi(a) ~ -1/a and the plain
    # difference loses at most log10(a / |delta|) <= 3 digits.
    near = (np.abs(delta) <= _SERIES_STEP * a) & (a >= 1.0)
    an, dn, m = a[near], delta[near], lam[near] - 1
    # polygamma (scipy's zeta) once per distinct a: the same posterior parameter recurs along a
    # row of distances and across Monte Carlo rows
    distinct, back = _distinct(an)
    acc = np.zeros(an.shape)
    factorial = 1.0
    for k in range(2, _SERIES_TERMS + 2):
        factorial *= k
        acc += back(special.polygamma(k - 1, distinct)) * dn**k / factorial * ((-1.0) ** k + m ** (k - 1))
    out[near] = acc
    far = ~near
    af, df, lf = a[far], delta[far], lam[far]
    out[far] = lgamma_diff(af, -df) + lgamma_diff(af, (lf - 1) * df) / (lf - 1)
    return out


def renyi_excess(a: ArrayLike, delta: ArrayLike, lam: ArrayLike) -> np.ndarray:
    """One term of eq. (17) divided by ``lam - 1``: ``(G + H) / (lam - 1)``.

    With ``a = u_i`` and ``delta = u_i - u'_i``:
    ``G/(lam-1) = log Gamma(a - delta) - log Gamma(a)`` and
    ``H/(lam-1) = [log Gamma(a + (lam-1) delta) - log Gamma(a)] / (lam - 1)``;
    for ``lam = 1`` the second part is its limit ``delta psi(a)`` (Case 2).
    """
    low = lam < 1
    if np.any(low):
        out = np.empty(a.shape)
        out[low] = _excess_below_one(a[low], delta[low], lam[low])
        high = ~low
        out[high] = renyi_excess(a[high], delta[high], lam[high])
        return out
    g = lgamma_diff(a, -delta)
    kl = lam == 1
    h = np.empty(a.shape)
    # delta psi(a), written so that delta = 0 gives 0 even where psi(a) overflows.
    moved = kl & (delta != 0)
    h[kl & ~moved] = 0.0
    h[moved] = delta[moved] * special.digamma(a[moved])
    step = (lam[~kl] - 1) * delta[~kl]
    h[~kl] = lgamma_diff(a[~kl], step) / (lam[~kl] - 1)
    return g + h


def renyi_divergence_dirichlet(u: ArrayLike, v: ArrayLike, lam: ArrayLike, *,
                               below_one: bool = False) -> np.ndarray | float:
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
        Order :math:`\\lambda \\in [1, \\infty)`, broadcast against the leading axes;
        :math:`\\lambda \\in (0, \\infty)` with ``below_one``.
    below_one : bool, default False
        Also accept orders in :math:`(0, 1)`. Eq. (16) holds there unchanged (it is
        the same Beta-function integral, and :math:`w = \\lambda u + (1-\\lambda) v`
        is always positive, so the divergence is finite); the order 1/2 gives the
        Hellinger distance (:func:`hellinger_dirichlet`). Off by default so that an
        RDP order below 1, a mistake in every privacy computation of the book,
        still raises.

    Returns
    -------
    ndarray or float
        The divergence, non-negative, ``inf`` where the order-:math:`\\lambda`
        integral diverges.
    """
    u = validation.vectors(u, "u", positive_entries=True)
    v = validation.vectors(v, "v", positive_entries=True)
    lam = validation.positive(lam, "lam") if below_one else validation.order(lam, "lam")
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
    per_coordinate = renyi_excess(uf, df, np.broadcast_to(lf[:, None], uf.shape)).sum(axis=-1)
    total = renyi_excess(uf.sum(axis=-1), df.sum(axis=-1), lf)
    with np.errstate(invalid="ignore"):
        difference = per_coordinate - total
    if np.isnan(difference).any():  # inf - inf: (lam - 1) delta overflowed
        bad = int(np.flatnonzero(np.isnan(difference))[0])
        raise ValueError(f"lam = {lf[bad]:g} puts the divergence outside double precision for these u and v "
                         "(an intermediate overflows); use a smaller order")
    # The exact value is >= 0; rounding can leave a tiny negative number when u == v.
    out[finite] = np.maximum(difference, 0.0)
    return out.reshape(batch)[()]


def hellinger_dirichlet(u: ArrayLike, v: ArrayLike) -> np.ndarray | float:
    """Hellinger distance :math:`\\mathcal H(\\mathrm{Dir}(u), \\mathrm{Dir}(v))` without cancellation.

    With the Bhattacharyya coefficient :math:`BC = \\int \\sqrt{pq} =
    B(\\tfrac{u+v}{2}) / \\sqrt{B(u)B(v)}` (the formula of the smoothed-Hellinger
    note, Section 2.1), :math:`\\mathcal H = \\sqrt{1 - BC}`. Since
    :math:`BC = \\exp(-D_{1/2}/2)` for the Renyi divergence of order 1/2, the
    distance is evaluated as ``sqrt(-expm1(-D / 2))`` from
    :func:`renyi_divergence_dirichlet` at ``lam = 0.5``: no difference of two
    numbers near one, so distances between posteriors of 1e8 records (about 1e-4) keep
    their digits. This is the normalisation with :math:`\\mathcal H \\in [0, 1]`.

    Parameters
    ----------
    u, v : array_like, shape (..., d)
        Positive Dirichlet parameters, ``d >= 2``; the leading axes broadcast.

    Returns
    -------
    ndarray or float
        The distance in [0, 1].

    Examples
    --------
    >>> round(float(hellinger_dirichlet([1.0, 1.0], [1.0, 1.0])), 12)
    0.0
    >>> bool(0 < hellinger_dirichlet([2.0, 3.0], [3.0, 2.0]) < 1)
    True
    """
    d_half = renyi_divergence_dirichlet(u, v, 0.5, below_one=True)
    return np.sqrt(-np.expm1(-0.5 * np.asarray(d_half)))[()]


def kl_divergence(p: ArrayLike, q: ArrayLike) -> np.ndarray | float:
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
    p, q = validation.broadcast(p=p, q=q)
    with np.errstate(divide="ignore"):
        terms = np.where(p > 0, special.xlogy(p, p) - special.xlogy(p, q), 0.0)
    return terms.sum(axis=-1)[()]


def _probability_vectors(value, name):
    arr = validation.vectors(value, name, positive_entries=False)
    if np.any(np.abs(arr.sum(axis=-1) - 1) > 1e-9):
        raise ValueError(f"{name} must sum to 1 along its last axis (within 1e-9)")
    return arr
