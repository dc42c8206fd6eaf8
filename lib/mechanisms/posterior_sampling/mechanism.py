"""Renyi-DP posterior sampling for the Dirichlet-categorical model (Geumlek, Song and Chaudhuri 2017).

A histogram of counts :math:`c` with a Dirichlet prior of pseudo-counts :math:`a`
has the posterior :math:`\\mathrm{Dir}(a + c)`. Geumlek et al. release one draw

* from the true posterior :math:`\\mathrm{Dir}(a + c)` (their Algorithm 1,
  :class:`TruePosterior`), RDP only below the order
  :math:`\\lambda^* = 1 + \\min_i a_i` (their Theorem 12 and Corollary 1);
* from the *diffused* posterior :math:`\\mathrm{Dir}(a + r c)`, the data scaled
  by :math:`r \\in (0, 1]` (Algorithm 2, Theorem 13, :class:`DiffusedPosterior`);
* from the *concentrated* posterior :math:`\\mathrm{Dir}(a/m + c)`, the prior
  divided by :math:`m \\in (0, 1]` (Algorithm 3, Theorem 14,
  :class:`ConcentratedPosterior`).

All three are :math:`\\mathrm{Dir}(b + s c)` with base :math:`b` and data scale
:math:`s`: :math:`(a, 1)`, :math:`(a, r)` and :math:`(a/m, 1)`. The level a scale
attains is the exact worst case of :math:`D_\\lambda` (Appendix E's closed form,
:func:`lib.mechanisms.dirichlet.divergence.renyi_divergence_dirichlet`) over neighbouring data sets,
:func:`worst_case`; :func:`calibrate_scale` inverts it by a bracketing search in
:math:`\\log r` (or :math:`\\log m`) down to adjacent floating-point numbers.

Why a few candidates suffice. Moving one record from bin :math:`i` to bin
:math:`j` changes only :math:`(u_i, u_j)` and keeps the total, so the log-Beta
terms of every other coordinate and of the total cancel in eq. (16):
:math:`D_\\lambda` equals the divergence of the two-coordinate Beta laws
:math:`\\mathrm{Beta}(u_i, u_j)` and :math:`\\mathrm{Beta}(u_i - s, u_j + s)`.
Adding a record to bin :math:`j` likewise reduces to
:math:`\\mathrm{Beta}(u_j, u_0 - u_j)` against :math:`\\mathrm{Beta}(u_j + s,
u_0 - u_j)`. The worst case over the reachable counts is then a maximum over a
triangle of two integers; it is taken at the triangle's vertices (Geumlek et
al.'s Theorem 15 gives convexity along the move direction; the whole claim is
checked against brute force over every data set in ``tests/``).

Neighbours (replace-one). One vector with a public total :math:`N` (a class
count vector, a root node's table): a record moves inside the vector, Geumlek
et al.'s fixed-size neighbours. A table of several rows whose totals are
private (naive Bayes attribute tables, network tables): a record moves inside
one row (row total anywhere in :math:`[1, N]`), or leaves one row and enters
another; the rows are released independently, so the divergences of the two
rows add: one removal plus one addition (:func:`worst_case` with ``rows >= 2``).
"""

from __future__ import annotations

import collections.abc
import functools
import itertools
import math

import numpy as np

from lib import validation
from lib.mechanisms.batching import batchable, log_views, release_buffer
from lib.privacy.accounting import dp_to_rdp, min_order
from lib.mechanisms.dirichlet.divergence import lgamma_diff_fused, renyi_divergence_dirichlet
from lib.privacy.neighbours import all_neighbours
from lib.mechanisms.protocol import Mechanism, ModelCalibration, NotPrivate, ReleaseSpec, RenyiDP, register

#: Default prior pseudo-count of every cell: the uniform Dirichlet prior.
DEFAULT_PRIOR = 1.0
#: Steps of the search in log r before giving up (adjacent floats are reached in well under 200).
_MAX_BISECTION = 2000
#: Smallest log-scale tried when bracketing (r = e^-700 is ~1e-304).
_LOG_SCALE_FLOOR = -700.0


# ----------------------------------------------------------------------------- inputs

#: Largest number of (candidate pair x leading entry) cells that :func:`worst_case` and
#: :func:`calibrate_scale` evaluate at once (a prior with thousands of distinct values
#: has millions of ordered pairs; each calibration step evaluates all of them).
MAX_CANDIDATE_CELLS = 10**7
#: Largest number of ``d x d(d - 1)`` corner-pair evaluations of :func:`geumlek_bound`:
#: d <= 63 (d = 60 takes about two seconds; it ran for minutes before the loop was vectorised).
MAX_BOUND_PAIRS = 250_000
#: Largest number of tables that :func:`brute_force_worst_case` enumerates.
MAX_BRUTE_FORCE_TABLES = 10**5
#: Largest number of quadrature nodes of :func:`gaussian_posterior_kl` (an O(nodes^3) eigenproblem).
MAX_NODES = 2000
#: Largest number of orders on the grid of :meth:`_PosteriorSampler._calibrate_approximate`.
MAX_ORDERS = 10**4
#: The kinds of release: the data scaled (``"diffused"``) or the prior scaled (``"concentrated"``).
KINDS = ("diffused", "concentrated")


def _prior(prior, d=None):
    """The prior pseudo-counts as a vector of length ``d`` (a scalar is repeated)."""
    a = validation.positive(prior, "prior")
    if a.ndim == 0:
        if d is None:
            raise ValueError("a scalar prior needs the number of cells d")
        return np.full(validation.cells(validation.integer(d, "d", 2), "d"), float(a))
    if a.ndim != 1 or a.size < 2 or (d is not None and a.size != validation.integer(d, "d", 2)):
        raise ValueError(f"prior must be a scalar or a vector of length d >= 2; got shape {a.shape}"
                         + ("" if d is None else f" with d = {d}"))
    return a


