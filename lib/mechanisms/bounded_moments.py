"""Mechanisms that release the mean and the standard deviation of a bounded sample.

A mixed naive Bayes model (:mod:`lib.models.mixed_naive_bayes`) describes a
numerical attribute in a class by a Gaussian; these mechanisms release its two
parameters. They are not histogram mechanisms: the protocol's release
contract of :mod:`lib.mechanisms.protocol` ("counts in, a point of the simplex
out") does not apply, and :class:`MomentMechanism` states the one they follow
instead:

* ``release(x, lower, upper, rng, size=None)``: a 1-D sample ``x`` of a
  public size :math:`n \\ge 1`, every value in the public range
  ``[lower, upper]``, in; released moments out, an array of shape
  ``size + (2,)`` holding a mean in ``[lower, upper]`` and a standard
  deviation in ``[sd_floor (upper - lower), (upper - lower)/2]``;
* ``guarantee``: what one call meets for two samples of the same size that
  differ in one value (replace-one neighbours of the sample), both
  statistics together;
* ``output = "moments"`` (a histogram mechanism has ``"distribution"``), so a
  registry-wide test can tell the two contracts apart; ``notions = ()``: a
  class is calibrated by the model that uses it (the budget of Zafarani and
  Clifton's Algorithm 1, :func:`lib.models.mixed_naive_bayes.budget`), not by
  a histogram model's calibration.

The release is split in two so that a model can draw many releases from one
computation of the (data-dependent) sensitivities: :meth:`MomentMechanism.statistics`
gives the exact statistics and the scale of the noise each one gets,
:attr:`MomentMechanism.noise` the noise distribution and
:meth:`MomentMechanism.moments` the post-processing of noisy statistics into a
mean and a deviation.

The classes (registry names in brackets):

:class:`ZafaraniClifton` (``"zc"``)
    Cauchy noise scaled to the smooth sensitivity of the (trimmed) mean and
    of the standard deviation (Zafarani and Clifton, Algorithm 1 and
    Theorems 2, 4 and 7).
:class:`VaidyaLaplace` (``"vaidya"``)
    Laplace noise scaled to the global sensitivities (Vaidya et al. 2013).
:class:`BunSteinke` (``"bun_steinke"``)
    Trimmed means of :math:`x` and :math:`x^2` with Cauchy noise scaled to
    their smooth sensitivity, :math:`\\sigma^2 = E[X^2] - E[X]^2` (Bun and
    Steinke 2019, as Zafarani and Clifton run it, their Sections 5 and 7).
:class:`SampleMoments` (``"sample_moments"``)
    The exact mean and deviation, no noise (not private).

Notes
-----
Guarantees (each proved for a sample of fixed, public size :math:`n`; one
call releases two statistics, each at half the object's ``epsilon``, so by
basic composition the call is ``epsilon``-DP):

* Vaidya et al.: the Laplace mechanism at the global sensitivities
  :math:`(U-L)/n` of the mean and :math:`(U-L)\\sqrt{n-1}/n` of the standard
  deviation (:func:`lib.mechanisms.smooth_sensitivity.global_sensitivity_std`)
  is pure DP (Dwork and Roth 2014, Theorem 3.6).
* Zafarani and Clifton, Theorem 2 (Nissim, Raskhodnikova and Smith 2007,
  Lemma 2.6 with the Cauchy of their Lemma 2.7): Cauchy noise at
  :math:`6 S_\\beta(x)/\\varepsilon`, :math:`\\beta = \\varepsilon/6`, is pure
  :math:`\\varepsilon`-DP. The ``"tight"`` calibration keeps :math:`\\beta` and
  takes the smallest multiplier whose exact loss
  (:func:`lib.mechanisms.smooth_sensitivity.cauchy_exact_loss`) is
  :math:`\\varepsilon`; the ``"printed"`` constants of Algorithm 1 are covered
  by no theorem, and the object states their exact loss.
* Bun and Steinke: their admissible distributions give concentrated DP; with
  the Cauchy, as Zafarani and Clifton run it ("it follows that pure
  differential privacy holds ... when using the Cauchy distribution", their
  Section 5), the release is pure DP by the same argument as Theorem 2.

None of these covers a neighbour that moves a value from one sample to
another (a row that changes its class in a model): see
:class:`lib.models.mixed_naive_bayes.LabelKeptDP`.

References
----------
Zafarani, F. and Clifton, C. (2020). Differentially private naive Bayes
classifier using smooth sensitivity. arXiv:2003.13955.
Vaidya, J., Shafiq, B., Basu, A. and Hong, Y. (2013). Differentially private
naive Bayes classification. IEEE/WIC/ACM WI-IAT.
Bun, M. and Steinke, T. (2019). Average-case averages: private algorithms for
smooth sensitivity and mean estimation. NeurIPS.
Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and
sampling in private data analysis. STOC.

Examples
--------
>>> import numpy as np
>>> mech = VaidyaLaplace(1.0)
>>> mech.guarantee
PureDP(epsilon=1.0)
>>> mech.release(np.linspace(0.0, 10.0, 101), 0.0, 10.0, np.random.default_rng(0)).shape
(2,)
"""

