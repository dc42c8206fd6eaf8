"""Chapter 14's system labels, markers and dot plot (lib.experiments.plotting, its last section)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from lib.experiments.plotting import SYSTEM_LOOKS, dotplot, style, system_label, system_look  # noqa: E402
from lib.mechanisms.bounded_moments import VaidyaLaplace, ZafaraniClifton  # noqa: E402
from lib.mechanisms.protocol import get  # noqa: E402


def test_labels_are_the_classes_own():
    assert system_label("zc") == ZafaraniClifton.label == "Zafarani-Clifton"
    assert system_label("vaidya") == VaidyaLaplace.label == "Vaidya et al."
    assert system_label("hellinger") == get("smoothed_hellinger").label
    for name in ("dirichlet", "gaussian", "laplace", "gohari", "geumlek_diffused"):
        assert system_label(name) == get(name).label


def test_looks_are_distinct_and_registered_ones_follow_style():
    looks = {name: tuple(sorted(system_look(name).items()))
             for name in ("dirichlet", "gohari", "gaussian", "laplace", "geumlek_diffused",
                          "geumlek_concentrated", *SYSTEM_LOOKS)}
    assert len(set(looks.values())) == len(looks)       # no two systems drawn alike
    assert system_look("laplace") == {k: style("laplace")[k] for k in ("color", "marker")}
    assert "label" not in system_look("zc")


def test_unknown_system_is_an_error():
    with pytest.raises((KeyError, ValueError)):
        system_label("no_such_system")


def test_dotplot_places_each_system_beside_the_others():
    mean = pd.DataFrame({"laplace": [1.0, 10.0], "zc": [2.0, 20.0]}, index=["a", "b"])
    err = pd.DataFrame({"laplace": [0.1, 0.2], "zc": [0.3, 0.4]}, index=["a", "b"])
    fig, ax = plt.subplots()
    dotplot(ax, mean, err, log=True)
    containers = ax.containers
    assert [c.get_label() for c in containers] == ["Laplace", "Zafarani-Clifton"]
    # two columns share a group of width 0.8: offsets -0.2 and +0.2 around each group's index
    for c, offset, name in zip(containers, (-0.2, 0.2), mean.columns):
        x, y = c.lines[0].get_data()
        np.testing.assert_allclose(x, np.arange(2) + offset)
        np.testing.assert_allclose(y, mean[name])
        # the bar spans two standard errors each side: its segments run from y - 2 se to y + 2 se
        segments = c.lines[2][0].get_segments()
        np.testing.assert_allclose([s[:, 1] for s in segments],
                                   np.column_stack([mean[name] - 2 * err[name], mean[name] + 2 * err[name]]))
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    plt.close(fig)


def test_dotplot_without_errors_draws_no_bars():
    fig, ax = plt.subplots()
    dotplot(ax, pd.DataFrame({"dirichlet": [0.5]}, index=["x"]))
    assert not ax.containers[0].has_yerr and ax.get_yscale() == "linear"
    plt.close(fig)
