"""The mixed naive-Bayes task (chapter 13, Zafarani and Clifton): raw numerical attributes with public ranges.

:func:`mixed_data` reads a dataset of Table 1 with its numerical attributes
unbinned and its categorical domains and classes from the public schema;
:func:`book_split` gives the book's seeded split; :func:`evaluate` scores
releases of :mod:`lib.models.mixed_naive_bayes` on it and :func:`cross_validate`
runs Zafarani and Clifton's repeated cross-validation. :class:`MixedNaiveBayes`
is the task of the engine (:mod:`lib.experiments.engine`): it prepares a split
as a :class:`~lib.experiments.engine.Prepared` (categorical codes in ``X``, raw
numerical attributes in ``Z``) and runs :func:`evaluate` with the generator
``numpy.random.default_rng(seed)`` of each (split, mechanism).
:class:`MixedCrossValidation` is the task that runs :func:`cross_validate`
through the engine: ``engine.run(MixedCrossValidation, methods, epsilons,
options={"variants": ..., "n_folds": ..., "n_draws": ...})``.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.bounded_moments import MomentMechanism
from lib.models.mixed_naive_bayes import draw, fit_statistics_grid, log_proba, mechanism_class
from lib.privacy.guarantees import Guarantee
from lib.experiments import datasets, schema
from lib.experiments.data import DATA_ENV, DATASETS, cache_dir, label_column, load
from lib.experiments.prepared import Prepared
from lib.experiments.preprocessing import EXCLUDED, SEED, TEST_SIZE, split_rows
from lib.experiments.public_bounds import bounds_for


def mixed_data(name: str, *, frame: pd.DataFrame | None = None) -> dict:
    """Dataset ``name`` of Table 1 with raw numerical attributes and coded categorical ones.

    The same attributes as :func:`lib.experiments.preprocessing.prepare` (minus
    its ``EXCLUDED``) and the same *public* encoding of the categorical ones:
    an attribute is categorical iff the public schema
    (:func:`lib.experiments.schema.domains`) lists it, its codes and number of
    values come from its schema domain (one extra code for unlisted or missing
    values iff the domain has ``other``), and the classes are the schema's
    (:func:`lib.experiments.schema.classes`), all as in the public binning of
    :func:`~lib.experiments.preprocessing.prepare`. Numerical attributes stay
    raw, with the public ranges of :mod:`lib.experiments.public_bounds`. No
    domain, class or range is read from the rows, so two
    neighbouring files give the same ``n_values``, ``n_classes``, ``bounds``
    and attribute lists.

    Parameters
    ----------
    name : str
        One of :data:`lib.experiments.data.DATASETS`.
    frame : pandas.DataFrame, optional
        The rows to encode in place of the file's
        (:func:`lib.experiments.preprocessing.frame` ``(name)``, the default),
        e.g. a neighbouring data set. The file's rows are encoded once per
        process and data location (as :func:`lib.experiments.data.load`
        memoises the parsed file); every call returns fresh arrays.

    Raises
    ------
    ValueError
        If a categorical value is outside a domain without ``other``, a class
        is outside the public classes, or a numerical attribute has a missing
        value (the public pipeline has no code for it).
    """
    if frame is None:
        datasets.get(name)             # an unknown name is refused as load refuses it, before the cache
        cached = _mixed_cached(name, os.environ.get(DATA_ENV), str(cache_dir()))
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in cached.items()}
    return _encode(name, frame)


@functools.lru_cache(maxsize=None)
def _mixed_cached(name, env, cache):
    """:func:`mixed_data` of the file's rows, memoised by name and data location (as ``load``)."""
    return _encode(name, load(name).drop(columns=list(EXCLUDED.get(name, ()))))


def _encode(name, frame):
    """The body of :func:`mixed_data` for the rows ``frame``."""
    label = label_column(name)
    y = schema.encode(frame[label], schema.classes(name), f"label {label!r}")
    doms = schema.domains(name)
    cat, n_values, num, cat_names, num_names = [], [], [], [], []
    for col in frame.columns:
        if col == label:
            continue
        if col in doms:
            cat.append(schema.encode(frame[col], doms[col], f"attribute {col!r}"))
            n_values.append(doms[col].size)
            cat_names.append(col)
        else:
            x = frame[col].to_numpy(dtype=float)
            if np.isnan(x).any():
                raise ValueError(f"numerical attribute {col!r} of {name} has missing values "
                                 "(the public pipeline has no code for them)")
            num.append(x)
            num_names.append(col)
    n = len(frame)
    return {"name": name, "X_cat": np.column_stack(cat) if cat else np.zeros((n, 0), np.int64),
            "X_num": np.column_stack(num) if num else np.zeros((n, 0)),
            "y": y, "n_values": np.array(n_values, np.int64), "n_classes": schema.classes(name).size,
            "bounds": bounds_for(name, num_names) if num_names else np.zeros((0, 2)),
            "categorical": tuple(cat_names), "numerical": tuple(num_names)}


