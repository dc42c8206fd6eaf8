"""Input validation shared by the public functions of :mod:`lib`.

Every public function converts its inputs with one of these helpers, so that bad
input raises a :class:`ValueError` naming the argument and the allowed range
instead of propagating NaN or silently truncating. An argument of the wrong
*type* (a string, a boolean or a complex number where a real number is
expected, a float where an integer is expected) raises
:class:`ArgumentTypeError`, which is both a :class:`TypeError` and a
:class:`ValueError`, so that callers that catch either keep working.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

#: What :func:`generator` (and every ``rng`` or ``random_state`` argument) takes: a generator, a bit
#: generator, a seed sequence, a non-negative integer seed or None.
SeedLike: TypeAlias = np.random.Generator | np.random.BitGenerator | np.random.SeedSequence | int | None


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a TypeError that is also a ValueError)."""


#: Largest number of cells of a table, a domain or an intermediate array that
#: a function allocates from its arguments (a guard against a hostile or
#: mistaken size that would exhaust memory: 10**8 float64 cells are 800 MB).
MAX_CELLS = 10**8


def cells(n: int, name: str, limit: int = MAX_CELLS, hint: str = "") -> int:
    """``n`` (an exact Python int) if at most ``limit``; else a ValueError naming ``name``."""
    n = int(n)
    if n > limit:
        raise ValueError(f"{name} would need {n} cells; at most {limit} are allowed{hint}")
    return n


def _where(arr: np.ndarray, bad: np.ndarray) -> str:
    """`` at index i`` of the first True entry of ``bad`` (empty for a scalar)."""
    if arr.ndim == 0:
        return ""
    index = np.unravel_index(int(np.argmax(bad)), arr.shape)
    return f" at index {index[0] if len(index) == 1 else tuple(int(i) for i in index)}"


def in_range(value: ArrayLike, name: str, low: float, high: float = np.inf, *, open_low: bool,
             open_high: bool = True) -> np.ndarray:
    """A finite float array with every entry between ``low`` and ``high``.

    The bounds are excluded where ``open_low`` / ``open_high``. Two reductions
    (min and max) check finiteness and range without temporaries, which keeps
    validation cheap on the large batches that :meth:`DirichletMechanism.release`
    takes.
    """
    arr = as_float(value, name)
    if arr.size == 0:
        return arr
    lo, hi = arr.min(), arr.max()
    interval = f"{'(' if open_low else '['}{low:g}, {'inf' if high == np.inf else f'{high:g}'}"
    interval += ")" if open_high else "]"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        bad = ~np.isfinite(arr)
        value = float(arr[np.unravel_index(int(np.argmax(bad)), arr.shape)]) if arr.ndim else float(arr)
        raise ValueError(f"{name} must be finite (got NaN or infinity: {value}{_where(arr, bad)}); "
                         f"allowed range {interval}")
    too_low = lo <= low if open_low else lo < low
    too_high = hi >= high if open_high else hi > high
    if too_low or too_high:
        # Only on failure: locate the first offending entry for the message.
        value = lo if too_low else hi
        where = _where(arr, arr == value)
        raise ValueError(f"{name} must be in {interval}; got {float(value):g}{where}")
    return arr


def positive(value: ArrayLike, name: str) -> np.ndarray:
    """A finite array with every entry in (0, inf)."""
    return in_range(value, name, 0.0, open_low=True)


def nonnegative(value: ArrayLike, name: str) -> np.ndarray:
    """A finite array with every entry in [0, inf)."""
    return in_range(value, name, 0.0, open_low=False)


def order(value: ArrayLike, name: str = "lam", *, strict: bool = False) -> np.ndarray:
    """A Renyi order: finite, in [1, inf), or in (1, inf) when ``strict``."""
    return in_range(value, name, 1.0, open_low=strict)


def open_unit(value: ArrayLike, name: str) -> np.ndarray:
    """A finite array with every entry in (0, 1)."""
    return in_range(value, name, 0.0, 1.0, open_low=True, open_high=True)


_NOT_REAL = (str, bytes, bool, np.bool_, complex, np.complexfloating)


def _type_error(name: str, value) -> ArgumentTypeError:
    kind = type(value).__name__
    return ArgumentTypeError(f"{name} must be a real number or an array of real numbers; got {kind} "
                             f"{value!r:.60}")


