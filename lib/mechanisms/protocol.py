"""The mechanism protocol: one contract for every way of releasing a distribution.

Every mechanism of the book, private or not, is an object with

* ``release(counts, rng)``: counts of shape ``(..., d)`` in, one point of the
  probability simplex per vector along the last axis out, every entry positive
  and finite (so that its logarithm is finite);
* ``guarantee``: the privacy statement it meets, a validated
  :class:`lib.privacy.guarantees.Guarantee` (:class:`RenyiDP`,
  :class:`ZeroConcentratedDP`, :class:`PureDP`, :class:`ApproximateDP` or
  :class:`NotPrivate`).

That is the contract of a histogram mechanism (``output = "distribution"``),
which every model of counts takes. A registered class may release something
else and say so in :attr:`Mechanism.output`: the mean and deviation of a bounded
sample (``"moments"``, :mod:`lib.mechanisms.bounded_moments`) or the weights of
a logistic regression (``"weights"``, :mod:`lib.mechanisms.logistic_posterior`);
``names(output=...)`` lists each kind.

A model (naive Bayes, a Bayesian network) makes :math:`m` releases, one per
table of counts, described by a :class:`ReleaseSpec`. A mechanism *class*
turns a target for the whole model, itself a guarantee, into one object per
release: :meth:`Mechanism.calibrate` ``(target, spec)`` chooses the calibration
by the target's type (the table :data:`CALIBRATIONS`), and
:meth:`Mechanism.calibrate_many` calibrates many targets of one type together.
The class attribute ``notions`` lists the types of target a class meets; any
other target is a ValueError, never a substitute.

* :class:`RenyiDP`: the one budget split of the book,
  ``target.split(m)`` (basic composition, Lemma 1 of the paper), then one
  object per release from the hook ``_renyi_release``;
* :class:`ApproximateDP`: :math:`(\\hat\\varepsilon, \\delta)` for the whole
  model (Appendix C); by default through Renyi DP at one order
  (:meth:`Mechanism._calibrate_approximate`), overridden by the classes with a
  calibration of their own;
* :class:`PureDP`: the split, then ``_pure_release``;
* :class:`NotPrivate`: the non-private estimates, one object per release from
  ``_not_private_release``.

Every calibration returns a :class:`ModelCalibration` that states the
guarantee of the whole release (:func:`lib.privacy.guarantees.compose` over
its releases, or the statement the calibration proves for them jointly).
:meth:`Mechanism.log_release_tables` releases all the tables of a model at once
(a loop by default; the Dirichlet and noise mechanisms override it).

Names exist only at the edge: the registry (:func:`get`, :func:`names`) maps a
command-line name to its class. Every class is listed once, in order, in
:data:`lib.mechanisms.registry.MECHANISMS`, which registers them (importing a
family registers nothing), so a new mechanism is one class with a ``name`` and
one entry in that list, and every grid, figure and command picks it up.
"""

from __future__ import annotations

import copyreg
from typing import Any, ClassVar, Hashable, NamedTuple, Self, Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.privacy.accounting import dp_to_rdp, search_order
from lib.privacy.guarantees import (ApproximateDP, Guarantee, NotPrivate, PureDP, RenyiDP, ZeroConcentratedDP,
                                    compose)

#: Replace-one sensitivities of one histogram release: one record leaves a cell
#: and enters another, so two counts move by one.
L2_SQ, LINF, L1 = 2.0, 1.0, 2.0

#: How a class meets each type of target: the names of its hooks, one target and
#: many targets (classmethods ``(target, spec, cache)`` and ``(targets, spec, cache)``).
#: The kinds of release a registered class can make (:attr:`Mechanism.output`).
OUTPUTS = ("distribution", "moments", "weights")

CALIBRATIONS = {
    RenyiDP: ("_calibrate_renyi", "_calibrate_renyi_many"),
    ApproximateDP: ("_calibrate_approximate", "_calibrate_approximate_many"),
    PureDP: ("_calibrate_pure", "_calibrate_pure_many"),
    ZeroConcentratedDP: ("_calibrate_zcdp", "_calibrate_zcdp_many"),
    NotPrivate: ("_calibrate_not_private", "_calibrate_not_private_many"),
}


# ----------------------------------------------------------------------------- a model's releases


#: Largest number of records :math:`N` a spec states: every count below it is an exact double.
N_TOTAL_MAX = 2**53


