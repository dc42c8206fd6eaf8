"""Cauchy noise scaled to a smooth sensitivity: its calibration and its exact privacy loss.

Nissim, Raskhodnikova and Smith's calibration with the admissible density
:math:`h(z) \\propto 1/(1 + z^2)` as Zafarani and Clifton state it (Theorem 2,
:func:`calibrate` with ``rule="theorem2"``), the multiplier their Algorithm 1 prints
(``rule="printed"``) and the smallest multiplier whose exact worst-case loss is
:math:`\\varepsilon` (``rule="tight"``, :func:`cauchy_exact_loss`);
:func:`cauchy_privacy_loss` is the additive bound (shift plus dilation).
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike

from lib import validation


#: Tail exponent of the admissible density of NRS used here: gamma = 2 is the Cauchy.
GAMMA = 2.0

#: Calibration rules accepted by :func:`calibrate`.
RULES = ("theorem2", "printed", "tight")


def cauchy_privacy_loss(slide: ArrayLike, dilation: ArrayLike) -> np.ndarray | float:
    """Additive upper bound on the pure-DP loss of :math:`f(x) + (S(x)/s) Z`, :math:`Z` standard Cauchy.

    For neighbours the centre moves by at most :math:`S(x)` (so by at most
    ``slide`` :math:`= s` noise units) and the scale changes by a factor in
    :math:`[e^{-\\beta}, e^{\\beta}]` (``dilation`` :math:`= \\beta`, as for a
    :math:`\\beta`-smooth :math:`S`). The log density ratio splits into a shift,
    whose supremum for the Cauchy is
    :math:`\\sup_u \\log\\frac{1 + (u + s)^2}{1 + u^2} = 2\\,\\mathrm{asinh}(s/2)`,
    and a dilation, bounded by :math:`\\beta` (NRS's sliding
    and dilation properties). So the release is
    :math:`(2\\,\\mathrm{asinh}(s/2) + \\beta)`-DP. Each term is exact on
    its own, but the two suprema are not attained together:
    :func:`cauchy_exact_loss` is the exact joint value (smaller).

    Parameters
    ----------
    slide : array_like
        :math:`s \\ge 0`.
    dilation : array_like
        :math:`\\beta \\ge 0`.

    Returns
    -------
    ndarray
        The privacy loss :math:`\\varepsilon`.

    Examples
    --------
    >>> round(float(cauchy_privacy_loss(1/6, 1/6)), 6)  # Theorem 2 at epsilon = 1
    0.333141
    """
    s = validation.nonnegative(slide, "slide")
    b = validation.nonnegative(dilation, "dilation")
    return 2.0 * np.arcsinh(s / 2.0) + b


def _log_ratio_sup(r, slide):
    """:math:`\\sup_z \\log p_a(z)/p_b(z - \\Delta)` for Cauchy scales :math:`a = 1`, :math:`b = e^r`, :math:`\\Delta = s\\min(a, b)`.

    :math:`p_a(z)/p_b(z-\\Delta) = \\frac{a}{b}\\frac{b^2 + (z-\\Delta)^2}{a^2 + z^2}`;
    the supremum over :math:`z` of a ratio of two positive quadratics is the
    largest :math:`\\lambda` at which their difference has a double root,
    :math:`a^2\\lambda^2 - (a^2 + b^2 + \\Delta^2)\\lambda + b^2 = 0`.
    """
    b = np.exp(r)
    d = slide * np.minimum(1.0, b)
    t = 1.0 + b * b + d * d
    # lambda - 1 without cancellation: t - 2 = expm1(2r) + d^2, t - 2b = expm1(r)^2 + d^2
    lam_minus_1 = (np.expm1(2.0 * r) + d * d + np.sqrt((np.expm1(r) ** 2 + d * d) * (t + 2.0 * b))) / 2.0
    return np.log1p(lam_minus_1) - r


def _exact_loss(slide, beta):
    if beta == 0.0:
        return float(_log_ratio_sup(0.0, slide))
    r = np.linspace(-beta, beta, 2049)
    v = _log_ratio_sup(r, slide)
    i = int(np.argmax(v))
    best = float(v[i])
    # refine around the best grid point (the function is smooth on each side of r = 0)
    lo, hi = r[max(i - 1, 0)], r[min(i + 1, r.size - 1)]
    for _ in range(60):
        m1, m2 = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
        if _log_ratio_sup(m1, slide) < _log_ratio_sup(m2, slide):
            lo = m1
        else:
            hi = m2
    return max(best, float(_log_ratio_sup((lo + hi) / 2.0, slide)))


def cauchy_exact_loss(slide: float, dilation: float) -> float:
    """Exact worst-case pure-DP loss of :math:`f(x) + (S(x)/s) Z` over neighbours, :math:`Z` standard Cauchy.

    Neighbours :math:`x, y` may have any :math:`|f(x) - f(y)| \\le
    \\min(S(x), S(y))` (each local sensitivity bounds it) and any ratio
    :math:`S(y)/S(x) \\in [e^{-\\beta}, e^{\\beta}]`. With noise scales
    :math:`a = S(x)/s` and :math:`b = S(y)/s` the loss is the supremum over
    the output :math:`z` of :math:`|\\log p_x(z)/p_y(z)|`, in closed form for
    each pair (:func:`_log_ratio_sup`), increasing in the shift, so the shift
    is :math:`s\\min(a, b)`; the remaining maximum over
    :math:`\\log(b/a) \\in [-\\beta, \\beta]` (which covers both
    directions by scale invariance) is taken on a grid of 2049 points refined
    by ternary search. It is below :func:`cauchy_privacy_loss`, which adds the
    two suprema separately; at :math:`\\beta = 0` both are
    :math:`2\\,\\mathrm{asinh}(s/2)`.

    Parameters
    ----------
    slide, dilation : float
        :math:`s` and :math:`\\beta`, finite and non-negative (scalars, where
        :func:`cauchy_privacy_loss` broadcasts arrays).

    Returns
    -------
    float
        The loss :math:`\\varepsilon`, at most ``cauchy_privacy_loss(slide, dilation)``.

    Examples
    --------
    >>> round(cauchy_exact_loss(1/6, 1/6), 6)   # Theorem 2 at epsilon = 1: under a quarter of the budget
    0.226135
    """
    s = validation.scalar(validation.nonnegative(slide, "slide"), "slide")
    b = validation.scalar(validation.nonnegative(dilation, "dilation"), "dilation")
    if not (np.isfinite(s) and np.isfinite(b)):
        raise ValueError(f"slide and dilation must be finite; got slide={s:g}, dilation={b:g}")
    return _exact_loss(float(s), float(b))


@functools.lru_cache(maxsize=1024)
def _tight_slide(epsilon, beta):
    """Largest slide whose :func:`cauchy_exact_loss` at ``beta`` is at most ``epsilon`` (bisection in log s)."""
    lo = 2.0 * np.sinh((epsilon - beta) / 2.0)            # the additive bound's slide: loss <= epsilon
    hi = 2.0 * np.sinh(epsilon / 2.0)                     # loss >= 2 asinh(s/2) > epsilon beyond it
    for _ in range(200):
        mid = np.sqrt(lo) * np.sqrt(hi)
        if _exact_loss(mid, beta) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


def calibrate(epsilon: float, rule: str = "theorem2") -> tuple[float, float]:
    """Smoothing :math:`\\beta` and noise multiplier for an :math:`\\varepsilon`-DP Cauchy release.

    The release is :math:`f(x) + \\text{multiplier} \\cdot S_\\beta(x) \\cdot Z`
    with :math:`Z` standard Cauchy and :math:`S_\\beta` a :math:`\\beta`-smooth
    upper bound on the local sensitivity.

    * ``"theorem2"``: Zafarani-Clifton Theorem 2 (NRS's calibration) with the
      :math:`(\\varepsilon/(2(\\gamma+1)), \\varepsilon/(2(\\gamma+1)))`-admissible
      density (their Theorem 3, :math:`\\gamma = 2`): :math:`\\beta = \\varepsilon/6`,
      multiplier :math:`6/\\varepsilon`.
    * ``"printed"``: Algorithm 1, lines 15 and 18, multiplier
      :math:`\\sqrt 2/\\varepsilon`; Algorithm 1 does not say which
      :math:`\\beta`, we take Theorem 2's :math:`\\varepsilon/6`. Not covered by
      Theorem 2 (the multiplier is 4.2 times smaller); by
      :func:`cauchy_privacy_loss` it is still :math:`\\varepsilon`-DP.
    * ``"tight"``: :math:`\\beta = \\varepsilon/6` as Theorem 2, and the
      smallest multiplier :math:`1/s` with :func:`cauchy_exact_loss`
      :math:`(s, \\beta) \\le \\varepsilon` (bisection, then a relative
      margin of :math:`10^{-12}`, so the loss is just below
      :math:`\\varepsilon`). About
      :math:`1/\\varepsilon` for small :math:`\\varepsilon`, six times less
      noise than Theorem 2, which spends about a third of the budget.

    Parameters
    ----------
    epsilon : float
        Per-release privacy level, in :math:`(0, \\infty)`.
    rule : {"theorem2", "printed", "tight"}

    Returns
    -------
    beta, multiplier : float

    Examples
    --------
    >>> calibrate(3.0)
    (0.5, 2.0)
    """
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    beta = epsilon / (2.0 * (GAMMA + 1.0))
    with np.errstate(over="ignore"):
        if rule == "tight":
            if not 1e-100 <= epsilon <= 100.0:
                # below, squared shifts underflow; above, the multiplier is below e^-40
                raise ValueError(f"epsilon must be in [1e-100, 100] for rule 'tight'; got epsilon={epsilon:g}")
            # 1e-12 relative margin: the computed loss is accurate to rounding, the release stays below epsilon
            multiplier = (1.0 + 1e-12) / _tight_slide(float(epsilon), float(beta))
        else:
            multiplier = (2.0 * (GAMMA + 1.0) if rule == "theorem2" else float(np.sqrt(2.0))) / epsilon
    if not (np.isfinite(multiplier) and beta > 0):
        raise ValueError(f"epsilon must give a finite noise multiplier and a positive beta; got epsilon={epsilon:g}")
    return beta, multiplier
