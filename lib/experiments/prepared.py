"""The one type of prepared data: one dataset on one train/test split, as every task of the engine takes it.

:class:`Prepared` holds the arrays of the training and test rows and their
public metadata (domains, classes, attribute names, a network's parents, public
ranges of raw numerical attributes, a design matrix's row-norm bound);
:func:`prepared` wraps the splits of :func:`lib.experiments.preprocessing.prepare`
(``Split``) and :func:`lib.experiments.networks.prepare_network` (``NetworkData``)
without copying their arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lib import validation

if TYPE_CHECKING:
    from lib.experiments.networks import NetworkData
    from lib.experiments.preprocessing import Split


@dataclass(frozen=True, eq=False)
class Prepared:
    """One dataset prepared for a task on one train/test split: the arrays and their public metadata.

    Attributes
    ----------
    dataset : str
        The dataset's name (a seed key and a column of the frame).
    seed : int or None
        The split's seed (None: a split made elsewhere).
    X_train, X_test : ndarray of int64, shape (n, K)
        Codes of the training and test rows; column ``j`` in ``0 .. n_values[j] - 1``.
        For a network every node, the label included, is a column.
    y_train, y_test : ndarray of int64 or None
        Class codes (None for a network, whose label is a node).
    n_values : ndarray of int64, shape (K,)
        Public domain size of every column.
    n_classes : int
        Number of classes (0 for a network).
    attributes : tuple of str
        Column names (a network's nodes, in topological order).
    classes : tuple
        Original label values, in code order.
    parents : tuple of tuple of int
        A network's parents of each node (indices into ``attributes``); empty otherwise.
    Z_train, Z_test : ndarray of float, shape (n, J), or None
        Raw numerical attributes (mixed naive Bayes), beside the codes of ``X``.
    bounds : ndarray, shape (J, 2), or None
        Their public ranges.
    numerical : tuple of str
        Their names.
    c : float or None
        The public bound on a row's norm of a design matrix (logistic regression).
    """

    dataset: str
    seed: int | None
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray | None
    y_test: np.ndarray | None
    n_values: np.ndarray
    n_classes: int
    attributes: tuple
    classes: tuple = ()
    parents: tuple = ()
    Z_train: np.ndarray | None = None
    Z_test: np.ndarray | None = None
    bounds: np.ndarray | None = None
    numerical: tuple = ()
    c: float | None = None


def prepared(data: Prepared | Split | NetworkData, dataset: str = "data", seed: int | None = None) -> Prepared:
    """``data`` as a :class:`Prepared`: a Prepared passes through; a ``Split`` or ``NetworkData`` is wrapped.

    The arrays are not copied.

    Raises
    ------
    TypeError
        If ``data`` is none of these.
    """
    if isinstance(data, Prepared):
        return data
    if all(hasattr(data, k) for k in ("X_train", "X_test", "y_train", "y_test", "n_values", "n_classes")):
        return Prepared(dataset, seed, data.X_train, data.X_test, data.y_train, data.y_test,
                        np.asarray(data.n_values), int(data.n_classes), tuple(getattr(data, "attributes", ())),
                        tuple(getattr(data, "classes", ())))
    if all(hasattr(data, k) for k in ("nodes", "parents", "n_values", "train", "test")):
        return Prepared(dataset, seed, data.train, data.test, None, None, np.asarray(data.n_values), 0,
                        tuple(data.nodes), (), tuple(data.parents))
    raise validation.ArgumentTypeError(f"data must be a Prepared, a Split (lib.experiments.preprocessing) or a "
                                       f"NetworkData (lib.experiments.networks); got {type(data).__name__}")
