"""lib.experiments.synthetic.label_carrier: the layout of mixed data, and the label carried by the
kind of attribute named (class-conditional frequencies against their construction)."""

import numpy as np
import pytest

from lib.experiments.preprocessing import SEED, TEST_SIZE, split_rows
from lib.experiments.synthetic import label_carrier, label_carrier_split


@pytest.mark.parametrize("which", ["numerical", "categorical"])
def test_layout_and_determinism(which):
    d = label_carrier(which, n=2000, seed=3)
    assert d["X_cat"].shape == (2000, 5) and d["X_num"].shape == (2000, 5) and d["y"].shape == (2000,)
    assert set(np.unique(d["y"])) == {0, 1} and d["X_cat"].min() >= 0 and d["X_cat"].max() <= 3
    assert d["X_num"].min() >= 0 and d["X_num"].max() <= 10 and (d["bounds"] == [0.0, 10.0]).all()
    again = label_carrier(which, n=2000, seed=3)
    assert all(np.array_equal(d[k], again[k]) for k in ("X_cat", "X_num", "y"))


def test_the_label_drives_the_kind_named():
    num, cat = label_carrier("numerical", n=20_000), label_carrier("categorical", n=20_000)
    # numerical: class means 4 and 6 (sd 1.5, clipping at 0 and 10 moves them by < 0.01); categorical: 5 and 5
    gap_num = num["X_num"][num["y"] == 1].mean() - num["X_num"][num["y"] == 0].mean()
    gap_cat = cat["X_num"][cat["y"] == 1].mean() - cat["X_num"][cat["y"] == 0].mean()
    assert abs(gap_num - 2.0) < 0.05 and abs(gap_cat) < 0.05
    # categorical: a value in {2y, 2y + 1} with probability 0.6 + 0.4 / 2 = 0.8; numerical: 0.5
    share = lambda d: np.mean(d["X_cat"] // 2 == d["y"][:, None])  # noqa: E731
    assert abs(share(cat) - 0.8) < 0.01 and abs(share(num) - 0.5) < 0.01


def test_bad_input():
    with pytest.raises(ValueError, match="which"):
        label_carrier("both")
    with pytest.raises(ValueError, match="n must"):
        label_carrier("numerical", n=1)


def test_the_split_holds_the_same_rows_on_the_books_split():
    d, p = label_carrier("categorical", n=500, seed=2), label_carrier_split("categorical", n=500, seed=2)
    train, test = split_rows(500, SEED, TEST_SIZE)
    assert len(train) + len(test) == 500 and not set(train) & set(test)
    assert np.array_equal(p.X_train, d["X_cat"][train]) and np.array_equal(p.Z_test, d["X_num"][test])
    assert np.array_equal(p.y_train, d["y"][train]) and np.array_equal(p.y_test, d["y"][test])
    assert p.dataset == "synthetic: categorical" and p.n_classes == 2 and (p.bounds == d["bounds"]).all()
