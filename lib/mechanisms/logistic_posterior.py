"""Private Bayesian logistic regression by posterior sampling: the samplers and their guarantees.

The model (Geumlek, Song and Chaudhuri 2017, Section 4.1, eq. (6)): labels
:math:`y_i \\in \\{0, 1\\}`, rows :math:`\\|x_i\\|_2 \\le c`, the logistic
likelihood, a Gaussian prior :math:`N(0, (n\\beta)^{-1} I)`, and the likelihood
raised to a power :math:`\\rho \\in (0, 1]`:

.. math::
    p_{\\beta,\\rho}(w \\mid D) \\propto \\exp\\Big(-\\frac{n\\beta}{2}\\|w\\|^2
    + \\rho\\sum_{i=1}^n \\log p(y_i \\mid w, x_i)\\Big).

A mechanism here releases one weight vector :math:`w \\in \\mathbb{R}^d`, a
sample of such a posterior; it is not a histogram mechanism, and
:class:`LogisticSampler` states the contract it follows instead of the
protocol's "counts in, simplex point out":

* ``release(X, y, rng, size=None)``: a design matrix of a public number of
  rows :math:`n`, each of norm at most :math:`c`, and labels in
  :math:`\\{0, 1\\}` in; weight vectors of shape ``(size, d)`` out (one per
  chain of the sampler);
* ``guarantee``: what one exact sample meets for replace-one neighbours;
* ``output = "weights"`` (a histogram mechanism has ``"distribution"``) and
  ``notions = ()``: an object is calibrated from a target and :math:`n`
  (:meth:`LogisticSampler.settings`), not by a histogram model.

The classes (registry names in brackets): :class:`ConcentratedLogistic`
(``"lr_concentrated"``, Algorithm 4), :class:`DiffuseLogistic`
(``"lr_diffuse"``, Algorithm 5), :class:`OPSLogistic` (``"lr_ops"``, One
Posterior Sample of Wang, Fienberg and Smola 2015, as Section 5.2 runs it)
and :class:`LogisticPosterior` (``"lr_posterior"``, the posterior with the
original prior; not private).

Privacy statements (replace-one neighbours, :math:`n` public):

* Theorem 16 / 17: one exact sample is :math:`(\\lambda, 2c^2B^2\\rho^2\\lambda/(n\\beta))`-RDP
  for every :math:`\\lambda \\ge 1` (:func:`rdp_epsilon`; :math:`B = 1` for logistic
  regression).
* Algorithm 4 (concentrated posterior) meets :math:`(\\lambda, \\varepsilon)` with
  :math:`\\beta = \\max\\{2c^2B^2\\lambda/(n\\varepsilon), \\beta_0\\}`
  (:func:`concentrated_beta`); Algorithm 5 (diffuse posterior) with
  :math:`\\rho = \\min\\{1, \\sqrt{n\\beta\\varepsilon/(2c^2B^2\\lambda)}\\}`
  (:func:`diffuse_rho`). Both depend on :math:`(\\lambda, \\varepsilon)` only through
  :math:`\\lambda/\\varepsilon`.
* OPS with the prior truncated to the ball of radius :math:`c/\\beta`: pure
  :math:`4c^2\\rho/\\beta`-DP as Section 5.2 states it (:func:`ops_epsilon`).
* :func:`rdp_slope_for_dp`: the slope :math:`\\alpha` of an RDP curve
  :math:`\\varepsilon(\\lambda) = \\alpha\\lambda` that meets
  :math:`(\\hat\\varepsilon, \\delta)`-DP through eq. (14) of the Dirichlet paper at
  the best order, to compare all methods at one :math:`(\\hat\\varepsilon, \\delta)`.

The sampler (:func:`sample`) draws many chains for many settings at once:
independence Metropolis-Hastings with the Laplace approximation
:math:`N(\\hat w, H^{-1})` at the mode as proposal, optionally interleaved
with (or replaced by) MALA steps preconditioned by :math:`H^{-1}`. It is
approximate: the theorems are about exact samples (see chapter 11).

References
----------
Geumlek, J., Song, S. and Chaudhuri, K. (2017). Renyi differential privacy
mechanisms for posterior sampling. NeurIPS.
Wang, Y.-X., Fienberg, S. E. and Smola, A. (2015). Privacy for free:
posterior sampling and stochastic gradient Monte Carlo. ICML.
"""

from __future__ import annotations

import functools
from typing import ClassVar, NamedTuple

import numpy as np
from scipy import linalg, special

