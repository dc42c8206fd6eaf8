"""Models whose parameters are released by a mechanism object.

Categorical naive Bayes (:mod:`lib.models.naive_bayes`, with its scoring),
discrete Bayesian networks (:mod:`lib.models.bayesian_network`), mixed naive
Bayes (:mod:`lib.models.mixed_naive_bayes`), private Bayesian logistic
regression (:mod:`lib.models.logistic_regression`) and counts computed in any
engine (:mod:`lib.models.counts`).
"""
