"""Models whose parameters are released by a mechanism object.

Categorical naive Bayes (:mod:`lib.models.naive_bayes`: the model, its public
domain, the scikit-learn estimator, binning with public bounds and scoring),
discrete Bayesian networks (:mod:`lib.models.bayesian_network`), mixed naive
Bayes (:mod:`lib.models.mixed_naive_bayes`), private Bayesian logistic
regression (:mod:`lib.models.logistic_regression`) and counts computed in any
engine (:mod:`lib.models.counts`). :mod:`lib.models.estimator` holds the
scikit-learn protocol and :class:`lib.models.estimator.SharedBudget`, the one
accountant of a model selection.
"""
