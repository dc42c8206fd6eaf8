"""Wall-clock timing for the chapters' cost comparisons.

A chapter that compares the cost of two computations times each in the same run and reports
ratios to a baseline of that run (absolute times vary between machines and runs).
"""

from __future__ import annotations

import time
from typing import Callable

from lib import validation


def best_of(func: Callable[[], object], repeats: int = 2, *,
            clock: Callable[[], float] = time.perf_counter) -> float:
    """The shortest of ``repeats`` timings of ``func()``, in seconds.

    The minimum is the timing least disturbed by other work on the machine.

    Parameters
    ----------
    func : callable
        Called with no arguments; its result is discarded.
    repeats : int, optional
        Number of timed calls, at least 1.
    clock : callable, optional
        Returns the current time in seconds (a monotonic clock).

    Returns
    -------
    float
    """
    repeats = validation.integer(repeats, "repeats", 1)
    if not callable(func):
        raise TypeError(f"func must be callable; got {type(func).__name__}")
    times = []
    for _ in range(repeats):
        start = clock()
        func()
        times.append(clock() - start)
    return min(times)