from __future__ import annotations

from typing import ClassVar, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms import smooth_sensitivity as ss
from lib.mechanisms.protocol import Mechanism, NotPrivate, PureDP
from lib.privacy.guarantees import Guarantee

#: The noise distributions of a release.
NOISES = ("cauchy", "laplace", "none")

#: What ``statistics`` returns: ``((mean, scale of its noise), (sd, scale of its noise))``.
Statistics: TypeAlias = tuple[tuple[float, float], tuple[float, float]]


class MomentMechanism(Mechanism):
    """Base class of the mechanisms that release a bounded sample's mean and standard deviation.

    Parameters
    ----------
    epsilon : float, optional
        The budget of one call, both statistics together (each gets half), in
        :math:`(0, \\infty)`; not taken by a non-private class.
    calibration : {"theorem2", "printed", "tight"}
        The Cauchy calibration (:func:`lib.mechanisms.smooth_sensitivity.calibrate`);
        a Laplace class ignores it.
    trim : float, optional
        Share trimmed at each end, in :math:`[0, 0.5]`; the class's
        ``default_trim`` if None.
    resolution, max_distance : int, optional
        Passed to :func:`lib.mechanisms.smooth_sensitivity.smooth_sensitivity_std`.

    Raises
    ------
    ValueError
        If an argument is out of its range.

    Notes
    -----
    The contract (see the module): :meth:`release` takes a sample of a public
    size in a public range and returns ``(mean, sd)``; :attr:`guarantee` holds
    for two samples of the same size that differ in one value.
    """

    output: ClassVar[str] = "moments"
    notions: ClassVar[tuple] = ()
    #: The distribution of the noise added to each statistic (one of :data:`NOISES`).
    noise: ClassVar[str] = "none"
    #: The share trimmed at each end when ``trim`` is None.
    default_trim: ClassVar[float] = 0.0

    def __init__(self, epsilon: float | None = None, *, calibration: str = "theorem2", trim: float | None = None,
                 resolution: int = 4096, max_distance: int | None = None) -> None:
        if self.private:
            self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        elif epsilon is not None:
            raise ValueError(f"{type(self).__name__} is not private and takes no epsilon; got {epsilon!r}")
        else:
            self.epsilon = None
        if calibration not in ss.RULES:
            raise ValueError(f"calibration must be one of {ss.RULES}; got {calibration!r}")
        self.calibration = calibration
        trim = self.default_trim if trim is None else trim
        self.trim = float(validation.scalar(validation.in_range(trim, "trim", 0.0, 0.5, open_low=False), "trim"))
        self.resolution = None if resolution is None else validation.integer(resolution, "resolution", 1)
        self.max_distance = None if max_distance is None else validation.integer(max_distance, "max_distance", 0)

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, calibration={self.calibration!r})"

    @property
    def epsilon_each(self) -> float:
        """The budget of each of the two statistics, half of ``epsilon``."""
        return self.epsilon / 2.0

    @property
    def guarantee(self) -> Guarantee:
        """:class:`~lib.privacy.guarantees.PureDP` at ``epsilon`` (both statistics of one sample)."""
        return PureDP(self.epsilon)

    def statistics(self, x: np.ndarray, lower: float, upper: float, cache: dict | None = None) -> Statistics:
        """The exact statistics of the sorted sample ``x`` and the scale of the noise of each.

        Parameters
        ----------
        x : ndarray, shape (n,)
            The sample, sorted, every value in ``[lower, upper]``.
        lower, upper : float
            The public range.
        cache : dict, optional
            Sensitivity profiles keyed by a fingerprint of the sample, bounds
            and options (:func:`lib.mechanisms.smooth_sensitivity.fingerprint`),
            filled in place: an entry is used only for the sample it was
            computed on.

        Returns
        -------
        (first, scale_first), (second, scale_second) : tuple of (float, float)
            The two statistics (a mean and a deviation, or two moments) and
            their noise scales. A sample too small to release (fewer than two
            values left) gives the centre of the range and half its width,
            without noise.
        """
        raise TypeError(f"{type(self).__name__} must define statistics(x, lower, upper, cache)")

    @classmethod
    def moments(cls, first: ArrayLike, second: ArrayLike, lower: ArrayLike, upper: ArrayLike, *,
                sd_floor: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
        """Post-processing of noisy statistics: the mean clipped into the range, the deviation into its bounds.

        Parameters
        ----------
        first, second : array_like
            Noisy statistics (broadcast together).
        lower, upper : array_like
            The public range (broadcast against the statistics' last axis).
        sd_floor : float
            Deviations are clipped into :math:`[\\text{sd\\_floor}\\,(U-L), (U-L)/2]`.

        Returns
        -------
        mu, sd : ndarray
        """
        width = np.asarray(upper) - np.asarray(lower)
        mu = np.clip(first, lower, upper)
        return mu, np.clip(second, sd_floor * width, width / 2)

    def release(self, x: ArrayLike, lower: float, upper: float, rng: SeedLike = None,
                size: int | tuple[int, ...] | None = None, *, sd_floor: float = 1e-3) -> np.ndarray:
        """Released ``(mean, sd)`` of one sample: an array of shape ``size + (2,)``.

        Parameters
        ----------
        x : array_like, shape (n,)
            The sample, every value in ``[lower, upper]`` (values outside are clipped).
        lower, upper : float
            The public range, ``lower < upper``.
        rng : numpy.random.Generator, int or None
        size : int or tuple of int, optional
            Independent releases (None: one).
        sd_floor : float
            See :meth:`moments`.
        """
        lower, upper, _ = ss.checked_bounds(lower, upper)
        x = validation.in_range(x, "x", -np.inf, np.inf, open_low=True)
        if x.ndim != 1 or x.size < 1:
            raise ValueError(f"x must be a non-empty 1-D sample; got shape {x.shape}")
        rng = validation.generator(rng)
        shape = () if size is None else tuple(np.atleast_1d(size).tolist())
        (v1, s1), (v2, s2) = self.statistics(np.sort(np.clip(x, lower, upper)), lower, upper, {})
        first = v1 + draw_noise(rng, self.noise, s1, shape)
        second = v2 + draw_noise(rng, self.noise, s2, shape)
        mu, sd = self.moments(first, second, lower, upper, sd_floor=sd_floor)
        return np.stack([mu, sd], axis=-1)


def draw_noise(rng: np.random.Generator, noise: str, scale: ArrayLike,
               shape: int | tuple[int, ...] | None) -> np.ndarray:
    """``scale`` times standard noise of the distribution ``noise`` (one of :data:`NOISES`), of ``shape``."""
    scale = np.asarray(scale, dtype=float)
    if noise == "none":
        return np.zeros(shape) * scale
    z = rng.standard_cauchy(shape) if noise == "cauchy" else rng.laplace(0.0, 1.0, shape)
    return z * scale


def _centre(lower, upper):
    width = upper - lower
    return (lower + width / 2, 0.0), (width / 2, 0.0)


class ZafaraniClifton(MomentMechanism):
    """Cauchy noise scaled to the smooth sensitivity of the mean and the standard deviation.

    Zafarani and Clifton's Algorithm 1, lines 14-18, for one class and
    attribute: the mean (their Theorem 4, :func:`lib.mechanisms.smooth_sensitivity.smooth_sensitivity_mean`)
    and the standard deviation (line 17,
    :func:`lib.mechanisms.smooth_sensitivity.smooth_sensitivity_std`) of the
    sample without its :math:`\\lfloor \\text{trim}\\, n\\rfloor` smallest and
    largest values (0 by default: Algorithm 1 leaves :math:`m` open), each with
    Cauchy noise of the calibration ``calibration``.

    Parameters
    ----------
    epsilon, calibration, trim, resolution, max_distance
        As :class:`MomentMechanism`.

    Notes
    -----
    The guarantee is :math:`\\varepsilon`-DP (Theorem 2; the ``"tight"``
    calibration by the exact loss) except for ``calibration="printed"``,
    whose multiplier :math:`\\sqrt2/\\varepsilon` no theorem covers: it states
    twice the exact loss :func:`lib.mechanisms.smooth_sensitivity.cauchy_exact_loss`
    of one statistic (below ``epsilon`` by that computation, not by a theorem).

    Examples
    --------
    >>> ZafaraniClifton(1.0).guarantee
    PureDP(epsilon=1.0)
    >>> round(ZafaraniClifton(1.0, calibration="printed").guarantee.epsilon, 4)
    0.7035
    """

    name = "zc"
    label = "Zafarani-Clifton"
    noise = "cauchy"

    @property
    def guarantee(self) -> Guarantee:
        if self.calibration != "printed":
            return PureDP(self.epsilon)
        beta, multiplier = ss.calibrate(self.epsilon_each, self.calibration)
        return PureDP(2 * ss.cauchy_exact_loss(1.0 / multiplier, beta))

    def statistics(self, x: np.ndarray, lower: float, upper: float, cache: dict | None = None) -> Statistics:
        cache = {} if cache is None else cache
        n = x.size
        m = int(np.floor(self.trim * n))
        if n - 2 * m < 2:
            return _centre(lower, upper)
        beta, mult = ss.calibrate(self.epsilon_each, self.calibration)
        # ss.smooth_sensitivity_mean and ss.smooth_sensitivity_std_profile with the sample checked once and
        # hashed once: the hash is the cache key (ss.std_profile_key) and the profile's key at the same time
        t, lower, upper = ss.checked_sample(x[m:n - m], lower, upper)
        s_mean = ss.smooth_sensitivity_mean_sorted(t, lower, upper, beta)
        last = ss.distance_cap(t.size, self.max_distance)
        digest = ss.fingerprint("std", t, lower, upper, self.resolution, last)
        key = ("std", digest)
        s_sd, cache[key] = ss.smooth_sensitivity_std_profile_sorted(t, lower, upper, beta, cache.get(key), digest, self.resolution, last)
        return (float(t.mean()), mult * s_mean), (float(t.std()), mult * s_sd)


class VaidyaLaplace(MomentMechanism):
    """Laplace noise scaled to the global sensitivities of the mean and the standard deviation.

    Vaidya et al. (2013): the mean with noise of scale :math:`(U-L)/(n\\varepsilon_1)`
    and the (population) standard deviation with noise of scale
    :math:`(U-L)\\sqrt{n-1}/(n\\varepsilon_1)`, :math:`\\varepsilon_1 =` ``epsilon/2``.

    Parameters
    ----------
    epsilon
        As :class:`MomentMechanism` (``calibration`` and ``trim`` are not used).

    Examples
    --------
    >>> VaidyaLaplace(0.5).guarantee
    PureDP(epsilon=0.5)
    """

    name = "vaidya"
    label = "Vaidya et al."
    noise = "laplace"

    def statistics(self, x: np.ndarray, lower: float, upper: float, cache: dict | None = None) -> Statistics:
        n = x.size
        if n < 2:
            return _centre(lower, upper)
        e = self.epsilon_each
        return ((float(x.mean()), ss.global_sensitivity_mean(n, lower, upper) / e),
                (float(x.std()), ss.global_sensitivity_std(n, lower, upper) / e))


class BunSteinke(MomentMechanism):
    """Trimmed means of :math:`x` and :math:`x^2` with Cauchy noise scaled to their smooth sensitivity.

    As Zafarani and Clifton run Bun and Steinke's estimator (their Sections 5
    and 7): the :math:`m`-trimmed mean, :math:`m = \\min(\\lceil \\text{trim}\\,
    n\\rceil, \\lfloor (n-1)/2 \\rfloor)` (trim 0.05 by default), of the sample
    and of its squares (on the squares' range), each with Cauchy noise at
    :func:`lib.mechanisms.smooth_sensitivity.smooth_sensitivity_trimmed_mean`
    times the calibration's multiplier; the released mean is the first,
    projected to the range, and :math:`\\sigma^2 = E[X^2] - E[X]^2`.

    Parameters
    ----------
    epsilon, calibration, trim
        As :class:`MomentMechanism`.

    Raises
    ------
    ValueError
        From :meth:`statistics`, if squaring the bounds overflows or a smooth
        sensitivity underflows.

    Examples
    --------
    >>> BunSteinke(1.0, calibration="tight").guarantee
    PureDP(epsilon=1.0)
    """

    name = "bun_steinke"
    label = "Bun-Steinke"
    noise = "cauchy"
    default_trim = 0.05

    @property
    def guarantee(self) -> Guarantee:
        return ZafaraniClifton.guarantee.fget(self)

    def statistics(self, x: np.ndarray, lower: float, upper: float, cache: dict | None = None) -> Statistics:
        cache = {} if cache is None else cache
        n = x.size
        m = min(int(np.ceil(self.trim * n)), max(n - 1, 0) // 2)
        if n < 2:
            return _centre(lower, upper)
        beta, mult = ss.calibrate(self.epsilon_each, self.calibration)
        with np.errstate(over="ignore"):
            lo2 = 0.0 if lower <= 0.0 <= upper else min(lower**2, upper**2)
            hi2 = max(lower**2, upper**2)
        if not np.isfinite(hi2):
            raise ValueError(f"bounds ({lower:g}, {upper:g}): 'bun_steinke' squares the values, which overflows; "
                             "bring the range nearer 0")
        x2 = ss.sorted_once(np.clip(x * x, lo2, hi2))     # already sorted when the range is on one side of 0
        ks = np.arange(2 * m + 2)    # A^(k) reaches its maximum (U - L)/(n - 2m) at k = 2m + 1
        scales = []
        for v, a, b in ((x, lower, upper), (x2, lo2, hi2)):
            key = ("trimmed", ss.fingerprint("trimmed", v, a, b, m))
            prof = _cached(cache, key,
                           lambda v=v, a=a, b=b: ss.trimmed_mean_sensitivity_at_distance(v, a, b, m, ks), ks.size)
            scales.append(mult * float(np.max(np.exp(-beta * ks) * prof)))
        if min(scales) < np.finfo(float).tiny:
            raise ValueError(f"a smooth sensitivity of the trimmed means underflows to {min(scales):g} at "
                             f"epsilon per release {self.epsilon_each:g}; lower epsilon")
        return (ss.trimmed_mean(x, m), scales[0]), (ss.trimmed_mean(x2, m), scales[1])

    @classmethod
    def moments(cls, first: ArrayLike, second: ArrayLike, lower: ArrayLike, upper: ArrayLike, *,
                sd_floor: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
        width = np.asarray(upper) - np.asarray(lower)
        mu = np.clip(first, lower, upper)
        var = second - mu**2
        sd = np.sqrt(np.clip(var, (sd_floor * width) ** 2, (width / 2) ** 2))
        return mu, np.clip(sd, sd_floor * width, width / 2)


class SampleMoments(MomentMechanism):
    """The exact mean and (population) standard deviation, without noise: not private.

    Examples
    --------
    >>> SampleMoments().release([1.0, 3.0], 0.0, 10.0).tolist()
    [2.0, 1.0]
    """

    name = "sample_moments"
    label = "Gaussian NB"
    private = False

    @property
    def guarantee(self) -> Guarantee:
        return NotPrivate()

    def statistics(self, x: np.ndarray, lower: float, upper: float, cache: dict | None = None) -> Statistics:
        if x.size < 1:
            return _centre(lower, upper)
        return (float(x.mean()), 0.0), (float(x.std()), 0.0)


def _cached(cache, key, compute, length):
    """``cache[key]`` (computing it if absent), checked: a finite non-negative 1-D array of ``length``."""
    if key not in cache:
        cache[key] = compute()
    value = np.asarray(cache[key])
    if (value.shape != (length,) or value.dtype.kind not in "fiu" or not np.all(np.isfinite(value))
            or np.any(value < 0)):
        raise ValueError(f"cache entry {key[0]!r} for this sample is not a valid sensitivity profile "
                         f"(a finite non-negative array of length {length}); pass a fresh cache")
    return value
