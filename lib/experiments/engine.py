"""One task engine: task x target x mechanism x budget x repeat x split.

Every experiment of the book is a *task* run by :func:`run`: the task prepares
a dataset for one train/test split (:class:`Prepared`, one type for every
task), states the public shapes of its releases (``spec``, a
:class:`lib.mechanisms.protocol.ReleaseSpec`), releases with a calibrated
mechanism and scores the releases on the test rows. The engine calibrates each
mechanism to every budget of a typed target (a
:class:`lib.privacy.guarantees.Guarantee` whose level each budget replaces),
draws ``n_repeats`` releases per budget and returns one tidy frame.

API summary
-----------
* :class:`Task` (protocol): ``name``, ``metrics``, ``prefix`` (the seed-key
  prefix of each target type), ``datasets`` (the default datasets),
  ``prepare(dataset, seed, binning)`` (classmethod: a :class:`Prepared`),
  ``Task(prepared)`` with ``spec``, ``release(calibration, n_draws, rng)``,
  ``score(batches)`` (metric -> array) and ``supports(mechanism class)``.
  A task whose releases follow their own scheme instead defines
  ``evaluate(mechanism, budgets, n_repeats, *, target, seed, dataset, cache, **options)``
  (mixed naive Bayes) or ``evaluate_many(mechanisms, ...)`` for all mechanisms
  at once (logistic regression, whose samplers share draws). A task's
  ``with_options(**options)`` (optional) returns the task with extra scores of the same releases.
* :func:`task_class` ``(name)``: the registered task (:data:`lib.experiments.tasks.REGISTRY`,
  an explicit dict, order-free); :func:`task_names`.
* :class:`Prepared` (from :mod:`lib.experiments.prepared`): the arrays of one split and
  their public metadata; :func:`prepared` turns a ``Split`` or ``NetworkData`` into one.
* :func:`run` ``(task, mechanisms, budgets, *, target, datasets, data, splits, n_repeats, seed, cache, progress)``:
  the tidy frame; :func:`evaluate` one (task, mechanism) over the budgets.
* :func:`cell_seed`, :func:`budget_key` (from :mod:`lib.experiments.cells`): the seed
  of one cell, keyed by names and values, never positions; split ``s`` runs with root
  seed ``seed + s - 1`` (the book's split is 1), so a result depends on no other cell.
* :func:`calibrate`, :func:`calibrate_many`: one calibration, and many with the
  grid's cache (keyed by class and settings, target and public spec).
* :func:`budgets` ``(task, notion)``, :func:`figure`: the figure defaults of
  :data:`lib.experiments.defaults.FIGURES`.
* :data:`RDP_TARGET`, :data:`DP_TARGET`; :func:`layout`, :func:`runs_under` (from
  :mod:`lib.experiments.cells`).

Every (dataset, mechanism, budget) cell draws its noise from its own
``numpy.random.SeedSequence`` (:func:`cell_seed`), keyed by the seed and by the
names and value (not the positions), so a result does not depend on which other
cells are run or in which order.
"""

from __future__ import annotations

import collections.abc
import sys
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.protocol import Mechanism, ModelCalibration, ReleaseSpec, get
from lib.privacy.guarantees import ApproximateDP, Guarantee, NotPrivate, RenyiDP
from lib.experiments import defaults
from lib.experiments.cells import Layout, budget_key, cell_seed, layout, runs_under
from lib.experiments.prepared import Prepared, prepared
from lib.experiments.preprocessing import SEED
from lib.experiments.tasks import REGISTRY

if TYPE_CHECKING:
    from lib.experiments.networks import NetworkData
    from lib.experiments.preprocessing import Split

#: The targets of the book's grids: each budget replaces the level (``with_level``).
RDP_TARGET = RenyiDP(defaults.RDP_ORDER, 1.0)
DP_TARGET = ApproximateDP(1.0, defaults.DP_DELTA)


class Task(Protocol):
    """What the engine needs of a task (see the tasks of :mod:`lib.experiments.tasks`)."""

    name: str
    metrics: tuple
    prefix: dict
    datasets: tuple
    data: Prepared
    spec: object

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str) -> Prepared: ...

    def release(self, calibration: ModelCalibration, n_draws: int, rng: SeedLike) -> Any: ...

    def score(self, batches: Sequence[Any]) -> dict: ...

    def score_uninformative(self, budgets: ArrayLike, n_repeats: int, seed: int, dataset: str,
                            key: str) -> dict: ...

    @staticmethod
    def supports(cls: type[Mechanism]) -> bool: ...


def task_names() -> tuple:
    """The names of the registered tasks (:data:`lib.experiments.tasks.REGISTRY`)."""
    return tuple(REGISTRY)


