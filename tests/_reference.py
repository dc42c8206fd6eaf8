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
