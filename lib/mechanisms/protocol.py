"""The mechanism protocol: one contract for every way of releasing a distribution.

Every mechanism of the book, private or not, is an object with

* ``release(counts, rng)``: counts of shape ``(..., d)`` in, one point of the
  probability simplex per vector along the last axis out, every entry positive
  and finite (so that its logarithm is finite);
* ``guarantee``: the privacy statement it meets, in its native form
  (:class:`RenyiDP`, :class:`PureDP`, :class:`ApproximateDP` or
  :class:`NotPrivate`).

A model (naive Bayes, a Bayesian network) makes :math:`m` releases, one per
table of counts, described by a :class:`ReleaseSpec`. A mechanism *class*
turns a budget for the whole model into one object per release:

* :meth:`Mechanism.calibrate_rdp`: a :math:`(\\lambda, \\varepsilon)`-RDP target
  for the whole model, by default split equally, :math:`\\varepsilon/m` per
  release (basic composition of RDP, Lemma 1 of the paper), each release built
  by :meth:`Mechanism.for_release_rdp`;
* :meth:`Mechanism.calibrate_dp`: an :math:`(\\hat\\varepsilon, \\delta)`-DP target
  for the whole model (Appendix C of the paper).

Both return a :class:`ModelCalibration`. Names exist only at the edge: the
registry (:func:`register`, :func:`get`, :func:`names`) maps a command-line
name to its class, so a new mechanism is one class with a ``name`` and one
:func:`register` call, and every grid, figure and command picks it up.
"""

from __future__ import annotations

import copyreg
from typing import ClassVar, NamedTuple

import numpy as np

from lib import _validate
from lib.privacy.guarantees import ApproximateDP, Guarantee, NotPrivate, PureDP, RenyiDP, ZeroConcentratedDP

#: Replace-one sensitivities of one histogram release: one record leaves a cell
#: and enters another, so two counts move by one.
L2_SQ, LINF, L1 = 2.0, 1.0, 2.0


# ----------------------------------------------------------------------------- a model's releases


class ReleaseSpec(NamedTuple):
    """The public shape of a model's releases.

    Attributes
    ----------
    shapes : tuple of (int, int)
        ``(rows, d)`` of each release, in release order: a table of ``rows``
        vectors of length ``d``, every vector released independently (a class
        count vector is one row).
    n_total : int
        The number of records :math:`N` (public, as in the paper).
    priors : tuple of int, default ()
        Indices of the releases that are a class prior (a naive Bayes model's
        class counts); a non-private estimate leaves them unsmoothed.
    """

    shapes: tuple
    n_total: int
    priors: tuple = ()

    @classmethod
    def of(cls, tables, n_total):
        """The spec of a list of count tables (arrays of shape ``(d,)`` or ``(rows, d)``)."""
        shapes = []
        for t in tables:
            t = np.asarray(t)
            if t.ndim not in (1, 2) or t.shape[-1] < 2:
                raise ValueError(f"every table must have shape (d,) or (rows, d) with d >= 2; got {t.shape}")
            shapes.append((1, t.shape[0]) if t.ndim == 1 else (t.shape[0], t.shape[1]))
        return cls(tuple(shapes), int(_validate.integer(n_total, "n_total")))

    @property
    def n_releases(self) -> int:
        """:math:`m`, the number of releases."""
        return len(self.shapes)

    @property
    def domain_sizes(self) -> tuple:
        """The vector length :math:`d_i` of each release."""
        return tuple(d for _, d in self.shapes)


