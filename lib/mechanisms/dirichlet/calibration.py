"""Lines 1-2 of Algorithm 1 (Section 3.1): the scale :math:`r` and the pseudo-count :math:`\\alpha`.

Given a vector-valued query :math:`f` with squared :math:`\\ell_2`-sensitivity
:math:`\\Delta_2^2` and :math:`\\ell_\\infty`-sensitivity :math:`\\Delta_\\infty`, the
:math:`(\\lambda, \\varepsilon)`-RDP Dirichlet mechanism

1. finds :math:`r > 0` with :math:`\\varepsilon = \\tfrac12 \\lambda r^2 \\Delta_2^2
   \\psi'(1 + 3(\\lambda - 1) r \\Delta_\\infty)` (Line 1),
2. sets :math:`\\alpha = 1 + 4(\\lambda - 1) r \\Delta_\\infty` (Line 2).

Remark 1 of the paper generalises Lines 1-2 to any :math:`g \\ge 0`:
:math:`\\varepsilon = \\tfrac12\\lambda r^2\\Delta_2^2\\psi'(1 + g(r))` and
:math:`\\alpha = 1 + g(r) + (\\lambda - 1) r\\Delta_\\infty`. Here :math:`g(r) = k
(\\lambda - 1) r \\Delta_\\infty` with ``g_factor`` :math:`k` (the paper's :math:`k = 3`).
Remark 2 adds a known lower bound :math:`b` on every count inside :math:`\\psi'`.
Line 3, the release itself, is :class:`lib.mechanisms.dirichlet.mechanism.DirichletMechanism`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.dirichlet.special import trigamma_unchecked

#: psi'(1) = pi^2 / 6, the largest value psi'(1 + g) can take when g >= 0.
TRIGAMMA_AT_ONE = np.pi**2 / 6
_MAX_NEWTON_STEPS = 100


class Calibration(NamedTuple):
    """The output of Lines 1-2 of Algorithm 1.

    Attributes
    ----------
    r : ndarray or float
        The scale :math:`r` that multiplies the counts.
    alpha : ndarray or float
        The pseudo-count :math:`\\alpha` added to every coordinate.
    """

    r: np.ndarray | float
    alpha: np.ndarray | float


def _line1_constants(first, first_name, lam, l2_sq, linf, g_factor, count_floor):
    """Validate and broadcast the inputs of Line 1.

    Returns the first argument (``epsilon`` or ``r``), ``lam``, ``linf``,
    ``g_factor``, the factor :math:`K = \\tfrac12\\lambda\\Delta_2^2` and the slope
    :math:`c` with :math:`\\psi'` evaluated at :math:`1 + c r`, where
    :math:`c r = g(r) + b r` (Remarks 1 and 2), all of one shape.
    """
    first, lam, l2_sq, linf, g_factor, count_floor = validation.broadcast(
        **{first_name: validation.positive(first, first_name)},
        lam=validation.order(lam, "lam"),
        l2_sq=validation.positive(l2_sq, "l2_sq"),
        linf=validation.positive(linf, "linf"),
        g_factor=validation.nonnegative(g_factor, "g_factor"),
        count_floor=validation.nonnegative(count_floor, "count_floor"),
    )
    with np.errstate(over="ignore"):
        k = 0.5 * lam * l2_sq
        c = g_factor * (lam - 1) * linf + count_floor
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(c))):
        raise ValueError(
            "lam * l2_sq / 2 or g_factor * (lam - 1) * linf + count_floor overflows double precision "
            f"(lam up to {np.max(lam):g}, l2_sq up to {np.max(l2_sq):g}, linf up to {np.max(linf):g}); "
            "lower them"
        )
    return first, lam, linf, g_factor, k, c


def rdp_epsilon(r: ArrayLike, lam: ArrayLike, l2_sq: ArrayLike = 2.0, linf: ArrayLike = 1.0, *,
                g_factor: ArrayLike = 3.0, count_floor: ArrayLike = 0.0) -> np.ndarray | float:
    """The RDP level that a scale ``r`` attains: the right side of Line 1.

    Parameters
    ----------
    r : array_like
        Scale(s) in :math:`(0, \\infty)`.
    lam : array_like
        Renyi order :math:`\\lambda \\in [1, \\infty)`.
    l2_sq : array_like, default 2.0
        Squared :math:`\\ell_2`-sensitivity :math:`\\Delta_2^2 > 0` (2 for a histogram
        under replace-one neighbours).
    linf : array_like, default 1.0
        :math:`\\ell_\\infty`-sensitivity :math:`\\Delta_\\infty > 0`.
    g_factor : array_like, default 3.0
        :math:`k \\ge 0` in :math:`g(r) = k(\\lambda - 1) r \\Delta_\\infty` (Remark 1);
        Algorithm 1 uses 3, and 0 is Remark 1's closed-form choice :math:`g \\equiv 0`.
    count_floor : array_like, default 0.0
        Remark 2's lower bound :math:`b \\ge 0` on every count :math:`f_i(x)`.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon = \\tfrac12\\lambda r^2\\Delta_2^2\\,\\psi'(1 + g(r) + r b)`.

    Raises
    ------
    ValueError
        If an argument is out of its range, or the level overflows or
        underflows double precision (``r`` near 1e154 or above, or near
        1e-154 or below, at a small order): never ``inf`` or 0.
    """
    r, lam, _, _, k, c = _line1_constants(r, "r", lam, l2_sq, linf, g_factor, count_floor)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x = 1 + c * r
        out = np.asarray(k * r**2 * trigamma_unchecked(x))
        # r**2 underflows (or overflows) below 1e-154 (above 1e154), and c r may overflow: the same
        # product in logs, with psi'(x) = 1/x to double precision where x = 1 + c r is beyond the range
        extreme = (r < 1e-150) | (r > 1e150) | ~np.isfinite(x)
        if np.any(extreme):
            with np.errstate(divide="ignore"):
                log_t = np.where(np.isfinite(x), np.log(trigamma_unchecked(np.where(np.isfinite(x), x, 1.0))),
                                 -(np.log(c) + np.log(r)))
            out[extreme] = np.exp(np.log(k) + 2 * np.log(r) + log_t)[extreme]
    bad = ~np.isfinite(out) | (out <= 0)  # a positive r has a finite positive level: only its rounding fails
    if np.any(bad):
        i = int(np.argmax(bad))
        how = "overflows double precision (above 1.8e308): lower" if not np.isfinite(np.ravel(out)[i]) else \
            "underflows double precision (below 1e-308): raise"
        raise ValueError(f"the RDP level at r = {np.ravel(r)[i]:g}, lam = {np.ravel(lam)[i]:g} {how} r")
    return out[()]


def _solve_line1(epsilon, k, c, r_lo):
    """Line 1 for ``c > 0``: the root ``r`` of ``k r^2 psi'(1 + c r) = epsilon``, elementwise.

    In ``t = log r`` the equation is ``f(t) = log k + 2t + log psi'(1 + c e^t) - log epsilon = 0``
    with ``f`` strictly increasing (Lemma 2) and ``1 <= f'(t) <= 2`` (``x psi''(1+x) /
    psi'(1+x)`` lies in ``[-1, 0]``). The bracket ``[log r_-, log r_+]`` comes from
    eq. (6) (see :func:`calibrate`, which passes ``r_lo``). Newton steps start at the left end; a step that
    leaves the current bracket is replaced by bisection, and the bracket shrinks with
    the sign of ``f``, so the iteration cannot escape or diverge. It stops once every
    Newton step (or the bracket) is below 1e-13 in ``log r``; after a Newton step that
    small the error is of the order of its square, so ``r`` is exact to rounding.
    """
    log_target = np.log(epsilon) - np.log(k)
    lo = np.log(r_lo)  # f(lo) <= 0
    # log r_+, the positive root of k r^2 = epsilon (1 + c r): f(hi) > 0 (hypot avoids overflow)
    with np.errstate(over="ignore", under="ignore"):
        k_eps = k * epsilon
        # sqrt(k epsilon) without under- or overflow of the product (only where it would)
        root = np.where((k_eps > 1e-300) & (k_eps < 1e300), np.sqrt(k_eps), np.sqrt(k) * np.sqrt(epsilon))
        hi = np.log(epsilon * c + np.hypot(epsilon * c, 2 * root)) - np.log(2 * k)
    with np.errstate(over="ignore"):
        representable = np.isfinite(c * np.exp(hi)) & np.isfinite(k * np.exp(2 * hi))
    if not np.all(np.isfinite(hi) & (hi >= lo)):
        i = int(np.argmax(~(np.isfinite(hi) & (hi >= lo))))
        raise ValueError(
            f"epsilon = {epsilon[i]:g} with K = lam * l2_sq / 2 = {k[i]:g} puts the bracket of Line 1 "
            "outside double precision; bring epsilon / (lam * l2_sq) closer to 1"
        )
    if not np.all(representable):
        i = int(np.argmax(~representable))
        raise ValueError(
            f"epsilon = {epsilon[i]:g} (element {i} of the solved entries) with K = lam * l2_sq / 2 = "
            f"{k[i]:g} and slope c = {c[i]:g} puts the solution r of Line 1 beyond double precision "
            "(c r or K r^2 overflows); lower epsilon, or raise l2_sq or lower linf, lam, g_factor "
            "and count_floor"
        )
    # Every entry stops at its own convergence (the entries still moving are
    # carried on alone), so an entry's root does not depend on the others of
    # the batch: a vectorised call returns exactly the values of scalar calls.
    t = lo.copy()
    out = np.empty_like(t)
    todo = np.arange(t.size)
    c, log_target = c.copy(), log_target.copy()
    for _ in range(_MAX_NEWTON_STEPS):
        r = np.exp(t)
        value, slope = trigamma_unchecked(1 + c * r, derivative=True)
        f = 2 * t + np.log(value) - log_target
        lo = np.where(f <= 0, t, lo)
        hi = np.where(f > 0, t, hi)
        step = f / (2 + c * r * slope / value)
        newton = t - step
        inside = (newton >= lo) & (newton <= hi)
        t = np.where(inside, newton, 0.5 * (lo + hi))
        # A step below 1e-13 either stays inside the bracket or the bracket has shrunk
        # below 1e-13 (rounding can put f(log r_-) a hair above zero when c r is tiny).
        # Far from r = 1 (|log r| > 128) 1e-13 is below a few units in the last place of t.
        tol = np.maximum(1e-13, 8 * np.spacing(np.abs(t)))
        done = (np.abs(step) <= tol) | (hi - lo <= tol)
        out[todo[done]] = np.exp(t[done])
        if done.all():
            return out
        keep = ~done
        todo, t, lo, hi, c, log_target = todo[keep], t[keep], lo[keep], hi[keep], c[keep], log_target[keep]
    raise ValueError(  # pragma: no cover - Lemma 2 and the bracket rule this out
        f"Line 1 did not converge in {_MAX_NEWTON_STEPS} steps for epsilon = {epsilon[:5]}; "
        "epsilon, lam, l2_sq and linf are outside the range where it was verified"
    )


def _refuse_target(epsilon):
    """Refuse a privacy guarantee passed as ``epsilon``, naming the calibration that takes one."""
    from lib.privacy.guarantees import Guarantee

    if isinstance(epsilon, Guarantee):
        raise validation.ArgumentTypeError(
            "epsilon of calibrate (Lines 1-2 of Algorithm 1) is an RDP level, a positive real number, "
            f"with the order as lam; got the guarantee {epsilon!r}. To calibrate a mechanism to a "
            "privacy target for a release's shape, use DirichletMechanism.calibrate(target, spec) "
            '(or lib.mechanisms.registry.get("dirichlet").calibrate(target, spec))'
        )


def calibrate(epsilon: ArrayLike, lam: ArrayLike, l2_sq: ArrayLike = 2.0, linf: ArrayLike = 1.0, *,
              g_factor: ArrayLike = 3.0, count_floor: ArrayLike = 0.0) -> Calibration:
    """Lines 1-2 of Algorithm 1: the scale ``r`` and pseudo-count ``alpha``.

    Solves :math:`\\varepsilon = \\tfrac12\\lambda r^2\\Delta_2^2\\,\\psi'(1 + 3(\\lambda-1)
    r\\Delta_\\infty)` for :math:`r` and sets :math:`\\alpha = 1 + 4(\\lambda - 1) r
    \\Delta_\\infty`. The right side is strictly increasing in :math:`r` from 0 to
    infinity (Lemma 2), so the root is unique. It is found in :math:`\\log r` by a
    bracketed Newton method, vectorised over all inputs, inside a bracket that eq. (6)
    guarantees (with :math:`K = \\tfrac12\\lambda\\Delta_2^2` and :math:`\\psi'` evaluated
    at :math:`1 + cr`):

    * :math:`\\psi'(1 + c r) \\le \\psi'(1)` gives :math:`r_- = \\sqrt{\\varepsilon /
      (K\\psi'(1))}` with :math:`\\varepsilon(r_-) \\le \\varepsilon`;
    * :math:`\\psi'(y) > 1/y` gives :math:`r_+`, the positive root of
      :math:`K r^2 = \\varepsilon (1 + c r)`, with :math:`\\varepsilon(r_+) > \\varepsilon`.

    When :math:`c = 0` (:math:`\\lambda = 1`, or ``g_factor = 0`` with no floor) the
    lower end is the exact solution, the closed form of Remark 1.

    Parameters
    ----------
    epsilon : array_like
        Target RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : array_like
        Renyi order :math:`\\lambda \\in [1, \\infty)`.
    l2_sq, linf, g_factor, count_floor : array_like
        As in :func:`rdp_epsilon`.

    Returns
    -------
    Calibration
        Named tuple ``(r, alpha)``, broadcast over the inputs; floats for scalar input.

    Examples
    --------
    >>> from lib import calibrate, rdp_epsilon
    >>> cal = calibrate(1.0, lam=2)
    >>> round(float(rdp_epsilon(cal.r, lam=2)), 12)
    1.0

    A privacy target and a release's shape go to a mechanism's own calibration instead:

    >>> from lib.mechanisms.protocol import RenyiDP
    >>> try:
    ...     calibrate(RenyiDP(5, 1.0), lam=5)
    ... except TypeError as error:
    ...     print(str(error).rsplit(", use ", 1)[1])
    DirichletMechanism.calibrate(target, spec) (or lib.mechanisms.registry.get("dirichlet").calibrate(target, spec))
    """
    _refuse_target(epsilon)
    epsilon, lam, linf, g_factor, k, c = _line1_constants(
        epsilon, "epsilon", lam, l2_sq, linf, g_factor, count_floor
    )
    with np.errstate(over="ignore", under="ignore"):
        r = np.array(np.sqrt(epsilon / (k * TRIGAMMA_AT_ONE)))  # exact where c == 0
        extreme = ~np.isfinite(r) | (r < 1e-150)
        if np.any(extreme):  # the ratio over- or underflows: the same root in logs
            r[extreme] = np.exp(0.5 * (np.log(epsilon) - np.log(k) - np.log(TRIGAMMA_AT_ONE)))[extreme]
    solve = c > 0
    if np.any(solve):
        r[solve] = _solve_line1(epsilon[solve], k[solve], c[solve], r[solve])
    with np.errstate(over="ignore"):
        alpha = 1 + (g_factor + 1) * (lam - 1) * r * linf
    bad = ~(np.isfinite(r) & (r > 0) & np.isfinite(alpha))
    if np.any(bad):
        i = np.unravel_index(int(np.argmax(bad)), np.shape(bad)) if np.ndim(bad) else ()
        where = f" at index {i[0] if len(i) == 1 else i}" if i else ""
        raise ValueError(
            f"epsilon = {float(epsilon[i]):g}, lam = {float(lam[i]):g}, l2_sq = {float(k[i] * 2 / lam[i]):g} "
            f"and linf = {float(linf[i]):g}{where} put r = {float(r[i]):g} or alpha = {float(alpha[i]):g} "
            "outside double precision (r must be positive and finite); bring epsilon / (lam * l2_sq) "
            "closer to 1"
        )
    if r.ndim == 0:
        return Calibration(float(r), float(alpha))
    return Calibration(r, alpha)
