"""The Gaussian and Laplace mechanisms for histograms and their shared post-processing.

:class:`GaussianMechanism`, :class:`LaplaceMechanism` and :class:`ClassicalGaussianMechanism`
add noise to every count and map the noisy counts to the simplex by
:func:`clip_and_normalise`; their calibrations are in
:mod:`lib.mechanisms.noise.renyi` (Renyi DP) and :mod:`lib.mechanisms.noise.calibration`
(:math:`(\\hat\\varepsilon, \\delta)`-DP).
"""

from __future__ import annotations

import functools
from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.batching import batchable, log_views, normalise_rows, release_buffer
from lib.mechanisms.noise.calibration import analytic_gaussian_delta, analytic_gaussian_sigma, classical_gaussian_sigma
from lib.mechanisms.protocol import (L1, L2_SQ, ApproximateDP, Guarantee, Mechanism, ModelCalibration, PureDP, RenyiDP,
                                     ZeroConcentratedDP)
from lib.mechanisms.noise.renyi import gaussian_rdp_curve, laplace_rdp_curve, laplace_scale


#: Floor, in units of counts, at which noisy counts are clipped before they are
#: normalised (the value the author's code used).
CLIP_FLOOR = 1e-6


def clip_and_normalise(noisy_counts: ArrayLike, floor: float = CLIP_FLOOR) -> np.ndarray:
    """Post-processing shared by the Gaussian and Laplace mechanisms.

    Every noisy count below ``floor`` is raised to ``floor`` and each vector
    along the last axis is divided by its sum. A vector whose entries are all
    clipped becomes the uniform distribution. Post-processing cannot weaken a
    differential privacy guarantee (Mironov 2017, Proposition 9), so the output
    keeps the RDP level of the noisy counts. Every output entry is positive, so
    its logarithm is finite.

    Parameters
    ----------
    noisy_counts : array_like, shape (..., d)
        Finite real numbers (noisy counts may be negative), ``d >= 2``.
    floor : float, default :data:`CLIP_FLOOR`
        The clipping level, in :math:`(0, \\infty)`.

    Returns
    -------
    ndarray, shape (..., d)
        Points of the probability simplex with every entry positive.

    Examples
    --------
    >>> clip_and_normalise([3.0, -1.0, 1.0], floor=1.0)
    array([0.6, 0.2, 0.2])
    """
    floor = validation.scalar(validation.positive(floor, "floor"), "floor")
    x = validation.in_range(noisy_counts, "noisy_counts", -np.inf, open_low=True)  # finite, any sign
    if x.ndim == 0 or x.shape[-1] < 2:
        raise ValueError(
            f"noisy_counts must have at least two entries along its last axis; got shape {x.shape}"
        )
    return _clip_and_normalise(x, floor)


def _clip_and_normalise(x, floor):
    """:func:`clip_and_normalise` of a checked float array ``x`` (finite, ``d >= 2``) and ``floor > 0``."""
    out = np.maximum(x, floor)  # a fresh array
    with np.errstate(over="ignore"):
        total = out.sum(axis=-1, keepdims=True)
    if not np.isfinite(total).all():  # counts near the double range: scale by the largest first
        out /= out.max(axis=-1, keepdims=True)
        total = out.sum(axis=-1, keepdims=True)
    with np.errstate(under="ignore"):
        out /= total
    if out.size and out.min() == 0:  # a floor far below the largest count underflowed
        np.maximum(out, np.finfo(float).tiny, out=out)
    return out