def task_class(name: str | type) -> type:
    """The task class registered as ``name`` (a class passes through)."""
    if isinstance(name, type):
        return name
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"task must be one of {tuple(REGISTRY)}; got {name!r:.60}") from None


def figure(task: str, notion: type) -> defaults.Figure:
    """The defaults of the figure of ``task`` under ``notion`` (:class:`~lib.privacy.guarantees.RenyiDP` or
    :class:`~lib.privacy.guarantees.ApproximateDP`)."""
    try:
        return defaults.FIGURES[(task, notion)]
    except KeyError:
        raise ValueError(f"(task, notion) must be one of {tuple(defaults.FIGURES)}; got {(task, notion)!r:.80}") \
            from None


def budgets(task: str, notion: type, n: int = defaults.N_BUDGETS) -> np.ndarray:
    """The log-spaced budget axis of a figure: ``n`` points between its :attr:`~lib.experiments.defaults.Figure.decades`."""
    n = validation.integer(n, "n")
    return np.logspace(*figure(task, notion).decades, n)


def calibrate(mechanism: str | type[Mechanism], target: Guarantee, spec: ReleaseSpec, *,
              cache: dict | None = None) -> ModelCalibration:
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


def calibration_key(mechanism: str | type[Mechanism], target: Guarantee, spec: ReleaseSpec) -> tuple:
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


