"""Speed of the vectorised core, as ratios against baselines timed in the same run.

1. ``calibrate`` on 10^4 targets at once against a Python loop of scalar
   ``scipy.optimize.brentq`` solves of Line 1 (same function, same bracket, same
   accuracy): the target is a ratio of at least 20.
2. ``DirichletMechanism.release`` on a (10^4, 10) batch of histograms against
   ``Generator.standard_gamma`` on the same shape alone (the unavoidable work):
   the target is a ratio of at most 1.5.

Run with ``make benchmark`` (or ``python benchmarks/bench_mechanism.py``). Timings are
the best of several repeats; only the ratios are meant to carry over between machines.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from _timing import best_of
from lib import DirichletMechanism, calibrate, rdp_epsilon


def scalar_loop(epsilons: np.ndarray, lam: float, l2_sq: float = 2.0, linf: float = 1.0) -> np.ndarray:
    """Line 1 solved one target at a time with brentq, on the bracket calibrate uses."""
    k, c = 0.5 * lam * l2_sq, 3 * (lam - 1) * linf
    out = np.empty_like(epsilons)
    for i, eps in enumerate(epsilons):
        lo = np.sqrt(eps / (k * np.pi**2 / 6))
        hi = (eps * c + np.sqrt((eps * c) ** 2 + 4 * k * eps)) / (2 * k)
        out[i] = np.exp(optimize.brentq(
            lambda t: np.log(k) + 2 * t + np.log(special.zeta(2, 1 + c * np.exp(t))) - np.log(eps),
            np.log(lo), np.log(hi), xtol=1e-14, rtol=4 * np.finfo(float).eps))
    return out


def main() -> None:
    rng = np.random.default_rng(0)
    lam = 5.0
    eps = np.exp(rng.uniform(np.log(1e-6), np.log(1e4), 10_000))

    vectorised = calibrate(eps, lam).r
    looped = scalar_loop(eps, lam)
    agree = np.max(np.abs(vectorised / looped - 1))
    round_trip = np.max(np.abs(rdp_epsilon(vectorised, lam) / eps - 1))
    t_vec = best_of(lambda: calibrate(eps, lam))
    t_loop = best_of(lambda: scalar_loop(eps, lam), repeat=3)
    print("calibrate, 10^4 targets (lambda = 5, epsilon log-uniform on [1e-6, 1e4])")
    print(f"  vectorised calibrate : {t_vec * 1e3:8.1f} ms")
    print(f"  loop of brentq       : {t_loop * 1e3:8.1f} ms")
    print(f"  speed-up             : {t_loop / t_vec:8.1f}x   (target >= 20x)")
    print(f"  max |r_vec / r_loop - 1| = {agree:.1e}; max round-trip error of epsilon = {round_trip:.1e}")

    mech = DirichletMechanism(1.0, lam)
    counts = rng.integers(0, 1000, size=(10_000, 10)).astype(float)
    shape = mech.concentration(counts)
    # Interleaved pairs, so that a slow spell of the machine hits both sides alike.
    pairs = np.array([
        (best_of(lambda: mech.release(counts, rng=np.random.default_rng(1)), repeat=3),
         best_of(lambda: np.random.default_rng(1).standard_gamma(shape), repeat=3))
        for _ in range(15)
    ])
    t_release, t_gamma = pairs.min(axis=0)
    print("release, (10^4, 10) histograms")
    print(f"  DirichletMechanism.release : {t_release * 1e3:7.2f} ms")
    print(f"  Generator.standard_gamma   : {t_gamma * 1e3:7.2f} ms")
    print(f"  ratio of the best times    : {t_release / t_gamma:7.2f}x  (target <= 1.5x)")
    print(f"  median ratio of 15 pairs   : {np.median(pairs[:, 0] / pairs[:, 1]):7.2f}x")


if __name__ == "__main__":
    main()