class _NoiseMechanism(Mechanism):
    """Shared constructor checks, representation and release path of the two noise baselines.

    A subclass names the :class:`numpy.random.Generator` method that draws its
    centred noise (``_distribution``), the attribute that holds that method's
    scale (``_scale``) and the attribute that holds the sensitivity
    (``_sensitivity``).
    """

    _distribution: str
    _scale: str
    _sensitivity: str
    #: Clipping level of the objects that the calibrations build.
    clip_floor = CLIP_FLOOR

    def __init__(self, epsilon, lam, floor):
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self.lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
        self.floor = validation.scalar(validation.positive(floor, "floor"), "floor")

    @classmethod
    def _with_scale(cls, value, floor):
        """An instance with a given noise scale and no RDP target (epsilon, lam, sensitivity None)."""
        self = cls.__new__(cls)
        self.epsilon = self.lam = None
        setattr(self, cls._sensitivity, None)
        setattr(self, cls._scale, validation.scalar(validation.positive(value, cls._scale), cls._scale))
        self.floor = validation.scalar(validation.positive(floor, "floor"), "floor")
        return self

    def __repr__(self) -> str:
        name, scale = type(self).__name__, getattr(self, self._scale)
        if self.epsilon is None:
            return f"{name}.from_{self._scale}({self._scale}={scale:.6g})"
        return (f"{name}(epsilon={self.epsilon:g}, lam={self.lam:g}, "
                f"{self._sensitivity}={getattr(self, self._sensitivity):g}; {self._scale}={scale:.6g})")

    def noisy_counts(self, counts, rng=None) -> np.ndarray:
        """The counts plus independent noise, before post-processing.

        Parameters
        ----------
        counts : array_like, shape (..., d)
            Non-negative finite counts, ``d >= 2``.
        rng : numpy.random.Generator or int or None
            Source of randomness.
        """
        counts = validation.vectors(counts, "counts", positive_entries=False)
        rng = validation.generator(rng)
        draw = getattr(rng, self._distribution)
        scale = getattr(self, self._scale)
        with np.errstate(over="ignore", invalid="ignore"):
            out = draw(0.0, scale, size=counts.shape)
            out += counts
        if out.size and not (np.isfinite(out.min()) and np.isfinite(out.max())):
            raise ValueError(
                f"counts plus noise of {self._scale} = {scale:.6g} overflow double precision; the "
                f"largest count is {counts.max():.6g}: lower the counts or the {self._scale}"
            )
        return out

    def release(self, counts, rng=None) -> np.ndarray:
        """Noisy counts, clipped at ``floor`` and normalised (:func:`clip_and_normalise`).

        Parameters
        ----------
        counts, rng
            As in :meth:`noisy_counts`; every vector along the last axis of
            ``counts`` is released independently, and a non-negative integer
            ``rng`` seeds ``numpy.random.default_rng`` (None: fresh entropy).

        Returns
        -------
        ndarray, shape (..., d)
            Points of the probability simplex with every entry positive.
        """
        # noisy_counts checked the counts and their sum with the noise (finite), the
        # constructor the floor: the post-processing needs no second check
        return _clip_and_normalise(self.noisy_counts(counts, rng), self.floor)

    @classmethod
    def log_release_tables(cls, objects, tables, n_draws, rng):
        """:meth:`lib.mechanisms.protocol.Mechanism.log_release_tables`, all tables in one buffer.

        Every table's ``n_draws`` noisy copies are written in release order
        (the same draws, from the same stream, as :meth:`release` table by
        table, and the same arithmetic, entry by entry); the clipping, the row
        sums and the division are done for all tables at once, bit for bit
        those of :meth:`release`. Objects whose class changes the release are
        released table by table (the protocol's loop).
        """
        if not batchable(_NoiseMechanism, ("release", "noisy_counts"), objects, tables):
            return Mechanism.log_release_tables.__func__(cls, objects, tables, n_draws, rng)
        flat, views = release_buffer(tables, n_draws)
        with np.errstate(over="ignore", invalid="ignore"):
            for m, t, v in zip(objects, tables, views):
                v[...] = getattr(rng, m._distribution)(0.0, getattr(m, m._scale), size=v.shape)
                v += t
        if flat.size and not (np.isfinite(flat.min()) and np.isfinite(flat.max())):
            k = next(k for k, v in enumerate(views) if not np.isfinite(v).all())
            m = objects[k]
            raise ValueError(
                f"counts plus noise of {m._scale} = {getattr(m, m._scale):.6g} overflow double "
                f"precision (release {k}); the largest count is {np.max(tables[k]):.6g}: lower the "
                f"counts or the {m._scale}")
        floors = {m.floor for m in objects}
        if len(floors) == 1:
            np.maximum(flat, floors.pop(), out=flat)
        else:
            for m, v in zip(objects, views):
                np.maximum(v, m.floor, out=v)
        normalise_rows(flat, views, guard=False)
        if flat.size and flat.min() == 0:  # a floor far below the largest count underflowed
            for v in views:
                if v.size and v.min() == 0:
                    np.maximum(v, np.finfo(float).tiny, out=v)
        return log_views(flat, views)


