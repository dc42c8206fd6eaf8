"""A second floating-point path: every transcendental result moved by one ulp.

The book's stored outputs must not depend on the last bits of exp, log or the
gamma family, which differ between CPUs (numpy's AVX-512 kernels against libm,
glibc against macOS, x86 against ARM). CI checks this on any machine by running
nbval a second time with this file on ``PYTHONPATH`` and ``DIRICHLET_FP_NUDGE``
set: Python imports ``sitecustomize`` at start-up, before a kernel imports
anything, and this module then replaces

* numpy's transcendental ufuncs (``exp``, ``log``, ``log1p``, ``expm1``,
  ``power``, ``logaddexp``, the hyperbolic and trigonometric functions, ...),
* every floating-point ufunc of ``scipy.special`` (``gammaln``, ``digamma``,
  ``betaln``, ``xlogy``, ...) and its functions ``polygamma``, ``zeta``, ``logsumexp`` and
  ``multigammaln``,
* the same functions of the ``math`` module,

by wrappers whose results are moved by one unit in the last place. Results
that are integers (``exp(0)``, ``log(1)``, ``gammaln(2)``, ``2.0 ** 3``), which
every libm returns exactly, are left alone, as are infinities and NaN.

``DIRICHLET_FP_NUDGE`` selects the direction: ``up`` (towards +inf), ``down``,
or ``mixed`` (up where the result's last mantissa bit is 1, down where it is 0,
a deterministic stand-in for a libm that errs both ways). Unset or empty: this
file does nothing. Reductions (``np.logaddexp.reduce``) and code that imported
a function object before start-up are not affected.
"""

from __future__ import annotations

import math
import os

_MODE = os.environ.get("DIRICHLET_FP_NUDGE", "").strip().lower()

_NUMPY_NAMES = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp",
    "logaddexp2", "power", "float_power", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "arctan2", "cbrt",
)
_SCIPY_FUNCTIONS = ("polygamma", "zeta", "multigammaln", "logsumexp")
_MATH_NAMES = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "lgamma",
    "gamma", "erf", "erfc", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "cbrt",
)


def _install(mode: str) -> None:
    import numpy as np

    if mode not in ("up", "down", "mixed"):
        # SystemExit, not ValueError: Python reports an exception in sitecustomize and goes on
        raise SystemExit(f"DIRICHLET_FP_NUDGE must be 'up', 'down' or 'mixed', got {mode!r}")

    def nudge_values(values):
        """``values`` (a float ndarray) moved by one ulp, integers and non-finite kept."""
        movable = np.isfinite(values) & (values != np.floor(values))
        if mode == "up":
            target = np.inf
        elif mode == "down":
            target = -np.inf
        else:
            bits = values.view(np.uint64 if values.dtype.itemsize == 8 else np.uint32)
            target = np.where(bits & 1, np.inf, -np.inf)
        return np.where(movable, np.nextafter(values, target), values)

    def nudge(result, out_given, where):
        if isinstance(result, tuple):
            return tuple(nudge(r, out_given, where) for r in result)
        if isinstance(result, np.ndarray):
            if result.dtype.kind != "f":
                return result
            moved = nudge_values(result)
            if out_given:
                np.copyto(result, moved, where=where)
                return result
            if where is not True:
                np.copyto(moved, result, where=~np.asarray(where, dtype=bool))
            return moved
        if isinstance(result, np.floating):
            return result.dtype.type(nudge_values(np.asarray(result))[()])
        if isinstance(result, float):
            return float(nudge_values(np.asarray(result))[()])
        return result                          # pandas objects, integers: unchanged

    class NudgedUfunc:
        """Calls a ufunc and moves its floating results by one ulp."""

        def __init__(self, ufunc):
            self._ufunc = ufunc
            self.__name__ = ufunc.__name__
            self.__doc__ = ufunc.__doc__

        def __call__(self, *args, **kwargs):
            result = self._ufunc(*args, **kwargs)
            return nudge(result, "out" in kwargs and kwargs["out"] is not None,
                         kwargs.get("where", True))

        def __getattr__(self, name):           # nin, nout, reduce, outer, ...
            return getattr(self._ufunc, name)

        def __repr__(self):
            return f"<nudged ufunc {self.__name__!r}>"

    def nudged_scalar(function):
        def wrapper(*args, **kwargs):
            return nudge(function(*args, **kwargs), False, True)
        wrapper.__name__ = function.__name__
        wrapper.__doc__ = function.__doc__
        return wrapper

    for name in _NUMPY_NAMES:
        setattr(np, name, NudgedUfunc(getattr(np, name)))
    for name in _MATH_NAMES:
        if hasattr(math, name):
            setattr(math, name, nudged_scalar(getattr(math, name)))

    import scipy.special as special

    for name in dir(special):
        function = getattr(special, name)
        if isinstance(function, np.ufunc) and any(
                signature.split("->")[1].strip("FD") and "d" in signature.split("->")[1]
                for signature in function.types):
            setattr(special, name, NudgedUfunc(function))
    for name in _SCIPY_FUNCTIONS:               # Python functions over private ufuncs
        setattr(special, name, nudged_scalar(getattr(special, name)))
    os.environ.setdefault("DIRICHLET_FP_NUDGE_ACTIVE", mode)


if _MODE:
    _install(_MODE)
