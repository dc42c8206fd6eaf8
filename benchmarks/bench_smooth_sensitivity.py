"""Smooth sensitivity (``lib.mechanisms.smooth_sensitivity``) against the naive scan and its definition, and Zafarani-Clifton's runtime claim.

1. Our standard-deviation bound against the naive quadratic scan of the same
   quantity (``smooth_sensitivity_std_naive``: every window of every size, no
   early stop), on Adult-like integer data (ages, 74 distinct values) and on
   continuous data, for several n and beta; the two must agree to 1e-9 (the
   exact fast path) and the ratio naive / fast is reported. The rounded fast
   path (``resolution=4096``) is timed too, with its relative excess over the
   exact bound.
2. Their runtime claim (Section 7.3, Figure 13): training with smooth
   sensitivity costs "nearly an order of magnitude" more than with global
   sensitivity at 5000 rows, "half an order of magnitude" at a million. We time
   ``gnb.fit_statistics`` for ``"zc"`` (Theorem 2) against ``"vaidya"`` on
   Adult resampled to n rows, and report the ratio.

3. Chapter 13's experiments against their definitions and scipy, in the same
   run, each asserted equal value by value: the trimmed mean's sensitivity
   profile by runs of equal lower ends against its definition (the maximum over
   every lower end); ``log_proba`` (rows last, in place) against the formula on
   (draws, rows, classes) with ``scipy.special.logsumexp`` (the peer).

Run with ``python benchmarks/bench_smooth_sensitivity.py [--quick]`` (a few
minutes; ``--quick`` uses smaller n). Timings are the best of several repeats;
only the ratios are meant to carry over between machines.
"""

from __future__ import annotations

import argparse

import numpy as np

import _timing as timing
from lib.models import mixed_naive_bayes as gnb
from lib.experiments.tasks import mixed_naive_bayes as mixed
from lib.mechanisms import smooth_sensitivity as ss


def best_of(func, repeat: int = 3) -> float:
    return timing.best_of(func, repeat=repeat)


def bench_std(sizes, betas, rng):
    print("1. smooth sensitivity of the standard deviation: naive quadratic scan vs ours")
    print(f"{'data':>10} {'n':>7} {'beta':>7} {'naive s':>9} {'fast s':>9} {'ratio':>8} "
          f"{'rounded s':>10} {'ratio':>8} {'excess':>8}")
    for kind in ("integer", "continuous"):
        for n in sizes:
            x = (rng.integers(17, 91, n).astype(float) if kind == "integer"
                 else rng.gamma(4.0, 10.0, n).clip(0, 125))
            for beta in betas:
                exact = ss.smooth_sensitivity_std(x, 0, 125, beta)
                naive = ss.smooth_sensitivity_std_naive(x, 0, 125, beta)
                assert abs(exact - naive) <= 1e-9 * naive, (exact, naive)
                rounded = ss.smooth_sensitivity_std(x, 0, 125, beta, resolution=4096)
                assert rounded >= exact
                t_naive = best_of(lambda: ss.smooth_sensitivity_std_naive(x, 0, 125, beta), repeat=1)
                t_fast = best_of(lambda: ss.smooth_sensitivity_std(x, 0, 125, beta))
                t_round = best_of(lambda: ss.smooth_sensitivity_std(x, 0, 125, beta, resolution=4096))
                print(f"{kind:>10} {n:>7} {beta:>7.3g} {t_naive:>9.3f} {t_fast:>9.4f} {t_naive / t_fast:>8.1f} "
                      f"{t_round:>10.4f} {t_naive / t_round:>8.1f} {rounded / exact - 1:>8.2e}")


