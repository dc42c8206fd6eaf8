"""One experiment grid: model x privacy notion x mechanism x budget x repeat.

A *task* adapts a model to the grid (:class:`NaiveBayesTask`,
:class:`NetworkTask`): it counts the training data once, states the public
shapes of its releases (a :class:`lib.mechanisms.protocol.ReleaseSpec`), releases all its
tables with one object per table, and scores a batch of released models on the
test data. A *mechanism* is a :class:`lib.mechanisms.protocol.Mechanism` class (or its
registry name): :func:`evaluate` calibrates it to every budget, in Rényi DP
(``privacy="rdp"``, :math:`(\\lambda, \\varepsilon)` for the whole model, split
equally) or in approximate DP (``privacy="dp"``, :math:`(\\hat\\varepsilon,
\\delta)` for the whole model, Appendix C), and scores ``n_repeats``
independent releases per budget. :func:`run` loops over datasets and
mechanisms and returns one tidy frame.

Every (dataset, mechanism, budget) cell draws its noise from its own
``numpy.random.SeedSequence`` (:func:`cell_seed`), keyed by the seed and by the
names and value (not the positions), so a result does not depend on which other
cells are run or in which order.
"""

from __future__ import annotations

import sys
import zlib

import numpy as np
import pandas as pd

from lib import _validate
from lib.models.bayesian_network import count_tables, log_likelihood, network_spec, release_tables
from lib.models.naive_bayes import count, model_spec, release_parameters
from lib.models.naive_bayes.scoring import scores
from lib.mechanisms.protocol import get
from lib.experiments.data import DATASETS
from lib.experiments.networks import prepare_network
from lib.experiments.preprocessing import prepare

DEFAULT_SEED = 20230201
#: The epsilon axis of Figures 4, 5 and 7 (RDP), of Figures 9-10 and of Figure 11 (approximate DP).
DEFAULT_EPSILONS = np.logspace(-3, 1, 10)
DP_NB_EPSILONS = np.logspace(-2, 1, 10)
DP_BN_EPSILONS = np.logspace(-1, 2, 10)
DP_DELTA = 1e-5
#: The mechanisms of each figure, in legend order.
NB_MODELS = ("random", "mle", "dirichlet", "gaussian", "laplace")
BN_MODELS = ("mle", "dirichlet", "gaussian", "laplace")
NB_DP_MODELS = ("random", "mle", "dirichlet", "gohari", "gaussian", "laplace")
BN_DP_MODELS = ("mle", "dirichlet", "gohari", "gaussian", "laplace")
BN_DATASETS = ("Adult", "Bank", "GermanCredit")
PRIVACY = ("rdp", "dp")


def _key(text: str) -> int:
    return zlib.crc32(text.encode())


def budget_key(epsilon: float) -> str:
    """The budget as a seed key: ``epsilon`` to 12 significant digits.

    A budget grid such as ``np.logspace(-3, 1, 10)`` is computed with ``power``,
    whose last bit differs between CPUs (numpy's AVX-512 kernel gives
    ``0x1.eb18f59ead9cap-5`` for the fifth point, libm ``...9cbp-5``). Keyed by
    the exact value, one CPU drew the whole cell from another random stream; to
    12 digits both are ``0.0599484250319``. (A value within an ulp of a 12-digit
    rounding boundary would still split; ``tests/test_experiments.py`` checks that
    the book's grids are far from one.)
    """
    return format(float(epsilon), ".12g")


def cell_seed(seed: int, dataset: str, model: str, epsilon: float) -> np.random.SeedSequence:
    """The seed sequence of one (dataset, model, epsilon) cell of a grid (budget by :func:`budget_key`)."""
    return np.random.SeedSequence(seed, spawn_key=(_key(dataset), _key(model), _key(budget_key(epsilon))))