def book_split(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and test row indices of the book's seeded 70/30 split (as :func:`lib.experiments.preprocessing.prepare`)."""
    return split_rows(n, SEED, TEST_SIZE)


def evaluate(data: dict, train: np.ndarray, test: np.ndarray, method: str | type[MomentMechanism], epsilons: ArrayLike,
             n_repeats: int, rng: SeedLike, *, likelihood: str = "gaussian", cache: dict | None = None,
             **options: Any) -> tuple[np.ndarray, np.ndarray]:
    """Test accuracy and cross-entropy of ``n_repeats`` releases per epsilon: two arrays (len(epsilons), n_repeats).

    The exact statistics and smooth sensitivities are computed once per
    epsilon; the repeats re-draw only the noise (as the book's other grids).
    ``cache`` (a dict) may be shared between calls on the same rows: its
    entries are keyed by a fingerprint of the sample and options
    (:func:`lib.models.mixed_naive_bayes.fit_statistics`), so sharing only saves time.
    """
    d = data
    return _scores(d["X_cat"][train], d["X_num"][train], d["y"][train], d["X_cat"][test], d["X_num"][test],
                   d["y"][test], d["n_values"], d["n_classes"], d["bounds"], method, epsilons, n_repeats,
                   validation.generator(rng), likelihood=likelihood, cache={} if cache is None else cache, **options)


def _scores(X_cat, X_num, y_train, X_cat_test, X_num_test, y, n_values, n_classes, bounds, method, epsilons,
            n_repeats, rng, *, likelihood="gaussian", cache, shares=None, **options):
    """The body of :func:`evaluate` on explicit training and test arrays.

    ``shares`` (an array (len(epsilons), n_repeats)), if given, receives the share of
    test rows each release predicts as the test rows' majority class
    (:func:`lib.experiments.verdicts.majority_share` of one release).
    """
    acc = np.empty((len(epsilons), n_repeats))
    ce = np.empty((len(epsilons), n_repeats))
    top = np.bincount(np.asarray(y)).argmax() if shares is not None else None
    # one fit per epsilon, the rows checked, counted and sorted once (fit_statistics_grid)
    fits = []
    if len(epsilons):
        fits = fit_statistics_grid(X_cat, X_num, y_train, n_values, n_classes, bounds, list(epsilons),
                                   method=method, cache=cache, **options)
    for i, st in enumerate(fits):
        lp = log_proba(draw(st, n_repeats, rng), X_cat_test, X_num_test, likelihood)
        acc[i] = (lp.argmax(-1) == y).mean(-1)
        if shares is not None:
            shares[i] = (lp.argmax(-1) == top).mean(-1)
        ce[i] = -np.take_along_axis(lp, np.broadcast_to(y[None, :, None], lp.shape[:2] + (1,)), -1)[..., 0].mean(-1)
    return acc, ce


def cross_validate(data: dict, variants: Mapping[str, Mapping[str, Any]], epsilons: ArrayLike, *, n_folds: int = 10,
                   n_repeats: int = 1, n_draws: int = 10, seed: int = 0) -> pd.DataFrame:
    """Zafarani-Clifton's protocol (Section 7.2): ``n_repeats`` times ``n_folds``-fold cross-validation.

    Each repeat draws a new fold assignment from ``numpy.random.default_rng(seed)``;
    in each fold every variant is fitted once per epsilon and released
    ``n_draws`` times (the exact statistics and sensitivities do not change
    between draws). ``variants`` maps a label to the keyword arguments of
    :func:`evaluate` (``method``, a :class:`~lib.mechanisms.bounded_moments.MomentMechanism`
    class or its registry name, and options). The paper uses 5 repeats; the
    book's reduced run uses 1 repeat with 10 draws per fold.

    Returns
    -------
    pandas.DataFrame
        Columns ``variant, epsilon, repeat, fold, draw, accuracy, cross_entropy``
        (non-private variants have epsilon NaN).
    """
    rng = np.random.default_rng(seed)
    n = len(data["y"])
    frames = []
    for r in range(n_repeats):
        folds = rng.permutation(n) % n_folds
        for f in range(n_folds):
            train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
            cache = {}     # sensitivity profiles of this fold's training rows, shared by the variants
            for label, kwargs in variants.items():
                kwargs = dict(kwargs)
                private = mechanism_class(kwargs["method"]).private
                eps = np.asarray(epsilons if private else [1.0], float)
                acc, ce = evaluate(data, train, test, kwargs.pop("method"), eps, n_draws if private else 1, rng,
                                   cache=cache, **kwargs)
                e, dr = np.meshgrid(eps if private else [np.nan], np.arange(acc.shape[1]), indexing="ij")
                frames.append(pd.DataFrame({"variant": label, "epsilon": e.ravel(), "repeat": r, "fold": f,
                                            "draw": dr.ravel(), "accuracy": acc.ravel(),
                                            "cross_entropy": ce.ravel()}))
    return pd.concat(frames, ignore_index=True)


class MixedNaiveBayes:
    """Mixed naive Bayes on one prepared split: Gaussian numerical attributes, categorical tables.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared
        From :meth:`prepare`: categorical codes in ``X_train``/``X_test``, raw
        numerical attributes in ``Z_train``/``Z_test`` with public ``bounds``.
    """

    name = "mixed-naive-bayes"
    metrics = ("accuracy", "cross_entropy")
    datasets = DATASETS

    def __init__(self, data: Prepared) -> None:
        if not isinstance(data, Prepared) or data.Z_train is None:
            raise validation.ArgumentTypeError("data must be a Prepared with numerical attributes, "
                                               "from MixedNaiveBayes.prepare")
        self.data = data

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = "public") -> Prepared:
        """Dataset ``dataset`` (:func:`mixed_data`) on the split of ``seed`` (:func:`lib.experiments.preprocessing.split_rows`).

        ``binning`` must be ``"public"``: the numerical attributes are not binned
        and the categorical ones are coded by the public schema.
        """
        if binning != "public":
            raise ValueError(f"binning must be 'public' for mixed naive Bayes (its numerical attributes are not "
                             f"binned); got {binning!r}")
        d = mixed_data(dataset)
        train, test = split_rows(len(d["y"]), seed, TEST_SIZE)
        return Prepared(dataset, seed, d["X_cat"][train], d["X_cat"][test], d["y"][train], d["y"][test],
                        d["n_values"], d["n_classes"], d["categorical"], tuple(schema.classes(dataset)),
                        Z_train=d["X_num"][train], Z_test=d["X_num"][test], bounds=d["bounds"],
                        numerical=d["numerical"])

    @staticmethod
    def supports(cls: type) -> bool:
        """Whether the engine can run ``cls`` on this task: a bounded-moment class."""
        return isinstance(cls, type) and issubclass(cls, MomentMechanism)

    def evaluate(self, mechanism: str | type[MomentMechanism], budgets: ArrayLike, n_repeats: int, *,
                 target: Guarantee | None = None, seed: int = 0, dataset: str | None = None,
                 cache: dict | None = None, majority_share: bool = False, **options: Any) -> pd.DataFrame:
        """Accuracy and cross-entropy of ``n_repeats`` releases per budget: a tidy frame.

        The releases draw from ``numpy.random.default_rng(seed)`` (:func:`evaluate`);
        a non-private method is fitted once and its scores repeated. The privacy
        guarantee is the method's (:func:`lib.models.mixed_naive_bayes.guarantee`
        at each budget), so ``target`` must be None. With ``majority_share``
        True the frame gains a column ``majority_share``: the share of test rows
        each release predicts as the test rows' majority class (the releases and
        scores are the same as without it).

        Returns
        -------
        pandas.DataFrame
            ``dataset, model, epsilon, repeat, accuracy, cross_entropy`` (and ``majority_share``).
        """
        if target is not None:
            raise ValueError("target must be None for mixed naive Bayes: a method's budget fixes its guarantee "
                             "(lib.models.mixed_naive_bayes.guarantee)")
        cls = mechanism_class(mechanism)
        eps = np.atleast_1d(validation.positive(budgets, "epsilons")).astype(float)
        n_repeats = validation.integer(n_repeats, "n_repeats")
        if not isinstance(majority_share, (bool, np.bool_)):
            raise validation.ArgumentTypeError(f"majority_share must be True or False; got {majority_share!r:.60}")
        d = self.data
        shares = np.empty((len(eps), n_repeats)) if majority_share else None
        acc, ce = _scores(d.X_train, d.Z_train, d.y_train, d.X_test, d.Z_test, d.y_test, d.n_values, d.n_classes,
                          d.bounds, cls, eps, n_repeats, np.random.default_rng(seed),
                          cache={} if cache is None else cache, shares=shares, **options)
        e, r = np.meshgrid(eps, np.arange(n_repeats), indexing="ij")
        frame = pd.DataFrame({"dataset": d.dataset if dataset is None else dataset, "model": cls.name,
                              "epsilon": e.ravel(), "repeat": r.ravel(), "accuracy": acc.ravel(),
                              "cross_entropy": ce.ravel()})
        if majority_share:
            frame["majority_share"] = shares.ravel()
        return frame