def calibrate_many(mechanism: str | type[Mechanism], targets: Sequence[Guarantee], spec: ReleaseSpec, *,
                   cache: dict | None = None) -> list[ModelCalibration]:
    """:func:`calibrate` at every target of ``targets`` (one type): a list, in order.

    The calibrations of all targets run together where the class has a
    vectorised search (:meth:`lib.mechanisms.protocol.Mechanism.calibrate_many`:
    the approximate-DP order searches, the posterior samplers' scales);
    element ``i`` equals ``calibrate(mechanism, targets[i], spec, ...)``.
    With a ``cache`` (a dict), every calibration is stored under
    :func:`calibration_key` and only the targets not stored yet are
    calibrated (together): a grid over several splits of one dataset, whose
    specs are equal, calibrates each (mechanism, budget) once. A calibration
    that raises stores nothing.

    Raises
    ------
    ValueError
        If ``cache`` holds, under a calibration's key, something that is not a
        :class:`lib.mechanisms.protocol.ModelCalibration` for that target (a
        cache filled by other code or with NaN is refused, never used).
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
    keys = [calibration_key(cls, t, spec) for t in targets]
    for k, t in zip(keys, targets):
        if k in cache and not (isinstance(cache[k], ModelCalibration) and cache[k].mechanism == cls.name):
            raise ValueError(f"cache holds, under the calibration of {cls.name!r} for {t!r}, a "
                             f"{type(cache[k]).__name__} that is not its calibration: pass a fresh dict "
                             "(or one filled only by calibrate_many)")
    missing = {k: t for k, t in zip(keys, targets) if k not in cache}
    if missing:
        for k, cal in zip(missing, cls.calibrate_many(list(missing.values()), spec, cache=cache)):
            cache[k] = cal
    return [cache[k] for k in keys]


def _budgets(values, name):
    values = np.atleast_1d(validation.positive(values, name))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name} must be a scalar or a non-empty 1-D array")
    return values


def _seed(seed):
    return validation.integer(seed, "seed", 0)


def evaluate(task: Task, mechanism: str | type[Mechanism], budgets: ArrayLike, n_repeats: int, *,
             target: Guarantee | None = None, seed: int = defaults.DEFAULT_SEED, dataset: str | None = None,
             cache: dict | None = None, options: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Scores of one mechanism on one task over a grid of budgets, ``n_repeats`` releases each.

    All budgets are calibrated in one call (:func:`calibrate_many`: the
    approximate-DP searches of all budgets together) and all attained releases
    are scored in one batched call of the task's scorer.
    A non-private mechanism is released once and its scores repeated; one
    whose tables are uniform (``uninformative``) scores uniform random guesses.
    A budget a mechanism cannot meet has ``attained`` False and NaN scores.

    Parameters
    ----------
    task : Task
        A task bound to its prepared data.
    mechanism : str or lib.mechanisms.protocol.Mechanism subclass
    budgets : array_like
        The levels of the whole model's target: :math:`\\varepsilon` (Rényi DP) or
        :math:`\\hat\\varepsilon` (approximate DP).
    n_repeats : int
    target : RenyiDP or ApproximateDP, optional
        Each budget replaces its level (``target.with_level``); its order or
        :math:`\\delta` is kept. Default :data:`RDP_TARGET`; None for a task
        whose mechanisms fix their own guarantee (mixed naive Bayes).
    seed : int
        Root of every cell's :func:`cell_seed`, >= 0.
    dataset : str, optional
        Name of the data (a seed key and a column); default the prepared data's.
    cache : dict, optional
        Memo of the calibrations (:func:`calibrate_many`).
    options : dict, optional
        Keyword arguments of a task with its own release loop (mixed naive
        Bayes: ``max_distance``, ``allocation``, ...), or of a task's
        ``with_options`` (naive Bayes: ``majority_share``, an extra score of the
        same releases); none for the others.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, epsilon, repeat, <metrics>`` (Rényi DP) or ``dataset,
        model, epsilon_hat, delta, repeat, attained, <metrics>`` (approximate
        DP): the :class:`Layout` of the target's type.

    Raises
    ------
    ValueError
        If ``target`` is not a target of a type in :data:`lib.experiments.cells.LAYOUTS`, the
        mechanism cannot meet its type, a budget is not positive or ``seed``
        is not a non-negative whole number.
    """
    if hasattr(task, "evaluate"):   # a task with its own release loop and seeds (e.g. mixed naive Bayes)
        return task.evaluate(mechanism, budgets, n_repeats, target=target, seed=_seed(seed),
                             dataset=task.data.dataset if dataset is None else dataset, cache=cache,
                             **({} if options is None else dict(options)))
    if options:
        configure = getattr(task, "with_options", None)
        if configure is None:
            raise ValueError(f"options are for a task with its own release loop or scoring options; the "
                             f"{task.name} task takes none")
        task = configure(**dict(options))
    cls = get(mechanism)
    target = RDP_TARGET if target is None else target
    lay = layout(target)
    budgets = _budgets(budgets, lay.budget + "s")
    n_repeats = validation.integer(n_repeats, "n_repeats")
    seed = _seed(seed)
    dataset = task.data.dataset if dataset is None else dataset
    if not runs_under(cls, target):
        raise ValueError(f"the {cls.name!r} mechanism cannot meet a {type(target).__name__} target; it meets "
                         f"{', '.join(n.__name__ for n in cls.notions)}")
    if not task.supports(cls):
        raise ValueError(f"the {task.name} task cannot score the {cls.name!r} mechanism")
    shape = (len(budgets), n_repeats)
    attained = np.ones(len(budgets), bool)
    if getattr(cls, "uninformative", False):
        scores = task.score_uninformative(budgets, n_repeats, seed, dataset, task.prefix[RenyiDP] + cls.name)
    elif not cls.private:
        batch = task.release(calibrate(cls, NotPrivate(), task.spec), 1, None)
        scores = {k: np.broadcast_to(v, shape) for k, v in task.score([batch]).items()}
    else:
        batches = []
        targets = [target.with_level(float(eps)) for eps in budgets]
        calibrations = calibrate_many(cls, targets, task.spec, cache=cache)
        for i, (eps, cal) in enumerate(zip(budgets, calibrations)):
            attained[i] = cal.attained
            if cal.attained:
                rng = np.random.default_rng(cell_seed(seed, dataset, task.prefix[type(target)] + cls.name, eps))
                batches.append(task.release(cal, n_repeats, rng))
        scores = {k: np.full(shape, np.nan) for k in task.metrics}
        if batches:
            for k, v in task.score(batches).items():
                scores[k][attained] = v.reshape(-1, n_repeats)
    grid_eps, grid_rep = np.meshgrid(budgets, np.arange(n_repeats), indexing="ij")
    columns = {"dataset": dataset, "model": cls.name, lay.budget: grid_eps.ravel()}
    columns.update({name: float(getattr(target, name)) for name in lay.fixed})
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


def _names(values, name, allowed=None):
    """``values`` as a tuple of distinct entries, at least one; a ValueError naming ``name`` otherwise."""
    if isinstance(values, (str, type)):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise validation.ArgumentTypeError(f"{name} must be a sequence; got {type(values).__name__}") from None
    if not values:
        raise ValueError(f"{name} must hold at least one entry" + (f" (among {', '.join(allowed)})" if allowed else ""))
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must be distinct; got {list(values)!r:.200}")
    return values


