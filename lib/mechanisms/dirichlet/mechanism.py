"""The Dirichlet mechanism of Algorithm 1 (Section 3.1).

Given a vector-valued query :math:`f` with squared :math:`\\ell_2`-sensitivity
:math:`\\Delta_2^2` and :math:`\\ell_\\infty`-sensitivity :math:`\\Delta_\\infty`, the
:math:`(\\lambda, \\varepsilon)`-RDP Dirichlet mechanism

1. finds :math:`r > 0` with :math:`\\varepsilon = \\tfrac12 \\lambda r^2 \\Delta_2^2
   \\psi'(1 + 3(\\lambda - 1) r \\Delta_\\infty)` (Line 1),
2. sets :math:`\\alpha = 1 + 4(\\lambda - 1) r \\Delta_\\infty` (Line 2),
3. outputs :math:`y \\sim \\mathrm{Dirichlet}(r f(x) + \\alpha)` (Line 3).

Remark 1 of the paper generalises Lines 1-2 to any :math:`g \\ge 0`:
:math:`\\varepsilon = \\tfrac12\\lambda r^2\\Delta_2^2\\psi'(1 + g(r))` and
:math:`\\alpha = 1 + g(r) + (\\lambda - 1) r\\Delta_\\infty`. Here :math:`g(r) = k
(\\lambda - 1) r \\Delta_\\infty` with ``g_factor`` :math:`k` (the paper's :math:`k = 3`).
Remark 2 adds a known lower bound :math:`b` on every count inside :math:`\\psi'`.
"""

from __future__ import annotations

from typing import Self, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.batching import batchable, log_views, normalise_rows, release_buffer
from lib.mechanisms.dirichlet.approximate_dp import (dirichlet_order, exact_model_order_many, model_order_many,
                                                     public_reference)
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.curve import check_above_floor, exact_curve
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.privacy.neighbours import all_neighbours
from lib.mechanisms.protocol import (L2_SQ, LINF, ApproximateDP, Guarantee, Mechanism, ModelCalibration, NotPrivate, RenyiDP)


