"""OpenDP measurements of lib's mechanisms, under Renyi DP with replace-one neighbours.

:func:`make_histogram_measurement` wraps a mechanism object of :mod:`lib` as an
OpenDP measurement (``make_user_measurement``): its input is a dataset of
category codes, its function counts them into a histogram and releases it, its
output measure is ``renyi_divergence()`` and its input metric
``change_one_distance()``, replace-one, the relation of the book's guarantees.
The privacy map returns the mechanism's Renyi curve (for the Dirichlet
mechanism its exact worst case,
:class:`lib.mechanisms.dirichlet.curve.DirichletCurve`), so OpenDP's
combinators (``make_composition``, ``make_adaptive_composition``) add curves
order by order. :func:`opendp_epsilon` converts the curve of any such
measurement to :math:`(\\hat\\varepsilon, \\delta)` with
:class:`lib.privacy.accountant.Accountant`, since OpenDP has no conversion from
its Renyi measure. OpenDP is imported when a function is called (the
``interop`` extra).

Notes
-----
Three things an OpenDP bridge must get right:

* replace-one is ``change_one_distance``; a histogram's :math:`\\ell_1` distance
  (``l1_distance``) or the symmetric distance of datasets describe
  add/remove-one, a different guarantee;
* ``make_user_measurement`` needs OpenDP's ``"contrib"`` and
  ``"honest-but-curious"`` features; the functions here enable them (OpenDP's
  global settings) because the measurement's map is the curve this package
  proves;
* OpenDP's types come from Python values: numpy integers and floats are cast
  to ``int`` and ``float`` before they reach it (:func:`records` for a
  dataset; the curve's values inside this module).

Speed: OpenDP evaluates a composition's curve by calling every release's map
at every order asked for, one call into Python per release and order. Each
release's curve is therefore evaluated once per order and kept
(:data:`CURVE_CACHE`, keyed by the release's guarantee, so that many releases
of one mechanism share one entry; a miss evaluates the curve on the
accountant's whole grid at once), and :func:`opendp_epsilon` asks OpenDP at a
handful of orders instead of all 1,401: where the composition's curve is
predicted from the releases of this module it asks at the predicted best order
and its neighbours (any order gives a valid :math:`\\hat\\varepsilon`; the
prediction only chooses where to ask, and a prediction that OpenDP's values
contradict falls back to a search of the grid). 300 releases compose in well
under a second where they took minutes.

Examples
--------
>>> import numpy as np
>>> import opendp.prelude as dp
>>> from lib import DirichletMechanism
>>> from lib.interop.opendp import make_histogram_measurement, opendp_epsilon, records
>>> m = make_histogram_measurement(DirichletMechanism(0.5, 4.0), 3, rng=np.random.default_rng(0))
>>> both = dp.c.make_composition([m, m])
>>> round(opendp_epsilon(both, 1e-5).epsilon, 2)
2.76
>>> len(both(records(np.array([0, 1, 1, 2]))))
2
"""

from __future__ import annotations

import numpy as np

import math
from collections import OrderedDict
from typing import Any, Callable

from lib import validation
from lib.privacy.accountant import DEFAULT_ORDERS, Accountant, Spent, renyi_curve
from lib.privacy.guarantees import Guarantee, RenyiDP

__all__ = ["make_histogram_measurement", "make_renyi_measurement", "opendp_epsilon", "records"]

#: Each release's curve, order by order: ``{guarantee: {order: value}}`` for hashable guarantees (a
#: release's curve is a function of its guarantee), at most :data:`CACHE_SIZE` guarantees, least
#: recently used first out.
CURVE_CACHE: "OrderedDict[Any, dict[float, float]]" = OrderedDict()
CACHE_SIZE = 256
#: :func:`opendp_epsilon` asks OpenDP at every ``COARSE_STEP``-th order of the grid, then at every
#: order between the neighbours of the best of those.
COARSE_STEP = 24
#: The orders a miss of the cache fills at once (the grid :func:`opendp_epsilon` is accounting at).
_grid_hint = [DEFAULT_ORDERS]
#: The cache entries whose map OpenDP called, in order, while :func:`opendp_epsilon` listens (else None).
_called: list = [None]