class GaussianMechanism(_NoiseMechanism):
    """The :math:`(\\lambda, \\varepsilon)`-RDP Gaussian mechanism for histograms.

    Adds :math:`N(0, \\sigma^2)` to every count with
    :math:`\\sigma^2 = \\lambda\\Delta_2^2/(2\\varepsilon)` (Mironov 2017, Corollary 3),
    then applies :func:`clip_and_normalise`.

    Parameters
    ----------
    epsilon : float
        RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : float
        Renyi order :math:`\\lambda \\in (1, \\infty)`.
    l2_sq : float, default 2.0
        Squared :math:`\\ell_2`-sensitivity :math:`\\Delta_2^2` (2 for a histogram under
        replace-one neighbours).
    floor : float, default :data:`CLIP_FLOOR`
        Clipping level of the post-processing.

    Attributes
    ----------
    sigma : float
        The noise standard deviation.

    Examples
    --------
    >>> mech = GaussianMechanism(epsilon=1.0, lam=5.0)
    >>> round(mech.sigma**2, 12)   # lam * 2 / (2 * 1)
    5.0
    """

    def __init__(self, epsilon: float | None, lam: float | None, l2_sq: float = 2.0, floor: float = CLIP_FLOOR) -> None:
        super().__init__(epsilon, lam, floor)
        self.l2_sq = validation.scalar(validation.positive(l2_sq, "l2_sq"), "l2_sq")
        with np.errstate(over="ignore"):
            self.sigma = float(np.sqrt(self.lam * self.l2_sq / (2 * self.epsilon)))
        if not 0 < self.sigma < np.inf:
            raise ValueError(
                f"sigma^2 = lam * l2_sq / (2 epsilon) is outside double precision for epsilon = "
                f"{self.epsilon:g}, lam = {self.lam:g}, l2_sq = {self.l2_sq:g}; bring "
                "lam * l2_sq / epsilon closer to 1")

    @classmethod
    def from_sigma(cls, sigma: float, floor: float = CLIP_FLOOR) -> Self:
        """A Gaussian release with a given noise standard deviation, no RDP target.

        For a :math:`\\sigma` chosen by another accounting, e.g. the analytic
        Gaussian mechanism of :func:`lib.mechanisms.noise.calibration.analytic_gaussian_sigma`.
        ``epsilon``, ``lam`` and ``l2_sq`` are None.

        Parameters
        ----------
        sigma : float
            Noise standard deviation :math:`\\sigma \\in (0, \\infty)`, in counts.
        floor : float, default :data:`CLIP_FLOOR`
            Clipping level of the post-processing.

        Examples
        --------
        >>> GaussianMechanism.from_sigma(3.0)
        GaussianMechanism.from_sigma(sigma=3)
        """
        return cls._with_scale(sigma, floor)

    _distribution, _scale, _sensitivity = "normal", "sigma", "l2_sq"
    name, label = "gaussian", "Gaussian"

    @property
    def guarantee(self) -> Guarantee:
        """:math:`(\\lambda, \\lambda\\Delta_2^2/(2\\sigma^2))`-RDP at every order (Mironov 2017, Cor. 3).

        A :class:`lib.privacy.guarantees.RenyiDP` at the calibrated order with
        that curve; for an object built by :meth:`from_sigma` (no order), the
        same curve as :math:`\\rho`-zCDP with :math:`\\rho = \\Delta_2^2/(2\\sigma^2)`
        and :math:`\\Delta_2^2 = 2` (one histogram release).
        """
        if self.lam is None:
            return ZeroConcentratedDP(L2_SQ / (2 * self.sigma**2))
        return RenyiDP(self.lam, self.epsilon, curve=functools.partial(gaussian_rdp_curve, self.l2_sq, self.sigma))

    @classmethod
    def _renyi_release(cls, target, spec, index):
        """:math:`\\sigma^2 = \\lambda\\Delta_2^2/(2\\varepsilon)` with :math:`\\Delta_2^2 = 2`."""
        return cls(target.epsilon, target.lam, l2_sq=L2_SQ, floor=cls.clip_floor)

    #: Solves for the noise level of the (eps_hat, delta) calibration (joint sensitivity, target).
    _dp_sigma = staticmethod(analytic_gaussian_sigma)

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """One Gaussian mechanism of joint :math:`\\ell_2`-sensitivity :math:`\\sqrt{2m}` (analytic, Balle-Wang).

        The :math:`m` releases together are one Gaussian mechanism on the
        concatenated counts, whose exact :math:`\\delta(\\hat\\varepsilon)` meets
        the target: the calibration states ``target`` for the whole release.
        """
        sigma = cls._dp_sigma(target.epsilon, target.delta, np.sqrt(L2_SQ * spec.n_releases))
        mech = cls.from_sigma(sigma, floor=cls.clip_floor)
        return ModelCalibration(cls.name, True, (mech,) * spec.n_releases, {"sigma": sigma}, target)


