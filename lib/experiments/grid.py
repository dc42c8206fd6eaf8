"""One experiment grid: model x privacy target x mechanism x budget x repeat.

A *task* adapts a model to the grid (:class:`NaiveBayesTask`,
:class:`NetworkTask`): it counts the training data once, states the public
shapes of its releases (a :class:`lib.mechanisms.protocol.ReleaseSpec`), releases all its
tables with one object per table, and scores a batch of released models on the
test data. A *mechanism* is a :class:`lib.mechanisms.protocol.Mechanism` class (or its
registry name): :func:`evaluate` calibrates it to every budget of a typed
target (``privacy``, a :class:`lib.privacy.guarantees.Guarantee` whose level each
budget replaces): Rényi DP (:data:`RDP_TARGET`, :math:`(\\lambda, \\varepsilon)`
for the whole model, split equally) or approximate DP (:data:`DP_TARGET`,
:math:`(\\hat\\varepsilon, \\delta)` for the whole model, Appendix C), and
scores ``n_repeats`` independent releases per budget. :func:`run` loops over
datasets and mechanisms and returns one tidy frame.

Every (dataset, mechanism, budget) cell draws its noise from its own
``numpy.random.SeedSequence`` (:func:`cell_seed`), keyed by the seed and by the
names and value (not the positions), so a result does not depend on which other
cells are run or in which order.
"""

from __future__ import annotations

import collections.abc
import sys
import zlib
from typing import NamedTuple

import numpy as np
import pandas as pd

from lib import validation
from lib.models.bayesian_network import count_tables, log_likelihood, network_spec, release_tables
from lib.models.naive_bayes import count, model_spec, release_parameters
from lib.models.naive_bayes.scoring import scores
from lib.mechanisms.protocol import get
from lib.privacy.guarantees import ApproximateDP, Guarantee, NotPrivate, RenyiDP
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
#: The targets of the book's grids: each budget replaces the level (``with_level``).
RDP_TARGET = RenyiDP(5.0, 1.0)
DP_TARGET = ApproximateDP(1.0, DP_DELTA)


class Layout(NamedTuple):
    """How the frame of a grid of one type of target is laid out.

    Attributes
    ----------
    budget : str
        The column of the swept level.
    fixed : tuple of str
        The target's other parameters, shown as columns after it.
    attained : bool
        Whether the frame has an ``attained`` column (a target a mechanism may miss).
    """

    budget: str
    fixed: tuple
    attained: bool


#: The layout of each type of target a grid runs.
LAYOUTS = {RenyiDP: Layout("epsilon", (), False), ApproximateDP: Layout("epsilon_hat", ("delta",), True)}


def layout(privacy) -> Layout:
    """The :class:`Layout` of a grid of target ``privacy``; a ValueError for a type no grid runs."""
    if not isinstance(privacy, Guarantee) or type(privacy) not in LAYOUTS:
        raise ValueError(f"privacy must be a target of type {' or '.join(t.__name__ for t in LAYOUTS)} "
                         f"(e.g. RenyiDP(5.0, 1.0)); got {privacy!r}")
    return LAYOUTS[type(privacy)]


def runs_under(mechanism, privacy) -> bool:
    """Whether a grid of target ``privacy`` runs ``mechanism``: it meets the type, or is a non-private reference."""
    cls = get(mechanism)
    return not cls.private or type(privacy) in cls.notions


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
    #: Seed-key prefix of the private mechanisms' cells for each type of target.
    prefix = {RenyiDP: "", ApproximateDP: "dp:"}
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
    prefix = {RenyiDP: "bn:", ApproximateDP: "bn-dp:"}
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


def calibrate(mechanism, target, spec, *, cache=None):
    """The :class:`lib.mechanisms.protocol.ModelCalibration` of ``mechanism`` for ``target`` (a whole model).

    A non-private mechanism ignores the target (it is calibrated to
    :class:`lib.privacy.guarantees.NotPrivate`).
    """
    cls = get(mechanism)
    return cls.calibrate(target if cls.private else NotPrivate(), spec, cache=cache)


