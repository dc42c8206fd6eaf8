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
occur. A mechanism releases each table once, all its rows independently, at
the level :func:`release_budget` gives.

Everything is vectorised over a batch of independent releases (``n_draws``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _validate
from .baselines import CLIP_FLOOR
from .naive_bayes import PRIVATE_MECHANISMS, make_mechanism

#: The string models :func:`release_tables` knows, private ones first.
MECHANISMS = PRIVATE_MECHANISMS + ("mle",)

#: The networks of Figure 6 (node: parents), in the node order of the author's
#: notebooks (a topological order). Names are the columns of
#: :func:`lib.preprocessing.prepare` (the label is ``income`` for Adult, ``y``
#: for Bank; GermanCredit's network does not contain its label). See
#: :data:`AUTHOR_NAMES` for the one name that differs from the author's.
NETWORKS: dict[str, dict[str, tuple[str, ...]]] = {
    "Adult": {
        "age": (),
        "sex": (),
        "education": ("age",),
        "occupation": ("age", "sex", "education"),
        "capital-gain": ("sex", "education", "occupation"),
        "capital-loss": ("sex", "occupation", "capital-gain"),
        "income": ("occupation", "capital-gain", "capital-loss"),
    },
    "Bank": {
        "month": (),
        "day_of_week": (),
        "housing": ("month",),
        "pdays": ("housing", "month"),
        "poutcome": ("housing", "pdays"),
        "previous": ("poutcome",),
        "contact": ("previous", "month"),
        "campaign": ("day_of_week", "month"),
        "duration": ("housing", "contact", "campaign"),
        "y": ("poutcome", "duration", "month"),
    },
    "GermanCredit": {
        "housing": (),
        "property": ("housing",),
        "age": ("housing",),
        "amount": ("property",),
        "other_debtors": ("property",),
        "personal_status_sex": ("amount",),
        "purpose": ("amount",),
        "installment_rate": ("amount",),
        "duration": ("amount", "installment_rate"),
        "people_liable": ("personal_status_sex",),
        "foreign_worker": ("duration",),
        "number_credits": ("age",),
        "credit_history": ("number_credits",),
        "other_installment_plans": ("credit_history",),
    },
}

#: Node names of the author's notebooks that differ from ours (ours: theirs).
#: The author's South German Credit file called ``famges`` (personal status and
#: sex) ``sex_marital_status``; UCI's documentation, and :mod:`lib.data`, call
#: it ``personal_status_sex``.
AUTHOR_NAMES = {"GermanCredit": {"personal_status_sex": "sex_marital_status"}}

#: Largest number of cells of one table (guards against a structure whose
#: parent domains multiply out of memory).
MAX_CELLS = 10**8


class NetworkData(NamedTuple):
    """A dataset encoded for one Bayesian network (from :func:`prepare_network`).

    Attributes
    ----------
    nodes : tuple of str
        Node names, in topological order (parents before children).
    parents : tuple of tuple of int
        ``parents[k]``: indices (into ``nodes``) of the parents of node ``k``.
    n_values : ndarray of int64, shape (K,)
        Public domain size of every node.
    train, test : ndarray of int64, shape (n, K)
        Codes of the training and test rows, column ``k`` = node ``k``.
    """

    nodes: tuple
    parents: tuple
    n_values: np.ndarray
    train: np.ndarray
    test: np.ndarray


def release_budget(epsilon, n_nodes):
    """RDP level of each table of a private Bayesian network.

    A network with :math:`K` nodes releases :math:`K` conditional probability
    tables. If each is :math:`(\\lambda, \\varepsilon/K)`-RDP, their basic
    composition (Lemma 1) is :math:`(\\lambda, \\varepsilon)`-RDP (the
    proposition ``bn-prop-accounting`` of the chapter on Bayesian networks).

    Parameters
    ----------
    epsilon : array_like
        Total RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    n_nodes : int
        Number of nodes :math:`K \\ge 1`.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon / K`.

    Examples
    --------
    >>> release_budget(1.0, n_nodes=10)
    0.1
    """
    epsilon = _validate.positive(epsilon, "epsilon")
    n_nodes = _validate.integer(n_nodes, "n_nodes")
    out = epsilon / int(n_nodes)
    return float(out) if out.ndim == 0 else out


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
    for k, ps in enumerate(parents):
        cells = int(np.prod([n_values[p] for p in ps], dtype=float)) * int(n_values[k])
        if cells > MAX_CELLS:
            raise ValueError(
                f"the table of node {k} would have {cells} cells; at most {MAX_CELLS} allowed")
    return n_values, parents


def topological_order(parents):
    """Node indices with every parent before its children (Kahn's algorithm).

    Ties are broken by the smallest index, so a list that is already in
    topological order is returned unchanged. A graph with a cycle gives a
    shorter list (the nodes on or below the cycle are left out).

    Examples
    --------
    >>> topological_order([(1,), (), (0, 1)])
    [1, 0, 2]
    """
    parents = [tuple(ps) for ps in parents]
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


def depths(parents) -> np.ndarray:
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


def prepare_network(name: str, seed: int = 1) -> NetworkData:
    """The nodes of network :data:`NETWORKS` ``[name]``, encoded by :func:`lib.preprocessing.prepare`.

    The same preprocessing as naive Bayes (Section 5.1): a 70/30 split with
    ``seed``, numerical attributes binned at the training deciles (outer bins
    open, so every test value falls in a bin), categorical domains from the
    whole file. The label column is appended as one more categorical variable
    with its ``n_classes`` values.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`NETWORKS`, or if a node is not a
        column of the encoded data (for example because the preprocessing
        dropped it as constant on the training split).
    """
    if name not in NETWORKS:
        raise ValueError(f"name must be one of {', '.join(NETWORKS)}; got {name!r}")
    from .data import label_column
    from .preprocessing import prepare

    split = prepare(name, seed=seed)
    columns = list(split.attributes) + [label_column(name)]
    n_all = np.append(split.n_values, split.n_classes).astype(np.int64)
    train = np.column_stack([split.X_train, split.y_train])
    test = np.column_stack([split.X_test, split.y_test])
    network = NETWORKS[name]
    missing = [node for node in network if node not in columns]
    if missing:
        raise ValueError(
            f"nodes {missing} of the {name} network are not columns of the encoded data "
            "(dropped as constant on the training split, or misnamed)")
    nodes = tuple(network)
    idx = [columns.index(node) for node in nodes]
    parents = tuple(tuple(nodes.index(p) for p in network[node]) for node in nodes)
    return NetworkData(
        nodes=nodes, parents=parents, n_values=n_all[idx],
        train=np.ascontiguousarray(train[:, idx]), test=np.ascontiguousarray(test[:, idx]))


def _check_codes(codes, n_values):
    codes = np.asarray(codes)
    if (codes.ndim != 2 or codes.shape[1] != n_values.size
            or not np.issubdtype(codes.dtype, np.integer)):
        raise ValueError(
            f"codes must be a 2-D integer array with {n_values.size} columns; "
            f"got {codes.dtype} {codes.shape}")
    if codes.size and (codes.min() < 0 or np.any(codes.max(axis=0) >= n_values)):
        raise ValueError("codes must hold values in [0, n_values[k] - 1] in every column k")
    return codes.astype(np.int64, copy=False)


def count_tables(codes, n_values, parents):
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
        t = _validate.nonnegative(t, f"tables[{k}]")
        if t.ndim != 2 or t.shape[-1] < 2:
            raise ValueError(f"tables[{k}] must be 2-D with at least two columns; got {t.shape}")
        out.append(t)
    return out


def release_tables(tables, mechanism, *, epsilon=None, lam=5.0, smoothing=0.1, n_draws=1,
                   rng=None, floor=CLIP_FLOOR):
    """Release every conditional probability table, ``n_draws`` independent times.

    Each row of table :math:`k` (one parent configuration, observed or not) is
    released as a distribution over the node's values:

    * ``"dirichlet"``: :math:`\\tilde\\theta^k_{\\cdot c} \\sim
      \\mathrm{Dirichlet}(r N^k_{\\cdot c} + \\alpha)` with :math:`(r, \\alpha)` from
      Algorithm 1 at level :func:`release_budget` :math:`= \\varepsilon/K`
      (:math:`\\Delta_2^2 = 2`, :math:`\\Delta_\\infty = 1`); an unobserved
      configuration gets a draw from :math:`\\mathrm{Dirichlet}(\\alpha)`.
    * ``"gaussian"``, ``"laplace"``: eq. (12) with noisy counts, each count plus
      Gaussian or Laplace noise calibrated to :math:`(\\lambda, \\varepsilon/K)`-RDP,
      clipped at ``floor`` and normalised over the row
      (:func:`lib.baselines.clip_and_normalise`).
    * ``"mle"``: the non-private eq. (12) with ``smoothing`` pseudo-counts,
      :math:`(N^k_{jc} + a)/(N^k_c + a n_k)` (the author's ``MLECalculator(0.1)``).
    * a sequence of :math:`K` mechanism objects: object :math:`k` releases
      table :math:`k` by its ``release(counts, rng)`` method, which must map
      counts of shape ``(..., n_k)`` to distributions over the last axis;
      ``epsilon`` and ``lam`` are then ignored (the objects carry their own
      calibration).

    Parameters
    ----------
    tables : list of ndarray, shape (n_configs_k, n_k)
        From :func:`count_tables`.
    mechanism : str or sequence
        See above.
    epsilon : float, optional
        Total RDP level of the whole network (string private mechanisms).
    lam : float, default 5.0
        Renyi order :math:`\\lambda`.
    smoothing : float, default 0.1
        Pseudo-count of ``"mle"``.
    n_draws : int, default 1
    rng : numpy.random.Generator or int or None
    floor : float, default :data:`lib.baselines.CLIP_FLOOR`
        Clipping level, in counts, of the Gaussian and Laplace post-processing.

    Returns
    -------
    list of ndarray, shape (n_draws, n_configs_k, n_k)
        Natural logarithms of the released probabilities (all finite).

    Examples
    --------
    >>> t = count_tables([[0, 1], [1, 1], [1, 0]], [2, 3], [(), (0,)])
    >>> logs = release_tables(t, "dirichlet", epsilon=1.0, n_draws=4, rng=0)
    >>> [x.shape for x in logs]
    [(4, 1, 2), (4, 2, 3)]
    """
    tables = _check_tables(tables)
    n_draws = _validate.integer(n_draws, "n_draws")
    K = len(tables)
    if isinstance(mechanism, str):
        if mechanism not in MECHANISMS:
            raise ValueError(
                f"mechanism must be one of {MECHANISMS} or a sequence of mechanism objects; "
                f"got {mechanism!r}")
        if mechanism == "mle":
            smoothing = _validate.scalar(_validate.positive(smoothing, "smoothing"), "smoothing")
            out = []
            for t in tables:
                s = t + smoothing
                logs = np.log(s) - np.log(s.sum(axis=-1, keepdims=True))
                out.append(np.broadcast_to(logs, (n_draws,) + t.shape).copy())
            return out
        if epsilon is None:
            raise ValueError(f"epsilon is required for the {mechanism} mechanism")
        epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
        mechs = [make_mechanism(mechanism, release_budget(epsilon, K), lam, floor)] * K
    else:
        try:
            mechs = list(mechanism)
        except TypeError as exc:
            raise ValueError(
                f"mechanism must be one of {MECHANISMS} or a sequence of mechanism objects; "
                f"got {mechanism!r}") from exc
        if len(mechs) != K:
            raise ValueError(f"mechanism must hold one object per table ({K}); got {len(mechs)}")
        if not all(callable(getattr(m, "release", None)) for m in mechs):
            raise ValueError("every object of mechanism must have a release(counts, rng) method")
    rng = _validate.generator(rng)
    out = []
    for k, (mech, t) in enumerate(zip(mechs, tables)):
        p = np.asarray(mech.release(np.broadcast_to(t, (n_draws,) + t.shape), rng), dtype=float)
        if p.shape != (n_draws,) + t.shape:
            raise ValueError(
                f"mechanism {k} returned shape {p.shape}; expected {(n_draws,) + t.shape}")
        if not (np.all(p > 0) and np.all(np.isfinite(p))
                and np.allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-9)):
            raise ValueError(
                f"mechanism {k} did not return distributions with positive entries")
        out.append(np.log(p))
    return out


