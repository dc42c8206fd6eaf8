"""Audits of Theorem 1: the eq. (17) term, the exact worst case, random pairs, quadrature."""

import itertools

import numpy as np
import pytest

from lib import DirichletMechanism, all_neighbours, calibrate, rdp_epsilon, renyi_divergence_dirichlet
from lib.mechanisms.dirichlet.curve import divergence_term
from lib.theory.audit import (
    divergence_both_ways,
    random_pair_audit,
    renyi_divergence_by_quadrature,
    worst_case_divergence,
)

from tests._reference import mp_renyi_dirichlet, neighbour

LAMS = [1.0, 1.0 + 1e-9, 1.5, 2.0, 20.0, 200.0]


def _brute_force(r, alpha, lam, d, max_count, kinds=("add", "remove", "replace")):
    """Largest divergence (both ways) over every histogram in {0..max_count}^d and its neighbours."""
    best = 0.0
    for counts in itertools.product(range(max_count + 1), repeat=d):
        f = np.array(counts, float)
        others = []
        for i in range(d):
            if "add" in kinds:
                others.append(neighbour(f, "add", i, i))
            if f[i] > 0 and "remove" in kinds:
                others.append(neighbour(f, "remove", i, i))
            if f[i] > 0 and "replace" in kinds:
                others += [neighbour(f, "replace", i, j) for j in range(d) if j != i]
        g = np.array(others)
        best = max(best, float(np.max(renyi_divergence_dirichlet(r * f + alpha, r * g + alpha, lam))))
    return best


@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("eps", [1e-3, 1.0, 50.0])
def test_worst_case_equals_brute_force_over_small_histograms(eps, lam):
    r, alpha = calibrate(eps, lam)
    exhaustive = _brute_force(r, alpha, lam, d=3, max_count=3)
    assert worst_case_divergence(r, alpha, lam) == pytest.approx(exhaustive, rel=1e-9)


@pytest.mark.parametrize("lam", [1.0, 2.0, 200.0])
def test_worst_case_matches_the_mechanisms_own_neighbour_search(lam):
    mech = DirichletMechanism(0.7, lam)
    spent = max(mech.worst_neighbour(np.array(h))[0] for h in itertools.product(range(3), repeat=4))
    assert worst_case_divergence(mech.r, mech.alpha, lam) == pytest.approx(spent, rel=1e-9)


@pytest.mark.parametrize("lam", LAMS)
def test_add_remove_supremum_is_approached_but_not_exceeded(lam):
    r, alpha = calibrate(2.0, lam, l2_sq=1.0)
    sup = worst_case_divergence(r, alpha, lam, relation="add-remove")
    small = _brute_force(r, alpha, lam, d=2, max_count=3, kinds=("add", "remove"))
    assert small < sup
    # One singleton bin next to a huge bin: removing the singleton approaches the supremum.
    values = []
    for big in (10.0, 1e3, 1e6, 1e9):
        f = np.array([1.0, big])
        values.append(divergence_both_ways(r * f + alpha, r * np.array([0.0, big]) + alpha, lam))
    assert np.all(np.diff(values) > 0) and values[-1] < sup
    # The gap is the eq. (17) term of the total, about lam r / (2 big) for large totals.
    assert values[-1] == pytest.approx(sup, rel=1e-6)


def test_replace_worst_case_is_the_beta_pair_and_above_add_remove():
    r, alpha = np.array([1e-3, 0.3, 5.0]), np.array([1.0, 2.5, 80.0])
    for lam in (1.0, 3.0):
        beta_pair = renyi_divergence_dirichlet(np.stack([alpha + r, alpha], -1), np.stack([alpha, alpha + r], -1), lam)
        # Forming u - v from alpha + r rounds delta; ten digits is the documented accuracy.
        np.testing.assert_allclose(worst_case_divergence(r, alpha, lam), beta_pair, rtol=1e-9)
        assert np.all(worst_case_divergence(r, alpha, lam) > worst_case_divergence(r, alpha, lam, relation="add-remove"))


def test_worst_case_against_mpmath():
    for lam, eps in [(1.0, 0.1), (2.0, 3.0), (200.0, 1e-3), (20.0, 500.0)]:
        r, alpha = calibrate(eps, lam)
        reference = mp_renyi_dirichlet([alpha + r, alpha], [alpha, alpha + r], lam)
        assert worst_case_divergence(r, alpha, lam) == pytest.approx(reference, rel=1e-9)


