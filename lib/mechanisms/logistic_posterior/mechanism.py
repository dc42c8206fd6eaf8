"""The logistic-regression samplers as mechanisms: their privacy statements and calibrations.

Theorems 16 and 17 of Geumlek et al. (2017) (:func:`rdp_epsilon`), the calibrations
of Algorithms 4 and 5 (:func:`concentrated_beta`, :func:`diffuse_rho`), One Posterior
Sample's pure DP (:func:`ops_epsilon`, :func:`ops_rho`), the RDP slope that meets an
:math:`(\\hat\\varepsilon, \\delta)` target (:func:`rdp_slope_for_dp`), and the classes
:class:`ConcentratedLogistic`, :class:`DiffuseLogistic`, :class:`OPSLogistic` and
:class:`LogisticPosterior`, whose ``release`` draws through
:func:`lib.mechanisms.logistic_posterior.sampling.sample`.
"""

from __future__ import annotations

import functools
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.privacy.guarantees import Guarantee
from lib.validation import SeedLike
from lib.mechanisms.protocol import Mechanism, NotPrivate, PureDP, RenyiDP, ZeroConcentratedDP, get
from lib.privacy.accounting import rdp_to_dp
from lib.mechanisms.logistic_posterior.sampling import sample, Settings


#: The original prior of Section 5.2, :math:`\beta_0 = 10^{-3}`.
BETA0 = 1e-3
#: :math:`B` of Assumption 1 (3) for binary regression: labels in {0, 1}, means in (0, 1).
B_LOGISTIC = 1.0


def _pos(value, name):
    return validation.positive(value, name)


def _scalar(value, name):
    return validation.scalar(validation.positive(value, name), name)


def _level(value, what, names, *, high=np.inf):
    """``value`` if every entry is finite, positive and at most ``high``; else a ValueError.

    The statements below are products and quotients of their arguments: at
    extreme arguments they overflow to ``inf`` or underflow to 0, and a level
    of 0 (perfect privacy) or ``inf`` is never a true statement here.
    """
    value = np.asarray(value)
    if not np.all((value > 0) & (value <= high) & np.isfinite(value)):
        raise ValueError(f"{what} overflows or underflows at these arguments ({names}): the result is not a "
                         "positive finite number")
    return value[()]


# ----------------------------------------------------------------------------- privacy statements


def rdp_epsilon(lam: ArrayLike, n: ArrayLike, beta: ArrayLike, *, rho: ArrayLike = 1.0, c: float = 1.0,
                B: float = B_LOGISTIC) -> np.ndarray | float:
    """RDP level of one exact posterior sample, Theorems 16 and 17.

    :math:`\\varepsilon(\\lambda) = 2c^2B^2\\rho^2\\lambda/(n\\beta)` for every order
    :math:`\\lambda \\ge 1`: Theorem 16 (:math:`\\rho = 1`) and, with the tempered
    likelihood of Algorithm 5, Theorem 17 (every per-record gradient bound is
    multiplied by :math:`\\rho`).

    Parameters
    ----------
    lam : array_like
        Order, :math:`[1, \\infty)`.
    n : array_like
        Number of training rows (public), :math:`(0, \\infty)`.
    beta : array_like
        Prior precision per row, :math:`(0, \\infty)`.
    rho : array_like
        Likelihood temperature, :math:`(0, 1]`.
    c, B : float
        The bounds of Assumption 1.

    Examples
    --------
    >>> float(rdp_epsilon(10.0, 1000, 1e-3))
    20.0
    """
    lam = validation.order(lam, "lam")
    rho = validation.in_range(rho, "rho", 0.0, 1.0, open_low=True, open_high=False)
    with np.errstate(over="ignore", under="ignore"):
        out = 2 * _pos(c, "c") ** 2 * _pos(B, "B") ** 2 * rho**2 * lam / (_pos(n, "n") * _pos(beta, "beta"))
    return _level(out, "the RDP level", "lam, n, beta, rho, c, B")