class NaiveBayesTask:
    """Private naive Bayes (Section 5.1): :math:`K + 1` releases, scored by test CE and accuracy.

    Parameters
    ----------
    split : lib.experiments.preprocessing.Split
        Encoded train and test data.
    """

    name = "naive-bayes"
    metrics = ("cross_entropy", "accuracy")
    #: Seed-key prefix of the private mechanisms' cells in each privacy notion.
    prefix = {"rdp": "", "dp": "dp:"}
    datasets = DATASETS
    load = staticmethod(prepare)

    def __init__(self, split):
        self.data = split
        self.counts = count(split.X_train, split.y_train, split.n_values, split.n_classes)
        self.spec = model_spec(split.n_values, split.n_classes, len(split.y_train))

    def release(self, calibration, n_draws, rng):
        return release_parameters(*self.counts, calibration, n_draws=n_draws, rng=rng)

    def score(self, batches):
        """Scores of a list of released batches, concatenated in order: metric -> array (B,)."""
        prior = np.concatenate([p for p, _ in batches])
        tables = [np.concatenate([t[k] for _, t in batches]) for k in range(len(self.counts[1]))]
        # one fused pass over the test rows (lib.models.naive_bayes.scores), the log posteriors never stored
        ce, acc = scores(self.data.X_test, self.data.y_test, prior, tables, self.data.n_values)
        return {"cross_entropy": ce, "accuracy": acc}

    @staticmethod
    def supports(cls) -> bool:
        """Whether the grid can score ``cls`` on this task (every mechanism)."""
        return True

    def score_uninformative(self, budgets, n_repeats, seed, dataset, key):
        """A uniform posterior: CE :math:`\\log d` exactly; accuracy of uniform guesses, simulated."""
        d, y = self.data.n_classes, np.asarray(self.data.y_test)
        acc = np.stack([(np.random.default_rng(cell_seed(seed, dataset, key, eps))
                         .integers(d, size=(n_repeats, len(y))) == y).mean(axis=-1) for eps in budgets])
        return {"cross_entropy": np.full((len(budgets), n_repeats), np.log(d)), "accuracy": acc}


class NetworkTask:
    """A private Bayesian network (Section 5.2): :math:`K` tables, scored by the test log-likelihood (eq. (11))."""

    name = "bayesian-network"
    metrics = ("log_likelihood",)
    prefix = {"rdp": "bn:", "dp": "bn-dp:"}
    datasets = BN_DATASETS
    load = staticmethod(prepare_network)

    def __init__(self, network):
        self.data = network
        self.tables = count_tables(network.train, network.n_values, network.parents)
        self.spec = network_spec(network.n_values, network.parents, network.train.shape[0])

    def release(self, calibration, n_draws, rng):
        return release_tables(self.tables, calibration, n_draws=n_draws, rng=rng)

    def score(self, batches):
        logs = [np.concatenate([b[k] for b in batches]) for k in range(len(self.tables))]
        return {"log_likelihood": log_likelihood(self.data.test, logs, self.data.n_values, self.data.parents)}

    def score_uninformative(self, budgets, n_repeats, seed, dataset, key):
        raise ValueError("a Bayesian network has no uninformative model (it scores a likelihood, "
                         "not guesses)")

    @staticmethod
    def supports(cls) -> bool:
        """Whether the grid can score ``cls`` on this task (a network has no uninformative model)."""
        return not getattr(cls, "uninformative", False)


TASKS = {task.name: task for task in (NaiveBayesTask, NetworkTask)}


def task_class(name):
    """The task class registered as ``name`` (a class passes through)."""
    if isinstance(name, type):
        return name
    try:
        return TASKS[name]
    except (KeyError, TypeError):
        raise ValueError(f"model must be one of {tuple(TASKS)}; got {name!r}") from None