class ModelCalibration(NamedTuple):
    """The per-release mechanisms that meet one budget for a whole model.

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
    """

    mechanism: str
    attained: bool
    releases: tuple
    parameters: dict


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

    A subclass sets ``name`` (its registry key) and ``label`` (its legend in
    figures), implements :meth:`release` and :attr:`guarantee`, and
    :meth:`for_release_rdp` and/or :meth:`calibrate_dp` for the budgets it can
    meet. A non-private subclass sets ``private = False``; the grids then
    evaluate it once and repeat its scores at every budget.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    private: ClassVar[bool] = True
    #: The privacy notions whose budgets the class can meet ("rdp", "dp").
    notions: ClassVar[tuple] = ("rdp", "dp")

    def release(self, counts, rng=None) -> np.ndarray:  # pragma: no cover - abstract
        """Release every vector along the last axis of ``counts`` as a distribution."""
        raise TypeError(f"{type(self).__name__} must define release(counts, rng)")

    @property
    def guarantee(self) -> Guarantee:  # pragma: no cover - abstract
        """The privacy statement this object meets."""
        raise TypeError(f"{type(self).__name__} must define guarantee")

    @classmethod
    def for_release_rdp(cls, epsilon, lam, spec: ReleaseSpec, index: int) -> "Mechanism":
        """The object for release ``index`` of ``spec`` at :math:`(\\lambda, \\varepsilon)`-RDP."""
        raise ValueError(f"the {cls.name!r} mechanism has no RDP calibration")

    @classmethod
    def configured(cls, **settings):
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
    def release_key(cls, spec: ReleaseSpec, index: int):
        """Releases with equal keys share one object (default: one object for all)."""
        return None

    @classmethod
    def calibrate_rdp(cls, epsilon, lam, spec: ReleaseSpec) -> ModelCalibration:
        """:math:`(\\lambda, \\varepsilon)`-RDP for the whole model: :math:`\\varepsilon/m` per release.

        Basic composition of RDP (Lemma 1 of the paper): :math:`m` releases that
        are each :math:`(\\lambda, \\varepsilon/m)`-RDP are together
        :math:`(\\lambda, \\varepsilon)`-RDP. Releases with the same
        :meth:`release_key` share one object.
        """
        epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
        lam = _validate.scalar(_validate.order(lam, "lam"), "lam")
        per = epsilon / spec.n_releases
        built = {}
        objects = []
        for index in range(spec.n_releases):
            key = cls.release_key(spec, index)
            if key not in built:
                built[key] = cls.for_release_rdp(per, lam, spec, index)
            objects.append(built[key])
        return ModelCalibration(cls.name, True, tuple(objects), {"lam": lam, "epsilon_release": per})

    @classmethod
    def calibrate_dp(cls, epsilon_hat, delta, spec: ReleaseSpec, *, cache=None) -> ModelCalibration:
        """:math:`(\\hat\\varepsilon, \\delta)`-DP for the whole model (Appendix C)."""
        raise ValueError(f"the {cls.name!r} mechanism has no (epsilon_hat, delta) calibration")

    @classmethod
    def calibrate_dp_many(cls, epsilon_hats, delta, spec: ReleaseSpec, *, cache=None) -> list:
        """:meth:`calibrate_dp` at every target of ``epsilon_hats`` (one ``delta``): a list, in order.

        Element ``i`` equals ``calibrate_dp(epsilon_hats[i], delta, spec,
        cache=cache)``, an exception included (raised for the first target that
        raises). A subclass whose calibration is a numerical search overrides
        this to run the searches of all targets together (vectorised).
        """
        return [cls.calibrate_dp(e, delta, spec, cache=cache) for e in _dp_targets(epsilon_hats)]


def _dp_targets(epsilon_hats) -> list:
    """The targets of :meth:`Mechanism.calibrate_dp_many` as Python floats (a 1-D sequence of positives)."""
    values = _validate.positive(epsilon_hats, "epsilon_hats")
    if values.ndim != 1:
        raise ValueError(f"epsilon_hats must be a 1-D sequence; got shape {values.shape}")
    return [float(v) for v in values]


# ----------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, type] = {}


def register(cls):
    """Add a :class:`Mechanism` subclass to the registry under ``cls.name`` (usable as a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Mechanism)) or not cls.name:
        raise ValueError(f"only Mechanism subclasses with a name can be registered; got {cls!r}")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (for tests that add a toy mechanism)."""
    _REGISTRY.pop(name, None)


def get(name) -> type:
    """The mechanism class registered as ``name`` (a class passes through)."""
    if isinstance(name, type) and issubclass(name, Mechanism):
        return name
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"mechanism must be one of {names()}; got {name!r}") from None


def names(*, rdp=False, dp=False) -> tuple:
    """Registered names, in registration order; with ``rdp``/``dp``, those whose class meets such budgets."""
    wanted = {notion for notion, on in (("rdp", rdp), ("dp", dp)) if on}
    return tuple(name for name, cls in _REGISTRY.items() if wanted <= set(cls.notions))