def concentrated_beta(epsilon: ArrayLike, lam: ArrayLike, n: ArrayLike, beta0: ArrayLike = BETA0, *, c: float = 1.0,
                      B: float = B_LOGISTIC) -> np.ndarray | float:
    """Line 1 of Algorithm 4: :math:`\\beta = \\max\\{2c^2B^2\\lambda/(n\\varepsilon), \\beta_0\\}`.

    Examples
    --------
    >>> float(concentrated_beta(1.0, 10.0, 1000))
    0.02
    """
    eps = _pos(epsilon, "epsilon")
    lam = validation.order(lam, "lam")
    with np.errstate(over="ignore", under="ignore"):
        out = np.maximum(2 * _pos(c, "c") ** 2 * _pos(B, "B") ** 2 * lam / (_pos(n, "n") * eps),
                         _pos(beta0, "beta0"))
    return _level(out, "beta", "epsilon, lam, n, beta0, c, B")


def diffuse_rho(epsilon: ArrayLike, lam: ArrayLike, n: ArrayLike, beta: ArrayLike = BETA0, *, c: float = 1.0,
                B: float = B_LOGISTIC) -> np.ndarray | float:
    """Line 1 of Algorithm 5: :math:`\\rho = \\min\\{1, \\sqrt{n\\beta\\varepsilon/(2c^2B^2\\lambda)}\\}`.

    Examples
    --------
    >>> float(diffuse_rho(1.0, 10.0, 1000, 0.02))
    1.0
    >>> float(diffuse_rho(1.0, 10.0, 1000, 0.005))
    0.5
    """
    eps = _pos(epsilon, "epsilon")
    lam = validation.order(lam, "lam")
    with np.errstate(over="ignore", under="ignore"):
        ratio = _pos(n, "n") * _pos(beta, "beta") * eps / (2 * _pos(c, "c") ** 2 * _pos(B, "B") ** 2 * lam)
        out = np.minimum(1.0, np.sqrt(ratio))
    return _level(out, "rho", "epsilon, lam, n, beta, c, B", high=1.0)


def ops_radius(beta: ArrayLike, c: float = 1.0) -> np.ndarray | float:
    """Radius :math:`c/\\beta` of the truncated prior of OPS (Section 5.2).

    The mode of :math:`p_{\\beta,\\rho}` solves :math:`n\\beta w = \\rho\\sum_i
    (y_i - \\sigma(w^\\top x_i))x_i`, so :math:`\\|\\hat w\\| \\le \\rho c/\\beta \\le c/\\beta`.
    """
    with np.errstate(over="ignore", under="ignore"):
        out = _pos(c, "c") / _pos(beta, "beta")
    return _level(out, "the radius", "beta, c")


def ops_epsilon(beta: ArrayLike, rho: ArrayLike = 1.0, *, c: float = 1.0, factor: float = 4.0) -> np.ndarray | float:
    """Pure DP of OPS with the prior truncated to :math:`\\|w\\| \\le c/\\beta`.

    ``factor`` :math:`\\times c^2\\rho/\\beta`. Section 5.2 states ``factor = 4``
    (Wang et al.'s :math:`4B` with :math:`\\sup|\\log p| \\le c^2/\\beta`, the
    :math:`\\log 2` of the logistic loss ignored). For logistic regression the
    log-likelihood of one record spans exactly :math:`\\|w\\|c \\le c^2/\\beta`
    over the labels and rows, so the privacy loss is at most
    :math:`2c^2\\rho/\\beta`: ``factor = 2`` is also a valid (tighter) statement.
    """
    rho = validation.in_range(rho, "rho", 0.0, 1.0, open_low=True, open_high=False)
    factor = _pos(factor, "factor")
    with np.errstate(over="ignore", under="ignore"):
        out = factor * _pos(c, "c") ** 2 * rho / _pos(beta, "beta")
    return _level(out, "the pure DP level", "beta, rho, c, factor")