def bench_training(sizes, rng, epsilon=1.0):
    print("\n2. their runtime claim: training time, smooth (Algorithm 1) / global (Vaidya et al.)")
    adult = mixed.mixed_data("Adult")
    print(f"{'n':>9} {'global s':>9} {'smooth s':>9} {'ratio':>7}")
    for n in sizes:
        idx = rng.integers(0, len(adult["y"]), n)
        args = (adult["X_cat"][idx], adult["X_num"][idx], adult["y"][idx], adult["n_values"], 2, adult["bounds"])
        t_g = best_of(lambda: gnb.fit_statistics(*args, method="vaidya", epsilon=epsilon))
        t_s = best_of(lambda: gnb.fit_statistics(*args, method="zc", epsilon=epsilon))
        print(f"{n:>9} {t_g:>9.4f} {t_s:>9.4f} {t_s / t_g:>7.1f}")


def _trimmed_every_lower_end(x, lower, upper, m, ks):
    """The closed form as printed: the maximum over every lower end l, one pass per l."""
    n = x.size
    kc = np.minimum(ks, 2 * m + 1)
    ext = np.concatenate([[lower], x, [upper]])
    out = np.full(kc.shape, -np.inf)
    for ell in range(m + 2):
        diff = ext[np.minimum(n - m + 1 + kc - ell, n + 1)] - ext[m + 1 - ell]
        out = np.where(ell <= kc + 1, np.maximum(out, diff), out)
    return out / (n - 2 * m)


def _log_proba_plain(params, X_cat, X_num):
    from scipy.special import logsumexp
    bounds = params["bounds"]
    X_num = np.clip(X_num, bounds[:, 0], bounds[:, 1])
    lp = params["log_prior"]
    scores = np.broadcast_to(lp[:, None, :], (lp.shape[0], X_num.shape[0], lp.shape[1])).copy()
    for j, lt in enumerate(params["log_tables"]):
        scores += np.moveaxis(lt[:, :, X_cat[:, j]], 1, 2)
    for j in range(X_num.shape[1]):
        m, s = params["mu"][:, None, :, j], params["sd"][:, None, :, j]
        z = (X_num[None, :, j, None] - m) / s
        scores += -0.5 * z * z - np.log(s) - 0.5 * np.log(2 * np.pi)
    return scores - logsumexp(scores, axis=-1, keepdims=True)


def bench_fast_paths(rng):
    print("\n3. chapter 13's faster paths against the plain computations (equal value by value)")
    print(f"{'computation':>44} {'plain s':>9} {'fast s':>9} {'ratio':>7}")

    def row(label, plain, fast, repeat=3):
        np.testing.assert_array_equal(fast(), plain())
        t_plain, t_fast = best_of(plain, repeat=repeat), best_of(fast, repeat=repeat)
        print(f"{label:>44} {t_plain:>9.4f} {t_fast:>9.4f} {t_plain / t_fast:>7.1f}")

    n, m = 33000, 1650
    ks = np.arange(2 * m + 2)
    ages = np.sort(rng.integers(17, 91, n).astype(float))
    cont = np.sort(rng.gamma(4.0, 10.0, n).clip(0, 125))
    for label, x in (("ages", ages), ("continuous", cont)):
        row(f"trimmed-mean A^(k), {label}, n={n}, m={m}", lambda x=x: _trimmed_every_lower_end(x, 0.0, 125.0, m, ks),
            lambda x=x: ss.trimmed_mean_sensitivity_at_distance(x, 0.0, 125.0, m, ks))
    adult = mixed.mixed_data("Adult")
    train, test = mixed.book_split(len(adult["y"]))
    st = gnb.fit_statistics(adult["X_cat"][train], adult["X_num"][train], adult["y"][train], adult["n_values"], 2,
                            adult["bounds"], method="zc", epsilon=1.0)
    params = gnb.draw(st, 40, 0)
    Xc, Xn = adult["X_cat"][test], adult["X_num"][test]
    row("log_proba, Adult test rows x 40 releases", lambda: _log_proba_plain(params, Xc, Xn),
        lambda: gnb.log_proba(params, Xc, Xn))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    sizes = [1000, 4000] if args.quick else [1000, 4000, 16000]
    bench_std(sizes, [0.001, 0.01], rng)
    bench_training([5000, 50000] if args.quick else [5000, 50000, 1_000_000], rng)
    bench_fast_paths(rng)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
