"""Accuracy and speed of Gohari et al.'s guarantee (``lib.mechanisms.gohari``), against mpmath.

1. Accuracy: over random settings of the experiments (lambda in {2, 5, 20, 200},
   d from 2 to 20, N log-uniform on [100, 50000], r calibrated for eps_hat
   log-uniform on [1e-3, 1e2] at delta = 1e-5), the thresholds gamma of
   delta = 1e-9, 1e-5 and 1e-3; ``gohari_delta`` and ``gohari_epsilon_at`` there
   against mpmath at 50 digits (``delta_reference`` by inclusion-exclusion, and
   the direct reference on the smaller settings). Target: worst relative error
   below 1e-8.
2. Speed, as ratios against baselines timed in the same run: one
   ``gohari_delta`` evaluation (a scalar gamma) against one scalar
   ``scipy.special.betainc`` call and against the mpmath reference of the same
   value; one ``gohari_epsilon`` (the root gamma) and one ``gohari_calibrate``
   (the root r), with their absolute times (target: calibration well under 0.1 s).

Run with ``python benchmarks/bench_gohari.py [--quick]`` (a few minutes; ``--quick``: 8 accuracy and 2 speed settings). Timings are the
best of several repeats; only the ratios are meant to carry over between machines.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import special

from _timing import best_of

from lib.mechanisms.gohari import gohari_calibrate, gohari_delta, gohari_epsilon, gohari_epsilon_at
from lib.mechanisms.gohari.core import params, union_tail, vertices
from lib.mechanisms.gohari.reference import delta_reference, epsilon_reference


def random_settings(n: int, rng: np.random.Generator):
    """(r, lam, n_total, d) with r calibrated at delta = 1e-5 for a random eps_hat."""
    out = []
    for _ in range(n):
        lam = float(rng.choice([2, 5, 20, 200]))
        d = int(rng.integers(2, 21))
        n_total = float(np.round(np.exp(rng.uniform(np.log(100), np.log(50_000)))))
        eps_hat = float(np.exp(rng.uniform(np.log(1e-3), np.log(1e2))))
        r = gohari_calibrate(eps_hat, 1e-5, lam=lam, n_total=n_total, d=d).r
        out.append((r, lam, n_total, d))
    return out


def accuracy(settings, *, direct_limit: float = 200.0):
    """Worst relative errors of delta and eps_hat against mpmath."""
    worst_delta = worst_eps = worst_direct = 0.0
    n_direct = n_points = 0
    worst_case = None
    for r, lam, n_total, d in settings:
        verts = vertices(params(r, lam, n_total, d, 0), d == 2)
        for target in (1e-9, 1e-5, 1e-3):
            gamma = gohari_epsilon(r, target, lam=lam, n_total=n_total, d=d).gamma
            ours = union_tail(np.array([gamma]), verts)[:, 0]
            for v, value in zip(verts, ours):
                ref = float(delta_reference(gamma, v, method="inclusion_exclusion"))
                err = abs(value / ref - 1)
                if err > worst_delta:
                    worst_delta, worst_case = err, (r, lam, n_total, d, target)
                if v.sum() <= direct_limit and target == 1e-5:
                    direct = float(delta_reference(gamma, v, method="direct"))
                    worst_direct = max(worst_direct, abs(value / direct - 1))
                    n_direct += 1
                n_points += 1
            eps = gohari_epsilon_at(gamma, r, lam=lam, n_total=n_total, d=d)
            eps_ref = float(epsilon_reference(gamma, r, lam=lam, n_total=n_total, d=d))
            worst_eps = max(worst_eps, abs(eps / eps_ref - 1))
    return worst_delta, worst_eps, worst_direct, n_points, n_direct, worst_case


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="8 random settings for the accuracy check, not 40; 2 speed settings, not 4")
    args = p.parse_args(argv)
    rng = np.random.default_rng(5)
    t0 = time.perf_counter()
    settings = random_settings(8 if args.quick else 40, rng)
    wd, we, wdir, n_pts, n_dir, case = accuracy(settings)
    print(f"accuracy against mpmath (50 digits), {len(settings)} settings, "
          f"{n_pts} vertex values, {time.perf_counter() - t0:.0f} s")
    print(f"  worst relative error of delta (inclusion-exclusion reference): {wd:.1e}"
          f"   (target < 1e-8; at r, lam, N, d, delta = {case})")
    print(f"  worst relative error of delta (direct reference, {n_dir} values): {wdir:.1e}")
    print(f"  worst relative error of eps_hat: {we:.1e}")

    # speed, on Figure 3's setting and the extremes
    print("speed (best of 5)")
    t_betainc = best_of(lambda: special.betainc(5.0, 1300.0, 1e-4), number=2000)
    print(f"  baseline: one scalar scipy.special.betainc: {t_betainc * 1e6:.1f} us")
    speed_settings = [(0.05, 2, 1283, 6), (3.4, 200, 1283, 6), (1e-3, 5, 50_000, 20), (0.1, 20, 100, 2)]
    if args.quick:  # the mpmath reference of the two large settings takes minutes
        speed_settings = [speed_settings[0], speed_settings[-1]]
    for r, lam, n_total, d in speed_settings:
        kw = dict(lam=lam, n_total=n_total, d=d)
        g = gohari_epsilon(r, 1e-5, **kw)
        t_delta = best_of(lambda: gohari_delta(g.gamma, r, lam, n_total, d), number=200)
        verts = vertices(params(r, lam, n_total, d, 0), d == 2)
        t_mp = best_of(lambda: [delta_reference(g.gamma, v, method="inclusion_exclusion")
                                for v in verts], repeat=1)
        t_eps = best_of(lambda: gohari_epsilon(r, 1e-5, **kw), number=20)
        t_cal = best_of(lambda: gohari_calibrate(g.epsilon_hat, 1e-5, **kw), repeat=3)
        print(f"  r = {r:g}, lam = {lam:g}, N = {n_total:g}, d = {d}:")
        print(f"    delta(gamma)    {t_delta * 1e6:8.0f} us = {t_delta / t_betainc:6.0f} x betainc"
              f" = 1/{t_mp / t_delta:.0f} of the mpmath reference")
        print(f"    gohari_epsilon  {t_eps * 1e3:8.2f} ms = {t_eps / t_delta:6.1f} x delta(gamma)")
        print(f"    gohari_calibrate{t_cal * 1e3:8.1f} ms = {t_cal / t_delta:6.0f} x delta(gamma)"
              f"   (target < 100 ms)")


if __name__ == "__main__":
    main()