def ops_rho(epsilon: ArrayLike, beta: ArrayLike = BETA0, *, c: float = 1.0, factor: float = 4.0) -> np.ndarray | float:
    """The temperature at which OPS (prior :math:`\\beta`, radius :math:`c/\\beta`) is pure ``epsilon``-DP."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.minimum(1.0, _pos(epsilon, "epsilon") * _pos(beta, "beta")
                         / (_pos(factor, "factor") * _pos(c, "c") ** 2))
    return _level(out, "rho", "epsilon, beta, c, factor", high=1.0)


def dp_of_rdp_slope(alpha: float, delta: float, *, lam_max: float = 1e8) -> float:
    """:math:`\\hat\\varepsilon` of a mechanism that is :math:`(\\lambda, \\alpha\\lambda)`-RDP at every order.

    Eq. (14) of the Dirichlet paper (:func:`lib.privacy.accounting.rdp_to_dp`),
    minimised over :math:`\\lambda > 1` (a log-spaced grid, then a bounded
    search around its best point).
    """
    a = validation.scalar(_pos(alpha, "alpha"), "alpha")
    d = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    lam_max = validation.scalar(validation.order(lam_max, "lam_max", strict=True), "lam_max")
    if not np.isfinite(a * (1 + lam_max)):
        raise ValueError(f"alpha * (1 + lam_max) overflows: alpha must be at most "
                         f"{np.finfo(float).max / (1 + lam_max):.3g} with lam_max = {lam_max:g}")

    def f(t):
        lam = 1 + np.exp(t)
        return rdp_to_dp(a * lam, lam, d)

    grid = np.linspace(-12, np.log(lam_max), 400)
    vals = f(grid)
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    from scipy import optimize  # here, not at import: scipy.optimize costs every `import lib` ~0.1 s

    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return float(min(res.fun, vals[i]))


def rdp_slope_for_dp(epsilon_hat: float, delta: float) -> float:
    """The largest slope :math:`\\alpha` whose RDP curve :math:`\\alpha\\lambda` gives :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Inverts :func:`dp_of_rdp_slope` (increasing in :math:`\\alpha`) by a root search in
    :math:`\\log\\alpha`. Algorithms 4 and 5 then run at any
    :math:`(\\lambda, \\alpha\\lambda)`, e.g. :math:`\\lambda = 1, \\varepsilon = \\alpha`.

    Examples
    --------
    >>> a = rdp_slope_for_dp(1.0, 1e-5)
    >>> round(dp_of_rdp_slope(a, 1e-5), 9)
    1.0
    """
    eps = validation.scalar(_pos(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    d = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    return _rdp_slope_for_dp(float(eps), float(d))


@functools.lru_cache(maxsize=256)
def _rdp_slope_for_dp(eps, d):
    """:func:`rdp_slope_for_dp` of checked floats, remembered (a pure function of its arguments)."""
    g = lambda t: dp_of_rdp_slope(np.exp(t), d) - eps  # noqa: E731
    # alpha = e^hi gives eps_hat >= alpha > eps_hat; capped where alpha * (1 + lam_max) still fits a double
    lo, hi = -40.0, min(np.log(eps) + 1, np.log(np.finfo(float).max / (1 + 1e8)) - 1)
    if g(lo) >= 0:
        raise ValueError(f"epsilon_hat={eps:g} is unreachable at delta={d:g} by an RDP curve alpha*lam")
    if not g(hi) > 0:
        raise ValueError(f"epsilon_hat must be below {dp_of_rdp_slope(np.exp(hi), d):.3g} (at delta={d:g}): "
                         f"a larger level needs a slope beyond the double range; got {eps:g}")
    return float(np.exp(validation.brentq(g, lo, hi, f"the RDP slope of epsilon_hat = {eps:g} at delta = {d:g}",
                                         xtol=1e-13)))


def settings(sampler: str | type[LogisticSampler], epsilon: ArrayLike, lam: ArrayLike, n: float, beta0: float = BETA0,
             *, c: float = 1.0, ops_factor: float | None = None) -> Settings:
    """The posteriors a sampler class samples at targets :math:`(\\lambda, \\varepsilon)`, broadcast.

    Parameters
    ----------
    sampler : type or str
        A :class:`LogisticSampler` class or its registry name.
    epsilon, lam, n, beta0, c, ops_factor
        As :meth:`LogisticSampler.settings`.

    Returns
    -------
    Settings

    Examples
    --------
    >>> float(settings(ConcentratedLogistic, 1.0, 10.0, 1000).beta[0])
    0.02
    """
    try:
        cls = sampler if isinstance(sampler, type) else get(sampler)
    except ValueError:
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, LogisticSampler)):
        raise ValueError(f"sampler must be a LogisticSampler class or its registry name; got {sampler!r:.60}")
    return cls.settings(epsilon, lam, n, beta0, c=c, ops_factor=ops_factor)


def _linear_curve(slope, lam):
    """:math:`\\varepsilon(\\lambda) = \\text{slope}\\cdot\\lambda` (a picklable RDP curve)."""
    return slope * lam


class LogisticSampler(Mechanism):
    """Base class of the logistic-regression posterior samplers: one weight vector per release.

    Parameters
    ----------
    target : Guarantee
        What the released sample must meet: :class:`~lib.privacy.guarantees.RenyiDP`
        (at its order), :class:`~lib.privacy.guarantees.ZeroConcentratedDP`
        (:math:`\\rho`: the level :math:`\\rho\\lambda` at every order), or
        what the class accepts besides (:class:`OPSLogistic`: :class:`~lib.privacy.guarantees.PureDP`;
        :class:`LogisticPosterior`: :class:`~lib.privacy.guarantees.NotPrivate`).
    n : int
        The public number of training rows.
    beta0 : float
        The original prior precision per row, :math:`\\beta_0 > 0`.
    c : float
        The bound :math:`\\|x_i\\| \\le c` of Assumption 1.
    n_sweeps, mala_steps : int
        The sampler's sweeps per chain and MALA steps per sweep (:func:`sample`).

    Raises
    ------
    ValueError
        If ``target`` is of a type the class cannot meet, or an argument is out of range.

    Notes
    -----
    :attr:`guarantee` is that of one *exact* sample; :meth:`release` draws
    with an MCMC sampler, which is approximate (chapter 11).
    """

    output: ClassVar[str] = "weights"
    notions: ClassVar[tuple] = ()
    #: The name of the method in the tables of Figure 3 (the ``method`` column of :func:`lib.experiments.glm.run_grid`).
    short: ClassVar[str] = ""
    #: Target types the class accepts.
    targets: ClassVar[tuple] = (RenyiDP, ZeroConcentratedDP)

    def __init__(self, target: Guarantee, n: float, *, beta0: float = BETA0, c: float = 1.0, n_sweeps: int = 6,
                 mala_steps: int = 0) -> None:
        if not isinstance(target, self.targets):
            raise ValueError(f"{type(self).__name__} meets targets of type "
                             f"{' or '.join(t.__name__ for t in self.targets)}; got {target!r}")
        self.target = target
        if isinstance(target, ZeroConcentratedDP):
            epsilon, lam = target.rho, 1.0     # rho * lam at every order: the ratio lam / eps = 1 / rho
        elif isinstance(target, NotPrivate):
            epsilon, lam = 1.0, 1.0
        else:
            epsilon, lam = target.epsilon, getattr(target, "lam", 1.0)
        self.n, self.beta0, self.c = _scalar(n, "n"), _scalar(beta0, "beta0"), _scalar(c, "c")
        st = self.settings(epsilon, lam, self.n, self.beta0, c=self.c)
        self.beta, self.rho, self.radius = float(st.beta[0]), float(st.rho[0]), float(st.radius[0])
        self.n_sweeps = validation.integer(n_sweeps, "n_sweeps")
        self.mala_steps = validation.integer(mala_steps, "mala_steps", 0)

    def __repr__(self):
        return f"{type(self).__name__}({self.target!r}, n={self.n:g}, beta={self.beta:g}, rho={self.rho:g})"

    @classmethod
    def settings(cls, epsilon: ArrayLike, lam: ArrayLike, n: float, beta0: float = BETA0, *, c: float = 1.0,
                 ops_factor: float | None = None) -> Settings:
        """The posterior the class samples at each target :math:`(\\lambda, \\varepsilon)`, broadcast.

        Parameters
        ----------
        epsilon, lam : array_like
            The targets: levels in :math:`(0, \\infty)`, orders in :math:`[1, \\infty)`.
        n : float
            Public number of training rows.
        beta0 : float
            The original prior precision per row.
        c : float
            The bound of Assumption 1.
        ops_factor : float, optional
            OPS's constant (:func:`ops_epsilon`); None is the class's ``factor``.
            Other classes ignore it.

        Returns
        -------
        Settings
            One entry per target.
        """
        n, beta0, c = (_scalar(v, name) for v, name in ((n, "n"), (beta0, "beta0"), (c, "c")))
        eps, lam = validation.broadcast(epsilon=_pos(epsilon, "epsilon"), lam=validation.order(lam, "lam"))
        eps, lam = eps.ravel(), lam.ravel()
        beta, rho, radius = cls._posterior(eps, lam, n, beta0, c, ops_factor)
        ones = np.ones_like(eps)
        return Settings(beta * ones, rho * ones, radius * ones)

    @classmethod
    def _posterior(cls, eps, lam, n, beta0, c, ops_factor):
        """``(beta, rho, radius)`` of the sampler at levels ``eps`` and orders ``lam`` (each subclass its own)."""
        raise TypeError(f"{cls.__name__} must define _posterior(eps, lam, n, beta0, c, ops_factor)")

    @property
    def setting(self) -> Settings:
        """This object's posterior, as a :class:`Settings` of one entry."""
        return Settings(np.array([self.beta]), np.array([self.rho]), np.array([self.radius]))

    @property
    def guarantee(self) -> Guarantee:
        """Theorems 16 and 17: :math:`\\varepsilon(\\lambda) = 2c^2B^2\\rho^2\\lambda/(n\\beta)` at every order.

        A :class:`~lib.privacy.guarantees.RenyiDP` at the target's order with
        this curve, or for a :class:`~lib.privacy.guarantees.ZeroConcentratedDP`
        target the :math:`\\rho`-zCDP of the same curve.
        """
        slope = float(rdp_epsilon(1.0, self.n, self.beta, rho=self.rho, c=self.c))
        if isinstance(self.target, ZeroConcentratedDP):
            return ZeroConcentratedDP(slope)
        return RenyiDP(self.target.lam, slope * self.target.lam, curve=functools.partial(_linear_curve, slope))

    def release(self, X: ArrayLike, y: ArrayLike, rng: SeedLike = None, size: int | None = None) -> np.ndarray:
        """Weight vectors from this posterior: shape ``(d,)``, or ``(size, d)`` for ``size`` chains.

        Parameters
        ----------
        X : ndarray, shape (n, d)
            Rows of norm at most ``c``; ``n`` must be the object's.
        y : ndarray of {0, 1}, shape (n,)
        rng : numpy.random.Generator, int or None
        size : int, optional
            Independent chains (releases); None: one, without the leading axis.
        """
        rows = np.shape(X)[0] if np.ndim(X) == 2 else -1
        if rows != self.n:
            raise ValueError(f"X must have the public number of rows n = {self.n:g} the object was calibrated "
                             f"for; got shape {np.shape(X)}")
        k = 1 if size is None else validation.integer(size, "size")
        w = sample(X, y, self.setting, k, self.n_sweeps, rng, mala_steps=self.mala_steps, c=self.c).w[0]
        return w[0] if size is None else w


