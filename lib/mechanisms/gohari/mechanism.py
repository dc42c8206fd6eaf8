"""Gohari et al.'s mechanism on the protocol, and its calibration for a whole model.

The release is Algorithm 1's :math:`\\mathrm{Dirichlet}(r f + \\alpha)` with
:math:`\\alpha = 1 + 4(\\lambda - 1) r` at :math:`\\lambda` = :data:`GOHARI_LAM`;
only the scale :math:`r` comes from Gohari et al.'s
:math:`(\\hat\\varepsilon, \\delta)` guarantee
(:func:`lib.mechanisms.gohari.gohari_calibrate`). A model of :math:`m`
releases meets one target :math:`(\\hat\\varepsilon, \\delta)` by basic
composition of approximate DP: each release gets the equal share
``ApproximateDP(epsilon_hat, delta).split(m)`` (:func:`gohari_releases`);
:func:`gohari_prefill` solves the searches of many targets together for the
experiment grids.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
from lib.mechanisms.gohari.guarantee import gohari_calibrate
from lib.mechanisms.gohari.batch import gohari_calibrate_many
from lib.mechanisms.gohari.core import GohariGuarantee
from lib.mechanisms.protocol import ApproximateDP, Guarantee, ModelCalibration, ReleaseSpec

#: Order of Gohari et al.'s release, :math:`\alpha = 1 + 4(\lambda - 1) r` (the author's value).
GOHARI_LAM = 5.0


def _setting(epsilon_hat, delta, domain_sizes, n_total, lam):
    """The checked per-release share, sizes, total and order of :func:`gohari_releases`."""
    sizes = validation.domain_sizes(domain_sizes)
    share = ApproximateDP(*validation.dp_target(epsilon_hat, delta)).split(len(sizes))
    n_total = validation.scalar(validation.positive(n_total, "n_total"), "n_total")
    lam = validation.scalar(validation.order(lam, "lam", strict=True), "lam")
    return share, sizes, n_total, lam


def _key(share, lam, n_total, d):
    """The cache key of one search: the arguments of ``gohari_calibrate``."""
    return (share.epsilon, share.delta, lam, n_total, d)


def gohari_releases(epsilon_hat: float, delta: float, domain_sizes: Sequence[int], *, n_total: float,
                    lam: float = GOHARI_LAM, cache: dict | None = None) -> list[GohariGuarantee]:
    """Gohari et al.'s calibration of every release, by basic composition.

    Parameters
    ----------
    epsilon_hat, delta : float
        Target of the whole model, :math:`\\hat\\varepsilon > 0` and
        :math:`\\delta \\in (0, 1)`.
    domain_sizes : sequence of int
        :math:`d_i \\ge 2`, the length of the vectors of release :math:`i`.
    n_total : float
        The total passed to Gohari et al.'s formulas.
    lam : float, default :data:`GOHARI_LAM`
        Order in :math:`\\alpha = 1 + 4(\\lambda - 1) r`.
    cache : dict, optional
        Memo of ``gohari_calibrate`` results (or the ``ValueError`` it raised),
        keyed by its arguments; pass one dict to share calibrations across calls.

    Returns
    -------
    list of GohariGuarantee
        One per release.

    Raises
    ------
    ValueError
        On invalid arguments, or when some release cannot reach its share (the
        message says which domain size and why).

    Notes
    -----
    Each of the :math:`m` releases gets the equal share
    ``ApproximateDP(epsilon_hat, delta).split(m)``, :math:`(\\hat\\varepsilon/m,
    \\delta/m)`, so that the model is :math:`(\\hat\\varepsilon, \\delta)`-DP by
    basic composition of approximate DP -- not the average of per-release
    epsilons that the author's code used. One
    :func:`lib.mechanisms.gohari.gohari_calibrate` call per distinct domain size.

    Gohari et al.'s guarantee is for one vector with a known, fixed total
    ``n_total``. The rows of a naive Bayes or Bayesian-network table have
    private totals (class or parent-configuration counts), so a caller with a
    table passes its flattened size ``rows * d`` as the domain size and the
    public number of records as ``n_total``, as :class:`GohariMechanism` does
    (its notes give the proof). Passing the row length ``d`` with
    ``n_total = N``, as the author's code did, gives a guarantee that is not
    proven.
    """
    share, sizes, n_total, lam = _setting(epsilon_hat, delta, domain_sizes, n_total, lam)
    cache = {} if cache is None else cache
    out = {}
    for d in sorted(set(sizes)):
        key = _key(share, lam, n_total, d)
        if key not in cache:
            try:
                cache[key] = gohari_calibrate(share.epsilon, share.delta, lam=lam, n_total=n_total, d=d)
            except ValueError as exc:
                cache[key] = exc
        if isinstance(cache[key], ValueError):
            raise ValueError(f"Gohari et al.'s guarantee cannot reach ({share.epsilon:.4g}, {share.delta:.3g}) "
                             f"for a release with d = {d}: {cache[key]}") from cache[key]
        out[d] = cache[key]
    return [out[d] for d in sizes]


def gohari_prefill(epsilon_hats: ArrayLike, delta: float, domain_sizes: Sequence[int], *, n_total: float,
                   lam: float = GOHARI_LAM, cache: dict) -> dict:
    """Solve the calibrations :func:`gohari_releases` needs at every target together, into ``cache``.

    Parameters
    ----------
    epsilon_hats : array_like
        Targets :math:`\\hat\\varepsilon_i > 0` of the whole model.
    delta, domain_sizes, n_total, lam
        As in :func:`gohari_releases`.
    cache : dict
        The memo :func:`gohari_releases` reads; entries already in it are kept.

    Returns
    -------
    dict
        ``cache``, with an entry (a :class:`lib.mechanisms.gohari.GohariGuarantee`
        or the ``ValueError`` raised) for each target and distinct domain size.

    Notes
    -----
    The entries are those :func:`gohari_releases` would compute, found by one
    lockstep search (:func:`lib.mechanisms.gohari.batch.gohari_calibrate_many`)
    with the same results; :func:`gohari_releases` then reads them from the cache.
    """
    targets = np.atleast_1d(validation.positive(epsilon_hats, "epsilon_hats")).ravel()
    keys = []
    for e in targets:
        share, sizes, n_total_, lam_ = _setting(e, delta, domain_sizes, n_total, lam)
        for d in sorted(set(sizes)):
            key = _key(share, lam_, n_total_, d)
            if key not in cache and key not in keys:
                keys.append(key)
    if keys:
        found = gohari_calibrate_many([k[0] for k in keys], keys[0][1], lam=keys[0][2], n_total=keys[0][3],
                                      d=[k[4] for k in keys])
        for key, res in zip(keys, found):
            cache[key] = res
    return cache


class GohariMechanism(DirichletMechanism):
    """Algorithm 1's release with :math:`r` from Gohari et al.'s :math:`(\\hat\\varepsilon, \\delta)` guarantee.

    Parameters
    ----------
    r, alpha : float
        Scale and pseudo-count of the release :math:`\\mathrm{Dirichlet}(r f + \\alpha)`,
        both in :math:`(0, \\infty)`.
    guarantee : ApproximateDP
        The :math:`(\\hat\\varepsilon, \\delta)` guarantee of one release at ``r``.

    Raises
    ------
    ValueError
        If ``r`` or ``alpha`` is not positive and finite, or ``guarantee`` is
        not an :class:`lib.privacy.guarantees.ApproximateDP`.

    Notes
    -----
    :math:`\\mathrm{Dirichlet}(r f + \\alpha)` with :math:`\\alpha = 1 + 4(\\lambda - 1) r`
    at :math:`\\lambda` = :data:`GOHARI_LAM`, and :math:`r` from
    :func:`lib.mechanisms.gohari.gohari_calibrate` at :math:`(\\hat\\varepsilon/m, \\delta/m)`
    per release (basic composition, :func:`gohari_releases`). Built by
    ``GohariMechanism.calibrate(ApproximateDP(epsilon_hat, delta), spec)``; it
    meets no other type of target.

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
    release inherits the guarantee by post-processing. Calibrating with ``d``
    (the row length) and ``n_total = N``, as the author's code did, gives a
    guarantee that is not proven for private row totals; the flattened size
    costs a few percent of ``r`` (about 3 % for a 10 x 17 table at N = 3934).

    References
    ----------
    Gohari, P., Wu, B., Hawkins, C., Hale, M. and Topcu, U. (2021). Differential
    privacy on the unit simplex via the Dirichlet mechanism. IEEE Transactions
    on Information Forensics and Security 16.

    Examples
    --------
    >>> from lib.mechanisms.protocol import ApproximateDP, ReleaseSpec
    >>> cal = GohariMechanism.calibrate(ApproximateDP(1.0, 1e-5), ReleaseSpec(((1, 2), (2, 3)), 1000))
    >>> cal.releases[0].guarantee, cal.guarantee
    (ApproximateDP(epsilon=0.5, delta=5e-06), ApproximateDP(epsilon=1.0, delta=1e-05))
    """

    name, label = "gohari", "Gohari et al."
    notions = (ApproximateDP,)

    def __init__(self, r: float, alpha: float, guarantee: Guarantee) -> None:
        if not isinstance(guarantee, ApproximateDP):
            raise ValueError(f"guarantee must be an ApproximateDP; got {guarantee!r}")
        self.epsilon = self.lam = self.l2_sq = self.linf = None
        self.r = validation.scalar(validation.positive(r, "r"), "r")
        self.alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
        self._guarantee = guarantee

    def __repr__(self) -> str:
        return f"GohariMechanism(r={self.r:.6g}, alpha={self.alpha:.6g}, guarantee={self._guarantee!r})"

    @property
    def guarantee(self) -> Guarantee:
        """:math:`(\\hat\\varepsilon/m, \\delta/m)`-DP per release, as calibrated."""
        return self._guarantee

    @staticmethod
    def flat_sizes(spec: ReleaseSpec) -> list[int]:
        """The number of cells ``rows * d`` of each release of ``spec`` (one flattened histogram each)."""
        return [int(k) * int(d) for k, d in spec.shapes]

    @classmethod
    def _calibrate_approximate(cls, target, spec, cache):
        """One :math:`r` per distinct flattened size ``rows * d``; not attained when no :math:`r` reaches the target.

        Each release is ``target.split(m)``-DP as one histogram of ``rows * d``
        cells with total ``spec.n_total`` (class notes); the model meets
        ``target`` by basic composition. ``parameters["r"]`` and ``["alpha"]``
        are keyed by the flattened size.
        """
        # A (rows, d) table is one histogram of rows * d cells with the public
        # total N (see the class notes): its guarantee is proven with private row totals.
        sizes = cls.flat_sizes(spec)
        # Bad arguments raise here; only an unreachable target is "not attained".
        epsilon_hat, delta = validation.dp_target(target.epsilon, target.delta)
        share = ApproximateDP(epsilon_hat, delta).split(spec.n_releases)
        try:
            found = gohari_releases(epsilon_hat, delta, sizes, n_total=spec.n_total, lam=GOHARI_LAM, cache=cache)
        except ValueError as exc:
            return ModelCalibration(cls.name, False, (), {"reason": str(exc)})
        by_size = dict(zip(sizes, found))
        objects = {d: cls(g.r, g.alpha, share) for d, g in by_size.items()}
        params = {"r": {d: float(g.r) for d, g in by_size.items()},
                  "alpha": {d: float(g.alpha) for d, g in by_size.items()}}
        return ModelCalibration(cls.name, True, tuple(objects[d] for d in sizes), params, target)

    @classmethod
    def _calibrate_approximate_many(cls, targets, spec, cache):
        """:meth:`_calibrate_approximate` at every target, Gohari et al.'s searches of all targets run together.

        The searches of every target and flattened size are solved in lockstep
        into ``cache`` (:func:`gohari_prefill`, one lockstep search per
        distinct :math:`\\delta`, the same results), then each target is
        calibrated by :meth:`_calibrate_approximate`, which finds them there.
        """
        cache = {} if cache is None else cache
        if cls._calibrate_approximate.__func__ is GohariMechanism._calibrate_approximate.__func__:
            for delta in dict.fromkeys(t.delta for t in targets):
                try:  # what cannot be prefilled is met (and reported) by _calibrate_approximate itself
                    gohari_prefill([t.epsilon for t in targets if t.delta == delta], delta, cls.flat_sizes(spec),
                                   n_total=spec.n_total, lam=GOHARI_LAM, cache=cache)
                except ValueError:
                    pass
        return [cls._calibrate_approximate(t, spec, cache) for t in targets]
