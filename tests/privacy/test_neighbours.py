"""Neighbouring histograms: one record added, removed or moved."""

import numpy as np
import pytest

from lib import all_neighbours, random_neighbours
from lib.privacy.neighbours import MAX_NEIGHBOUR_CELLS
from tests._reference import refused_quickly as _quick


def _is_neighbour(f, g):
    diff = g - f
    return (diff**2).sum(-1) <= 2 and np.abs(diff).max(-1) == 1 and abs(diff.sum()) <= 1


def test_all_neighbours_enumerates_adds_removes_and_moves():
    counts = np.array([2.0, 0.0, 1.0])
    out = all_neighbours(counts)
    # 3 additions, 2 removals (non-empty bins), 2 x 2 moves out of non-empty bins.
    assert out.shape == (3 + 2 + 4, 3)
    assert len({tuple(row) for row in out}) == len(out)
    assert all(_is_neighbour(counts, row) for row in out)
    assert np.all(out >= 0)


def test_random_neighbours_are_neighbours_and_respect_the_floor():
    f, g = random_neighbours(5000, 7, max_count=4, min_count=2, rng=3)
    assert f.shape == g.shape == (5000, 7)
    assert all(_is_neighbour(a, b) for a, b in zip(f, g))
    assert f.min() >= 2 and g.min() >= 2
    diff_total = (g - f).sum(axis=1)
    kinds = {int(t): np.mean(diff_total == t) for t in (-1, 0, 1)}
    # Each kind has probability 1/3 (removals fall back to additions only when
    # every bin is at the floor, probability (1/3)^7 here); 5000 draws put each
    # share within 0.05 of 1/3 except with probability below 1e-12.
    assert all(abs(share - 1 / 3) < 0.05 for share in kinds.values()), kinds


def test_random_neighbours_is_reproducible():
    a = random_neighbours(10, 3, max_count=5, rng=np.random.default_rng(1))
    b = random_neighbours(10, 3, max_count=5, rng=1)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: all_neighbours([1.5, 2.0]), "whole numbers"),
        (lambda: all_neighbours([[1, 2], [3, 4]]), "one-dimensional"),
        (lambda: all_neighbours([-1, 2]), r"counts must be in \[0, inf\)"),
        (lambda: random_neighbours(0, 3, max_count=3), r"n_pairs must be an integer in \[1, inf\)"),
        (lambda: random_neighbours(5, 1, max_count=3), r"d must be an integer in \[2, inf\)"),
        (lambda: random_neighbours(5, 3, max_count=1, min_count=2), "max_count must be"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()



def test_all_neighbours_refuses_large_dimensions_up_front():
    _quick(lambda: all_neighbours(np.ones(400)), rf"at most {MAX_NEIGHBOUR_CELLS} are allowed")
    _quick(lambda: all_neighbours(np.ones(5000)), "use random_neighbours")


def test_all_neighbours_still_counts_every_neighbour_below_the_limit():
    d = 40
    counts = np.arange(d, dtype=float)  # one empty bin
    out = all_neighbours(counts)
    assert out.shape == (d + (d - 1) * d, d)  # d additions; per non-empty bin 1 removal + (d - 1) moves
    assert np.all(np.abs(out - counts).sum(axis=1) <= 2)


def test_random_neighbours_refuses_huge_batches():
    _quick(lambda: random_neighbours(10**9, 10**9, max_count=5, rng=0), "at most 100000000")
