"""Scoring released naive Bayes models on the test rows, against the limit of one pass and against scipy.

For every dataset of the book, a batch of ``B = 100`` released models (10 budgets x 10 repeats of
the Dirichlet mechanism, as one grid cell row scores them) is scored on the test rows by
:func:`lib.models.naive_bayes.scores` (cross-entropy and accuracy of every model), interleaved with:

* the limit: one pass over the test rows in plain numpy that gathers each row's table entries and
  adds them into the ``(B, n, d)`` joint scores (``prior + sum_k table_k[:, :, x_k]``), with no
  normalisation and no metric: the work any scorer must do (a ratio below 1 means the fused
  scorer, which works through the rows in chunks that stay in cache, beats even this unnormalised
  pass; on the smallest test sets the fixed cost of checking the inputs dominates);
* the peer: the direct computation with scipy, the same gather followed by
  ``scipy.special.logsumexp`` over the classes and the two metrics (the reference of
  tests/models/test_naive_bayes.py).

Printed per dataset: the three times (best of ``--repeats``), the ratios ours / limit (1 is the
limit) and scipy / ours (above 1: ours is faster), and the largest difference of the
cross-entropies (accuracies compared exactly).

Run with ``DIRICHLET_DATA_DIR=... python benchmarks/bench_scoring.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import logsumexp

from _timing import best_with_result as best
from lib.experiments.data import DATASETS
from lib.experiments.preprocessing import prepare
from lib.mechanisms.protocol import get
from lib.models.naive_bayes import count, model_spec, release_parameters
from lib.models.naive_bayes.scoring import scores
from lib.privacy.guarantees import RenyiDP

BUDGETS = np.logspace(-2, 1, 10)


def joint(X, prior, tables):
    """The limit: each row's table entries gathered and summed into (B, n, d) joint scores."""
    return prior[:, None, :] + sum(t[:, :, x].transpose(0, 2, 1) for t, x in zip(tables, X.T))


def with_scipy(X, y, prior, tables):
    """Cross-entropy and accuracy by the gather and scipy's logsumexp over the classes."""
    s = joint(X, prior, tables)
    lp = s - logsumexp(s, axis=-1, keepdims=True)
    ce = -lp[:, np.arange(len(y)), y].mean(axis=-1)
    return ce, (np.argmax(lp, axis=-1) == y).mean(axis=-1)


def released(split, seed=0):
    """(prior, tables) of 10 budgets x 10 releases of the Dirichlet mechanism, stacked."""
    counts = count(split.X_train, split.y_train, split.n_values, split.n_classes)
    spec = model_spec(split.n_values, split.n_classes, len(split.y_train))
    cals = get("dirichlet").calibrate_many([RenyiDP(5.0, float(e)) for e in BUDGETS], spec)
    out = [release_parameters(*counts, cal, n_draws=10, rng=np.random.default_rng(seed + i))
           for i, cal in enumerate(cals)]
    return (np.concatenate([p for p, _ in out]),
            [np.concatenate([t[k] for _, t in out]) for k in range(len(split.n_values))])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    print(f"{'dataset':14s} {'rows':>6s} {'d':>3s} {'ours s':>8s} {'limit s':>8s} {'scipy s':>8s} "
          f"{'ours/limit':>10s} {'scipy/ours':>10s} {'max |dCE|':>10s} {'acc equal':>9s}")
    total = np.zeros(3)
    for name in DATASETS:
        split = prepare(name)
        prior, tables = released(split)
        X, y, nv = np.asarray(split.X_test), np.asarray(split.y_test), np.asarray(split.n_values)
        t = np.full(3, np.inf)
        for _ in range(args.repeats):  # interleaved
            dt, ours = best(lambda: scores(X, y, prior, tables, nv), 1)
            t[0] = min(t[0], dt)
            dt, _ = best(lambda: joint(X, prior, tables), 1)
            t[1] = min(t[1], dt)
            dt, peer = best(lambda: with_scipy(X, y, prior, tables), 1)
            t[2] = min(t[2], dt)
        total += t
        print(f"{name:14s} {len(y):6d} {split.n_classes:3d} {t[0]:8.4f} {t[1]:8.4f} {t[2]:8.4f} {t[0] / t[1]:9.2f}x "
              f"{t[2] / t[0]:9.2f}x {np.max(np.abs(ours[0] - peer[0])):10.2e} {str(np.array_equal(ours[1], peer[1])):>9s}")
    print(f"{'all':14s} {'':6s} {'':3s} {total[0]:8.4f} {total[1]:8.4f} {total[2]:8.4f} {total[0] / total[1]:9.2f}x "
          f"{total[2] / total[0]:9.2f}x")


if __name__ == "__main__":
    main()
