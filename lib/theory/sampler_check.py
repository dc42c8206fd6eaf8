"""How close the book's logistic-posterior sampler is to its target: a check against a long reference run.

Theorems 16 and 17 of Geumlek, Song and Chaudhuri (NeurIPS 2017) are about *exact* samples of
the posterior :math:`p_{\\beta,\\rho}(w \\mid D)` of their eq. (6). The book draws with
:func:`lib.models.logistic_regression.sample` (independence Metropolis-Hastings from the
Laplace approximation, a few sweeps per chain). :func:`check_sampler` compares those draws
with long chains of a different kernel (MALA alone, started at the mode) on statistics a
chapter cares about: the margins :math:`w^\\top x` of the first two test rows and the test error.
The reference is a Markov chain, so the standard error of its mean uses its effective sample
size (Geyer's initial positive sequence, :func:`lib.models.logistic_regression.effective_sample_size`;
batch means are reported beside it as a second estimate); the difference of the two means
divided by its standard error is a z-score, and three standard errors is the bias the check
could not detect.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from lib import validation
from lib.models.logistic_regression import (effective_sample_size, effective_sample_size_batch_means,
                                            error_rate, mode, sample, Settings)

__all__ = ["SamplerCheck", "check_sampler"]


class SamplerCheck(NamedTuple):
    """What :func:`check_sampler` finds for one posterior.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per statistic ("margin 1", "margin 2", "test error"), columns ``ours`` and
        ``reference`` (means), ``ref ESS`` and ``ref ESS (batch means)`` (the reference's
        effective sample size, two estimators), ``z`` (difference of the means over its
        standard error) and ``detectable`` (three standard errors: a bias of the mean the
        check could miss).
    acceptance_independence : float
        Share of accepted independence proposals of the book's sampler.
    acceptance_mala : float
        Share of accepted MALA proposals of the reference.
    """

    table: pd.DataFrame
    acceptance_independence: float
    acceptance_mala: float


def check_sampler(data: Any, setting: Settings, seed: int, *, n_sweeps: int, n_ref_chains: int, n_ref_steps: int,
                  burn: int, thin: int = 4, n_ours: int = 100, mala_step: float = 0.6) -> list[SamplerCheck]:
    """The book's draws (``n_sweeps`` sweeps of independence MH) against long chains of MALA alone.

    Both runs share the posteriors' modes and Hessians (one :func:`mode` call). The book's
    sampler draws ``n_ours`` releases per posterior (seed ``seed``); the reference runs
    ``n_ref_chains`` chains of ``n_ref_steps`` MALA steps from the mode (seed ``seed + 1``),
    recording the test rows' margins every ``thin`` steps and dropping the first ``burn``
    steps.

    Parameters
    ----------
    data : object
        With ``X_train``, ``y_train``, ``X_test``, ``y_test`` (e.g. a
        :class:`lib.experiments.glm.GLMData`); at least two test rows.
    setting : Settings
        The posteriors to check (:func:`lib.models.logistic_regression.settings`).
    seed : int
        Seed of the book's draws; the reference uses ``seed + 1``.
    n_sweeps : int
        Sweeps per chain of the book's sampler.
    n_ref_chains, n_ref_steps, burn, thin : int
        The reference's chains, steps, discarded steps (a multiple of ``thin`` is exact) and
        recording interval.
    n_ours : int
        Releases of the book's sampler per posterior.
    mala_step : float
        The reference's MALA step in units of the inverse Hessian.

    Returns
    -------
    list of SamplerCheck
        One per posterior of ``setting``, in order.
    """
    seed = validation.integer(seed, "seed", low=0)
    burn = validation.integer(burn, "burn", low=0)
    thin = validation.integer(thin, "thin")
    n_ref_steps = validation.integer(n_ref_steps, "n_ref_steps")
    if n_ref_steps // thin - burn // thin < 4:
        raise ValueError(f"burn must leave at least 4 recorded steps of the reference (its batch-means effective "
                         f"sample size needs them); got burn = {burn} of n_ref_steps = {n_ref_steps}, "
                         f"recorded every {thin}")
    if np.shape(data.X_test)[0] < 2:
        raise ValueError("data must hold at least two test rows (their margins are compared)")
    mode_cache = mode(data.X_train, data.y_train, setting.beta, setting.rho)
    ours = sample(data.X_train, data.y_train, setting, n_ours, n_sweeps, rng=seed, mode_cache=mode_cache)
    ref = sample(data.X_train, data.y_train, setting, n_ref_chains, n_ref_steps, rng=seed + 1,
                 independence=False, mala_steps=1, mala_step=mala_step, probe=data.X_test.T, thin=thin,
                 mode_cache=mode_cache)
    out = []
    for s in range(len(setting.beta)):
        margins = ours.w[s] @ data.X_test.T
        tr = ref.trace[s][:, burn // thin:]  # (chains, records, test rows)
        stats = (("margin 1", margins[:, 0], tr[..., 0]), ("margin 2", margins[:, 1], tr[..., 1]),
                 ("test error", error_rate(ours.w[s], data.X_test, data.y_test),
                  ((tr > 0) != data.y_test.astype(bool)).mean(-1)))
        rows = {}
        for name, mine, r in stats:
            ess = float(effective_sample_size(r))
            ess_bm = float(effective_sample_size_batch_means(r))
            se = np.sqrt(mine.var() / len(mine) + r.var() / ess)
            rows[name] = {"ours": mine.mean(), "reference": r.mean(), "ref ESS": ess, "ref ESS (batch means)": ess_bm,
                          "z": (mine.mean() - r.mean()) / se if se > 0 else 0.0, "detectable": 3 * se}
        out.append(SamplerCheck(pd.DataFrame(rows).T, ours.acceptance_independence[s], ref.acceptance_mala[s]))
    return out