class ConcentratedLogistic(LogisticSampler):
    """Algorithm 4: the concentrated posterior, :math:`\\beta = \\max\\{2c^2B^2\\lambda/(n\\varepsilon), \\beta_0\\}`, :math:`\\rho = 1`.

    Examples
    --------
    >>> from lib.privacy.guarantees import RenyiDP
    >>> mech = ConcentratedLogistic(RenyiDP(10.0, 1.0), 1000)
    >>> mech.beta, mech.guarantee
    (0.02, RenyiDP(lam=10.0, epsilon=1.0))
    """

    name = "lr_concentrated"
    label = "Concentrated posterior (LR)"
    short = "concentrated"

    @classmethod
    def _posterior(cls, eps, lam, n, beta0, c, ops_factor):
        return concentrated_beta(eps, lam, n, beta0, c=c), 1.0, np.inf


class DiffuseLogistic(LogisticSampler):
    """Algorithm 5: the diffuse posterior, :math:`\\beta_0` and :math:`\\rho = \\min\\{1, \\sqrt{n\\beta_0\\varepsilon/(2c^2B^2\\lambda)}\\}`.

    Examples
    --------
    >>> from lib.privacy.guarantees import RenyiDP
    >>> mech = DiffuseLogistic(RenyiDP(10.0, 1.0), 1000, beta0=0.005)
    >>> mech.rho, mech.guarantee
    (0.5, RenyiDP(lam=10.0, epsilon=1.0))
    """

    name = "lr_diffuse"
    label = "Diffused posterior (LR)"
    short = "diffuse"

    @classmethod
    def _posterior(cls, eps, lam, n, beta0, c, ops_factor):
        return beta0, diffuse_rho(eps, lam, n, beta0, c=c), np.inf


