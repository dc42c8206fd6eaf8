"""Input validation shared by the public functions of :mod:`lib`.

Every public function converts its inputs with one of these helpers, so that bad
input raises a :class:`ValueError` naming the argument and the allowed range
instead of propagating NaN or silently truncating.
"""

from __future__ import annotations

import numpy as np


def in_range(value, name: str, low: float, high: float = np.inf, *, open_low: bool, open_high: bool = True):
    """A finite float array with every entry between ``low`` and ``high``.

    The bounds are excluded where ``open_low`` / ``open_high``. Two reductions
    (min and max) check finiteness and range without temporaries, which keeps
    validation cheap on the large batches that :meth:`DirichletMechanism.release`
    takes.
    """
    arr = _as_float(value, name)
    if arr.size == 0:
        return arr
    lo, hi = arr.min(), arr.max()
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} must be finite (got NaN or infinity)")
    too_low = lo <= low if open_low else lo < low
    too_high = hi >= high if open_high else hi > high
    if too_low or too_high:
        interval = f"{'(' if open_low else '['}{low:g}, {'inf' if high == np.inf else f'{high:g}'}"
        interval += ")" if open_high else "]"
        raise ValueError(f"{name} must be in {interval}; got {float(lo if too_low else hi):g}")
    return arr


def positive(value, name: str) -> np.ndarray:
    """A finite array with every entry in (0, inf)."""
    return in_range(value, name, 0.0, open_low=True)


def nonnegative(value, name: str) -> np.ndarray:
    """A finite array with every entry in [0, inf)."""
    return in_range(value, name, 0.0, open_low=False)


def order(value, name: str = "lam", *, strict: bool = False) -> np.ndarray:
    """A Renyi order: finite, in [1, inf), or in (1, inf) when ``strict``."""
    return in_range(value, name, 1.0, open_low=strict)


def open_unit(value, name: str) -> np.ndarray:
    """A finite array with every entry in (0, 1)."""
    return in_range(value, name, 0.0, 1.0, open_low=True, open_high=True)


def _as_float(value, name: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number or an array of real numbers") from exc


def vectors(value, name: str, *, positive_entries: bool) -> np.ndarray:
    """An array whose last axis holds vectors of length at least two.

    Entries must be finite and positive (``positive_entries``) or non-negative.
    """
    arr = positive(value, name) if positive_entries else nonnegative(value, name)
    if arr.ndim == 0 or arr.shape[-1] < 2:
        raise ValueError(
            f"{name} must have at least two entries along its last axis; got shape {arr.shape}"
        )
    return arr


def scalar(arr: np.ndarray, name: str) -> float:
    """Return a zero-dimensional array as a Python float."""
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got an array of shape {arr.shape}")
    return float(arr)


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together, naming them if their shapes do not fit."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError as exc:
        shapes = ", ".join(f"{name} {np.shape(a)}" for name, a in arrays.items())
        raise ValueError(f"the shapes of {shapes} do not broadcast together") from exc


def integer(value, name: str, low: int = 1) -> int:
    """``value`` as an int, or a ValueError unless it is an integer (not a bool) >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf); got {value!r}")
    return int(value)


def generator(rng) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a generator, a non-negative integer seed or None."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be a numpy.random.Generator, a non-negative integer seed or None; got {rng!r}")