class LaplaceMechanism(_NoiseMechanism):
    """The :math:`(\\lambda, \\varepsilon)`-RDP Laplace mechanism for histograms.

    Adds :math:`\\mathrm{Laplace}(0, b)` to every count, with :math:`b` from
    :func:`laplace_scale` (Mironov 2017, Corollary 2, for the
    :math:`\\ell_1`-sensitivity :math:`\\Delta_1`), then applies
    :func:`clip_and_normalise`.

    Parameters
    ----------
    epsilon, lam, floor
        The RDP target and the clipping level, as in :class:`GaussianMechanism`.
    l1 : float, default 2.0
        :math:`\\ell_1`-sensitivity :math:`\\Delta_1` (2 for a histogram under
        replace-one neighbours).

    Attributes
    ----------
    scale : float
        The Laplace scale :math:`b`.
    """

    def __init__(self, epsilon: float | None, lam: float | None, l1: float = 2.0, floor: float = CLIP_FLOOR) -> None:
        super().__init__(epsilon, lam, floor)
        self.l1 = validation.scalar(validation.positive(l1, "l1"), "l1")
        self.scale = float(laplace_scale(self.epsilon, self.lam, self.l1))

    @classmethod
    def from_scale(cls, scale: float, floor: float = CLIP_FLOOR) -> Self:
        """A Laplace release with a given scale :math:`b`, no RDP target.

        For a scale chosen by another accounting, e.g. pure DP with basic
        composition (``LaplaceMechanism.calibrate(PureDP(epsilon), spec)``). ``epsilon``,
        ``lam`` and ``l1`` are None.

        Parameters
        ----------
        scale, floor : float
            The Laplace scale :math:`b > 0`, in counts, and the clipping level
            (default :data:`CLIP_FLOOR`), as in the constructor.

        Examples
        --------
        >>> LaplaceMechanism.from_scale(28.0)
        LaplaceMechanism.from_scale(scale=28)
        >>> LaplaceMechanism.from_scale(28.0).guarantee   # Delta_1 / b with Delta_1 = 2
        PureDP(epsilon=0.07142857142857142)
        """
        return cls._with_scale(scale, floor)

    _distribution, _scale, _sensitivity = "laplace", "scale", "l1"
    name, label = "laplace", "Laplace"

    @property
    def guarantee(self) -> Guarantee:
        """:math:`(\\lambda, \\varepsilon)`-RDP as calibrated, with the curve of :func:`laplace_rdp`; pure DP from a scale.

        An object built for an RDP target states it at its order, with the
        exact curve :math:`\\lambda' \\mapsto` ``laplace_rdp(b, lam', l1)``
        (Mironov 2017, Corollary 2). An object built by :meth:`from_scale`
        states :math:`\\Delta_1/b`-DP (pure) with :math:`\\Delta_1 = 2`.
        Either object is also :math:`\\Delta_1/b`-DP (:attr:`pure_epsilon`).
        """
        if self.lam is None:
            return PureDP(self.pure_epsilon)
        return RenyiDP(self.lam, self.epsilon, curve=functools.partial(laplace_rdp_curve, self.scale, self.l1))

    @property
    def pure_epsilon(self) -> float:
        """:math:`\\Delta_1/b`, the pure DP level of one release (:math:`\\Delta_1 = 2` from :meth:`from_scale`)."""
        return (self.l1 if self.l1 is not None else L1) / self.scale

    notions = (RenyiDP, ApproximateDP, PureDP)

    @classmethod
    def _renyi_release(cls, target, spec, index):
        """The scale at which :func:`laplace_rdp` with :math:`\\Delta_1 = 2` equals the share's level."""
        return cls(target.epsilon, target.lam, l1=L1, floor=cls.clip_floor)

    @classmethod
    def _pure_release(cls, target, spec, index):
        """Scale :math:`b = \\Delta_1/\\varepsilon` with :math:`\\Delta_1 = 2`: the share's :math:`\\varepsilon`-DP."""
        return cls.from_scale(L1 / target.epsilon, floor=cls.clip_floor)

    @classmethod
    def _calibrate_pure(cls, target, spec, cache):
        """``target.split(m)`` per release (:meth:`_pure_release`); ``parameters["scale"]`` is :math:`b`."""
        if not target.epsilon > 0:
            raise ValueError(f"epsilon must be in (0, inf) for the Laplace mechanism; got {target.epsilon!r}")
        cal = super()._calibrate_pure(target, spec, cache)
        return cal._replace(parameters={"scale": cal.releases[0].scale})

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """Pure :math:`\\hat\\varepsilon`-DP by basic composition (``delta`` unused).

        Each release gets the share ``PureDP(epsilon_hat).split(m)``, scale
        :math:`b = 2m/\\hat\\varepsilon`; the whole release is
        :math:`\\hat\\varepsilon`-DP, hence :math:`(\\hat\\varepsilon, \\delta)`-DP
        for every :math:`\\delta`. The stated guarantee is the pure one.
        """
        return cls._calibrate_pure(PureDP(target.epsilon), spec, cache)


