"""lib.theory.pseudo_counts: the pseudo-count of each Dirichlet-sampling release, checked against the
mean of many releases (the release's mean is (c + p) / (N + d p)), and the share of empty cells by hand."""
import numpy as np
import pytest

from lib.mechanisms.protocol import ApproximateDP, ReleaseSpec, get
from lib.theory.pseudo_counts import empty_cell_share, median_pseudo_count, pseudo_count

COUNTS = np.array([60.0, 25.0, 10.0, 5.0, 0.0])


@pytest.mark.parametrize("name", ["dirichlet", "geumlek_diffused", "geumlek_concentrated"])
def test_pseudo_count_is_the_smoothing_of_the_release_mean(name):
    release = get(name).calibrate(ApproximateDP(1.0, 1e-5), ReleaseSpec.of([COUNTS], int(COUNTS.sum()))).releases[0]
    p = pseudo_count(release)
    assert p > 0
    draws = release.release(np.broadcast_to(COUNTS, (200_000, COUNTS.size)), np.random.default_rng(3))
    expected = (COUNTS + p) / (COUNTS.sum() + COUNTS.size * p)
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 5 * se)
    # a pseudo-count 10 % off would be caught in the empty cell (the mean there is p / (N + d p))
    wrong = 1.1 * p / (COUNTS.sum() + COUNTS.size * 1.1 * p)
    assert abs(draws.mean(axis=0)[-1] - wrong) > 5 * se[-1]


def test_median_over_releases_and_bad_input():
    spec = ReleaseSpec.of([np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 2))], 20)
    objs = get("dirichlet").calibrate(ApproximateDP(1.0, 1e-5), spec).releases
    assert median_pseudo_count(objs) == pytest.approx(np.median([o.alpha / o.r for o in objs]), rel=0, abs=0)
    with pytest.raises(ValueError):
        median_pseudo_count([])
    laplace = get("laplace").calibrate(ApproximateDP(1.0, 1e-5), spec).releases[0]
    with pytest.raises(TypeError, match="release"):
        pseudo_count(laplace)


def test_empty_cell_share_by_hand():
    assert empty_cell_share([np.array([[0, 3], [1, 0]]), np.array([0, 0, 5, 2])]) == 4 / 8
    assert empty_cell_share([np.ones(3)]) == 0.0
    with pytest.raises(ValueError):
        empty_cell_share([])
    with pytest.raises(ValueError):
        empty_cell_share([np.array([1.0, -1.0])])
