"""The Bayesian-network task (Section 5.2): :math:`K` conditional tables released, scored by the test log-likelihood (eq. (11))."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib.mechanisms.protocol import Mechanism, ModelCalibration
from lib.models.bayesian_network import count_tables, log_likelihood, network_spec, release_tables
from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib.validation import SeedLike
from lib.experiments.defaults import BN_DATASETS
from lib.experiments.prepared import Prepared, prepared
from lib.experiments.networks import NetworkData, prepare_network
from lib.experiments.preprocessing import BINNING
from lib.experiments.tasks.naive_bayes import releases_count_tables


class BayesianNetwork:
    """A private Bayesian network on one prepared split: one count table per node given its parents.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared or lib.experiments.networks.NetworkData
        The nodes' codes (every node a column, the label included) and the parents.
    """

    name = "bayesian-network"
    metrics = ("log_likelihood",)
    prefix = {RenyiDP: "bn:", ApproximateDP: "bn-dp:"}
    datasets = BN_DATASETS

    def __init__(self, data: Prepared | NetworkData) -> None:
        self.data = prepared(data)
        d = self.data
        if not d.parents:
            raise ValueError("data must be a network's prepared data (with parents), e.g. from "
                             "BayesianNetwork.prepare or lib.experiments.networks.prepare_network")
        self.tables = count_tables(d.X_train, d.n_values, d.parents)
        self.spec = network_spec(d.n_values, d.parents, d.X_train.shape[0])

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = BINNING) -> Prepared:
        """The network of ``dataset`` on the split of ``seed`` (:func:`lib.experiments.networks.prepare_network`)."""
        return prepared(prepare_network(dataset, seed, binning=binning), dataset, seed)

    def release(self, calibration: ModelCalibration, n_draws: int, rng: SeedLike) -> list[np.ndarray]:
        """``n_draws`` released networks: one batch of log-tables per node."""
        return release_tables(self.tables, calibration, n_draws=n_draws, rng=rng)

    def score(self, batches: Sequence[list[np.ndarray]]) -> dict[str, np.ndarray]:
        """The test log-likelihood of every released network, concatenated in order: metric -> array (B,)."""
        logs = [np.concatenate([b[k] for b in batches]) for k in range(len(self.tables))]
        return {"log_likelihood": log_likelihood(self.data.X_test, logs, self.data.n_values, self.data.parents)}

    def score_uninformative(self, budgets: ArrayLike, n_repeats: int, seed: int, dataset: str,
                            key: str) -> dict[str, np.ndarray]:
        raise ValueError("a Bayesian network has no uninformative model (it scores a likelihood, "
                         "not guesses)")

    @staticmethod
    def supports(cls: type[Mechanism]) -> bool:
        """Whether the engine can run ``cls`` on this task: count tables (:func:`~lib.experiments.tasks.naive_bayes.releases_count_tables`), not uniform ones (a network has no uninformative model)."""
        return releases_count_tables(cls) and not getattr(cls, "uninformative", False)