def as_float(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array; strings, booleans and complex numbers are refused.

    A float array passes through without a copy; an integer array is converted.
    """
    if isinstance(value, _NOT_REAL):
        raise _type_error(name, value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value.astype(float, copy=False)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ArgumentTypeError(f"{name} must be a real number or a regular array of real numbers") from exc
    kind = arr.dtype.kind
    if kind in "fiu":
        return arr.astype(float, copy=False)
    if kind == "O":
        for item in arr.flat:  # object arrays are rare and small: inspect every entry
            if isinstance(item, _NOT_REAL) or item is None:
                raise _type_error(name, item)
        try:
            return arr.astype(float)
        except OverflowError:  # a Python integer beyond the double range (10**400)
            big = next(item for item in arr.flat if isinstance(item, int) and abs(item) > 2**1023)
            raise ValueError(f"{name} must lie within the double range (|x| < 1.8e308); got an integer of "
                             f"{len(str(abs(big)))} digits") from None
        except (TypeError, ValueError) as exc:
            raise ArgumentTypeError(f"{name} must be a real number or an array of real numbers") from exc
    what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes"}.get(kind, f"dtype {arr.dtype}")
    raise ArgumentTypeError(f"{name} must be a real number or an array of real numbers; got {what}")


def vectors(value: ArrayLike, name: str, *, positive_entries: bool) -> np.ndarray:
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


def integer(value: object, name: str, low: int = 1, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]``.

    A value that is not an integer (a bool, a float, a string) raises
    :class:`ArgumentTypeError`; an integer out of range a ValueError.
    """
    interval = f"[{low}, {'inf' if high is None else high}]" if high is not None else f"[{low}, inf)"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be an integer in {interval}; got {type(value).__name__} {value!r:.60}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer in {interval}; got {value!r}")
    return int(value)


def dp_target(epsilon_hat: float, delta: float) -> tuple[float, float]:
    """An :math:`(\\hat\\varepsilon, \\delta)` target as floats in :math:`(0, \\infty) \\times (0, 1)`."""
    eps = scalar(positive(epsilon_hat, "epsilon_hat"), "epsilon_hat")
    return eps, scalar(open_unit(delta, "delta"), "delta")


def domain_sizes(value: Sequence[int], name: str = "domain_sizes") -> tuple[int, ...]:
    """A non-empty 1-D sequence of integers in :math:`[2, \\infty)`, one per release, as a tuple of ints."""
    sizes = np.asarray(value)
    if (sizes.ndim != 1 or sizes.size < 1 or not np.issubdtype(sizes.dtype, np.integer)
            or np.any(sizes < 2)):
        raise ValueError(
            f"{name} must be a non-empty 1-D sequence of integers in [2, inf), one per "
            f"release; got {value!r}"
        )
    sizes = tuple(int(v) for v in sizes)
    cells(sum(sizes), f"{name} (summing to {sum(sizes)})")
    return sizes


def integer_array(value: ArrayLike, name: str) -> np.ndarray:
    """An array of integers (any integer dtype, not bool) as int64, without a copy if possible.

    Floats, booleans and strings raise :class:`ArgumentTypeError` (a code is
    never rounded or truncated).
    """
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":
            return arr.astype(np.int64)
        raise ArgumentTypeError(f"{name} must be an array of integers; got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} holds integers beyond the int64 range")
    return arr.astype(np.int64, copy=False)


def codes(value: ArrayLike, name: str, n_values: ArrayLike, *, axis_name: str = "column") -> np.ndarray:
    """Category codes: a 2-D int64 array whose column ``j`` lies in ``[0, n_values[j] - 1]``.

    A code equal to ``n_values[j]`` or negative would silently index another
    cell of a table (or, through a sparse matrix, memory outside it); it is
    refused here with the column, the row and the allowed range. Two
    reductions per column; no copy of an int64 array.
    """
    n_values = np.asarray(n_values)
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise ArgumentTypeError(f"{name} must be a 2-D integer array with {n_values.size} columns; got "
                                f"{arr.dtype} {arr.shape}")
    arr = integer_array(arr, name)
    if arr.ndim != 2 or arr.shape[1] != n_values.size:
        raise ValueError(f"{name} must be a 2-D integer array with {n_values.size} columns; got shape {arr.shape}")
    if arr.size:
        low, high = arr.min(axis=0), arr.max(axis=0)
        bad = (low < 0) | (high >= n_values)
        if np.any(bad):
            j = int(np.argmax(bad))
            value_ = int(low[j]) if low[j] < 0 else int(high[j])
            i = int(np.argmax(arr[:, j] == value_))
            raise ValueError(f"{name} must hold codes in [0, {int(n_values[j]) - 1}] in {axis_name} {j} "
                             f"(n_values[{j}] = {int(n_values[j])}); got {value_} at row {i}")
    return arr


def labels(value: ArrayLike, name: str, n_classes: int) -> np.ndarray:
    """Class labels: a 1-D int64 array with entries in ``[0, n_classes - 1]``."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise ArgumentTypeError(f"{name} must be a 1-D integer array of class codes; got {arr.dtype} {arr.shape}")
    arr = integer_array(arr, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D integer array; got shape {arr.shape}")
    if arr.size:
        low, high = int(arr.min()), int(arr.max())
        if low < 0 or high >= n_classes:
            value_ = low if low < 0 else high
            i = int(np.argmax(arr == value_))
            raise ValueError(f"{name} must hold class codes in [0, {n_classes - 1}]; got {value_} at index {i}")
    return arr


def generator(rng: SeedLike) -> np.random.Generator:
    """A ``numpy.random.Generator`` from what ``numpy.random.default_rng`` takes.

    A generator, a bit generator, a seed sequence, a non-negative integer seed or
    None (fresh entropy); a generator is returned as it is (its stream goes on).
    """
    if rng is None or isinstance(rng, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return np.random.default_rng(int(rng))
    if not isinstance(rng, (int, np.integer)) or isinstance(rng, (bool, np.bool_)):
        raise ArgumentTypeError(f"rng must be a numpy.random.Generator, BitGenerator or SeedSequence, a "
                                f"non-negative integer seed or None; "
                                f"got {type(rng).__name__} {rng!r:.60}")
    raise ValueError(f"rng must be a numpy.random.Generator, BitGenerator or SeedSequence, a non-negative "
                     f"integer seed or None; got {rng!r}")


def brentq(func: Callable[[float], float], lo: float, hi: float, what: str, **kwargs: Any) -> float:
    """``scipy.optimize.brentq`` whose failures are ValueErrors that say what was being solved.

    scipy raises a RuntimeError when the iteration cap (100 steps) is reached
    and a ValueError ("function value is NaN", "f(a) and f(b) must have
    different signs") at arguments it cannot handle; neither names the caller's
    argument. ``what`` does (for example "the Laplace scale for epsilon = 1e-300").
    """
    from scipy import optimize

    try:
        return optimize.brentq(func, lo, hi, **kwargs)
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"could not solve for {what}: the root search failed ({exc}); the arguments "
                         "are outside the range where it was verified") from exc