def log_likelihood(codes, log_tables, n_values, parents):
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
    >>> logs = release_tables(t, "mle", smoothing=1.0)
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


def _wrap(name: str, width: int = 11) -> str:
    """A node name on lines of about ``width`` characters, broken at ``_`` or ``-``."""
    parts = name.replace("_", "-").split("-")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 1 + len(part) <= width:
            lines[-1] += "-" + part
        else:
            lines[-1] += "-"
            lines.append(part)
    return "\n".join(lines)


def draw_network(nodes, parents, ax=None, *, title=None, labels=None):
    """Draw a DAG in layers, as Figure 6: a node's layer is its depth.

    Layer :math:`\\ell` (from the top) holds the nodes whose longest path from a
    root has :math:`\\ell` edges (:func:`depths`), so every edge points down.
    Within a layer, nodes are ordered by the mean position of their parents (one
    barycentre sweep). An edge that skips layers is drawn as an arc, bent to
    alternate sides, so that it does not run through the nodes in between.
    Only matplotlib is used.

    Parameters
    ----------
    nodes : sequence of str
    parents : sequence of sequence of int
    ax : matplotlib Axes, optional
    title : str, optional
    labels : mapping of str to str, optional
        Text to show for a node; default its name with ``_`` as ``-``, broken
        into lines of about 11 characters.

    Returns
    -------
    matplotlib Axes
    """
    import matplotlib.pyplot as plt

    nodes = list(nodes)
    parents = [tuple(ps) for ps in parents]
    if len(parents) != len(nodes):
        raise ValueError(f"parents must have one entry per node ({len(nodes)}); got {len(parents)}")
    depth = depths(parents)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.2, 3.6))
    x = np.zeros(len(nodes))
    for level in range(int(depth.max()) + 1):
        members = [k for k in range(len(nodes)) if depth[k] == level]
        if level > 0:
            members.sort(key=lambda k: (np.mean([x[p] for p in parents[k]]), k))
        for i, k in enumerate(members):
            x[k] = i - (len(members) - 1) / 2
    y = -depth.astype(float)
    labels = labels or {}
    box = dict(boxstyle="round,pad=0.25", fc="white", ec="0.3", lw=0.8)
    texts = [ax.text(x[k], y[k], labels.get(name, _wrap(name)), ha="center", va="center",
                     fontsize=7, bbox=box, zorder=5) for k, name in enumerate(nodes)]
    n_long = 0
    for k in range(len(nodes)):
        for p in parents[k]:
            rad = 0.0
            if depth[k] - depth[p] > 1:
                rad = (0.25 + 0.1 * (n_long // 2)) * (1 if n_long % 2 == 0 else -1)
                n_long += 1
            # clipped at the two boxes, so the head stays visible on tall labels
            ax.annotate("", xy=(x[k], y[k]), xytext=(x[p], y[p]),
                        arrowprops=dict(arrowstyle="-|>", color="0.4", lw=0.7,
                                        patchA=texts[p].get_bbox_patch(),
                                        patchB=texts[k].get_bbox_patch(),
                                        shrinkA=1, shrinkB=1,
                                        connectionstyle=f"arc3,rad={rad}"))
    ax.set_xlim(x.min() - 0.8, x.max() + 0.8)
    ax.set_ylim(y.min() - 0.5, 0.5)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
