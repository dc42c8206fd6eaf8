"""Many of Gohari et al.'s calibrations at once: the lockstep searches of the experiment grids.

:func:`gohari_calibrate_many` runs the searches of many releases and targets in
lockstep, for the experiment grids, which need some hundred of them. Each
problem takes the steps of its scalar search in :mod:`lib.mechanisms.gohari` (the root in
:math:`r` of :func:`lib.mechanisms.gohari.gohari_calibrate`, and inside every step the
root in :math:`\\gamma` of its union bound), so the results are those of
:func:`lib.mechanisms.gohari.gohari_calibrate` (to the last bits of ``scipy.special`` on
arrays). A problem that leaves the vectorised path is solved by the scalar
search alone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib.mechanisms.gohari.guarantee import gohari_calibrate
from lib.mechanisms.gohari.core import (GAMMA_RTOL, MAX_STEPS, NEGLIGIBLE, R_RTOL, U_NODES, U_WEIGHTS, GohariGuarantee,
                                         GohariParameters, check_delta, check_setting, check_target, epsilon_hat_at,
                                         params, solve_gamma, vertices)


def _union_tail_rows(gamma, a):
    """:func:`lib.mechanisms.gohari.core.union_tail` with one threshold per problem: ``gamma`` (n,), ``a`` (n, V, P) -> (n, V).

    The same arithmetic, entry by entry, as :func:`lib.mechanisms.gohari.core.union_tail` of problem
    ``i`` at ``gamma[i]``.
    """
    a0 = a.sum(axis=2, keepdims=True)
    tails = special.betainc(a, a0 - a, gamma[:, None, None])
    total = tails.sum(axis=2)
    if a.shape[2] == 2:
        return total
    i, j, l = _PAIRS
    swap = a[:, :, j] < a[:, :, i]
    ii = np.where(swap, j, i)
    jj = np.where(swap, i, j)
    ai, aj, al = np.take_along_axis(a, ii, axis=2), np.take_along_axis(a, jj, axis=2), a[:, :, l]
    ti, tj = np.take_along_axis(tails, ii, axis=2), np.take_along_axis(tails, jj, axis=2)
    need = (np.minimum(ti, tj) > NEGLIGIBLE * total[:, :, None]) & (ti > 1e-130)
    if np.any(need):
        g = np.broadcast_to(gamma[:, None, None], ti.shape)
        aib, ajb, alb, a0b = ai[need], aj[need], al[need], np.broadcast_to(a0, ai.shape)[need]
        tin = ti[need]
        y = special.betaincinv(aib[:, None], (a0b - aib)[:, None], tin[:, None] * U_NODES)
        inner = special.betainc(ajb[:, None], alb[:, None], g[need][:, None] / (1 - y))
        pair = np.zeros(need.shape)
        pair[need] = tin * (inner @ U_WEIGHTS)
        total = total - pair.sum(axis=2)
    return total


_PAIRS = np.array([[0, 1, 2], [0, 2, 1], [1, 2, 0]]).T


def _illinois_many(func, lo, f_lo, hi, f_hi, *, xtol, ftol):
    """:func:`lib.mechanisms.gohari.core.illinois` for many increasing functions at once, each taking its own steps.

    ``func(t, which)`` returns the values of the functions ``which`` at ``t``
    and a mask of those it could evaluate (the others are given up). Returns
    ``(t, failed)``: the root of each function, and which ones were given up or
    did not converge in the 200 steps of :func:`lib.mechanisms.gohari.core.illinois` (their ``t`` is NaN).
    """
    lo, hi, f_lo, f_hi = (np.array(x, float) for x in (lo, hi, f_lo, f_hi))
    t_out = np.where(f_lo == 0, lo, np.where(f_hi == 0, hi, np.nan))
    done = (f_lo == 0) | (f_hi == 0)
    failed = np.zeros(lo.shape, bool)
    side = np.zeros(lo.shape, int)
    for _ in range(200):
        act = np.flatnonzero(~done)
        if not act.size:
            return t_out, failed
        l, h, fl, fh, sd = lo[act], hi[act], f_lo[act], f_hi[act], side[act]
        with np.errstate(invalid="ignore", divide="ignore"):
            t = h - fh * (h - l) / (fh - fl)
        t = np.where((l < t) & (t < h), t, 0.5 * (l + h))
        f, ok = func(t, act)
        failed[act[~ok]] = True
        done[act[~ok]] = True
        converged = ok & (np.abs(f) <= ftol)
        t_out[act[converged]] = t[converged]
        done[act[converged]] = True
        go = ok & ~converged
        neg = f < 0
        low, high = go & neg, go & ~neg
        l, fl = np.where(low, t, l), np.where(low, f, fl)
        fh = np.where(low & (sd == -1), 0.5 * fh, fh)
        h, fh = np.where(high, t, h), np.where(high, f, fh)
        fl = np.where(high & (sd == 1), 0.5 * fl, fl)
        sd = np.where(low, -1, np.where(high, 1, sd))
        lo[act], hi[act], f_lo[act], f_hi[act], side[act] = l, h, fl, fh, sd
        narrow = go & (h - l <= xtol)
        t_out[act[narrow]] = np.where(np.abs(fl) <= np.abs(fh), l, h)[narrow]
        done[act[narrow]] = True
    failed |= ~done
    return t_out, failed


def _solve_gamma_many(delta, verts, two, pars, d):
    """:func:`lib.mechanisms.gohari.core.solve_gamma` of many releases of one kind, vectorised; returns ``(gamma, failed)``.

    ``delta``: the target of each release (1-D).

    A release whose bracket needs the doubling, halving or underflow steps of
    :func:`lib.mechanisms.gohari.core.solve_gamma` (rare) is solved by it, alone; one that it cannot
    solve is marked ``failed``.
    """
    n = verts.shape[0]
    upper = 0.5 if two else 1 / 3
    g_max = upper * (1 - 1e-12)
    tiny = np.finfo(float).tiny
    log_delta = np.log(delta)

    def excess(t, which):
        v = _union_tail_rows(np.exp(t), verts[which]).max(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(v > 0, np.log(v) - log_delta[which], -np.inf)

    a = verts.min(axis=(1, 2))
    a0 = verts.sum(axis=2)[:, 0]
    hi = np.minimum(special.betaincinv(a, a0 - a, delta) * (1 + 1e-9), g_max)
    lo = np.minimum(np.maximum(special.betaincinv(a, a0 - a, delta / verts.shape[2]) * (1 - 1e-9), tiny), hi)
    everyone = np.arange(n)
    f_hi = excess(np.log(hi), everyone)
    f_lo = excess(np.log(lo), everyone)
    alone = np.isnan(f_hi) | (f_hi < 0) | (f_lo > 0) | ~np.isfinite(f_lo) | np.isnan(hi) | np.isnan(lo)
    gamma = np.full(n, np.nan)
    failed = np.zeros(n, bool)
    for i in np.flatnonzero(alone):
        try:
            gamma[i] = solve_gamma(float(delta[i]), GohariParameters(*(float(p[i]) for p in pars)), int(d[i]))
        except ValueError:
            failed[i] = True
    rest = np.flatnonzero(~alone)
    if rest.size:
        t, bad = _illinois_many(lambda t, which: (excess(t, rest[which]), np.ones(t.shape, bool)),
                                np.log(lo[rest]), f_lo[rest], np.log(hi[rest]), f_hi[rest],
                                xtol=GAMMA_RTOL, ftol=1e-13)
        gamma[rest] = np.exp(t)
        failed[rest] = bad
    return gamma, failed


def gohari_calibrate_many(epsilon_hats: ArrayLike, delta: float, *, lam: float, n_total: float, d: int,
                          min_count: int = 0) -> list:
    """:func:`lib.mechanisms.gohari.gohari_calibrate` of many releases at once: a list of GohariGuarantee or ValueError.

    Problem ``i`` is ``gohari_calibrate(epsilon_hats[i], delta[i], lam=lam,
    n_total=n_total[i], d=d[i])`` (``delta``, ``n_total`` and ``d`` broadcast
    against ``epsilon_hats``). The searches of all problems run in lockstep
    (the root in :math:`r` of each, and inside every step the roots in
    :math:`\\gamma`), each problem taking the steps of its scalar search, so the
    results are those of :func:`lib.mechanisms.gohari.gohari_calibrate` (to the last bits of
    ``scipy.special`` on arrays). A problem that leaves the vectorised path
    (invalid arguments, an unreachable target, a bracket that needs the rare
    steps) is solved by :func:`lib.mechanisms.gohari.gohari_calibrate` alone; where that raises, its
    ``ValueError`` is the problem's entry.
    """
    targets = np.asarray(epsilon_hats, float).ravel()
    n = targets.size
    sizes = np.broadcast_to(np.asarray(d).ravel(), (n,))
    deltas = np.broadcast_to(np.asarray(delta, float).ravel(), (n,))
    totals = np.broadcast_to(np.asarray(n_total, float).ravel(), (n,))
    out = [None] * n
    fast = []
    checked_delta, checked_total = np.empty(n), np.empty(n)
    for i in range(n):
        try:  # the checks of gohari_calibrate, problem by problem
            check_target(targets[i])
            checked_delta[i] = check_delta(deltas[i])
            _, lam_, checked_total[i], _, m = check_setting(1.0, lam, totals[i], sizes[i], min_count)
            fast.append(i)
        except ValueError:
            out[i] = None
    for two in (True, False):
        group = np.array([i for i in fast if (sizes[i] == 2) == two], int)
        if group.size:
            found = _calibrate_group(targets[group], checked_delta[group], lam_, checked_total[group],
                                     np.asarray(sizes[group]), m, two)
            for i, res in zip(group, found):
                out[i] = res
    for i in range(n):
        if out[i] is None:
            try:
                out[i] = gohari_calibrate(targets[i], float(deltas[i]), lam=lam, n_total=float(totals[i]),
                                          d=int(sizes[i]), min_count=min_count)
            except ValueError as exc:
                out[i] = exc
    return out


def _calibrate_group(targets, delta, lam, n_total, d, m, two):
    """The lockstep search of :func:`gohari_calibrate_many` for releases of one kind; None where given up."""
    n = targets.size
    log_target = np.log(targets)
    d = d.astype(int)
    seen = [dict() for _ in range(n)]
    broken = np.zeros(n, bool)

    def gap(t, which):
        r = np.exp(t)
        par = params(r, lam, n_total[which], d[which], m)
        gamma, failed = _solve_gamma_many(delta[which], vertices(par, two), two, par, d[which])
        with np.errstate(invalid="ignore", divide="ignore"):
            value = epsilon_hat_at(gamma, r, par)
            f = np.log(value) - log_target[which]
        for w, ti, v, g, ri, al in zip(which, t, value, gamma, r, par.alpha):
            seen[w][ti] = GohariGuarantee(float(v), float(g), float(ri), float(al))
        broken[which[failed]] = True
        return f, ~failed

    everyone = np.arange(n)
    f0, ok = gap(np.zeros(n), everyone)
    t = -f0
    f, ok2 = gap(t, everyone)
    live = ok & ok2
    direction = np.where(f < 0, 1.0, -1.0)
    step = np.full(n, np.log(2.0))
    t_next, f_next = t.copy(), f.copy()
    growing = live.copy()
    for _ in range(MAX_STEPS):
        act = np.flatnonzero(growing)
        if not act.size:
            break
        tn = t[act] + direction[act] * step[act]
        inside = (np.log(1e-300) < tn) & (tn < np.log(1e12))
        live[act[~inside]] = growing[act[~inside]] = False
        act, tn = act[inside], tn[inside]
        fn, ok = gap(tn, act)
        live[act[~ok]] = growing[act[~ok]] = False
        act, tn, fn = act[ok], tn[ok], fn[ok]
        t_next[act], f_next[act] = tn, fn
        crossed = (fn < 0) != (f[act] < 0)
        growing[act[crossed]] = False
        move = act[~crossed]
        t[move], f[move] = t_next[move], f_next[move]
        step[move] *= 2
    live &= ~growing
    idx = np.flatnonzero(live)
    results = [None] * n
    if not idx.size:
        return results
    first = t[idx] < t_next[idx]
    t_lo, t_hi = np.where(first, t[idx], t_next[idx]), np.where(first, t_next[idx], t[idx])
    f_lo, f_hi = np.where(first, f[idx], f_next[idx]), np.where(first, f_next[idx], f[idx])
    root, failed = _illinois_many(lambda x, which: gap(x, idx[which]), t_lo, f_lo, t_hi, f_hi,
                                  xtol=R_RTOL, ftol=1e-12)
    root = np.where(failed, np.nan, root)
    for _ in range(MAX_STEPS):  # never a guarantee above the target
        above = [k for k, i in enumerate(idx) if not failed[k] and not broken[i] and results[i] is None
                 and seen[i][root[k]].epsilon_hat > targets[i]]
        for k, i in enumerate(idx):
            if not failed[k] and not broken[i] and results[i] is None and k not in above:
                results[i] = seen[i][root[k]]
        if not above:
            break
        above = np.array(above)
        root[above] -= R_RTOL
        gap(root[above], idx[above])
    return [None if broken[i] else res for i, res in enumerate(results)]