def _frozen(value):
    """``value`` as a hashable key part: arrays by shape, type and bytes, lists and dicts as tuples."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((repr(k), _frozen(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("unhashable", repr(value))
    return value


def _calibration_key(mechanism, target, spec):
    """The key of one calibration in a grid's ``cache``: what the calibration depends on, all public.

    A calibration is a function of the mechanism class with its class-level
    settings (every public non-callable attribute: ``prior``, ``n_orders``,
    ...), of the target and of the public :class:`lib.mechanisms.protocol.ReleaseSpec`
    (table shapes, the public total ``n_total``, which releases are priors); never
    of the data. Splits of one dataset share their spec, so they share the key.
    """
    cls = get(mechanism)
    settings = tuple((k, _frozen(getattr(cls, k))) for k in sorted(dir(cls))
                     if not k.startswith("_") and not callable(getattr(cls, k))
                     and not isinstance(getattr(cls, k), property))
    shapes = tuple(tuple(int(x) for x in sh) for sh in spec.shapes)
    priors = tuple(int(i) for i in getattr(spec, "priors", ()))
    return ("grid-calibration", cls, settings, type(target), target, shapes, int(spec.n_total), priors)


def calibrate_many(mechanism, targets, spec, *, cache=None):
    """:func:`calibrate` at every target of ``targets`` (one type): a list, in order.

    The calibrations of all targets run together where the class has a
    vectorised search (:meth:`lib.mechanisms.protocol.Mechanism.calibrate_many`:
    the approximate-DP order searches, the posterior samplers' scales);
    element ``i`` equals ``calibrate(mechanism, targets[i], spec, ...)``.
    With a ``cache`` (a dict), every calibration is stored under
    :func:`_calibration_key` and only the targets not stored yet are
    calibrated (together): a grid over several splits of one dataset, whose
    specs are equal, calibrates each (mechanism, budget) once. A calibration
    that raises stores nothing.
    """
    cls = get(mechanism)
    if not cls.private:
        return [cls.calibrate(NotPrivate(), spec, cache=cache) for _ in targets]
    if cache is None:
        return cls.calibrate_many(targets, spec, cache=cache)
    if not isinstance(cache, collections.abc.MutableMapping):
        raise validation.ArgumentTypeError(f"cache must be None or a dict; got {type(cache).__name__}")
    targets = list(targets)
    if not targets or not all(isinstance(t, Guarantee) for t in targets):
        return cls.calibrate_many(targets, spec, cache=cache)  # its errors
    keys = [_calibration_key(cls, t, spec) for t in targets]
    missing = {k: t for k, t in zip(keys, targets) if k not in cache}
    if missing:
        for k, cal in zip(missing, cls.calibrate_many(list(missing.values()), spec, cache=cache)):
            cache[k] = cal
    return [cache[k] for k in keys]


def _budgets(budgets, name):
    budgets = np.atleast_1d(validation.positive(budgets, name))
    if budgets.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array")
    return budgets


def evaluate(task, mechanism, budgets, n_repeats, *, privacy=RDP_TARGET, seed=DEFAULT_SEED, dataset="data",
             cache=None):
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
        The levels of the whole model's target: :math:`\\varepsilon` (Rényi DP) or
        :math:`\\hat\\varepsilon` (approximate DP).
    n_repeats : int
    privacy : RenyiDP or ApproximateDP, default :data:`RDP_TARGET`
        The target; each budget replaces its level (``privacy.with_level``),
        its order or :math:`\\delta` is kept.
    seed : int
        Root of every cell's :func:`cell_seed`.
    dataset : str
        Name of the data (a seed key and a column).
    cache : dict, optional
        Memo of the calibrations (:func:`calibrate_many`: each (mechanism,
        budget, public spec) calibrated once), also passed to the calibrations
        that keep their own (Gohari et al.'s, the order searches).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, epsilon, repeat, <metrics>`` (Rényi DP) or ``dataset,
        model, epsilon_hat, delta, repeat, attained, <metrics>`` (approximate
        DP): the :class:`Layout` of the target's type.

    Raises
    ------
    ValueError
        If ``privacy`` is not a target of a type in :data:`LAYOUTS`, the
        mechanism cannot meet its type, or a budget is not positive.
    """
    cls = get(mechanism)
    lay = layout(privacy)
    budgets = _budgets(budgets, lay.budget + "s")
    n_repeats = validation.integer(n_repeats, "n_repeats")
    if not runs_under(cls, privacy):
        raise ValueError(f"the {cls.name!r} mechanism cannot meet a {type(privacy).__name__} target; it meets "
                         f"{', '.join(n.__name__ for n in cls.notions)}")
    shape = (len(budgets), n_repeats)
    attained = np.ones(len(budgets), bool)
    if getattr(cls, "uninformative", False):
        scores = task.score_uninformative(budgets, n_repeats, seed, dataset, task.prefix[RenyiDP] + cls.name)
    elif not cls.private:
        batch = task.release(calibrate(cls, NotPrivate(), task.spec), 1, None)
        scores = {k: np.broadcast_to(v, shape) for k, v in task.score([batch]).items()}
    else:
        batches = []
        targets = [privacy.with_level(float(eps)) for eps in budgets]
        calibrations = calibrate_many(cls, targets, task.spec, cache=cache)
        for i, (eps, cal) in enumerate(zip(budgets, calibrations)):
            attained[i] = cal.attained
            if cal.attained:
                rng = np.random.default_rng(cell_seed(seed, dataset, task.prefix[type(privacy)] + cls.name, eps))
                batches.append(task.release(cal, n_repeats, rng))
        scores = {k: np.full(shape, np.nan) for k in task.metrics}
        if batches:
            for k, v in task.score(batches).items():
                scores[k][attained] = v.reshape(-1, n_repeats)
    grid_eps, grid_rep = np.meshgrid(budgets, np.arange(n_repeats), indexing="ij")
    columns = {"dataset": dataset, "model": cls.name, lay.budget: grid_eps.ravel()}
    columns.update({name: float(getattr(privacy, name)) for name in lay.fixed})
    columns["repeat"] = grid_rep.ravel()
    if lay.attained:
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


def run(model, mechanisms, budgets, *, privacy=RDP_TARGET, datasets=None, data=None, n_repeats=10,
        seed=DEFAULT_SEED, cache=None, progress=None):
    """The grid of one model: every dataset x mechanism x budget x repeat.

    Parameters
    ----------
    model : {"naive-bayes", "bayesian-network"} or a task class
    mechanisms : sequence of str or Mechanism subclasses
    budgets : array_like
        See :func:`evaluate`.
    privacy : RenyiDP or ApproximateDP, default :data:`RDP_TARGET`
        The target whose level each budget replaces (see :func:`evaluate`).
    datasets : sequence of str, optional
        Default: the keys of ``data``, else the task's datasets (all eight of
        Table 1 for naive Bayes, Adult, Bank and GermanCredit for networks).
    data : mapping of str to encoded data, optional
        Use these (``Split`` or ``NetworkData``) instead of loading each dataset.
    n_repeats, seed, cache
        See :func:`evaluate`; one ``cache`` is shared across the grid. Pass one
        dict to the runs of several splits: their specs are public and equal, so
        each (mechanism, budget) is calibrated once for all of them.
    progress : bool, optional
        Show a tqdm progress bar; default only when stderr is a terminal.

    Returns
    -------
    pandas.DataFrame
        The frames of :func:`evaluate`, concatenated.
    """
    task_cls = task_class(model)
    layout(privacy)
    classes = [get(m) for m in mechanisms]
    if datasets is None:
        datasets = tuple(data) if data is not None else task_cls.datasets
    cache = {} if cache is None else cache
    frames, current = [], {}
    jobs = [(name, cls) for name in datasets for cls in classes]
    for name, cls in _progress(jobs, progress, f"{task_cls.name} {type(privacy).__name__} grid"):
        if current.get("name") != name:
            current = {"name": name, "task": task_cls(data[name] if data is not None else task_cls.load(name))}
        frames.append(evaluate(current["task"], cls, budgets, n_repeats, privacy=privacy, seed=seed,
                               dataset=name, cache=cache))
    return pd.concat(frames, ignore_index=True)
