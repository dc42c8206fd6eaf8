"""Private Bayesian logistic regression by posterior sampling (Geumlek et al. 2017, Section 4): the model.

The samplers, their privacy statements and the MCMC sampler live with the
mechanisms (:mod:`lib.mechanisms.logistic_posterior`, re-exported here);
this module holds the estimator that takes a sampler
(:class:`BayesianLogisticRegression`), the metrics of a released weight
vector (:func:`error_rate`, :func:`cross_entropy`) and the diagnostics of the
sampler's chains (:func:`effective_sample_size`,
:func:`effective_sample_size_batch_means`).

Examples
--------
>>> import numpy as np
>>> from lib.privacy.guarantees import RenyiDP
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 2))
>>> X /= np.linalg.norm(X, axis=1, keepdims=True)
>>> y = (X[:, 0] > 0).astype(int)
>>> model = BayesianLogisticRegression(DiffuseLogistic(RenyiDP(5.0, 50.0), 200), random_state=1).fit(X, y)
>>> float(error_rate(model.coef_, X, y)) < 0.2
True
"""

from __future__ import annotations

from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.logistic_posterior import (  # noqa: F401  (re-exported: the model's public names)
    B_LOGISTIC, BETA0, MAX_MARGINS, MAX_NEWTON, MAX_SAMPLER_WORK, NORM_SLACK, SAMPLERS, ConcentratedLogistic,
    DiffuseLogistic, LogisticPosterior, LogisticSampler, OPSLogistic, Samples, Settings, checked_data, checked_weights,
    concentrated_beta, diffuse_rho, dp_of_rdp_slope, log_likelihood, mode, ops_epsilon, ops_radius, ops_rho,
    rdp_epsilon, rdp_slope_for_dp, sample, settings)
from lib.models.estimator import ClassifierProtocol, not_fitted


class BayesianLogisticRegression(ClassifierProtocol):
    """Scikit-learn-style binary classifier whose weights are one release of a posterior sampler.

    Parameters
    ----------
    sampler : LogisticSampler
        A calibrated sampler object (e.g. ``DiffuseLogistic(RenyiDP(5.0, 1.0), n)``);
        its ``n`` must be the number of training rows.
    random_state : numpy.random.Generator, int or None
        The sampler's noise source; :meth:`fit` builds a generator from it and
        never changes it.

    Attributes
    ----------
    coef_ : ndarray, shape (d,)
        The released weight vector.
    guarantee_ : Guarantee
        The sampler's guarantee (that of an exact sample; the sampler is approximate).
    classes_ : ndarray
        ``[0, 1]``.
    """

    def __init__(self, sampler: LogisticSampler, *, random_state: SeedLike = None) -> None:
        self.sampler, self.random_state = sampler, random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Release one weight vector of the sampler's posterior given ``(X, y)``."""
        if not isinstance(self.sampler, LogisticSampler):
            raise ValueError(f"sampler must be a LogisticSampler object; got {self.sampler!r:.60}")
        self.coef_ = self.sampler.release(X, y, validation.generator(self.random_state))
        self.guarantee_ = self.sampler.guarantee
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = int(self.coef_.size)
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise not_fitted("BayesianLogisticRegression")
        return np.asarray(X, dtype=float) @ self.coef_

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        from scipy import special

        p = special.expit(self.decision_function(X))
        return np.column_stack([1 - p, p])

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        return np.log(self.predict_proba(X))

    def predict(self, X: ArrayLike) -> np.ndarray:
        return (self.decision_function(X) > 0).astype(np.int64)


# ----------------------------------------------------------------------------- diagnostics and metrics