def calibrate(mechanism, privacy, budget, spec, *, lam=5.0, delta=DP_DELTA, cache=None):
    """The :class:`lib.mechanisms.protocol.ModelCalibration` of ``mechanism`` for one budget of a whole model.

    ``privacy="rdp"``: :math:`(\\lambda, \\varepsilon)`-RDP with ``budget`` =
    :math:`\\varepsilon`; ``"dp"``: :math:`(\\hat\\varepsilon, \\delta)`-DP with
    ``budget`` = :math:`\\hat\\varepsilon`. A non-private mechanism ignores the budget.
    """
    cls = get(mechanism)
    if privacy not in PRIVACY:
        raise ValueError(f"privacy must be one of {PRIVACY}; got {privacy!r}")
    if privacy == "rdp" or not cls.private:
        return cls.calibrate_rdp(budget if cls.private else 1.0, lam, spec)
    return cls.calibrate_dp(budget, delta, spec, cache=cache)


def calibrate_many(mechanism, privacy, budgets, spec, *, lam=5.0, delta=DP_DELTA, cache=None):
    """:func:`calibrate` at every budget of a 1-D array ``budgets``: a list, in order.

    The approximate-DP calibrations of all budgets run together
    (:meth:`lib.mechanisms.protocol.Mechanism.calibrate_dp_many`: one vectorised search for
    the mechanisms whose calibration is a search), and so do the RDP
    calibrations of the mechanisms that have ``calibrate_rdp_grid`` (the
    posterior samplers: one search over every budget and table shape); the
    others one by one.
    Element ``i`` equals ``calibrate(mechanism, privacy, budgets[i], spec, ...)``.
    """
    cls = get(mechanism)
    if privacy not in PRIVACY:
        raise ValueError(f"privacy must be one of {PRIVACY}; got {privacy!r}")
    if privacy == "dp" and cls.private:
        return cls.calibrate_dp_many(budgets, delta, spec, cache=cache)
    if privacy == "rdp" and cls.private and hasattr(cls, "calibrate_rdp_grid"):
        # one vectorised search over all budgets and table shapes (the posterior samplers): the
        # scales of calibrate_rdp budget by budget, value by value (tests/test_speed_equivalence.py)
        return cls.calibrate_rdp_grid(budgets, lam, spec)
    return [calibrate(cls, privacy, eps, spec, lam=lam, delta=delta, cache=cache) for eps in budgets]


def _budgets(budgets, name):
    budgets = np.atleast_1d(_validate.positive(budgets, name))
    if budgets.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array")
    return budgets


def evaluate(task, mechanism, budgets, n_repeats, *, privacy="rdp", lam=5.0, delta=DP_DELTA,
             seed=DEFAULT_SEED, dataset="data", cache=None):
    """Scores of one mechanism on one task over a grid of budgets, ``n_repeats`` releases each.

    All budgets are calibrated in one call (:func:`calibrate_many`: the
    approximate-DP searches of all budgets together) and all attained releases
    are scored in one batched call of the task's scorer.
    A non-private mechanism is released once and its scores repeated; one
    whose tables are uniform (``uninformative``) scores uniform random guesses.
    A budget a mechanism cannot meet has ``attained`` False and NaN scores.

    Parameters
    ----------
    task : NaiveBayesTask or NetworkTask
    mechanism : str or lib.mechanisms.protocol.Mechanism subclass
    budgets : array_like
        :math:`\\varepsilon` (``privacy="rdp"``) or :math:`\\hat\\varepsilon` (``"dp"``) of a whole model.
    n_repeats : int
    privacy : {"rdp", "dp"}
    lam : float, default 5.0
        Rényi order of the RDP grid.
    delta : float, default 1e-5
        :math:`\\delta` of the approximate-DP grid.
    seed : int
        Root of every cell's :func:`cell_seed`.
    dataset : str
        Name of the data (a seed key and a column).
    cache : dict, optional
        Memo shared by calibrations that have one (Gohari et al.'s).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, epsilon, repeat, <metrics>`` (RDP) or ``dataset, model,
        epsilon_hat, delta, repeat, attained, <metrics>`` (approximate DP).
    """
    cls = get(mechanism)
    if privacy not in PRIVACY:
        raise ValueError(f"privacy must be one of {PRIVACY}; got {privacy!r}")
    x = "epsilon" if privacy == "rdp" else "epsilon_hat"
    budgets = _budgets(budgets, x + "s")
    n_repeats = _validate.integer(n_repeats, "n_repeats")
    if privacy == "dp":
        _validate.scalar(_validate.open_unit(delta, "delta"), "delta")
    shape = (len(budgets), n_repeats)
    attained = np.ones(len(budgets), bool)
    if getattr(cls, "uninformative", False):
        scores = task.score_uninformative(budgets, n_repeats, seed, dataset, task.prefix["rdp"] + cls.name)
    elif not cls.private:
        batch = task.release(calibrate(cls, "rdp", 1.0, task.spec), 1, None)
        scores = {k: np.broadcast_to(v, shape) for k, v in task.score([batch]).items()}
    else:
        batches = []
        calibrations = calibrate_many(cls, privacy, budgets, task.spec, lam=lam, delta=delta, cache=cache)
        for i, (eps, cal) in enumerate(zip(budgets, calibrations)):
            attained[i] = cal.attained
            if cal.attained:
                rng = np.random.default_rng(cell_seed(seed, dataset, task.prefix[privacy] + cls.name, eps))
                batches.append(task.release(cal, n_repeats, rng))
        scores = {k: np.full(shape, np.nan) for k in task.metrics}
        if batches:
            for k, v in task.score(batches).items():
                scores[k][attained] = v.reshape(-1, n_repeats)
    grid_eps, grid_rep = np.meshgrid(budgets, np.arange(n_repeats), indexing="ij")
    columns = {"dataset": dataset, "model": cls.name, x: grid_eps.ravel()}
    if privacy == "dp":
        columns["delta"] = float(delta)
    columns["repeat"] = grid_rep.ravel()
    if privacy == "dp":
        columns["attained"] = np.repeat(attained, n_repeats)
    frame = pd.DataFrame(columns)
    for k in task.metrics:
        frame[k] = np.asarray(scores[k], float).ravel()
    return frame


