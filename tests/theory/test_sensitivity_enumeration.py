"""lib.theory.sensitivity_enumeration against plain loops over every replacement and the closed
forms of the mean's sensitivities."""

import itertools

import numpy as np
import pytest

from lib.theory.sensitivity_enumeration import local_sensitivity_enumerated, sensitivity_at_distance_enumerated

GRID = np.arange(7.0)


def _ls_loop(f, y, grid):
    """One value at a time, one replacement at a time (grid points and the others' mean)."""
    best = 0.0
    for i in range(len(y)):
        rest = [y[j] for j in range(len(y)) if j != i]
        for v in list(grid) + [sum(rest) / len(rest)]:
            z = np.array(y, float)
            z[i] = v
            best = max(best, abs(float(f(z)) - float(f(np.array(y, float)))))
    return best


def _a_loop(f, x, k, grid):
    best = 0.0
    for j in range(k + 1):
        for idx in itertools.combinations(range(len(x)), j):
            for vals in itertools.product(grid, repeat=j):
                y = np.array(x, float)
                y[list(idx)] = vals
                best = max(best, _ls_loop(f, y, grid))
    return best


@pytest.mark.parametrize("f", [np.mean, np.var, np.std])
@pytest.mark.parametrize("x", [[2.0, 2.0, 3.0, 3.0, 4.0], [2.0, 2.0, 3.0, 6.0], [0.0, 5.0, 6.0]])
def test_local_sensitivity_equals_the_loop(f, x):
    assert local_sensitivity_enumerated(f, x, GRID) == pytest.approx(_ls_loop(f, x, GRID), abs=1e-12)


@pytest.mark.parametrize("f", [np.var, np.std])
@pytest.mark.parametrize("k", [0, 1, 2])
def test_at_distance_equals_the_loop(f, k):
    x = np.array([1.0, 3.0, 3.0, 5.0])
    assert sensitivity_at_distance_enumerated(f, x, k, GRID) == pytest.approx(_a_loop(f, x, k, GRID), abs=1e-12)


def test_mean_closed_forms():
    # LS of a mean on [L, U] is max(max x - L, U - min x) / n; A^(1) is (U - L) / n
    x = np.array([2.0, 2.0, 3.0, 3.0, 4.0])
    assert local_sensitivity_enumerated(np.mean, x, GRID) == pytest.approx(4.0 / 5, abs=1e-12)
    assert sensitivity_at_distance_enumerated(np.mean, x, 1, GRID) == pytest.approx(6.0 / 5, abs=1e-12)
    assert sensitivity_at_distance_enumerated(np.mean, x, 0, GRID) == local_sensitivity_enumerated(np.mean, x, GRID)


def test_a_stack_of_samples_is_the_largest_of_each():
    ys = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]])
    assert local_sensitivity_enumerated(np.std, ys, GRID) == max(local_sensitivity_enumerated(np.std, y, GRID)
                                                                 for y in ys)


def test_bad_input():
    with pytest.raises(ValueError, match="y must"):
        local_sensitivity_enumerated(np.mean, [1.0], GRID)
    with pytest.raises(ValueError, match="grid"):
        local_sensitivity_enumerated(np.mean, [1.0, 2.0], [])
    with pytest.raises(TypeError, match="f must"):
        local_sensitivity_enumerated("mean", [1.0, 2.0], GRID)
    with pytest.raises(ValueError, match="k must"):
        sensitivity_at_distance_enumerated(np.mean, [1.0, 2.0], 3, GRID)
    with pytest.raises(ValueError, match="enumeration"):
        sensitivity_at_distance_enumerated(np.mean, np.zeros(12), 12, np.arange(50.0))