def effective_sample_size(trace: ArrayLike) -> np.ndarray:
    """Effective sample size of each chain set, Geyer's initial positive sequence.

    ``trace`` has shape (..., K, T): K chains of length T of one scalar. The
    autocorrelations are averaged over the chains (after centring at the mean
    over all chains) and summed in pairs while the pair sums stay positive.

    Returns
    -------
    ndarray, shape (...)
        :math:`KT / (1 + 2\\sum_k \\hat\\rho_k)`.

    Raises
    ------
    ValueError
        If ``trace`` is not finite, has fewer than two axes or fewer than two
        steps, or a chain set has zero variance (its autocorrelations are 0/0).
    """
    x = validation.in_range(trace, "trace", -np.inf, open_low=True)
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 1:
        raise ValueError(f"trace must have shape (..., K, T) with K >= 1 chains of T >= 2 steps; got {x.shape}")
    K, T = x.shape[-2:]
    x = x - x.mean(axis=(-2, -1), keepdims=True)
    f = np.fft.rfft(x, n=2 * T, axis=-1)
    acov = np.fft.irfft(f * np.conj(f), axis=-1)[..., :T].mean(axis=-2) / T
    if not np.all(acov[..., 0] > 0):
        raise ValueError("trace has a chain set of zero variance (constant): its effective sample size is undefined")
    rho_ = acov / acov[..., :1]
    flat = rho_.reshape(-1, T)
    out = np.empty(flat.shape[0])
    for i, r in enumerate(flat):
        pairs = r[: T - T % 2].reshape(-1, 2).sum(axis=1)
        neg = np.flatnonzero(pairs <= 0)
        m = neg[0] if neg.size else pairs.size
        tau = -1 + 2 * pairs[:m].sum()
        out[i] = K * T / max(tau, 1e-12)
    return out.reshape(rho_.shape[:-1])


def effective_sample_size_batch_means(trace: ArrayLike, n_batches: int | None = None) -> np.ndarray:
    """Effective sample size of each chain set by non-overlapping batch means.

    An estimator independent of :func:`effective_sample_size`'s autocorrelation
    sums: each of the K chains of length T is cut into ``n_batches`` batches of
    :math:`m = \\lfloor T/b \\rfloor` steps (the first ``T - b m`` steps are
    dropped); the variance of the batch means, times :math:`m`, estimates the
    asymptotic variance :math:`\\sigma^2_\\infty` of the chain's mean, and the
    effective sample size is :math:`K b m \\cdot \\widehat{\\operatorname{var}}(x) / \\hat\\sigma^2_\\infty`.

    Parameters
    ----------
    trace : array_like, shape (..., K, T)
        K chains of length T of one scalar.
    n_batches : int, optional
        Batches per chain, :math:`[2, T/2]`; default :math:`\\max(2, \\operatorname{round}(T^{1/3}))` (batches of about
        :math:`T^{2/3}` steps: long enough for a strongly autocorrelated chain).

    Returns
    -------
    ndarray, shape (...)

    Raises
    ------
    ValueError
        If ``trace`` is not finite, has fewer than two axes or fewer than four
        steps, ``n_batches`` is out of range, or a chain set is constant.
    """
    x = validation.in_range(trace, "trace", -np.inf, open_low=True)
    if x.ndim < 2 or x.shape[-1] < 4 or x.shape[-2] < 1:
        raise ValueError(f"trace must have shape (..., K, T) with K >= 1 chains of T >= 4 steps; got {x.shape}")
    K, T = x.shape[-2:]
    b = max(2, int(round(T ** (1 / 3)))) if n_batches is None else validation.integer(n_batches, "n_batches", 2, T // 2)
    m = T // b
    x = x[..., T - b * m:]
    centred = x - x.mean(axis=(-2, -1), keepdims=True)
    var = (centred**2).mean(axis=(-2, -1))
    if not np.all(var > 0):
        raise ValueError("trace has a chain set of zero variance (constant): its effective sample size is undefined")
    means = centred.reshape(x.shape[:-1] + (b, m)).mean(axis=-1)  # (..., K, b)
    sigma2 = m * (means**2).sum(axis=(-2, -1)) / (K * b - 1)
    return K * b * m * var / sigma2


def error_rate(W: ArrayLike, X: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Share of misclassified rows (:math:`w^\\top x > 0` predicts 1) for every ``w`` in ``W`` (..., d).

    ``X`` finite of shape (n, d), ``y`` labels 0 and 1 of shape (n,), ``W`` finite.
    """
    X, y = checked_data(X, y)
    W = checked_weights(W, X.shape[1])
    pred = (np.tensordot(W, X, axes=([-1], [1])) > 0)
    return (pred != np.asarray(y, dtype=bool)).mean(axis=-1)


def cross_entropy(W: ArrayLike, X: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Mean test cross-entropy :math:`-\\frac1n\\sum_i\\log p(y_i \\mid w, x_i)` for every ``w`` (nats)."""
    return -log_likelihood(W, X, y) / np.asarray(X).shape[0]
