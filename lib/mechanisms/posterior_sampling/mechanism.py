"""The posterior samplers as mechanisms, and their calibration (Geumlek et al. 2017, Algorithms 1-3).

:class:`TruePosterior`, :class:`DiffusedPosterior` and :class:`ConcentratedPosterior`
release one draw of :math:`\\mathrm{Dir}(b + s c)`. :func:`calibrate_scale` finds the
scale :math:`r` (or :math:`m`) whose exact worst case
(:func:`lib.mechanisms.posterior_sampling.analysis.worst_case`) meets a target, by a
bracketing search in its logarithm down to adjacent floating-point numbers; the
classes' calibrations run it for every table shape of a model at once.
"""

from __future__ import annotations

from typing import Any

import collections.abc
import functools

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.batching import batchable, log_views, release_buffer
from lib.privacy.accounting import dp_to_rdp, min_order
from lib.mechanisms.protocol import Mechanism, ModelCalibration, NotPrivate, RenyiDP, checked_spec
from lib.mechanisms.posterior_sampling.analysis import Candidates, CandidateStack, checked_setting, DEFAULT_PRIOR, evaluate_candidates, evaluate_stacked, MAX_CANDIDATE_CELLS, refuse_nan, worst_case


#: Steps of the search in log r before giving up (adjacent floats are reached in well under 200).
_MAX_BISECTION = 2000
#: Smallest log-scale tried when bracketing (r = e^-700 is ~1e-304).
_LOG_SCALE_FLOOR = -700.0


#: Largest number of orders on the grid of :meth:`_PosteriorSampler._calibrate_approximate`.
MAX_ORDERS = 10**4


_NO_INDEX = object()


def _spec(spec, index=_NO_INDEX):
    """``(shapes, n_total)`` of a :class:`lib.mechanisms.protocol.ReleaseSpec` (and ``shapes[index]``).

    The spec's fields were checked when it was made; ``spec`` itself and ``index`` are checked here.
    """
    spec = checked_spec(spec)
    if index is _NO_INDEX:
        return spec.shapes, spec.n_total
    index = validation.integer(index, "index", 0, spec.n_releases - 1)
    return spec.shapes, spec.n_total, spec.shapes[index]


def _search(sets, set_of, eps, L, kind, *, reference=False, prune=None):
    """Largest feasible scales: target ``k`` (level ``eps[k]``, order ``L[k]``) on candidate set ``sets[set_of[k]]``.

    The search of :func:`calibrate_scale`, for all targets at once (each
    target's sequence of trial scales depends on its own values only, so the
    scales equal those of one search per set). ``reference=True`` evaluates set
    by set through :func:`evaluate_candidates` (the path before the stacked evaluator;
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
                groups.append((CandidateStack([sets[i] for i in members]), local[set_of]))

    def evaluate(scale, which):
        out = np.empty(which.size)
        for stack, local in groups:
            sel = local[which] >= 0
            if not sel.any():
                continue
            every = sel.all()
            w = which if every else which[sel]
            got = evaluate_stacked(stack, local[w], scale if every else scale[sel], L[w], kind)
            if got is None:
                break
            out[sel] = refuse_nan(np.maximum(*got), "lam")
        else:
            if groups:
                return out
        for k in np.unique(set_of[which]):  # the reference path, set by set
            sel = set_of[which] == k
            move, cross = evaluate_candidates(sets[k], scale[sel], L[which[sel]], kind)
            out[sel] = refuse_nan(np.maximum(move, cross), "lam")
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


# ----------------------------------------------------------------------------- calibration


def calibrate_scale(epsilon: ArrayLike, lam: ArrayLike, prior: ArrayLike, n_total: int, *, rows: int = 1,
                    d: int | None = None, kind: str = "diffused") -> np.ndarray | float:
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
    a, epsilon, lam, N, rows, kind = checked_setting(prior, d, epsilon, "epsilon", lam, n_total, rows, kind)
    shape = epsilon.shape
    eps, L = epsilon.ravel(), lam.ravel()

    cand = Candidates(a, N, rows)
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
        a, eps, lams, N, rows, kind = checked_setting(prior, d, epsilon, "epsilon", lam, n_total, rows, kind)
        cand = Candidates(a, N, rows)
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

    def __init__(self, prior: ArrayLike = DEFAULT_PRIOR, **kwargs: Any) -> None:
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
