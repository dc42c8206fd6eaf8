"""lib.experiments.timing.best_of with a clock whose readings are known."""

import pytest

from lib.experiments.timing import best_of


def test_best_of_returns_the_shortest_timing():
    readings = iter([0.0, 3.0, 10.0, 11.5, 20.0, 22.0])   # three calls of 3, 1.5 and 2 seconds
    calls = []
    assert best_of(lambda: calls.append(1), 3, clock=lambda: next(readings)) == 1.5
    assert len(calls) == 3


def test_bad_input():
    with pytest.raises(ValueError, match="repeats"):
        best_of(lambda: None, 0)
    with pytest.raises(TypeError, match="func"):
        best_of(3.0)
