"""Geumlek et al.'s Gaussian baseline for a Beta-Bernoulli posterior (their Section 5.1).

Gaussian noise on the sufficient statistic at :math:`(\\lambda, \\varepsilon)`-RDP
(:func:`gaussian_sigma`), the noisy statistic clamped and turned into a Beta posterior
(:func:`gaussian_posterior_params`), and the KL divergence from the true posterior to
the baseline's output law (:func:`gaussian_posterior_kl`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.posterior_sampling.analysis import prior_vector


#: Largest number of quadrature nodes of :func:`gaussian_posterior_kl` (an O(nodes^3) eigenproblem).
MAX_NODES = 2000


# ----------------------------------------------------------------------------- the Gaussian baseline


def gaussian_sigma(epsilon: ArrayLike, lam: ArrayLike, sensitivity: float = 1.0, *,
                   printed: bool = False) -> np.ndarray | float:
    """Noise level of the Gaussian baseline on the sufficient statistic at :math:`(\\lambda, \\varepsilon)`.

    Mironov (2017, Proposition 7): :math:`\\mathcal N(0, \\sigma^2)` on a statistic of
    sensitivity :math:`\\Delta` is exactly :math:`(\\lambda, \\lambda\\Delta^2/(2\\sigma^2))`-RDP,
    so :math:`\\sigma = \\Delta\\sqrt{\\lambda/(2\\varepsilon)}`. Geumlek et al. (Section 5.1)
    print :math:`\\lambda\\Delta^2/\\sigma^2` (``printed=True``), a factor 2 in
    :math:`\\varepsilon`, :math:`\\sqrt2` in :math:`\\sigma`.
    """
    epsilon = validation.positive(epsilon, "epsilon")
    lam = validation.order(lam, "lam")
    sensitivity = validation.positive(sensitivity, "sensitivity")
    with np.errstate(over="ignore"):
        sigma = sensitivity * np.sqrt(lam / ((1 if printed else 2) * epsilon))
    if not np.all(np.isfinite(sigma)):
        raise ValueError("sigma overflows: lam / epsilon (times sensitivity^2) is beyond the double range")
    return sigma[()]


def _trials(successes, n, *, scalar=False):
    """``(successes, n)``: ``n`` an integer >= 1, ``successes`` real in [0, n] (a scalar if ``scalar``)."""
    n = validation.integer(n, "n")
    successes = validation.in_range(successes, "successes", 0.0, float(n), open_low=False, open_high=False)
    if scalar:
        successes = validation.scalar(successes, "successes")
    return successes, n


def _size(size):
    """A ``size`` argument of numpy's generators: None, an integer >= 0 or a tuple of them (bounded)."""
    if size is None:
        return None
    shape = (size,) if isinstance(size, (int, np.integer)) and not isinstance(size, (bool, np.bool_)) else size
    if not isinstance(shape, tuple):
        raise validation.ArgumentTypeError(f"size must be None, an integer or a tuple of integers; got "
                                          f"{type(size).__name__}")
    shape = tuple(validation.integer(k, "size", 0) for k in shape)
    validation.cells(math.prod(shape), "size")
    return size


def gaussian_posterior_params(successes: ArrayLike, n: int, prior: ArrayLike, sigma: float, rng: SeedLike,
                              size: int | tuple[int, ...] | None) -> np.ndarray:
    """Beta parameters of the Gaussian baseline: the statistic plus noise, clamped to [0, n], then the posterior.

    ``successes`` in [0, n] (broadcast against ``size``), ``n`` an integer >= 1,
    ``prior`` the two pseudo-counts (a scalar is repeated), ``sigma > 0``.
    Returns an array of shape ``broadcast(successes, size) + (2,)``.
    """
    successes, n = _trials(successes, n)
    a0, b0 = prior_vector(prior, 2)
    sigma = validation.scalar(validation.positive(sigma, "sigma"), "sigma")
    size = _size(size)
    try:
        np.broadcast_shapes(successes.shape, () if size is None else tuple(np.atleast_1d(size).tolist()))
    except ValueError as exc:
        raise ValueError(f"successes of shape {successes.shape} does not broadcast against size {size!r}") from exc
    rng = validation.generator(rng)
    noisy = np.clip(successes + sigma * rng.standard_normal(size), 0, n)
    return np.stack([a0 + noisy, b0 + n - noisy], axis=-1)