class _Shapes(NamedTuple):
    shapes: tuple
    n_total: int
    priors: tuple = ()


class ReleaseSpec(_Shapes):
    """The public shape of a model's releases, checked when it is made.

    Attributes
    ----------
    shapes : tuple of (int, int)
        ``(rows, d)`` of each release, in release order: a table of ``rows``
        vectors of length ``d``, every vector released independently (a class
        count vector is one row). At least one release; ``rows >= 1`` and
        ``d >= 2`` (a distribution over fewer than two categories releases
        nothing), both integers.
    n_total : int
        The number of records :math:`N` (public, as in the paper), an integer
        in :math:`[1, 2^{53}]`.
    priors : tuple of int, default ()
        Indices of the releases that are a class prior (a naive Bayes model's
        class counts), distinct, in ``[0, m - 1]``; a non-private estimate
        leaves them unsmoothed.

    Raises
    ------
    ValueError
        If a field is out of its range; a
        :class:`lib.validation.ArgumentTypeError` (a TypeError that is also a
        ValueError) if it is not of its type (a float ``d``, a string ``n_total``,
        ``shapes`` that is not a sequence of pairs). Every message names the
        field (``spec.shapes[k]``, ``spec.n_total``, ``spec.priors``).

    Examples
    --------
    >>> ReleaseSpec(((1, 2), [3, 4]), 100)
    ReleaseSpec(shapes=((1, 2), (3, 4)), n_total=100, priors=())
    >>> ReleaseSpec(((1, 1),), 100)
    Traceback (most recent call last):
    ...
    ValueError: spec.shapes[0] d must be an integer in [2, inf); got 1
    """

    __slots__ = ()

    def __new__(cls, shapes, n_total, priors=()):
        if isinstance(shapes, (str, bytes)) or not isinstance(shapes, (tuple, list)):
            raise validation.ArgumentTypeError(f"spec.shapes must be a sequence of (rows, d) pairs; got "
                                               f"{type(shapes).__name__} {shapes!r:.60}")
        if not shapes:
            raise ValueError("spec.shapes must hold at least one (rows, d) pair; got none")
        checked = []
        for k, shape in enumerate(shapes):
            if isinstance(shape, (str, bytes)) or not isinstance(shape, (tuple, list)) or len(shape) != 2:
                raise validation.ArgumentTypeError(f"spec.shapes[{k}] must be a pair (rows, d); got {shape!r:.60}")
            checked.append((validation.integer(shape[0], f"spec.shapes[{k}] rows"),
                            validation.integer(shape[1], f"spec.shapes[{k}] d", 2)))
        n_total = validation.integer(n_total, "spec.n_total", 1, N_TOTAL_MAX)
        if isinstance(priors, (str, bytes)) or not isinstance(priors, (tuple, list)):
            raise validation.ArgumentTypeError(f"spec.priors must be a sequence of release indices; got "
                                               f"{type(priors).__name__} {priors!r:.60}")
        priors = tuple(validation.integer(i, "spec.priors", 0, len(checked) - 1) for i in priors)
        if len(set(priors)) != len(priors):
            raise ValueError(f"spec.priors must list distinct releases; got {priors}")
        return super().__new__(cls, tuple(checked), n_total, priors)

    def _replace(self, **changes):
        """A spec with some fields changed, checked as when it is made."""
        return type(self)(**{**self._asdict(), **changes})

    @classmethod
    def of(cls, tables: Sequence[ArrayLike], n_total: int) -> Self:
        """The spec of a list of count tables (arrays of shape ``(d,)`` or ``(rows, d)``)."""
        shapes = []
        for t in tables:
            t = np.asarray(t)
            if t.ndim not in (1, 2) or t.shape[-1] < 2:
                raise ValueError(f"every table must have shape (d,) or (rows, d) with d >= 2; got {t.shape}")
            shapes.append((1, t.shape[0]) if t.ndim == 1 else (t.shape[0], t.shape[1]))
        return cls(tuple(shapes), validation.integer(n_total, "n_total", 1, N_TOTAL_MAX))

    @property
    def n_releases(self) -> int:
        """:math:`m`, the number of releases."""
        return len(self.shapes)

    @property
    def domain_sizes(self) -> tuple:
        """The vector length :math:`d_i` of each release."""
        return tuple(d for _, d in self.shapes)


