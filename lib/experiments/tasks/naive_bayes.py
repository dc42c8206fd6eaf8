"""The naive-Bayes task (Section 5.1): :math:`K + 1` count tables released, scored by test cross-entropy and accuracy."""

from __future__ import annotations

import copy
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib.mechanisms.hellinger import CountGaussian, CountLaplace, SmoothedHellinger
from lib.mechanisms.posterior_sampling import TruePosterior
from lib.mechanisms.protocol import Mechanism, ModelCalibration
from lib.models.naive_bayes import count, model_spec, release_parameters
from lib.models.naive_bayes.scoring import log_proba, scores
from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib import validation
from lib.validation import SeedLike
from lib.experiments.data import DATASETS
from lib.experiments.cells import cell_seed
from lib.experiments.prepared import Prepared, prepared
from lib.experiments.preprocessing import BINNING, Split, prepare


#: Distribution mechanisms a count-table task cannot run: the public-total families of
#: :mod:`lib.mechanisms.hellinger` release one vector whose total is public (a table's row
#: totals are private), and the true posterior has no noise to calibrate (its Rényi level is
#: fixed, and infinite for count tables).
NOT_FOR_TABLES = (SmoothedHellinger, CountLaplace, CountGaussian, TruePosterior)


def releases_count_tables(cls: type[Mechanism]) -> bool:
    """Whether mechanism class ``cls`` releases a model's count tables (rows of private totals)."""
    return cls.output == "distribution" and not issubclass(cls, NOT_FOR_TABLES)


class NaiveBayes:
    """Private naive Bayes on one prepared split: the class counts and one table per attribute.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared or lib.experiments.preprocessing.Split
        Encoded train and test rows.
    """

    name = "naive-bayes"
    metrics = ("cross_entropy", "accuracy")
    #: Seed-key prefix of the private mechanisms' cells for each type of target.
    prefix = {RenyiDP: "", ApproximateDP: "dp:"}
    datasets = DATASETS
    #: Whether :meth:`score` adds each release's ``majority_share`` (:meth:`with_options`).
    share = False

    def __init__(self, data: Prepared | Split) -> None:
        self.data = prepared(data)
        d = self.data
        self.counts = count(d.X_train, d.y_train, d.n_values, d.n_classes)
        self.spec = model_spec(d.n_values, d.n_classes, len(d.y_train))

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = BINNING) -> Prepared:
        """Dataset ``dataset`` split with ``seed`` and encoded (:func:`lib.experiments.preprocessing.prepare`)."""
        return prepared(prepare(dataset, seed=seed, binning=binning), dataset, seed)

    def with_options(self, *, majority_share: bool = False) -> NaiveBayes:
        """This task with extra scores of the same releases.

        With ``majority_share`` the frame gains a column ``majority_share``: the
        share of test rows each release predicts as the test rows' majority class
        (:func:`lib.experiments.verdicts.majority_share` of one release); the
        releases, their seeds and the other scores are unchanged.
        """
        if not isinstance(majority_share, (bool, np.bool_)):
            raise validation.ArgumentTypeError(f"majority_share must be True or False; got {majority_share!r:.60}")
        task = copy.copy(self)
        task.share = bool(majority_share)
        task.metrics = type(self).metrics + (("majority_share",) if majority_share else ())
        return task

    def _top(self) -> int:
        """The majority class of the test rows (ties to the smallest code, as ``verdicts.majority_share``)."""
        return int(np.bincount(np.asarray(self.data.y_test)).argmax())

    def release(self, calibration: ModelCalibration, n_draws: int,
                rng: SeedLike) -> tuple[np.ndarray, list[np.ndarray]]:
        """``n_draws`` released models: (prior batch, list of table batches)."""
        return release_parameters(*self.counts, calibration, n_draws=n_draws, rng=rng)

    def score(self, batches: Sequence[tuple[np.ndarray, list[np.ndarray]]]) -> dict[str, np.ndarray]:
        """Scores of a list of released batches, concatenated in order: metric -> array (B,)."""
        prior = np.concatenate([p for p, _ in batches])
        tables = [np.concatenate([t[k] for _, t in batches]) for k in range(len(self.counts[1]))]
        # one fused pass over the test rows (lib.models.naive_bayes.scores), the log posteriors never stored
        ce, acc = scores(self.data.X_test, self.data.y_test, prior, tables, self.data.n_values)
        out = {"cross_entropy": ce, "accuracy": acc}
        if self.share:
            predicted = log_proba(self.data.X_test, prior, tables, self.data.n_values).argmax(-1)
            out["majority_share"] = (predicted == self._top()).mean(axis=-1)
        return out

    @staticmethod
    def supports(cls: type[Mechanism]) -> bool:
        """Whether the engine can run ``cls`` on this task (:func:`releases_count_tables`)."""
        return releases_count_tables(cls)

    def score_uninformative(self, budgets: ArrayLike, n_repeats: int, seed: int, dataset: str,
                            key: str) -> dict[str, np.ndarray]:
        """A uniform posterior: CE :math:`\\log d` exactly; accuracy of uniform guesses, simulated."""
        d, y = self.data.n_classes, np.asarray(self.data.y_test)
        guesses = [np.random.default_rng(cell_seed(seed, dataset, key, eps)).integers(d, size=(n_repeats, len(y)))
                   for eps in budgets]
        out = {"cross_entropy": np.full((len(budgets), n_repeats), np.log(d)),
               "accuracy": np.stack([(g == y).mean(axis=-1) for g in guesses])}
        if self.share:
            out["majority_share"] = np.stack([(g == self._top()).mean(axis=-1) for g in guesses])
        return out
