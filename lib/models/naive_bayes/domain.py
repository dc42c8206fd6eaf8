"""The public domain of a naive Bayes model, and the checks of private data against it.

A private release is calibrated to a *declared* domain: the number of values
:math:`n_k` of every attribute and the number of classes :math:`d`, or the
labels themselves (``categories`` and ``classes``). This module validates a
declared domain (integers are checked as integers, never cast: ``2.7`` or
``'2'`` is refused, not truncated), looks labels up in it, and checks codes
against it.

Errors raised on private data say which column and which public range was
violated, never where or what the private value was: no row number, no
value, no count (a message is output too, and it is not covered by the
mechanism's guarantee). :func:`encode_labels` and :func:`check_codes` take
``private=False`` for data that are not private (test rows being scored),
where the offending value and its row help more than they cost.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from lib import validation

#: Largest number of cells of a model (classes times the summed domain sizes);
#: the same cap as :data:`lib.models.bayesian_network.MAX_CELLS`.
MAX_CELLS = validation.MAX_CELLS


def integer_sizes(value: Any, name: str, *, low: int = 2) -> np.ndarray:
    """A declared 1-D sequence of integers, each at least ``low``, as int64; never cast from floats or strings.

    Whole-valued floats (``2.0``) are accepted as the integers they are;
    ``2.7``, ``'2'``, booleans and NaN are refused with a TypeError or
    ValueError naming ``name``.

    Examples
    --------
    >>> integer_sizes([3, 2.0], "n_values").tolist()
    [3, 2]
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise validation.ArgumentTypeError(f"{name} must be a 1-D sequence of integers in [{low}, inf); "
                                           f"got {value!r:.60}") from None
    if arr.dtype.kind == "O" and arr.size and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
            for v in arr.flat):
        arr = arr.astype(float)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.array_equal(arr, np.round(arr)):
            raise validation.ArgumentTypeError(f"{name} must hold integers in [{low}, inf); got non-integral "
                                               f"numbers {arr.tolist()!r:.80}")
        if arr.size and np.abs(arr).max() >= 2.0**53:
            raise ValueError(f"{name} must hold integers in [{low}, 2**53); got {arr.tolist()!r:.80}")
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise validation.ArgumentTypeError(f"{name} must be a 1-D sequence of integers in [{low}, inf); got "
                                           f"dtype {arr.dtype} {np.asarray(value, dtype=object).tolist()!r:.60}")
    if arr.ndim != 1 or arr.size < 1 or np.any(arr < low):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers in [{low}, inf); got "
                         f"{arr.tolist()!r:.80}")
    return validation.integer_array(arr, name)


def whole_number(value: Any, name: str, low: int = 2) -> int:
    """A declared integer (an int, or a whole-valued float) of at least ``low``; ``'2'`` and ``2.5`` are refused."""
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        value = int(value)
    return validation.integer(value, name, low)


def model_domain(n_values: Any, n_columns: int, n_classes: Any) -> tuple[np.ndarray, int]:
    """Validate public domain sizes and the number of classes; refuse absurd model sizes.

    Returns
    -------
    n_values : ndarray of int64, shape (n_columns,)
    n_classes : int
    """
    n_values = integer_sizes(n_values, "n_values")
    if n_values.shape != (n_columns,):
        raise ValueError(f"n_values must hold one integer in [2, inf) per column of X ({n_columns}); got "
                         f"{n_values.size}")
    n_classes = whole_number(n_classes, "n_classes")
    # exact Python integers: a sum of huge int64 values must not wrap around
    validation.cells(n_classes * sum(int(v) for v in n_values),
                     f"a naive Bayes model with n_classes = {n_classes} and sum(n_values) = "
                     f"{sum(int(v) for v in n_values)}", MAX_CELLS)
    return n_values, int(n_classes)


def as_codes(value: Any, name: str, *, private: bool = True) -> np.ndarray:
    """An array of integer codes: integers as they are, whole-valued floats cast (scikit-learn's encoders
    output float64), anything else refused with a message that names the fix.

    A non-integral or non-finite float is refused; for private data the
    message does not show it.
    """
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        if arr.size and not (np.all(np.isfinite(arr)) and np.array_equal(arr, np.round(arr))):
            shown = "" if private else f" (for example {arr[~np.isfinite(arr) | (arr != np.round(arr))][0]!r})"
            raise ValueError(f"{name} holds non-integral or non-finite floats{shown}: it must hold category "
                             f"codes. Encode each column first (sklearn's OrdinalEncoder, or "
                             f"lib.models.naive_bayes.PublicBins with public bounds for a numeric column)")
        if arr.size and np.abs(arr).max() >= 2.0**53:
            raise ValueError(f"{name} holds floats beyond 2**53, which are not exact codes")
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        raise validation.ArgumentTypeError(f"{name} holds booleans: give integer codes (0 and 1) or categories")
    return arr


