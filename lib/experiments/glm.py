"""Private logistic regression on the book's data: the former experiment module of chapter 11.

Its names are now those of the logistic-regression task of the engine
(:mod:`lib.experiments.tasks.logistic_regression`) and of the verdict module
(:func:`lib.experiments.verdicts.cells_over_splits`, :func:`~lib.experiments.verdicts.claim_verdict`),
kept under their old names until chapters 11 and 14 import them from there.
"""

from lib.experiments.tasks.logistic_regression import (ADULT_BOUNDS, DIGIT_BOUNDS, PAPER_WIDTH, GLMData, adult,
                                                      design_matrix, digits, normalise_rows, one_hot, run_grid,
                                                      run_splits, scale)
from lib.experiments.verdicts import OUTCOMES, claim_verdict
from lib.experiments.verdicts import cells_over_splits as compare

__all__ = ["ADULT_BOUNDS", "DIGIT_BOUNDS", "OUTCOMES", "PAPER_WIDTH", "GLMData", "adult", "claim_verdict",
           "design_matrix", "digits", "normalise_rows", "one_hot", "run_grid", "run_splits", "scale"]
