"""Binning a numeric column with public bounds: the transformer a private Pipeline needs.

scikit-learn's ``KBinsDiscretizer`` reads each column's minimum and maximum
(or quantiles) off the training data; the bin edges, and so the released
model, are then functions of private values that no mechanism accounts for.
:class:`PublicBins` takes the bounds in ``__init__`` (public knowledge: the
range of an age, of a sensor), so ``fit`` reads nothing but the number of
columns, and its codes carry their own public domain (``public_n_values``):
:class:`lib.models.naive_bayes.PrivateNaiveBayes` takes it as a declared
domain, and a grid over ``n_bins`` needs no hand-edited ``n_values``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib import validation
from lib.models.naive_bayes.domain import MAX_CELLS

__all__ = ["PublicBins", "PublicCodes"]


class PublicCodes(np.ndarray):
    """Integer codes (an int64 array) that carry the public number of values of each column.

    ``public_n_values`` is read by :meth:`lib.models.naive_bayes.PrivateNaiveBayes.fit`
    as a declared domain; ``numpy.asarray`` gives the plain array.
    """

    public_n_values: np.ndarray

    def __array_finalize__(self, obj: Any) -> None:
        self.public_n_values = getattr(obj, "public_n_values", None)


class PublicBins:
    """Equal-width bins between public bounds, column by column (a scikit-learn transformer).

    Parameters
    ----------
    bounds : sequence of (low, high), one per column
        The public range of each column, ``low < high``, finite. A value
        below ``low`` falls in the first bin and one above ``high`` in the last
        (clipping to a public range reads nothing from the data).
    n_bins : int or sequence of int, default 10
        The number of bins of every column (or of each), at least 2.

    Attributes
    ----------
    n_features_in_ : int
        The number of columns (``len(bounds)``).
    n_values_ : ndarray of int
        The number of bins of each column: the codes' public domain.

    Examples
    --------
    >>> bins = PublicBins([(0, 100), (0.0, 1.0)], n_bins=4)
    >>> codes = bins.fit_transform([[17, 0.2], [99, 0.99], [140, -1.0]])
    >>> np.asarray(codes).tolist(), codes.public_n_values.tolist()
    ([[0, 0], [3, 3], [3, 0]], [4, 4])
    """

    def __init__(self, bounds: Any, n_bins: Any = 10) -> None:
        self.bounds = bounds
        self.n_bins = n_bins

    def get_params(self, deep: bool = True) -> dict:
        """The ``__init__`` parameters (scikit-learn's ``clone`` and grids)."""
        return {"bounds": self.bounds, "n_bins": self.n_bins}

    def set_params(self, **params: Any) -> "PublicBins":
        """Set ``bounds`` or ``n_bins``; returns ``self``."""
        for name, value in params.items():
            if name not in ("bounds", "n_bins"):
                raise ValueError(f"{name!r} is not a parameter of PublicBins; the parameters are bounds, n_bins")
            setattr(self, name, value)
        return self

    def _edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        try:
            bounds = validation.as_float(self.bounds, "bounds")
        except ValueError:
            raise ValueError("bounds must be a sequence of (low, high) pairs of numbers, one per column") from None
        if bounds.ndim != 2 or bounds.shape[1] != 2 or bounds.shape[0] < 1:
            raise ValueError(f"bounds must be a sequence of (low, high) pairs, one per column; got shape "
                             f"{bounds.shape}")
        if not np.all(np.isfinite(bounds)) or np.any(bounds[:, 0] >= bounds[:, 1]):
            raise ValueError(f"bounds must hold finite pairs with low < high; got {bounds.tolist()!r:.120}")
        n = self.n_bins
        if np.ndim(n) == 0:
            n = [validation.integer(n, "n_bins", 2)] * bounds.shape[0]
        else:
            n = [validation.integer(v, f"n_bins[{j}]", 2) for j, v in enumerate(n)]
            if len(n) != bounds.shape[0]:
                raise ValueError(f"n_bins must be one integer or one per column ({bounds.shape[0]}); got {len(n)}")
        validation.cells(sum(n), "the bins of PublicBins", MAX_CELLS)
        return bounds[:, 0], bounds[:, 1], np.asarray(n, dtype=np.int64)

    def fit(self, X: Any, y: Any = None) -> "PublicBins":
        """Check the bounds and the number of columns; nothing is read from the values of ``X``."""
        low, _, n = self._edges()
        shape = np.shape(X)
        if len(shape) != 2 or shape[1] != low.size:
            raise ValueError(f"X must be a 2-D array with {low.size} columns (one per pair of bounds); got shape "
                             f"{shape}")
        self.n_features_in_ = int(low.size)
        self.n_values_ = n
        return self

    def transform(self, X: Any) -> PublicCodes:
        """The bin of every value, as :class:`PublicCodes` with ``public_n_values = n_values_``.

        Raises
        ------
        ValueError
            On a NaN or a non-numeric value (naming the column, not the row or the value).
        """
        if not hasattr(self, "n_values_"):
            raise ValueError("this PublicBins is not fitted yet; call fit first")
        low, high, n = self._edges()
        if not np.array_equal(n, self.n_values_):
            raise ValueError("n_bins changed since fit; fit again")
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[1] != low.size:
            raise ValueError(f"X must be a 2-D array with {low.size} columns; got shape {arr.shape}")
        try:
            values = validation.as_float(arr, "X")
        except ValueError:
            raise ValueError("X must hold numbers to be binned (a column of labels needs categories, "
                             "not bins)") from None
        nan = np.isnan(values).any(axis=0)
        if nan.any():
            raise ValueError(f"X column {int(np.argmax(nan))} holds NaN: give missing values a public value "
                             "(or category) before binning")
        scaled = (values - low) / (high - low) * n
        codes = np.clip(np.floor(scaled), 0, n - 1).astype(np.int64)
        out = codes.view(PublicCodes)
        out.public_n_values = n.copy()
        return out

    def fit_transform(self, X: Any, y: Any = None) -> PublicCodes:
        """``fit(X).transform(X)``."""
        return self.fit(X, y).transform(X)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The column names: ``input_features`` as given, or ``x0, x1, ...``."""
        if input_features is None:
            return np.array([f"x{j}" for j in range(self.n_features_in_)], dtype=object)
        return np.asarray(input_features, dtype=object)

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(), input_tags=InputTags())

    def __repr__(self) -> str:
        return f"PublicBins(bounds={self.bounds!r}, n_bins={self.n_bins!r})"