def run(task: str | type, mechanisms: str | type[Mechanism] | Sequence[str | type[Mechanism]], budgets: ArrayLike, *,
        target: Guarantee | None = None, datasets: Sequence[str] | None = None,
        data: Mapping[str, Prepared | Split | NetworkData] | None = None, splits: Sequence[int] | None = None,
        n_repeats: int = 10, seed: int = defaults.DEFAULT_SEED, cache: dict | None = None, binning: str | None = None,
        options: Mapping[str, Any] | None = None, progress: bool | None = None) -> pd.DataFrame:
    """The grid of one task: every split x dataset x mechanism x budget x repeat, as one tidy frame.

    Parameters
    ----------
    task : str or task class
        A name of :func:`task_names` (``"naive-bayes"``, ``"bayesian-network"``, ...).
    mechanisms : sequence of str or Mechanism subclasses
        Distinct, at least one.
    budgets : array_like
        See :func:`evaluate`.
    target : RenyiDP or ApproximateDP, optional
        The target whose level each budget replaces (see :func:`evaluate`);
        default :data:`RDP_TARGET` (None for a task whose mechanisms fix their guarantee).
    datasets : sequence of str, optional
        Default: the keys of ``data``, else the task's datasets.
    data : mapping of str to prepared data, optional
        Use these (:class:`Prepared`, ``Split`` or ``NetworkData``) instead of
        preparing each dataset; only with one split (``splits`` None).
    splits : sequence of int, optional
        Split seeds: each dataset is prepared with each (``task.prepare``) and
        split ``s`` runs with root seed ``seed + s - 1``; the frame gets a
        column ``split``. Default: the book's split (seed 1), no ``split`` column.
    n_repeats, seed, cache
        See :func:`evaluate`; one ``cache`` is shared across the grid. Pass one
        dict to the runs of several splits: their specs are public and equal, so
        each (mechanism, budget) is calibrated once for all of them.
    binning : {"public", "quantile"}, optional
        The task's preprocessing (default its own, the public one).
    options : dict, optional
        See :func:`evaluate`.
    progress : bool, optional
        Show a tqdm progress bar; default only when stderr is a terminal.

    Returns
    -------
    pandas.DataFrame
        The frames of :func:`evaluate`, concatenated (with ``split`` after
        ``dataset`` when ``splits`` is given).
    """
    task_cls = task_class(task)
    own_loop = hasattr(task_cls, "evaluate") or hasattr(task_cls, "evaluate_many")
    if not own_loop:   # a task with its own loop checks its target itself
        target = RDP_TARGET if target is None else target
        layout(target)
    seed = _seed(seed)
    classes = [get(m) for m in _names(mechanisms, "mechanisms")]
    if data is not None:
        if not isinstance(data, collections.abc.Mapping):
            raise validation.ArgumentTypeError(f"data must be a mapping of dataset names to prepared data; "
                                               f"got {type(data).__name__}")
        if splits is not None:
            raise ValueError("data and splits exclude each other: data is one split already prepared")
        if not data:
            raise ValueError("data must hold at least one prepared dataset")
    if datasets is None:
        datasets = tuple(data) if data is not None else task_cls.datasets
    datasets = _names(datasets, "datasets")
    if data is not None:
        missing = [d for d in datasets if d not in data]
        if missing:
            raise ValueError(f"datasets {missing} are not keys of data")
    split_seeds = (SEED,) if splits is None else tuple(validation.integer(s, "splits", 0)
                                                       for s in _names(splits, "splits"))
    for cls in classes:
        if not task_cls.supports(cls):
            raise ValueError(f"mechanisms: the {task_cls.name} task cannot score the {cls.name!r} mechanism")
    cache = {} if cache is None else cache
    frames, current = [], {}
    joint = hasattr(task_cls, "evaluate_many")   # all mechanisms in one call (shared draws)
    jobs = [(s, name, cls) for s in split_seeds for name in datasets for cls in ([None] if joint else classes)]
    desc = f"{task_cls.name} {type(target).__name__} grid" if target is not None else f"{task_cls.name} grid"
    for s, name, cls in _progress(jobs, progress, desc):
        if current.get("key") != (s, name):
            prep = (prepared(data[name], name) if data is not None
                    else task_cls.prepare(name, s, **({} if binning is None else {"binning": binning})))
            current = {"key": (s, name), "task": task_cls(prep)}
        if joint:
            frame = current["task"].evaluate_many(classes, budgets, n_repeats, target=target, seed=seed + s - SEED,
                                                  dataset=name, cache=cache, **({} if options is None else options))
        else:
            frame = evaluate(current["task"], cls, budgets, n_repeats, target=target, seed=seed + s - SEED,
                             dataset=name, cache=cache, options=options)
        if splits is not None:
            frame.insert(1, "split", s)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def supported(task: str | type, target: Guarantee) -> tuple:
    """The registry names of the mechanisms a grid of ``task`` under ``target`` runs (registry order)."""
    from lib.mechanisms.protocol import names

    task_cls = task_class(task)
    return tuple(m for m in names() if runs_under(m, target) and task_cls.supports(get(m)))


__all__ = ["Layout", "Prepared", "Task", "budget_key", "budgets", "calibrate",
           "calibrate_many", "calibration_key", "cell_seed", "evaluate", "figure", "layout", "prepared", "run", "runs_under",
           "supported", "task_class", "task_names"]
