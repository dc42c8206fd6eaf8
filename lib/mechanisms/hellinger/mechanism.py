"""The smoothed-Hellinger exponential mechanism and the releases it is compared with.

:class:`SmoothedHellinger` (the note's :math:`\\mathcal M_{\\mathcal H}`),
:class:`HellingerExponential` (the same exponential mechanism with the global sensitivity),
:class:`CountLaplace` and :class:`CountGaussian` (noise on the count of ones), each
releasing a posterior :math:`\\mathrm{prior} + \\tilde c` of a count vector of public total
:math:`n`, built on the geometry of :mod:`lib.mechanisms.hellinger.sensitivity`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.privacy.guarantees import Guarantee
from lib.validation import SeedLike
from lib.mechanisms.noise import analytic_gaussian_sigma
from lib.mechanisms.protocol import ApproximateDP, Mechanism, ModelCalibration, PureDP, ReleaseSpec
from lib.mechanisms.hellinger.sensitivity import candidates, Geometry, geometry_for, hellinger_matrix, hellinger_rows_beta_unchecked, hellinger_rows_unchecked, local_sensitivity, local_sensitivity_beta_unchecked, log_pmf, MAX_CANDIDATES, n_candidates, neighbour_index, posteriors, prior_vector, public_total_counts, smooth_sensitivity, smooth_sensitivity_beta, smoothing_parameter


"""Largest candidate set for the dense (candidates x candidates) computations (3.2 GB of float64
would be 20 000^2; the chapter stays below 3 000)."""


"""Largest array (float64 entries, 8 MB) that the memoised beta-binomial computations keep
(:func:`local_sensitivity_beta_unchecked`, :func:`hellinger_rows_beta`; eight of each at most): larger
ones are computed afresh on every call."""


class _PosteriorRelease(Mechanism):
    """A release of the posterior :math:`\\mathrm{prior} + \\tilde c` of a count vector of public total ``n``.

    A subclass implements :meth:`released_posterior`; :meth:`release` is its mean, a point of
    the open simplex (every entry is positive because the prior is). The calibrations build one
    object per release of a vector whose total is the public :math:`N` of the spec; a table of
    several rows has private row totals and is refused (ValueError).
    """

    #: The prior pseudo-count of every cell of the objects that the calibrations build.
    prior_count: ClassVar[float] = 1.0

    def released_posterior(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:  # pragma: no cover - abstract
        """The released posterior parameters, shape of ``counts``."""
        raise TypeError(f"{type(self).__name__} must define released_posterior(counts, rng)")

    def release(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """The mean of the released posterior, one point of the simplex per count vector.

        Parameters
        ----------
        counts : array_like of int, shape (..., k)
            Count vectors, each totalling the public ``n``.
        rng : numpy.random.Generator or int or None
            Source of randomness.

        Returns
        -------
        ndarray, shape (..., k)
            :math:`(\\mathrm{prior} + \\tilde c) / (n + \\sum \\mathrm{prior})`, every entry positive.
        """
        post = self.released_posterior(counts, rng)
        return post / post.sum(axis=-1, keepdims=True)

    @classmethod
    def release_key(cls, spec: ReleaseSpec, index: int):
        """Releases of the same shape ``(rows, d)`` share one object."""
        return spec.shapes[index]

    @classmethod
    def _one_release(cls, target, spec: ReleaseSpec, index: int) -> "_PosteriorRelease":
        """The object for release ``index`` of ``spec`` at its share ``target`` of the model's target.

        Raises
        ------
        ValueError
            If release ``index`` is a table of several rows (their totals are private).
        """
        rows, d = spec.shapes[index]
        if rows != 1:
            raise ValueError(f"the {cls.name!r} mechanism releases a vector of public total n; release {index} is a "
                             f"table of {rows} rows whose totals are private")
        return cls._build(target, np.full(d, cls.prior_count), spec.n_total)

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """:math:`(\\hat\\varepsilon, \\delta)`-DP for the whole model: ``target.split(m)`` per release.

        Basic composition (Dwork and Roth 2014, Theorem 3.16): :math:`m` releases that are each
        :math:`(\\hat\\varepsilon/m, \\delta/m)`-DP are together :math:`(\\hat\\varepsilon, \\delta)`-DP.
        """
        if not target.epsilon > 0:
            raise ValueError(f"epsilon_hat must be in (0, inf); got {target.epsilon!r}")
        per = target.split(spec.n_releases)
        objects = cls._per_release(spec, lambda index: cls._one_release(per, spec, index))
        return ModelCalibration(cls.name, True, objects, {"epsilon_release": per.epsilon, "delta_release": per.delta})

    @classmethod
    def _pure_release(cls, target, spec, index):
        if not target.epsilon > 0:
            raise ValueError(f"epsilon must be in (0, inf); got {target.epsilon!r}")
        return cls._one_release(target, spec, index)

    @classmethod
    def _build(cls, target, prior, n):  # pragma: no cover - abstract
        raise TypeError(f"{cls.__name__} must define _build(target, prior, n)")


class SmoothedHellinger(_PosteriorRelease):
    """The smoothed-Hellinger exponential mechanism :math:`\\mathcal M_{\\mathcal H}` on data sets of size ``n``.

    Parameters
    ----------
    prior : array_like, shape (k,)
        Positive prior parameters, :math:`k \\ge 2` (:math:`(\\alpha, \\beta)` for the
        beta-binomial system).
    n : int
        The data set size :math:`n \\ge 1`, public: every count vector totals ``n``.
    epsilon : float
        The note's :math:`\\varepsilon \\in (0, \\infty)`.
    delta : float
        The note's :math:`\\delta \\in (0, 1)`; :math:`\\gamma` = :func:`smoothing_parameter`.
    geom : Geometry, optional
        :func:`geometry` of ``(prior, n, k)``, to share the parts that do not depend on the
        target across targets (one built for another prior, ``n`` or ``k`` is refused).

    Attributes
    ----------
    cand : ndarray of int, shape (C, k)
        The candidate count vectors; output ``i`` is the posterior ``prior + cand[i]``.
    ls, smooth : ndarray, shape (C,)
        Local and smooth sensitivity at each data set (count vector). For ``k = 2`` without
        ``geom``, ``ls`` is read-only: it is memoised on ``(prior, n)`` and shared by every
        mechanism of that setting.
    gamma : float
        The smoothing parameter.
    hellinger : ndarray, shape (C, C)
        :math:`\\mathcal H(\\mathrm{BI}(c_i), \\mathrm{BI}(c_j))` (computed on first use).
    log_pmf : ndarray, shape (C, C)
        ``log_pmf[i, j]`` is :math:`\\log \\Pr[\\mathcal M_{\\mathcal H}(x) = r_j]` for a data set with
        count vector ``cand[i]`` (Definition 2.1; computed on first use).
    neighbours : ndarray of int, shape (C, k(k-1))
        :func:`neighbour_index` of ``cand`` (computed on first use).

    Raises
    ------
    ValueError
        If an argument is outside its range, or ``k > 2`` and the candidates exceed
        :data:`MAX_CANDIDATES`.

    Notes
    -----
    A release for one data set costs :math:`O(n)` for :math:`k = 2`: one row of distances and
    :math:`S` at the data (:func:`smooth_sensitivity_beta`), sampled by inverse CDF on the
    normalised probabilities of :func:`log_pmf`. :meth:`released_counts` is the released
    candidate :math:`c'`, :meth:`released_posterior` the posterior :math:`\\mathrm{prior} + c'`,
    :meth:`release` its mean: an entry of the simplex is never 0, since the prior is positive,
    and the mean determines :math:`c'` (post-processing changes no guarantee).

    The guarantee is the note's :math:`(\\varepsilon, \\delta)`-DP, measured by the exact audit
    wherever it was run, not proved (the proof does not apply to a discrete output; chapter
    12). :func:`lib.theory.hellinger_audit.audited_guarantee` audits one setting exactly.

    Examples
    --------
    >>> import numpy as np
    >>> mech = SmoothedHellinger((1.0, 1.0), 300, 1.0, 1e-6)
    >>> mech.released_counts(np.broadcast_to([90, 210], (3, 2)), rng=np.random.default_rng(0))[:, 0].tolist()
    [91, 89, 85]
    >>> mech.guarantee
    ApproximateDP(epsilon=1.0, delta=1e-06)
    """

    name, label = "smoothed_hellinger", "Smoothed Hellinger"
    notions = (ApproximateDP,)
    #: Replace :math:`S(x)` by the global sensitivity :math:`\\max_x LS(x)` (:class:`HellingerExponential`).
    global_sensitivity: ClassVar[bool] = False

    def __init__(self, prior: ArrayLike, n: int, epsilon: float, delta: float | None = None, *,
                 geom: Geometry | None = None) -> None:
        prior = validation.positive(prior, "prior")
        if prior.ndim != 1 or prior.size < 2:
            raise ValueError(f"prior must be a vector of k >= 2 positive parameters; got shape {prior.shape}")
        k = prior.size
        self.n = validation.integer(n, "n", 1)
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        if delta is None and not self.global_sensitivity:
            raise ValueError("delta must be in (0, 1) for the smoothed mechanism; got None")
        self.delta = None if delta is None else validation.scalar(validation.open_unit(delta, "delta"), "delta")
        self.prior = prior
        if geom is None:
            if k > 2 and n_candidates(self.n, k) > MAX_CANDIDATES:
                raise ValueError(f"n = {self.n}, k = {k} give {n_candidates(self.n, k)} candidates; at most "
                                 f"{MAX_CANDIDATES}")
            self.cand = candidates(self.n, k)
            self.ls = local_sensitivity_beta_unchecked(prior, self.n) if k == 2 else local_sensitivity(prior, self.cand)
        else:
            geom = geometry_for(geom, prior, self.n, k)
            self.cand, self.ls = geom.cand, geom.ls
        self._geom = geom
        self.gamma = (None if self.delta is None
                      else float(smoothing_parameter(self.epsilon, self.delta, self.cand.shape[0])))
        if self.global_sensitivity:
            self.smooth = np.full_like(self.ls, self.ls.max())
        elif k == 2:
            self.smooth = smooth_sensitivity_beta(self.ls, self.gamma)
        else:
            self.smooth = smooth_sensitivity(self.ls, self.cand, self.gamma)
        self._dense = {}

    def __repr__(self):
        return (f"{type(self).__name__}(prior={self.prior.tolist()}, n={self.n}, epsilon={self.epsilon:g}, "
                f"delta={self.delta!r})")

    @property
    def guarantee(self) -> Guarantee:
        """The note's :math:`(\\varepsilon, \\delta)`-DP (measured by the exact audit, not proved)."""
        return ApproximateDP(self.epsilon, self.delta)

    @property
    def hellinger(self) -> np.ndarray:
        if "hellinger" not in self._dense:
            self._dense["hellinger"] = (self._geom.hellinger if self._geom is not None
                                        else hellinger_matrix(self.prior, self.cand))
        return self._dense["hellinger"]

    @property
    def neighbours(self) -> np.ndarray:
        if "neighbours" not in self._dense:
            self._dense["neighbours"] = (self._geom.neighbours if self._geom is not None
                                         else neighbour_index(self.cand))
        return self._dense["neighbours"]

    @property
    def log_pmf(self) -> np.ndarray:
        if "log_pmf" not in self._dense:
            self._dense["log_pmf"] = log_pmf(self.hellinger, self.smooth, self.epsilon)
        return self._dense["log_pmf"]

    def index(self, counts: ArrayLike) -> np.ndarray:
        """The candidate index of every count vector along the last axis of ``counts`` (shape ``(...)``)."""
        arr = public_total_counts(counts, self.n, self.cand.shape[1])
        if arr.shape[-1] == 2:
            return arr[..., 0]
        lookup = {tuple(row): i for i, row in enumerate(self.cand.tolist())}
        flat = arr.reshape(-1, arr.shape[-1])
        return np.array([lookup[tuple(row)] for row in flat.tolist()], dtype=np.int64).reshape(arr.shape[:-1])

    def log_pmf_rows(self, counts: ArrayLike) -> np.ndarray:
        """:math:`\\log \\Pr[\\mathcal M_{\\mathcal H}(x) = r]` over the candidates, for each count vector ``x``.

        ``O(C)`` memory per count vector (no dense matrix): shape ``counts.shape[:-1] + (C,)``. For
        ``k = 2`` the distances are :func:`hellinger_rows_beta` (memoised: the same data set at
        another target, or under :class:`HellingerExponential`, reuses them).
        """
        idx = self.index(counts)
        validation.cells(max(idx.size, 1) * self.cand.shape[0], "log_pmf_rows (count vectors x candidates)")
        if self.cand.shape[1] == 2:  # rows of candidates(n, 2), shared across targets
            rows = hellinger_rows_beta_unchecked(self.prior, self.n, idx)
        else:
            rows = hellinger_rows_unchecked(self.prior, self.cand, idx)
        return log_pmf(rows, self.smooth[idx], self.epsilon)

    def released_counts(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """The released candidate :math:`c'` for every count vector (by inverse CDF), shape of ``counts``."""
        idx = self.index(counts)
        rng = validation.generator(rng)
        u = np.asarray(rng.random(idx.shape))
        out = np.empty(idx.shape, dtype=np.int64)
        unique, inverse = np.unique(idx, return_inverse=True)
        inverse = inverse.reshape(idx.shape)
        last = self.cand.shape[0] - 1
        for j, i in enumerate(unique):
            cdf = np.cumsum(np.exp(self.log_pmf_rows(self.cand[i])))
            sel = inverse == j
            out[sel] = np.minimum(np.searchsorted(cdf, u[sel] * cdf[-1], side="right"), last)
        return self.cand[out]

    def released_posterior(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """The released posterior :math:`\\mathrm{prior} + c'`, shape of ``counts``."""
        return posteriors(self.prior, self.released_counts(counts, rng))

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, ApproximateDP):
            raise ValueError(f"the {cls.name!r} mechanism meets an (epsilon, delta) target; got {target!r}")
        return cls(prior, n, target.epsilon, target.delta)


class HellingerExponential(SmoothedHellinger):
    """The exponential mechanism with the Hellinger score and its global sensitivity: :math:`\\varepsilon`-DP.

    :class:`SmoothedHellinger` with :math:`S(x)` replaced by :math:`\\max_x LS(x)`, the plain
    exponential mechanism of McSherry and Talwar (2007); same parameters, and ``delta`` may be
    None (it only sets :math:`\\gamma`, which this release does not use; ``gamma`` is then None).

    Examples
    --------
    >>> HellingerExponential((1.0, 1.0), 50, 1.0, 1e-6).guarantee
    PureDP(epsilon=1.0)
    """

    name, label = "hellinger_em", "Exponential (Hellinger, global sensitivity)"
    notions = (PureDP, ApproximateDP)
    global_sensitivity = True

    @property
    def guarantee(self) -> Guarantee:
        """:math:`\\varepsilon`-DP (McSherry and Talwar 2007, Theorem 6; proved)."""
        return PureDP(self.epsilon)

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, (PureDP, ApproximateDP)):
            raise ValueError(f"the {cls.name!r} mechanism meets a pure or (epsilon, delta) target; got {target!r}")
        return cls(prior, n, target.epsilon, None)