from lib import validation
from lib.mechanisms.protocol import Mechanism, NotPrivate, PureDP, RenyiDP, ZeroConcentratedDP, get, register
from lib.privacy.accounting import rdp_to_dp

#: The original prior of Section 5.2, :math:`\beta_0 = 10^{-3}`.
BETA0 = 1e-3
#: :math:`B` of Assumption 1 (3) for binary regression: labels in {0, 1}, means in (0, 1).
B_LOGISTIC = 1.0

#: Largest number of margins (rows x settings x chains) that :func:`sample` holds at once
#: (several float64 arrays of this size; the paper's full run of chapter 11 needs 1.6e8).
MAX_MARGINS = 2 * 10**8
#: Largest amount of work of :func:`sample`: margins x sweeps x (kernel steps per sweep).
MAX_SAMPLER_WORK = 10**11
#: Largest number of Newton iterations of :func:`mode` (Newton converges in tens).
MAX_NEWTON = 10**4
#: Relative slack on :math:`\|x_i\| \le c` in :func:`sample`: the rounding of a normalisation.
NORM_SLACK = 1e-12


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


def rdp_epsilon(lam, n, beta, *, rho=1.0, c=1.0, B=B_LOGISTIC):
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


def concentrated_beta(epsilon, lam, n, beta0=BETA0, *, c=1.0, B=B_LOGISTIC):
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


def diffuse_rho(epsilon, lam, n, beta=BETA0, *, c=1.0, B=B_LOGISTIC):
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


def ops_radius(beta, c=1.0):
    """Radius :math:`c/\\beta` of the truncated prior of OPS (Section 5.2).

    The mode of :math:`p_{\\beta,\\rho}` solves :math:`n\\beta w = \\rho\\sum_i
    (y_i - \\sigma(w^\\top x_i))x_i`, so :math:`\\|\\hat w\\| \\le \\rho c/\\beta \\le c/\\beta`.
    """
    with np.errstate(over="ignore", under="ignore"):
        out = _pos(c, "c") / _pos(beta, "beta")
    return _level(out, "the radius", "beta, c")


def ops_epsilon(beta, rho=1.0, *, c=1.0, factor=4.0):
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


