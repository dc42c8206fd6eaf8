"""Shared fixtures of the test suite: synthetic data for the models and grids, and one data marker.

* :func:`categorical_rows` draws integer codes from a random naive Bayes model;
  :func:`network_rows` draws rows from a random Bayesian network (ancestral
  sampling). :func:`synthetic_split` and :func:`synthetic_network` wrap them as
  the encoded data the experiment grid takes (a
  :class:`lib.experiments.preprocessing.Split`, a
  :class:`lib.experiments.networks.NetworkData`), so the grid and the command
  line can be tested without the UCI files. The fixtures ``splits`` and
  ``networks`` hold two small datasets of each kind, named "one" and "two".
* ``@pytest.mark.needs_data``: the one rule for tests that read the real UCI
  files (:func:`data_available`).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from lib.models.bayesian_network import topological_order
from lib.experiments import data as _data
from lib.experiments.networks import NetworkData
from lib.experiments.preprocessing import Split


# ----------------------------------------------------------------------------- the real data

def data_available() -> bool:
    """True when the tests that read the UCI files can run.

    ``DIRICHLET_DATA_DIR`` set: they run, whatever the folder holds (CI sets it;
    a wrong folder or a missing file must fail loudly, never skip). Not set:
    they run only if the per-user cache already holds every file (no test
    downloads anything).
    """
    if os.environ.get(_data.DATA_ENV):
        return True
    return all(_data._candidates(_data.cache_dir(), f) for name in _data.DATASETS for f in _data.files(name))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"needs_data: reads the UCI files (skipped unless {_data.DATA_ENV} is set or the "
                   "cache holds every file)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_data") is not None and not data_available():
        pytest.skip(f"{_data.DATA_ENV} is not set and the cache ({_data.cache_dir()}) does not hold "
                    "the UCI files")


# ----------------------------------------------------------------------------- synthetic data

def categorical_rows(n=600, n_values=(2, 3, 5, 4), n_classes=3, seed=0, concentration=0.7):
    """Codes drawn from a random naive Bayes model (some values may be unobserved).

    Returns ``X`` (int64, shape (n, K)), ``y`` (int64, shape (n,)), ``n_values``
    (int64 array) and ``n_classes``.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    cols = []
    for v in n_values:
        theta = rng.dirichlet(np.full(v, concentration), size=n_classes)
        cols.append((theta[y].cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1))
    return (np.stack(cols, axis=1).astype(np.int64), y.astype(np.int64),
            np.asarray(n_values, dtype=np.int64), n_classes)


def network_rows(n, n_values, parents, seed=0, concentration=0.5):
    """Rows drawn from a random network with these parents (ancestral sampling), int64 (n, K)."""
    rng = np.random.default_rng(seed)
    codes = np.zeros((n, len(n_values)), dtype=np.int64)
    for k in topological_order(parents):
        n_conf = int(np.prod([n_values[p] for p in parents[k]]))
        theta = rng.dirichlet(np.full(n_values[k], concentration), size=n_conf)
        conf = np.zeros(n, dtype=np.int64)
        for p in parents[k]:
            conf = conf * n_values[p] + codes[:, p]
        codes[:, k] = (theta[conf].cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return codes


def synthetic_split(n=900, n_values=(2, 4, 6), n_classes=2, seed=0) -> Split:
    """A small encoded dataset for :class:`lib.experiments.grid.NaiveBayesTask` (70/30 split)."""
    X, y, n_values, n_classes = categorical_rows(n, n_values, n_classes, seed, concentration=1.0)
    m = int(0.7 * n)
    return Split(X[:m], X[m:], y[:m], y[m:], n_values, n_classes,
                 tuple(f"a{k}" for k in range(len(n_values))), tuple(range(n_classes)))


#: The network of :func:`synthetic_network`: 0 -> 2 <- 1, 2 -> 3.
NETWORK_VALUES = np.array([2, 3, 4, 2], dtype=np.int64)
NETWORK_PARENTS = ((), (), (0, 1), (2,))


def synthetic_network(n=700, seed=0) -> NetworkData:
    """A small :class:`NetworkData` on four nodes for :class:`lib.experiments.grid.NetworkTask`."""
    codes = network_rows(n, NETWORK_VALUES, NETWORK_PARENTS, seed, concentration=1.0)
    m = int(0.7 * n)
    return NetworkData(("a", "b", "c", "d"), NETWORK_PARENTS, NETWORK_VALUES, codes[:m], codes[m:])


_SPLITS = {"one": synthetic_split(), "two": synthetic_split(n=600, n_values=(3, 3), n_classes=3, seed=1)}
_NETWORKS = {"one": synthetic_network(), "two": synthetic_network(n=400, seed=1)}


@pytest.fixture
def splits():
    """Two small encoded naive Bayes datasets, "one" (2 classes, K = 3) and "two" (3 classes, K = 2)."""
    return dict(_SPLITS)


@pytest.fixture
def networks():
    """Two small encoded network datasets on :data:`NETWORK_PARENTS`, "one" (700 rows) and "two" (400)."""
    return dict(_NETWORKS)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """No data folder and an empty download cache: the folder the loader would fill."""
    monkeypatch.delenv(_data.DATA_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / _data.CACHE_NAME