class _CountNoise(_PosteriorRelease):
    """Noise on the count of ones :math:`a` of a beta-binomial data set of public size ``n``.

    The noisy count is clipped to :math:`[0, n]` and released as the posterior
    :math:`\\mathrm{beta}(\\alpha + \\tilde a, \\beta + n - \\tilde a)`. With :math:`n` public the
    count of ones has sensitivity 1 under replacement. Subclasses name the generator method
    (``_distribution``) and set ``noise_scale``.
    """

    _distribution: ClassVar[str] = ""

    def _setup(self, n, prior):
        self.n = validation.integer(n, "n", 1)
        self.prior = prior_vector(prior, 2)

    def __repr__(self):
        return f"{type(self).__name__}(guarantee={self.guarantee!r}, n={self.n}, noise_scale={self.noise_scale:.6g})"

    def released_posterior(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """The released posterior :math:`(\\alpha + \\tilde a, \\beta + n - \\tilde a)`, shape of ``counts``."""
        arr = public_total_counts(counts, self.n, 2)
        rng = validation.generator(rng)
        noise = getattr(rng, self._distribution)(0.0, self.noise_scale, arr.shape[:-1])
        noisy = np.clip(arr[..., 0] + noise, 0, self.n)
        return posteriors(self.prior, np.stack([noisy, self.n - noisy], axis=-1))


class CountLaplace(_CountNoise):
    """Laplace noise of scale :math:`1/\\varepsilon` on the count of ones: :math:`\\varepsilon`-DP.

    Parameters
    ----------
    epsilon : float
        :math:`\\varepsilon \\in (0, \\infty)`.
    n : int
        The public data set size.
    prior : array_like, shape (2,), default (1, 1)
        The Beta prior of the released posterior.

    Examples
    --------
    >>> CountLaplace(2.0, 100).guarantee
    PureDP(epsilon=2.0)
    """

    name, label = "count_laplace", "Laplace (count of ones)"
    notions = (PureDP, ApproximateDP)
    _distribution = "laplace"

    def __init__(self, epsilon: float, n: int, prior: ArrayLike = (1.0, 1.0)) -> None:
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self._setup(n, prior)
        self.noise_scale = 1 / self.epsilon

    @property
    def guarantee(self) -> Guarantee:
        """:math:`\\varepsilon`-DP (Dwork and Roth 2014, Theorem 3.6; sensitivity 1)."""
        return PureDP(self.epsilon)

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, (PureDP, ApproximateDP)) or prior.size != 2:
            raise ValueError(f"the {cls.name!r} mechanism meets a pure or (epsilon, delta) target on two cells; "
                             f"got {target!r} on {prior.size}")
        return cls(target.epsilon, n, prior)


