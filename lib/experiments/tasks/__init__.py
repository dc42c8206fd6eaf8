"""The tasks of the engine (:mod:`lib.experiments.engine`), one module per task.

:data:`REGISTRY` lists every task by name, explicitly: importing this package
registers nothing else and the order of imports does not matter.

* :mod:`~lib.experiments.tasks.naive_bayes`: private naive Bayes (Section 5.1), ``"naive-bayes"``;
* :mod:`~lib.experiments.tasks.bayesian_network`: private Bayesian networks (Section 5.2), ``"bayesian-network"``;
* :mod:`~lib.experiments.tasks.mixed_naive_bayes`: mixed naive Bayes with raw numerical attributes
  (chapter 13), ``"mixed-naive-bayes"``;
* :mod:`~lib.experiments.tasks.logistic_regression`: posterior sampling for logistic regression
  (chapter 11), ``"logistic-regression"``;
* :mod:`~lib.experiments.tasks.histogram`: one attribute's histogram (chapter 14, Task 1), ``"histogram"``;
* :mod:`~lib.experiments.tasks.posterior`: one beta-binomial posterior (chapters 10-12), ``"posterior"``.
"""

from lib.experiments.tasks.bayesian_network import BayesianNetwork
from lib.experiments.tasks.histogram import Histogram
from lib.experiments.tasks.logistic_regression import LogisticRegression
from lib.experiments.tasks.mixed_naive_bayes import MixedNaiveBayes
from lib.experiments.tasks.naive_bayes import NaiveBayes
from lib.experiments.tasks.posterior import Posterior

#: Task name -> task class.
REGISTRY = {"naive-bayes": NaiveBayes, "bayesian-network": BayesianNetwork, "mixed-naive-bayes": MixedNaiveBayes,
            "logistic-regression": LogisticRegression, "histogram": Histogram, "posterior": Posterior}

__all__ = ["BayesianNetwork", "Histogram", "LogisticRegression", "MixedNaiveBayes", "NaiveBayes", "Posterior",
           "REGISTRY"]