class ClassicalGaussianMechanism(GaussianMechanism):
    """The Gaussian mechanism with the classical :math:`\\sigma = \\sqrt{2\\log(1.25/\\delta)}\\Delta_2/\\hat\\varepsilon`.

    For comparison only: the classical bound is proved for :math:`\\hat\\varepsilon < 1`
    (Dwork and Roth 2014, Theorem A.1) and fails above
    (:func:`lib.mechanisms.noise.calibration.analytic_gaussian_delta` measures by how much:
    at :math:`\\hat\\varepsilon = 20` the exact :math:`\\delta` of this
    :math:`\\sigma` is about 150 times the target). Its (eps_hat, delta) calibration reports a
    target with :math:`\\hat\\varepsilon \\ge 1` as not attained.
    """

    name, label = "gaussian_classical", "Gaussian (classical)"
    notions = (ApproximateDP,)
    _dp_sigma = staticmethod(classical_gaussian_sigma)

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """The classical :math:`\\sigma` at the joint sensitivity :math:`\\sqrt{2m}`, where its theorem holds.

        Attained only for :math:`\\hat\\varepsilon < 1`, the range of the
        classical theorem, and only if the exact :math:`\\delta` of the
        :math:`\\sigma` (:func:`lib.mechanisms.noise.calibration.analytic_gaussian_delta`) is
        at most ``delta``. Otherwise ``attained`` is False, ``releases`` is
        empty, and ``parameters`` holds the ``reason``, the formula's
        ``sigma`` (not used) and its exact ``delta_exact``. Bad arguments raise.
        """
        sensitivity = float(np.sqrt(L2_SQ * spec.n_releases))
        sigma = classical_gaussian_sigma(target.epsilon, target.delta, sensitivity)   # validates epsilon_hat > 0
        eps, dlt = target.epsilon, target.delta
        exact = float(analytic_gaussian_delta(sigma, eps, sensitivity))
        params = {"sigma": sigma, "delta_exact": exact}
        if eps >= 1.0:
            reason = (f"the classical Gaussian bound is proved for epsilon_hat < 1 only; got epsilon_hat = {eps:g} "
                      f"(its sigma = {sigma:.6g} has exact delta {exact:.3g}, {exact / dlt:.3g} times the target)")
            return ModelCalibration(cls.name, False, (), dict(params, reason=reason))
        if not exact <= dlt:
            reason = f"the classical sigma = {sigma:.6g} has exact delta {exact:.3g} above the target {dlt:g}"
            return ModelCalibration(cls.name, False, (), dict(params, reason=reason))
        mech = cls.from_sigma(sigma, floor=cls.clip_floor)
        return ModelCalibration(cls.name, True, (mech,) * spec.n_releases, params, target)
