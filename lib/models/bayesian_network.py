"""Discrete Bayesian networks with privately released parameters (Section 5.2).

A Bayesian network on :math:`K` categorical variables has, for every node
:math:`k` and every configuration :math:`c \\in \\mathcal X_{\\mathrm{Pa}(k)}` of its
parents, a distribution :math:`\\theta^k_{\\cdot c}` over the values
:math:`j \\in \\mathcal X_k` of the node. Its log-likelihood on data with counts
:math:`N^k_{jc}` is eq. (11),

.. math::
    \\mathrm{LL}(\\theta) = \\sum_{k=1}^K \\sum_{c \\in \\mathcal X_{\\mathrm{Pa}(k)}}
    \\sum_{j \\in \\mathcal X_k} N^k_{jc} \\log \\theta^k_{jc},

maximised by :math:`\\hat\\theta^k_{jc} = N^k_{jc}/N^k_c` (eq. (12)).

The conditional probability table (CPT) of node :math:`k` is stored as a
``(n_configs_k, n_values[k])`` array: row :math:`c` is the parent configuration
whose mixed-radix index is :math:`c` (first parent most significant), column
:math:`j` the node's value. **Every** configuration of the public domain gets a
row, whether or not it occurs in the training data, and every row is released:
releasing only the observed configurations would reveal which configurations
occur. A mechanism releases each table once, all its rows independently; its
class's calibration (:meth:`lib.mechanisms.protocol.Mechanism.calibrate`) meets a
target for the whole network, splitting a Renyi DP budget equally by
:meth:`lib.privacy.guarantees.Guarantee.split` (:math:`\\varepsilon/K` per table,
the proposition ``bn-prop-accounting`` of the chapter on Bayesian networks), and
:func:`network_guarantee` states what the released network meets.

Everything is vectorised over a batch of independent releases (``n_draws``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.models.naive_bayes import log_releases, releases_of
from lib.mechanisms.protocol import Mechanism, ModelCalibration, ReleaseSpec
from lib.privacy.guarantees import Guarantee, compose

#: Largest number of cells of one table (guards against a structure whose
#: parent domains multiply out of memory).
MAX_CELLS = 10**8


def _structure(n_values, parents):
    """Validate domain sizes and a parent structure (a DAG)."""
    n_values = np.asarray(n_values)
    if (n_values.ndim != 1 or n_values.size < 1
            or not np.issubdtype(n_values.dtype, np.integer) or np.any(n_values < 2)):
        raise ValueError(
            f"n_values must be a 1-D array of integers in [2, inf); got {n_values!r}")
    K = n_values.size
    try:
        parents = tuple(tuple(int(p) for p in ps) for ps in parents)
    except (TypeError, ValueError) as exc:
        raise ValueError("parents must be a sequence of sequences of node indices") from exc
    if len(parents) != K:
        raise ValueError(f"parents must have one entry per node ({K}); got {len(parents)}")
    for k, ps in enumerate(parents):
        if any(p < 0 or p >= K for p in ps):
            raise ValueError(f"parents[{k}] must hold node indices in [0, {K - 1}]; got {ps}")
        if k in ps or len(set(ps)) != len(ps):
            raise ValueError(f"parents[{k}] must not repeat a node or contain node {k}; got {ps}")
    if len(topological_order(parents)) != K:
        raise ValueError("parents must describe a directed acyclic graph; found a cycle")
    n_values = n_values.astype(np.int64)
    total = 0
    for k, ps in enumerate(parents):
        # exact Python integers (a float or int64 product can round or wrap around)
        cells = int(n_values[k])
        for p in ps:
            cells *= int(n_values[p])
        if cells > MAX_CELLS:
            raise ValueError(
                f"the table of node {k} would have {cells} cells; at most {MAX_CELLS} allowed")
        total += cells
    if total > MAX_CELLS:
        raise ValueError(f"the {K} tables would have {total} cells together; at most {MAX_CELLS} allowed")
    return n_values, parents


def topological_order(parents: Sequence[Sequence[int]]) -> list[int]:
    """Node indices with every parent before its children (Kahn's algorithm).

    Ties are broken by the smallest index, so a list that is already in
    topological order is returned unchanged. A graph with a cycle gives a
    shorter list (the nodes on or below the cycle are left out).

    Raises
    ------
    TypeError
        If ``parents`` is not a sequence of sequences of whole-number node indices.

    Examples
    --------
    >>> topological_order([(1,), (), (0, 1)])
    [1, 0, 2]
    """
    if isinstance(parents, (str, bytes)) or not isinstance(parents, (list, tuple, np.ndarray)):
        raise validation.ArgumentTypeError(f"parents must be a sequence with one sequence of parent indices per "
                                           f"node; got {type(parents).__name__}")
    try:
        parents = [tuple(validation.integer(p, "parents", 0) for p in ps) for ps in parents]
    except TypeError:
        raise validation.ArgumentTypeError("parents must hold one sequence of whole-number node indices per "
                                           "node") from None
    waiting = [len(set(ps)) for ps in parents]
    children = [[] for _ in parents]
    for k, ps in enumerate(parents):
        for p in set(ps):
            if 0 <= p < len(parents):
                children[p].append(k)
    ready = sorted(k for k, w in enumerate(waiting) if w == 0)
    order = []
    while ready:
        k = ready.pop(0)
        order.append(k)
        for c in children[k]:
            waiting[c] -= 1
            if waiting[c] == 0:
                ready.append(c)
        ready.sort()
    return order


def depths(parents: Sequence[Sequence[int]]) -> np.ndarray:
    """Length of the longest directed path from a root to every node.

    Roots have depth 0; a node's depth is one more than its deepest parent.
    This is the layer of the node in :func:`draw_network`.

    Examples
    --------
    >>> depths([(), (), (0,), (0, 1, 2)]).tolist()
    [0, 0, 1, 2]
    """
    parents = [tuple(ps) for ps in parents]
    order = topological_order(parents)
    if len(order) != len(parents):
        raise ValueError("parents must describe a directed acyclic graph; found a cycle")
    depth = np.zeros(len(parents), dtype=np.int64)
    for k in order:
        if parents[k]:
            depth[k] = 1 + max(depth[p] for p in parents[k])
    return depth


def _check_codes(codes, n_values):
    return validation.codes(codes, "codes", n_values)


def count_tables(codes: ArrayLike, n_values: ArrayLike, parents: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """The counts :math:`N^k_{jc}` of eq. (11), one table per node.

    Parameters
    ----------
    codes : array_like of int, shape (n, K)
        Column :math:`k` holds node :math:`k`'s values in :math:`[0, n_k)`.
    n_values : array_like of int, shape (K,)
        Public domain sizes :math:`n_k \\ge 2`.
    parents : sequence of sequence of int
        Parent indices of every node (a DAG).

    Returns
    -------
    list of ndarray
        Table :math:`k` has shape ``(prod(n_values[parents[k]]), n_values[k])``
        (one row for a root); row :math:`c` is the parent configuration with
        mixed-radix index :math:`c`, first parent most significant. Every
        configuration gets a row, observed or not, and every table sums to
        ``n``. Replacing one data row moves at most two cells of each table,
        by one each.

    Examples
    --------
    >>> t = count_tables([[0, 1], [1, 1], [1, 0]], [2, 3], [(), (0,)])
    >>> t[0], t[1]
    (array([[1., 2.]]), array([[0., 1., 0.],
           [1., 1., 0.]]))
    """
    n_values, parents = _structure(n_values, parents)
    codes = _check_codes(codes, n_values)
    tables = []
    for k, ps in enumerate(parents):
        config = np.zeros(codes.shape[0], dtype=np.int64)
        n_configs = 1
        for p in ps:
            config = config * n_values[p] + codes[:, p]
            n_configs *= int(n_values[p])
        flat = config * n_values[k] + codes[:, k]
        size = n_configs * int(n_values[k])
        tables.append(np.bincount(flat, minlength=size).astype(float)
                      .reshape(n_configs, int(n_values[k])))
    return tables


def _check_tables(tables):
    if isinstance(tables, np.ndarray) or len(tables) < 1:
        raise ValueError("tables must be a non-empty list of 2-D count arrays")
    out = []
    for k, t in enumerate(tables):
        t = validation.nonnegative(t, f"tables[{k}]")
        if t.ndim != 2 or t.shape[-1] < 2:
            raise ValueError(f"tables[{k}] must be 2-D with at least two columns; got {t.shape}")
        out.append(t)
    return out


def network_spec(n_values: ArrayLike, parents: Sequence[Sequence[int]], n_total: int) -> ReleaseSpec:
    """The public shapes of a network's :math:`K` releases: table :math:`k` has one row per
    parent configuration (the product of the parents' domain sizes, 1 for a root) and
    ``n_values[k]`` cells.

    Examples
    --------
    >>> network_spec([2, 3], [(), (0,)], 10).shapes
    ((1, 2), (2, 3))
    """
    n_values, parents = _structure(n_values, parents)
    n_total = validation.integer(n_total, "n_total", 0)
    rows = [int(np.prod([n_values[p] for p in ps], dtype=np.int64)) for ps in parents]
    return ReleaseSpec(tuple((r, int(v)) for r, v in zip(rows, n_values)), int(n_total))


def release_tables(tables: list[np.ndarray], mechanism: ModelCalibration | Sequence[Mechanism], *, n_draws: int = 1,
                   rng: SeedLike = None) -> list[np.ndarray]:
    """Release every conditional probability table, ``n_draws`` independent times.

    Each row of table :math:`k` (one parent configuration, observed or not) is
    released as a distribution over the node's values by object :math:`k` of
    ``mechanism`` (a :class:`lib.mechanisms.protocol.ModelCalibration`, e.g.
    ``DirichletMechanism.calibrate(RenyiDP(lam, epsilon), network_spec(...))``,
    which gives every table :math:`\\varepsilon/K`, or a sequence of :math:`K`
    objects). An unobserved configuration is a row of zero
    counts: Algorithm 1 releases it as a draw from
    :math:`\\mathrm{Dirichlet}(\\alpha)`; the non-private estimate
    (:class:`lib.mechanisms.noise.SmoothedEstimate`) is eq. (12) with 0.1 pseudo-counts.

    Parameters
    ----------
    tables : list of ndarray, shape (n_configs_k, n_k)
        From :func:`count_tables`.
    mechanism : ModelCalibration or sequence of K mechanism objects
    n_draws : int, default 1
    rng : numpy.random.Generator or int or None

    Returns
    -------
    list of ndarray, shape (n_draws, n_configs_k, n_k)
        Natural logarithms of the released probabilities (all finite).

    Examples
    --------
    >>> from lib import DirichletMechanism
    >>> from lib.privacy.guarantees import RenyiDP
    >>> t = count_tables([[0, 1], [1, 1], [1, 0]], [2, 3], [(), (0,)])
    >>> cal = DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), network_spec([2, 3], [(), (0,)], 3))
    >>> [x.shape for x in release_tables(t, cal, n_draws=4, rng=0)]
    [(4, 1, 2), (4, 2, 3)]
    """
    tables = _check_tables(tables)
    objects = releases_of(mechanism, len(tables))
    n_draws = validation.integer(n_draws, "n_draws")
    return log_releases(objects, tables, n_draws, validation.generator(rng))


def network_guarantee(mechanism: ModelCalibration | Sequence[Mechanism], n_nodes: int) -> Guarantee:
    """The guarantee of a whole released network: what its :math:`K` table releases meet together.

    Parameters
    ----------
    mechanism : ModelCalibration or sequence of K mechanism objects
        As :func:`release_tables` takes it.
    n_nodes : int
        The number of tables :math:`K`.

    Returns
    -------
    Guarantee
        The calibration's statement of the whole release (``mechanism.guarantee``),
        else the basic composition (:func:`lib.privacy.guarantees.compose`) of
        the objects' guarantees, one per table.

    Raises
    ------
    ValueError
        As :func:`lib.privacy.guarantees.compose` (guarantees of different
        types or orders), or if ``mechanism`` does not hold :math:`K` objects.

    Examples
    --------
    >>> from lib import DirichletMechanism
    >>> from lib.privacy.guarantees import RenyiDP
    >>> spec = network_spec([2, 3], [(), (0,)], 3)
    >>> network_guarantee(DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), spec), 2)
    RenyiDP(lam=5.0, epsilon=1.0)
    """
    if isinstance(mechanism, ModelCalibration) and mechanism.attained and mechanism.guarantee is not None:
        releases_of(mechanism, n_nodes)
        return mechanism.guarantee
    return compose(m.guarantee for m in releases_of(mechanism, n_nodes))


def log_likelihood(codes: ArrayLike, log_tables: list[np.ndarray], n_values: ArrayLike,
                   parents: Sequence[Sequence[int]]) -> np.ndarray:
    """The log-likelihood of eq. (11) of every row of ``codes``, for a batch of parameters.

    The rows are counted once per table (:func:`count_tables`); then
    :math:`\\mathrm{LL} = \\sum_k \\sum_{c, j} N^k_{jc} \\log\\theta^k_{jc}` for all
    parameter sets at once. Cells that no row hits are left out of the sum
    (so a zero probability there does not give ``0 * -inf``); every row is
    counted in every table, which the function checks.

    Parameters
    ----------
    codes : array_like of int, shape (n, K)
    log_tables : list of ndarray, shape (B, n_configs_k, n_k) or (n_configs_k, n_k)
        Log-probabilities, e.g. from :func:`release_tables`.
    n_values : array_like of int, shape (K,)
    parents : sequence of sequence of int

    Returns
    -------
    ndarray, shape (B,)
        The sum of :math:`\\log\\Pr[x^{(i)}]` over the rows (``B = 1`` for 2-D
        tables).

    Examples
    --------
    >>> codes = [[0, 1], [1, 1], [1, 0]]
    >>> t = count_tables(codes, [2, 3], [(), (0,)])
    >>> from lib.mechanisms.noise import SmoothedEstimate
    >>> logs = release_tables(t, [SmoothedEstimate(1.0)] * 2)
    >>> round(float(log_likelihood(codes, logs, [2, 3], [(), (0,)])[0]), 6)
    -4.463671
    """
    n_values, parents = _structure(n_values, parents)
    codes = _check_codes(codes, n_values)
    counts = count_tables(codes, n_values, parents)
    if len(log_tables) != len(counts):
        raise ValueError(f"log_tables must hold one table per node ({len(counts)}); "
                         f"got {len(log_tables)}")
    total, batch = 0.0, None
    for k, (c, lt) in enumerate(zip(counts, log_tables)):
        lt = np.asarray(lt, dtype=float)
        if lt.ndim == 2:
            lt = lt[None]
        if lt.ndim != 3 or lt.shape[1:] != c.shape:
            raise ValueError(f"log_tables[{k}] must have shape (B, {c.shape[0]}, {c.shape[1]}); "
                             f"got {lt.shape}")
        if batch is None:
            batch = lt.shape[0]
        elif lt.shape[0] != batch:
            raise ValueError("every table of log_tables must have the same batch size")
        if np.isnan(lt).any() or (lt > 1e-9).any():
            raise ValueError(f"log_tables[{k}] must hold log-probabilities (<= 0, no NaN)")
        if c.sum() != codes.shape[0]:  # pragma: no cover - bincount keeps every row
            raise RuntimeError(f"table {k} lost test rows")
        hit = c > 0
        # A row-wise sum (not a BLAS product): a draw's value does not depend
        # on the other draws of the batch.
        total = total + (lt[:, hit] * c[hit]).sum(axis=1)
    return np.asarray(total, dtype=float).reshape(batch)