def ops_rho(epsilon, beta=BETA0, *, c=1.0, factor=4.0):
    """The temperature at which OPS (prior :math:`\\beta`, radius :math:`c/\\beta`) is pure ``epsilon``-DP."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.minimum(1.0, _pos(epsilon, "epsilon") * _pos(beta, "beta")
                         / (_pos(factor, "factor") * _pos(c, "c") ** 2))
    return _level(out, "rho", "epsilon, beta, c, factor", high=1.0)


def dp_of_rdp_slope(alpha, delta, *, lam_max=1e8):
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


def rdp_slope_for_dp(epsilon_hat, delta):
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


# ----------------------------------------------------------------------------- the posteriors of Figure 3


class Settings(NamedTuple):
    """One posterior per entry: :math:`p_{\\beta,\\rho}` truncated to :math:`\\|w\\| \\le` ``radius``.

    Attributes
    ----------
    beta, rho, radius : ndarray, shape (S,)
        Prior precision per row, likelihood temperature, support radius (inf: none).
    """

    beta: np.ndarray
    rho: np.ndarray
    radius: np.ndarray


def settings(sampler, epsilon, lam, n, beta0=BETA0, *, c=1.0, ops_factor=None):
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

    def __init__(self, target, n, *, beta0=BETA0, c=1.0, n_sweeps=6, mala_steps=0):
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
    def settings(cls, epsilon, lam, n, beta0=BETA0, *, c=1.0, ops_factor=None) -> Settings:
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
    def guarantee(self):
        """Theorems 16 and 17: :math:`\\varepsilon(\\lambda) = 2c^2B^2\\rho^2\\lambda/(n\\beta)` at every order.

        A :class:`~lib.privacy.guarantees.RenyiDP` at the target's order with
        this curve, or for a :class:`~lib.privacy.guarantees.ZeroConcentratedDP`
        target the :math:`\\rho`-zCDP of the same curve.
        """
        slope = float(rdp_epsilon(1.0, self.n, self.beta, rho=self.rho, c=self.c))
        if isinstance(self.target, ZeroConcentratedDP):
            return ZeroConcentratedDP(slope)
        return RenyiDP(self.target.lam, slope * self.target.lam, curve=functools.partial(_linear_curve, slope))

    def release(self, X, y, rng=None, size=None):
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
    def guarantee(self):
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
    def guarantee(self):
        return NotPrivate()


#: The samplers of Figure 3, in its order.
SAMPLERS = (ConcentratedLogistic, DiffuseLogistic, OPSLogistic, LogisticPosterior)
for _cls in SAMPLERS:
    register(_cls)
del _cls


# ----------------------------------------------------------------------------- log density


def checked_data(X, y):
    """``(X, y)`` checked: ``X`` finite of shape (n, d) with n, d >= 1; ``y`` of shape (n,) with labels 0 and 1.

    Labels may be integers, booleans or floats equal to 0 or 1; anything else
    (2, -1, 0.5, NaN) is refused rather than read as a class.
    """
    X = validation.in_range(X, "X", -np.inf, open_low=True)
    y_arr = validation.as_float(y, "y") if np.asarray(y).dtype.kind != "b" else np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1 or y_arr.shape != (X.shape[0],):
        raise ValueError(f"X must have shape (n, d) with n, d >= 1 and y shape (n,); got {X.shape} and {y_arr.shape}")
    if not np.isin(y_arr, (0, 1)).all():
        bad = y_arr[~np.isin(y_arr, (0, 1))][0]
        raise ValueError(f"y must hold labels 0 and 1; got {bad!r}")
    return X, np.asarray(y)


def _signed(X, y):
    X, y = checked_data(X, y)
    return X * (2.0 * y - 1.0)[:, None]


def checked_weights(W, d):
    """``W`` as a finite float array whose last axis has length ``d``."""
    W = validation.in_range(W, "W", -np.inf, open_low=True)
    if W.ndim < 1 or W.shape[-1] != d:
        raise ValueError(f"W must have shape (..., {d}) (the columns of X); got {W.shape}")
    return W


def log_likelihood(W, X, y):
    """:math:`\\sum_i \\log p(y_i \\mid w, x_i)` for every row ``w`` of ``W`` (shape (..., d)).

    ``X`` finite of shape (n, d), ``y`` labels 0 and 1 of shape (n,), ``W`` finite.
    """
    Z = _signed(X, y)
    W = checked_weights(W, Z.shape[1])
    ll, _ = _data_terms(W.reshape(-1, Z.shape[1]), Z)
    return ll.reshape(W.shape[:-1])[()]


#: Margins, and bytes of rows of ``Z``, per block of the passes over the rows in
#: :func:`_data_terms` and :func:`_data_hessian`: a block of margins and its rows stay
#: in the CPU's cache while they are used (for the gradient, a second product with the
#: same rows), instead of all margins being written out and read back.
_BLOCK_MARGINS = 2**16
_BLOCK_BYTES = 2**19


def _row_blocks(n, width, d):
    """``slice`` objects covering ``range(n)``: blocks of rows of ``width`` margins and ``d`` doubles each."""
    b = max(64, min(_BLOCK_MARGINS // max(int(width), 1), _BLOCK_BYTES // (8 * max(int(d), 1))))
    return [slice(i, min(i + b, n)) for i in range(0, n, b)]


def _data_terms(W, Z, *, value=True, grad=False):
    """:math:`\\sum_i \\log\\sigma(z_i^\\top w)` and :math:`\\sum_i \\sigma(-z_i^\\top w) z_i` for each row ``w`` of ``W``.

    The log-likelihood of the signed rows ``Z`` (n, d) and its gradient, for
    ``W`` of shape (k, d), in one pass over blocks of rows: a block's margins,
    their :math:`\\log\\sigma` and :math:`\\sigma(-m)` are used while they are
    in cache. Both come from one :math:`e = \\exp(-|m|)`:
    :math:`-\\log\\sigma(m) = \\max(-m, 0) + \\log(1 + e)` and
    :math:`\\sigma(-m) = e/(1 + e)` for :math:`m \\ge 0`, :math:`1/(1 + e)` otherwise.
    The sums run block by block, so they equal sums over all rows at once up to rounding.

    Returns
    -------
    ll : ndarray, shape (k,), or None (``value=False``)
    G : ndarray, shape (k, d), or None (``grad=False``)
    """
    k, d = W.shape
    ll = np.zeros(k) if value else None
    G = np.zeros((k, d)) if grad else None
    for rows in _row_blocks(Z.shape[0], k, d):
        M = Z[rows] @ W.T  # (b, k)
        e = np.abs(M)
        np.negative(e, out=e)
        np.exp(e, out=e)
        if grad:
            s = np.where(M >= 0, e, 1.0)
            s /= 1.0 + e
            G += s.T @ Z[rows]
        if value:  # log(1 + e) + max(-m, 0), in place
            np.log1p(e, out=e)
            e -= np.minimum(M, 0.0, out=M)
            ll -= e.sum(axis=0)
    return ll, G


def _logpost(W, Z, n_beta, rho, radius, *, grad=False):
    """Unnormalised log density of (S, K, d) points (-inf outside the support), and its gradient if ``grad``.

    Returns
    -------
    lp : ndarray, shape (S, K)
    G : ndarray, shape (S, K, d), or None
        :math:`\\rho Z^\\top \\sigma(-Z w) - n\\beta w` (the gradient inside the support).
    """
    S, K, d = W.shape
    ll, G = _data_terms(W.reshape(-1, d), Z, grad=grad)
    sq = np.einsum("skd,skd->sk", W, W)
    out = rho[:, None] * ll.reshape(S, K) - 0.5 * n_beta[:, None] * sq
    lp = np.where(sq <= radius[:, None] ** 2, out, -np.inf)
    if grad:
        G = rho[:, None, None] * G.reshape(S, K, d) - n_beta[:, None, None] * W
    return lp, G


def _data_hessian(Z, Z32, w, *, grad=False):
    """:math:`D(w) = \\sum_i \\sigma(m_i)(1 - \\sigma(m_i)) z_i z_i^\\top`, and :math:`Z^\\top\\sigma(-Zw)` if ``grad``.

    One pass over blocks of rows: the margins :math:`m = Zw` and the gradient in
    double precision; :math:`D` as symmetric rank-k products of each block in
    single precision (``Z32``, the rows scaled by :math:`\\sqrt{\\sigma(m)(1-\\sigma(m))}`),
    summed over the blocks in double precision.

    Returns
    -------
    D : ndarray, shape (d, d)
    g : ndarray, shape (d,), or None
    """
    n, d = Z.shape
    D = np.zeros((d, d))
    g = np.zeros(d) if grad else None
    for rows in _row_blocks(n, 1, d):
        Zb = Z[rows]
        m = Zb @ w
        if grad:
            g += Zb.T @ special.expit(-m)
        p = special.expit(m)
        A = Z32[rows] * np.sqrt(p * (1 - p)).astype(np.float32)[:, None]
        D += A.T @ A
    return D, g


#: Steps after the stopping rule (stage 4 of :func:`mode`), at most: each shrinks the
#: error by the single-precision Hessian's factor (about 1e-7) until rounding stops it.
_POLISH_STEPS = 8
#: Relative step below which :func:`mode` leaves the path of Newton steps for
#: steps with a fixed Hessian (the error is then about its square).
_COARSE = 1e-3


def _small(step, w, tol):
    """Is each row of ``step`` below ``tol`` relative to the matching row of ``w`` (max norm)?"""
    return np.abs(step).max(axis=-1) < tol * (1 + np.abs(w).max(axis=-1))


def _newton(Z, Z32, w, r, nb, tol, max_iter, setting):
    """Newton's method for one setting from ``w`` until a step is below ``tol``: ``(w, H, step)``.

    ``H`` is the Hessian at the last iterate, from which the step to ``w`` is below ``tol``.
    """
    eye = np.eye(Z.shape[1])
    for _ in range(max_iter):
        D, g = _data_hessian(Z, Z32, w, grad=True)
        H = r * D + nb * eye
        step = linalg.solve(H, r * g - nb * w, assume_a="pos")
        w = w + step
        if _small(step, w, tol):
            return w, H, step
    raise ValueError(f"Newton's method did not converge in max_iter={max_iter} iterations "
                     f"(beta={setting[0]:g}, rho={setting[1]:g}, tol={tol:g})")


def _fixed_hessian_steps(Z, W, H, r, nb, first, n_steps, tol=None):
    """Steps :math:`w \\leftarrow w + H^{-1}\\nabla` for all settings at once while each shrinks by half.

    ``W`` (k, d) the points, ``H`` (k, d, d) their fixed Hessians, ``first``
    (k,) the size of each setting's previous step (inf: none). The gradients
    of all settings are computed in one pass over the rows (:func:`_data_terms`).
    With ``tol``, a setting also stops after a step below ``tol`` (relative).
    Returns the points and the size of each setting's last step taken.
    """
    L = np.linalg.cholesky(H)
    W, previous = W.copy(), np.array(first, dtype=float)
    going = np.ones(W.shape[0], dtype=bool)
    for _ in range(n_steps):
        if not going.any():
            break
        i = np.flatnonzero(going)
        _, g = _data_terms(W[i], Z, value=False, grad=True)
        g = r[i, None] * g - nb[i, None] * W[i]
        step = np.stack([linalg.cho_solve((L[j], True), g[t]) for t, j in enumerate(i)])
        size = np.abs(step).max(axis=1)
        take = size < 0.5 * previous[i]
        W[i[take]] += step[take]
        previous[i[take]] = size[take]
        going[i[~take]] = False
        if tol is not None:
            going[i[take & _small(step, W[i], tol)]] = False
    return W, previous


def mode(X, y, beta, rho, *, tol=1e-9, max_iter=100):
    """Mode :math:`\\hat w` and Hessian :math:`H` of :math:`-\\log p_{\\beta,\\rho}` for each setting.

    The mode solves :math:`\\rho\\sum_i \\sigma(-w^\\top z_i) z_i = n\\beta w`, so it
    depends on the setting only through :math:`\\kappa = n\\beta/\\rho`; the
    Hessian is :math:`\\rho(D(w) + \\kappa I)`, :math:`D` its data part, which is
    summed in single precision (it only scales the steps; the gradient and the
    stopping rules are in double precision). The settings are solved in four stages:

    1. In decreasing :math:`\\kappa` (a path of modes, from the one nearest 0,
       where the first setting starts), Newton's method (the objective is
       :math:`n\\beta`-strongly convex) until a step is below ``1e-3``
       (relative), started from the previous mode by one Newton step for the
       new :math:`\\kappa` with the previous data Hessian (the gradient there is
       :math:`\\rho(\\kappa_{\\rm prev} - \\kappa)w`, so that step needs no pass
       over the data). A setting whose step is already below ``tol`` is done.
    2. All other settings at once: steps with the last Hessian fixed while they
       shrink, until a step is below ``tol``.
    3. The Hessian at that point; the Newton step from it must be below ``tol``.
    4. Steps with that Hessian while they shrink (at most 8): the mode is exact
       to rounding on every CPU. Stopped at a tolerance, it would depend on where
       the last step landed, and that moves with the last bits of ``expit``.

    A setting for which stage 2 or 3 fails (the steps do not shrink) is solved by
    Newton's method from where it stands. Raises ValueError if a setting does not
    converge in ``max_iter`` Newton iterations.

    Returns
    -------
    w_hat : ndarray, shape (S, d)
    hessian : ndarray, shape (S, d, d)
        At a point from which the Newton step (to ``w_hat``, before the
        steps of stage 4) is below ``tol``; symmetric positive definite (at least
        :math:`n\\beta I`).
    """
    Z = _signed(X, y)
    n, d = Z.shape
    beta = np.atleast_1d(_pos(beta, "beta"))
    rho = np.atleast_1d(validation.in_range(rho, "rho", 0.0, 1.0, open_low=True, open_high=False))
    beta, rho = validation.broadcast(beta=beta, rho=rho)
    if beta.ndim != 1:
        raise ValueError(f"beta and rho must be scalars or 1-D (one entry per setting); got shape {beta.shape}")
    tol = validation.scalar(validation.open_unit(tol, "tol"), "tol")
    max_iter = validation.integer(max_iter, "max_iter", 1, MAX_NEWTON)
    with np.errstate(over="ignore"):
        n_beta_finite = np.all(np.isfinite(n * beta))
    if not n_beta_finite:
        raise ValueError(f"n * beta overflows (n = {n} rows); beta must be at most {np.finfo(float).max / n:.3g}")
    validation.cells(beta.size * d * d, "the Hessians (settings x d x d)")
    Z32 = Z.astype(np.float32)
    S = beta.size
    nb = n * beta
    with np.errstate(over="ignore"):
        kappa = nb / rho
    W, H, last = np.zeros((S, d)), np.zeros((S, d, d)), np.full(S, np.inf)
    done = np.zeros(S, dtype=bool)
    eye = np.eye(d)
    # 1. the path, coarsely
    w, D, kappa_prev = np.zeros(d), None, None
    for s in np.argsort(-kappa, kind="stable"):
        r, kap = rho[s], kappa[s]
        if D is not None and np.isfinite(kap) and np.isfinite(kappa_prev) and kap != kappa_prev:
            w = w + linalg.solve(D + kap * eye, (kappa_prev - kap) * w, assume_a="pos")
        for _ in range(max_iter):
            D, g = _data_hessian(Z, Z32, w, grad=True)
            H[s] = r * D + nb[s] * eye
            step = linalg.solve(H[s], r * g - nb[s] * w, assume_a="pos")
            w = w + step
            if _small(step, w, _COARSE):
                break
        else:
            raise ValueError(f"Newton's method did not converge in max_iter={max_iter} iterations "
                             f"(beta={beta[s]:g}, rho={r:g}, tol={tol:g})")
        W[s], last[s], done[s], kappa_prev = w, np.abs(step).max(), _small(step, w, tol), kap
    # 2. the other settings with their Hessians fixed, to tol
    todo = np.flatnonzero(~done)
    if todo.size:
        W[todo], size = _fixed_hessian_steps(Z, W[todo], H[todo], rho[todo], nb[todo], last[todo], max_iter, tol)
        ok = size < tol * (1 + np.abs(W[todo]).max(axis=1))
        # 3. the Hessian there, and the Newton step from it
        fresh = todo[ok]
        if fresh.size:
            for s in fresh:
                H[s] = rho[s] * _data_hessian(Z, Z32, W[s])[0] + nb[s] * eye
            _, g = _data_terms(W[fresh], Z, value=False, grad=True)
            g = rho[fresh, None] * g - nb[fresh, None] * W[fresh]
            step = np.stack([linalg.solve(H[s], g[t], assume_a="pos") for t, s in enumerate(fresh)])
            W[fresh] += step
            last[fresh] = np.abs(step).max(axis=1)
            done[fresh[_small(step, W[fresh], tol)]] = True
        # a setting whose steps did not shrink: Newton's method from where it stands
        for s in np.flatnonzero(~done):
            W[s], H[s], step = _newton(Z, Z32, W[s], rho[s], nb[s], tol, max_iter, (beta[s], rho[s]))
            last[s] = np.abs(step).max()
    # 4. polish: steps with the final Hessians while they shrink
    W, _ = _fixed_hessian_steps(Z, W, H, rho, nb, last, _POLISH_STEPS)
    return W, H


# ----------------------------------------------------------------------------- the sampler


class Samples(NamedTuple):
    """Output of :func:`sample`.

    Attributes
    ----------
    w : ndarray, shape (S, K, d)
        The last state of each of K chains for each of S settings: one release each.
    acceptance_independence, acceptance_mala : ndarray, shape (S,)
        Share of accepted proposals of each kernel.
    trace : ndarray, shape (S, K, T // thin) + probe.shape[1:], or None
        ``w @ probe`` every ``thin`` sweeps (for effective sample sizes).
    w_hat : ndarray, shape (S, d)
        The modes.
    """

    w: np.ndarray
    acceptance_independence: np.ndarray
    acceptance_mala: np.ndarray
    trace: np.ndarray | None
    w_hat: np.ndarray


def _setting(setting):
    """``(beta, rho, radius)`` of a :class:`Settings`, checked and broadcast to one 1-D shape."""
    if not isinstance(setting, tuple) or len(setting) != 3:
        raise validation.ArgumentTypeError(f"setting must be a Settings (beta, rho, radius); got "
                                          f"{type(setting).__name__} {setting!r:.60}")
    beta = np.atleast_1d(_pos(setting[0], "setting.beta"))
    rho = np.atleast_1d(validation.in_range(setting[1], "setting.rho", 0.0, 1.0, open_low=True, open_high=False))
    radius = np.atleast_1d(validation.as_float(setting[2], "setting.radius"))
    if not np.all(radius > 0):  # NaN fails too; inf (no truncation) is allowed
        raise ValueError("setting.radius must be in (0, inf] (inf: no truncation)")
    beta, rho, radius = validation.broadcast(**{"setting.beta": beta, "setting.rho": rho, "setting.radius": radius})
    if beta.ndim != 1 or beta.size == 0:
        raise ValueError(f"setting's fields must be 1-D with one entry per setting; got shape {beta.shape}")
    return beta, rho, radius


def _mode_cache(mode_cache, S, d):
    """``(w_hat, hessian)`` of shapes (S, d) and (S, d, d), finite."""
    if not isinstance(mode_cache, tuple) or len(mode_cache) != 2:
        raise validation.ArgumentTypeError(f"mode_cache must be the pair (w_hat, hessian) of mode(); got "
                                          f"{type(mode_cache).__name__}")
    w_hat = validation.in_range(mode_cache[0], "mode_cache w_hat", -np.inf, open_low=True)
    H = validation.in_range(mode_cache[1], "mode_cache hessian", -np.inf, open_low=True)
    if w_hat.shape != (S, d) or H.shape != (S, d, d):
        raise ValueError(f"mode_cache must hold arrays of shapes ({S}, {d}) and ({S}, {d}, {d}) (the settings and "
                         f"the columns of X); got {w_hat.shape} and {H.shape}")
    return w_hat, H


def sample(X, y, setting: Settings, n_chains, n_sweeps, rng=None, *, mala_steps=0, mala_step=0.5,
           independence=True, probe=None, thin=1, mode_cache=None, c=1.0):
    """Approximate draws from :math:`p_{\\beta,\\rho}(w \\mid D)` for every setting, many chains at once.

    Each chain starts from a draw of the Laplace approximation
    :math:`N(\\hat w, H^{-1})` and makes ``n_sweeps`` sweeps; a sweep is one
    independence Metropolis-Hastings step with that Gaussian as proposal
    followed by ``mala_steps`` Metropolis-adjusted Langevin steps preconditioned
    by :math:`H^{-1}` (step size ``mala_step``). Both kernels leave the posterior
    invariant (the truncation of OPS included: a proposal outside the ball is
    rejected), so the chains converge to it; the last state of each chain is
    one release.

    Parameters
    ----------
    X : ndarray, shape (n, d)
    y : ndarray of {0, 1}, shape (n,)
    setting : Settings
        S posteriors (:func:`settings`).
    n_chains : int
        K chains per setting.
    n_sweeps : int
        Sweeps per chain (>= 1).
    rng : Generator or int or None
    mala_steps : int
        MALA steps per sweep (>= 0).
    mala_step : float
        MALA step :math:`h` in units of :math:`H^{-1}`: proposal
        :math:`w + \\tfrac{h^2}{2}H^{-1}\\nabla\\log p + h H^{-1/2}\\xi`.
    independence : bool
        False: no independence steps, and every chain starts at the mode (a
        MALA-only reference run, a different kernel from the default one).
    probe : ndarray, shape (d,) or (d, p), optional
        Directions whose projections ``w @ probe`` are recorded every ``thin`` sweeps.
    thin : int
        Record the probe every ``thin``-th sweep.
    mode_cache : tuple (w_hat, hessian), optional
        Precomputed :func:`mode` for these settings.
    c : float, default 1.0
        The bound :math:`\\|x_i\\| \\le c` of Assumption 1 that the settings were
        computed with (:func:`settings`); a row of ``X`` of larger norm (beyond
        the rounding of a normalisation, :data:`NORM_SLACK`) is a ValueError, since
        no privacy statement of this module holds for it.

    Returns
    -------
    Samples

    Raises
    ------
    ValueError
        For invalid input, for more than :data:`MAX_MARGINS` margins (rows x
        settings x chains) or more than :data:`MAX_SAMPLER_WORK` margin evaluations
        (times sweeps and kernel steps), and when Newton's method does not converge
        (:func:`mode`).
    """
    rng = validation.generator(rng)
    K = validation.integer(n_chains, "n_chains")
    T = validation.integer(n_sweeps, "n_sweeps")
    mala_steps = validation.integer(mala_steps, "mala_steps", 0)
    h = validation.scalar(_pos(mala_step, "mala_step"), "mala_step")
    if not isinstance(independence, (bool, np.bool_)):
        raise validation.ArgumentTypeError(f"independence must be a bool; got {type(independence).__name__}")
    Z = _signed(X, y)
    n, d = Z.shape
    c = _scalar(c, "c")
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    if not np.all(norms <= c * (1 + NORM_SLACK)):
        i = int(np.argmax(norms))
        raise ValueError(f"X must have rows of Euclidean norm at most c = {c:g} (Assumption 1, on which every "
                         f"privacy statement rests); row {i} has norm {norms[i]:.6g}")
    beta, rho, radius = _setting(setting)
    S = beta.size
    if S * K > validation.MAX_CELLS // d or n * S * K > MAX_MARGINS:
        raise ValueError(f"n_chains = {K} for {S} settings of {n} rows and {d} columns would need {n * S * K} "
                         f"margins; at most {MAX_MARGINS} (and {validation.MAX_CELLS} chain coordinates) are allowed")
    work = n * S * K * T * (int(bool(independence)) + mala_steps)
    if work > MAX_SAMPLER_WORK:
        raise ValueError(f"n_sweeps = {T} with mala_steps = {mala_steps} would evaluate {work:.3g} margins; at most "
                         f"{MAX_SAMPLER_WORK:.0e} are allowed")
    thin = validation.integer(thin, "thin")
    if probe is not None:
        probe = validation.in_range(probe, "probe", -np.inf, open_low=True)
        if probe.ndim not in (1, 2) or probe.shape[0] != d:
            raise ValueError(f"probe must have shape ({d},) or ({d}, p); got {probe.shape}")
        thin = validation.integer(thin, "thin", 1, T)
        validation.cells(S * K * (T // thin) * (probe.shape[1] if probe.ndim == 2 else 1), "the trace")
    n_beta = n * beta
    if mode_cache is None:
        w_hat, H = mode(X, y, beta, rho)
    else:
        w_hat, H = _mode_cache(mode_cache, S, d)
    # H = L L^T; a draw of N(0, H^{-1}) is L^{-T} xi, and H^{-1} g = L^{-T} L^{-1} g.
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError as exc:
        raise ValueError("mode_cache's Hessians must be symmetric positive definite") from exc
    Linv = np.linalg.inv(L)  # (S, d, d), lower triangular

    def gauss(shape_k):  # N(0, H^{-1}) draws (S, K, d) and their whitened norms
        xi = rng.standard_normal((S, shape_k, d))
        return np.einsum("sji,skj->ski", Linv, xi), xi

    def log_q(W):  # log N(w_hat, H^{-1}) up to a constant
        u = np.einsum("sij,skj->ski", L.transpose(0, 2, 1), W - w_hat[:, None, :])
        return -0.5 * np.einsum("ski,ski->sk", u, u)

    def precond(G):  # H^{-1} G
        u = np.einsum("sij,skj->ski", Linv, G)
        return np.einsum("sji,skj->ski", Linv, u)

    if not (independence or mala_steps):
        raise ValueError("at least one kernel is needed: independence=True or mala_steps >= 1")
    dw, _ = gauss(K)
    W = w_hat[:, None, :] + (dw if independence else 0.0)
    lp, grad = _logpost(W, Z, n_beta, rho, radius, grad=bool(mala_steps))
    if not np.isfinite(lp).all():  # a start outside the ball: start at the mode instead
        W = np.where(np.isfinite(lp)[..., None], W, w_hat[:, None, :])
        lp, grad = _logpost(W, Z, n_beta, rho, radius, grad=bool(mala_steps))
    lq = log_q(W)
    acc_i = np.zeros(S)
    acc_m = np.zeros(S)
    trace = None if probe is None else np.empty((S, K, T // thin) + np.shape(probe)[1:])
    for t in range(T):
        if not independence:
            ok = np.zeros((S, K), dtype=bool)
        if independence:  # independence MH
            dw, _ = gauss(K)
            P = w_hat[:, None, :] + dw
            lp_p, g_p = _logpost(P, Z, n_beta, rho, radius, grad=bool(mala_steps))
            lq_p = log_q(P)
            log_a = (lp_p - lp) - (lq_p - lq)
            ok = np.log(rng.random((S, K))) < log_a
            W = np.where(ok[..., None], P, W)
            lp, lq = np.where(ok, lp_p, lp), np.where(ok, lq_p, lq)
            if mala_steps:
                grad = np.where(ok[..., None], g_p, grad)
        acc_i += ok.mean(axis=1)
        # preconditioned MALA
        for _ in range(mala_steps):
            noise, xi = gauss(K)
            mean = W + 0.5 * h**2 * precond(grad)
            P = mean + h * noise
            lp_p, g_p = _logpost(P, Z, n_beta, rho, radius, grad=True)
            fin = np.isfinite(lp_p)
            mean_back = P + 0.5 * h**2 * precond(g_p)

            def lk(a, b):  # log N(a; b, h^2 H^{-1}) up to a constant
                u = np.einsum("sij,skj->ski", L.transpose(0, 2, 1), a - b)
                return -0.5 * np.einsum("ski,ski->sk", u, u) / h**2

            with np.errstate(invalid="ignore"):
                log_a = np.where(fin, lp_p - lp + lk(W, mean_back) - lk(P, mean), -np.inf)
            ok = np.log(rng.random((S, K))) < log_a
            W = np.where(ok[..., None], P, W)
            lp = np.where(ok, lp_p, lp)
            lq = np.where(ok, log_q(P), lq)
            grad = np.where(ok[..., None], g_p, grad)
            acc_m += ok.mean(axis=1)
        if trace is not None and (t + 1) % thin == 0 and (t + 1) // thin <= trace.shape[2]:
            trace[:, :, (t + 1) // thin - 1] = W @ probe
    return Samples(W, acc_i / T, acc_m / max(T * mala_steps, 1), trace, w_hat)


