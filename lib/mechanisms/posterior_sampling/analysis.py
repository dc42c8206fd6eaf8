"""The exact worst case of the posterior samplers' privacy loss (Geumlek et al. 2017, Appendix E).

A sampler releases one draw of :math:`\\mathrm{Dir}(b + s c)`; the level it attains at
order :math:`\\lambda` is the largest Renyi divergence between the laws of two
neighbouring data sets. This module computes it: the divergence of one change
(:func:`move_divergence`, :func:`add_divergence`, :func:`remove_divergence`), the
candidates that attain the worst case (:class:`Candidates`, the vertices of the
reachable counts) and their evaluation (:func:`evaluate_candidates`, stacked over
table shapes by :func:`evaluate_stacked`), the worst case itself
(:func:`worst_case`), the order below which the true posterior is private
(:func:`critical_order`), Geumlek et al.'s bound (:func:`geumlek_bound`) and the
brute-force check over every data set (:func:`brute_force_worst_case`). The
calibrations of :mod:`lib.mechanisms.posterior_sampling.mechanism` invert it.
"""

from __future__ import annotations

from typing import Sequence

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.dirichlet.divergence import lgamma_diff_fused, renyi_divergence_dirichlet
from lib.privacy.neighbours import all_neighbours


#: Default prior pseudo-count of every cell: the uniform Dirichlet prior.
DEFAULT_PRIOR = 1.0


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


#: The kinds of release: the data scaled (``"diffused"``) or the prior scaled (``"concentrated"``).
KINDS = ("diffused", "concentrated")


def prior_vector(prior: ArrayLike, d: int | None = None) -> np.ndarray:
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


def refuse_nan(value: np.ndarray | float, names: str) -> np.ndarray | float:
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


def move_divergence(base_i: ArrayLike, base_j: ArrayLike, x: ArrayLike, y: ArrayLike, scale: ArrayLike,
                    lam: ArrayLike) -> np.ndarray | float:
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
    return refuse_nan(renyi_divergence_dirichlet(_beta(ui, uj), _beta(ui - s, uj + s), v["lam"]), "lam")


def add_divergence(base_j: ArrayLike, base_total: ArrayLike, c_j: ArrayLike, n: ArrayLike, scale: ArrayLike,
                   lam: ArrayLike) -> np.ndarray | float:
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
    return refuse_nan(renyi_divergence_dirichlet(_beta(uj, rest), _beta(uj + v["scale"], rest), v["lam"]),
                   "lam")