def _kind(kind):
    """``kind`` if it is one of :data:`KINDS`; else a ValueError."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be 'diffused' or 'concentrated'; got {kind!r:.60}")
    return kind


def _no_nan(value, names):
    """``value`` if it holds no NaN; else a ValueError naming the arguments that led there.

    The exact divergence is finite or ``inf``; NaN appears only where an
    intermediate overflows (an order near the largest double), and a NaN must
    never be read as a level (``max(0.0, nan)`` is 0).
    """
    if np.isnan(value).any():
        raise ValueError(f"the divergence is not computable at these arguments ({names}): an intermediate "
                         "overflows; use an order lam below 1e300")
    return value


def _finite(*params, names):
    """A ValueError naming ``names`` unless every Dirichlet parameter in ``params`` is finite."""
    if not all(np.isfinite(p).all() for p in params):
        raise ValueError(f"the Dirichlet parameters overflow at these arguments ({names}): prior / scale or "
                         "scale times the counts is beyond the double range")


_NO_INDEX = object()


def _spec(spec, index=_NO_INDEX):
    """``(shapes, n_total)`` of a :class:`lib.mechanisms.protocol.ReleaseSpec` (and ``shapes[index]``), checked."""
    if not isinstance(spec, ReleaseSpec):
        raise validation.ArgumentTypeError(f"spec must be a lib.mechanisms.protocol.ReleaseSpec; got {type(spec).__name__}")
    shapes = tuple(spec.shapes) if isinstance(spec.shapes, (tuple, list)) else None
    if not shapes:
        raise ValueError(f"spec.shapes must be a non-empty sequence of (rows, d); got {spec.shapes!r:.60}")
    checked = []
    for k, shape in enumerate(shapes):
        if not isinstance(shape, (tuple, list)) or len(shape) != 2:
            raise ValueError(f"spec.shapes[{k}] must be a pair (rows, d); got {shape!r:.60}")
        checked.append((validation.integer(shape[0], f"spec.shapes[{k}] rows"),
                        validation.integer(shape[1], f"spec.shapes[{k}] d", 2)))
    n_total = validation.integer(spec.n_total, "spec.n_total")
    if index is _NO_INDEX:
        return tuple(checked), n_total
    index = validation.integer(index, "index", 0, len(checked) - 1)
    return tuple(checked), n_total, checked[index]


def _beta(x, y):
    return np.stack(np.broadcast_arrays(x, y), axis=-1)


# ----------------------------------------------------------------------------- divergences of one change


def _change_inputs(scale, lam, **named):
    """Validated ``scale`` (positive), ``lam`` (order above 1) and named arrays (``name=(value, positive)``)."""
    out = {name: (validation.positive(v, name) if pos else validation.nonnegative(v, name))
           for name, (v, pos) in named.items()}
    out["scale"] = validation.positive(scale, "scale")
    out["lam"] = validation.order(lam, "lam", strict=True)
    validation.broadcast(**out)
    return out


def move_divergence(base_i, base_j, x, y, scale, lam):
    """:math:`D_\\lambda` when one record moves from bin :math:`i` to bin :math:`j`.

    With :math:`u = b + s c`, the release :math:`\\mathrm{Dir}(u)` against
    :math:`\\mathrm{Dir}(u - s e_i + s e_j)`; only :math:`u_i = b_i + s x` and
    :math:`u_j = b_j + s y` matter (``x = c_i >= 1``, ``y = c_j >= 0``), so this
    is the divergence of :math:`\\mathrm{Beta}(u_i, u_j)` from
    :math:`\\mathrm{Beta}(u_i - s, u_j + s)`, eq. (16) of Appendix E. Broadcasts.

    ``base_i, base_j`` must be positive, ``x, y`` non-negative, ``scale`` positive,
    ``lam`` in :math:`(1, \\infty)`, and the moved record must exist:
    :math:`u_i - s = b_i + s(x - 1) > 0` (with ``x = 0`` the bases may already
    include the data).
    """
    v = _change_inputs(scale, lam, base_i=(base_i, True), base_j=(base_j, True), x=(x, False), y=(y, False))
    s = v["scale"]
    ui, uj = v["base_i"] + s * v["x"], v["base_j"] + s * v["y"]
    _finite(ui, uj + s, names="base_i, base_j, x, y, scale")
    if not np.all(ui - s > 0):
        raise ValueError("x must leave a record to move: base_i + scale * (x - 1) must be positive; got "
                         f"{float(np.min(ui - s)):g}")
    return _no_nan(renyi_divergence_dirichlet(_beta(ui, uj), _beta(ui - s, uj + s), v["lam"]), "lam")


def add_divergence(base_j, base_total, c_j, n, scale, lam):
    """:math:`D_\\lambda(\\mathrm{Dir}(u) \\| \\mathrm{Dir}(u + s e_j))`: one record added to bin :math:`j`.

    ``c_j <= n`` are the bin's count and the row total before the addition; the
    divergence is that of :math:`\\mathrm{Beta}(u_j, u_0 - u_j)` from
    :math:`\\mathrm{Beta}(u_j + s, u_0 - u_j)`. Broadcasts. ``base_total`` (the
    prior's total) must exceed ``base_j``.
    """
    v = _change_inputs(scale, lam, base_j=(base_j, True), base_total=(base_total, True), c_j=(c_j, False),
                       n=(n, False))
    uj, rest = _row_split(v["base_j"], v["base_total"], v["c_j"], v["n"], v["scale"], "base_j", "c_j")
    _finite(uj + v["scale"], rest, names="base_j, base_total, c_j, n, scale")
    return _no_nan(renyi_divergence_dirichlet(_beta(uj, rest), _beta(uj + v["scale"], rest), v["lam"]),
                   "lam")


def remove_divergence(base_i, base_total, c_i, n, scale, lam):
    """:math:`D_\\lambda(\\mathrm{Dir}(u) \\| \\mathrm{Dir}(u - s e_i))`: one record removed from bin :math:`i` (``c_i >= 1``).

    ``c_i <= n``; ``base_total`` must exceed ``base_i``, and the removed record
    must exist: :math:`b_i + s(c_i - 1) > 0`.
    """
    v = _change_inputs(scale, lam, base_i=(base_i, True), base_total=(base_total, True), c_i=(c_i, False),
                       n=(n, False))
    ui, rest = _row_split(v["base_i"], v["base_total"], v["c_i"], v["n"], v["scale"], "base_i", "c_i")
    _finite(ui, rest, names="base_i, base_total, c_i, n, scale")
    if not np.all(ui - v["scale"] > 0):
        raise ValueError("c_i must leave a record to remove: base_i + scale * (c_i - 1) must be positive; got "
                         f"{float(np.min(ui - v['scale'])):g}")
    return _no_nan(renyi_divergence_dirichlet(_beta(ui, rest), _beta(ui - v["scale"], rest), v["lam"]),
                   "lam")


def _row_split(base, base_total, c, n, scale, base_name, count_name):
    """``(u_k, u_0 - u_k)`` of a row with ``c`` of its ``n`` records in bin ``k``, checked."""
    if not np.all(base_total > base):
        raise ValueError(f"base_total must exceed {base_name} (the prior's total includes the other cells)")
    if not np.all(c <= n):
        raise ValueError(f"{count_name} must be at most n (the row's total)")
    return base + scale * c, base_total - base + scale * (n - c)


# ----------------------------------------------------------------------------- worst cases


def _pairs(base):
    """Distinct ``(b_i, b_j)`` over ordered pairs ``i != j``, and distinct ``b_j``.

    Built from the distinct values (a value paired with itself only if it occurs
    twice), in the lexicographic order of ``np.unique(..., axis=0)``: no ``d x d``
    array, so a scalar prior over many cells costs nothing.
    """
    values, counts = np.unique(base, return_counts=True)
    k = values.size
    validation.cells(k * k, "the ordered pairs of distinct prior values", MAX_CANDIDATE_CELLS,
                    f" ({k} distinct values)")
    same = np.eye(k, dtype=bool)
    i, j = np.nonzero(~same | (same & (counts > 1)[:, None]))
    return np.stack([values[i], values[j]], axis=1), values


def _move_vertices(n_total, d, rows):
    """Vertices ``(x, y)`` of the reachable (c_i, c_j) of a move: x >= 1, y >= 0, x + y <= N (= N if fixed)."""
    N = n_total
    if rows == 1 and d == 2:
        return np.array([[N, 0], [1, N - 1]], float)
    return np.array([[1, 0], [N, 0], [1, N - 1]], float)


class _Candidates:
    """The pairs that can attain the worst case (the vertices of :func:`worst_case`), built once.

    Moves: every distinct ``(a_i, a_j)`` at every vertex ``(x, y)``. For tables of
    several rows, a record leaving one row and entering another: the removal at
    ``(c_i, n)`` in {(1, 1), (1, N), (N, N)} and the addition at ``(c_j, n)`` in
    {(0, 0), (0, N), (N, N)}, each maximised on its own (the sum of the two maxima
    ignores that the rows share the N records: an upper bound, tested against
    brute force and within a few per cent of it).
    """

    def __init__(self, a, n_total, rows):
        pairs, singles = _pairs(a)
        self.size = 3 * len(pairs) + (6 * singles.size if rows > 1 else 0)
        xy = _move_vertices(n_total, a.size, rows)
        k = len(xy)
        # columns: base of the first coordinate, base of the second, count x, count y
        self.move = np.column_stack([np.repeat(pairs[:, 0], k), np.repeat(pairs[:, 1], k),
                                     np.tile(xy[:, 0], len(pairs)), np.tile(xy[:, 1], len(pairs))])
        self.rows = rows
        if rows > 1:
            N, total = n_total, a.sum()
            add_v = np.array([[0, 0], [0, N], [N, N]], float)
            rem_v = np.array([[1, 1], [1, N], [N, N]], float)
            b = np.repeat(singles, 3)
            # (b, rest of the base) and (count, rest of the row)
            self.add = np.column_stack([b, total - b, np.tile(add_v[:, 0], singles.size),
                                        np.tile(add_v[:, 1] - add_v[:, 0], singles.size)])
            self.remove = np.column_stack([b, total - b, np.tile(rem_v[:, 0], singles.size),
                                           np.tile(rem_v[:, 1] - rem_v[:, 0], singles.size)])


def _evaluate(cand, scale, lam, kind):
    """Move and cross-row worst cases for arrays ``scale`` and ``lam`` of one shape: one divergence call."""
    s = scale[..., None]
    b_div, step = (1.0, s) if kind == "diffused" else (s, 1.0)

    def beta(table):
        return (table[:, 0] / b_div + step * table[:, 2], table[:, 1] / b_div + step * table[:, 3])

    with np.errstate(over="ignore"):  # an overflow is refused below (_finite)
        ui, uj = beta(cand.move)
        u = [np.stack([ui, uj], -1)]
        v = [np.stack([ui - step, uj + step], -1)]
        if cand.rows > 1:
            for table, sign in ((cand.add, 1.0), (cand.remove, -1.0)):
                x, rest = beta(table)
                u.append(np.stack([x, rest], -1))
                v.append(np.stack([x + sign * step, rest], -1))
    lead = np.shape(scale)
    validation.cells(cand.size * max(int(np.prod(lead)), 1), "the candidate pairs times the scales and orders",
                    MAX_CANDIDATE_CELLS)
    u, v = (np.concatenate([np.broadcast_to(x, lead + x.shape[-2:]) for x in z], axis=-2) for z in (u, v))
    _finite(u, v, names="prior, scale, n_total")
    div = renyi_divergence_dirichlet(u, v, lam[..., None])
    m = len(cand.move)
    move = div[..., :m].max(axis=-1)
    if cand.rows == 1:
        return move, np.zeros_like(move)
    k = len(cand.add)
    return move, div[..., m:m + k].max(axis=-1) + div[..., m + k:].max(axis=-1)


# ----------------------------------------------------------------------------- the search's evaluator
#
# The calibration evaluates the worst case some 60-70 times per target, each time over a few
# dozen Beta pairs: the cost is Python-level calls, not arithmetic. The functions below compute
# exactly what _evaluate computes (the same operations on the same numbers, value by value:
# tests/test_speed_equivalence.py asserts equality against _evaluate) with one log-Gamma
# difference call per evaluation instead of four, no re-validation of arrays built here, and
# candidate sets of several table shapes stacked into one array.


def _beta_divergence(ui, uj, vi, vj, lam):
    """``renyi_divergence_dirichlet(stack([ui, uj]), stack([vi, vj]), lam)`` for flat arrays of one shape.

    The arguments are built by the search (positive, broadcast, ``lam > 1``), so
    nothing is re-validated; the divergence is ``inf`` where eq. (16) diverges,
    as there.
    """
    di, dj = ui - vi, uj - vj
    m = lam - 1
    finite = (ui + m * di > 0) & (uj + m * dj > 0)
    out = np.full(lam.shape, np.inf)
    if not finite.all():
        ui, uj, di, dj, m = ui[finite], uj[finite], di[finite], dj[finite], m[finite]
    n = ui.size
    a = np.concatenate([ui, uj, ui + uj])
    dl = np.concatenate([di, dj, di + dj])
    m3 = np.concatenate([m, m, m])
    r = lgamma_diff_fused(np.concatenate([a, a]), np.concatenate([-dl, m3 * dl]))
    e = r[:3 * n] + r[3 * n:] / m3
    with np.errstate(invalid="ignore"):
        difference = (e[:n] + e[n:2 * n]) - e[2 * n:]
    if np.isnan(difference).any():  # inf - inf: (lam - 1) delta overflowed
        bad = int(np.flatnonzero(np.isnan(difference))[0])
        raise ValueError(f"lam = {lam[finite][bad]:g} puts the divergence outside double precision for these u and v "
                         "(an intermediate overflows); use a smaller order")
    out[finite] = np.maximum(difference, 0.0)
    return out


class _Stack:
    """Candidate sets (:class:`_Candidates`) of several table shapes, all with one row or all with several.

    Each table is padded to a common length by repeating its last row, which
    leaves every maximum over candidates unchanged.
    """

    def __init__(self, sets):
        self.cross = sets[0].rows > 1

        def pad(tables):
            k = max(len(t) for t in tables)
            return np.stack([np.concatenate([t, np.repeat(t[-1:], k - len(t), axis=0)]) for t in tables])

        self.move = pad([c.move for c in sets])
        if self.cross:
            self.add = pad([c.add for c in sets])
            self.remove = pad([c.remove for c in sets])


def _evaluate_stacked(stack, which, scale, lam, kind):
    """:func:`_evaluate` for 1-D ``scale`` and ``lam``, target ``k`` on candidate set ``which[k]`` of ``stack``.

    Value by value what :func:`_evaluate` returns for each target on its own set
    (the same operations on the same numbers); inputs that overflow or leave
    the domain go through :func:`_evaluate` for its errors.
    """
    s = scale[:, None]
    b_div, step = (1.0, s) if kind == "diffused" else (s, 1.0)

    def beta(table):
        t = table[which]
        return t[..., 0] / b_div + step * t[..., 2], t[..., 1] / b_div + step * t[..., 3]

    with np.errstate(over="ignore", invalid="ignore"):
        ui, uj = beta(stack.move)
        parts = [(ui, uj, ui - step, uj + step)]
        if stack.cross:
            x, rest = beta(stack.add)
            parts.append((x, rest, x + step, rest))
            x, rest = beta(stack.remove)
            parts.append((x, rest, x - step, rest))
    sizes = [p[0].shape[1] for p in parts]
    lams = np.broadcast_to(lam[:, None], (lam.size, sum(sizes)))
    flat = [np.concatenate([p[k] for p in parts], axis=1).ravel() for k in range(4)]
    if not all(np.isfinite(f).all() and (f > 0).all() for f in flat):
        return None  # the caller evaluates set by set through _evaluate (its errors)
    div = _beta_divergence(*flat, lams.ravel()).reshape(lam.size, -1)
    m = sizes[0]
    move = div[:, :m].max(axis=-1)
    if not stack.cross:
        return move, np.zeros_like(move)
    k = sizes[1]
    return move, div[:, m:m + k].max(axis=-1) + div[:, m + k:].max(axis=-1)


def _search(sets, set_of, eps, L, kind, *, reference=False, prune=None):
    """Largest feasible scales: target ``k`` (level ``eps[k]``, order ``L[k]``) on candidate set ``sets[set_of[k]]``.

    The search of :func:`calibrate_scale`, for all targets at once (each
    target's sequence of trial scales depends on its own values only, so the
    scales equal those of one search per set). ``reference=True`` evaluates set
    by set through :func:`_evaluate` (the path before the stacked evaluator;
    tests and benchmarks compare the two).

    ``prune(lo, hi)``, if given, is called after every step of the bracketed
    search with the brackets :math:`[\\log s_{lo}, \\log s_{hi})` of all
    targets (``lo`` feasible; a target already met at scale 1 has
    ``lo = hi = 0``) and returns a boolean mask of targets whose search may
    stop: they return the feasible ``exp(lo)`` reached so far, not their
    largest scale. The other targets' steps are unchanged (a step depends on
    the target's own values and the step count only).
    """
    groups = []
    if not reference:
        for cross in (False, True):
            members = [i for i, c in enumerate(sets) if (c.rows > 1) == cross]
            if members:
                local = np.full(len(sets), -1)
                local[members] = np.arange(len(members))
                groups.append((_Stack([sets[i] for i in members]), local[set_of]))

    def evaluate(scale, which):
        out = np.empty(which.size)
        for g, (stack, local) in enumerate(groups):
            sel = local[which] >= 0
            if not sel.any():
                continue
            every = sel.all()
            w = which if every else which[sel]
            got = _evaluate_stacked(stack, local[w], scale if every else scale[sel], L[w], kind)
            if got is None:
                break
            out[sel] = _no_nan(np.maximum(*got), "lam")
        else:
            if groups:
                return out
        for k in np.unique(set_of[which]):  # the reference path, set by set
            sel = set_of[which] == k
            move, cross = _evaluate(sets[k], scale[sel], L[which[sel]], kind)
            out[sel] = _no_nan(np.maximum(move, cross), "lam")
        return out

    def excess(t, which):  # worst case minus target: <= 0 is feasible
        return evaluate(np.exp(t), which) - eps[which]

    done = excess(np.zeros(eps.size), np.arange(eps.size)) <= 0
    hi = np.zeros(eps.size)
    lo = np.full(eps.size, -1.0)
    todo = np.flatnonzero(~done)
    while todo.size:  # bracket: double -log s until feasible
        ok = excess(lo[todo], todo) <= 0
        hi[todo[~ok]] = lo[todo[~ok]]
        lo[todo[~ok]] *= 2
        todo = todo[~ok]
        if todo.size and lo[todo].min() < _LOG_SCALE_FLOOR:
            # every unbracketed target is at the same lo: name those of the first set, as one search per set did
            todo = todo[set_of[todo] == set_of[todo].min()]
            raise ValueError(
                f"no scale above e^{_LOG_SCALE_FLOOR:g} meets epsilon = {eps[todo][:3]} at lam = {L[todo][:3]}"
            )
    # Safeguarded regula falsi (Illinois): a secant step inside the bracket, the stale end's
    # value halved after two steps on the same side, a bisection step every third
    # iteration; it stops when the bracket holds two adjacent floats. inf above the critical
    # order becomes a large finite value so the secant stays defined.
    active = np.flatnonzero(~done)
    g_lo = excess(lo[active], active)
    g_hi = np.minimum(excess(hi[active], active), 1e300)
    glo, ghi = np.zeros(eps.size), np.zeros(eps.size)
    glo[active], ghi[active] = g_lo, g_hi
    side = np.zeros(eps.size, int)
    for it in range(_MAX_BISECTION):
        if prune is not None:
            active = active[~prune(np.where(done, 0.0, lo), np.where(done, 0.0, hi))[active]]
        mid = 0.5 * (lo[active] + hi[active])
        closed = (mid <= lo[active]) | (mid >= hi[active])
        active, mid = active[~closed], mid[~closed]
        if not active.size:
            break
        l, h, fl, fh = lo[active], hi[active], glo[active], ghi[active]
        with np.errstate(invalid="ignore", over="ignore"):
            t = l - fl * (h - l) / (fh - fl)
        bad = ~((t > l) & (t < h)) | (it % 3 == 2)
        t = np.where(bad, mid, t)
        g = np.minimum(excess(t, active), 1e300)
        ok = g <= 0
        lo[active[ok]], glo[active[ok]] = t[ok], g[ok]
        hi[active[~ok]], ghi[active[~ok]] = t[~ok], g[~ok]
        # Illinois: a second step on the same side halves the other end's value
        new_side = np.where(ok, -1, 1)
        again = new_side == side[active]
        glo[active[again & ~ok]] *= 0.5
        ghi[active[again & ok]] *= 0.5
        side[active] = new_side
    else:  # pragma: no cover - every third step halves the bracket
        raise ValueError("the search for the scale did not close in 2000 steps")
    return np.where(done, 1.0, np.exp(lo))


def _setting(prior, d, value, name, lam, n_total, rows, kind):
    """The validated inputs of a worst case or a calibration, in the order they are checked:
    ``(prior, value, lam, n_total, rows, kind)`` with ``value`` (a scale or a target
    :math:`\\varepsilon`, positive, called ``name`` in errors) and ``lam`` broadcast together."""
    a = _prior(prior, d)
    value = validation.positive(value, name)
    lam = validation.order(lam, "lam", strict=True)
    N = validation.integer(n_total, "n_total")
    rows = validation.integer(rows, "rows")
    kind = _kind(kind)
    value, lam = validation.broadcast(**{name: value, "lam": lam})
    return a, value, lam, N, rows, kind


def worst_case(prior, scale, lam, n_total, *, rows=1, d=None, kind="diffused", parts=False):
    """The exact worst-case :math:`D_\\lambda` of one release over replace-one neighbours.

    Parameters
    ----------
    prior : array_like, shape (d,) or scalar
        The prior pseudo-counts :math:`a > 0` (a scalar needs ``d``).
    scale : array_like
        :math:`r` (``kind="diffused"``: :math:`\\mathrm{Dir}(a + r c)`) or
        :math:`m` (``kind="concentrated"``: :math:`\\mathrm{Dir}(a/m + c)`), in
        :math:`(0, \\infty)`; ``kind="diffused"`` with scale 1 is the true posterior.
    lam : array_like
        Order :math:`\\lambda \\in (1, \\infty)`; broadcasts with ``scale``.
    n_total : int
        :math:`N`, the public number of records.
    rows : int, default 1
        Rows of the table. One row: its total is :math:`N` (Geumlek et al.'s
        fixed :math:`n`) and a record can only move inside it. Two or more rows
        with private totals: also a record leaving one row and entering another
        (the two rows' divergences add).
    d : int, optional
        Number of cells, when ``prior`` is a scalar.
    kind : {"diffused", "concentrated"}
    parts : bool, default False
        Also return the move and cross-row parts.

    Returns
    -------
    ndarray or float
        :math:`\\sup D_\\lambda(M(X) \\| M(X'))` over neighbours :math:`X, X'`;
        ``inf`` at and above :math:`\\lambda^* = 1 + \\min_i b_i / s`.
        With ``parts``: ``(worst, move, cross)`` (``cross`` is 0 for one row).

    Examples
    --------
    >>> round(float(worst_case([6.0, 12.0], 1.0, 2.0, 100)), 6)
    0.19129
    """
    a, scale, lam, N, rows, kind = _setting(prior, d, scale, "scale", lam, n_total, rows, kind)
    cand = _Candidates(a, N, rows)
    got = None
    if cand.size * max(scale.size, 1) <= MAX_CANDIDATE_CELLS:  # _evaluate's values, fewer calls
        got = _evaluate_stacked(_Stack([cand]), np.zeros(scale.size, int), scale.ravel(), lam.ravel(), kind)
    if got is None:
        move, cross = _evaluate(cand, scale, lam, kind)
    else:
        move, cross = (x.reshape(scale.shape) for x in got)
    worst = _no_nan(np.maximum(move, cross), "lam, scale")
    if parts:
        return worst[()], move[()], cross[()]
    return worst[()]


def critical_order(prior, scale, *, kind="diffused"):
    """:math:`\\lambda^* = 1 + \\min_i b_i / s`: the worst case is finite exactly below it.

    For the true posterior (``scale = 1``) this is Corollary 1 of Geumlek et
    al., :math:`1 + \\min(\\alpha_0, \\beta_0)`; the diffused posterior moves it to
    :math:`1 + \\min_i a_i / r`, the concentrated one to :math:`1 + \\min_i a_i / m`.
    A record added to (or moved into) a bin with base :math:`b_j` and no data gives
    :math:`w_j = b_j - (\\lambda - 1)s` in eq. (16), which must be positive.
    """
    a = _prior(prior, 2) if np.ndim(prior) == 0 else _prior(prior)
    scale = validation.positive(scale, "scale")
    _kind(kind)
    with np.errstate(over="ignore"):
        out = 1 + a.min() / scale
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the critical order 1 + min(prior) / scale overflows; got prior minimum {a.min():g} "
                         f"and scale minimum {scale.min():g}")
    return out[()]


def geumlek_bound(prior, scale, lam, n, *, kind="diffused", scale_corners=True):
    """Geumlek et al.'s relaxed worst case (Corollary 2 and its Dirichlet extension).

    Their Algorithms 2 and 3 check :math:`D_\\lambda(p(\\theta|\\eta_P) \\|
    p(\\theta|\\eta_Q))` at the corners :math:`\\eta_P` of the reachable set
    (all :math:`n` records in one bin) and every :math:`\\eta_Q = \\eta_P \\pm
    s(e_i - e_j)` (the vertices of the scaled difference set), whether or not
    :math:`\\eta_Q` is itself reachable: :math:`d \\cdot d(d-1)` pairs, their
    :math:`O(d^3)`. For the diffused posterior the corners of
    :math:`\\mathrm{pset}(\\eta_0, rn)` are :math:`a + rn\\,e_k`
    (``scale_corners=True``); Corollary 2 as printed puts them at
    :math:`a + n\\,e_k` (``scale_corners=False``).

    Returns ``inf`` where some :math:`\\eta_Q` is not normalisable.
    """
    a = _prior(prior)
    scale = validation.scalar(validation.positive(scale, "scale"), "scale")
    lam = validation.order(lam, "lam", strict=True)
    n = validation.integer(n, "n")
    kind = _kind(kind)
    d = a.size
    validation.cells(d * d * (d - 1), "geumlek_bound's d * d(d - 1) corner pairs", MAX_BOUND_PAIRS,
                    f" (a prior of d = {d} cells; d <= 63)")
    validation.cells(d * d * (d - 1) * max(lam.size, 1), "one corner's pairs times the orders", MAX_CANDIDATE_CELLS)
    base, s = (a, scale) if kind == "diffused" else (a / scale, 1.0)
    corner_mass = s * n if (kind != "diffused" or scale_corners) else n
    eye = np.eye(d)
    i, j = (np.array(t) for t in zip(*itertools.permutations(range(d), 2)))
    step = s * (eye[j] - eye[i])  # row p: s (e_j - e_i) of the p-th ordered pair
    out = np.zeros(lam.shape)
    for k in range(d):
        u = base + corner_mass * eye[k]  # every record in bin k
        v = u + step
        _finite(u, v, names="prior, scale, n")
        if np.any(v <= 0):
            return np.full(lam.shape, np.inf)[()]
        out = np.maximum(out, renyi_divergence_dirichlet(u, v, lam[..., None]).max(axis=-1))
    return _no_nan(out, "lam")[()]


def _compositions(n, k):
    """Every vector of ``k`` non-negative integers summing to ``n``."""
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        cuts = (-1,) + bars + (n + k - 1,)
        yield [cuts[t + 1] - cuts[t] - 1 for t in range(k)]


def brute_force_worst_case(prior, scale, lam, n_total, *, rows=1, kind="diffused", d=None):
    """:func:`worst_case` by enumeration: every table of ``rows`` x ``d`` counts summing to ``n_total``.

    Every replace-one neighbour of every table (the moves among
    :func:`lib.privacy.neighbours.all_neighbours` of the flattened table), the
    divergence of the whole table (rows released independently, so their
    divergences add), both directions. Exponential in the table size: for
    tests and small examples only; at most :data:`MAX_BRUTE_FORCE_TABLES`
    tables (a ValueError beyond).
    """
    a = _prior(prior, d)
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    scale = validation.scalar(validation.positive(scale, "scale"), "scale")
    N = validation.integer(n_total, "n_total")
    rows = validation.integer(rows, "rows")
    kind = _kind(kind)
    d = a.size
    n_tables = math.comb(N + rows * d - 1, rows * d - 1)
    if n_tables > MAX_BRUTE_FORCE_TABLES:
        raise ValueError(f"n_total = {N} over rows x d = {rows} x {d} cells (prior of length {d}) gives "
                         f"{n_tables:.3g} tables; at most "
                         f"{MAX_BRUTE_FORCE_TABLES} are enumerated (use worst_case)")
    base, s = (a, scale) if kind == "diffused" else (a / scale, 1.0)
    worst = 0.0
    for flat in _compositions(N, rows * d):
        flat = np.array(flat, float)
        nb = all_neighbours(flat)
        nb = nb[nb.sum(axis=1) == N]  # replace-one: the moves
        u = (base + s * flat.reshape(rows, d))[None]
        v = base + s * nb.reshape(-1, rows, d)
        _finite(u, v, names="prior, scale, n_total")
        div = _no_nan(renyi_divergence_dirichlet(u, v, lam).sum(axis=-1), "lam")
        worst = max(worst, float(div.max()))
    return worst


# ----------------------------------------------------------------------------- calibration


def calibrate_scale(epsilon, lam, prior, n_total, *, rows=1, d=None, kind="diffused"):
    """The largest :math:`r` (or :math:`m`) in :math:`(0, 1]` whose worst case is at most ``epsilon``.

    Line 1 of Geumlek et al.'s Algorithm 2 (``kind="diffused"``) or 3
    (``"concentrated"``) with the exact worst case of :func:`worst_case`. The
    worst case increases with :math:`r` and with :math:`m` (checked on a grid in
    the tests and the chapter), so the feasible scales form an interval
    :math:`(0, s^*]`; :math:`s^*` is found in :math:`t = \\log s` by a bracketing
    search (regula falsi with the Illinois modification and a bisection step every
    third iteration) until the bracket holds two adjacent floating-point numbers (to rounding,
    not a fixed number of steps), keeping the feasible end. Vectorised over
    ``epsilon`` and ``lam``.

    Returns
    -------
    ndarray or float
        The scale; 1 where the true posterior already meets the target.

    Raises
    ------
    ValueError
        For invalid input, when no scale above :math:`e^{-700}` meets the target, or
        (never observed) when the search does not close in 2000 steps.

    Examples
    --------
    >>> r = calibrate_scale(0.5, 15.0, [6.0, 12.0], 100)
    >>> bool(worst_case([6.0, 12.0], r, 15.0, 100) <= 0.5)
    True
    """
    a, epsilon, lam, N, rows, kind = _setting(prior, d, epsilon, "epsilon", lam, n_total, rows, kind)
    shape = epsilon.shape
    eps, L = epsilon.ravel(), lam.ravel()

    cand = _Candidates(a, N, rows)
    validation.cells(cand.size * max(eps.size, 1), "the candidate pairs times the targets", MAX_CANDIDATE_CELLS)

    out = _search([cand], np.zeros(eps.size, int), eps, L, kind).reshape(shape)
    return out[()]


def _calibrate_shapes(epsilon, lam, prior, n_total, shapes, kind, *, best_of=None):
    """``{shape: calibrate_scale(epsilon, lam, prior, n_total, rows=shape[0], d=shape[1], kind=kind)}``, one search.

    ``shapes`` are ``(rows, d)`` pairs in the order in which one call per shape
    would have run (and raised); the searches of all shapes and targets run
    together (:func:`_search`), with the scales of one call per shape, value by
    value. Shapes whose candidates would not fit together in
    :data:`MAX_CANDIDATE_CELLS` are searched one by one.

    ``best_of=(weights, groups)`` asks only for the target of each group that
    maximises the score :math:`\\sum_{sh} w_{sh} \\log s_{sh, j}` (``weights``: one per
    shape; ``groups``: an integer label per entry of the flattened ``epsilon``):
    an entry ``j`` whose score cannot reach the best lower bound of its group
    (the brackets of the search bound every score, :func:`_prune_to_best`) stops
    early, its scales feasible but not the largest. The entries that remain are
    searched to the end, so each group's maximiser (``numpy.argmax``: the first of
    equal scores) and its scales are those of the full search.
    """
    sets, arrays = [], None
    for rows, d in shapes:
        a, eps, lams, N, rows, kind = _setting(prior, d, epsilon, "epsilon", lam, n_total, rows, kind)
        cand = _Candidates(a, N, rows)
        validation.cells(cand.size * max(eps.size, 1), "the candidate pairs times the targets", MAX_CANDIDATE_CELLS)
        sets.append(cand)
        arrays = eps.shape, eps.ravel(), lams.ravel()
    shape, eps, L = arrays
    n = eps.size
    if sum(c.size for c in sets) * max(n, 1) > MAX_CANDIDATE_CELLS:
        found = [_search([c], np.zeros(n, int), eps, L, kind) for c in sets]
    else:
        prune = None if best_of is None else _prune_to_best(np.asarray(best_of[0], float), np.ravel(best_of[1]), n)
        flat = _search(sets, np.repeat(np.arange(len(sets)), n), np.tile(eps, len(sets)), np.tile(L, len(sets)),
                       kind, prune=prune)
        found = np.split(flat, len(sets))
    return {sh: s.reshape(shape)[()] for sh, s in zip(shapes, found)}


def _shape_weights(spec_shapes, shapes):
    """The weight of each of ``shapes`` in the mean of ``log s`` over the releases ``spec_shapes`` (its share)."""
    return np.array([spec_shapes.count(sh) for sh in shapes], float) / len(spec_shapes)


#: Relative margin of :func:`_prune_to_best`: far above the rounding of ``log(exp(t))`` and of the weighted sums.
_PRUNE_MARGIN = 1e-9


def _prune_to_best(weights, groups, n):
    """The ``prune`` of :func:`_search` for :func:`_calibrate_shapes`'s ``best_of``: targets laid out shape-major.

    Entry ``j`` (of ``n``) has score :math:`S_j = \\sum_{sh} w_{sh} t_{sh, j}`, :math:`t = \\log s`,
    bounded by the brackets: :math:`L_j = \\sum w\\,lo \\le S_j \\le U_j = \\sum w\\,hi`
    (weights positive, ``lo`` feasible, the final ``t`` in ``[lo, hi)``). Entry ``j``
    stops when :math:`U_j` plus a margin (:data:`_PRUNE_MARGIN`, relative) is below the
    largest :math:`L` of its group: its final score is then below that of another entry,
    so it is not its group's maximiser. The maximiser never stops (its
    :math:`U \\ge S \\ge` every final score :math:`\\ge` every :math:`L`).
    """
    _, local = np.unique(groups, return_inverse=True)
    k = local.max() + 1 if local.size else 0

    def prune(lo, hi):
        low = weights @ lo.reshape(len(weights), n)
        up = weights @ hi.reshape(len(weights), n)
        best = np.full(k, -np.inf)
        np.maximum.at(best, local, low)
        stop = up + _PRUNE_MARGIN * (1 + np.abs(up)) < best[local] - _PRUNE_MARGIN * (1 + np.abs(best[local]))
        return np.tile(stop, len(weights))

    return prune


# ----------------------------------------------------------------------------- mechanisms


class _PosteriorSampler(Mechanism):
    """One draw from :math:`\\mathrm{Dir}(b + s c)` per count vector (base :math:`b`, data scale :math:`s`).

    Parameters
    ----------
    scale : float
        :math:`r` (diffused) or :math:`m` (concentrated), in :math:`(0, 1]`.
    prior : float or array_like, shape (d,)
        The pseudo-counts :math:`a > 0` (a scalar is repeated over the cells).
    lam, epsilon : float, optional
        The :math:`(\\lambda, \\varepsilon)`-RDP the object states, given together
        with ``n_total`` and the dimension ``d`` (or a prior of length ``d``). It is
        checked: the exact worst case over the neighbours of a ``(rows, d)`` table of
        ``n_total`` records (:func:`worst_case`) must be at most ``epsilon``, else a
        ValueError (a level that is not met is never stated).
    rows : int, default 1
        Rows of each released table (see :func:`worst_case`).
    n_total : int, optional
        :math:`N`, the public number of records.
    d : int, optional
        Cells of each released vector. The worst case depends on it (at
        :math:`r = 0.1`, :math:`\\lambda = 5`, :math:`N = 30000`: 0.0497 for d = 2,
        0.0818 for d = 3), so an object states a guarantee only for its ``d`` and
        releases only vectors of that length.

    Notes
    -----
    An object that states a guarantee releases only the tables it covers:
    ``counts`` of shape ``(..., d)`` (one row) or ``(..., rows, d)``, whole
    numbers, each table holding at most ``n_total`` records, and exactly
    ``n_total`` for one row of two cells (there the worst case over a smaller
    total can be larger). Anything else is a ValueError.
    """

    kind = "diffused"
    #: The prior pseudo-count of every cell used by the calibrations.
    prior = DEFAULT_PRIOR

    def __init__(self, scale, prior=DEFAULT_PRIOR, *, lam=None, epsilon=None, rows=1, n_total=None, d=None):
        self.scale = validation.scalar(validation.in_range(scale, "scale", 0.0, 1.0, open_low=True,
                                                         open_high=False), "scale")
        prior = validation.positive(prior, "prior")
        if prior.ndim > 1 or (prior.ndim == 1 and prior.size < 2):
            raise ValueError(f"prior must be a scalar or a vector of length d >= 2; got shape {prior.shape}")
        if d is not None:
            d = validation.integer(d, "d", 2)
            if prior.ndim == 1 and prior.size != d:
                raise ValueError(f"prior has {prior.size} entries but d = {d}")
        elif prior.ndim == 1:
            d = prior.size
        self.prior_value, self.d = prior, d
        self.rows = validation.integer(rows, "rows")
        given = [name for name, v in (("lam", lam), ("epsilon", epsilon), ("n_total", n_total)) if v is not None]
        if not given:
            self.lam = self.epsilon = self.n_total = None
            return
        if len(given) < 3:
            raise ValueError(f"lam, epsilon and n_total state a guarantee together; got only {', '.join(given)}")
        if d is None:
            raise ValueError("d (the cells of each released vector) is needed to state a guarantee: the worst case "
                             "depends on it; pass d, or a prior vector of length d")
        self.lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self.n_total = validation.integer(n_total, "n_total")
        spent = self.guarantee.curve(self.lam)
        if not spent <= self.epsilon:
            raise ValueError(f"{type(self).__name__}({'r' if self.kind == 'diffused' else 'm'}={self.scale:.6g}) is "
                             f"({self.lam:g}, {spent:.6g})-RDP on ({self.rows}, {d}) tables of n_total = "
                             f"{self.n_total} records, above epsilon = {self.epsilon:g}")

    def base_and_step(self, d):
        """The base :math:`b` (length ``d``) and the data scale :math:`s` of the release."""
        d = validation.integer(d, "d", 2)
        if self.d is not None and d != self.d:
            raise ValueError(f"d must be {self.d} (the object's dimension); got {d}")
        a = np.broadcast_to(self.prior_value, (d,)).astype(float)
        with np.errstate(over="ignore"):  # refused by concentration()
            return (a, self.scale) if self.kind == "diffused" else (a / self.scale, 1.0)

    def concentration(self, counts):
        """The Dirichlet parameters :math:`b + s c` (finite: an overflow is a ValueError)."""
        counts = validation.vectors(counts, "counts", positive_entries=False)
        if self.d is not None and counts.shape[-1] != self.d:
            raise ValueError(f"counts must have d = {self.d} entries along the last axis; got shape {counts.shape}")
        b, s = self.base_and_step(counts.shape[-1])
        with np.errstate(over="ignore"):
            out = counts * s + b
        if not np.isfinite(out).all():
            raise ValueError("the Dirichlet parameters b + s * counts overflow: counts too large, or prior / scale "
                             "beyond the double range")
        return out

    def _covered(self, counts):
        """A ValueError unless ``counts`` are tables that the stated guarantee covers (class notes)."""
        counts = validation.vectors(counts, "counts", positive_entries=False)
        if self.lam is None:
            return
        if self.rows > 1 and (counts.ndim < 2 or counts.shape[-2] != self.rows):
            raise ValueError(f"counts must be tables of shape (..., {self.rows}, {self.d}) (the stated guarantee's "
                             f"rows and d); got shape {counts.shape}")
        if not np.all(counts == np.floor(counts)):
            raise ValueError("counts must be whole numbers (counts of records) for the stated guarantee to hold")
        totals = counts.sum(axis=-1) if self.rows == 1 else counts.sum(axis=(-2, -1))
        if self.rows == 1 and self.d == 2:
            if not np.all(totals == self.n_total):
                raise ValueError(f"counts must total n_total = {self.n_total} in every vector (the stated guarantee "
                                 f"of one row of two cells is for that total only); got totals from "
                                 f"{totals.min():g} to {totals.max():g}")
        elif not np.all(totals <= self.n_total):
            raise ValueError(f"counts must hold at most n_total = {self.n_total} records per table (the stated "
                             f"guarantee's N); got {totals.max():g}")

    def release(self, counts, rng=None):
        """One draw per vector along the last axis (normalised Gamma variables).

        An object that states a guarantee refuses tables it does not cover (class notes).
        """
        rng = validation.generator(rng)
        if self.lam is not None:
            self._covered(counts)
        y = rng.standard_gamma(self.concentration(counts))
        with np.errstate(over="ignore"):  # an infinite total is refused below
            total = y.sum(axis=-1, keepdims=True)
        y /= total
        if not np.all(y > 0):
            if not np.all(np.isfinite(total)):
                raise ValueError("counts are too large: the sum of the Gamma draws overflows")
            raise ValueError("a released probability underflowed to zero; use a larger prior")  # pragma: no cover
        return y

    @classmethod
    def log_release_tables(cls, objects, tables, n_draws, rng):
        """:meth:`lib.mechanisms.protocol.Mechanism.log_release_tables`, all tables in one buffer.

        What :meth:`release` does table by table, for all tables at once: the
        concentrations :math:`b + s c` written in release order (``counts * s + b``,
        the same operations), the Gamma variates of all tables drawn by one call
        (a Generator fills an array element by element, so the stream and the
        values are those of one call per table), every row divided by its sum
        (the same reduction). The tables a stated guarantee does not cover, a
        concentration that overflows, a draw that underflows to zero, or an
        object's class that changes the release go through the protocol's loop,
        table by table, for :meth:`release`'s own errors (the loop draws afresh
        from ``rng``, so the check that sends a batch there comes before any draw,
        except an underflow, which raises there too).
        """
        loop = Mechanism.log_release_tables.__func__
        if not batchable(_PosteriorSampler, ("release", "concentration", "base_and_step", "_covered"), objects,
                          tables):
            return loop(cls, objects, tables, n_draws, rng)
        if any(m.d is not None and t.shape[-1] != m.d for m, t in zip(objects, tables)):
            return loop(cls, objects, tables, n_draws, rng)
        # every draw of a table releases the same counts: one check of each object's tables, stacked
        groups = {}
        for m, t in zip(objects, tables):
            groups.setdefault(id(m), (m, []))[1].append(t)
        try:
            for m, ts in groups.values():
                if len({t.shape for t in ts}) != 1:
                    raise ValueError("tables of several shapes")
                m._covered(ts[0] if len(ts) == 1 else np.stack(ts))
        except ValueError:
            return loop(cls, objects, tables, n_draws, rng)
        steps = {key: m.base_and_step(ts[0].shape[-1]) for key, (m, ts) in groups.items()}
        flat, views = release_buffer(tables, n_draws)
        with np.errstate(over="ignore"):
            for m, v, t in zip(objects, views, tables):
                b, s = steps[id(m)]
                np.multiply(t, s, out=v)  # concentration's counts * s + b, entry by entry
                v += b
        if flat.size and not np.isfinite(flat.max()):
            return loop(cls, objects, tables, n_draws, rng)
        rng.standard_gamma(flat, out=flat)
        with np.errstate(over="ignore"):
            totals = [v.sum(axis=-1, keepdims=True) for v in views]  # release's reduction, the same bits
        if not all(np.isfinite(t).all() for t in totals):
            raise ValueError("counts are too large: the sum of the Gamma draws overflows")
        for v, t in zip(views, totals):
            v /= t
        if not (flat > 0).all():
            raise ValueError("a released probability underflowed to zero; use a larger prior")  # pragma: no cover
        return log_views(flat, views)

    @property
    def guarantee(self):
        """:math:`(\\lambda, \\varepsilon)`-RDP at the calibrated order, with the curve :math:`\\lambda' \\mapsto` worst case.

        The curve is :func:`worst_case` for the object's ``(rows, d)`` tables of
        ``n_total`` records (``inf`` from :func:`critical_order` on). An object
        built without ``lam``, ``epsilon`` and ``n_total`` states nothing:
        :class:`lib.privacy.guarantees.NotPrivate`.
        """
        if self.lam is None:
            return NotPrivate()
        curve = functools.partial(worst_case, np.broadcast_to(self.prior_value, (self.d,)), self.scale,
                                  n_total=self.n_total, rows=self.rows, kind=type(self).kind)
        return RenyiDP(self.lam, self.epsilon, curve)

    def __repr__(self):
        sym = "r" if self.kind == "diffused" else "m"
        return f"{type(self).__name__}({sym}={self.scale:.6g}, prior={np.round(self.prior_value, 6).tolist()})"

    @classmethod
    def _build(cls, scale, epsilon, lam, rows, d, n_total):
        return cls(scale, cls.prior, lam=float(lam), epsilon=float(epsilon), rows=rows, n_total=n_total, d=d)

    @classmethod
    def release_key(cls, spec, index):
        """Releases of the same shape ``(rows, d)`` share one object."""
        return _spec(spec, index)[2]

    #: Orders on the grid of the (eps_hat, delta) calibration (an integer in [1, MAX_ORDERS]).
    n_orders = 48

    @classmethod
    def _renyi_release(cls, target, spec, index):
        """The largest scale whose exact worst case over release ``index``'s neighbours is the share's level."""
        epsilon = validation.scalar(validation.positive(target.epsilon, "epsilon"), "epsilon")
        lam = target.lam
        _, n_total, (rows, d) = _spec(spec, index)
        scale = calibrate_scale(epsilon, lam, cls.prior, n_total, rows=rows, d=d, kind=cls.kind)
        return cls._build(scale, epsilon, lam, rows, d, n_total)

    @classmethod
    def _calibrate_renyi_many(cls, targets, spec, cache):
        """Many RDP targets at one order at once (one vectorised search per shape).

        Returns one :class:`lib.mechanisms.protocol.ModelCalibration` per target:
        every release at its share ``target.split(m)``, as one target at a time.
        Targets at different orders are calibrated one by one.
        """
        lams = {t.lam for t in targets}
        if len(lams) != 1 or cls._renyi_release.__func__ is not _PosteriorSampler._renyi_release.__func__:
            return [cls._calibrate_renyi(t, spec, cache) for t in targets]
        (lam,) = lams
        spec_shapes, n_total = _spec(spec)
        per = np.array([validation.scalar(validation.positive(t.split(len(spec_shapes)).epsilon, "epsilon"), "epsilon")
                        for t in targets])
        shapes = sorted(set(spec_shapes))
        scales = {sh: np.atleast_1d(s) for sh, s in
                  _calibrate_shapes(per, lam, cls.prior, n_total, shapes, cls.kind).items()}
        out = []
        for e, eps in enumerate(per):
            built = {sh: cls._build(float(scales[sh][e]), eps, lam, sh[0], sh[1], n_total) for sh in shapes}
            out.append(ModelCalibration(cls.name, True, tuple(built[sh] for sh in spec_shapes),
                                        {"lam": lam, "epsilon_release": float(eps)}))
        return out

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """All releases at one order, composed in RDP, converted once by eq. (14) (Appendix B).

        The order is chosen on a grid of ``n_orders`` orders (a class setting, an integer in
        [1, :data:`MAX_ORDERS`]), log-spaced in
        :math:`\\lambda - \\lambda_0` from :math:`10^{-3}\\lambda_0` to
        :math:`\\min(1/\\delta, 10^4)` (:math:`\\lambda_0` =
        :func:`lib.privacy.accounting.min_order`), as the one that maximises the mean of
        :math:`\\log s` over the releases: a larger scale is a release closer to
        the true posterior, and the rule uses public quantities only. The
        searches of all orders run together; an order whose bracket of that mean
        falls below another order's stops early (:func:`_prune_to_best`), which
        leaves the chosen order and its scales those of the full search. Invalid
        arguments raise; a target that no scale meets gives ``attained=False``
        with the reason.
        """
        return cls._calibrate_dp(target.epsilon, target.delta, spec, cache, cls.n_orders, None)

    @classmethod
    def _calibrate_approximate_many(cls, targets, spec, cache):
        """Many (eps_hat, delta) targets of one delta: one search for all targets, orders and shapes.

        Element ``i`` equals the calibration of ``targets[i]`` alone: the same
        scales value by value (each target's search depends on its own values
        only). If the joint search raises, each target is calibrated on its
        own, with its own outcome. Targets whose calibration ``cache`` holds
        (:meth:`_dp_key`) are not searched again.
        """
        deltas = {t.delta for t in targets}
        if (cls._calibrate_approximate.__func__ is not _PosteriorSampler._calibrate_approximate.__func__
                or len(deltas) != 1):
            return [cls._calibrate_approximate(t, spec, cache) for t in targets]
        (delta,) = deltas
        n_orders, found = cls.n_orders, {}
        eps_hats = [t.epsilon for t in targets]
        try:
            dl = validation.scalar(validation.open_unit(delta, "delta"), "delta")
            spec_shapes, n_total = _spec(spec)
            shapes = sorted(set(spec_shapes))
            grids = {}
            # the order grid of each distinct target not in the cache (a cached one is not searched again)
            for e in (e for e in dict.fromkeys(eps_hats)
                      if cache is None or not isinstance(cache, collections.abc.MutableMapping)
                      or cls._dp_key(e, dl, spec) not in cache):
                lam0, top = min_order(e, dl), min(1 / dl, 1e4)
                if top > lam0:
                    lams = lam0 + np.geomspace(1e-3 * lam0, top - lam0, n_orders)
                    grids[e] = (lams, dp_to_rdp(e, lams, dl, n_releases=len(spec_shapes)))
            if len(grids) > 1:
                scales = _calibrate_shapes(np.concatenate([g[1] for g in grids.values()]),
                                           np.concatenate([g[0] for g in grids.values()]), cls.prior, n_total,
                                           shapes, cls.kind, best_of=(_shape_weights(spec_shapes, shapes),
                                                                      np.repeat(np.arange(len(grids)), n_orders)))
                for k, e in enumerate(grids):
                    found[e] = {sh: scales[sh][k * n_orders:(k + 1) * n_orders] for sh in shapes}
        except (ValueError, TypeError):
            found = {}
        return [cls._calibrate_dp(e, delta, spec, cache, n_orders, found.get(e)) for e in eps_hats]

    @classmethod
    def _dp_key(cls, epsilon_hat, delta, spec):
        """The ``cache`` key of an (eps_hat, delta) calibration: the class and its settings, target, public spec."""
        return (cls.name, cls.kind, float(epsilon_hat), float(delta), tuple(spec.shapes), int(spec.n_total),
                float(cls.prior), int(cls.n_orders))

    @classmethod
    def _calibrate_dp(cls, epsilon_hat, delta, spec, cache, n_orders, found):
        """:meth:`_calibrate_approximate`; ``found``: the scales of its search, computed with other targets' (or None)."""
        epsilon_hat = validation.scalar(validation.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
        delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
        spec_shapes, n_total = _spec(spec)
        n_orders = validation.integer(n_orders, "n_orders", 1, MAX_ORDERS)
        if cache is not None and not isinstance(cache, collections.abc.MutableMapping):
            raise validation.ArgumentTypeError(f"cache must be None or a dict; got {type(cache).__name__}")
        key = cls._dp_key(epsilon_hat, delta, spec)
        if cache is not None and key in cache:
            return cache[key]
        lam0 = min_order(epsilon_hat, delta)
        top = min(1 / delta, 1e4)
        if not top > lam0:
            out = ModelCalibration(cls.name, False, (), {
                "reason": f"no order on the grid: min(1/delta, 1e4) = {top:g} is not above the smallest order "
                          f"{lam0:g} that can reach epsilon_hat = {epsilon_hat:g} at delta = {delta:g}"})
            if cache is not None:
                cache[key] = out
            return out
        try:
            lams = lam0 + np.geomspace(1e-3 * lam0, top - lam0, n_orders)
            eps = dp_to_rdp(epsilon_hat, lams, delta, n_releases=len(spec_shapes))
            shapes = sorted(set(spec_shapes))
            scales = found if found is not None else _calibrate_shapes(
                eps, lams, cls.prior, n_total, shapes, cls.kind,
                best_of=(_shape_weights(spec_shapes, shapes), np.zeros(n_orders, int)))
            logs = {sh: np.log(scales[sh]) for sh in shapes}
            score = np.mean([logs[sh] for sh in spec_shapes], axis=0)
            best = int(np.argmax(score))
        except ValueError as exc:
            out = ModelCalibration(cls.name, False, (), {"reason": str(exc)})
        else:
            # the calibrated scale itself, not exp(log(scale)): one ulp above it may miss the target
            built = {sh: cls._build(float(np.atleast_1d(scales[sh])[best]), eps[best], lams[best], sh[0], sh[1],
                                    n_total) for sh in shapes}
            params = {"lam": float(lams[best]), "epsilon_rdp": float(eps[best]),
                      "scale": {sh: b.scale for sh, b in built.items()}}
            out = ModelCalibration(cls.name, True, tuple(built[sh] for sh in spec_shapes), params)
        if cache is not None:
            cache[key] = out
        return out


class DiffusedPosterior(_PosteriorSampler):
    """Geumlek et al.'s Algorithm 2: one draw from :math:`\\mathrm{Dir}(a + r c)`, :math:`r \\in (0, 1]`.

    Examples
    --------
    >>> from lib.mechanisms.protocol import ReleaseSpec
    >>> from lib.privacy.guarantees import RenyiDP
    >>> (mech,) = DiffusedPosterior.calibrate(RenyiDP(5.0, 0.5), ReleaseSpec(((1, 2),), 100)).releases
    >>> bool(worst_case([1.0, 1.0], mech.scale, 5.0, 100) <= 0.5)
    True
    """

    name, label, kind = "geumlek_diffused", "Diffused posterior", "diffused"


class ConcentratedPosterior(_PosteriorSampler):
    """Geumlek et al.'s Algorithm 3: one draw from :math:`\\mathrm{Dir}(a/m + c)`, :math:`m \\in (0, 1]`."""

    name, label, kind = "geumlek_concentrated", "Concentrated posterior", "concentrated"


class TruePosterior(_PosteriorSampler):
    """Geumlek et al.'s Algorithm 1: one draw from :math:`\\mathrm{Dir}(a + c)`; RDP only below :math:`\\lambda^*`.

    Parameters
    ----------
    prior : float or array_like, shape (d,)
        The pseudo-counts :math:`a > 0`.
    **kwargs
        ``lam``, ``epsilon``, ``rows``, ``n_total``, ``d`` as for :class:`DiffusedPosterior`
        (the scale is 1).

    Notes
    -----
    Nothing is tuned: the release meets a :class:`lib.privacy.guarantees.RenyiDP` target only
    if its exact worst case (:func:`worst_case` at scale 1) already does, which needs an order
    below :math:`\\lambda^* = 1 + \\min_i a_i` (Theorem 12, Corollary 1); otherwise the
    calibration is a ValueError. Its :attr:`guarantee` is the target with the exact curve, which
    is ``inf`` from :math:`\\lambda^*` on. It meets no other type of target.
    """

    name, label, kind = "geumlek_true", "True posterior", "diffused"

    def __init__(self, prior=DEFAULT_PRIOR, **kwargs):
        super().__init__(1.0, prior, **kwargs)

    notions = (RenyiDP,)

    @classmethod
    def _renyi_release(cls, target, spec, index):
        """The true posterior if its exact worst case meets the share; a ValueError otherwise."""
        epsilon = validation.scalar(validation.positive(target.epsilon, "epsilon"), "epsilon")
        lam = target.lam
        _, n_total, (rows, d) = _spec(spec, index)
        spent = worst_case(cls.prior, 1.0, lam, n_total, rows=rows, d=d)
        if not spent <= epsilon:
            raise ValueError(f"the true posterior is ({lam:g}, {spent:.6g})-RDP (at lam = {lam:g}), above "
                             f"epsilon = {epsilon:g}")
        return cls(cls.prior, lam=lam, epsilon=epsilon, rows=rows, n_total=n_total, d=d)


# ----------------------------------------------------------------------------- the Gaussian baseline


def gaussian_sigma(epsilon, lam, sensitivity=1.0, *, printed=False):
    """Noise level of the Gaussian baseline on the sufficient statistic at :math:`(\\lambda, \\varepsilon)`.

    Mironov (2017, Proposition 7): :math:`\\mathcal N(0, \\sigma^2)` on a statistic of
    sensitivity :math:`\\Delta` is exactly :math:`(\\lambda, \\lambda\\Delta^2/(2\\sigma^2))`-RDP,
    so :math:`\\sigma = \\Delta\\sqrt{\\lambda/(2\\varepsilon)}`. Geumlek et al. (Section 5.1)
    print :math:`\\lambda\\Delta^2/\\sigma^2` (``printed=True``), a factor 2 in
    :math:`\\varepsilon`, :math:`\\sqrt2` in :math:`\\sigma`.
    """
    epsilon = validation.positive(epsilon, "epsilon")
    lam = validation.order(lam, "lam")
    sensitivity = validation.positive(sensitivity, "sensitivity")
    with np.errstate(over="ignore"):
        sigma = sensitivity * np.sqrt(lam / ((1 if printed else 2) * epsilon))
    if not np.all(np.isfinite(sigma)):
        raise ValueError("sigma overflows: lam / epsilon (times sensitivity^2) is beyond the double range")
    return sigma[()]


def _trials(successes, n, *, scalar=False):
    """``(successes, n)``: ``n`` an integer >= 1, ``successes`` real in [0, n] (a scalar if ``scalar``)."""
    n = validation.integer(n, "n")
    successes = validation.in_range(successes, "successes", 0.0, float(n), open_low=False, open_high=False)
    if scalar:
        successes = validation.scalar(successes, "successes")
    return successes, n


def _size(size):
    """A ``size`` argument of numpy's generators: None, an integer >= 0 or a tuple of them (bounded)."""
    if size is None:
        return None
    shape = (size,) if isinstance(size, (int, np.integer)) and not isinstance(size, (bool, np.bool_)) else size
    if not isinstance(shape, tuple):
        raise validation.ArgumentTypeError(f"size must be None, an integer or a tuple of integers; got "
                                          f"{type(size).__name__}")
    shape = tuple(validation.integer(k, "size", 0) for k in shape)
    validation.cells(math.prod(shape), "size")
    return size


def gaussian_posterior_params(successes, n, prior, sigma, rng, size):
    """Beta parameters of the Gaussian baseline: the statistic plus noise, clamped to [0, n], then the posterior.

    ``successes`` in [0, n] (broadcast against ``size``), ``n`` an integer >= 1,
    ``prior`` the two pseudo-counts (a scalar is repeated), ``sigma > 0``.
    Returns an array of shape ``broadcast(successes, size) + (2,)``.
    """
    successes, n = _trials(successes, n)
    a0, b0 = _prior(prior, 2)
    sigma = validation.scalar(validation.positive(sigma, "sigma"), "sigma")
    size = _size(size)
    try:
        np.broadcast_shapes(successes.shape, () if size is None else tuple(np.atleast_1d(size).tolist()))
    except ValueError as exc:
        raise ValueError(f"successes of shape {successes.shape} does not broadcast against size {size!r}") from exc
    rng = validation.generator(rng)
    noisy = np.clip(successes + sigma * rng.standard_normal(size), 0, n)
    return np.stack([a0 + noisy, b0 + n - noisy], axis=-1)



@functools.lru_cache(maxsize=4)
def _legendre(nodes):
    """Gauss-Legendre nodes and weights on [-1, 1] (computed once per size: an eigenproblem)."""
    return np.polynomial.legendre.leggauss(nodes)


def gaussian_posterior_kl(successes, n, prior, sigma, *, nodes=400):
    """:math:`KL(P \\| A)` from the true posterior :math:`P` to the Gaussian baseline's output law :math:`A`.

    :math:`A` is the mixture over the clamped noisy statistic :math:`\\tilde S =
    \\min(n, \\max(0, S + \\mathcal N(0, \\sigma^2)))` of
    :math:`\\mathrm{Beta}(\\alpha_0 + \\tilde S, \\beta_0 + n - \\tilde S)`: two atoms
    (:math:`\\tilde S = 0` and :math:`n`) and a density. Gauss-Legendre rules with
    ``nodes`` points integrate over :math:`\\tilde S` (within 12 standard deviations
    of :math:`S`) and over :math:`\\theta` (the central :math:`1 - 2 \\cdot 10^{-13}` of
    :math:`P`'s mass); the tests check convergence in ``nodes``.

    Returns
    -------
    kl : float
    atoms : float
        The probability of the two atoms, :math:`\\Pr[\\tilde S \\in \\{0, n\\}]`.
    """
    from scipy import special, stats

    successes, n = _trials(successes, n, scalar=True)
    a0, b0 = _prior(prior, 2)
    sigma = validation.scalar(validation.positive(sigma, "sigma"), "sigma")
    post = stats.beta(a0 + successes, b0 + n - successes)
    x, wx = _legendre(validation.integer(nodes, "nodes", 8, MAX_NODES))
    lo, hi = post.ppf(1e-13), post.isf(1e-13)
    theta, w_theta = (hi - lo) / 2 * x + (hi + lo) / 2, (hi - lo) / 2 * wx
    s_lo, s_hi = max(0.0, successes - 12 * sigma), min(float(n), successes + 12 * sigma)
    s, w_s = (s_hi - s_lo) / 2 * x + (s_hi + s_lo) / 2, (s_hi - s_lo) / 2 * wx
    w_s = w_s * stats.norm.pdf(s, successes, sigma)
    atoms = np.array([stats.norm.cdf(0, successes, sigma), stats.norm.sf(n, successes, sigma)])
    s_all = np.concatenate([[0.0, float(n)], s])
    w_all = np.concatenate([atoms, w_s])
    a_all, b_all = a0 + s_all, b0 + n - s_all
    log_pdf = ((a_all - 1) * np.log(theta)[:, None] + (b_all - 1) * np.log1p(-theta)[:, None]
               - special.betaln(a_all, b_all))
    top = log_pdf.max(axis=1, keepdims=True)
    log_a = np.log(np.exp(log_pdf - top) @ w_all) + top[:, 0]
    log_p = post.logpdf(theta)
    kl = float(np.sum(w_theta * np.exp(log_p) * (log_p - log_a)))
    if not np.isfinite(kl):
        raise ValueError(f"the quadrature is not finite at sigma = {sigma:g}, prior = ({a0:g}, {b0:g}), successes = "
                         f"{successes:g}, n = {n}: sigma is too small against the statistic, or the prior too large")
    return kl, float(atoms.sum())


register(DiffusedPosterior)
register(ConcentratedPosterior)
register(TruePosterior)
