"""Running time of the exact calibration at its best order against the paper's calibration (issue 40).

Two settings, both paths in the same run, best of several repeats:

* one release over 10 targets: the paper's calibration (eq. (14) at Theorem 1's level, the order
  minimising the expected KL loss of the Figure 3 histogram, ``optimal_order``, target by target)
  against ``calibrate_exact_many`` (the exact curve, its best order for the same loss, the targets
  searched together);
* Adult naive Bayes over the 10 budgets of chapter 09: ``calibrate_many("dirichlet", ...)`` against
  ``calibrate_many("dirichlet_exact", ...)`` (a fresh cache each time).

Printed: the seconds of each path, their ratio (the brief asks at most 3), and the largest relative
difference between the exact scale at each chosen order and a plain bisection on the accountant
(``calibrate_exact`` at that order checks the target; the bisection is the test's,
tests/privacy/test_curves.py::plain_bisection, repeated here).

Run with ``DIRICHLET_DATA_DIR=... python benchmarks/bench_calibration.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: the tests' references

from _timing import best_with_result
from tests._reference import exact_level_by_bisection
from lib.experiments.engine import DP_TARGET, calibrate_many
from lib.experiments.engine import budgets as _budgets
from lib.experiments.preprocessing import prepare
from lib.mechanisms.dirichlet.curve import calibrate_exact_many
from lib.mechanisms.dirichlet.order import optimal_order
from lib.models.naive_bayes import model_spec
from lib.privacy.guarantees import ApproximateDP as _ApproximateDP

DP_NB_EPSILONS = _budgets("naive-bayes", _ApproximateDP)

FIGURE3 = np.array([119, 74, 618, 272, 13, 187])
TARGETS = np.geomspace(0.1, 10.0, 10)
DELTA = 1e-5
REPEATS = 5


def plain_level(eps_hat, lam, n):
    """The largest level at ``lam`` whose composed exact curves meet the target: plain bisection to 1e-12
    (the tests' reference, ``tests/_reference.py``)."""
    return exact_level_by_bisection(eps_hat, DELTA, lam, n)


def main() -> None:
    t_paper, _ = best_with_result(lambda: [optimal_order(e, DELTA, FIGURE3) for e in TARGETS], REPEATS)
    t_exact, exact = best_with_result(lambda: calibrate_exact_many(TARGETS, DELTA, FIGURE3), REPEATS)
    gap = max(abs(c.epsilon / plain_level(e, c.lam, 1) - 1) for e, c in zip(TARGETS, exact))
    print(f"one release, {TARGETS.size} targets: paper {t_paper * 1e3:7.1f} ms, exact at the best order "
          f"{t_exact * 1e3:7.1f} ms, ratio {t_exact / t_paper:5.2f} (at most 3); "
          f"level against a plain bisection: {gap:.1e} (relative)")
    split = prepare("Adult")
    spec = model_spec(split.n_values, split.n_classes, len(split.y_train))
    targets = [DP_TARGET.with_level(e) for e in DP_NB_EPSILONS]
    t_paper, _ = best_with_result(lambda: calibrate_many("dirichlet", targets, spec, cache={}), REPEATS)
    t_exact, cals = best_with_result(lambda: calibrate_many("dirichlet_exact", targets, spec, cache={}), REPEATS)
    gap = max(abs(c.parameters["epsilon_rdp"] / plain_level(t.epsilon, c.parameters["lam"], spec.n_releases) - 1)
              for t, c in zip(targets, cals))
    print(f"Adult naive Bayes, {len(targets)} budgets ({spec.n_releases} releases): paper "
          f"{t_paper * 1e3:7.1f} ms, exact at the best order {t_exact * 1e3:7.1f} ms, ratio "
          f"{t_exact / t_paper:5.2f} (at most 3); level against a plain bisection: {gap:.1e} (relative)")


if __name__ == "__main__":
    main()