def checked_spec(spec: object) -> ReleaseSpec:
    """``spec`` if it is a :class:`ReleaseSpec` (checked when it was made); else a TypeError naming ``spec``."""
    if not isinstance(spec, ReleaseSpec):
        raise validation.ArgumentTypeError(
            f"spec must be a lib.mechanisms.protocol.ReleaseSpec (e.g. ReleaseSpec.of(tables, n_total)); got "
            f"{type(spec).__name__} {spec!r:.60}")
    return spec


class ModelCalibration(NamedTuple):
    """The per-release mechanisms that meet one target for a whole model.

    Attributes
    ----------
    mechanism : str
        The registry name of the mechanism class.
    attained : bool
        False when the mechanism cannot meet the target; ``releases`` is then
        empty and ``parameters["reason"]`` says why. Never replaced by another
        calibration.
    releases : tuple
        One mechanism object per release.
    parameters : dict
        What was chosen (scale, pseudo-count, order, noise level, ...).
    guarantee : Guarantee or None, default None
        What the whole release meets: :func:`lib.privacy.guarantees.compose`
        over the releases' guarantees, or the statement that the calibration
        proves for them jointly (an analytic Gaussian of joint sensitivity,
        an (eps_hat, delta) conversion of the composed Renyi DP). Filled in by
        :meth:`Mechanism.calibrate`; None when not attained.
    """

    mechanism: str
    attained: bool
    releases: tuple
    parameters: dict
    guarantee: Guarantee | None = None


# ----------------------------------------------------------------------------- the base class


_CONFIGURED_METAS = {}


def _configured_meta(meta):
    """A subclass of the metaclass ``meta`` whose classes pickle through :func:`_rebuild_configured`."""
    if getattr(meta, "_is_configured_meta", False):
        return meta
    if meta not in _CONFIGURED_METAS:
        new = type("ConfiguredMechanismType", (meta,), {"_is_configured_meta": True, "__module__": __name__})
        copyreg.pickle(new, _reduce_configured)
        _CONFIGURED_METAS[meta] = new
    return _CONFIGURED_METAS[meta]


def _reduce_configured(cls):
    base, settings = cls._configured_from
    return _rebuild_configured, (base, settings)


def _rebuild_configured(base, settings):
    """``base.configured(**settings)``, as an unpickled variant (see :meth:`Mechanism.configured`)."""
    return base.configured(**settings)


