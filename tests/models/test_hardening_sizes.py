"""Issue 11, class 5: sizes are refused up front, with the limit in the message.

Before the fix these ran out of memory (or for minutes): the exhaustive neighbour
search for d in the hundreds, a domain inferred from one huge code, a huge
number of series terms, a huge moment order.
"""

import time

import numpy as np
import pytest

from lib.privacy.guarantees import RenyiDP
from lib import PrivateNaiveBayes, all_neighbours, output_raw_moment, random_neighbours, trigamma_series
from lib.models import bayesian_network as bn
from lib.models import naive_bayes as nb
from lib.privacy.neighbours import MAX_NEIGHBOUR_CELLS


def _quick(func, match):
    start = time.monotonic()
    with pytest.raises(ValueError, match=match):
        func()
    assert time.monotonic() - start < 2  # refused before any allocation


def test_all_neighbours_refuses_large_dimensions_up_front():
    _quick(lambda: all_neighbours(np.ones(400)), rf"at most {MAX_NEIGHBOUR_CELLS} are allowed")
    _quick(lambda: all_neighbours(np.ones(5000)), "use random_neighbours")


def test_all_neighbours_still_counts_every_neighbour_below_the_limit():
    d = 40
    counts = np.arange(d, dtype=float)  # one empty bin
    out = all_neighbours(counts)
    assert out.shape == (d + (d - 1) * d, d)  # d additions; per non-empty bin 1 removal + (d - 1) moves
    assert np.all(np.abs(out - counts).sum(axis=1) <= 2)


def test_random_neighbours_refuses_huge_batches():
    _quick(lambda: random_neighbours(10**9, 10**9, max_count=5, rng=0), "at most 100000000")


def test_trigamma_series_refuses_huge_term_counts():
    _quick(lambda: trigamma_series(1.0, 10**12), "n_terms = 1000000000000")
    assert trigamma_series(1.0, 10, tail=True) == pytest.approx(np.pi**2 / 6, rel=1e-14)


def test_raw_moment_refuses_huge_orders():
    _quick(lambda: output_raw_moment([1.0, 2.0], 1.0, 1.0, 10**10), "at most 10000")


@pytest.mark.parametrize("X, y", [
    (np.array([[10**10, 0], [0, 1]]), np.array([0, 1])),   # 149 GiB before the fix
    (np.array([[0, 0], [1, 1]]), np.array([0, 10**10])),   # 298 GiB before the fix
])
def test_private_naive_bayes_refuses_an_absurd_inferred_domain(X, y):
    _quick(lambda: PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, y),
           "must be given")   # refused before anything is inferred or allocated
    if X.max() > 1:   # the non-private estimate infers n_values, and refuses an absurd one
        _quick(lambda: PrivateNaiveBayes("mle").fit(X, y), "cells")


def test_count_refuses_absurd_declared_domains():
    X, y = np.array([[0, 1]]), np.array([0])
    _quick(lambda: nb.count(X, y, [10**12, 2], 2), "cells")
    _quick(lambda: nb.count(X, y, [2, 2], 10**12), "cells")
    _quick(lambda: nb.count(X, y, [2**62, 2**62], 2), "cells")  # the int64 sum wraps around


def test_bayesian_network_caps_the_total_over_all_tables():
    n_values = [10**4] * 3
    parents = [(), (0,), (1,)]  # 1e4 + 1e8 + 1e8 cells: each table at the cap, together above it
    _quick(lambda: bn.count_tables(np.zeros((1, 3), int), n_values, parents), "tables would have")


def test_public_reference_and_gohari_releases_refuse_absurd_domains():
    from lib.mechanisms.dirichlet import approximate_dp as adp
    _quick(lambda: adp.public_reference(1000.0, [10**12], [1]), "cells")
    _quick(lambda: adp.public_reference(1000.0, [10**5], [10**4]), "public reference tables")
