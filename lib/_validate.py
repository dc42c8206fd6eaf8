"""Input validation shared by the public functions of :mod:`lib`.

Every public function converts its inputs with one of these helpers, so that bad
input raises a :class:`ValueError` naming the argument and the allowed range
instead of propagating NaN or silently truncating.
"""

from __future__ import annotations

import numpy as np


def real_array(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array, rejecting NaN and infinity."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number or an array of real numbers") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (got NaN or infinity)")
    return arr


def positive(value, name: str) -> np.ndarray:
    """A finite array with every entry in (0, inf)."""
    arr = real_array(value, name)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be in (0, inf); got {_worst(arr, arr <= 0)}")
    return arr


def nonnegative(value, name: str) -> np.ndarray:
    """A finite array with every entry in [0, inf)."""
    arr = real_array(value, name)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be in [0, inf); got {_worst(arr, arr < 0)}")
    return arr


def order(value, name: str = "lam", *, strict: bool = False) -> np.ndarray:
    """A Renyi order: finite, in [1, inf), or in (1, inf) when ``strict``."""
    arr = real_array(value, name)
    bad = arr <= 1 if strict else arr < 1
    if np.any(bad):
        allowed = "(1, inf)" if strict else "[1, inf)"
        raise ValueError(f"{name} must be in {allowed}; got {_worst(arr, bad)}")
    return arr


def open_unit(value, name: str) -> np.ndarray:
    """A finite array with every entry in (0, 1)."""
    arr = real_array(value, name)
    bad = (arr <= 0) | (arr >= 1)
    if np.any(bad):
        raise ValueError(f"{name} must be in (0, 1); got {_worst(arr, bad)}")
    return arr


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


def _worst(arr: np.ndarray, bad: np.ndarray) -> float:
    return float(np.asarray(arr)[bad].flat[0])


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together, naming them if their shapes do not fit."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError as exc:
        shapes = ", ".join(f"{name} {np.shape(a)}" for name, a in arrays.items())
        raise ValueError(f"the shapes of {shapes} do not broadcast together") from exc


def generator(rng) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a generator, a non-negative integer seed or None."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be a numpy.random.Generator, a non-negative integer seed or None; got {rng!r}")
