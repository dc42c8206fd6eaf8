"""The one table of the book's figure defaults (the command line's ``--help`` reads it, without pandas).

Each (task, privacy notion) grid of Section 5 and Appendix C has its
mechanisms in legend order, the ends of its log-spaced budget axis (log10 of
:math:`\\varepsilon` or :math:`\\hat\\varepsilon`) and its scores:
:data:`FIGURES`. :mod:`lib.experiments.engine` derives its budget arrays from
it (:func:`lib.experiments.engine.budgets`) and :mod:`lib.experiments.cli` its
defaults, so the two cannot disagree.
"""

from __future__ import annotations

from typing import NamedTuple

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
    """

    mechanisms: tuple
    decades: tuple
    metrics: tuple


#: (task, notion) -> :class:`Figure`; ``notion`` is the type of the grid's target,
#: :class:`~lib.privacy.guarantees.RenyiDP` or :class:`~lib.privacy.guarantees.ApproximateDP`.
FIGURES = {
    ("naive-bayes", RenyiDP): Figure(("random", "mle", "dirichlet", "gaussian", "laplace"), (-3, 1),
                                   ("cross_entropy", "accuracy")),
    ("naive-bayes", ApproximateDP): Figure(("random", "mle", "dirichlet", "gohari", "gaussian", "laplace"), (-2, 1),
                                  ("cross_entropy", "accuracy")),
    ("bayesian-network", RenyiDP): Figure(("mle", "dirichlet", "gaussian", "laplace"), (-3, 1), ("log_likelihood",)),
    ("bayesian-network", ApproximateDP): Figure(("mle", "dirichlet", "gohari", "gaussian", "laplace"), (-1, 2),
                                       ("log_likelihood",)),
}