class DirichletMechanism(Mechanism):
    """The :math:`(\\lambda, \\varepsilon)`-RDP Dirichlet mechanism (Algorithm 1, Theorem 1).

    Parameters
    ----------
    epsilon : float
        RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : float
        Renyi order :math:`\\lambda \\in [1, \\infty)`. Theorem 1 states Renyi DP of
        an order above 1 only; at :math:`\\lambda = 1` (Line 1's closed form,
        :math:`\\alpha = 1`) :attr:`guarantee` is the exact curve alone.
    l2_sq : float, default 2.0
        Squared :math:`\\ell_2`-sensitivity :math:`\\Delta_2^2` of the counts (2 for a
        histogram when one record is replaced; 1 when one is added or removed).
    linf : float, default 1.0
        :math:`\\ell_\\infty`-sensitivity :math:`\\Delta_\\infty` of the counts.

    Attributes
    ----------
    r, alpha : float
        Lines 1 and 2 of Algorithm 1, from :func:`calibrate`.

    Examples
    --------
    >>> import numpy as np
    >>> from lib import DirichletMechanism
    >>> mech = DirichletMechanism(epsilon=1.0, lam=2.0)
    >>> y = mech.release([119, 74, 618, 272, 13, 187], rng=np.random.default_rng(0))
    >>> y.shape, bool(np.isclose(y.sum(), 1.0))
    ((6,), True)
    """

    name, label = "dirichlet", "Dirichlet"
    #: How the (eps_hat, delta) calibration chooses the order: "optimal" (expected KL of
    #: public reference tables, :func:`lib.mechanisms.dirichlet.approximate_dp.model_order`) or
    #: "fixed" (the author's rule, :func:`lib.mechanisms.dirichlet.order.fixed_order`).
    order_rule = "optimal"

    def __init__(self, epsilon: float | None, lam: float | None, l2_sq: float | None = 2.0, linf: float | None = 1.0, *,
                 _solved: tuple[float, float, Guarantee | None] | None = None) -> None:
        # ``_solved`` is for the two other constructors of this class: ``(r, alpha, statement)`` already
        # solved and checked by :meth:`from_concentration` (no RDP target: the four targets are None) or by
        # :meth:`_from_choice` (an order choice holds Line 1's solution at its level; statement None).
        if _solved is not None:
            self.epsilon, self.lam, self.l2_sq, self.linf = epsilon, lam, l2_sq, linf
            self.r, self.alpha, self._statement = _solved
            return
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self.lam = validation.scalar(validation.order(lam, "lam"), "lam")
        self.l2_sq = validation.scalar(validation.positive(l2_sq, "l2_sq"), "l2_sq")
        self.linf = validation.scalar(validation.positive(linf, "linf"), "linf")
        self.r, self.alpha = (float(v) for v in calibrate(self.epsilon, self.lam, self.l2_sq, self.linf))
        self._statement = None

    @classmethod
    def from_concentration(cls, r: float, alpha: float, guarantee: Guarantee | None = None) -> Self:
        """A Dirichlet release with a given scale and pseudo-count, no RDP target.

        Line 3 of Algorithm 1 with :math:`r` and :math:`\\alpha` chosen by some
        other accounting (for example Gohari et al.'s
        :math:`(\\hat\\varepsilon, \\delta)` guarantee,
        :func:`lib.mechanisms.gohari.gohari_calibrate`). The attributes ``epsilon``,
        ``lam``, ``l2_sq`` and ``linf`` are None (no RDP target was asked
        for), so :meth:`worst_neighbour` is unavailable.

        Parameters
        ----------
        r : float
            Scale :math:`r \\in (0, \\infty)` of the counts.
        alpha : float
            Pseudo-count :math:`\\alpha \\in (0, \\infty)`.
        guarantee : Guarantee, optional
            What the other accounting proves for one release. Default: the
            Renyi DP that Theorem 1 gives these :math:`(r, \\alpha)` for a
            histogram under replace-one neighbours (Notes), or
            :class:`lib.privacy.guarantees.NotPrivate` (no statement) when
            :math:`\\alpha \\le 1`.

        Returns
        -------
        DirichletMechanism

        Raises
        ------
        ValueError
            If ``r`` or ``alpha`` is not positive and finite, or ``guarantee``
            is not a :class:`lib.privacy.guarantees.Guarantee`.

        Notes
        -----
        Algorithm 1 with sensitivities :math:`(\\Delta_2^2, \\Delta_\\infty) = (2,
        1)` at :math:`(\\lambda, \\varepsilon)` releases exactly
        :math:`\\mathrm{Dirichlet}(r f + \\alpha)` when :math:`\\lambda = 1 +
        (\\alpha - 1)/(4r)` and :math:`\\varepsilon = \\lambda r^2\\psi'(1 +
        3(\\alpha - 1)/4)` (Line 1 solved for :math:`\\varepsilon`, Line 2 for
        :math:`\\lambda`), so Theorem 1 states that Renyi DP for every
        :math:`\\alpha > 1`.

        Examples
        --------
        >>> m = DirichletMechanism.from_concentration(0.5, 9.0)
        >>> m
        DirichletMechanism.from_concentration(r=0.5, alpha=9)
        >>> m.guarantee.lam
        5.0
        """
        r = validation.scalar(validation.positive(r, "r"), "r")
        alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
        if guarantee is None:
            guarantee = _theorem_1(r, alpha)
        if not isinstance(guarantee, Guarantee):
            raise ValueError(f"guarantee must be a Guarantee (e.g. ApproximateDP(0.1, 1e-6)); got {guarantee!r}")
        return cls(None, None, None, None, _solved=(r, alpha, guarantee))

    @property
    def guarantee(self) -> Guarantee:
        """:math:`(\\lambda, \\varepsilon)`-RDP (Theorem 1); for :meth:`from_concentration`, its statement.

        The curve is the exact worst case over neighbouring histograms at every
        order (:func:`lib.mechanisms.dirichlet.curve.exact_curve`), for
        histogram sensitivities; None for other sensitivities. At
        :math:`\\lambda = 1`, where Theorem 1 states nothing, the exact curve
        alone, stated at the middle of its finite range :math:`[1, 1 +
        \\alpha/(r\\Delta_\\infty))` (:func:`lib.mechanisms.dirichlet.curve.order_limit`),
        or :class:`lib.privacy.guarantees.NotPrivate` (no statement) for other
        sensitivities.

        Examples
        --------
        >>> g = DirichletMechanism(epsilon=1, lam=1).guarantee
        >>> round(g.lam, 4), bool(g.curve(1.5) < g.curve(g.lam))
        (1.6413, True)
        """
        if self.epsilon is None:
            return self._statement
        curve = exact_curve(self.r, self.alpha, self.l2_sq, self.linf)
        if self.lam > 1:
            return RenyiDP(self.lam, self.epsilon, curve=curve)
        # lam = 1: Theorem 1 states nothing (its order must exceed 1); the exact worst case over
        # neighbours is finite below its order limit, stated at the middle of that range, where one is known
        if curve is None:
            return NotPrivate()
        stated = 1 + (curve.limit - 1) / 2
        return RenyiDP(stated, float(curve(stated)), curve=curve)

    @classmethod
    def _renyi_release(cls, target, spec, index):
        """Algorithm 1 at the share :math:`(\\lambda, \\varepsilon)` with replace-one sensitivities (2, 1)."""
        return cls(target.epsilon, target.lam, l2_sq=L2_SQ, linf=LINF)

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """All :math:`m` releases at one order, composed in RDP and converted once by eq. (14).

        The order minimises the expected KL loss of public reference tables of
        the releases' shapes (:func:`lib.mechanisms.dirichlet.approximate_dp.public_reference`,
        :func:`lib.mechanisms.dirichlet.approximate_dp.dirichlet_order`), or follows the author's
        rule when ``order_rule`` is "fixed". Each release is
        :math:`(\\lambda, \\varepsilon/m)`-RDP; the calibration states ``target``,
        the conversion of their composition.
        """
        key = cls._order_key(target, spec)
        if cache is not None and key in cache:
            return cls._from_choice(cache[key], spec, target)
        sizes = [d for _, d in spec.shapes]
        rows = [k for k, _ in spec.shapes]
        reference = public_reference(spec.n_total, sizes, rows) if cls.order_rule == "optimal" else None
        choice = dirichlet_order(target.epsilon, target.delta, spec.n_releases, reference=reference,
                                 rule=cls.order_rule)
        if cache is not None:
            cache[key] = choice
        return cls._from_choice(choice, spec, target)

    @classmethod
    def _order_key(cls, target, spec):
        """The key of an order choice in a calibration cache (the target checked first)."""
        eps = validation.scalar(validation.positive(target.epsilon, "epsilon_hat"), "epsilon_hat")
        return ("dirichlet-order", cls.order_rule, eps, target.delta, spec.n_total, tuple(spec.shapes))

    @classmethod
    def _calibrate_approximate_many(cls, targets, spec, cache):
        """The (eps_hat, delta) calibration of every target, the order searches run together.

        With ``order_rule = "optimal"`` and one :math:`\\delta` the searches of
        all targets run in lockstep
        (:func:`lib.mechanisms.dirichlet.approximate_dp.model_order_many`), with
        the same result for each target as one at a time.
        """
        deltas = {t.delta for t in targets}
        own = cls._calibrate_approximate.__func__ is DirichletMechanism._calibrate_approximate.__func__
        if cls.order_rule != "optimal" or not own or len(deltas) != 1:
            # the author's rule, a subclass with a calibration of its own, or several deltas: one by one
            return [cls._calibrate_approximate(t, spec, cache) for t in targets]
        cache = {} if cache is None else cache
        keys = [cls._order_key(t, spec) for t in targets]
        cls._search_missing(targets, spec, cache, keys, model_order_many)
        return [cls._from_choice(cache[key], spec, t) for key, t in zip(keys, targets)]

    @staticmethod
    def _search_missing(targets, spec, cache, keys, search):
        """Fill ``cache[keys[i]]`` for every target it does not hold, by ``search`` of all of them at
        once per :math:`\\delta` (``search(epsilon_hats, delta, reference, n_releases=m)``, on the public
        reference tables of ``spec``)."""
        todo = [i for i, key in enumerate(keys) if key not in cache]
        if not todo:
            return
        reference = public_reference(spec.n_total, [d for _, d in spec.shapes], [k for k, _ in spec.shapes])
        for delta in sorted({targets[i].delta for i in todo}):
            which = [i for i in todo if targets[i].delta == delta]
            found = search([targets[i].epsilon for i in which], delta, reference, n_releases=spec.n_releases)
            for i, result in zip(which, found):
                cache[keys[i]] = result

    @classmethod
    def _from_choice(cls, choice, spec, target):
        """The (eps_hat, delta) calibration for an :class:`lib.mechanisms.dirichlet.order.OrderChoice`.

        The choice already holds Algorithm 1's ``r`` and ``alpha`` at its order
        and level (the values the constructor would compute: Line 1 solves each
        entry on its own), so the object is built from them, not solved again.
        """
        mech = cls(float(choice.epsilon), float(choice.lam), L2_SQ, LINF,
                   _solved=(float(choice.r), float(choice.alpha), None))
        params = {"lam": choice.lam, "r": mech.r, "alpha": mech.alpha, "epsilon_rdp": choice.epsilon}
        return ModelCalibration(cls.name, True, (mech,) * spec.n_releases, params, target)

    def __repr__(self) -> str:
        if self.epsilon is None:
            return f"DirichletMechanism.from_concentration(r={self.r:.6g}, alpha={self.alpha:.6g})"
        return (
            f"DirichletMechanism(epsilon={self.epsilon:g}, lam={self.lam:g}, l2_sq={self.l2_sq:g}, "
            f"linf={self.linf:g}; r={self.r:.6g}, alpha={self.alpha:.6g})"
        )

    def concentration(self, counts: ArrayLike) -> np.ndarray:
        """The Dirichlet parameters :math:`r f(x) + \\alpha` of Line 3.

        Parameters
        ----------
        counts : array_like, shape (..., d)
            Non-negative finite counts :math:`f(x)`, ``d >= 2``.
        """
        counts = validation.vectors(counts, "counts", positive_entries=False)
        with np.errstate(over="ignore"):
            out = np.multiply(counts, self.r, order="C")  # a fresh C-ordered array, also for views
            out += self.alpha
        if out.size and not np.isfinite(out.max()):  # one reduction; counts are finite
            raise ValueError(
                f"counts must be at most {np.finfo(float).max / self.r:.6g}: r * counts + alpha "
                f"overflows double precision (r = {self.r:.6g}, largest count {counts.max():.6g})"
            )
        return out

    def worst_neighbour(self, counts: ArrayLike) -> tuple[float, np.ndarray]:
        """The privacy this mechanism actually spends on one histogram.

        Theorem 1 bounds :math:`D_\\lambda` between the outputs on any two
        neighbouring datasets by :math:`\\varepsilon`. For a given histogram the
        exact worst case is a maximum over its neighbours (:func:`lib.all_neighbours`)
        and both directions of the divergence, eqs. (16)-(17).

        Parameters
        ----------
        counts : array_like of int, shape (d,)
            Non-negative whole counts.

        Returns
        -------
        divergence : float
            The largest exact Renyi divergence of order ``lam``; below ``epsilon``
            by Theorem 1.
        neighbour : ndarray, shape (d,)
            A neighbouring histogram that attains it.
        """
        if self.lam is None:
            raise ValueError("worst_neighbour needs an RDP order: this mechanism was built by "
                             "from_concentration, without one")
        counts = np.asarray(counts, dtype=float)
        neighbours = all_neighbours(counts)
        u, v = self.concentration(counts), self.concentration(neighbours)
        spent = np.maximum(renyi_divergence_dirichlet(u, v, self.lam), renyi_divergence_dirichlet(v, u, self.lam))
        worst = int(np.argmax(spent))
        return float(spent[worst]), neighbours[worst]

    @classmethod
    def log_release_tables(cls, objects: Sequence[Mechanism], tables: Sequence[np.ndarray], n_draws: int,
                           rng: np.random.Generator) -> list[np.ndarray]:
        """:meth:`lib.mechanisms.protocol.Mechanism.log_release_tables`, all tables in one buffer.

        Every concentration :math:`r f + \\alpha` is written in release order,
        the Gamma variates of all tables drawn by one call (a Generator fills
        an array element by element, so the stream and the values are those of
        one call per table) and the rows normalised together: bit for bit the
        draws of :meth:`release`. Where a concentration is below 1 or
        overflows (:meth:`release`'s rare paths), or an object's class changes
        the release, nothing is drawn here and the tables are released one by
        one (the protocol's loop).
        """
        if not batchable(DirichletMechanism, ("release", "concentration"), objects, tables):
            return Mechanism.log_release_tables.__func__(cls, objects, tables, n_draws, rng)
        flat, views = release_buffer(tables, n_draws)
        with np.errstate(over="ignore"):
            for m, v, t in zip(objects, views, tables):
                np.multiply(t, m.r, out=v)  # release's concentration r f + alpha, entry by entry
                v += m.alpha
        if flat.size and not (flat.min() >= 1 and np.isfinite(flat.max())):
            return Mechanism.log_release_tables.__func__(cls, objects, tables, n_draws, rng)
        rng.standard_gamma(flat, out=flat)
        normalise_rows(flat, views)
        return log_views(flat, views)

    def release(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """Line 3: one draw :math:`y \\sim \\mathrm{Dirichlet}(r f(x) + \\alpha)` per vector.

        Parameters
        ----------
        counts : array_like, shape (..., d)
            Non-negative finite counts; every vector along the last axis is
            released independently.
        rng : numpy.random.Generator or int or None
            Source of randomness; a non-negative integer seeds
            ``numpy.random.default_rng``, None draws fresh entropy.

        Returns
        -------
        ndarray, shape (..., d)
            Points of the probability simplex, every entry positive and finite.
            Drawn as normalised independent Gamma variables. Algorithm 1 has
            every shape parameter at least :math:`\\alpha \\ge 1`, so no draw
            underflows. A batch with a shape parameter below 1 (possible
            through :meth:`from_concentration`) is drawn in logarithms instead,
            :math:`\\log G = \\log G' + \\log(U)/a` with :math:`G' \\sim
            \\Gamma(a + 1)` and :math:`U` uniform, normalised by the largest
            entry; an entry whose share is below the smallest normal double is
            raised to it. A row whose sum overflows is divided by its largest
            entry before it is normalised.

        Raises
        ------
        ValueError
            If ``r * counts + alpha`` overflows double precision.
        """
        rng = validation.generator(rng)
        # Gamma draws overwrite their own shape parameters (each element depends only
        # on its own parameter), so a release allocates one array of the batch's size.
        y = self.concentration(counts)
        if y.size and y.min() < 1:
            return _log_space_dirichlet(y, rng)
        rng.standard_gamma(y, out=y)
        with np.errstate(over="ignore"):
            total = y.sum(axis=-1, keepdims=True)
        if not np.isfinite(total).all():  # huge concentrations: scale by the largest draw first
            if not np.isfinite(y.max()):
                raise ValueError("counts are too large: a Gamma draw of r * counts + alpha overflows "
                                 "double precision")
            y /= y.max(axis=-1, keepdims=True)
            total = y.sum(axis=-1, keepdims=True)
        y /= total
        return y


def _theorem_1(r, alpha):
    """The Renyi DP of :math:`\\mathrm{Dirichlet}(r f + \\alpha)` by Theorem 1.

    NotPrivate (no statement) where Theorem 1 gives none in double precision:
    :math:`\\alpha \\le 1`, an order that rounds to 1, or a level that overflows.
    """
    lam = 1 + (alpha - 1) / (4 * r)
    with np.errstate(over="ignore"):
        eps = float(np.float64(lam) * r * r * special.polygamma(1, 1 + 0.75 * (alpha - 1)))
    if not (alpha > 1 and lam > 1 and np.isfinite(eps)):
        return NotPrivate()
    return RenyiDP(lam, eps)


def _log_space_dirichlet(a, rng):
    """Dirichlet(a) draws for shape parameters that may be far below 1, never zero or NaN.

    ``Gamma(a) = Gamma(a + 1) U^{1/a}`` in distribution, so ``log G = log G' +
    log(U)/a`` is finite even where ``G`` underflows; rows are normalised by
    their largest entry in logarithms, and entries below the smallest normal
    double are raised to it (a change far below the resolution of the sum).
    """
    log_g = np.log(rng.standard_gamma(a + 1))
    log_g += np.log1p(-rng.random(a.shape)) / a
    log_g -= log_g.max(axis=-1, keepdims=True)
    y = np.exp(log_g, out=log_g)
    y /= y.sum(axis=-1, keepdims=True)
    np.maximum(y, np.finfo(float).tiny, out=y)
    return y




class ExactCurveDirichlet(DirichletMechanism):
    """Algorithm 1 calibrated to an :math:`(\\hat\\varepsilon, \\delta)` target through its exact Renyi curve.

    At every order of Algorithm 1 the RDP level is the largest for which the
    :math:`m` releases' exact curves, composed and converted at their best
    order, still meet the target
    (:func:`lib.mechanisms.dirichlet.curve.exact_scale`); the order minimises
    the expected KL loss of the public reference tables at that level
    (:func:`lib.mechanisms.dirichlet.approximate_dp.exact_model_order_many`), as
    :class:`DirichletMechanism` does for the paper's calibration. Same release,
    less noise; the paper's calibration stays :class:`DirichletMechanism`.

    Notes
    -----
    Each object states Theorem 1's :math:`(\\lambda, \\varepsilon)` with its exact
    curve; the calibration states the target, which the composed exact curves
    meet (an audit over all neighbouring histograms, not Theorem 1's bound).
    At the chosen order eq. (14) with Theorem 1's level may not meet the
    target at all (``paper_epsilon_rdp`` not positive).
    """

    name, label = "dirichlet_exact", "Dirichlet (exact curve)"
    notions = (ApproximateDP,)

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """The exact calibration of all :math:`m` releases at the best order (one target)."""
        return cls._calibrate_approximate_many([target], spec, cache)[0]

    @classmethod
    def _calibrate_approximate_many(cls, targets, spec, cache):
        """The exact calibrations of every target, the order searches of one :math:`\\delta` run together."""
        cache = {} if cache is None else cache
        keys = [("dirichlet-exact", validation.scalar(validation.positive(t.epsilon, "epsilon_hat"), "epsilon_hat"),
                 t.delta, spec.n_total, tuple(spec.shapes)) for t in targets]
        for i, key in enumerate(keys):
            if key in cache:
                continue
            try:  # a target below what any scale can meet: not attained, with the reason (never another calibration)
                check_above_floor(targets[i].epsilon, targets[i].delta)
            except ValueError as error:
                cache[key] = str(error)
        cls._search_missing(targets, spec, cache, keys, exact_model_order_many)
        return [cls._from_exact(cache[key], spec, t) for key, t in zip(keys, targets)]

    @classmethod
    def _from_exact(cls, exact, spec, target):
        if isinstance(exact, str):
            return ModelCalibration(cls.name, False, (), {"reason": exact})
        mech = cls(exact.epsilon, exact.lam, L2_SQ, LINF, _solved=(exact.r, exact.alpha, None))
        params = {"lam": exact.lam, "r": mech.r, "alpha": mech.alpha, "epsilon_rdp": exact.epsilon,
                  "paper_epsilon_rdp": exact.paper_epsilon, "epsilon_hat_met": exact.epsilon_hat}
        return ModelCalibration(cls.name, True, (mech,) * spec.n_releases, params, target)
