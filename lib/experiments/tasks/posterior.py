"""The single-posterior task (chapters 10-12): one beta-binomial posterior released by each mechanism.

A data set is ``n`` bits with ``ones`` ones (a binary label, or synthetic
counts): :meth:`Posterior.prepare` takes a dataset's training labels,
:func:`counts_data` wraps given counts. At each budget :math:`\\hat\\varepsilon`
(with the target's :math:`\\delta`) every mechanism of
:data:`lib.experiments.hellinger.ENTRIES` releases the posterior
:math:`\\mathrm{beta}(\\alpha + a, \\beta + n - a)` and is scored by
:func:`lib.experiments.hellinger.head_to_head` (Hellinger distance, KL divergence
and error of the mean, each a mean with its standard error). The entries draw in
order from one generator, ``numpy.random.default_rng([seed, key, n])`` with
``key`` the budget's position (or the ``keys`` given), as chapter 12 keyed them; the option
``key`` chooses the parts of that seed key (the split's index, for repeated data sets, or
none but the budget's). Besides a dataset's labels, :meth:`Posterior.prepare` draws the
synthetic data sets of :data:`SYNTHETIC` on each split.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lib import validation
from lib.mechanisms.protocol import Mechanism, get
from lib.privacy.guarantees import ApproximateDP, Guarantee
from lib.validation import SeedLike
from lib.experiments.prepared import Prepared, prepared
from lib.experiments.hellinger import ENTRIES, head_to_head
from lib.experiments.preprocessing import BINNING, SEED, prepare

#: The scores of each release.
METRICS = ("hellinger", "kl", "mean_error")

#: The synthetic data sets of chapter 12: name -> (theta, n), a binomial draw each, in this order.
SYNTHETIC = {f"theta={theta}, n={n}": (theta, n) for theta in (0.5, 0.05) for n in (100, 1000)}

#: The root of the synthetic data sets' draws on split ``s``: ``default_rng([SYNTHETIC_ROOT, s - 1])``.
SYNTHETIC_ROOT = 1313

#: The parts a seed key may hold after the root seed (see :meth:`Posterior.evaluate_many`).
KEY_PARTS = ("split", "budget", "n")


def counts_data(ones: int, n: int, name: str = "data", seed: int | None = None) -> Prepared:
    """A data set of ``n`` bits with ``ones`` ones, as prepared data (the bits are the training labels).

    ``seed`` is the split (or repeat) the data set belongs to, None for one made elsewhere.
    """
    n = validation.integer(n, "n")
    ones = validation.integer(ones, "ones", 0, n)
    seed = None if seed is None else validation.integer(seed, "seed", 0)
    y = np.r_[np.ones(ones, np.int64), np.zeros(n - ones, np.int64)]
    return Prepared(name, seed, np.zeros((n, 0), np.int64), np.zeros((0, 0), np.int64), y, np.zeros(0, np.int64),
                    np.zeros(0, np.int64), 2, (), (0, 1))


def histogram_data(counts: ArrayLike, name: str = "data") -> Prepared:
    """A data set of ``sum(counts)`` labels with ``counts[j]`` of category ``j``, as prepared data (``k >= 2``)."""
    counts = validation.integer_array(counts, "counts")
    if counts.ndim != 1 or counts.size < 2 or counts.min() < 0 or counts.sum() < 1:
        raise ValueError(f"counts must be a histogram of k >= 2 non-negative counts with a positive total; "
                         f"got {counts.tolist()}")
    n, k = int(counts.sum()), int(counts.size)
    y = np.repeat(np.arange(k, dtype=np.int64), counts)
    return Prepared(name, None, np.zeros((n, 0), np.int64), np.zeros((0, 0), np.int64), y, np.zeros(0, np.int64),
                    np.zeros(0, np.int64), k, (), tuple(range(k)))


def synthetic_counts(rng: SeedLike) -> dict:
    """One binomial draw of every data set of :data:`SYNTHETIC`, in order, from ``rng``: name -> (ones, n)."""
    rng = validation.generator(rng)
    return {name: (int(rng.binomial(n, theta)), n) for name, (theta, n) in SYNTHETIC.items()}


class Posterior:
    """One beta-binomial posterior of a prepared data set's binary labels (or a Dirichlet posterior of its labels).

    Parameters
    ----------
    data : lib.experiments.engine.Prepared
        Its training labels are the bits (two classes), or the categories of a histogram
        (:func:`histogram_data`, ``k > 2`` classes: only the entries of
        :data:`lib.experiments.hellinger.K_ENTRIES` are drawn).
    """

    name = "posterior"
    metrics = METRICS
    datasets = ("Adult",)

    def __init__(self, data: Prepared) -> None:
        if not isinstance(data, Prepared) or data.n_classes < 2 or data.y_train is None:
            raise validation.ArgumentTypeError("data must be a Prepared with two classes or more (Posterior.prepare, "
                                               "counts_data or histogram_data)")
        self.data = data

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = BINNING) -> Prepared:
        """The training labels of ``dataset`` on the split of ``seed`` (a dataset with two classes).

        A name of :data:`SYNTHETIC` is a binomial draw instead: the one of
        :func:`synthetic_counts` ``(numpy.random.default_rng([SYNTHETIC_ROOT, seed - 1]))`` (split
        ``seed`` draws all synthetic data sets from one generator, in order).
        """
        if dataset in SYNTHETIC:
            seed = validation.integer(seed, "seed")
            ones, n = synthetic_counts(np.random.default_rng([SYNTHETIC_ROOT, seed - SEED]))[dataset]
            return counts_data(ones, n, dataset, seed)
        return prepared(prepare(dataset, seed=seed, binning=binning), dataset, seed)

    @staticmethod
    def supports(cls: type[Mechanism]) -> bool:
        """Whether the engine can run ``cls`` on this task: a mechanism of :data:`~lib.experiments.hellinger.ENTRIES`."""
        return any(get(name) is cls for _, name, _ in ENTRIES)

    def evaluate_many(self, mechanisms: Sequence[str | type[Mechanism]], budgets: ArrayLike, n_repeats: int, *,
                      target: Guarantee | None = None, seed: int = 0, dataset: str | None = None,
                      cache: dict | None = None, prior: ArrayLike = (1.0, 1.0), reference_share: float = 0.3,
                      reference: ArrayLike | None = None, keys: Sequence[int] | None = None,
                      exact_dirichlet: bool = True, key: str | Sequence[str] = ("budget", "n")) -> pd.DataFrame:
        """The scores of every entry at every budget: a tidy frame.

        Every entry of :data:`~lib.experiments.hellinger.ENTRIES` is drawn (in
        order, from one generator per budget); the rows of the entries whose
        registry class is among ``mechanisms`` are kept.

        Parameters
        ----------
        target : ApproximateDP, optional
            Its :math:`\\delta` is kept, each budget replaces :math:`\\hat\\varepsilon`
            (default :math:`\\delta = 10^{-6}`).
        n_repeats : int
            Draws of each Monte Carlo mechanism (>= 2).
        prior : sequence of float
            The Beta prior (the Dirichlet prior, one entry per category, for ``k > 2``).
        reference_share : float in (0, 1)
            Appendix B's public reference histogram is ``(share n, (1 - share) n)``.
        reference : sequence of float, optional
            Appendix B's public reference histogram itself, one positive entry per category
            (required for ``k > 2``; replaces ``reference_share``).
        keys : sequence of int, optional
            The seed key of each budget (default its position).
        key : sequence of str, default ("budget", "n")
            The parts of each budget's seed key after the root seed, in order, among
            :data:`KEY_PARTS`: ``"budget"`` the budget's key (``keys``), ``"n"`` the data set's
            size, ``"split"`` the split's index ``s - 1`` (for data prepared on split ``s``). The
            engine runs split ``s`` at root ``seed + s - 1``; with ``"split"`` in the key the
            root is the engine's ``seed`` on every split, and the split enters through the key:
            ``("split", "budget", "n")`` draws from ``default_rng([seed, s - 1, k, n])``.

        Returns
        -------
        pandas.DataFrame
            ``dataset, model, epsilon_hat, ones, n, metric, mean, se`` (``model`` the entry's display name);
            for ``k > 2`` categories ``counts`` (the histogram, a tuple) instead of ``ones``.
        """
        target = ApproximateDP(1.0, 1e-6) if target is None else target
        if not isinstance(target, ApproximateDP):
            raise ValueError(f"target must be an ApproximateDP (its delta is kept); got {target!r:.60}")
        eps = np.atleast_1d(validation.positive(budgets, "epsilon_hats")).astype(float)
        keys = list(range(eps.size)) if keys is None else [validation.integer(k, "keys", 0) for k in keys]
        if len(keys) != eps.size:
            raise ValueError(f"keys must hold one seed key per budget ({eps.size}); got {len(keys)}")
        share = validation.scalar(validation.open_unit(reference_share, "reference_share"), "reference_share")
        key = (key,) if isinstance(key, str) else tuple(key)
        if not key or any(part not in KEY_PARTS for part in key) or len(set(key)) != len(key):
            raise ValueError(f"key must hold distinct parts among {KEY_PARTS}; got {key!r:.80}")
        split = None
        if "split" in key:
            if self.data.seed is None:
                raise ValueError("key: 'split' needs data prepared on a split (Posterior.prepare or counts_data "
                                 "with a seed)")
            split = self.data.seed - SEED
            seed = seed - split  # the engine's root seed
        wanted = {get(m) for m in mechanisms}
        shown = [display for display, name, _ in ENTRIES if get(name) in wanted]
        y = np.asarray(self.data.y_train)
        n, n_classes = int(y.size), int(self.data.n_classes)
        if n_classes == 2:
            ones = int(y.sum())
            counts, column = (ones, n - ones), {"ones": ones}
        else:
            counts = np.bincount(y, minlength=n_classes)
            column = {"counts": tuple(int(c) for c in counts)}
        if reference is None:
            if n_classes != 2:
                raise ValueError(f"reference must be given for a histogram of {n_classes} categories "
                                 "(a public histogram, one positive entry per category)")
            reference = [share * n, (1 - share) * n]
        rows = []
        for e, k in zip(eps, keys):
            res = head_to_head(prior, counts, float(e), target.delta, reference=np.asarray(reference, float),
                               repeats=n_repeats,
                               rng=np.random.default_rng([seed, *({"split": split, "budget": k, "n": n}[part]
                                                                   for part in key)]),
                               exact_dirichlet=exact_dirichlet)
            for display in shown:
                if display not in res:
                    continue
                for metric, (mean, se) in res[display].items():
                    rows.append({"dataset": self.data.dataset if dataset is None else dataset, "model": display,
                                 "epsilon_hat": e, **column, "n": n, "metric": metric, "mean": mean, "se": se})
        return pd.DataFrame(rows)
