"""The naive Bayes grid's scorer: fused one-pass scores against the pre-issue-17 computation.

For every dataset of the book, a batch of ``B = 100`` released models (10
budgets x 10 repeats of the Dirichlet mechanism, as one grid cell row scores
them) is scored on the test rows twice, interleaved: by
:func:`lib.models.naive_bayes.scores` (gathered table rows, contiguous scores,
``logaddexp`` for two classes, both metrics in one pass over row chunks), and
by the computation it replaced (a sparse indicator product, scipy's
``logsumexp`` over a transposed ``(B, n, d)`` array, then cross-entropy and
accuracy in two more passes). Prints both times (best of ``--repeats``), their
ratio, and the largest differences of the two results.

Run with ``DIRICHLET_DATA_DIR=... python benchmarks/bench_scoring.py``.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import sparse
from scipy.special import logsumexp

from _timing import best_with_result as best
from lib.experiments import grid as G
from lib.experiments.data import DATASETS
from lib.experiments.preprocessing import prepare
from lib.models.naive_bayes.scoring import scores


def before(X, y, prior, tables, n_values):
    """The pre-issue-17 scorer, for comparison only."""
    offsets = np.concatenate([[0], np.cumsum(n_values)[:-1]])
    n, K = X.shape
    one_hot = sparse.csr_matrix((np.ones(n * K), (X + offsets).ravel(), np.arange(0, n * K + 1, K)),
                                shape=(n, int(np.sum(n_values))))
    B, d = prior.shape
    weights = np.ascontiguousarray(np.concatenate(tables, axis=-1).reshape(B * d, -1).T)
    s = (one_hot @ weights).reshape(-1, B, d).transpose(1, 0, 2) + prior[:, None, :]
    lp = s - logsumexp(s, axis=-1, keepdims=True)
    ce = -np.take_along_axis(lp, np.broadcast_to(y[:, None], lp.shape[:-1] + (1,)), -1)[..., 0].mean(axis=-1)
    return ce, (np.argmax(lp, axis=-1) == y).mean(axis=-1)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    print(f"{'dataset':14s} {'rows':>6s} {'d':>3s} {'fused s':>8s} {'before s':>8s} {'speed-up':>8s} "
          f"{'max |dCE|':>10s} {'acc equal':>9s}")
    total = [0.0, 0.0]
    for name in DATASETS:
        split = prepare(name)
        task = G.NaiveBayesTask(split)
        batches = [task.release(G.calibrate("dirichlet", G.RDP_TARGET.with_level(eps), task.spec), 10, np.random.default_rng(i))
                   for i, eps in enumerate(G.DEFAULT_EPSILONS)]
        prior = np.concatenate([b[0] for b in batches])
        tables = [np.concatenate([b[1][k] for b in batches]) for k in range(len(split.n_values))]
        X, y, nv = np.asarray(split.X_test), np.asarray(split.y_test), np.asarray(split.n_values)
        t_new = t_old = np.inf
        for _ in range(args.repeats):  # interleaved
            t, new = best(lambda: scores(X, y, prior, tables, nv), 1)
            t_new = min(t_new, t)
            t, old = best(lambda: before(X, y, prior, tables, nv), 1)
            t_old = min(t_old, t)
        total[0] += t_new
        total[1] += t_old
        print(f"{name:14s} {len(y):6d} {split.n_classes:3d} {t_new:8.4f} {t_old:8.4f} {t_old / t_new:7.1f}x "
              f"{np.max(np.abs(new[0] - old[0])):10.2e} {str(np.array_equal(new[1], old[1])):>9s}")
    print(f"{'all':14s} {'':6s} {'':3s} {total[0]:8.4f} {total[1]:8.4f} {total[1] / total[0]:7.1f}x")


if __name__ == "__main__":
    main()
