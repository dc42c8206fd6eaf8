"""Timing helpers shared by the benchmarks (run as ``python benchmarks/bench_x.py``, so importable as ``_timing``)."""

from __future__ import annotations

import time
import timeit


def best_of(func, repeat: int = 5, number: int = 1) -> float:
    """The best of ``repeat`` timings of ``number`` calls of ``func``, in seconds per call."""
    return min(timeit.repeat(func, repeat=repeat, number=number)) / number


def best_with_result(func, repeat: int):
    """``(seconds, result)``: the best of ``repeat`` timed calls of ``func`` and the result of the last."""
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t)
    return min(times), out


def print_time_split(title: str, measure, repeat: int, width: int = 20) -> None:
    """Print the parts of the best of ``repeat`` calls of ``measure`` (a dict of seconds by part) and their shares."""
    spent = min((measure() for _ in range(repeat)), key=lambda d: sum(d.values()))
    total = sum(spent.values())
    print(title)
    for key, value in spent.items():
        print(f"  {key:{width}s}: {value:6.2f} s  ({value / total:5.1%})")