@pytest.mark.parametrize("lam", LAMS)
def test_theorem_1_worst_case_below_epsilon(lam):
    eps = np.logspace(-6, 4, 101)
    r, alpha = calibrate(eps, lam)
    assert np.all(worst_case_divergence(r, alpha, lam) < eps)
    r1, alpha1 = calibrate(eps, lam, l2_sq=1.0)
    assert np.all(worst_case_divergence(r1, alpha1, lam, relation="add-remove") < eps)


def test_divergence_is_the_sum_of_eq_17_terms():
    rng = np.random.default_rng(0)
    u = rng.uniform(1, 30, size=(200, 5))
    v = u - rng.choice([-1.0, 0.0, 1.0], size=u.shape) * rng.uniform(0, 0.5, size=(200, 1))
    lam = rng.choice([1.0, 2.0, 7.0], size=200)
    terms = divergence_term(u, u - v, lam[:, None]).sum(-1) - divergence_term(u.sum(-1), (u - v).sum(-1), lam)
    np.testing.assert_allclose(terms, renyi_divergence_dirichlet(u, v, lam), rtol=1e-8, atol=1e-13)


def test_divergence_term_is_nonnegative_and_decreasing_in_a():
    a = np.logspace(1, 4, 400)  # a + (lam - 1) delta > 0 for every case below
    for lam in (1.0, 1.5, 4.0, 100.0):
        for delta in (-0.05, 0.05, 0.09):
            phi = divergence_term(a, delta, lam)
            assert np.all(phi > 0) and np.all(np.diff(phi) < 0)
        assert divergence_term(3.0, 0.0, lam) == 0.0


def test_divergence_term_infinite_where_eq_16_diverges():
    assert divergence_term(1.0, -0.5, 3.0) == np.inf  # 1 + 2 (-0.5) = 0
    assert worst_case_divergence(1.0, 1.0, 2.0) == np.inf  # alpha <= (lam - 1) r
    assert np.isfinite(worst_case_divergence(1.0, 1.0 + 1e-9, 2.0))


@pytest.mark.parametrize(
    "u, v, lam",
    [([2.5, 4.0], [3.0, 3.2], 2.0), ([1.4, 1.0], [1.0, 1.4], 1.0), ([3.0, 1.2, 2.0], [2.5, 1.7, 2.0], 3.0),
     ([2.0, 3.0, 4.0], [2.0, 2.0, 5.0], 1.0)],
)
def test_quadrature_matches_eq_16(u, v, lam):
    assert renyi_divergence_by_quadrature(u, v, lam) == pytest.approx(renyi_divergence_dirichlet(u, v, lam), rel=1e-8)


def test_random_pair_audit_shapes_and_claim():
    res = random_pair_audit(20, dims=(2, 7, 30), max_counts=(0, 1, 100), rng=5)
    n = 20 * 3 * 3
    assert all(len(column) == n for column in res)
    assert set(res.kind) == {"add", "remove", "move"}
    assert np.all(res.empty_bins[res.max_count == 0] == res.d[res.max_count == 0])
    assert np.any((res.empty_bins > 0) & (res.max_count == 100))
    assert np.any(res.lam == 1.0) and res.lam.max() > 10
    np.testing.assert_allclose(rdp_epsilon(res.r, res.lam), res.epsilon, rtol=1e-12)
    assert np.all(res.divergence < res.epsilon)
    assert np.all(res.divergence <= res.worst_case * (1 + 1e-9))
    again = random_pair_audit(20, dims=(2, 7, 30), max_counts=(0, 1, 100), rng=5)
    np.testing.assert_array_equal(res.divergence, again.divergence)


def test_all_neighbours_cover_the_brute_force_relation():
    f = np.array([2.0, 0.0, 1.0])
    assert len(all_neighbours(f)) == 3 + 2 + 4


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: worst_case_divergence(0.0, 1.0, 2.0), "r must be in"),
        (lambda: worst_case_divergence(1.0, -1.0, 2.0), "alpha must be in"),
        (lambda: worst_case_divergence(1.0, 5.0, 0.5), "lam must be in"),
        (lambda: worst_case_divergence(1.0, 5.0, 2.0, relation="swap"), "relation must be one of"),
        (lambda: divergence_term(1.0, 1.0, 2.0), "delta must be below a"),
        (lambda: divergence_term(1.0, np.nan, 2.0), "delta must be finite"),
        (lambda: random_pair_audit(0), "pairs_per_cell must be"),
        (lambda: random_pair_audit(2, epsilon=(3.0, 1.0)), "epsilon must be a range"),
        (lambda: random_pair_audit(2, share_lam_one=1.5), "share_lam_one must be in"),
        (lambda: random_pair_audit(2, dims=()), "must not be empty"),
        (lambda: renyi_divergence_by_quadrature([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], 2.0), "length 2 or 3"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
