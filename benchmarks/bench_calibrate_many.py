"""Calibrating many targets at once against one scipy root-finding per target (the peer a user would write).

1. The Dirichlet mechanism's ``calibrate`` (Line 1 of Algorithm 1 for the scale r) on 10^4 targets
   at once against a Python loop of scalar ``scipy.optimize.brentq`` solves of the same equation
   (same bracket, same accuracy); the scales are compared.
2. The diffused posterior sampler's ``calibrate_many`` (every table shape and every budget in one
   vectorised search) against ``scipy.optimize.brentq`` per budget and shape on the public
   ``worst_case`` (the exact worst-case Rényi divergence of one release, the same quantity the
   search bounds): Adult's naive Bayes shapes, Rényi-DP targets at order 5 split over the tables.
3. The (eps_hat, delta) calibrations of the book's approximate-DP naive Bayes grid (Dirichlet,
   Gohari et al., Gaussian, Laplace; 10 budgets) by ``calibrate_many`` against one ``calibrate``
   call per budget (the public API in a loop); the parameters are asserted equal.

Printed: both times (best of ``--repeats``) and the ratio peer / ours (above 1: ours is faster).
Only the ratios are meant to carry over between machines.

Run with ``python benchmarks/bench_calibrate_many.py [--quick]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import optimize, special

from _timing import best_with_result as best
from lib import calibrate
from lib.mechanisms import posterior_sampling as ps
from lib.mechanisms.protocol import ReleaseSpec, get
from lib.models.naive_bayes import model_spec
from lib.privacy.guarantees import ApproximateDP, RenyiDP

#: Adult's naive Bayes table shapes and training size.
ADULT = ReleaseSpec(((1, 2),) + ((2, 10), (2, 9), (2, 17), (2, 10), (2, 8), (2, 15), (2, 7), (2, 6), (2, 3),
                                 (2, 10), (2, 10), (2, 10), (2, 42)), 34189)


def line1_brentq(epsilons, lam, l2_sq=2.0, linf=1.0):
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


def posterior_brentq(eps, lam, spec):
    """{shape: scales}: the largest scale r of the diffused posterior with worst case <= eps, one brentq each."""
    def one(e, shape):
        rows, d = shape

        def gap(log_r):
            wc = ps.worst_case(1.0, np.exp(log_r), lam, spec.n_total, rows=rows, d=d, kind="diffused")
            return np.log(np.clip(wc, 1e-300, 1e300)) - np.log(e)  # 0 far below, inf above lambda*

        if gap(0.0) <= 0:
            return 1.0  # the true posterior already meets the target
        return float(np.exp(optimize.brentq(gap, -60.0, 0.0, xtol=1e-12, rtol=4 * np.finfo(float).eps)))

    return {sh: np.array([one(e, sh) for e in eps]) for sh in sorted(set(spec.shapes))}


def bench_dirichlet(n, repeats):
    rng = np.random.default_rng(0)
    lam = 5.0
    eps = np.exp(rng.uniform(np.log(1e-6), np.log(1e4), n))
    t_ours, ours = best(lambda: calibrate(eps, lam).r, repeats)
    t_peer, peer = best(lambda: line1_brentq(eps, lam), max(1, repeats // 2))
    print(f"1. Dirichlet calibrate, {n} targets (lambda = 5, epsilon log-uniform on [1e-6, 1e4])")
    print(f"   calibrate {t_ours * 1e3:8.1f} ms; scipy brentq per target {t_peer * 1e3:8.1f} ms; "
          f"ratio peer / ours {t_peer / t_ours:6.1f}x; max |r / r_brentq - 1| = {np.max(np.abs(ours / peer - 1)):.1e}")


def bench_posterior(budgets, repeats):
    m = len(ADULT.shapes)
    cls = get("geumlek_diffused")
    targets = [RenyiDP(5.0, float(b)) for b in budgets]
    t_ours, cals = best(lambda: cls.calibrate_many(targets, ADULT), repeats)
    t_peer, peer = best(lambda: posterior_brentq(np.asarray(budgets) / m, 5.0, ADULT), 1)
    err = max(abs(o.scale / peer[sh][k] - 1) for k, cal in enumerate(cals)
              for o, sh in zip(cal.releases, ADULT.shapes))
    print(f"2. diffused posterior, Adult's {m} tables x {len(budgets)} budgets (RDP at order 5)")
    print(f"   calibrate_many {t_ours:7.3f} s; scipy brentq per budget and shape on worst_case {t_peer:7.3f} s; "
          f"ratio peer / ours {t_peer / t_ours:6.1f}x; max relative difference of the scales {err:.1e}")


def bench_approximate(repeats):
    try:
        from lib.experiments.preprocessing import prepare

        split = prepare("Adult")
        spec, data = model_spec(split.n_values, split.n_classes, len(split.y_train)), "Adult"
    except Exception as exc:  # noqa: BLE001 - the benchmark runs without the data too
        print(f"   (UCI data not available: {type(exc).__name__}; Adult's shapes typed in)")
        spec, data = ADULT, "Adult (typed-in shapes)"
    targets = [ApproximateDP(float(e), 1e-5) for e in np.logspace(-1, 1, 10)]
    print(f"3. (eps_hat, delta = 1e-5) calibrations, {data} naive Bayes, {len(targets)} budgets")
    for name in ("dirichlet", "gohari", "gaussian", "laplace"):
        cls = get(name)
        t_ours, many = best(lambda: cls.calibrate_many(targets, spec), repeats)
        t_loop, loop = best(lambda: [cls.calibrate(t, spec) for t in targets], repeats)
        assert [c.parameters for c in many] == [c.parameters for c in loop]
        print(f"   {name:10s} calibrate_many {t_ours:7.3f} s; one calibrate per budget {t_loop:7.3f} s; "
              f"ratio loop / ours {t_loop / t_ours:5.1f}x (parameters equal)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="10^3 Dirichlet targets, 3 posterior budgets, 1 repeat")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    bench_dirichlet(1_000 if args.quick else 10_000, repeats)
    bench_posterior(np.logspace(-2, 1, 3 if args.quick else 10), repeats)
    bench_approximate(repeats)


if __name__ == "__main__":
    main()
