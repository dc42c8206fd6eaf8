"""The batching kernel: all tables of a model released in one float buffer.

:meth:`lib.mechanisms.protocol.Mechanism.log_release_tables` releases a model's
tables one by one. Three families (the Dirichlet mechanism, the noise
mechanisms and the posterior samplers) override it to release every table of a
model at once, with the same draws from the same stream and the same
arithmetic, bit for bit, as their ``release`` table by table. They share this
kernel:

* :func:`batchable`: whether the objects keep the family's release, so that
  the override reproduces it (a subclass that changes the release is released
  table by table);
* :func:`release_buffer`: one buffer for all draws of all tables and its views,
  one per table, in release order;
* :func:`normalise_rows`: every row of every view divided by its sum, as
  ``release`` divides one table;
* :func:`log_views`: the buffer replaced by its logarithm, checked finite.

Examples
--------
>>> import numpy as np
>>> flat, views = release_buffer([np.ones((1, 2)), np.ones((2, 3))], 2)
>>> flat.shape, [v.shape for v in views]
((16,), [(2, 1, 2), (2, 2, 3)])
>>> flat[:] = 1.0
>>> normalise_rows(flat, views)
>>> [round(float(np.exp(v).sum(axis=-1).max()), 12) for v in log_views(flat, views)]
[1.0, 1.0]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def batchable(base: type, methods: tuple[str, ...], objects: Sequence[Any], tables: Sequence[np.ndarray]) -> bool:
    """Whether ``objects`` keep ``base``'s ``methods`` (no ``log_release``) and ``tables`` are arrays of ``d >= 2``.

    The condition under which an override of
    :meth:`lib.mechanisms.protocol.Mechanism.log_release_tables` reproduces
    ``base``'s ``release``: a subclass that changes the release (or an object
    given its own ``log_release``) is released table by table.

    Parameters
    ----------
    base : type
        The class whose batched release the override implements.
    methods : tuple of str
        The names of ``base``'s methods that the batched release reproduces.
    objects : sequence
        One mechanism object per table.
    tables : sequence of ndarray
        The count tables, in release order.

    Returns
    -------
    bool
    """
    return (bool(objects) and all(isinstance(t, np.ndarray) and t.ndim and t.shape[-1] >= 2 for t in tables)
            and all(issubclass(c, base) and not hasattr(c, "log_release")
                    and all(getattr(c, n) is getattr(base, n) for n in methods)
                    for c in {type(m) for m in objects})
            and not any("log_release" in getattr(m, "__dict__", ()) for m in objects))


def release_buffer(tables: Sequence[np.ndarray], n_draws: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """One float buffer for ``n_draws`` releases of every table, and its views in release order.

    Parameters
    ----------
    tables : sequence of ndarray, shape (rows, d)
        The count tables.
    n_draws : int
        Releases of each table.

    Returns
    -------
    flat : ndarray, shape (n_draws * sum of the tables' sizes,)
        The buffer (uninitialised).
    views : list of ndarray, shape (n_draws, rows, d)
        One view of ``flat`` per table, in order.
    """
    sizes = [n_draws * t.size for t in tables]
    flat = np.empty(sum(sizes))
    ends = np.cumsum(sizes).tolist()
    views = [flat[e - s:e].reshape((n_draws,) + t.shape) for s, e, t in zip(sizes, ends, tables)]
    return flat, views


def normalise_rows(flat: np.ndarray, views: list[np.ndarray], *, guard: bool = True) -> None:
    """Divide every row of every view (entries of ``flat``) by its sum, as ``release`` does table by table.

    Shared by the batched releases of the noise baselines and of the
    Dirichlet mechanism. The row sums of each view are taken as
    ``y.sum(axis=-1)`` (the same reduction, so the same bits); all rows are
    then divided by one operation. Where a row sum overflows, every view is
    normalised by ``release``'s own rescaling path instead (scaled by its
    largest entry first).

    Parameters
    ----------
    flat : ndarray
        The buffer of :func:`release_buffer`, filled with positive entries;
        changed in place.
    views : list of ndarray
        Its views.
    guard : bool, default True
        Raise where a row holds an infinite entry (a Gamma draw that itself
        overflows, as in :meth:`lib.DirichletMechanism.release`).

    Raises
    ------
    ValueError
        With ``guard``, if an entry is infinite.
    """
    with np.errstate(over="ignore"):
        totals = [v.sum(axis=-1) for v in views]
    total = np.concatenate([s.ravel() for s in totals]) if totals else np.empty(0)
    if np.isfinite(total).all():
        widths = np.repeat([v.shape[-1] for v in views], [s.size for s in totals])
        with np.errstate(under="ignore"):
            flat /= np.repeat(total, widths)
        return
    for v, s in zip(views, totals):  # counts near the double range
        s = s[..., None]
        if not np.isfinite(s).all():
            if guard and not np.isfinite(v.max()):
                raise ValueError("counts are too large: a Gamma draw of r * counts + alpha overflows "
                                 "double precision")
            v /= v.max(axis=-1, keepdims=True)
            s = v.sum(axis=-1, keepdims=True)
        with np.errstate(under="ignore"):
            v /= s


def log_views(flat: np.ndarray, views: list[np.ndarray]) -> list[np.ndarray]:
    """The views, their buffer replaced by its logarithm (checked finite).

    Raises
    ------
    ValueError
        If a released probability is zero or not finite (the message names
        the release).
    """
    np.log(flat, out=flat)
    if not np.isfinite(flat).all():
        k = next(k for k, v in enumerate(views) if not np.isfinite(v).all())
        raise ValueError(f"mechanism {k} returned a probability that is zero or not finite")
    return views
