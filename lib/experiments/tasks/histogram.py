"""The histogram task (chapter 14, Task 1): one attribute's histogram released as a probability vector.

The released vector :math:`y` is scored against the empirical distribution
:math:`p` of the training rows by the KL divergence :math:`\\mathrm{KL}(p \\,\\|\\, y)`
and the total-variation distance :math:`\\tfrac12\\lVert p - y\\rVert_1` (:func:`kl_tv`).
Every mechanism is calibrated to the target at one budget for the one release of
the histogram (``ReleaseSpec.of([counts], n)``). The releases of the ``k``-th
mechanism draw from ``numpy.random.default_rng([seed, key_k])``, ``key_k`` its
position in the list (or the ``keys`` given), as chapter 14 keyed them; the option
``entropy`` orders the seed's entries otherwise (chapter 14's sweep over the number of rows).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.protocol import Mechanism, ReleaseSpec, get
from lib.privacy.guarantees import ApproximateDP, Guarantee
from lib.experiments.data import label_column
from lib.experiments.cells import layout
from lib.experiments.prepared import Prepared, prepared
from lib.experiments.preprocessing import BINNING, Split, prepare


def kl_tv(p: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """KL divergence :math:`\\sum_i p_i \\log(p_i/y_i)` (terms with :math:`p_i = 0` are 0) and TV distance, per release.

    Parameters
    ----------
    p : array_like, shape (d,)
        The empirical distribution.
    y : array_like, shape (..., d)
        Released probability vectors.

    Returns
    -------
    tuple of ndarray, shape (...)
        KL and TV of every release.
    """
    y = np.asarray(y, dtype=float)
    p = np.broadcast_to(np.asarray(p, dtype=float), y.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(p > 0, p * np.log(p / y), 0.0).sum(-1)
    return kl, 0.5 * np.abs(p - y).sum(-1)


def histogram_counts(data: Prepared, attribute: str, n_rows: int | None = None) -> np.ndarray:
    """Counts of the first ``n_rows`` training rows of ``data`` over the public domain of ``attribute``.

    ``attribute`` is a column of ``data`` or its label column (the class).
    """
    try:
        label = label_column(data.dataset)
    except ValueError:      # data prepared elsewhere, without a dataset name
        label = None
    if n_rows is not None:
        n_rows = validation.integer(n_rows, "n_rows")
    if attribute == label:
        return np.bincount(data.y_train[:n_rows], minlength=data.n_classes)
    if attribute not in data.attributes:
        raise ValueError(f"attribute must be a column of {data.dataset} or its label {label!r}; got {attribute!r:.60}")
    j = data.attributes.index(attribute)
    return np.bincount(data.X_train[:n_rows, j], minlength=data.n_values[j])


def _entropy(entropy) -> tuple:
    """The ``entropy`` option of :meth:`Histogram.evaluate_many`, checked: whole numbers >= 0 and the
    names ``"seed"`` and ``"mechanism"`` (each at most once)."""
    if isinstance(entropy, (str, bytes)) or not hasattr(entropy, "__iter__"):
        raise validation.ArgumentTypeError(f"entropy must be a sequence; got {type(entropy).__name__}")
    out = []
    for v in entropy:
        if isinstance(v, str):
            if v not in ("seed", "mechanism") or v in out:
                raise ValueError(f"entropy may name 'seed' and 'mechanism', each at most once; got {v!r:.40}")
            out.append(v)
        else:
            out.append(validation.integer(v, "entropy", 0))
    if not out:
        raise ValueError("entropy must hold at least one entry")
    return tuple(out)


class Histogram:
    """One histogram of a prepared split, released by each mechanism.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared or lib.experiments.preprocessing.Split
    """

    name = "histogram"
    metrics = ("kl", "tv")
    datasets = ("Adult",)

    def __init__(self, data: Prepared | Split) -> None:
        self.data = prepared(data, getattr(data, "dataset", "Adult"))

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = BINNING) -> Prepared:
        """Dataset ``dataset`` split with ``seed`` and encoded (:func:`lib.experiments.preprocessing.prepare`)."""
        return prepared(prepare(dataset, seed=seed, binning=binning), dataset, seed)

    @staticmethod
    def supports(cls: type[Mechanism]) -> bool:
        """Whether the engine can run ``cls`` on this task: a private mechanism that releases a distribution."""
        return cls.output == "distribution" and cls.private

    def evaluate_many(self, mechanisms: Sequence[str | type[Mechanism]], budgets: ArrayLike, n_repeats: int, *,
                      target: Guarantee | None = None, seed: int = 0, dataset: str | None = None,
                      cache: dict | None = None, attribute: str, n_rows: int | None = None,
                      keys: Sequence[int] | None = None,
                      entropy: Sequence[int | str] = ("seed", "mechanism")) -> pd.DataFrame:
        """``n_repeats`` releases of the histogram of ``attribute`` by each mechanism at each budget.

        Parameters
        ----------
        attribute : str
            The attribute (or the label) whose histogram is released.
        n_rows : int, optional
            Only the first ``n_rows`` training rows (a subsample: the split is shuffled).
        keys : sequence of int, optional
            The seed key of each mechanism (default its position).
        entropy : sequence, optional
            The entries of each release batch's seed, ``numpy.random.default_rng(entropy)``:
            non-negative whole numbers and the names ``"seed"`` (the run's seed of the
            split) and ``"mechanism"`` (the mechanism's key), each name at most once.
            Default ``("seed", "mechanism")``.

        Returns
        -------
        pandas.DataFrame
            ``dataset`` (the attribute), ``model``, the budget column of ``target``'s layout
            (``epsilon_hat`` for approximate DP), ``repeat``, ``kl``, ``tv``.

        Raises
        ------
        ValueError
            If a mechanism cannot meet the target at a budget (a histogram is one release: there
            is no other calibration to fall back on), naming the mechanism, the target and why.
        """
        target = ApproximateDP(1.0, 1e-5) if target is None else target
        budget = layout(target).budget
        eps = np.atleast_1d(validation.positive(budgets, budget + "s")).astype(float)
        n_repeats = validation.integer(n_repeats, "n_repeats")
        classes = [get(m) for m in mechanisms]
        keys = list(range(len(classes))) if keys is None else [validation.integer(k, "keys", 0) for k in keys]
        if len(keys) != len(classes):
            raise ValueError(f"keys must hold one seed key per mechanism ({len(classes)}); got {len(keys)}")
        entropy = _entropy(entropy)
        counts = histogram_counts(self.data, attribute, n_rows)
        n = int(counts.sum())
        p = counts / counts.sum()
        spec = ReleaseSpec.of([counts], n)
        frames = []
        for e in eps:
            for cls, key in zip(classes, keys):
                cal = cls.calibrate(target.with_level(float(e)), spec, cache=cache)
                if not cal.attained:
                    raise ValueError(f"{cls.name} cannot meet {target.with_level(float(e))} for a histogram of "
                                     f"{len(counts)} categories: {cal.parameters.get('reason', 'not attained')}; "
                                     f"leave it out or choose another {budget}")
                mech = cal.releases[0]
                rng = np.random.default_rng([{"seed": seed, "mechanism": key}.get(v, v) for v in entropy])
                y = mech.release(np.broadcast_to(counts, (n_repeats, len(counts))), rng)
                kl, tv = kl_tv(p, y)
                frames.append(pd.DataFrame({"dataset": attribute, "model": cls.name, budget: e,
                                            "repeat": np.arange(n_repeats), "kl": kl, "tv": tv}))
        return pd.concat(frames, ignore_index=True)
