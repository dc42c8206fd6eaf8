"""Running time of the approximate-DP grids of Appendix C (Figures 9, 10 and 11).

The naive Bayes grid (8 datasets x 10 epsilon-hats x 6 models x 10 repetitions)
and the Bayesian-network grid (3 datasets x 10 x 5 x 10) run inside chapter 09's
notebook. Printed: each grid as ``lib.experiments.run(..., privacy=DP_TARGET)`` runs it
(a fresh Gohari cache each time), the naive Bayes grid's time split into
calibration (per mechanism, all budgets of a dataset together as the grid does,
``calibrate_many``), release (the mechanisms' sampling) and scoring (the test
rows), and the ratio to the RDP naive Bayes grid of Section 5.1
(``run("naive-bayes", ...)``) measured in the same run. Last, the calibrations
of the naive Bayes grid one budget at a time (``calibrate``, the path before
issue 17) against all budgets together, in the same run (issue 17: the
searches vectorised across targets and releases; the results are equal).

Run with ``DIRICHLET_DATA_DIR=... python benchmarks/bench_approximate_dp.py``.
"""

from __future__ import annotations

import time

import numpy as np

from _timing import best_with_result, print_time_split
from lib.experiments import cell_seed, run
from lib.experiments.data import DATASETS
from lib.experiments.grid import (BN_DATASETS, BN_DP_MODELS, DEFAULT_EPSILONS, DP_BN_EPSILONS, DP_NB_EPSILONS, DP_TARGET,
                                  NB_DP_MODELS, NB_MODELS, calibrate, calibrate_many)
from lib.experiments.networks import prepare_network
from lib.experiments.preprocessing import prepare
from lib.models.naive_bayes import count, log_proba, model_spec, release_parameters

MECHANISMS = ("dirichlet", "gohari", "gaussian", "laplace")
DP_TARGETS = [DP_TARGET.with_level(e) for e in DP_NB_EPSILONS]


def parts(splits, n_repeats=10, seed=0):
    """Seconds spent calibrating (per mechanism), releasing and scoring the private models."""
    spent = {f"calibrate {m}": 0.0 for m in MECHANISMS} | {"release": 0.0, "score": 0.0}
    cache = {}
    for name, s in splits.items():
        counts = count(s.X_train, s.y_train, s.n_values, s.n_classes)
        spec = model_spec(s.n_values, s.n_classes, len(s.y_train))
        for model in MECHANISMS:
            priors, tables = [], []
            t0 = time.perf_counter()
            cals = calibrate_many(model, DP_TARGETS, spec, cache=cache)
            spent[f"calibrate {model}"] += time.perf_counter() - t0
            for eps, cal in zip(DP_NB_EPSILONS, cals):
                t1 = time.perf_counter()
                if cal.attained:
                    rng = np.random.default_rng(cell_seed(seed, name, model, eps))
                    p, t = release_parameters(*counts, cal, n_draws=n_repeats, rng=rng)
                    priors.append(p)
                    tables.append(t)
                spent["release"] += time.perf_counter() - t1
            t0 = time.perf_counter()
            log_proba(s.X_test, np.concatenate(priors),
                      [np.concatenate([t[k] for t in tables]) for k in range(len(s.n_values))], s.n_values)
            spent["score"] += time.perf_counter() - t0
    return spent


def main() -> None:
    splits = {name: prepare(name) for name in DATASETS}
    networks = {name: prepare_network(name) for name in BN_DATASETS}
    t_rdp, _ = best_with_result(lambda: run("naive-bayes", NB_MODELS, DEFAULT_EPSILONS, data=splits,
                                            progress=False), 2)
    t_nb, res = best_with_result(lambda: run("naive-bayes", NB_DP_MODELS, DP_NB_EPSILONS, privacy=DP_TARGET, data=splits,
                                             progress=False), 2)
    t_bn, res_bn = best_with_result(lambda: run("bayesian-network", BN_DP_MODELS, DP_BN_EPSILONS, privacy=DP_TARGET,
                                                data=networks, progress=False), 2)
    rows = [("run naive-bayes rdp (Section 5.1)", t_rdp, "baseline"),
            (f"run naive-bayes dp, {len(res)} rows", t_nb, f"{t_nb / t_rdp:.2f} x baseline"),
            (f"run bayesian-network dp, {len(res_bn)} rows", t_bn, f"{t_bn / t_rdp:.2f} x baseline"),
            ("both approximate-DP grids", t_nb + t_bn, "chapter target < 120 s in all")]
    for label, seconds, note in rows:
        print(f"{label:40s}: {seconds:6.2f} s   ({note})")
    print_time_split("naive Bayes DP grid, private models only, by part:", lambda: parts(splits), 2)
    specs = [model_spec(s.n_values, s.n_classes, len(s.y_train)) for s in splits.values()]
    print("naive Bayes DP grid calibrations, one budget at a time vs all budgets together (best of 3, "
          "interleaved, fresh caches):")
    for model in MECHANISMS:
        one, many = [], []
        for _ in range(3):
            t0 = time.perf_counter()
            for spec in specs:
                cache = {}
                for eps in DP_NB_EPSILONS:
                    calibrate(model, DP_TARGET.with_level(eps), spec, cache=cache)
            one.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for spec in specs:
                calibrate_many(model, DP_TARGETS, spec, cache={})
            many.append(time.perf_counter() - t0)
        print(f"  {model:10s}: {min(one):6.3f} s -> {min(many):6.3f} s  ({min(one) / min(many):5.1f} x faster)")


if __name__ == "__main__":
    main()