def check_codes(value: Any, name: str, n_values: Sequence[int], *, private: bool = True) -> np.ndarray:
    """Category codes: a 2-D int64 array whose column ``j`` lies in ``[0, n_values[j] - 1]``.

    As :func:`lib.validation.codes`, but for private data (``private``, the
    default) the message names the column and its public range only, never
    the value or the row that broke it.
    """
    if not private:
        return validation.codes(value, name, n_values)
    n_values = np.asarray(n_values)
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise validation.ArgumentTypeError(f"{name} must be a 2-D integer array with {n_values.size} columns; "
                                           f"got dtype {arr.dtype} and shape {arr.shape}")
    arr = validation.integer_array(arr, name)
    if arr.ndim != 2 or arr.shape[1] != n_values.size:
        raise ValueError(f"{name} must be a 2-D integer array with {n_values.size} columns; got shape {arr.shape}")
    if arr.size:
        bad = (arr.min(axis=0) < 0) | (arr.max(axis=0) >= n_values)
        if np.any(bad):
            j = int(np.argmax(bad))
            raise ValueError(f"{name} must hold codes in [0, {int(n_values[j]) - 1}] in column {j} "
                             f"(n_values[{j}] = {int(n_values[j])}); column {j} holds a code outside that "
                             "public range (which one, and where, is not shown: the data are private)")
    return arr


def check_classes(value: Any, name: str, n_classes: int) -> np.ndarray:
    """Class codes of private data: a 1-D int64 array in ``[0, n_classes - 1]`` (no value or index in a message)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise validation.ArgumentTypeError(f"{name} must be a 1-D integer array of class codes; got dtype "
                                           f"{arr.dtype} and shape {arr.shape}")
    arr = validation.integer_array(arr, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D integer array; got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= n_classes):
        raise ValueError(f"{name} must hold class codes in [0, {n_classes - 1}]; it holds a code outside that "
                         "public range (which one, and where, is not shown: the data are private)")
    return arr


def category_list(values: Any, name: str) -> np.ndarray:
    """One public list of labels: 1-D, at least two, distinct."""
    try:
        arr = np.asarray(values)
        if arr.dtype.kind == "O" or arr.ndim != 1:
            arr = np.array(list(values), dtype=object)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of labels; got {type(values).__name__}") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must list at least 2 labels; got {np.asarray(values, dtype=object).tolist()!r:.80}")
    if len(set(arr.tolist())) != arr.size:
        raise ValueError(f"{name} must list distinct labels; got {arr.tolist()!r:.80}")
    return arr


def category_lists(categories: Any, name: str) -> list[np.ndarray]:
    """The public categories of every column: a list of label lists (see :func:`category_list`)."""
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__"):
        raise ValueError(f"{name} must be a list with one list of labels per column; got {categories!r:.60}")
    return [category_list(c, f"{name}[{j}]") for j, c in enumerate(categories)]


def encode_labels(arr: Any, categories: Sequence[np.ndarray], name: str = "X", *,
                  private: bool = True) -> np.ndarray:
    """Integer codes of the labels in ``arr`` (2-D, one column per entry of ``categories``).

    A label not among its column's public categories is a ValueError naming
    the column and its categories (never a silent code). For data that are
    not private (``private=False``) the message also shows the label and the
    first row holding it.

    Examples
    --------
    >>> encode_labels([["b"], ["a"]], [np.array(["a", "b"])]).ravel().tolist()
    [1, 0]
    """
    arr = np.asarray(arr)
    if arr.ndim != 2 or arr.shape[1] != len(categories):
        raise ValueError(f"{name} must be a 2-D array with {len(categories)} columns (one per entry of the "
                         f"categories); got shape {arr.shape}")
    out = np.empty(arr.shape, dtype=np.int64)
    for j, cats in enumerate(categories):
        index = {v: i for i, v in enumerate(cats.tolist())}
        column = arr[:, j]
        if column.dtype.kind in "iub":   # numbers: look up the distinct values only
            values, inverse = np.unique(column, return_inverse=True)
            codes = np.array([index.get(v, -1) for v in values.tolist()], dtype=np.int64)[np.ravel(inverse)]
        else:   # labels (strings, objects): one hash look-up per row, no sort
            codes = np.fromiter((index.get(v, -1) for v in column.tolist()), dtype=np.int64, count=column.size)
        if np.any(codes < 0):
            where = f"column {j}" if name == "X" else name
            what = "categories" if name == "X" else "classes"
            if private:
                raise ValueError(f"{name} holds a label in {where} that is not among the public {what} "
                                 f"{cats.tolist()!r:.120} (which one, and where, is not shown: the data are "
                                 "private)")
            row = int(np.argmax(codes < 0))
            bad = column[row].item() if hasattr(column[row], "item") else column[row]
            raise ValueError(f"{name} holds {bad!r} in {where} (row {row}), which is not among the public "
                             f"{what} {cats.tolist()!r:.120}")
        out[:, j] = codes
    return out
