"""What an exercise's answer must define, and the strict readers that turn it into numbers.

Every checked exercise declares its answers as :class:`Answer` objects: the name the student
defines, its type and shape, and what it means (units or scale). The student edition prints exactly
these statements in the answer cell (tools/student/build.py), and the check reads exactly these
names through :meth:`Answer.read`, which converts the value to the type the check expects and
refuses anything else with a ``TypeError`` naming the answer: strings, booleans, ``None``, and any
object that is not a number or an array of numbers (an object whose comparisons always answer True
is an ``object`` array to numpy, and is refused).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np


class AnswerTypeError(TypeError):
    """An answer of the wrong type or shape; the message names the answer and what it must be."""


def _numbers(value: Any, what: str, expected: str) -> np.ndarray:
    """``value`` as a float array; AnswerTypeError unless it holds only real numbers (not booleans)."""
    if value is None or isinstance(value, (str, bytes, bool, np.bool_, dict, set)):
        raise AnswerTypeError(f"{what} must be {expected}; got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # a ragged list, an object numpy cannot read
        raise AnswerTypeError(f"{what} must be {expected}; got {type(value).__name__} ({exc})") from None
    if arr.dtype.kind not in "iuf":
        raise AnswerTypeError(f"{what} must be {expected}; got {type(value).__name__} of dtype {arr.dtype} "
                              "(only real numbers are accepted)")
    return arr.astype(float)


def number(value: Any, what: str, *, integer: bool = False) -> float | int:
    """One real number (an int if ``integer``), from a Python or numpy scalar or a 0-d / size-1 array."""
    expected = "an integer" if integer else "a real number (float)"
    arr = _numbers(value, what, expected)
    if arr.size != 1 or arr.ndim > 1:
        raise AnswerTypeError(f"{what} must be {expected}; got an array of shape {arr.shape}")
    x = float(arr.reshape(()))
    if integer:
        if not np.isfinite(x) or x != round(x):
            raise AnswerTypeError(f"{what} must be {expected}; got {x!r}")
        return int(round(x))
    return x


def array(value: Any, what: str, shape: tuple) -> np.ndarray:
    """A float array of ``shape`` (None: any length on that axis)."""
    text = "x".join("n" if s is None else str(s) for s in shape)
    expected = f"an array of numbers of shape ({text})"
    arr = _numbers(value, what, expected)
    if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
        raise AnswerTypeError(f"{what} must be {expected}; got shape {arr.shape}")
    return arr


@dataclass(frozen=True)
class Answer:
    """One name an exercise's answer defines.

    kind: "float", "int", "array" (``shape``), "fields" (an object with the numeric attributes
    ``keys``), "mapping" (a dict with exactly the numeric keys ``keys`` and number values),
    "table" (a pandas DataFrame with the rows ``keys`` and columns ``columns``, numbers),
    "series" (a pandas Series of numbers indexed by numbers) or "encoding" (a dict of
    encode_dataset info frames, keyed by ``keys``).
    """

    name: str
    kind: str
    meaning: str
    shape: tuple = ()
    keys: tuple = ()
    columns: tuple = ()
    extra: dict = field(default_factory=dict)

    def type_text(self) -> str:
        """The type and shape, as the answer cell states it."""
        if self.kind == "float":
            return "float"
        if self.kind == "int":
            return "int"
        if self.kind == "array":
            return "float array of shape (" + ", ".join("n" if s is None else str(s) for s in self.shape) + \
                   ("," if len(self.shape) == 1 else "") + ")"
        if self.kind == "fields":
            return "an object with float attributes " + ", ".join(f".{k}" for k in self.keys)
        if self.kind == "mapping":
            return "dict {" + ", ".join(f"{k!r}: float" for k in self.keys) + "}"
        if self.kind == "table":
            return (f"pandas DataFrame of numbers, rows {list(self.keys)!r}, columns {list(self.columns)!r}")
        if self.kind == "series":
            return (f"pandas Series of floats indexed by {list(self.keys)!r}" if self.keys else
                    "pandas Series of floats indexed by floats")
        if self.kind == "mean_se":
            return ("dict {" + ", ".join(f"{k!r}" for k in self.keys) + "} of dicts {" +
                    ", ".join(f"{c!r}" for c in self.columns) + "} of (mean, standard error) pairs of floats")
        if self.kind == "encoding":
            return ("dict {" + ", ".join(f"{k!r}" for k in self.keys) +
                    "} of the info frames returned by encode_dataset(...)[1]")
        raise ValueError(f"unknown answer kind {self.kind!r}")

    def statement(self) -> str:
        return f"{self.name}: {self.type_text()}; {self.meaning}"

    def read(self, namespace: dict, label: str) -> Any:
        """The answer converted to what the check expects (AnswerTypeError naming it otherwise)."""
        value = namespace[self.name]
        what = f"{label}: answer `{self.name}`"
        if self.kind == "float":
            return number(value, what)
        if self.kind == "int":
            return number(value, what, integer=True)
        if self.kind == "array":
            return array(value, what, self.shape)
        if self.kind == "fields":
            out = {}
            for k in self.keys:
                if not hasattr(value, k):
                    raise AnswerTypeError(f"{what} must be {self.type_text()}; "
                                          f"{type(value).__name__} has no attribute .{k}")
                out[k] = number(getattr(value, k), f"{what}.{k}")
            return SimpleNamespace(**out)
        if self.kind == "mapping":
            if not hasattr(value, "keys") or not hasattr(value, "__getitem__"):
                raise AnswerTypeError(f"{what} must be {self.type_text()}; got {type(value).__name__}")
            got = list(value.keys())
            out = {}
            for k in self.keys:
                match = [g for g in got if not isinstance(g, (str, bool)) and _is_number(g) and float(g) == k]
                if not match:
                    raise AnswerTypeError(f"{what} must be {self.type_text()}; key {k!r} is missing")
                out[k] = number(value[match[0]], f"{what}[{k!r}]")
            return out
        if self.kind == "table":
            import pandas as pd
            if not isinstance(value, pd.DataFrame):
                raise AnswerTypeError(f"{what} must be a {self.type_text()}; got {type(value).__name__}")
            missing = [k for k in self.keys if k not in value.index] + \
                      [c for c in self.columns if c not in value.columns]
            if missing:
                raise AnswerTypeError(f"{what} must be a {self.type_text()}; missing {missing!r}")
            return array(value.loc[list(self.keys), list(self.columns)], what, (len(self.keys), len(self.columns)))
        if self.kind == "series":
            import pandas as pd
            if not isinstance(value, pd.Series):
                raise AnswerTypeError(f"{what} must be a {self.type_text()}; got {type(value).__name__}")
            if self.keys:
                missing = [k for k in self.keys if k not in value.index]
                if missing:
                    raise AnswerTypeError(f"{what} must be a {self.type_text()}; missing {missing!r}")
                return array(value.loc[list(self.keys)].to_numpy(), what, (len(self.keys),))
            index = array(value.index.to_numpy(), f"{what} (its index)", (None,))
            return pd.Series(array(value.to_numpy(), what, (None,)), index=index)
        if self.kind == "mean_se":
            if not hasattr(value, "keys") or not hasattr(value, "__getitem__"):
                raise AnswerTypeError(f"{what} must be {self.type_text()}; got {type(value).__name__}")
            out = np.empty((len(self.keys), len(self.columns), 2))
            for i, k in enumerate(self.keys):
                inner = [value[g] for g in value.keys()
                         if not isinstance(g, (str, bool)) and _is_number(g) and float(g) == k]
                if not inner:
                    raise AnswerTypeError(f"{what} must be {self.type_text()}; key {k!r} is missing")
                row = inner[0]
                for j, c in enumerate(self.columns):
                    if not hasattr(row, "keys") or c not in row:
                        raise AnswerTypeError(f"{what}[{k!r}] must be a dict with the key {c!r}")
                    out[i, j] = array(row[c], f"{what}[{k!r}][{c!r}]", (2,))
            return out
        if self.kind == "encoding":
            import pandas as pd
            if not isinstance(value, dict) or set(value) < set(self.keys):
                raise AnswerTypeError(f"{what} must be {self.type_text()}; got {type(value).__name__}")
            for k in self.keys:
                if not isinstance(value[k], pd.DataFrame) or "edges" not in value[k].columns:
                    raise AnswerTypeError(f"{what}[{k!r}] must be an info frame of encode_dataset "
                                          "(a DataFrame with an 'edges' column)")
            return value
        raise ValueError(f"unknown answer kind {self.kind!r}")


def _is_number(x) -> bool:
    try:
        return np.asarray(x).dtype.kind in "iuf"
    except Exception:
        return False