class OPSLogistic(LogisticSampler):
    """OPS: prior :math:`\\beta_0` truncated to radius :math:`c/\\beta_0`, at the temperature of pure :math:`\\varepsilon`-DP.

    The temperature is :func:`ops_rho`; the statement is pure
    ``factor`` :math:`\\cdot c^2\\rho/\\beta_0`-DP (:func:`ops_epsilon`; Section 5.2
    states ``factor = 4``, Wang et al.'s :math:`4B`), so a
    :math:`(\\lambda, \\varepsilon)`-RDP target is met at every order (``lam``
    is not used) and a :class:`~lib.privacy.guarantees.PureDP` target too.
    ``OPSLogistic.configured(factor=2.0)`` is the tighter constant.

    Examples
    --------
    >>> from lib.privacy.guarantees import PureDP
    >>> OPSLogistic(PureDP(1e-3), 1000).guarantee
    PureDP(epsilon=0.001)
    """

    name = "lr_ops"
    label = "OPS (LR)"
    short = "ops"
    targets = (RenyiDP, ZeroConcentratedDP, PureDP)
    #: The constant of the pure DP statement (:func:`ops_epsilon`).
    factor = 4.0

    @classmethod
    def _posterior(cls, eps, lam, n, beta0, c, ops_factor):
        factor = cls.factor if ops_factor is None else _scalar(ops_factor, "ops_factor")
        return beta0, ops_rho(eps, beta0, c=c, factor=factor), ops_radius(beta0, c)

    @property
    def guarantee(self) -> Guarantee:
        """Pure DP at :func:`ops_epsilon` (Wang et al. 2015, Theorem 1, as Section 5.2 states it)."""
        return PureDP(float(ops_epsilon(self.beta, self.rho, c=self.c, factor=self.factor)))


class LogisticPosterior(LogisticSampler):
    """The posterior with the original prior :math:`\\beta_0` and :math:`\\rho = 1`: not private.

    Examples
    --------
    >>> from lib.privacy.guarantees import NotPrivate
    >>> LogisticPosterior(NotPrivate(), 1000).guarantee
    NotPrivate()
    """

    name = "lr_posterior"
    label = "True posterior (LR)"
    short = "posterior"
    private = False
    targets = (NotPrivate, RenyiDP, ZeroConcentratedDP, PureDP)

    @classmethod
    def _posterior(cls, eps, lam, n, beta0, c, ops_factor):
        return beta0, 1.0, np.inf

    @property
    def guarantee(self) -> Guarantee:
        return NotPrivate()


#: The samplers of Figure 3, in its order.
SAMPLERS = (ConcentratedLogistic, DiffuseLogistic, OPSLogistic, LogisticPosterior)
