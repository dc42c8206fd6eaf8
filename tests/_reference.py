"""Shared test helpers: neighbouring histograms and high-precision references."""

from __future__ import annotations

import mpmath as mp
import numpy as np


def neighbour(counts, kind: str, i: int, j: int) -> np.ndarray:
    """A histogram that differs from ``counts`` by one record.

    ``kind`` is ``"add"`` (one record in bin ``i``), ``"remove"`` (one record of
    bin ``i``, which must be non-empty) or ``"replace"`` (a record moves from bin
    ``i`` to bin ``j != i``). Every such pair has ``||f - f'||_2^2 <= 2`` and
    ``||f - f'||_inf <= 1``, the sensitivities of Algorithm 1's defaults.
    """
    out = np.array(counts, dtype=float)
    if kind == "add":
        out[i] += 1
    elif kind == "remove":
        out[i] -= 1
    elif kind == "replace":
        out[i] -= 1
        out[j] += 1
    else:
        raise AssertionError(kind)
    assert np.all(out >= 0)
    return out


def mp_renyi_dirichlet(u, v, lam, dps: int = 60) -> float:
    """Eq. (16)-(17) evaluated in mpmath at ``dps`` digits, for reference."""
    with mp.workdps(dps):
        u = [mp.mpf(float(x)) for x in u]
        v = [mp.mpf(float(x)) for x in v]
        lam = mp.mpf(float(lam))

        def log_beta(a):
            return mp.fsum(mp.loggamma(x) for x in a) - mp.loggamma(mp.fsum(a))

        if lam == 1:
            u0 = mp.fsum(u)
            value = log_beta(v) - log_beta(u) + mp.fsum(
                (a - b) * (mp.digamma(a) - mp.digamma(u0)) for a, b in zip(u, v)
            )
        else:
            w = [a + (lam - 1) * (a - b) for a, b in zip(u, v)]
            value = log_beta(v) - log_beta(u) + (log_beta(w) - log_beta(u)) / (lam - 1)
        return float(value)


def refused_quickly(func, match, *, exc=ValueError, seconds=2.0):
    """``func()`` raises ``exc`` matching ``match`` within ``seconds``: an absurd size is refused
    before any allocation or work starts (the bound is far above the refusal's own cost, so only a
    computation that started, not a slow machine, can exceed it)."""
    import time

    import pytest

    start = time.monotonic()
    with pytest.raises(exc, match=match):
        func()
    assert time.monotonic() - start < seconds


def random_nb_models(rng, B, d, n_values, spread=3.0):
    """``B`` random naive Bayes models (log prior of ``d`` classes, one log table per attribute)."""
    prior = np.log(rng.dirichlet(np.ones(d), size=B))
    tables = [np.log(rng.dirichlet(np.full(v, 1.0 / spread), size=(B, d))) for v in n_values]
    return prior, tables


def nb_scores_by_direct_sum(X, y, prior, tables):
    """Log-probabilities, cross-entropy and accuracy of naive Bayes models by a direct sum over the
    tables, normalised with scipy's logsumexp: the plain computation the fused scorers are checked against."""
    from scipy.special import logsumexp

    s = prior[:, None, :] + sum(t[:, :, x].transpose(0, 2, 1) for t, x in zip(tables, X.T))  # (B, n, d)
    lp = s - logsumexp(s, axis=-1, keepdims=True)
    ce = -lp[:, np.arange(len(y)), y].mean(axis=-1)
    acc = (np.argmax(lp, axis=-1) == y).mean(axis=-1)
    return lp, ce, acc


def exact_level_by_bisection(eps_hat, delta, lam, n):
    """The largest RDP level at ``lam`` whose ``n`` composed exact curves meet ``(eps_hat, delta)``, by
    plain bisection: the accountant converts the curves of the mechanism's own guarantee; the level is
    halved or doubled until it brackets the boundary, then bisected in log to 1e-12 (relative),
    keeping the end that meets the target."""
    from lib import DirichletMechanism
    from lib.privacy.accountant import Accountant

    def meets(eps):
        return Accountant().add(DirichletMechanism(eps, lam).guarantee, n).epsilon(delta).epsilon <= eps_hat

    lo = 1e-3
    while not meets(lo):
        lo /= 4
    hi = 2 * lo
    while meets(hi):
        lo, hi = hi, 2 * hi
    while np.log(hi / lo) > 1e-12:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    return lo
