"""The experiment grids against the cost of drawing their noise alone.

For each grid of the book (naive Bayes and Bayesian networks, in Rényi DP and in
approximate DP) this prints the time of the whole grid (calibration, release,
scoring), the time of drawing the same number and kind of random variates with
numpy alone (Gamma for the Dirichlet mechanisms, normal and Laplace for the noise
baselines), and their ratio: how far the grid is from the physical limit of its
sampling. Each time is the best of ``--repeats`` runs, the grid and its baseline
measured in the same process, interleaved.

Run with ``DIRICHLET_DATA_DIR=... python benchmarks/bench_grid.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lib.experiments import run
from lib.experiments import grid as G
from lib.experiments.data import DATASETS
from lib.experiments.networks import prepare_network
from lib.experiments.preprocessing import prepare
from lib.protocol import get

#: The numpy method that draws each private mechanism's variates.
DRAWS = {"dirichlet": "standard_gamma", "gohari": "standard_gamma", "gaussian": "standard_normal",
         "laplace": "laplace"}


def variates(task, mechanisms, n_budgets, n_repeats):
    """How many variates of each kind the grid draws: method -> count."""
    cells = sum(rows * d for rows, d in task.spec.shapes)
    out = {}
    for name in mechanisms:
        cls = get(name)
        if cls.private:
            out[DRAWS[name]] = out.get(DRAWS[name], 0) + cells * n_budgets * n_repeats
    return out


def draw(counts, rng):
    for method, n in counts.items():
        getattr(rng, method)(size=n) if method != "standard_gamma" else rng.standard_gamma(2.0, size=n)


def best(f, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="runs of each timing (best kept)")
    args = p.parse_args(argv)
    splits = {n: prepare(n) for n in DATASETS}
    networks = {n: prepare_network(n) for n in G.BN_DATASETS}
    grids = [
        ("naive Bayes, RDP", "naive-bayes", G.NB_MODELS, G.DEFAULT_EPSILONS, "rdp", splits),
        ("naive Bayes, (eps_hat, delta)", "naive-bayes", G.NB_DP_MODELS, G.DP_NB_EPSILONS, "dp", splits),
        ("networks, RDP", "bayesian-network", G.BN_MODELS, G.DEFAULT_EPSILONS, "rdp", networks),
        ("networks, (eps_hat, delta)", "bayesian-network", G.BN_DP_MODELS, G.DP_BN_EPSILONS, "dp", networks),
    ]
    rng = np.random.default_rng(0)
    print(f"{'grid':32s} {'grid s':>8s} {'draws s':>8s} {'ratio':>7s}")
    for label, model, mechanisms, budgets, privacy, data in grids:
        task_cls = G.task_class(model)
        counts = {}
        for name in data:
            for method, n in variates(task_cls(data[name]), mechanisms, len(budgets), 10).items():
                counts[method] = counts.get(method, 0) + n
        grid_time = best(lambda: run(model, mechanisms, budgets, privacy=privacy, data=data), args.repeats)
        draw_time = best(lambda: draw(counts, rng), args.repeats)
        print(f"{label:32s} {grid_time:8.3f} {draw_time:8.3f} {grid_time / draw_time:7.1f}x")


if __name__ == "__main__":
    main()