def _progress(jobs, enabled, desc):
    """``jobs`` wrapped in a tqdm bar when ``enabled`` (default: stderr is a terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return jobs
    from tqdm.auto import tqdm

    return tqdm(jobs, total=len(jobs), desc=desc, file=sys.stderr)


def run(model, mechanisms, budgets, *, privacy="rdp", datasets=None, data=None, n_repeats=10, lam=5.0,
        delta=DP_DELTA, seed=DEFAULT_SEED, cache=None, progress=None):
    """The grid of one model: every dataset x mechanism x budget x repeat.

    Parameters
    ----------
    model : {"naive-bayes", "bayesian-network"} or a task class
    mechanisms : sequence of str or Mechanism subclasses
    budgets : array_like
        See :func:`evaluate`.
    privacy : {"rdp", "dp"}
    datasets : sequence of str, optional
        Default: the keys of ``data``, else the task's datasets (all eight of
        Table 1 for naive Bayes, Adult, Bank and GermanCredit for networks).
    data : mapping of str to encoded data, optional
        Use these (``Split`` or ``NetworkData``) instead of loading each dataset.
    n_repeats, lam, delta, seed, cache
        See :func:`evaluate`; one ``cache`` is shared across the grid.
    progress : bool, optional
        Show a tqdm progress bar; default only when stderr is a terminal.

    Returns
    -------
    pandas.DataFrame
        The frames of :func:`evaluate`, concatenated.
    """
    task_cls = task_class(model)
    classes = [get(m) for m in mechanisms]
    if datasets is None:
        datasets = tuple(data) if data is not None else task_cls.datasets
    cache = {} if cache is None else cache
    frames, current = [], {}
    jobs = [(name, cls) for name in datasets for cls in classes]
    for name, cls in _progress(jobs, progress, f"{task_cls.name} {privacy} grid"):
        if current.get("name") != name:
            current = {"name": name, "task": task_cls(data[name] if data is not None else task_cls.load(name))}
        frames.append(evaluate(current["task"], cls, budgets, n_repeats, privacy=privacy, lam=lam,
                               delta=delta, seed=seed, dataset=name, cache=cache))
    return pd.concat(frames, ignore_index=True)