class CountGaussian(_CountNoise):
    """Analytic Gaussian noise on the count of ones: :math:`(\\varepsilon, \\delta)`-DP.

    Parameters
    ----------
    epsilon : float
        :math:`\\varepsilon \\in (0, \\infty)`.
    delta : float
        :math:`\\delta \\in (0, 1)`.
    n : int
        The public data set size.
    prior : array_like, shape (2,), default (1, 1)
        The Beta prior of the released posterior.

    Notes
    -----
    :math:`\\sigma` is the smallest noise level of the analytic Gaussian mechanism
    (Balle and Wang 2018) for sensitivity 1,
    :func:`lib.mechanisms.noise.analytic_gaussian_sigma`.

    Examples
    --------
    >>> CountGaussian(1.0, 1e-6, 100).guarantee
    ApproximateDP(epsilon=1.0, delta=1e-06)
    """

    name, label = "count_gaussian", "Gaussian (count of ones)"
    notions = (ApproximateDP,)
    _distribution = "normal"

    def __init__(self, epsilon: float, delta: float, n: int, prior: ArrayLike = (1.0, 1.0)) -> None:
        self.epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
        self.delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
        self._setup(n, prior)
        self.noise_scale = float(analytic_gaussian_sigma(self.epsilon, self.delta, 1.0))

    @property
    def guarantee(self) -> Guarantee:
        """:math:`(\\varepsilon, \\delta)`-DP (Balle and Wang 2018, Theorem 8)."""
        return ApproximateDP(self.epsilon, self.delta)

    @classmethod
    def _build(cls, target, prior, n):
        if not isinstance(target, ApproximateDP) or prior.size != 2:
            raise ValueError(f"the {cls.name!r} mechanism meets an (epsilon, delta) target on two cells; "
                             f"got {target!r} on {prior.size}")
        return cls(target.epsilon, target.delta, n, prior)
