"""The former grid module: its names, now defined by :mod:`lib.experiments.engine`, :mod:`lib.experiments.tasks`
and :mod:`lib.experiments.defaults`, kept under their old names until every chapter imports them from there.

:func:`run` and :func:`evaluate` take the target as ``privacy`` (the engine's
``target``); ``NaiveBayesTask`` and ``NetworkTask`` are the engine's
:class:`~lib.experiments.tasks.naive_bayes.NaiveBayes` and
:class:`~lib.experiments.tasks.bayesian_network.BayesianNetwork`.
"""

from __future__ import annotations

from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib.experiments import defaults, engine
from lib.experiments.defaults import BN_DATASETS, DEFAULT_SEED, DP_DELTA
from lib.experiments.engine import (DP_TARGET, LAYOUTS, RDP_TARGET, Layout, budget_key, calibrate, calibrate_many,
                                    calibration_key, cell_seed, layout, runs_under, task_class)
from lib.experiments.networks import prepare_network
from lib.experiments.preprocessing import prepare
from lib.experiments.tasks import REGISTRY as TASKS
from lib.experiments.tasks import BayesianNetwork as NetworkTask
from lib.experiments.tasks import NaiveBayes as NaiveBayesTask

_calibration_key = calibration_key
DEFAULT_EPSILONS = engine.budgets("naive-bayes", RenyiDP)
DP_NB_EPSILONS = engine.budgets("naive-bayes", ApproximateDP)
DP_BN_EPSILONS = engine.budgets("bayesian-network", ApproximateDP)
NB_MODELS = defaults.FIGURES["naive-bayes", RenyiDP].mechanisms
BN_MODELS = defaults.FIGURES["bayesian-network", RenyiDP].mechanisms
NB_DP_MODELS = defaults.FIGURES["naive-bayes", ApproximateDP].mechanisms
BN_DP_MODELS = defaults.FIGURES["bayesian-network", ApproximateDP].mechanisms


def evaluate(task, mechanism, budgets, n_repeats, *, privacy=RDP_TARGET, seed=DEFAULT_SEED, dataset="data",
             cache=None):
    """:func:`lib.experiments.engine.evaluate` with the target named ``privacy``."""
    return engine.evaluate(task, mechanism, budgets, n_repeats, target=privacy, seed=seed, dataset=dataset,
                           cache=cache)


def run(model, mechanisms, budgets, *, privacy=RDP_TARGET, datasets=None, data=None, n_repeats=10,
        seed=DEFAULT_SEED, cache=None, progress=None):
    """:func:`lib.experiments.engine.run` of task ``model`` with the target named ``privacy``."""
    return engine.run(model, mechanisms, budgets, target=privacy, datasets=datasets, data=data,
                      n_repeats=n_repeats, seed=seed, cache=cache, progress=progress)


__all__ = ["BN_DATASETS", "BN_DP_MODELS", "BN_MODELS", "DEFAULT_EPSILONS", "DEFAULT_SEED", "DP_BN_EPSILONS",
           "DP_DELTA", "DP_NB_EPSILONS", "LAYOUTS", "Layout", "NB_DP_MODELS", "NB_MODELS",
           "TASKS", "budget_key", "calibrate", "calibrate_many",
           "cell_seed", "evaluate", "layout", "prepare", "prepare_network", "run", "runs_under", "task_class"]