class Mechanism:
    """Base class of every release mechanism.

    A subclass sets ``name`` (its registry key), ``label`` (its legend in
    figures) and ``notions`` (the types of target it meets), implements
    :meth:`release` and :attr:`guarantee`, and the protected hooks of its
    notions: ``_renyi_release(target, spec, index)`` (one release at its share
    of a :class:`RenyiDP` target), ``_pure_release``, ``_not_private_release(spec,
    index)``, or a whole calibration ``_calibrate_<notion>(target, spec,
    cache)`` (see :data:`CALIBRATIONS`). A non-private subclass sets ``private =
    False`` and ``notions = (NotPrivate,)``; the grids then evaluate it once and
    repeat its scores at every budget.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    private: ClassVar[bool] = True
    #: The types of target (guarantee classes) that :meth:`calibrate` meets.
    notions: ClassVar[tuple] = (RenyiDP, ApproximateDP)
    #: What a release is: "distribution" (counts in, a point of the simplex out: every model of
    #: counts takes these), "moments" (a bounded sample's mean and deviation) or "weights" (a
    #: logistic-regression parameter vector).
    output: ClassVar[str] = "distribution"

    def release(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:  # pragma: no cover - abstract
        """Release every vector along the last axis of ``counts`` as a distribution."""
        raise TypeError(f"{type(self).__name__} must define release(counts, rng)")

    @property
    def guarantee(self) -> Guarantee:  # pragma: no cover - abstract
        """The privacy statement this object meets."""
        raise TypeError(f"{type(self).__name__} must define guarantee")

    @classmethod
    def configured(cls, **settings: Any) -> type[Self]:
        """A subclass with some class-level settings changed (same name, not registered).

        For example ``GaussianMechanism.configured(clip_floor=1.0)`` or
        ``SmoothedEstimate.configured(smoothing=0.5)``: a variant that every grid
        accepts in place of the registered class. Only existing settings can be changed.
        """
        unknown = [k for k in settings if not hasattr(cls, k) or callable(getattr(cls, k))]
        if unknown:
            raise ValueError(f"{cls.__name__} has no setting(s) {unknown}")
        # A variant pickles (with its instances, and a model that names it) as "cls.configured(**settings)":
        # its metaclass has a reducer in copyreg, so pickle rebuilds it rather than look for its name.
        base, applied = getattr(cls, "_configured_from", (cls, {}))
        meta = _configured_meta(type(cls))
        variant = meta(cls.__name__, (cls,), {**settings, "_configured_from": (base, {**applied, **settings})})
        return variant

    @classmethod
    def release_key(cls, spec: ReleaseSpec, index: int) -> Hashable:
        """Releases with equal keys share one object (default: one object for all)."""
        return None

    # ------------------------------------------------------------------ calibration

    @classmethod
    def calibrate(cls, target: Guarantee, spec: ReleaseSpec, *, cache: dict | None = None) -> ModelCalibration:
        """The objects of the releases of ``spec`` that together meet ``target``.

        Parameters
        ----------
        target : Guarantee
            What the whole model must meet, of a type listed in ``notions``:
            e.g. ``RenyiDP(5.0, 1.0)`` or ``ApproximateDP(1.0, 1e-5)``; a
            non-private class takes ``NotPrivate()``.
        spec : ReleaseSpec
            The public shapes of the model's releases.
        cache : dict, optional
            Memo shared by calibrations that have one (searches of an order, of
            Gohari et al.'s scale).

        Returns
        -------
        ModelCalibration
            With ``guarantee`` the statement of the whole release.

        Raises
        ------
        ValueError
            If ``target`` is not a Guarantee, or its type is not one the class
            meets (the message names both), or the calibration's own arguments
            are out of range.

        Notes
        -----
        The hook is chosen by ``type(target)`` in :data:`CALIBRATIONS`.
        :class:`RenyiDP` and :class:`PureDP` targets are split equally by
        :meth:`lib.privacy.guarantees.Guarantee.split` (basic composition:
        :math:`m` releases at :math:`\\varepsilon/m` compose to
        :math:`\\varepsilon`, Lemma 1 of the paper); releases with the same
        :meth:`release_key` share one object.

        Examples
        --------
        >>> from lib import DirichletMechanism
        >>> from lib.mechanisms.protocol import ReleaseSpec, RenyiDP
        >>> cal = DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), ReleaseSpec(((1, 2), (2, 3)), 100))
        >>> cal.releases[0].guarantee, cal.guarantee
        (RenyiDP(lam=5.0, epsilon=0.5), RenyiDP(lam=5.0, epsilon=1.0))
        """
        one, _ = cls._hooks(target)
        return cls._stated(getattr(cls, one)(target, checked_spec(spec), cache))

    @classmethod
    def calibrate_many(cls, targets: Sequence[Guarantee], spec: ReleaseSpec, *, cache: dict | None = None) -> list:
        """:meth:`calibrate` at every target of ``targets`` (all of one type): a list, in order.

        Element ``i`` equals ``calibrate(targets[i], spec, cache=cache)``, an
        exception included (raised for the first target that raises). A
        subclass whose calibration is a numerical search overrides the
        notion's ``_calibrate_<notion>_many`` hook to run the searches of all
        targets together (vectorised).

        Raises
        ------
        ValueError
            If ``targets`` is empty or mixes types, or as :meth:`calibrate`.
        """
        targets = list(targets)
        if not targets:
            raise ValueError("targets must hold at least one target")
        kinds = {type(t) for t in targets}
        if len(kinds) != 1:
            raise ValueError(f"targets must all be of one type; got {sorted(k.__name__ for k in kinds)}")
        one, many = cls._hooks(targets[0])
        spec = checked_spec(spec)
        if hasattr(cls, many):  # a search run for all targets together
            calibrations = getattr(cls, many)(targets, spec, cache)
        else:
            calibrations = [getattr(cls, one)(t, spec, cache) for t in targets]
        return [cls._stated(cal) for cal in calibrations]

    @classmethod
    def _hooks(cls, target):
        """The names of the hooks that meet ``target`` (one, many), or a ValueError."""
        if not isinstance(target, Guarantee):
            raise ValueError(f"target must be a privacy guarantee (e.g. RenyiDP(5.0, 1.0)); got {target!r}")
        if type(target) not in cls.notions or type(target) not in CALIBRATIONS:
            supported = ", ".join(n.__name__ for n in cls.notions) or "nothing"
            raise ValueError(f"the {cls.name or cls.__name__!r} mechanism cannot meet a "
                             f"{type(target).__name__} target; it meets {supported}")
        return CALIBRATIONS[type(target)]

    @classmethod
    def _stated(cls, cal):
        """``cal`` with the guarantee of its whole release (the composition of its releases' if unset)."""
        if cal.attained and cal.guarantee is None:
            return cal._replace(guarantee=compose(m.guarantee for m in cal.releases))
        return cal

    @classmethod
    def _per_release(cls, spec, build):
        """``build(index)`` for every release, one object per distinct :meth:`release_key`."""
        built, objects = {}, []
        for index in range(spec.n_releases):
            key = cls.release_key(spec, index)
            if key not in built:
                built[key] = build(index)
            objects.append(built[key])
        return tuple(objects)

    @classmethod
    def _calibrate_renyi(cls, target, spec, cache):
        """:math:`(\\lambda, \\varepsilon)`-RDP for the whole model: ``target.split(m)`` per release."""
        per = target.split(spec.n_releases)
        objects = cls._per_release(spec, lambda index: cls._renyi_release(per, spec, index))
        return ModelCalibration(cls.name, True, objects, {"lam": per.lam, "epsilon_release": per.epsilon})

    @classmethod
    def _renyi_release(cls, target, spec, index):  # pragma: no cover - abstract
        """The object for release ``index`` of ``spec`` at its share ``target`` (a RenyiDP)."""
        raise TypeError(f"{cls.__name__} lists RenyiDP in notions but defines no _renyi_release")

    @classmethod
    def _calibrate_pure(cls, target, spec, cache):
        """:math:`\\varepsilon`-DP for the whole model: ``target.split(m)`` per release."""
        per = target.split(spec.n_releases)
        objects = cls._per_release(spec, lambda index: cls._pure_release(per, spec, index))
        return ModelCalibration(cls.name, True, objects, {"epsilon_release": per.epsilon})

    @classmethod
    def _pure_release(cls, target, spec, index):  # pragma: no cover - abstract
        """The object for release ``index`` of ``spec`` at its share ``target`` (a PureDP)."""
        raise TypeError(f"{cls.__name__} lists PureDP in notions but defines no _pure_release")

    @classmethod
    def _calibrate_zcdp(cls, target, spec, cache):  # pragma: no cover - abstract
        raise TypeError(f"{cls.__name__} lists ZeroConcentratedDP in notions but defines no _calibrate_zcdp")

    @classmethod
    def _calibrate_not_private(cls, target, spec, cache):
        """The non-private objects of every release (``_not_private_release``)."""
        return ModelCalibration(cls.name, True, cls._per_release(spec, lambda i: cls._not_private_release(spec, i)),
                                {})

    @classmethod
    def _not_private_release(cls, spec, index):
        """The object for release ``index`` of a non-private model (default: ``cls()``)."""
        return cls()

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """:math:`(\\hat\\varepsilon, \\delta)`-DP for the whole model, through Renyi DP at one order.

        The default for a class that meets Renyi DP only: the whole model is
        calibrated to :math:`(\\lambda, \\varepsilon(\\lambda))`-RDP with
        :math:`\\varepsilon(\\lambda)` = ``dp_to_rdp(epsilon_hat, lam, delta)``,
        which eq. (14) turns into :math:`(\\hat\\varepsilon, \\delta)`-DP
        (:func:`lib.privacy.accounting.dp_to_rdp`), split by
        :meth:`_calibrate_renyi`. The order minimises
        :math:`\\lambda/\\varepsilon(\\lambda)`, the noise variance of a Gaussian
        mechanism at that level (:func:`lib.privacy.accounting.search_order`);
        any feasible order gives the guarantee, the choice serves utility only.
        The stated guarantee is ``target``: the releases' composed Renyi DP
        converted by eq. (14).
        """
        if RenyiDP not in cls.notions:
            raise ValueError(f"the {cls.name!r} mechanism has no (epsilon_hat, delta) calibration and no "
                             "Renyi DP one to convert")
        eps_hat, delta = target.epsilon, target.delta
        if eps_hat <= 0:
            raise ValueError(f"epsilon_hat must be in (0, inf) for an (epsilon_hat, delta) calibration; got {eps_hat!r}")
        lam, _ = search_order(eps_hat, delta, lambda lam: lam / dp_to_rdp(eps_hat, lam, delta))
        whole = RenyiDP(lam, float(dp_to_rdp(eps_hat, lam, delta)))
        cal = cls._calibrate_renyi(whole, spec, cache)
        return cal._replace(guarantee=target)

    # ------------------------------------------------------------------ batched release

    @classmethod
    def log_release_tables(cls, objects: Sequence[Mechanism], tables: Sequence[np.ndarray], n_draws: int,
                           rng: np.random.Generator) -> list:
        """``n_draws`` independent releases of every table by its object, as log-probabilities.

        Parameters
        ----------
        objects : sequence of Mechanism
            One object per table, instances of ``cls``.
        tables : list of ndarray, shape (rows, d)
            Checked finite, non-negative float counts.
        n_draws : int
            Independent releases of each table.
        rng : numpy.random.Generator
            Release :math:`k` draws after release :math:`k - 1` (the order fixes
            the random stream).

        Returns
        -------
        list of ndarray, shape (n_draws, rows, d)
            Natural logarithms of the released distributions, all finite.

        Raises
        ------
        ValueError
            If an object returns the wrong shape, or a probability that is
            zero or not finite.

        Notes
        -----
        The default releases table by table, with each object's
        ``log_release`` where it has one (the exact logarithms of a
        non-private estimate), else the log of ``release``. A subclass
        overrides it to release all tables together with the same draws and
        the same arithmetic, bit for bit (the Dirichlet and noise mechanisms).
        """
        out = []
        for k, (mech, t) in enumerate(zip(objects, tables)):
            batch = np.broadcast_to(t, (n_draws,) + t.shape)
            if hasattr(mech, "log_release"):
                logs = np.asarray(mech.log_release(batch, rng), dtype=float)
            else:
                logs = np.log(np.asarray(mech.release(batch, rng), dtype=float))
            if logs.shape != batch.shape:
                raise ValueError(f"mechanism {k} returned shape {logs.shape}; expected {batch.shape}")
            if not np.isfinite(logs).all():
                raise ValueError(f"mechanism {k} returned a probability that is zero or not finite")
            out.append(logs)
        return out


def release_class(objects: Sequence[Mechanism]) -> type:
    """The class whose :meth:`Mechanism.log_release_tables` releases ``objects`` (their closest common class).

    :class:`Mechanism` itself (the table-by-table loop) when the objects share
    no subclass of it.
    """
    for kind in type(objects[0]).__mro__ if objects else ():
        if all(isinstance(m, kind) for m in objects):
            return kind if isinstance(kind, type) and issubclass(kind, Mechanism) else Mechanism
    return Mechanism


# ----------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, type] = {}


def register(cls: type[Mechanism]) -> type[Mechanism]:
    """Add a :class:`Mechanism` subclass to the registry under ``cls.name`` (usable as a decorator).

    Called for every class of :data:`lib.mechanisms.registry.MECHANISMS`, in its order, and by
    tests that add a toy mechanism after them.
    """
    if not (isinstance(cls, type) and issubclass(cls, Mechanism)) or not cls.name:
        raise ValueError(f"only Mechanism subclasses with a name can be registered; got {cls!r}")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (for tests that add a toy mechanism)."""
    _REGISTRY.pop(name, None)


def get(name: str | type[Mechanism]) -> type:
    """The mechanism class registered as ``name`` (a class passes through)."""
    if isinstance(name, type) and issubclass(name, Mechanism):
        return name
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"mechanism must be one of {names()}; got {name!r}") from None


def names(*, notion: type[Guarantee] | None = None, output: str | None = None) -> tuple:
    """Registered names, in the order of :data:`lib.mechanisms.registry.MECHANISMS` (then any added later);
    with ``notion`` (a guarantee type), those whose class meets it.

    With ``output`` ("distribution", "moments" or "weights"), only the classes whose releases are of that kind.

    Examples
    --------
    >>> from lib.mechanisms.protocol import names, RenyiDP
    >>> "dirichlet" in names(notion=RenyiDP)
    True
    """
    if notion is not None and not (isinstance(notion, type) and issubclass(notion, Guarantee)):
        raise ValueError(f"notion must be a guarantee type such as RenyiDP; got {notion!r}")
    if output is not None and output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}; got {output!r}")
    return tuple(name for name, cls in _REGISTRY.items()
                 if (notion is None or notion in cls.notions) and (output is None or cls.output == output))
