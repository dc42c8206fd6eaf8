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
``key`` the budget's position (or the ``keys`` given), as chapter 12 keyed them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib import validation
from lib.mechanisms.protocol import get
from lib.privacy.guarantees import ApproximateDP
from lib.experiments.prepared import Prepared, prepared
from lib.experiments.hellinger import ENTRIES, head_to_head
from lib.experiments.preprocessing import BINNING, prepare

#: The scores of each release.
METRICS = ("hellinger", "kl", "mean_error")


def counts_data(ones: int, n: int, name: str = "data") -> Prepared:
    """A data set of ``n`` bits with ``ones`` ones, as prepared data (the bits are the training labels)."""
    n = validation.integer(n, "n")
    ones = validation.integer(ones, "ones", 0, n)
    y = np.r_[np.ones(ones, np.int64), np.zeros(n - ones, np.int64)]
    return Prepared(name, None, np.zeros((n, 0), np.int64), np.zeros((0, 0), np.int64), y, np.zeros(0, np.int64),
                    np.zeros(0, np.int64), 2, (), (0, 1))


class Posterior:
    """One beta-binomial posterior of a prepared data set's binary labels.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared
        Its training labels are the bits (two classes).
    """

    name = "posterior"
    metrics = METRICS
    datasets = ("Adult",)

    def __init__(self, data):
        if not isinstance(data, Prepared) or data.n_classes != 2 or data.y_train is None:
            raise validation.ArgumentTypeError("data must be a Prepared with two classes (Posterior.prepare or "
                                               "counts_data)")
        self.data = data

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = BINNING) -> Prepared:
        """The training labels of ``dataset`` on the split of ``seed`` (a dataset with two classes)."""
        return prepared(prepare(dataset, seed=seed, binning=binning), dataset, seed)

    @staticmethod
    def supports(cls) -> bool:
        """Whether the engine can run ``cls`` on this task: a mechanism of :data:`~lib.experiments.hellinger.ENTRIES`."""
        return any(get(name) is cls for _, name, _ in ENTRIES)

    def evaluate_many(self, mechanisms, budgets, n_repeats, *, target=None, seed=0, dataset=None, cache=None,
                      prior=(1.0, 1.0), reference_share=0.3, keys=None, exact_dirichlet=True):
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
        prior : pair of float
            The Beta prior.
        reference_share : float in (0, 1)
            Appendix B's public reference histogram is ``(share n, (1 - share) n)``.
        keys : sequence of int, optional
            The seed key of each budget (default its position).

        Returns
        -------
        pandas.DataFrame
            ``dataset, model, epsilon_hat, ones, n, metric, mean, se`` (``model`` the entry's display name).
        """
        target = ApproximateDP(1.0, 1e-6) if target is None else target
        if not isinstance(target, ApproximateDP):
            raise ValueError(f"target must be an ApproximateDP (its delta is kept); got {target!r:.60}")
        eps = np.atleast_1d(validation.positive(budgets, "epsilon_hats")).astype(float)
        keys = list(range(eps.size)) if keys is None else [validation.integer(k, "keys", 0) for k in keys]
        if len(keys) != eps.size:
            raise ValueError(f"keys must hold one seed key per budget ({eps.size}); got {len(keys)}")
        share = validation.scalar(validation.open_unit(reference_share, "reference_share"), "reference_share")
        wanted = {get(m) for m in mechanisms}
        shown = [display for display, name, _ in ENTRIES if get(name) in wanted]
        y = np.asarray(self.data.y_train)
        n, ones = int(y.size), int(y.sum())
        rows = []
        for e, key in zip(eps, keys):
            res = head_to_head(prior, (ones, n - ones), float(e), target.delta,
                               reference=np.array([share * n, (1 - share) * n]), repeats=n_repeats,
                               rng=np.random.default_rng([seed, key, n]), exact_dirichlet=exact_dirichlet)
            for display in shown:
                if display not in res:
                    continue
                for metric, (mean, se) in res[display].items():
                    rows.append({"dataset": self.data.dataset if dataset is None else dataset, "model": display,
                                 "epsilon_hat": e, "ones": ones, "n": n, "metric": metric, "mean": mean, "se": se})
        return pd.DataFrame(rows)
