"""The logistic-regression task (chapter 11): design matrices and the Figure 3 grid (Geumlek et al. 2017, Section 5.2).

:class:`LogisticRegression` is the task of the engine (:mod:`lib.experiments.engine`):
it prepares a split as a :class:`~lib.experiments.engine.Prepared` (the design
matrix in ``X``, the row norm ``c``) and runs :func:`run_grid` for all its
samplers at once (methods that ask for the same posterior share its draws).

Section 5.2 of Geumlek, Song and Chaudhuri (2017) prepares its data in three
sentences: every categorical feature one-hot encoded, every feature scaled to
:math:`[-0.5, 0.5]`, every example normalised to norm 1. This module fixes the
details, using only *public* knowledge, so that the preprocessing itself
spends no privacy budget:

One-hot encoding
    The domain of a categorical attribute is its *public* domain in the
    schema (:func:`lib.experiments.schema.domains`): one column per listed
    value, plus one "other" column (for a missing or unlisted value, Adult's
    ``?``) iff the domain has an ``other`` code, whether or not such a value
    occurs in the rows, exactly as the public binning of
    :func:`lib.experiments.preprocessing.prepare` codes it. The columns, and so
    the :math:`-0.5` offsets that every one-hot block adds to a row's norm,
    do not depend on the private data. Each one-hot column is a
    feature like any other: 0 and 1 are mapped to :math:`-0.5` and
    :math:`0.5`. The label is coded by the schema's classes
    (:func:`lib.experiments.schema.classes`).
Scaling with public bounds
    A numerical attribute is mapped from public bounds :math:`[a, b]`
    (:data:`ADULT_BOUNDS`, :data:`DIGIT_BOUNDS`: the ranges the datasets'
    documentation or coding give, never the observed minimum and maximum) to
    :math:`[-0.5, 0.5]`; a value outside is clipped. Clipping and scaling act on
    one record at a time, so they are not releases of the data.
Normalising
    Each row is divided by its Euclidean norm and multiplied by ``c``, so
    :math:`\\|x_i\\|_2 = c` exactly (Assumption 1 (1) asks for :math:`\\le c`).
    A per-record operation again.
Rows
    Adult: the book's split (:func:`lib.experiments.preprocessing.prepare`, seed 1, 30 %
    test) and the book's attributes (``fnlwgt`` excluded), so logistic
    regression and naive Bayes see exactly the same people. Digit 3 versus 8:
    the rows of UCI optdigits with class 3 or 8, split with the same seeded
    permutation at the paper's test share of one third.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lib import validation

from lib.mechanisms.protocol import get
from lib.models.logistic_regression import (BETA0, SAMPLERS, ConcentratedLogistic, DiffuseLogistic, LogisticSampler,
                                            OPSLogistic, Settings, cross_entropy, error_rate, sample)
from lib.privacy.guarantees import ApproximateDP, Guarantee
from lib.experiments import schema
from lib.experiments.data import label_column, load
from lib.experiments.prepared import Prepared
from lib.experiments.preprocessing import EXCLUDED, SEED, TEST_SIZE, split_rows

#: Public bounds of Adult's numerical attributes: ages 0..100 (adult.names:
#: "continuous"; a human age), years of education 1..16 (the coding of
#: ``education-num``), capital gains and losses 0..99999 (five-digit fields of
#: the census extract; 99999 is the top code), hours per week 0..100 (a week has
#: 168 hours; the census field is two digits).
ADULT_BOUNDS = {
    "age": (0.0, 100.0),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 99999.0),
    "capital-loss": (0.0, 99999.0),
    "hours-per-week": (0.0, 100.0),
}

#: Public bounds of an optdigits feature: the count of set pixels in a 4x4
#: block, 0..16 (optdigits.names).
DIGIT_BOUNDS = (0.0, 16.0)

#: The widths Geumlek et al. report for their encodings (Section 5.2).
PAPER_WIDTH = {"Adult": 100, "MNIST": 784}


class GLMData(NamedTuple):
    """A train-test split as a design matrix for binary logistic regression.

    Attributes
    ----------
    X_train, X_test : ndarray of float, shape (n, d)
        Rows of Euclidean norm exactly ``c``.
    y_train, y_test : ndarray of int64
        Labels in {0, 1}.
    columns : tuple of str
        Name of each column of ``X``.
    c : float
        The bound :math:`c` of Assumption 1 (1).
    train_rows, test_rows : ndarray of int64
        Row indices into the raw frame (:func:`lib.experiments.data.load`).
    """

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    columns: tuple
    c: float
    train_rows: np.ndarray
    test_rows: np.ndarray


def scale(values: ArrayLike, low: float, high: float) -> np.ndarray:
    """Map ``[low, high]`` onto :math:`[-0.5, 0.5]`, clipping values outside.

    Examples
    --------
    >>> scale([0.0, 5.0, 10.0, 12.0], 0.0, 10.0)
    array([-0.5,  0. ,  0.5,  0.5])
    """
    if not high > low:
        raise ValueError(f"high must exceed low; got [{low}, {high}]")
    x = np.asarray(values, dtype=float)
    return (np.clip(x, low, high) - low) / (high - low) - 0.5


def normalise_rows(X: ArrayLike, c: float = 1.0) -> np.ndarray:
    """Scale every row to Euclidean norm ``c`` (Assumption 1 (1) with equality).

    Examples
    --------
    >>> normalise_rows(np.array([[3.0, 4.0], [0.5, -0.5]]), c=2.0).round(4)
    array([[ 1.2   ,  1.6   ],
           [ 1.4142, -1.4142]])
    """
    c = validation.scalar(validation.positive(c, "c"), "c")
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a row of X is zero and cannot be normalised")
    return c * X / norms


def one_hot(column: pd.Series, domain: schema.Domain) -> tuple[np.ndarray, list[str]]:
    """One-hot columns (0/1) over the public ``domain``: its listed values, plus "other" iff ``domain.other``.

    The codes are :func:`lib.experiments.schema.encode`'s, so the width is
    ``domain.size`` whatever values the rows contain.

    Raises
    ------
    ValueError
        If a value is not listed and the domain has no ``other`` code.

    Examples
    --------
    >>> d = schema.Domain(("a", "b"), True, "doc", "")
    >>> X, names = one_hot(pd.Series(["b", None], name="x"), d)
    >>> X.tolist(), names
    ([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], ['x=a', 'x=b', 'x=other'])
    """
    codes = schema.encode(column, domain, f"attribute {column.name!r}")
    names = [f"{column.name}={v}" for v in domain.values] + ([f"{column.name}=other"] if domain.other else [])
    out = np.zeros((len(column), domain.size))
    out[np.arange(len(column)), codes] = 1.0
    return out, names


def design_matrix(frame: pd.DataFrame, bounds: dict, c: float = 1.0, *,
                  domains: dict) -> tuple[np.ndarray, list[str]]:
    """Section 5.2's encoding of every attribute of ``frame``, rows normalised to norm ``c``.

    The attributes named in ``domains`` (public :class:`lib.experiments.datasets.Domain`
    objects, e.g. :func:`lib.experiments.schema.domains`) are categorical and
    one-hot encoded over their domain (:func:`one_hot`); every other attribute
    is numerical and must have public bounds in ``bounds``. Every column is
    then on :math:`[-0.5, 0.5]` before the rows are normalised. The columns
    depend on ``domains`` and ``bounds`` only, never on the rows.
    """
    blocks, names = [], []
    for name in frame.columns:
        col = frame[name]
        if name in domains:
            block, cols = one_hot(col, domains[name])
            blocks.append(block - 0.5)
            names += cols
        else:
            if name not in bounds:
                raise ValueError(f"numerical attribute {name!r} needs public bounds")
            blocks.append(scale(col.to_numpy(dtype=float), *bounds[name])[:, None])
            names.append(str(name))
    return normalise_rows(np.hstack(blocks), c), names


def _split(X, y, names, c, train, test):
    return GLMData(X[train], X[test], y[train].astype(np.int64), y[test].astype(np.int64),
                   tuple(names), float(c), train, test)


def adult(c: float = 1.0, *, frame: pd.DataFrame | None = None, seed: int = SEED) -> GLMData:
    """Adult on the book's split: income ``>50K`` is class 1.

    The same rows as :func:`lib.experiments.preprocessing.prepare` ``("Adult")`` (seed 1,
    30 % test) and the same attributes (``fnlwgt`` left out), the categorical
    ones one-hot over their public schema domains, the numerical ones scaled
    from :data:`ADULT_BOUNDS` instead of binned; the label coded by the
    schema's classes (``<=50K``, ``>50K``). ``frame`` replaces the file's rows
    (:func:`lib.experiments.preprocessing.frame` ``("Adult")``, the default), e.g. by a
    neighbouring data set: the columns do not change with it. ``seed`` is
    the split's (:func:`lib.experiments.preprocessing.prepare`'s ``seed``: the
    same seed gives the same rows as naive Bayes's split).
    """
    if frame is None:
        frame = load("Adult")
    label = label_column("Adult")
    y = schema.encode(frame[label], schema.classes("Adult"), f"label {label!r}")
    frame = frame.drop(columns=[label, *(a for a in EXCLUDED.get("Adult", ()) if a in frame.columns)])
    X, names = design_matrix(frame, ADULT_BOUNDS, c, domains=schema.domains("Adult"))
    train, test = split_rows(len(frame), validation.integer(seed, "seed", 0), TEST_SIZE)
    return _split(X, y, names, c, train, test)


def digits(positive: int = 8, negative: int = 3, c: float = 1.0, *, test_size: float = 1 / 3,
           seed: int = SEED) -> GLMData:
    """UCI optdigits, ``negative`` (class 0) versus ``positive`` (class 1).

    The 64 block counts scaled from :data:`DIGIT_BOUNDS`; the rows of the two
    digits split by the book's seeded permutation with the paper's test share
    of one third (``seed``: the permutation's). A stand-in for the paper's
    MNIST 3-versus-8 (784 pixels).
    """
    frame = load("Digit")
    label = label_column("Digit")
    keep = frame[label].isin([negative, positive]).to_numpy()
    if keep.sum() == 0:
        raise ValueError(f"no rows of digits {negative} and {positive}")
    sub = frame.loc[keep]
    y = (sub[label].to_numpy() == positive).astype(np.int64)
    pixels = sub.drop(columns=[label])
    X = normalise_rows(scale(pixels.to_numpy(dtype=float), *DIGIT_BOUNDS), c)
    train, test = split_rows(len(sub), validation.integer(seed, "seed", 0), test_size)
    rows = np.flatnonzero(keep)
    out = _split(X, y, list(pixels.columns), c, train, test)
    return out._replace(train_rows=rows[train], test_rows=rows[test])


# ----------------------------------------------------------------------------- the experiment of Figure 3

#: The private samplers of Geumlek et al., the ones :func:`samplers_at_dp` runs at an
#: :math:`(\hat\varepsilon, \delta)` target: Algorithms 4 and 5 and One Posterior Sample.
DP_SAMPLERS = (ConcentratedLogistic, DiffuseLogistic, OPSLogistic)


def run_grid(data: GLMData | Prepared, epsilons: ArrayLike, lams: ArrayLike, n_repeats: int, *, seed: int,
             methods: Sequence[str | type[LogisticSampler]] = SAMPLERS, n_sweeps: int = 6, mala_steps: int = 0,
             beta0: float = BETA0, ops_factor: float | None = None) -> pd.DataFrame:
    """Test error and cross-entropy of every method at every :math:`(\\lambda, \\varepsilon)` (Figure 3).

    The distinct posteriors of the grid are sampled once each, ``n_repeats``
    chains (one release per chain) with :func:`sample`; cells that ask for the
    same posterior (Algorithms 4 and 5 at the same :math:`\\lambda/\\varepsilon`,
    both at the non-private posterior once :math:`\\lambda/\\varepsilon` is small
    enough, OPS in every row) share its draws, so two methods that coincide
    tie exactly.

    Parameters
    ----------
    data : GLMData
    epsilons, lams : array_like
        The RDP targets :math:`\\varepsilon` and orders :math:`\\lambda` (every pair is run).
    n_repeats : int
        Releases per cell (the paper: 50).
    seed : int
        Seed of the sampler.
    methods : sequence of type or str
        :class:`~lib.mechanisms.logistic_posterior.LogisticSampler` classes
        (or their registry names); default the four of Figure 3
        (:data:`~lib.mechanisms.logistic_posterior.SAMPLERS`). Each class's
        ``short`` name is its ``method`` in the result.
    n_sweeps, mala_steps : int
        Passed to :func:`sample`.
    beta0 : float
        The original prior.
    ops_factor : float, optional
        OPS's constant (:func:`~lib.mechanisms.logistic_posterior.ops_epsilon`);
        None is :attr:`~lib.mechanisms.logistic_posterior.OPSLogistic.factor`.

    Returns
    -------
    pandas.DataFrame
        ``method, lam, epsilon, beta, rho, radius, repeat, error, cross_entropy, acceptance``
        (two rows with the same ``beta, rho, radius`` share their draws).
    """
    eps = np.atleast_1d(validation.positive(epsilons, "epsilons")).astype(float)
    lams = np.atleast_1d(validation.order(lams, "lams")).astype(float)
    K = validation.integer(n_repeats, "n_repeats")
    E, L = (a.ravel() for a in np.meshgrid(eps, lams))
    n = len(data.y_train)
    cells, keys = [], []
    for m in methods:
        cls = m if isinstance(m, type) else get(m)
        if not (isinstance(cls, type) and issubclass(cls, LogisticSampler)):
            raise ValueError(f"methods must hold LogisticSampler classes or their registry names; got {m!r:.60}")
        st = cls.settings(E, L, n, beta0, c=data.c, ops_factor=ops_factor)
        for j in range(E.size):
            key = (float(st.beta[j]), float(st.rho[j]), float(st.radius[j]))
            cells.append((cls.short, L[j], E[j], key))
            keys.append(key)
    unique = sorted(set(keys))
    st = Settings(*(np.array(v) for v in zip(*unique)))
    s = sample(data.X_train, data.y_train, st, K, n_sweeps, rng=seed, mala_steps=mala_steps, c=data.c)
    err = error_rate(s.w, data.X_test, data.y_test)  # (S, K)
    ce = cross_entropy(s.w, data.X_test, data.y_test)
    index = {k: i for i, k in enumerate(unique)}
    rows = []
    for m, lam, e, key in cells:
        i = index[key]
        for r in range(K):
            rows.append((m, lam, e, key[0], key[1], key[2], r, err[i, r], ce[i, r], s.acceptance_independence[i]))
    return pd.DataFrame(rows, columns=["method", "lam", "epsilon", "beta", "rho", "radius", "repeat", "error",
                                       "cross_entropy", "acceptance"])


def run_splits(load_split: Callable[[int], GLMData], split_seeds: ArrayLike, epsilons: ArrayLike, lams: ArrayLike,
               n_repeats: int, *, seed: int, **kwargs: Any) -> pd.DataFrame:
    """:func:`run_grid` on several train/test splits: ``load_split(split_seed)`` gives each :class:`GLMData`.

    The sampler's seed of split ``k`` is ``seed + k``, so releases on different
    splits are independent. Returns the frames of :func:`run_grid` stacked, with
    a column ``split`` (the split's seed).
    """
    seeds = [validation.integer(s, "split_seeds", 0) for s in np.atleast_1d(split_seeds)]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"split_seeds must be distinct and at least one; got {seeds}")
    seed = validation.integer(seed, "seed", 0)
    frames = [run_grid(load_split(s), epsilons, lams, n_repeats, seed=seed + k, **kwargs).assign(split=s)
              for k, s in enumerate(seeds)]
    return pd.concat(frames, ignore_index=True)


def samplers_at_dp(data: GLMData | Prepared, epsilon_hats: ArrayLike, n_repeats: int, *, seed: int, n_sweeps: int = 6,
                   delta: float = 1e-5, labels: Mapping[str, str] | None = None,
                   methods: Sequence[str | type[LogisticSampler]] | None = None) -> pd.DataFrame:
    """The three private samplers of Geumlek et al. at :math:`(\\hat\\varepsilon, \\delta)` targets (chapter 11).

    Each sampler draws all targets in one :func:`lib.models.logistic_regression.sample` call, in
    the order of ``epsilon_hats``, from the one seed ``seed`` (so the three samplers share it, as
    the chapter's head-to-head does): the two RDP samplers (Algorithms 4 and 5) at the slope whose
    Rényi curve converts to :math:`(\\hat\\varepsilon, \\delta)`-DP
    (:func:`lib.models.logistic_regression.rdp_slope_for_dp`), One Posterior Sample at pure
    :math:`\\hat\\varepsilon`-DP, each at the radius 1 of the scaled rows. Unlike :func:`run_grid`,
    which samples each distinct posterior once in sorted order, this keeps the budgets' order.

    Parameters
    ----------
    data : GLMData
        The scaled design matrices and labels of one split.
    epsilon_hats : sequence of float
        The targets :math:`\\hat\\varepsilon > 0`.
    n_repeats : int
        Releases per sampler and target.
    seed : int
        The seed of every sampler's draws.
    n_sweeps : int, default 6
        Sweeps of the sampler (:func:`lib.models.logistic_regression.sample`).
    delta : float, default 1e-5
    labels : dict, optional
        The name of each sampler's ``short`` name in the ``model`` column (default ``"LR <short>"``).
    methods : sequence of type or str, optional
        The samplers, in the order of the rows (classes or registry names among
        :data:`DP_SAMPLERS`); default all three. A sampler's draws do not depend on which
        others run.

    Returns
    -------
    pandas.DataFrame
        ``model, epsilon_hat, repeat, error, cross_entropy``.
    """
    from lib.models import logistic_regression as gp

    eps_hats = np.atleast_1d(validation.positive(epsilon_hats, "epsilon_hats")).astype(float)
    n_repeats = validation.integer(n_repeats, "n_repeats")
    seed = validation.integer(seed, "seed", 0)
    labels = {} if labels is None else labels
    samplers = DP_SAMPLERS if methods is None else [m if isinstance(m, type) else get(m) for m in methods]
    wrong = [getattr(m, "name", m) for m in samplers if m not in DP_SAMPLERS]
    if wrong or not samplers:
        raise ValueError(f"methods must be among the private samplers "
                         f"{tuple(m.name for m in DP_SAMPLERS)}; got {wrong or 'none'}")
    rows = []
    n = len(data.y_train)
    for sampler in samplers:
        method = sampler.short
        eps = (np.array([gp.rdp_slope_for_dp(e, delta) for e in eps_hats]) if sampler is not gp.OPSLogistic
               else eps_hats)
        draws = gp.sample(data.X_train, data.y_train, sampler.settings(eps, 1.0, n), n_repeats, n_sweeps, rng=seed)
        err = gp.error_rate(draws.w, data.X_test, data.y_test)
        ce = gp.cross_entropy(draws.w, data.X_test, data.y_test)
        for i, e in enumerate(eps_hats):
            for r in range(n_repeats):
                rows.append((f"LR {labels.get(method, method)}", e, r, err[i, r], ce[i, r]))
    return pd.DataFrame(rows, columns=["model", "epsilon_hat", "repeat", "error", "cross_entropy"])


class LogisticRegression:
    """Private logistic regression on one prepared split: the posterior samplers of Figure 3.

    Parameters
    ----------
    data : lib.experiments.engine.Prepared or GLMData
        A design matrix (rows of norm ``c``) and binary labels.
    """

    name = "logistic-regression"
    metrics = ("error", "cross_entropy")
    datasets = ("Adult", "Digit")

    def __init__(self, data: GLMData | Prepared) -> None:
        if isinstance(data, GLMData):
            data = Prepared("data", None, data.X_train, data.X_test, data.y_train, data.y_test,
                            np.zeros(0, np.int64), 2, tuple(data.columns), (0, 1), c=data.c)
        if not isinstance(data, Prepared) or data.c is None:
            raise validation.ArgumentTypeError("data must be a design matrix prepared by LogisticRegression.prepare "
                                               "(or a GLMData)")
        self.data = data

    @classmethod
    def prepare(cls, dataset: str, seed: int, binning: str = "public", *, c: float = 1.0) -> Prepared:
        """Adult (:func:`adult`) or optdigits 3 versus 8 (:func:`digits`) on the split of ``seed``."""
        if binning != "public":
            raise ValueError(f"binning must be 'public' for logistic regression (its attributes are scaled from "
                             f"public bounds, not binned); got {binning!r}")
        makers = {"Adult": adult, "Digit": digits}
        if dataset not in makers:
            raise ValueError(f"dataset must be one of {tuple(makers)}; got {dataset!r:.60}")
        d = makers[dataset](c=c, seed=seed)
        return Prepared(dataset, seed, d.X_train, d.X_test, d.y_train, d.y_test, np.zeros(0, np.int64), 2,
                        tuple(d.columns), (0, 1), c=d.c)

    @staticmethod
    def supports(cls: type) -> bool:
        """Whether the engine can run ``cls`` on this task: a logistic posterior sampler."""
        return isinstance(cls, type) and issubclass(cls, LogisticSampler)

    def evaluate_many(self, mechanisms: Sequence[str | type[LogisticSampler]], budgets: ArrayLike, n_repeats: int, *,
                      target: Guarantee | None = None, seed: int = 0, dataset: str | None = None,
                      cache: dict | None = None, lams: ArrayLike | None = None, **options: Any) -> pd.DataFrame:
        """All ``mechanisms`` at once, with a ``dataset`` column first: Figure 3's grid or one :math:`(\\hat\\varepsilon, \\delta)`.

        With ``target`` None, :func:`run_grid`: ``lams`` (the Rényi orders, every pair with
        ``budgets`` is run) is required, each cell's target is its :math:`(\\lambda, \\varepsilon)`.
        With an :class:`~lib.privacy.guarantees.ApproximateDP` target (its :math:`\\delta` is kept,
        each budget is an :math:`\\hat\\varepsilon`), :func:`samplers_at_dp` with ``seed`` for
        every sampler (options ``n_sweeps``, ``labels``); ``lams`` must be None.
        """
        if isinstance(target, ApproximateDP):
            if lams is not None:
                raise ValueError("lams must be None at an ApproximateDP target (each sampler meets it at its best order)")
            frame = samplers_at_dp(self.data, budgets, n_repeats, seed=seed, delta=target.delta,
                                   methods=list(mechanisms), **options)
            frame.insert(0, "dataset", self.data.dataset if dataset is None else dataset)
            return frame
        if target is not None:
            raise ValueError("target must be None (each cell's target is its (lam, epsilon); pass the orders as "
                             f"options={{'lams': ...}}) or an ApproximateDP for logistic regression; got {target!r:.60}")
        if lams is None:
            raise ValueError("options must give lams, the Renyi orders of the grid")
        frame = run_grid(self.data, budgets, lams, n_repeats, seed=seed, methods=list(mechanisms), **options)
        frame.insert(0, "dataset", self.data.dataset if dataset is None else dataset)
        return frame