@functools.lru_cache(maxsize=4)
def _legendre(nodes):
    """Gauss-Legendre nodes and weights on [-1, 1] (computed once per size: an eigenproblem)."""
    return np.polynomial.legendre.leggauss(nodes)


def gaussian_posterior_kl(successes: int, n: int, prior: ArrayLike, sigma: float, *,
                          nodes: int = 400) -> tuple[float, float]:
    """:math:`KL(P \\| A)` from the true posterior :math:`P` to the Gaussian baseline's output law :math:`A`.

    :math:`A` is the mixture over the clamped noisy statistic :math:`\\tilde S =
    \\min(n, \\max(0, S + \\mathcal N(0, \\sigma^2)))` of
    :math:`\\mathrm{Beta}(\\alpha_0 + \\tilde S, \\beta_0 + n - \\tilde S)`: two atoms
    (:math:`\\tilde S = 0` and :math:`n`) and a density. Gauss-Legendre rules with
    ``nodes`` points integrate over :math:`\\tilde S` (within 12 standard deviations
    of :math:`S`) and over :math:`\\theta` (the central :math:`1 - 2 \\cdot 10^{-13}` of
    :math:`P`'s mass); the tests check convergence in ``nodes``.

    Returns
    -------
    kl : float
    atoms : float
        The probability of the two atoms, :math:`\\Pr[\\tilde S \\in \\{0, n\\}]`.
    """
    from scipy import special, stats

    successes, n = _trials(successes, n, scalar=True)
    a0, b0 = prior_vector(prior, 2)
    sigma = validation.scalar(validation.positive(sigma, "sigma"), "sigma")
    post = stats.beta(a0 + successes, b0 + n - successes)
    x, wx = _legendre(validation.integer(nodes, "nodes", 8, MAX_NODES))
    lo, hi = post.ppf(1e-13), post.isf(1e-13)
    theta, w_theta = (hi - lo) / 2 * x + (hi + lo) / 2, (hi - lo) / 2 * wx
    s_lo, s_hi = max(0.0, successes - 12 * sigma), min(float(n), successes + 12 * sigma)
    s, w_s = (s_hi - s_lo) / 2 * x + (s_hi + s_lo) / 2, (s_hi - s_lo) / 2 * wx
    w_s = w_s * stats.norm.pdf(s, successes, sigma)
    atoms = np.array([stats.norm.cdf(0, successes, sigma), stats.norm.sf(n, successes, sigma)])
    s_all = np.concatenate([[0.0, float(n)], s])
    w_all = np.concatenate([atoms, w_s])
    a_all, b_all = a0 + s_all, b0 + n - s_all
    log_pdf = ((a_all - 1) * np.log(theta)[:, None] + (b_all - 1) * np.log1p(-theta)[:, None]
               - special.betaln(a_all, b_all))
    top = log_pdf.max(axis=1, keepdims=True)
    log_a = np.log(np.exp(log_pdf - top) @ w_all) + top[:, 0]
    log_p = post.logpdf(theta)
    kl = float(np.sum(w_theta * np.exp(log_p) * (log_p - log_a)))
    if not np.isfinite(kl):
        raise ValueError(f"the quadrature is not finite at sigma = {sigma:g}, prior = ({a0:g}, {b0:g}), successes = "
                         f"{successes:g}, n = {n}: sigma is too small against the statistic, or the prior too large")
    return kl, float(atoms.sum())
