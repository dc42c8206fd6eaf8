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

from lib import validation
from lib.privacy.accountant import Accountant, Spent, renyi_curve
from lib.privacy.guarantees import Guarantee, RenyiDP


def _prelude():
    """``opendp.prelude`` with the features a user measurement needs."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - the optional extra is missing
        raise ImportError("lib.interop.opendp needs OpenDP: pip install \"dirichlet-mechanism-book[interop]\" "
                          "(or opendp)") from exc
    dp.enable_features("contrib", "honest-but-curious")
    return dp


def make_renyi_measurement(input_domain, function, guarantee: Guarantee):
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

    def at(alpha):
        return float(curve(np.array([float(alpha)]))[0])

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


def make_histogram_measurement(mechanism, d, *, rng=None):
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
        codes = np.asarray([int(c) for c in codes], dtype=np.int64)
        if codes.size and (codes.min() < 0 or codes.max() >= d):
            raise ValueError(f"codes must be in [0, {d}); got values from {codes.min()} to {codes.max()}")
        counts = np.bincount(codes, minlength=d).astype(float)
        return [float(v) for v in mechanism.release(counts, rng=generator)]

    return make_renyi_measurement(dp.vector_domain(dp.atom_domain(T=int)), function, guarantee)


def records(codes, d=None) -> list:
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
        If a code is not a whole number, or outside :math:`[0, d)`.

    Examples
    --------
    >>> records(np.array([0, 2, 1], dtype=np.int64))
    [0, 2, 1]
    """
    values = np.asarray(codes).ravel()
    as_float = values.astype(float)
    if not np.all(np.isfinite(as_float) & (as_float == np.round(as_float))):
        raise ValueError("codes must be whole numbers")
    out = [int(v) for v in values]
    if d is not None:
        d = validation.integer(d, "d", 2)
        if out and not 0 <= min(out) <= max(out) < d:
            raise ValueError(f"codes must be in [0, {d}); got values from {min(out)} to {max(out)}")
    return out


def opendp_epsilon(measurement, delta, *, d_in=1, orders=None) -> Spent:
    """The :math:`(\\hat\\varepsilon, \\delta)` of an OpenDP measurement under ``renyi_divergence()``.

    The measurement's curve at ``d_in`` is read at every order of a
    :class:`lib.privacy.accountant.Accountant` and converted there (eq. (14) at
    the best order).

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
        The accountant's orders.

    Returns
    -------
    lib.privacy.accountant.Spent

    Raises
    ------
    ValueError
        If the measurement's output measure is not the Renyi divergence.
    """
    dp = _prelude()
    if measurement.output_measure != dp.renyi_divergence():
        raise ValueError(f"measurement must have output measure renyi_divergence(); got "
                         f"{measurement.output_measure}")
    composed = measurement.map(int(d_in))

    def at(order):
        try:
            return float(composed(float(order)))
        except dp.OpenDPException:  # OpenDP refuses to add an infinite level ("Overflow"): the curve is inf there
            return float("inf")

    acc = Accountant(orders)
    grid = acc.orders.tolist()
    # A Renyi curve does not decrease with the order, so it is infinite on an upper end of the
    # grid; that end is found by bisection, as OpenDP reports each infinite sum by a slow exception.
    lo, hi = -1, len(grid)  # grid[lo] finite (or none), grid[hi:] infinite
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if np.isfinite(at(grid[mid])) else (lo, mid)
    values = {v: (at(v) if i < hi else float("inf")) for i, v in enumerate(grid)}  # the map, once per order

    def curve(lam):
        lam = np.asarray(lam, float)
        return np.array([values[v] if v in values else at(v) for v in lam.ravel().tolist()]).reshape(lam.shape)

    finite = [v for v in grid if np.isfinite(values[v])]
    if not finite:
        return Spent(float("inf"), float(delta), float("nan"))
    return acc.add(RenyiDP(finite[0], values[finite[0]], curve=curve)).epsilon(delta)