def remove_divergence(base_i: ArrayLike, base_total: ArrayLike, c_i: ArrayLike, n: ArrayLike, scale: ArrayLike,
                      lam: ArrayLike) -> np.ndarray | float:
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
    return refuse_nan(renyi_divergence_dirichlet(_beta(ui, rest), _beta(ui - v["scale"], rest), v["lam"]),
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


class Candidates:
    """The pairs that can attain the worst case (the vertices of :func:`worst_case`), built once.

    Moves: every distinct ``(a_i, a_j)`` at every vertex ``(x, y)``. For tables of
    several rows, a record leaving one row and entering another: the removal at
    ``(c_i, n)`` in {(1, 1), (1, N), (N, N)} and the addition at ``(c_j, n)`` in
    {(0, 0), (0, N), (N, N)}, each maximised on its own (the sum of the two maxima
    ignores that the rows share the N records: an upper bound, tested against
    brute force and within a few per cent of it).
    """

    def __init__(self, a: np.ndarray, n_total: int, rows: int) -> None:
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


def evaluate_candidates(cand: Candidates, scale: np.ndarray, lam: np.ndarray,
                        kind: str) -> tuple[np.ndarray, np.ndarray]:
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
# exactly what evaluate_candidates computes (the same operations on the same numbers, value by value:
# tests/mechanisms/test_posterior_sampling.py asserts equality against evaluate_candidates) with one log-Gamma
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


class CandidateStack:
    """Candidate sets (:class:`Candidates`) of several table shapes, all with one row or all with several.

    Each table is padded to a common length by repeating its last row, which
    leaves every maximum over candidates unchanged.
    """

    def __init__(self, sets: Sequence[Candidates]) -> None:
        self.cross = sets[0].rows > 1

        def pad(tables):
            k = max(len(t) for t in tables)
            return np.stack([np.concatenate([t, np.repeat(t[-1:], k - len(t), axis=0)]) for t in tables])

        self.move = pad([c.move for c in sets])
        if self.cross:
            self.add = pad([c.add for c in sets])
            self.remove = pad([c.remove for c in sets])


def evaluate_stacked(stack: CandidateStack, which: np.ndarray, scale: np.ndarray, lam: np.ndarray,
                     kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`evaluate_candidates` for 1-D ``scale`` and ``lam``, target ``k`` on candidate set ``which[k]`` of ``stack``.

    Value by value what :func:`evaluate_candidates` returns for each target on its own set
    (the same operations on the same numbers); inputs that overflow or leave
    the domain go through :func:`evaluate_candidates` for its errors.
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
        return None  # the caller evaluates set by set through evaluate_candidates (its errors)
    div = _beta_divergence(*flat, lams.ravel()).reshape(lam.size, -1)
    m = sizes[0]
    move = div[:, :m].max(axis=-1)
    if not stack.cross:
        return move, np.zeros_like(move)
    k = sizes[1]
    return move, div[:, m:m + k].max(axis=-1) + div[:, m + k:].max(axis=-1)


def checked_setting(prior: ArrayLike, d: int | None, value: ArrayLike, name: str, lam: ArrayLike, n_total: int,
                    rows: int, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int, str]:
    """The validated inputs of a worst case or a calibration, in the order they are checked:
    ``(prior, value, lam, n_total, rows, kind)`` with ``value`` (a scale or a target
    :math:`\\varepsilon`, positive, called ``name`` in errors) and ``lam`` broadcast together."""
    a = prior_vector(prior, d)
    value = validation.positive(value, name)
    lam = validation.order(lam, "lam", strict=True)
    N = validation.integer(n_total, "n_total")
    rows = validation.integer(rows, "rows")
    kind = _kind(kind)
    value, lam = validation.broadcast(**{name: value, "lam": lam})
    return a, value, lam, N, rows, kind


def worst_case(prior: ArrayLike, scale: ArrayLike, lam: ArrayLike, n_total: int, *, rows: int = 1, d: int | None = None,
               kind: str = "diffused", parts: bool = False) -> np.ndarray | float | tuple:
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
    a, scale, lam, N, rows, kind = checked_setting(prior, d, scale, "scale", lam, n_total, rows, kind)
    cand = Candidates(a, N, rows)
    got = None
    if cand.size * max(scale.size, 1) <= MAX_CANDIDATE_CELLS:  # evaluate_candidates's values, fewer calls
        got = evaluate_stacked(CandidateStack([cand]), np.zeros(scale.size, int), scale.ravel(), lam.ravel(), kind)
    if got is None:
        move, cross = evaluate_candidates(cand, scale, lam, kind)
    else:
        move, cross = (x.reshape(scale.shape) for x in got)
    worst = refuse_nan(np.maximum(move, cross), "lam, scale")
    if parts:
        return worst[()], move[()], cross[()]
    return worst[()]


def critical_order(prior: ArrayLike, scale: ArrayLike, *, kind: str = "diffused") -> np.ndarray | float:
    """:math:`\\lambda^* = 1 + \\min_i b_i / s`: the worst case is finite exactly below it.

    For the true posterior (``scale = 1``) this is Corollary 1 of Geumlek et
    al., :math:`1 + \\min(\\alpha_0, \\beta_0)`; the diffused posterior moves it to
    :math:`1 + \\min_i a_i / r`, the concentrated one to :math:`1 + \\min_i a_i / m`.
    A record added to (or moved into) a bin with base :math:`b_j` and no data gives
    :math:`w_j = b_j - (\\lambda - 1)s` in eq. (16), which must be positive.
    """
    a = prior_vector(prior, 2) if np.ndim(prior) == 0 else prior_vector(prior)
    scale = validation.positive(scale, "scale")
    _kind(kind)
    with np.errstate(over="ignore"):
        out = 1 + a.min() / scale
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the critical order 1 + min(prior) / scale overflows; got prior minimum {a.min():g} "
                         f"and scale minimum {scale.min():g}")
    return out[()]


def geumlek_bound(prior: ArrayLike, scale: ArrayLike, lam: ArrayLike, n: int, *, kind: str = "diffused",
                  scale_corners: bool = True) -> np.ndarray | float:
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
    a = prior_vector(prior)
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
    return refuse_nan(out, "lam")[()]


def _compositions(n, k):
    """Every vector of ``k`` non-negative integers summing to ``n``."""
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        cuts = (-1,) + bars + (n + k - 1,)
        yield [cuts[t + 1] - cuts[t] - 1 for t in range(k)]


def brute_force_worst_case(prior: ArrayLike, scale: float, lam: float, n_total: int, *, rows: int = 1,
                           kind: str = "diffused", d: int | None = None) -> float:
    """:func:`worst_case` by enumeration: every table of ``rows`` x ``d`` counts summing to ``n_total``.

    Every replace-one neighbour of every table (the moves among
    :func:`lib.privacy.neighbours.all_neighbours` of the flattened table), the
    divergence of the whole table (rows released independently, so their
    divergences add), both directions. Exponential in the table size: for
    tests and small examples only; at most :data:`MAX_BRUTE_FORCE_TABLES`
    tables (a ValueError beyond).
    """
    a = prior_vector(prior, d)
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
        div = refuse_nan(renyi_divergence_dirichlet(u, v, lam).sum(axis=-1), "lam")
        worst = max(worst, float(div.max()))
    return worst
