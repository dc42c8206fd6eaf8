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

import numpy as np

from lib import _validate
from lib.mechanisms.dirichlet.approximate_dp import (GOHARI_LAM, dirichlet_order, gohari_prefill, gohari_releases, model_order_many,
                            public_reference)
from lib.mechanisms.noise import _normalise_rows
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.privacy.neighbours import all_neighbours
from lib.mechanisms.protocol import L2_SQ, LINF, ApproximateDP, Mechanism, ModelCalibration, RenyiDP, _dp_targets, register


class DirichletMechanism(Mechanism):
    """The :math:`(\\lambda, \\varepsilon)`-RDP Dirichlet mechanism (Algorithm 1, Theorem 1).

    Parameters
    ----------
    epsilon : float
        RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : float
        Renyi order :math:`\\lambda \\in [1, \\infty)`.
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
    #: How :meth:`calibrate_dp` chooses the order: "optimal" (expected KL of
    #: public reference tables, :func:`lib.mechanisms.dirichlet.approximate_dp.model_order`) or
    #: "fixed" (the author's rule, :func:`lib.mechanisms.dirichlet.order.fixed_order`).
    order_rule = "optimal"

    def __init__(self, epsilon, lam, l2_sq=2.0, linf=1.0):
        self.epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
        self.lam = _validate.scalar(_validate.order(lam, "lam"), "lam")
        self.l2_sq = _validate.scalar(_validate.positive(l2_sq, "l2_sq"), "l2_sq")
        self.linf = _validate.scalar(_validate.positive(linf, "linf"), "linf")
        self.r, self.alpha = (float(v) for v in calibrate(self.epsilon, self.lam, self.l2_sq, self.linf))

    @classmethod
    def from_concentration(cls, r, alpha):
        """A Dirichlet release with a given scale and pseudo-count, no RDP target.

        Line 3 of Algorithm 1 with :math:`r` and :math:`\\alpha` chosen by some
        other accounting (for example Gohari et al.'s
        :math:`(\\hat\\varepsilon, \\delta)` guarantee,
        :func:`lib.mechanisms.gohari.gohari_calibrate`). The attributes ``epsilon``,
        ``lam``, ``l2_sq`` and ``linf`` are None: the object makes no RDP claim,
        so :meth:`worst_neighbour` is unavailable.

        Parameters
        ----------
        r : float
            Scale :math:`r \\in (0, \\infty)` of the counts.
        alpha : float
            Pseudo-count :math:`\\alpha \\in (0, \\infty)`.

        Examples
        --------
        >>> DirichletMechanism.from_concentration(0.5, 9.0)
        DirichletMechanism.from_concentration(r=0.5, alpha=9)
        """
        self = cls.__new__(cls)
        self.epsilon = self.lam = self.l2_sq = self.linf = None
        self.r = _validate.scalar(_validate.positive(r, "r"), "r")
        self.alpha = _validate.scalar(_validate.positive(alpha, "alpha"), "alpha")
        return self

    @property
    def guarantee(self):
        """:math:`(\\lambda, \\varepsilon)`-RDP (Theorem 1); None for :meth:`from_concentration`."""
        if self.epsilon is None:
            return None
        return RenyiDP(self.lam, self.epsilon)

    @classmethod
    def for_release_rdp(cls, epsilon, lam, spec, index):
        """Algorithm 1 at :math:`(\\lambda, \\varepsilon)` with replace-one sensitivities (2, 1)."""
        return cls(epsilon, lam, l2_sq=L2_SQ, linf=LINF)

    @classmethod
    def calibrate_dp(cls, epsilon_hat, delta, spec, *, cache=None):
        """All :math:`m` releases at one order, composed in RDP and converted once by eq. (14).

        The order minimises the expected KL loss of public reference tables of
        the releases' shapes (:func:`lib.mechanisms.dirichlet.approximate_dp.public_reference`,
        :func:`lib.mechanisms.dirichlet.approximate_dp.dirichlet_order`), or follows the author's
        rule when ``order_rule`` is "fixed".
        """
        key = cls._order_key(epsilon_hat, delta, spec)
        if cache is not None and key in cache:
            return cls._from_choice(cache[key], spec)
        sizes = [d for _, d in spec.shapes]
        rows = [k for k, _ in spec.shapes]
        reference = public_reference(spec.n_total, sizes, rows) if cls.order_rule == "optimal" else None
        choice = dirichlet_order(epsilon_hat, delta, spec.n_releases, reference=reference,
                                 rule=cls.order_rule)
        if cache is not None:
            cache[key] = choice
        return cls._from_choice(choice, spec)

    @classmethod
    def _order_key(cls, epsilon_hat, delta, spec):
        """The key of an order choice in a calibration cache (the target checked first)."""
        eps = _validate.scalar(_validate.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
        dlt = _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
        return ("dirichlet-order", cls.order_rule, eps, dlt, spec.n_total, tuple(spec.shapes))

    @classmethod
    def calibrate_dp_many(cls, epsilon_hats, delta, spec, *, cache=None):
        """:meth:`calibrate_dp` at every target, the order searches run together.

        With ``order_rule = "optimal"`` the searches of all targets run in
        lockstep (:func:`lib.mechanisms.dirichlet.approximate_dp.model_order_many`), with the same
        result for each target as :meth:`calibrate_dp`.
        """
        if cls.order_rule != "optimal" or cls.calibrate_dp.__func__ is not DirichletMechanism.calibrate_dp.__func__:
            # the author's rule, or a subclass with a calibration of its own: target by target
            return Mechanism.calibrate_dp_many.__func__(cls, epsilon_hats, delta, spec, cache=cache)
        targets = _dp_targets(epsilon_hats)
        cache = {} if cache is None else cache
        keys = [cls._order_key(e, delta, spec) for e in targets]
        todo = [i for i, key in enumerate(keys) if key not in cache]
        if todo:
            reference = public_reference(spec.n_total, [d for _, d in spec.shapes], [k for k, _ in spec.shapes])
            choices = model_order_many([targets[i] for i in todo], delta, reference, n_releases=spec.n_releases)
            for i, choice in zip(todo, choices):
                cache[keys[i]] = choice
        return [cls._from_choice(cache[key], spec) for key in keys]

    @classmethod
    def _from_choice(cls, choice, spec):
        """The calibration of :meth:`calibrate_dp` for an :class:`lib.mechanisms.dirichlet.order.OrderChoice`.

        The choice already holds Algorithm 1's ``r`` and ``alpha`` at its order
        and level (the values the constructor would compute: Line 1 solves each
        entry on its own), so the object is built from them, not solved again.
        """
        mech = cls.__new__(cls)
        mech.epsilon, mech.lam, mech.l2_sq, mech.linf = float(choice.epsilon), float(choice.lam), L2_SQ, LINF
        mech.r, mech.alpha = float(choice.r), float(choice.alpha)
        params = {"lam": choice.lam, "r": mech.r, "alpha": mech.alpha, "epsilon_rdp": choice.epsilon}
        return ModelCalibration(cls.name, True, (mech,) * spec.n_releases, params)

    def __repr__(self) -> str:
        if self.epsilon is None:
            return f"DirichletMechanism.from_concentration(r={self.r:.6g}, alpha={self.alpha:.6g})"
        return (
            f"DirichletMechanism(epsilon={self.epsilon:g}, lam={self.lam:g}, l2_sq={self.l2_sq:g}, "
            f"linf={self.linf:g}; r={self.r:.6g}, alpha={self.alpha:.6g})"
        )

    def concentration(self, counts) -> np.ndarray:
        """The Dirichlet parameters :math:`r f(x) + \\alpha` of Line 3.

        Parameters
        ----------
        counts : array_like, shape (..., d)
            Non-negative finite counts :math:`f(x)`, ``d >= 2``.
        """
        counts = _validate.vectors(counts, "counts", positive_entries=False)
        with np.errstate(over="ignore"):
            out = np.multiply(counts, self.r, order="C")  # a fresh C-ordered array, also for views
            out += self.alpha
        if out.size and not np.isfinite(out.max()):  # one reduction; counts are finite
            raise ValueError(
                f"counts must be at most {np.finfo(float).max / self.r:.6g}: r * counts + alpha "
                f"overflows double precision (r = {self.r:.6g}, largest count {counts.max():.6g})"
            )
        return out

    def worst_neighbour(self, counts):
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

    @staticmethod
    def _release_tables(objects, tables, views, flat, rng) -> bool:
        """:meth:`release` of ``n_draws`` copies of every table by its object, into ``views`` of ``flat``.

        The batched path of :func:`lib.models.naive_bayes.log_releases` (the layout of
        :meth:`lib.mechanisms.noise._NoiseMechanism._release_tables`): every
        concentration :math:`r f + \\alpha` written in release order, the Gamma
        variates of all tables drawn by one call (a Generator fills an array
        element by element, so the stream and the values are those of one call
        per table) and the rows normalised together: bit for bit the draws of
        :meth:`release`. Returns False, with nothing drawn, where a
        concentration is below 1 or overflows (:meth:`release`'s rare paths);
        the caller then releases table by table.
        """
        with np.errstate(over="ignore"):
            for m, v, t in zip(objects, views, tables):
                np.multiply(t, m.r, out=v)  # release's concentration r f + alpha, entry by entry
                v += m.alpha
        if flat.size and not (flat.min() >= 1 and np.isfinite(flat.max())):
            return False
        rng.standard_gamma(flat, out=flat)
        _normalise_rows(flat, views)
        return True

    def release(self, counts, rng=None) -> np.ndarray:
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
        rng = _validate.generator(rng)
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


class GohariMechanism(DirichletMechanism):
    """Algorithm 1's release with :math:`r` from Gohari et al.'s :math:`(\\hat\\varepsilon, \\delta)` guarantee.

    :math:`\\mathrm{Dirichlet}(r f + \\alpha)` with :math:`\\alpha = 1 + 4(\\lambda - 1) r`
    at :math:`\\lambda` = :data:`lib.mechanisms.dirichlet.approximate_dp.GOHARI_LAM`, and :math:`r` from
    :func:`lib.mechanisms.gohari.gohari_calibrate` at :math:`(\\hat\\varepsilon/m, \\delta/m)`
    per release (basic composition, :func:`lib.mechanisms.dirichlet.approximate_dp.gohari_releases`).
    Built by :meth:`calibrate_dp` only; it has no RDP calibration.

    **Tables with private row totals.** Gohari et al.'s guarantee is for one
    vector with a known total. A table of ``rows`` vectors whose row totals are
    private (class or parent-configuration counts) but whose grand total is the
    public number of records :math:`N` (every record counted once) is treated as
    one histogram of ``rows * d`` cells with total :math:`N`: replacing one
    record moves one unit between two of its cells, so Gohari et al.'s
    guarantee for :math:`\\mathrm{Dirichlet}(r F + \\alpha)` over the flattened
    table holds with ``d = rows * d`` and ``n_total = N``. The rows of that one
    draw, each divided by its own sum, are independent
    :math:`\\mathrm{Dirichlet}(r f_c + \\alpha)` vectors (the Gamma representation
    of the Dirichlet law), which is exactly the row-by-row release; so the row
    release inherits the guarantee by post-processing. Until issue 19 the
    calibration used ``d`` (the row length) with ``n_total = N``, a guarantee
    that was not proven for private row totals; the flattened size costs a few
    percent of ``r`` (about 3 % for a 10 x 17 table at N = 3934).
    """

    name, label = "gohari", "Gohari et al."
    notions = ("dp",)

    @property
    def guarantee(self):
        """:math:`(\\hat\\varepsilon/m, \\delta/m)`-DP per release, as calibrated."""
        return self._guarantee

    @classmethod
    def for_release_rdp(cls, epsilon, lam, spec, index):
        raise ValueError("the 'gohari' mechanism has no RDP calibration (its guarantee is "
                         "(epsilon_hat, delta)-DP only)")

    @staticmethod
    def flat_sizes(spec):
        """The number of cells ``rows * d`` of each release of ``spec`` (one flattened histogram each)."""
        return [int(k) * int(d) for k, d in spec.shapes]

    @classmethod
    def calibrate_dp(cls, epsilon_hat, delta, spec, *, cache=None):
        """One :math:`r` per distinct flattened size ``rows * d``; not attained when no :math:`r` reaches the target.

        Each release is :math:`(\\hat\\varepsilon/m, \\delta/m)`-DP as one
        histogram of ``rows * d`` cells with total ``spec.n_total`` (class notes);
        the model is :math:`(\\hat\\varepsilon, \\delta)`-DP by basic composition.
        ``parameters["r"]`` and ``["alpha"]`` are keyed by the flattened size.
        """
        # A (rows, d) table is one histogram of rows * d cells with the public
        # total N (see the class notes): its guarantee is proven with private row totals.
        sizes = cls.flat_sizes(spec)
        # Bad arguments raise here; only an unreachable target is "not attained".
        _validate.scalar(_validate.positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
        _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
        try:
            found = gohari_releases(epsilon_hat, delta, sizes, n_total=spec.n_total, lam=GOHARI_LAM,
                                    cache=cache)
        except ValueError as exc:
            return ModelCalibration(cls.name, False, (), {"reason": str(exc)})
        m = spec.n_releases
        share = ApproximateDP(float(epsilon_hat) / m, float(delta) / m)
        by_size = dict(zip(sizes, found))
        objects = {}
        for d, g in by_size.items():
            objects[d] = cls.from_concentration(g.r, g.alpha)
            objects[d]._guarantee = share
        params = {"r": {d: float(g.r) for d, g in by_size.items()},
                  "alpha": {d: float(g.alpha) for d, g in by_size.items()}}
        return ModelCalibration(cls.name, True, tuple(objects[d] for d in sizes), params)

    @classmethod
    def calibrate_dp_many(cls, epsilon_hats, delta, spec, *, cache=None):
        """:meth:`calibrate_dp` at every target, Gohari et al.'s searches of all targets run together.

        The searches of every target and flattened size are solved in lockstep
        into ``cache`` (:func:`lib.mechanisms.dirichlet.approximate_dp.gohari_prefill`, the same
        results), then each target is calibrated by :meth:`calibrate_dp`,
        which finds them there.
        """
        targets = _dp_targets(epsilon_hats)
        cache = {} if cache is None else cache
        if cls.calibrate_dp.__func__ is GohariMechanism.calibrate_dp.__func__ and targets:
            try:  # what cannot be prefilled is met (and reported) by calibrate_dp itself
                gohari_prefill(targets, delta, cls.flat_sizes(spec), n_total=spec.n_total, lam=GOHARI_LAM,
                               cache=cache)
            except ValueError:
                pass
        return [cls.calibrate_dp(e, delta, spec, cache=cache) for e in targets]


register(DirichletMechanism)
register(GohariMechanism)
