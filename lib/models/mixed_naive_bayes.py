"""Mixed naive Bayes: categorical attributes as counts, numerical ones as Gaussians.

A fit releases the class counts and one count table per categorical
attribute with Laplace noise, and the mean and standard deviation of every
numerical attribute in every class with a mechanism of
:mod:`lib.mechanisms.bounded_moments` (a :class:`~lib.mechanisms.bounded_moments.MomentMechanism`
class, or its registry name):

:class:`~lib.mechanisms.bounded_moments.SampleMoments` (``"sample_moments"``)
    Counts plus Laplace smoothing, per-class means and (population) standard
    deviations, with ``var_smoothing`` as in scikit-learn's ``GaussianNB``;
    not private.
:class:`~lib.mechanisms.bounded_moments.ZafaraniClifton` (``"zc"``)
    Zafarani and Clifton's Algorithm 1: Laplace noise on every count, Cauchy
    noise scaled to the smooth sensitivity of the per-class mean (Theorem 4)
    and standard deviation (line 17), calibrated by their Theorem 2
    (``calibration="theorem2"``), by the constants printed in Algorithm 1
    (``calibration="printed"``, a labelled variant) or tightly
    (``calibration="tight"``, :func:`lib.mechanisms.smooth_sensitivity.calibrate`).
:class:`~lib.mechanisms.bounded_moments.VaidyaLaplace` (``"vaidya"``)
    Vaidya et al. (2013): Laplace noise scaled to the global sensitivities of
    the mean :math:`(U-L)/n` and the standard deviation :math:`(U-L)\\sqrt{n-1}/n`.
:class:`~lib.mechanisms.bounded_moments.BunSteinke` (``"bun_steinke"``)
    As Zafarani and Clifton describe Bun and Steinke's estimator (their
    Sections 5 and 7): trimmed means of :math:`x` and :math:`x^2` with Cauchy
    noise scaled to their smooth sensitivity, projected to the range, and
    :math:`\\sigma^2 = E[X^2] - E[X]^2`.

Budget (Algorithm 1, line 3, and their Appendix 10.1): with weights
``allocation = (w_num, w_cat)`` (their "2:1" is ``(2, 1)``),
:math:`\\varepsilon' = \\varepsilon / (w_{num}\\,J_{num} + w_{cat}\\,J_{cat} + 1)`;
the class counts get :math:`\\varepsilon'`, each categorical table
:math:`w_{cat}\\varepsilon'`, each numerical attribute :math:`w_{num}\\varepsilon'`
(one mechanism object of that ``epsilon`` per attribute, which splits it
equally between its two statistics). Per class the rows are disjoint, so the
releases of one attribute for different classes compose in parallel.

Neighbours and what the guarantee covers: replace-one, as in the rest of the
book, so a count table has :math:`\\ell_1`-sensitivity 2 (Algorithm 1 prints 1,
the add/remove value; ``count_sensitivity`` sets it). The numerical releases,
as in both papers, treat each class's sample size as fixed: a neighbour that
changes a row's *label* moves one value between two classes' samples, which no
theorem of either paper covers (and the noise scales read the private class
sizes). So the guarantee a private fit states (:func:`guarantee`,
``fit_statistics(...)["guarantee"]``) is a :class:`LabelKeptDP`:
:math:`\\varepsilon`-DP for neighbours that keep every label, and no
:math:`\\varepsilon` under the book's replace-one relation. See the chapter
for this finding.

Post-processing (free in DP): noisy counts are clipped at 0 and smoothed by
``alpha``; means are clipped into :math:`[L, U]`, standard deviations into
:math:`[\\text{sd\\_floor}\\,(U-L), (U-L)/2]` (Algorithm 1 truncates at 0, which
leaves a zero deviation and an infinite density).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms import smooth_sensitivity as ss
from lib.mechanisms.bounded_moments import (BunSteinke, MomentMechanism, SampleMoments, VaidyaLaplace,
                                           ZafaraniClifton, draw_noise)
from lib.mechanisms.protocol import Guarantee, NotPrivate, get

LIKELIHOODS = ("gaussian", "truncnorm")
#: The mechanisms of the numerical attributes that the library registers.
MECHANISMS = (SampleMoments, ZafaraniClifton, VaidyaLaplace, BunSteinke)


#: Neighbour relations a guarantee of this module can be asked about (:meth:`LabelKeptDP.epsilon_under`).
RELATIONS = ("label-kept", "replace-one")

_NO_REPLACE_ONE = (
    "no epsilon is proved for replace-one neighbours that may change a row's label: such a neighbour moves "
    "one value between two classes' samples, both classes' releases move, and their noise scales are computed "
    "from the private class sizes (and, for 'zc' and 'bun_steinke', from the data by smoothness arguments that "
    "hold for samples of one fixed size). Vaidya et al.'s Laplace release of a mean then has unbounded privacy "
    "loss, and a class that drops to one row is released without noise. Only neighbours that keep every "
    "label (class sizes public) are covered")


@dataclass(frozen=True)
class LabelKeptDP(Guarantee):
    """:math:`\\varepsilon`-DP for neighbours that replace one row *and keep its label*; nothing more.

    The guarantee of the private fits of this module. Two data sets are
    label-kept neighbours when they differ in one row whose class is the same
    in both, so every class size is the same: the relation both papers'
    proofs assume. It is weaker than the book's replace-one relation (where
    the row may also change its class), under which no guarantee is stated:
    :meth:`epsilon_under` refuses. It is deliberately not a
    :class:`lib.mechanisms.protocol.PureDP`, which the book reads as replace-one.

    Attributes
    ----------
    epsilon : float
        The sum over all releases of what each costs between label-kept
        neighbours: a count table :math:`2/b` (Laplace scale :math:`b`; its
        row moves one count between two cells), a mean or deviation its
        calibrated :math:`\\varepsilon` (Vaidya et al.'s Laplace, Theorem 2 and
        the tight calibration) or, for the printed constants that no theorem
        covers, the exact Cauchy loss :func:`lib.mechanisms.smooth_sensitivity.cauchy_exact_loss`. The class
        counts do not change between such neighbours and cost 0.
    relation : str
        ``"label-kept"``.
    """

    epsilon: float
    relation: str = "label-kept"

    def epsilon_under(self, relation: str) -> float:
        """:math:`\\varepsilon` under a neighbour relation of :data:`RELATIONS`.

        Raises
        ------
        ValueError
            For ``"replace-one"``: no :math:`\\varepsilon` is proved there.
        """
        if relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}; got {relation!r}")
        if relation == "replace-one":
            raise ValueError(_NO_REPLACE_ONE)
        return self.epsilon


def _matrix(value, name, n, *, codes_for=None, rows="one per entry of y"):
    """A 2-D array of ``n`` rows: category codes checked against ``codes_for`` (n_values), or finite floats."""
    arr = np.asarray(value)
    if codes_for is not None:
        if arr.size == 0 and arr.ndim == 2 and arr.shape[1] == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)   # an empty float array: no codes to misread
        arr = validation.codes(arr, name, codes_for)
    else:
        arr = validation.in_range(arr, name, -np.inf, np.inf, open_low=True)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (rows, columns); got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} must have {n} rows ({rows}); got shape {arr.shape}")
    return arr


def _check_bounds(bounds, n_columns):
    bounds = validation.in_range(bounds, "bounds", -np.inf, np.inf, open_low=True)
    if bounds.shape != (n_columns, 2):
        raise ValueError(f"bounds must have shape ({n_columns}, 2), one (lower, upper) row per numerical column; "
                         f"got {bounds.shape}")
    with np.errstate(over="ignore"):
        width = bounds[:, 1] - bounds[:, 0]
    bad = ~((width > 0) & np.isfinite(width))
    if np.any(bad):
        j = int(np.argmax(bad))
        raise ValueError(f"bounds must have lower < upper with a finite width in every row; got row {j}: "
                         f"({bounds[j, 0]:g}, {bounds[j, 1]:g})")
    return bounds


def _check_data(X_cat, X_num, y, n_values, n_classes, bounds):
    n_classes = validation.integer(n_classes, "n_classes", 2)
    y = validation.labels(y, "y", n_classes)
    if y.size == 0:
        raise ValueError("y must hold at least one row")
    n_values = validation.integer_array(n_values, "n_values")
    if n_values.ndim != 1 or (n_values.size and n_values.min() < 1):
        raise ValueError(f"n_values must be a 1-D array of domain sizes >= 1; got {n_values!r:.80}")
    validation.cells(n_classes * int(n_values.sum()), "the count tables (n_classes * sum(n_values))")
    X_cat = _matrix(X_cat, "X_cat", y.size, codes_for=n_values)
    X_num = _matrix(X_num, "X_num", y.size)
    bounds = _check_bounds(bounds, X_num.shape[1])
    return X_cat, np.clip(X_num, bounds[:, 0], bounds[:, 1]), y, n_values, n_classes, bounds


def _allocation(allocation):
    w = validation.positive(allocation, "allocation")
    if w.shape != (2,):
        raise ValueError(f"allocation must be a pair (w_num, w_cat) of positive weights; got shape {w.shape}")
    return w


def mechanism_class(method: type[MomentMechanism] | str) -> type[MomentMechanism]:
    """The :class:`~lib.mechanisms.bounded_moments.MomentMechanism` class ``method`` names (a class passes through).

    Parameters
    ----------
    method : type or str
        A subclass of :class:`~lib.mechanisms.bounded_moments.MomentMechanism`
        (e.g. :class:`~lib.mechanisms.bounded_moments.ZafaraniClifton`) or its
        registry name (``"zc"``, ``"vaidya"``, ``"bun_steinke"``, ``"sample_moments"``).

    Raises
    ------
    ValueError
        If ``method`` is neither.

    Examples
    --------
    >>> mechanism_class("zc").__name__
    'ZafaraniClifton'
    """
    try:
        cls = method if isinstance(method, type) else get(method)
    except ValueError:
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, MomentMechanism)):
        names = tuple(c.name for c in MECHANISMS)
        raise ValueError(f"method must be a MomentMechanism class or the registry name of one {names}; "
                         f"got {method!r:.60}")
    return cls


def budget(epsilon: float, n_numerical: int, n_categorical: int,
           allocation: tuple[float, float] = (2.0, 1.0)) -> float:
    """:math:`\\varepsilon'` of Algorithm 1, line 3, for the weights ``allocation = (w_num, w_cat)``.

    :math:`\\varepsilon' = \\varepsilon / (w_{num} J_{num} + w_{cat} J_{cat} + 1)`.

    Parameters
    ----------
    epsilon : float
        Total budget, in :math:`(0, \\infty)`.
    n_numerical, n_categorical : int
        :math:`J_{num}, J_{cat} \\ge 0`.
    allocation : (float, float)
        Positive weights.

    Returns
    -------
    float
        In :math:`(0, \\infty)`.

    Raises
    ------
    ValueError
        On bad input, or if :math:`\\varepsilon'` is not a positive normal double.

    Examples
    --------
    >>> budget(1.3, 5, 8)   # Adult: 1.3 / (2*5 + 8 + 1)
    0.06842105263157895
    """
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    n_numerical = validation.integer(n_numerical, "n_numerical", 0)
    n_categorical = validation.integer(n_categorical, "n_categorical", 0)
    w = _allocation(allocation)
    with np.errstate(over="ignore", under="ignore"):
        value = float(epsilon / (w[0] * n_numerical + w[1] * n_categorical + 1.0))
    if not (np.isfinite(value) and value >= np.finfo(float).tiny):
        raise ValueError(f"the budget per release epsilon' = {value:g} is not a positive normal double for "
                         f"epsilon = {epsilon:g}, allocation = {tuple(w.tolist())}, n_numerical = {n_numerical}, "
                         f"n_categorical = {n_categorical}")
    return value


def guarantee(method: type[MomentMechanism] | str, epsilon: float, n_numerical: int, n_categorical: int, *,
              allocation: tuple[float, float] = (2.0, 1.0), calibration: str = "theorem2",
              count_sensitivity: float = 2.0) -> Guarantee:
    """The guarantee of a fit by :func:`fit_statistics` with these options.

    Parameters
    ----------
    method : type or str
        A :class:`~lib.mechanisms.bounded_moments.MomentMechanism` class or its
        registry name (:func:`mechanism_class`).
    epsilon, n_numerical, n_categorical, allocation
        As :func:`budget`.
    calibration : {"theorem2", "printed", "tight"}
        ``"printed"`` also sets the count sensitivity to 1.
    count_sensitivity : float
        The :math:`\\ell_1`-sensitivity the tables' Laplace noise is scaled to.

    Returns
    -------
    LabelKeptDP or lib.mechanisms.protocol.NotPrivate
        :class:`LabelKeptDP` for a private method (see its ``epsilon`` for the
        accounting); it refuses to state an :math:`\\varepsilon` under the
        book's replace-one relation.

    Notes
    -----
    The sum over the releases between label-kept neighbours: :math:`J_{cat}`
    tables at :math:`2 w_{cat}\\varepsilon'/s` each (sensitivity ``s``), and
    :math:`J_{num}` times the guarantee of one mechanism object of budget
    :math:`w_{num}\\varepsilon'` (its ``guarantee.epsilon``); the class counts
    do not change between such neighbours.

    Examples
    --------
    >>> from lib.mechanisms.bounded_moments import ZafaraniClifton
    >>> round(guarantee(ZafaraniClifton, 1.0, 5, 8).epsilon, 6)   # Adult: the class counts' 1/19 is not spent
    0.947368
    >>> round(guarantee("zc", 1.0, 5, 8, calibration="printed").epsilon, 3)   # more than the budget
    1.223
    """
    cls = mechanism_class(method)
    if calibration not in ss.RULES:
        raise ValueError(f"calibration must be one of {ss.RULES}; got {calibration!r}")
    eps1 = budget(epsilon, n_numerical, n_categorical, allocation)
    if not cls.private:
        return NotPrivate()
    w = _allocation(allocation)
    printed = calibration == "printed"
    sens = 1.0 if printed else validation.scalar(validation.positive(count_sensitivity, "count_sensitivity"),
                                                "count_sensitivity")
    tables = n_categorical * 2.0 * float(w[1]) * eps1 / sens    # Laplace scale sens / (w_cat eps'), change 2
    numerical = cls(float(w[0]) * eps1, calibration=calibration).guarantee.epsilon
    return LabelKeptDP(float(tables + n_numerical * numerical))


def _fields(value, name, keys, source):
    """``value`` if it is a dict holding ``keys``; else a TypeError/ValueError saying what it must be."""
    if not isinstance(value, dict):
        raise validation.ArgumentTypeError(f"{name} must be the dict returned by {source}; got {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{name} must be the dict returned by {source}; it lacks {missing}")
    return value


def fit_statistics(X_cat: ArrayLike, X_num: ArrayLike, y: ArrayLike, n_values: ArrayLike, n_classes: int,
                   bounds: ArrayLike, *, method: type[MomentMechanism] | str = "zc", epsilon: float = 1.0,
                   allocation: tuple[float, float] = (2.0, 1.0),
                   calibration: str = "theorem2", count_sensitivity: float = 2.0, trim: float | None = None,
                   resolution: int | None = 4096, max_distance: int | None = None, var_smoothing: float = 1e-9,
                   cache: dict | None = None) -> dict:
    """Exact statistics and the scale of the noise each one gets (the data-dependent part of a fit).

    Parameters
    ----------
    X_cat : array_like of int, shape (n, J_cat)
        Category codes, column ``j`` in ``[0, n_values[j] - 1]`` (public domains).
    X_num : array_like of float, shape (n, J_num)
        Raw numerical values, finite; clipped into ``bounds``.
    y : array_like of int, shape (n,)
        Class codes in ``[0, n_classes - 1]``, at least one row.
    n_values : array_like of int, shape (J_cat,)
    n_classes : int
        At least 2.
    bounds : array_like, shape (J_num, 2)
        Public ranges (:mod:`lib.experiments.public_bounds`), ``lower < upper``.
    method : type or str
        The mechanism of the numerical attributes: a
        :class:`~lib.mechanisms.bounded_moments.MomentMechanism` class or its
        registry name (:func:`mechanism_class`).
    epsilon : float
        Total budget :math:`\\varepsilon` (ignored by a non-private method); what it
        buys is ``out["guarantee"]`` (:func:`guarantee`): :math:`\\varepsilon`-DP
        for neighbours that keep every label, nothing under replace-one.
    allocation : (float, float)
        Budget weights (numerical, categorical); Algorithm 1 is (2, 1).
    calibration : {"theorem2", "printed", "tight"}
        Cauchy calibration (:func:`lib.mechanisms.smooth_sensitivity.calibrate`); ``"printed"``
        also uses Algorithm 1's count sensitivity 1 and Cauchy class counts.
    count_sensitivity : float
        :math:`\\ell_1`-sensitivity of a count table (2 for replace-one).
    trim : float, optional
        Share trimmed at each end, in :math:`[0, 0.5)`: 0 for ``"zc"`` (Algorithm 1 leaves
        :math:`m` open), 0.05 for ``"bun_steinke"`` by default.
    resolution, max_distance
        Passed to :func:`lib.mechanisms.smooth_sensitivity.smooth_sensitivity_std`.
    var_smoothing : float
        Non-private only: scikit-learn's additive variance, a share of the
        largest attribute variance; :math:`\\ge 0`.
    cache : dict, optional
        Sensitivity profiles, filled in place and reused by later calls
        (another epsilon). Entries are keyed by a fingerprint of the sample,
        bounds and options they were computed for
        (:func:`lib.mechanisms.smooth_sensitivity.fingerprint`), so a cache shared with
        other data or options is never misapplied; an entry that is not a
        valid profile raises.

    Returns
    -------
    dict
        ``class``/``tables``/``mu``/``sd`` (or ``first``/``second``) values, their noise
        scales and distributions, and ``guarantee``; input of :func:`draw`.
    """
    return _fit(X_cat, X_num, y, n_values, n_classes, bounds, [epsilon], method=method, allocation=allocation,
                calibration=calibration, count_sensitivity=count_sensitivity, trim=trim, resolution=resolution,
                max_distance=max_distance, var_smoothing=var_smoothing, cache=cache)[0]


def fit_statistics_grid(X_cat: ArrayLike, X_num: ArrayLike, y: ArrayLike, n_values: ArrayLike, n_classes: int,
                        bounds: ArrayLike, epsilons: ArrayLike, *, method: type[MomentMechanism] | str = "zc",
                        allocation: tuple[float, float] = (2.0, 1.0), calibration: str = "theorem2",
                        count_sensitivity: float = 2.0, trim: float | None = None, resolution: int | None = 4096,
                        max_distance: int | None = None, var_smoothing: float = 1e-9,
                        cache: dict | None = None) -> list[dict]:
    """:func:`fit_statistics` for each total budget of ``epsilons``, the data checked, counted and sorted once.

    Entry ``i`` equals ``fit_statistics(..., epsilon=epsilons[i])`` with the
    same options, value by value (``tests/test_smooth_sensitivity.py`` checks
    it): the validation of the rows, the count tables and the sorting of each
    class's numerical columns do not depend on the budget and are done once;
    the smooth sensitivities are shared through ``cache`` as between separate
    calls.

    Parameters
    ----------
    X_cat, X_num, y, n_values, n_classes, bounds
        As :func:`fit_statistics`.
    epsilons : array_like of float, shape (E,)
        Total budgets, at least one (each checked as ``epsilon`` of
        :func:`fit_statistics`; ignored by a non-private method).
    method, allocation, calibration, count_sensitivity, trim, resolution, max_distance, var_smoothing, cache
        As :func:`fit_statistics`.

    Returns
    -------
    list of dict
        One :func:`fit_statistics` result per budget, in the order of ``epsilons``.

    Raises
    ------
    ValueError
        As :func:`fit_statistics`, or if ``epsilons`` is not a non-empty 1-D array of numbers.
    """
    try:
        eps = np.asarray(epsilons, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"epsilons must be a 1-D array of budgets; got {epsilons!r:.60}") from None
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-D array of budgets; got shape {eps.shape}")
    return _fit(X_cat, X_num, y, n_values, n_classes, bounds, eps.tolist(), method=method, allocation=allocation,
                calibration=calibration, count_sensitivity=count_sensitivity, trim=trim, resolution=resolution,
                max_distance=max_distance, var_smoothing=var_smoothing, cache=cache)


def _fit(X_cat, X_num, y, n_values, n_classes, bounds, epsilons, *, method, allocation, calibration,
         count_sensitivity, trim, resolution, max_distance, var_smoothing, cache):
    """:func:`fit_statistics` for each budget of the list ``epsilons`` (the checks in the same order)."""
    cls = mechanism_class(method)
    if calibration not in ss.RULES:
        raise ValueError(f"calibration must be one of {ss.RULES}; got {calibration!r}")
    if cache is not None and not isinstance(cache, dict):
        raise validation.ArgumentTypeError(f"cache must be a dict or None; got {type(cache).__name__}")
    X_cat, X_num, y, n_values, n_classes, bounds = _check_data(X_cat, X_num, y, n_values, n_classes, bounds)
    if trim is None:
        trim = cls.default_trim
    trim = float(validation.scalar(validation.in_range(trim, "trim", 0.0, 0.5, open_low=False), "trim"))
    resolution = None if resolution is None else validation.integer(resolution, "resolution", 1)
    max_distance = None if max_distance is None else validation.integer(max_distance, "max_distance", 0)
    var_smoothing = validation.scalar(validation.nonnegative(var_smoothing, "var_smoothing"), "var_smoothing")
    J_num, J_cat = X_num.shape[1], X_cat.shape[1]
    class_counts = np.bincount(y, minlength=n_classes).astype(float)
    tables = [np.bincount(y * k + X_cat[:, j], minlength=n_classes * k).reshape(n_classes, k).astype(float)
              for j, k in enumerate(n_values)]

    def common():     # the budget-free part, fresh arrays for each result
        return {"method": cls.name, "bounds": bounds.copy(), "n_values": n_values.copy(), "n_classes": n_classes,
                "class": class_counts.copy(), "tables": [t.copy() for t in tables]}

    if not cls.private:
        mu = np.stack([X_num[y == c].mean(axis=0) if np.any(y == c) else bounds.mean(axis=1)
                       for c in range(n_classes)])
        var = np.stack([X_num[y == c].var(axis=0) if np.any(y == c) else np.zeros(J_num)
                        for c in range(n_classes)])
        var = var + var_smoothing * (X_num.var(axis=0).max() if J_num else 0.0)
        sd = np.sqrt(var)
        return [dict(common(), mechanism=cls(), mu=mu.copy(), sd=sd.copy(), scales=None, guarantee=NotPrivate())
                for _ in epsilons]
    allocation = tuple(_allocation(allocation).tolist())
    printed = calibration == "printed"
    cache = {} if cache is None else cache
    # each class's numerical columns, sorted once for every budget
    columns = [[np.sort(xc[:, j]) for j in range(J_num)] for xc in (X_num[y == c] for c in range(n_classes))]
    results = []
    for epsilon in epsilons:
        eps1 = budget(epsilon, J_num, J_cat, allocation)
        sens = 1.0 if printed else validation.scalar(validation.positive(count_sensitivity, "count_sensitivity"),
                                                    "count_sensitivity")
        mech = cls(allocation[0] * eps1, calibration=calibration, trim=trim, resolution=resolution,
                   max_distance=max_distance)
        first = np.zeros((n_classes, J_num, 2))
        second = np.zeros((n_classes, J_num, 2))
        for c in range(n_classes):
            for j in range(J_num):
                first[c, j], second[c, j] = mech.statistics(columns[c][j], bounds[j, 0], bounds[j, 1], cache)
        num_dist = mech.noise
        results.append(dict(common(), mechanism=mech, scales={
            "class": (("cauchy", np.sqrt(2.0) / eps1) if printed else ("laplace", sens / eps1)),
            "tables": ("laplace", sens / (allocation[1] * eps1)),
            "first": (num_dist, first[..., 1]), "second": (num_dist, second[..., 1])},
            first=first[..., 0], second=second[..., 0], epsilon_prime=eps1,
            guarantee=guarantee(method, epsilon, J_num, J_cat, allocation=allocation, calibration=calibration,
                                count_sensitivity=sens)))
    return results


_noise = draw_noise


def draw(stats: dict, n_draws: int = 1, rng: SeedLike = None, *, alpha: float = 1.0, sd_floor: float = 1e-3) -> dict:
    """Released parameters of ``n_draws`` independent private fits (or the non-private fit repeated).

    Parameters
    ----------
    stats : dict
        Returned by :func:`fit_statistics`.
    n_draws : int
        At least 1.
    rng : numpy.random.Generator, int or None
    alpha : float
        Additive smoothing of the noisy counts, in :math:`(0, \\infty)`.
    sd_floor : float
        Released deviations are clipped into
        :math:`[\\text{sd\\_floor}\\,(U-L), (U-L)/2]`; in :math:`(0, 0.5]`.

    Returns
    -------
    dict
        ``log_prior`` (B, C), ``log_tables`` list of (B, C, n_j), ``mu`` and
        ``sd`` (B, C, J_num), the public ``bounds`` and the ``guarantee`` of
        each draw (:func:`guarantee`; one fit each).
    """
    _fields(stats, "stats", ("method", "n_classes", "n_values", "bounds", "class", "tables", "scales"),
            "fit_statistics")
    rng = validation.generator(rng)
    n_draws = validation.integer(n_draws, "n_draws")
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    sd_floor = validation.scalar(validation.in_range(sd_floor, "sd_floor", 0.0, 0.5, open_low=True,
                                                   open_high=False), "sd_floor")
    C = stats["n_classes"]
    validation.cells(n_draws * (C * (1 + int(np.sum(stats["n_values"])) + 2 * stats["bounds"].shape[0])),
                    "the released parameters (n_draws times the model's size)")
    lo, hi = stats["bounds"][:, 0], stats["bounds"][:, 1]
    sc = stats["scales"]
    B = (n_draws,)
    cls = np.broadcast_to(stats["class"], B + (C,)).copy()
    tables = [np.broadcast_to(t, B + t.shape).copy() for t in stats["tables"]]
    if sc is None:
        mu = np.broadcast_to(stats["mu"], B + stats["mu"].shape).copy()
        sd = np.broadcast_to(stats["sd"], B + stats["sd"].shape).copy()
        prior = cls / cls.sum(axis=-1, keepdims=True)
    else:
        cls += _noise(rng, *sc["class"], cls.shape)
        for t in tables:
            t += _noise(rng, *sc["tables"], t.shape)
        first = stats["first"] + _noise(rng, sc["first"][0], sc["first"][1], B + stats["first"].shape)
        second = stats["second"] + _noise(rng, sc["second"][0], sc["second"][1], B + stats["second"].shape)
        mech = stats.get("mechanism") or mechanism_class(stats["method"])
        mu, sd = mech.moments(first, second, lo, hi, sd_floor=sd_floor)
        prior = np.maximum(cls, 0.0) + 1.0
        prior /= prior.sum(axis=-1, keepdims=True)
    log_tables = []
    for t in tables:
        t = np.maximum(t, 0.0) + alpha
        log_tables.append(np.log(t / t.sum(axis=-1, keepdims=True)))
    return {"log_prior": np.log(prior), "log_tables": log_tables, "mu": mu, "sd": sd, "bounds": stats["bounds"],
            "guarantee": stats.get("guarantee")}


def log_proba(params: dict, X_cat: ArrayLike, X_num: ArrayLike, likelihood: str = "gaussian") -> np.ndarray:
    """Log posterior class probabilities, shape (B, n, C), of a batch of released models.

    ``likelihood="truncnorm"`` uses the normal truncated to the public range,
    :math:`\\phi((x-\\mu)/\\sigma) / (\\sigma[\\Phi((b-\\mu)/\\sigma) - \\Phi((a-\\mu)/\\sigma)])`.

    Parameters
    ----------
    params : dict
        Returned by :func:`draw`.
    X_cat : array_like of int, shape (n, J_cat)
        Codes in the released tables' domains (column ``j`` in ``[0, n_j - 1]``).
    X_num : array_like of float, shape (n, J_num)
        Finite values, one column per released attribute (clipped into ``bounds``).
    likelihood : {"gaussian", "truncnorm"}

    Returns
    -------
    ndarray, shape (B, n, C)
    """
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}; got {likelihood!r}")
    _fields(params, "params", ("log_prior", "log_tables", "mu", "sd", "bounds"), "draw")
    bounds = params["bounds"]
    X_num = np.asarray(X_num)
    n = X_num.shape[0] if X_num.ndim == 2 else -1
    X_num = _matrix(X_num, "X_num", n)
    if X_num.shape[1] != bounds.shape[0]:
        raise ValueError(f"X_num must have {bounds.shape[0]} columns, one per released numerical attribute; "
                         f"got shape {X_num.shape}")
    X_cat = _matrix(X_cat, "X_cat", n, codes_for=[lt.shape[-1] for lt in params["log_tables"]], rows="as X_num")
    X_num = np.clip(X_num, bounds[:, 0], bounds[:, 1])
    # scores are built as (B, C, rows), rows last, so that every elementwise loop runs along the rows (in
    # (B, n, C) numpy's inner loops would be C long), a block of rows at a time so that the arrays of a block
    # stay in the processor's cache through the 7 passes per attribute; the operations and their order are
    # those of the plain formula, row by row, so the doubles are the same. The result is (B, n, C).
    B, C = params["log_prior"].shape
    n = X_num.shape[0]
    out = np.empty((B, n, C))
    step = max(1, _BLOCK_VALUES // (B * C))
    mu, sd = params["mu"], params["sd"]                      # (B, C, J)
    log_sd = np.log(sd)
    for lo in range(0, n, step):
        out[:, lo:lo + step, :] = _log_normalise(_scores(params, X_cat[lo:lo + step], X_num[lo:lo + step],
                                                         likelihood, mu, sd, log_sd))
    return out


#: Values per array of one block of rows in :func:`log_proba` (128 KiB of doubles).
_BLOCK_VALUES = 2**14


def _scores(params, X_cat, X_num, likelihood, mu, sd, log_sd):
    """The unnormalised log posteriors of the rows ``X_cat``, ``X_num`` (checked and clipped), shape (B, C, rows)."""
    bounds = params["bounds"]
    B, C = params["log_prior"].shape
    scores = np.empty((B, C, X_num.shape[0]))
    scores[...] = params["log_prior"][:, :, None]
    for j, lt in enumerate(params["log_tables"]):
        scores += np.take(lt, X_cat[:, j], axis=2)
    half_log_2pi = 0.5 * np.log(2 * np.pi)
    z, ll = np.empty_like(scores), np.empty_like(scores)
    for j in range(X_num.shape[1]):
        m, s = mu[:, :, j, None], sd[:, :, j, None]          # (B, C, 1)
        # ll = -0.5 * z * z - log(s) - 0.5 log(2 pi), z = (x - m) / s, operation by operation in place
        np.subtract(X_num[:, j], m, out=z)
        z /= s
        np.multiply(-0.5, z, out=ll)
        ll *= z
        ll -= log_sd[:, :, j, None]
        ll -= half_log_2pi
        if likelihood == "truncnorm":
            hi = log_ndtr((bounds[j, 1] - m) / s)
            lo = log_ndtr((bounds[j, 0] - m) / s)
            ll -= hi + np.log1p(-np.exp(np.minimum(lo - hi, -1e-300)))
        scores += ll
    return scores


def _log_normalise(scores):
    """``a - scipy.special.logsumexp(a, axis=-1, keepdims=True)`` for ``a = scores.transpose(0, 2, 1)``.

    ``scores`` has shape (B, C, n) (classes before rows); the result is the
    (B, n, C) array (a transposed view) of log posteriors, the same doubles as SciPy's (1.15 and
    later) steps on the contiguous (B, n, C) array: per row the maxima
    :math:`a_{max}` and their number :math:`m` are taken out,
    :math:`s = \\sum_{a_i < a_{max}} e^{a_i - a_{max}} / m`, and the log
    normaliser is :math:`\\log1p(s) + \\log m + a_{max}`, or
    :math:`\\log \\sum e^{a_i}` where that is not finite. The elementwise steps
    run on the (B, C, n) layout (the same doubles in any layout); the sums run
    over the class axis in the order of numpy's sum over a contiguous
    (B, n, C) array, which SciPy's are: from left to right for fewer than 8
    classes, on a contiguous copy otherwise. ``tests/test_smooth_sensitivity.py`` compares it with SciPy value by
    value (ties, infinities and NaN included).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a_max = np.max(scores, axis=1, keepdims=True)                  # (B, 1, n)
        mask = scores == a_max
        m = np.sum(mask, axis=1, keepdims=True, dtype=float)           # counts: exact in any order
        e = np.exp(np.where(mask, -np.inf, scores) - a_max)
        if e.shape[1] < 8:
            # numpy sums fewer than 8 contiguous values from left to right (the test checks it): so do we,
            # along the rows, without the copy
            s = e[:, :1].copy()
            for c in range(1, e.shape[1]):
                s += e[:, c:c + 1]
        else:
            s = np.ascontiguousarray(e.transpose(0, 2, 1)).sum(axis=-1)[:, None, :]
        s = np.where(s == 0, s, s / m)
        lse = np.log1p(s) + np.log(m) + a_max
    bad = np.nonzero(~np.isfinite(lse[:, 0, :]))
    if bad[0].size:
        rows = np.ascontiguousarray(scores.transpose(0, 2, 1)[bad])    # (k, C), as SciPy's fallback sums them
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lse[bad[0], 0, bad[1]] = np.log(np.sum(np.exp(rows), axis=-1))
    return (scores - lse).transpose(0, 2, 1)


