"""The one table of the book's figure defaults (the command line's ``--help`` reads it, without pandas).

Each (task, privacy notion) grid of the book (Section 5 and Appendix C; chapters 11 to 14 for the
tasks beyond naive Bayes and networks) has its mechanisms in legend order, the ends of its
log-spaced budget axis (log10 of :math:`\\varepsilon` or :math:`\\hat\\varepsilon`), its scores,
the :math:`\\delta` of an approximate-DP grid and the options of the task's own release loop:
:data:`FIGURES`. :mod:`lib.experiments.engine` derives its budget arrays from
it (:func:`lib.experiments.engine.budgets`) and :mod:`lib.experiments.cli` its
defaults, so the two cannot disagree.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

from lib.models.mixed_naive_bayes import LabelKeptDP
from lib.privacy.guarantees import ApproximateDP, RenyiDP

#: Root of every cell's seed in the book's grids.
DEFAULT_SEED = 20230201
#: The Rényi order of the RDP grids (Figures 4, 5 and 7).
RDP_ORDER = 5.0
#: The delta of the approximate-DP grids (Figures 9-11).
DP_DELTA = 1e-5
#: Points of the budget axis of every figure.
N_BUDGETS = 10
#: The datasets of the Bayesian-network figures (Section 5.2).
BN_DATASETS = ("Adult", "Bank", "GermanCredit")


class Figure(NamedTuple):
    """The defaults of one grid figure.

    Attributes
    ----------
    mechanisms : tuple of str
        Registry names, in legend order.
    decades : tuple of two int
        log10 of the first and last budget.
    metrics : tuple of str
        The scores the figure plots.
    delta : float, optional
        The :math:`\\delta` of an approximate-DP grid; None is :data:`DP_DELTA`.
    options : mapping
        The keyword options of a task with its own release loop
        (:func:`lib.experiments.engine.run`'s ``options``), as the chapter runs it.
    n_repeats : int
        Releases per cell (Monte Carlo draws of the posterior task), as the chapter runs them.
    """

    mechanisms: tuple
    decades: tuple
    metrics: tuple
    delta: float | None = None
    options: MappingProxyType = MappingProxyType({})
    n_repeats: int = 10


#: (task, notion) -> :class:`Figure`; ``notion`` is the type of the grid's target,
#: :class:`~lib.privacy.guarantees.RenyiDP` or :class:`~lib.privacy.guarantees.ApproximateDP`, or, for
#: a task whose mechanisms fix their own guarantee at each budget (mixed naive Bayes:
#: :class:`~lib.models.mixed_naive_bayes.LabelKeptDP`; logistic regression: the
#: :math:`(\\lambda, \\varepsilon)`-RDP of each cell), the type of that guarantee.
#: Beyond Section 5: mixed naive Bayes as chapter 13 compares its methods (budgets 0.1 to 10,
#: ``max_distance`` 1000, the tight calibration); logistic regression as Figure 3 of chapter 11
#: (orders 1, 10, 100, its reduced run's 4 sweeps, budgets about :math:`e^{-5}` to :math:`e^{3}`);
#: the histogram of Adult's label as chapter 14's Task 1 (:math:`\\delta = 10^{-5}`, budgets 0.1 to
#: 10, 1000 releases per cell); the posterior of Adult's label as chapter 12's head-to-head
#: (:math:`\\delta = 10^{-6}`, uniform prior, budgets 0.1 to 10, 2000 draws).
FIGURES = {
    ("naive-bayes", RenyiDP): Figure(("random", "mle", "dirichlet", "gaussian", "laplace"), (-3, 1),
                                   ("cross_entropy", "accuracy")),
    ("naive-bayes", ApproximateDP): Figure(("random", "mle", "dirichlet", "gohari", "gaussian", "laplace"), (-2, 1),
                                  ("cross_entropy", "accuracy")),
    ("bayesian-network", RenyiDP): Figure(("mle", "dirichlet", "gaussian", "laplace"), (-3, 1), ("log_likelihood",)),
    ("bayesian-network", ApproximateDP): Figure(("mle", "dirichlet", "gohari", "gaussian", "laplace"), (-1, 2),
                                       ("log_likelihood",)),
    ("mixed-naive-bayes", LabelKeptDP): Figure(("zc", "vaidya", "sample_moments"), (-1, 1),
                                               ("accuracy", "cross_entropy"),
                                               options=MappingProxyType({"max_distance": 1000,
                                                                         "calibration": "tight"})),
    ("logistic-regression", RenyiDP): Figure(("lr_concentrated", "lr_diffuse", "lr_ops", "lr_posterior"), (-2, 1),
                                            ("error", "cross_entropy"),
                                            options=MappingProxyType({"lams": (1.0, 10.0, 100.0), "n_sweeps": 4})),
    ("histogram", ApproximateDP): Figure(("dirichlet", "gohari", "gaussian", "laplace", "geumlek_diffused",
                                          "geumlek_concentrated"), (-1, 1), ("kl", "tv"),
                                         options=MappingProxyType({"attribute": "income"}), n_repeats=1000),
    ("posterior", ApproximateDP): Figure(("smoothed_hellinger", "hellinger_em", "dirichlet", "count_laplace",
                                          "count_gaussian"), (-1, 1), ("hellinger", "kl", "mean_error"), delta=1e-6,
                                         options=MappingProxyType({"prior": (1.0, 1.0)}), n_repeats=2000),
}