def _values(store: dict, curve: Callable, alpha: float) -> float:
    """``curve(alpha)`` from ``store``; a miss evaluates the curve on the current grid and ``alpha`` at once."""
    value = store.get(alpha)
    if value is None:
        orders = np.union1d(_grid_hint[0], [alpha])
        orders = orders[np.array([o not in store for o in orders.tolist()])]
        values = np.asarray(curve(orders), float)
        store.update(zip(orders.tolist(), values.tolist()))
        value = store[alpha]
    return value


def _store_for(guarantee: Guarantee) -> dict:
    """The cache entry of ``guarantee`` (a new dict for an unhashable one)."""
    try:
        store = CURVE_CACHE.get(guarantee)
    except TypeError:
        return {}
    if store is None:
        store = CURVE_CACHE[guarantee] = {}
        while len(CURVE_CACHE) > CACHE_SIZE:
            CURVE_CACHE.popitem(last=False)
    else:
        CURVE_CACHE.move_to_end(guarantee)
    return store


def _prelude():
    """``opendp.prelude`` with the features a user measurement needs."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - the optional extra is missing
        raise ImportError("lib.interop.opendp needs OpenDP: pip install \"dirichlet-mechanism-book[interop]\" "
                          "(or opendp)") from exc
    dp.enable_features("contrib", "honest-but-curious")
    return dp


def make_renyi_measurement(input_domain: Any, function: Callable, guarantee: Guarantee) -> Any:
    """An OpenDP measurement under ``renyi_divergence()`` and ``change_one_distance()`` from a lib guarantee.

    Parameters
    ----------
    input_domain : opendp.mod.Domain
        The datasets (a vector domain: ``change_one_distance`` needs one).
    function : callable
        The release, dataset to output; it must meet ``guarantee`` under
        replace-one neighbours.
    guarantee : lib.privacy.guarantees.Guarantee
        With a Renyi curve (:func:`lib.privacy.accountant.renyi_curve`).

    Returns
    -------
    opendp.mod.Measurement
        Its map takes the number of changed records :math:`k` and returns the
        curve for :math:`k \\le 1`.

    Raises
    ------
    ValueError
        If the guarantee has no Renyi curve. The map raises for :math:`k > 1`
        (group privacy of Renyi DP is not this curve) and for a negative or
        non-integer :math:`k`.
    """
    dp = _prelude()
    curve = renyi_curve(guarantee)
    store = _store_for(guarantee)

    def at(alpha):
        if _called[0] is not None:
            _called[0].append(store)
        return _values(store, curve, float(alpha))

    def privacy_map(d_in):
        k = int(d_in)
        if k != d_in or k < 0:
            raise ValueError(f"d_in must be a whole number of changed records; got {d_in!r}")
        if k > 1:
            raise ValueError(f"the curve covers one changed record; got d_in = {k} (group privacy is not "
                             "accounted for)")
        return at if k == 1 else (lambda alpha: 0.0)

    return dp.m.make_user_measurement(input_domain, dp.change_one_distance(), dp.renyi_divergence(),
                                      function, privacy_map)


def make_histogram_measurement(mechanism: Any, d: int, *, rng: Any = None) -> Any:
    """One release of a histogram of category codes by a lib mechanism, as an OpenDP measurement.

    Parameters
    ----------
    mechanism : lib.mechanisms.protocol.Mechanism
        A calibrated mechanism object whose ``guarantee`` has a Renyi curve
        (replace-one histogram sensitivities, the book's defaults).
    d : int
        Number of categories, at least 2; the dataset holds codes in
        :math:`\\{0, \\dots, d - 1\\}`.
    rng : numpy.random.Generator or int or None
        Source of randomness of the releases.

    Returns
    -------
    opendp.mod.Measurement
        Input: a list of integer codes (``vector_domain(atom_domain(T=int))``);
        output: the released point of the simplex, a list of ``d`` floats.

    Raises
    ------
    ValueError
        If ``d`` is not an integer of at least 2 or the mechanism states no
        guarantee with a Renyi curve; the measurement raises on a code outside
        :math:`[0, d)`.
    """
    d = validation.integer(d, "d", 2)
    generator = validation.generator(rng)
    guarantee = getattr(mechanism, "guarantee", None)
    if not isinstance(guarantee, Guarantee):
        raise ValueError(f"{mechanism!r} states no guarantee; it cannot be an OpenDP measurement")
    dp = _prelude()

    def function(codes):
        codes = np.asarray(records(codes), dtype=np.int64)
        if codes.size and (codes.min() < 0 or codes.max() >= d):
            raise ValueError(f"codes must be in [0, {d}); got values from {codes.min()} to {codes.max()}")
        counts = np.bincount(codes, minlength=d).astype(float)
        return [float(v) for v in mechanism.release(counts, rng=generator)]

    return make_renyi_measurement(dp.vector_domain(dp.atom_domain(T=int)), function, guarantee)


def records(codes: Any, d: int | None = None) -> list[int]:
    """Category codes as the list of Python ``int`` an OpenDP measurement of this module takes.

    OpenDP infers its types from Python values and refuses numpy integers
    (``np.int64`` is read as ``i64``, not the ``i32`` of the measurement's
    domain); this casts them, after checking they are whole numbers.

    Parameters
    ----------
    codes : array_like of int, shape (n,)
        The dataset's category codes.
    d : int, optional
        Number of categories; when given, every code must be in :math:`[0, d)`.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        If a code is not a whole number, or outside :math:`[0, d)`, or
        ``codes`` is not 1-D (a dataset is one column of codes).
    TypeError
        If ``codes`` holds booleans or strings (not codes).

    Examples
    --------
    >>> records(np.array([0, 2, 1], dtype=np.int64))
    [0, 2, 1]
    """
    raw = codes if isinstance(codes, np.ndarray) else np.asarray(codes, dtype=object)
    values = np.asarray(codes)
    if values.dtype.kind == "b" or (raw.dtype.kind == "O" and any(
            isinstance(v, (bool, np.bool_)) for v in raw.ravel().tolist())):
        raise validation.ArgumentTypeError("codes must be integer category codes; got booleans (give 0 and 1)")
    if values.dtype.kind not in "iufO":
        raise validation.ArgumentTypeError(f"codes must be integer category codes; got dtype {values.dtype}")
    if values.ndim != 1:
        raise ValueError(f"codes must be a 1-D sequence (one code per record); got shape {values.shape}")
    try:
        as_float = values.astype(float)
    except (TypeError, ValueError):
        raise validation.ArgumentTypeError("codes must be integer category codes") from None
    if not np.all(np.isfinite(as_float) & (as_float == np.round(as_float))):
        raise ValueError("codes must be whole numbers")
    out = [int(v) for v in values]
    if d is not None:
        d = validation.integer(d, "d", 2)
        if out and not 0 <= min(out) <= max(out) < d:
            raise ValueError(f"codes must be in [0, {d}); got values from {min(out)} to {max(out)}")
    return out


def opendp_epsilon(measurement: Any, delta: float, *, d_in: int = 1, orders: Any = None) -> Spent:
    """The :math:`(\\hat\\varepsilon, \\delta)` of an OpenDP measurement under ``renyi_divergence()``.

    The measurement's curve at ``d_in``, as OpenDP's map gives it, is
    converted by a :class:`lib.privacy.accountant.Accountant` (eq. (14) at the
    best order asked). Which orders are asked: the first of the grid, where
    OpenDP calls every release's map; when those releases are of this module
    their curves (cached on the whole grid) predict the composition's, and
    OpenDP is asked at the predicted upper end of the finite curve, the
    predicted best order and its neighbours, each value compared with the
    prediction. Otherwise (a release of another origin, a prediction OpenDP
    contradicts) the infinite upper end is found by bisection and the grid is
    searched coarse to fine (every :data:`COARSE_STEP`-th order, then every
    order around the best of those). The tests compare both with the whole grid.

    Parameters
    ----------
    measurement : opendp.mod.Measurement
        With output measure ``renyi_divergence()`` (a composition of
        measurements of this module, for instance).
    delta : float
        :math:`\\delta \\in (0, 1)`.
    d_in : int, default 1
        Input distance (changed records).
    orders : array_like, optional
        The accountant's orders (default :data:`lib.privacy.accountant.DEFAULT_ORDERS`).

    Returns
    -------
    lib.privacy.accountant.Spent

    Raises
    ------
    ValueError
        If the measurement's output measure is not the Renyi divergence, or
        OpenDP's map fails for another reason than an infinite level (its
        message is kept).
    """
    dp = _prelude()
    if measurement.output_measure != dp.renyi_divergence():
        raise ValueError(f"measurement must have output measure renyi_divergence(); got "
                         f"{measurement.output_measure}")
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    grid = Accountant(orders).orders
    composed = measurement.map(int(d_in))
    log_terms = np.log1p(-1 / grid) - np.log(delta * grid) / (grid - 1)
    values: dict[int, float] = {}

    def value(i):
        if i not in values:
            try:
                values[i] = float(composed(float(grid[i])))
            except dp.OpenDPException as exc:
                if getattr(exc, "variant", None) != "Overflow":
                    raise ValueError(f"OpenDP's privacy map failed at order {grid[i]:g}: "
                                     f"{getattr(exc, 'variant', '')}: {getattr(exc, 'message', exc)}") from exc
                values[i] = math.inf   # OpenDP refuses to add an infinite level
        return values[i]

    previous, _grid_hint[0] = _grid_hint[0], grid
    try:
        _called[0] = []
        value(0)
        stores, _called[0] = _called[0], None
        if not _predicted_search(stores, grid, log_terms, value):
            _grid_search(grid, log_terms, value)
    finally:
        _grid_hint[0], _called[0] = previous, None
    asked = sorted(i for i in values if math.isfinite(values[i]))
    if not asked:
        return Spent(math.inf, float(delta), math.nan)
    table = {float(grid[i]): values[i] for i in asked}

    def curve(lam):
        lam = np.asarray(lam, float)
        return np.array([table[v] for v in lam.ravel().tolist()]).reshape(lam.shape)

    first = float(grid[asked[0]])
    return Accountant(list(table)).add(RenyiDP(first, table[first], curve=curve)).epsilon(delta)


def _predicted_search(stores: list, grid: np.ndarray, log_terms: np.ndarray, value: Callable) -> bool:
    """Ask OpenDP where the releases' cached curves put the best order; False if OpenDP's values disagree."""
    if not stores:
        return False
    counts: dict[int, list] = {}
    for store in stores:
        counts.setdefault(id(store), [store, 0])[1] += 1
    predicted = np.zeros(grid.size)
    for store, k in counts.values():
        predicted += k * np.array([store[o] for o in grid.tolist()])

    def agrees(i):
        v = value(i)
        return v == predicted[i] or (math.isfinite(v) and math.isclose(v, predicted[i], rel_tol=1e-9, abs_tol=1e-12))

    if not agrees(0):   # a release whose map is not of this module: the prediction is incomplete
        return False
    finite = np.isfinite(predicted)
    hi = int(np.argmin(finite)) if not finite.all() else grid.size   # grid[hi:] infinite
    if hi == 0:
        return True
    if not agrees(hi - 1):
        return False
    best = int(np.argmin(predicted[:hi] + log_terms[:hi]))
    return all(agrees(i) for i in range(max(best - 2, 0), min(best + 3, hi)))


def _grid_search(grid: np.ndarray, log_terms: np.ndarray, value: Callable) -> None:
    """Ask OpenDP along the grid: the infinite upper end by bisection, then coarse to fine."""
    # A Renyi curve does not decrease with the order: it is infinite on an upper end of the grid
    lo, hi = -1, grid.size  # grid[lo] finite (or none), grid[hi:] infinite
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if math.isfinite(value(mid)) else (lo, mid)
    if hi == 0:
        return
    coarse = list(range(0, hi, COARSE_STEP)) + [hi - 1]
    best = min(coarse, key=lambda i: value(i) + log_terms[i])
    for i in range(max(best - COARSE_STEP, 0), min(best + COARSE_STEP + 1, hi)):
        value(i)
