"""The experiment grids against the cost of drawing their noise alone.

For each grid of the book (naive Bayes and Bayesian networks, in Rényi DP and in
approximate DP) this prints the time of the whole grid (calibration, release,
scoring), the time of drawing the same number and kind of random variates with
numpy alone (Gamma for the Dirichlet mechanisms, normal and Laplace for the noise
baselines), and their ratio: how far the grid is from the physical limit of its
sampling. Each time is the best of ``--repeats`` runs, the grid and its baseline
measured in the same process, interleaved (grid, draws, grid, draws, ...). The
grid's time is split into calibration, release and scoring (the best run's
shares), and the machine's load average is printed with the ratios. The ratio is
given in wall-clock time and in CPU time of the process (``time.process_time``,
best of the same runs), which is far less disturbed when other processes share
the cores. Targets of issue 17: naive Bayes RDP grid at most 15x its draws,
(eps_hat, delta) at most 25x.
The last line is the start-up time of ``import lib.experiments`` in a fresh
process, and whether it imports ``scipy.optimize`` (it should not).

Run with ``DIRICHLET_DATA_DIR=... python benchmarks/bench_grid.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np

from lib.experiments import engine as E
from lib.experiments.data import DATASETS
from lib.experiments.defaults import BN_DATASETS, FIGURES
from lib.experiments.networks import prepare_network
from lib.experiments.preprocessing import prepare
from lib.mechanisms.protocol import get

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


class Stages:
    """Time spent in the grid's calibrations, releases and scoring (wrapped for one run)."""

    def __init__(self):
        self.seconds = defaultdict(float)

    def wrap(self, owner, attr, stage, static=False):
        original = getattr(owner, attr)

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - t

        setattr(owner, attr, staticmethod(timed) if static else timed)
        return lambda: setattr(owner, attr, original)


def timed_grid(model, mechanisms, budgets, privacy, data):
    """One run of the grid: (total seconds, {stage: seconds}, CPU seconds)."""
    stages = Stages()
    task_cls = E.task_class(model)
    undo = [stages.wrap(E, "calibrate_many", "calibrate"), stages.wrap(task_cls, "release", "release"),
            stages.wrap(task_cls, "score", "score")]
    try:
        t, c = time.perf_counter(), time.process_time()
        E.run(model, mechanisms, budgets, target=privacy, data=data)
        return time.perf_counter() - t, dict(stages.seconds), time.process_time() - c
    finally:
        for f in undo:
            f()


def start_up():
    """Seconds of ``import lib.experiments`` in a fresh process, and whether scipy.optimize was imported."""
    code = ("import sys, time; t = time.perf_counter(); import lib.experiments; "
            "print(time.perf_counter() - t, 'scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, loaded = out.stdout.split()
    return float(seconds), loaded == "True"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="runs of each timing (best kept)")
    p.add_argument("--grids", default="nb-rdp,nb-dp,bn-rdp,bn-dp",
                   help="comma-separated subset of nb-rdp, nb-dp, bn-rdp, bn-dp")
    args = p.parse_args(argv)
    wanted = args.grids.split(",")
    splits = {n: prepare(n) for n in DATASETS} if any(w.startswith("nb") for w in wanted) else {}
    networks = {n: prepare_network(n) for n in BN_DATASETS} if any(w.startswith("bn") for w in wanted) else {}
    targets = {E.RenyiDP: E.RDP_TARGET, E.ApproximateDP: E.DP_TARGET}
    labels = {E.RenyiDP: "RDP", E.ApproximateDP: "(eps_hat, delta)"}
    keys = {E.RenyiDP: "rdp", E.ApproximateDP: "dp"}
    grids = [(f"{'nb' if task == 'naive-bayes' else 'bn'}-{keys[notion]}",
              f"{'naive Bayes' if task == 'naive-bayes' else 'networks'}, {labels[notion]}", task, fig.mechanisms,
              E.budgets(task, notion), targets[notion], splits if task == "naive-bayes" else networks)
             for (task, notion), fig in FIGURES.items()]
    rng = np.random.default_rng(0)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print(f"{'grid':32s} {'grid s':>8s} {'draws s':>8s} {'ratio':>7s} {'cpu ratio':>9s}   {'calibrate':>9s} "
          f"{'release':>8s} {'score':>8s}")
    for key, label, model, mechanisms, budgets, privacy, data in grids:
        if key not in wanted:
            continue
        task_cls = E.task_class(model)
        counts = {}
        for name in data:
            for method, n in variates(task_cls(data[name]), mechanisms, len(budgets), 10).items():
                counts[method] = counts.get(method, 0) + n
        grid_runs, draw_times, draw_cpu = [], [], []
        for _ in range(args.repeats):  # interleaved: the grid, then its draws
            grid_runs.append(timed_grid(model, mechanisms, budgets, privacy, data))
            t, c = time.perf_counter(), time.process_time()
            draw(counts, rng)
            draw_times.append(time.perf_counter() - t)
            draw_cpu.append(time.process_time() - c)
        grid_time, stages, _ = min(grid_runs, key=lambda r: r[0])
        draw_time = min(draw_times)
        cpu_ratio = min(r[2] for r in grid_runs) / min(draw_cpu)
        print(f"{label:32s} {grid_time:8.3f} {draw_time:8.3f} {grid_time / draw_time:7.1f}x {cpu_ratio:8.1f}x   "
              f"{stages.get('calibrate', 0):9.3f} {stages.get('release', 0):8.3f} {stages.get('score', 0):8.3f}")
    seconds, loaded = start_up()
    print(f"start-up: import lib.experiments {seconds:.3f} s; scipy.optimize imported: {loaded}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
