"""Utility against privacy of the Beta-Bernoulli posterior samplers: Figure 2 of Geumlek et al.

Geumlek, Song and Chaudhuri (NeurIPS 2017, Section 5.1) fix a Beta prior and a binomial data set
and draw, at one order :math:`\\lambda` and a grid of levels :math:`\\varepsilon`, how far each
mechanism's output is from the true posterior :math:`P = \\mathrm{Beta}(\\alpha_0 + k,
\\beta_0 + n - k)`:

* panels (a, b): :math:`\\mathrm{KL}(P \\| A)` to the law :math:`A` of each mechanism's output
  (:func:`figure2_kl`), in closed form for the Dirichlet (Beta) releases and by quadrature for
  the Gaussian baseline's mixture;
* panels (c, d): the held-out negative log-likelihood of a draw, mean and spread over repeated
  runs on fresh Bernoulli(1/2) data (:func:`figure2_heldout`), under both readings of their axis
  (:func:`lib.theory.geumlek.heldout_neg_loglik`).

The mechanisms are their Algorithm 2 (the diffused posterior :math:`\\mathrm{Beta}(a + r c)`),
Algorithm 3 (the concentrated posterior :math:`\\mathrm{Beta}(a/m + c)`), the Gaussian baseline
(noise on the sufficient statistic, clamped, then the posterior), and the book's Algorithm 1
(:math:`\\mathrm{Dir}(r c + \\alpha)`, Lines 1-2 of Ponnoprat's Algorithm 1), each calibrated to
:math:`(\\lambda, \\varepsilon)`-RDP: :math:`r` and :math:`m` by the exact worst case
(:func:`lib.mechanisms.posterior_sampling.calibrate_scale`), :math:`\\sigma` by Mironov's constant
(:func:`lib.mechanisms.posterior_sampling.gaussian_sigma`), Algorithm 1 by Theorem 1
(:func:`lib.mechanisms.dirichlet.calibration.calibrate`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike
import pandas as pd

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.dirichlet.calibration import calibrate
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.mechanisms.posterior_sampling import calibrate_scale, gaussian_posterior_kl, gaussian_sigma
from lib.theory.geumlek import heldout_neg_loglik

__all__ = ["figure2_kl", "figure2_heldout"]

#: The mechanisms of Figure 2 with the book's Algorithm 1, in the order of their columns and rows.
MECHANISMS = ("Alg. 2 (diffused)", "Alg. 3 (concentrated)", "Gauss. Mech.", "Dirichlet (Alg. 1)")

#: Largest number of runs per level of :func:`figure2_heldout` (each run draws from five laws).
MAX_RUNS = 10**6


def _prior(prior):
    prior = validation.positive(prior, "prior")
    if prior.shape != (2,):
        raise ValueError(f"prior must be the two Beta parameters (alpha0, beta0); got shape {prior.shape}")
    return prior


def figure2_kl(prior: ArrayLike, successes: int, n: int, log_eps: ArrayLike, lam: float) -> pd.DataFrame:
    """Figure 2 (a, b): :math:`\\mathrm{KL}(P \\| A)` from the true posterior to each mechanism's output law.

    Parameters
    ----------
    prior : array_like, shape (2,)
        The Beta prior :math:`(\\alpha_0, \\beta_0)` (their :math:`\\eta_0 = (6, 18)` is
        :math:`(6, 12)`).
    successes : int
        Successes :math:`k` of the data set.
    n : int
        Trials of the data set (public).
    log_eps : array_like, shape (g,)
        Natural logarithms of the RDP levels.
    lam : float
        The order, :math:`(1, \\infty)`.

    Returns
    -------
    pandas.DataFrame
        One row per level: ``log_eps``, the calibrated ``r`` (Algorithm 2) and ``m``
        (Algorithm 3), one column of KL per name of :data:`MECHANISMS`, and ``gauss_atoms``,
        the probability that the clamped noisy statistic sits at 0 or ``n``.
    """
    prior = _prior(prior)
    n = validation.integer(n, "n")
    successes = validation.integer(successes, "successes", low=0, high=n)
    log_eps = validation.in_range(log_eps, "log_eps", -np.inf, open_low=True).ravel()
    counts = np.array([successes, n - successes], float)
    post = prior + counts
    eps = np.exp(log_eps)
    r = calibrate_scale(eps, lam, prior, n)
    m = calibrate_scale(eps, lam, prior, n, kind="concentrated")
    cal = calibrate(eps, lam)
    gauss = np.array([gaussian_posterior_kl(successes, n, prior, s) for s in gaussian_sigma(eps, lam)])
    return pd.DataFrame({
        "log_eps": log_eps, "r": r, "m": m,
        MECHANISMS[0]: renyi_divergence_dirichlet(post, prior + r[:, None] * counts, 1.0),
        MECHANISMS[1]: renyi_divergence_dirichlet(post, prior / m[:, None] + counts, 1.0),
        MECHANISMS[2]: gauss[:, 0], "gauss_atoms": gauss[:, 1],
        MECHANISMS[3]: renyi_divergence_dirichlet(post, cal.r[:, None] * counts + cal.alpha[:, None], 1.0)})


def _draw_beta(rng, params):
    """First coordinates of Dirichlet draws with the rows of ``params`` (a Beta draw each), by Gamma variates."""
    g = rng.standard_gamma(params)
    return g[:, 0] / g.sum(axis=1)


def figure2_heldout(prior: ArrayLike, n: int, log_eps: ArrayLike, lams: Sequence[float], runs: int,
                    rng: SeedLike) -> dict[float, pd.DataFrame]:
    """Figure 2 (c, d): held-out negative log-likelihood of one draw of each mechanism, over many runs.

    Each run draws a training set of ``n`` Bernoulli(1/2) trials (``k_train`` successes) and a
    held-out set of ``n`` more (``k_held``), once for all levels and orders. At every order
    and level, each mechanism run on the training set releases one success probability
    :math:`\\theta` per run, and :math:`-\\log p(X_H \\mid \\theta)` is scored under both readings
    of :func:`lib.theory.geumlek.heldout_neg_loglik`. "True Post." samples the non-private
    posterior :math:`\\mathrm{Beta}(\\alpha_0 + k, \\beta_0 + n - k)`.

    Parameters
    ----------
    prior : array_like, shape (2,)
        The Beta prior.
    n : int
        Trials of the training and of the held-out set.
    log_eps : array_like, shape (g,)
        Natural logarithms of the RDP levels.
    lams : sequence of float
        Orders, each in :math:`(1, \\infty)`, run in the order given.
    runs : int
        Runs per level, :math:`[2, 10^6]`.
    rng : numpy.random.Generator or int
        The source of the data and of every release; draws come in the order: training
        counts, held-out counts, then per order and level the Gaussian noise and one Gamma
        draw per mechanism (:data:`MECHANISMS`, then "True Post.").

    Returns
    -------
    dict of float to pandas.DataFrame
        Per order, one row per level and mechanism: ``log_eps``, ``mechanism``, the mean,
        standard deviation and standard error of the sequence reading (``mean``, ``sd``,
        ``se``) and the mean and standard deviation of the count reading (``mean_count``,
        ``sd_count``).
    """
    prior = _prior(prior)
    n = validation.integer(n, "n")
    runs = validation.integer(runs, "runs", low=2, high=MAX_RUNS)
    log_eps = validation.in_range(log_eps, "log_eps", -np.inf, open_low=True).ravel()
    rng = validation.generator(rng)
    k_train = rng.binomial(n, 0.5, size=runs)
    k_held = rng.binomial(n, 0.5, size=runs)
    train = np.stack([k_train, n - k_train], axis=1).astype(float)
    out = {}
    for lam in lams:
        e = np.exp(log_eps)
        r = calibrate_scale(e, lam, prior, n)
        m = calibrate_scale(e, lam, prior, n, kind="concentrated")
        cal, sig = calibrate(e, lam), gaussian_sigma(e, lam)
        rows = []
        for i in range(len(e)):
            noisy = np.clip(k_train + sig[i] * rng.standard_normal(runs), 0, n)
            thetas = {MECHANISMS[0]: _draw_beta(rng, prior + r[i] * train),
                      MECHANISMS[1]: _draw_beta(rng, prior / m[i] + train),
                      MECHANISMS[2]: _draw_beta(rng, np.stack([prior[0] + noisy, prior[1] + n - noisy], axis=1)),
                      MECHANISMS[3]: _draw_beta(rng, cal.r[i] * train + cal.alpha[i]),
                      "True Post.": _draw_beta(rng, prior + train)}
            for name, theta in thetas.items():
                v = heldout_neg_loglik(theta, k_held, n, reading="sequence")  # the ordered trials
                w = heldout_neg_loglik(theta, k_held, n, reading="count")  # the binomial pmf of k_H
                rows.append({"log_eps": log_eps[i], "mechanism": name, "mean": v.mean(),
                             "sd": v.std(), "se": v.std() / np.sqrt(runs),
                             "mean_count": w.mean(), "sd_count": w.std()})
        out[lam] = pd.DataFrame(rows)
    return out
