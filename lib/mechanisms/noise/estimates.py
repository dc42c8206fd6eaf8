"""The non-private estimates the mechanisms are compared with: a smoothed histogram and the uniform table.

:class:`SmoothedEstimate` releases the counts plus a pseudo-count, normalised (the
unsmoothed class prior of a naive Bayes model when the spec says so); :class:`Uniform`
releases the uniform distribution whatever the data (0-DP).
"""

from __future__ import annotations

from typing import Hashable

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.protocol import (Mechanism, NotPrivate, PureDP, ReleaseSpec)


class _Estimate(Mechanism):
    """Shared release path of the non-private estimates: a distribution computed in logs."""

    private = False
    notions = (NotPrivate,)

    def release(self, counts, rng=None) -> np.ndarray:
        """:meth:`log_release`, exponentiated."""
        return np.exp(self.log_release(counts, rng))


class SmoothedEstimate(_Estimate):
    """The non-private estimate :math:`(f + a)/\\sum(f + a)` of every vector (the "Non-private" model).

    With pseudo-count :math:`a` = ``smoothing``; the first release of a naive
    Bayes model (the class counts) is unsmoothed (scikit-learn's
    ``CategoricalNB``): the calibrations build it with ``smoothing=0`` for the
    releases that ``spec.priors`` names.

    Parameters
    ----------
    smoothing : float, default 0.1
        Pseudo-count :math:`a \\ge 0` added to every count.
    """

    name, label = "mle", "Non-private"
    guarantee = NotPrivate()
    #: Pseudo-count of the tables that the calibrations build (the author's value).
    smoothing = 0.1

    def __init__(self, smoothing: float = 0.1) -> None:
        self.smoothing = validation.scalar(validation.nonnegative(smoothing, "smoothing"), "smoothing")

    def __repr__(self) -> str:
        return f"SmoothedEstimate(smoothing={self.smoothing:g})"

    def log_release(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """:math:`\\log(f + a) - \\log\\sum(f + a)` along the last axis (``rng`` is unused)."""
        counts = validation.vectors(counts, "counts", positive_entries=False)
        s = counts + self.smoothing
        if self.smoothing == 0 and np.any(s == 0):
            raise ValueError("counts must be positive where smoothing is 0 (a zero count has no "
                             "finite log-probability)")
        return np.log(s) - np.log(s.sum(axis=-1, keepdims=True))

    @classmethod
    def release_key(cls, spec: ReleaseSpec, index: int) -> Hashable:
        return index in spec.priors

    @classmethod
    def _not_private_release(cls, spec, index):
        """Smoothing ``smoothing`` for a table, 0 for a class prior (``spec.priors``)."""
        return cls(0.0 if index in spec.priors else cls.smoothing)


class Uniform(_Estimate):
    """The uniform distribution, whatever the counts (the "Random" model; 0-DP)."""

    name, label = "random", "Random"
    guarantee = PureDP(0.0)
    #: The uniform tables meet every pure-DP target (they are 0-DP); the grids run them as a reference.
    notions = (NotPrivate, PureDP)
    #: A classifier built from uniform tables guesses uniformly at random.
    uninformative = True

    def __repr__(self) -> str:
        return "Uniform()"

    @classmethod
    def _pure_release(cls, target, spec, index):
        """The uniform tables, whatever the share (they are 0-DP)."""
        return cls()

    def log_release(self, counts: ArrayLike, rng: SeedLike = None) -> np.ndarray:
        """:math:`-\\log d` everywhere (``rng`` is unused)."""
        counts = validation.vectors(counts, "counts", positive_entries=False)
        return np.full(counts.shape, -np.log(counts.shape[-1]))