from lib.models.estimator import ClassifierProtocol, not_fitted  # noqa: E402  (the estimator protocol of MixedNaiveBayes)


class MixedNaiveBayes(ClassifierProtocol):
    """Scikit-learn-style estimator over :func:`fit_statistics`, :func:`draw` and :func:`log_proba`.

    ``fit(X, y)`` takes one 2-D array whose columns ``categorical`` (a boolean
    mask) hold integer codes and whose other columns hold raw numbers.

    ``method`` is the mechanism of the numerical attributes: a
    :class:`~lib.mechanisms.bounded_moments.MomentMechanism` class (e.g.
    :class:`~lib.mechanisms.bounded_moments.ZafaraniClifton`, the default) or
    its registry name. A private method needs the public domain:
    ``n_classes``, ``bounds`` and, when there are categorical columns,
    ``n_values``. A domain read off the training data would be a function of
    the private data, outside the guarantee; only a non-private method
    (:class:`~lib.mechanisms.bounded_moments.SampleMoments`) infers it.

    ``random_state`` (an integer seed, a ``numpy.random.Generator``,
    ``SeedSequence``, ``BitGenerator`` or None), as in
    :class:`lib.models.naive_bayes.PrivateNaiveBayes`; ``rng`` is its older name
    (give one of them). :meth:`fit` builds its generator from it and never
    changes it (scikit-learn's convention). A seed is a secret, like a key: a
    fitted model that is pickled or deep-copied carries neither, and ``repr``
    shows neither. The fitted model keeps only the released parameters
    ``params_`` (with the public ``bounds``), ``classes_`` and
    ``n_features_in_``: no exact statistic, no noise scale (the smooth
    sensitivities depend on the data) and no generator from which the noise
    could be replayed.

    Examples
    --------
    >>> X = np.array([[0, 1.0], [0, 2.0], [1, 8.0], [1, 9.0]])
    >>> from lib.mechanisms.bounded_moments import SampleMoments
    >>> nb = MixedNaiveBayes(SampleMoments, categorical=[True, False], n_values=[2],
    ...                      bounds=[[0.0, 10.0]]).fit(X, [0, 0, 1, 1])
    >>> nb.predict([[0, 1.5], [1, 8.5]]).tolist()
    [0, 1]
    """

    def __init__(self, method: type[MomentMechanism] | str = ZafaraniClifton, epsilon: float = 1.0, *,
                 categorical: Sequence[bool] | None = None, n_values: ArrayLike | None = None,
                 bounds: ArrayLike | None = None, n_classes: int | None = None,
                 allocation: tuple[float, float] = (2.0, 1.0), calibration: str = "theorem2",
                 likelihood: str = "gaussian", trim: float | None = None, resolution: int | None = 4096,
                 max_distance: int | None = None, random_state: SeedLike = None, rng: SeedLike = None) -> None:
        self.method, self.epsilon, self.categorical = method, epsilon, categorical
        self.n_values, self.bounds, self.n_classes = n_values, bounds, n_classes
        self.allocation, self.calibration, self.likelihood, self.trim = allocation, calibration, likelihood, trim
        self.resolution, self.max_distance, self.random_state, self.rng = resolution, max_distance, random_state, rng

    def __getstate__(self):
        # a fitted model handed on carries no seed and no generator (see the class docstring)
        state = dict(self.__dict__)
        if "params_" in state:
            state["random_state"] = state["rng"] = None
        return state

    def _source(self):
        """The noise source: ``random_state``, or ``rng`` (its older name); not both."""
        if self.random_state is not None and self.rng is not None:
            raise ValueError("give random_state or rng (its older name), not both")
        return self.rng if self.random_state is None else self.random_state

    def _split(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array of rows and columns; got {X.ndim} dimension(s)")
        if self.categorical is None:
            return X[:, :0].astype(np.int64), X
        mask = np.asarray(self.categorical)
        if mask.ndim != 1 or mask.dtype != bool:
            raise ValueError("categorical must be a 1-D sequence of booleans, one per column of X")
        if mask.shape[0] != X.shape[1]:
            raise ValueError(f"categorical must have one entry per column of X: {X.shape[1]} columns, "
                             f"{mask.shape[0]} entries")
        return X[:, mask].astype(np.int64), X[:, ~mask]

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Compute the statistics, release the parameters once, and keep only the release.

        Raises
        ------
        ValueError
            If a private method is not given ``n_classes``, ``bounds`` or (with
            categorical columns) ``n_values``.
        """
        cls = mechanism_class(self.method)
        validation.generator(self._source())   # a bad seed is refused before anything is computed
        y = np.asarray(y, dtype=np.int64)
        X_cat, X_num = self._split(X)
        if cls.private:
            missing = [name for name, v in (("n_classes", self.n_classes), ("bounds", self.bounds),
                                            ("n_values", self.n_values if X_cat.shape[1] else ()))
                       if v is None]
            if missing:
                raise ValueError(
                    f"{' and '.join(missing)} must be given (the public domain) for the private method "
                    f"{cls.name!r}: a domain inferred from the training data is a function of the "
                    "private data and is not covered by the guarantee")
        n_classes = int(y.max()) + 1 if self.n_classes is None else self.n_classes
        n_values = (X_cat.max(axis=0) + 1 if self.n_values is None else self.n_values)
        bounds = (np.column_stack([X_num.min(axis=0), X_num.max(axis=0)]) if self.bounds is None else self.bounds)
        # exact statistics and data-dependent noise scales stay local to fit; the seed is left as given
        stats = fit_statistics(X_cat, X_num, y, n_values, max(n_classes, 2), bounds, method=cls,
                               epsilon=self.epsilon, allocation=self.allocation, calibration=self.calibration,
                               trim=self.trim, resolution=self.resolution, max_distance=self.max_distance)
        # a generator built afresh from the seed: the parameter is left as given
        self.params_ = draw(stats, 1, validation.generator(self._source()))
        self.classes_ = np.arange(stats["n_classes"])
        self.n_features_in_ = int(X_cat.shape[1] + X_num.shape[1])
        return self

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        if not hasattr(self, "params_"):
            raise not_fitted("MixedNaiveBayes")
        X_cat, X_num = self._split(X)
        return log_proba(self.params_, X_cat, X_num, self.likelihood)[0]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: ArrayLike) -> np.ndarray:
        return np.argmax(self.predict_log_proba(X), axis=-1)