class MixedCrossValidation:
    """Zafarani and Clifton's repeated cross-validation (:func:`cross_validate`) as a task of the engine.

    The prepared data hold every row of the dataset, in the file's order, as
    training rows (``prepare``); the folds are drawn inside :func:`cross_validate`.
    ``engine.run(MixedCrossValidation, methods, epsilons, datasets=[name], n_repeats=R,
    seed=s, options={"variants": ..., "n_folds": K, "n_draws": D})`` returns the frame of
    ``cross_validate(mixed_data(name), variants, epsilons, n_folds=K, n_repeats=R,
    n_draws=D, seed=s)`` with a column ``dataset`` first: the same numbers.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared
        From :meth:`prepare`.
    """

    name = "mixed-naive-bayes-cv"
    metrics = ("accuracy", "cross_entropy")
    datasets = DATASETS

    def __init__(self, data: Prepared) -> None:
        if not isinstance(data, Prepared) or data.Z_train is None:
            raise validation.ArgumentTypeError("data must be a Prepared with numerical attributes, "
                                               "from MixedCrossValidation.prepare")
        self.data = data

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = "public") -> Prepared:
        """Every row of ``dataset`` (:func:`mixed_data`) as training rows; ``seed`` is kept, the rows are not split.

        ``binning`` must be ``"public"`` (as :meth:`MixedNaiveBayes.prepare`).
        """
        if binning != "public":
            raise ValueError(f"binning must be 'public' for mixed naive Bayes (its numerical attributes are not "
                             f"binned); got {binning!r}")
        d = mixed_data(dataset)
        return Prepared(dataset, seed, d["X_cat"], d["X_cat"][:0], d["y"], d["y"][:0], d["n_values"],
                        d["n_classes"], d["categorical"], tuple(schema.classes(dataset)),
                        Z_train=d["X_num"], Z_test=d["X_num"][:0], bounds=d["bounds"], numerical=d["numerical"])

    supports = staticmethod(MixedNaiveBayes.supports)

    def evaluate_many(self, mechanisms: Sequence[str | type[MomentMechanism]], budgets: ArrayLike, n_repeats: int, *,
                      target: Guarantee | None = None, seed: int = 0, dataset: str | None = None,
                      cache: dict | None = None, variants: dict, n_folds: int = 10,
                      n_draws: int = 10) -> pd.DataFrame:
        """:func:`cross_validate` of ``variants`` (``n_repeats`` repetitions), with a ``dataset`` column first.

        Parameters
        ----------
        mechanisms : sequence of MomentMechanism classes
            The methods of the variants, each at least once (a method no variant uses is refused).
        budgets : array_like
            The epsilons of the private variants.
        n_repeats : int
            Repetitions of the ``n_folds``-fold cross-validation.
        target : None
            A method's budget fixes its guarantee.
        seed : int
            The seed of :func:`cross_validate` (folds and noise).
        variants : dict
            Label -> keyword arguments of :func:`evaluate` (``method`` and options).
        n_folds, n_draws : int
            See :func:`cross_validate`.

        Raises
        ------
        ValueError
            If ``target`` is not None, or the methods of ``variants`` are not the ``mechanisms``.
        """
        if target is not None:
            raise ValueError("target must be None for mixed naive Bayes: a method's budget fixes its guarantee "
                             "(lib.models.mixed_naive_bayes.guarantee)")
        if not isinstance(variants, dict) or not variants:
            raise validation.ArgumentTypeError("variants must be a non-empty dict of labels to keyword arguments")
        used = {mechanism_class(v["method"]) for v in variants.values()}
        given = {mechanism_class(m) for m in mechanisms}
        if used != given:
            raise ValueError(f"mechanisms must be the methods of the variants, "
                             f"{sorted(c.name for c in used)}; got {sorted(c.name for c in given)}")
        d = self.data
        data = {"X_cat": d.X_train, "X_num": d.Z_train, "y": d.y_train, "n_values": d.n_values,
                "n_classes": d.n_classes, "bounds": d.bounds}
        frame = cross_validate(data, variants, np.atleast_1d(validation.positive(budgets, "epsilons")),
                               n_folds=validation.integer(n_folds, "n_folds", 2),
                               n_repeats=validation.integer(n_repeats, "n_repeats"),
                               n_draws=validation.integer(n_draws, "n_draws"), seed=seed)
        frame.insert(0, "dataset", d.dataset if dataset is None else dataset)
        return frame
