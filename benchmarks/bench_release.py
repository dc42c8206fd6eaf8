"""Releases against the limit: the random variates they need, drawn by numpy alone.

A release cannot be faster than drawing its noise. For a ``(rows, d)`` batch of histograms this
times, interleaved pair by pair (so that a slow spell of the machine hits both sides alike):

* ``DirichletMechanism.release`` against ``Generator.standard_gamma`` of the same concentrations
  (one Gamma variate per cell; the release adds the normalisation and the checks);
* ``GaussianMechanism.release`` and ``LaplaceMechanism.release`` against ``Generator.normal`` and
  ``Generator.laplace`` of the same shape (the release adds clipping and normalisation);
* the posterior samplers' ``log_release_tables`` (``geumlek_diffused``, Adult-like naive Bayes
  tables, 40 draws each) against ``Generator.standard_gamma`` of the same number of variates.

Printed: both times (best of the pairs) and the ratio release / draws; 1 is the limit. The median
ratio over the pairs is printed too (less sensitive to one lucky draw). Only the ratios are meant to
carry over between machines.

Run with ``python benchmarks/bench_release.py [--rows 10000] [--pairs 15]``.
"""

from __future__ import annotations

import argparse

import numpy as np

from _timing import best_of
from lib import DirichletMechanism, GaussianMechanism, LaplaceMechanism
from lib.privacy.guarantees import RenyiDP
from lib.mechanisms.protocol import ReleaseSpec, get


def pairs(release, draws, n_pairs, repeat=3):
    """Best and median of ``n_pairs`` interleaved (release, draws) timings, as (t_release, t_draws, median ratio)."""
    out = np.array([(best_of(release, repeat=repeat), best_of(draws, repeat=repeat)) for _ in range(n_pairs)])
    best = out.min(axis=0)
    return best[0], best[1], float(np.median(out[:, 0] / out[:, 1]))


def report(label, limit, t_release, t_draws, median):
    print(f"  {label:34s} {t_release * 1e3:8.2f} ms  {limit:28s} {t_draws * 1e3:8.2f} ms  "
          f"ratio {t_release / t_draws:5.2f}x (median {median:5.2f}x)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000, help="histograms per batch (d = 10 cells each)")
    p.add_argument("--pairs", type=int, default=15, help="interleaved (release, draws) pairs")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 1000, size=(args.rows, 10)).astype(float)
    print(f"release of a ({args.rows}, 10) batch of histograms against its variates drawn alone")

    mech = DirichletMechanism(1.0, 5.0)
    shape = mech.concentration(counts)
    report("DirichletMechanism.release", "Generator.standard_gamma",
           *pairs(lambda: mech.release(counts, rng=np.random.default_rng(1)),
                  lambda: np.random.default_rng(1).standard_gamma(shape), args.pairs))
    gauss = GaussianMechanism(1.0, 5.0)
    report("GaussianMechanism.release", "Generator.normal",
           *pairs(lambda: gauss.release(counts, rng=np.random.default_rng(1)),
                  lambda: np.random.default_rng(1).normal(0.0, gauss.sigma, counts.shape), args.pairs))
    laplace = LaplaceMechanism(1.0, 5.0)
    report("LaplaceMechanism.release", "Generator.laplace",
           *pairs(lambda: laplace.release(counts, rng=np.random.default_rng(1)),
                  lambda: np.random.default_rng(1).laplace(0.0, laplace.scale, counts.shape), args.pairs))

    # Adult-like naive Bayes tables: the class table and 2-row tables of the attributes' sizes.
    sizes = (10, 9, 17, 10, 8, 15, 7, 6, 3, 10, 10, 10, 42)
    n_total, n_draws = 34189, 40
    tables = [rng.multinomial(n_total, np.ones(2) / 2).astype(float)]
    tables += [rng.multinomial(n_total, np.ones(2 * d) / (2 * d)).reshape(2, d).astype(float) for d in sizes]
    spec = ReleaseSpec(((1, 2),) + tuple((2, d) for d in sizes), n_total)
    cls = get("geumlek_diffused")
    objects = cls.calibrate(RenyiDP(5.0, 1.0), spec).releases
    alpha = np.concatenate([np.broadcast_to(t, (n_draws,) + np.shape(t)).ravel() + 1.0 for t in tables])
    report(f"geumlek_diffused, {len(tables)} tables x {n_draws}", "Generator.standard_gamma",
           *pairs(lambda: cls.log_release_tables(objects, tables, n_draws, np.random.default_rng(1)),
                  lambda: np.random.default_rng(1).standard_gamma(alpha), args.pairs))


if __name__ == "__main__":
    main()
