"""Mixed naive Bayes on the book's datasets: the former experiment module of chapter 13.

Its functions are now those of the mixed naive-Bayes task of the engine
(:mod:`lib.experiments.tasks.mixed_naive_bayes`) and of the verdict module
(:func:`lib.experiments.verdicts.paired_cv_test`), kept under their old names
until chapters 13 and 14 import them from there.
"""

from lib.experiments.tasks.mixed_naive_bayes import book_split, cross_validate, evaluate, mixed_data
from lib.experiments.verdicts import paired_cv_test

__all__ = ["book_split", "cross_validate", "evaluate", "mixed_data", "paired_cv_test"]
