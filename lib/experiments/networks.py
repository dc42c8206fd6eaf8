"""The three Bayesian networks of Section 5.2 on the UCI data, and Figure 6's drawing.

The structures (:data:`NETWORKS`) name columns of the encoded datasets
(:func:`lib.experiments.preprocessing.prepare`); :func:`prepare_network` encodes a
dataset for its network, and :func:`draw_network` draws a structure in layers
(matplotlib is imported only when a network is drawn).
The model itself (counting, releasing, scoring) is :mod:`lib.models.bayesian_network`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, NamedTuple, Sequence

import numpy as np

from lib.models.bayesian_network import depths
from lib.experiments.data import label_column
from lib.experiments.preprocessing import BINNING, Split, prepare

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: The networks of Figure 6 (node: parents), in the node order of the author's
#: notebooks (a topological order). Names are the columns of
#: :func:`lib.experiments.preprocessing.prepare` (the label is ``income`` for Adult, ``y``
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
#: sex) ``sex_marital_status``; UCI's documentation, and :mod:`lib.experiments.data`, call
#: it ``personal_status_sex``.
AUTHOR_NAMES = {"GermanCredit": {"personal_status_sex": "sex_marital_status"}}

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


def prepare_network(name: str, seed: int = 1, *, binning: str = BINNING) -> NetworkData:
    """The nodes of network :data:`NETWORKS` ``[name]``, encoded by :func:`lib.experiments.preprocessing.prepare`.

    The same preprocessing as naive Bayes (Section 5.1), with the same
    ``binning``: a 70/30 split with ``seed``; with ``binning="public"``,
    numerical attributes binned at public edges and domains and classes from
    the public schema (nothing read from the rows, nothing dropped); with
    ``"quantile"`` (the non-private variant), bins at the training deciles
    (outer bins open, so every test value falls in a bin) and categorical
    domains from the whole file. The label column is appended as one more
    categorical variable with its ``n_classes`` values.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`NETWORKS`, or if a node is not a
        column of the encoded data (for example because the preprocessing
        dropped it as constant on the training split).
    """
    if name not in NETWORKS:
        raise ValueError(f"name must be one of {', '.join(NETWORKS)}; got {name!r}")
    return network_from_split(name, prepare(name, seed=seed, binning=binning))


def network_from_split(name: str, split: Split) -> NetworkData:
    """The nodes of network :data:`NETWORKS` ``[name]`` taken from an encoded ``split``.

    A per-column selection: it reads the split's public parts (attribute
    names, domains) and copies the codes. :func:`prepare_network` is this
    applied to :func:`lib.experiments.preprocessing.prepare`.
    """
    if name not in NETWORKS:
        raise ValueError(f"name must be one of {', '.join(NETWORKS)}; got {name!r}")
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


def draw_network(nodes: Sequence[str], parents: Sequence[Sequence[int]], ax: Axes | None = None, *,
                 title: str | None = None, labels: Mapping[str, str] | None = None) -> Axes:
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
    import matplotlib.pyplot as plt  # only when a network is drawn

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
