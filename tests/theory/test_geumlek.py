"""Tests of lib.theory.geumlek: the paper's own objects against lib.mechanisms.posterior_sampling and lib.mechanisms.dirichlet.divergence."""

import numpy as np
import pytest
from scipy import integrate, special, stats

from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.theory.geumlek import (corollary2_excess, corollary2_excess_sweep, corollary2_relaxation,
                                heldout_neg_loglik, log_partition, pset_corners, pset_supremum,
                                renyi_natural, theorem12_critical_order)
from lib.mechanisms.posterior_sampling import brute_force_worst_case, geumlek_bound, worst_case


def test_log_partition_is_log_beta_and_inf_outside_e():
    assert np.isclose(log_partition([6.0, 18.0]), np.log(special.beta(6.0, 12.0)), rtol=1e-13)
    assert np.isinf(log_partition([0.0, 3.0])) and np.isinf(log_partition([3.0, 3.0]))


def test_eq5_against_quadrature():
    # eq. (5) against direct integration of p^lam q^(1-lam) for two Beta laws
    p, q, lam = np.array([3.0, 7.0]), np.array([4.0, 9.5]), 2.7
    f = lambda t: np.exp(lam * stats.beta.logpdf(t, p[0], p[1] - p[0])
                         + (1 - lam) * stats.beta.logpdf(t, q[0], q[1] - q[0]))
    direct = np.log(integrate.quad(f, 0, 1, epsabs=0, epsrel=1e-12)[0]) / (lam - 1)
    assert np.isclose(renyi_natural(p, q, lam), direct, rtol=1e-9)


def test_eq5_against_dirichlet_divergence():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a, b, lam = rng.uniform(1, 30, 2), rng.uniform(-0.9, 0.9, 2), rng.uniform(1.05, 4)
        p, q = np.array([a[0], a.sum()]), np.array([a[0] + b[0], a.sum() + b[0] + b[1]])
        assert np.isclose(renyi_natural(p, q, lam),
                          renyi_divergence_dirichlet(a, a + b, lam), rtol=1e-9)


def test_eq5_infinite_when_mixture_not_normalizable():
    assert np.isinf(renyi_natural([1.0, 3.0], [2.0, 4.0], 3.0))  # alpha: 3*1 - 2*2 < 0


def test_critical_order_from_definition_matches_corollary_1():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a0, b0 = rng.uniform(0.1, 50, 2)
        assert np.isclose(theorem12_critical_order([a0, a0 + b0]), 1 + min(a0, b0), rtol=1e-12)


def test_pset_corners():
    assert np.array_equal(pset_corners([6.0, 18.0], 30.0), [[6.0, 48.0], [36.0, 48.0]])


@pytest.mark.parametrize("kind", ["diffused", "concentrated"])
def test_relaxation_and_supremum_against_posterior_sampling(kind):
    prior = np.array([6.0, 12.0])
    for s in (0.1, 0.5, 1.0):
        for lam in (1.05, 1.5, 2.0, 5.0):
            if lam >= 1 + 6 / s:
                continue
            eta0 = np.array([6.0, 18.0]) if kind == "diffused" else np.array([6.0, 18.0]) / s
            mass, step = (s, s) if kind == "diffused" else (1.0, 1.0)
            relaxed = corollary2_relaxation(eta0, mass * 100, step, lam)
            exact = pset_supremum(eta0, 100, mass, lam)
            assert np.isclose(relaxed, geumlek_bound(prior, s, lam, 100, kind=kind), rtol=1e-9)
            assert np.isclose(exact, worst_case(prior, s, lam, 100, kind=kind), rtol=1e-9)
            if lam < 2:
                assert relaxed > exact * (1 + 1e-6)  # strictly larger below order 2
            else:
                assert np.isclose(relaxed, exact, rtol=1e-12)


def test_supremum_against_brute_force_small_n():
    eta0 = np.array([1.5, 4.0])
    for r, lam in ((0.4, 1.7), (1.0, 1.3), (0.2, 6.0)):
        assert np.isclose(pset_supremum(eta0, 4, r, lam),
                          brute_force_worst_case([1.5, 2.5], r, lam, 4), rtol=1e-9)


def test_supremum_infinite_beyond_critical_order():
    assert np.isinf(pset_supremum([6.0, 18.0], 100, 1.0, 7.5))
    assert np.isinf(corollary2_relaxation([6.0, 18.0], 100, 1.0, 7.5))


def test_heldout_readings_differ_by_log_binomial():
    theta, k = np.array([0.3, 0.5, 0.9]), np.array([40, 50, 61])
    seq = heldout_neg_loglik(theta, k, 100, reading="sequence")
    cnt = heldout_neg_loglik(theta, k, 100, reading="count")
    assert np.allclose(cnt, -stats.binom.logpmf(k, 100, theta), rtol=1e-12)
    assert np.allclose(seq - cnt, np.log([special.comb(100, int(x)) for x in k]), rtol=1e-12)


def test_corollary2_excess_against_brute_force_over_reachable_pairs():
    # the supremum by direct enumeration of the reachable Beta parameters, both directions,
    # with SciPy's betaln (an independent log-partition), against corollary2_excess's "exact"
    def brute(a0, b0, n, scale, lam, kind):
        w, prior = (scale, np.array([a0, b0])) if kind == "diffused" else (1.0, np.array([a0, b0]) / scale)
        best = 0.0
        for k in range(n):
            p = prior + w * np.array([k, n - k])
            q = prior + w * np.array([k + 1, n - k - 1])
            for x, y in ((p, q), (q, p)):
                mix = lam * x + (1 - lam) * y
                d = (special.betaln(*mix) - lam * special.betaln(*x)) / (lam - 1) + special.betaln(*y)
                best = max(best, d)
        return best

    rng = np.random.default_rng(11)
    for _ in range(20):
        a0, b0 = rng.uniform(0.5, 20, 2)
        n, scale = int(rng.integers(1, 60)), rng.uniform(0.05, 1)
        kind = ("diffused", "concentrated")[int(rng.integers(2))]
        lam = rng.uniform(1.01, min(4.0, 1 + min(a0, b0) / scale))
        out = corollary2_excess([a0, a0 + b0], n, scale, lam, kind=kind)
        assert np.isclose(out["exact"], brute(a0, b0, n, scale, lam, kind), rtol=1e-9)
        assert out["relaxed"] >= out["exact"] * (1 - 1e-9)
        if np.isfinite(out["relaxed"]):
            expected = 0.0 if np.isclose(out["relaxed"], out["exact"], rtol=1e-9) else out["relaxed"] / out["exact"] - 1
            assert out["excess"] == expected


def test_corollary2_excess_agrees_with_the_books_bounds():
    prior = np.array([6.0, 12.0])
    for kind in ("diffused", "concentrated"):
        for scale, lam in ((0.5, 1.2), (1.0, 1.5), (0.3, 2.5)):
            out = corollary2_excess([6.0, 18.0], 100, scale, lam, kind=kind)
            assert np.isclose(out["relaxed"], geumlek_bound(prior, scale, lam, 100, kind=kind), rtol=1e-9)
            assert np.isclose(out["exact"], worst_case(prior, scale, lam, 100, kind=kind), rtol=1e-9)
            assert (out["excess"] > 1e-6) if lam < 2 else (out["excess"] == 0.0)


def test_corollary2_excess_infinite_when_an_unreachable_neighbour_is_not_normalizable():
    # alpha0 = 0.3 < r = 0.5: eta_P - (r, 0) at the corner with no successes has a negative alpha
    out = corollary2_excess([0.3, 5.3], 50, 0.5, 1.3, kind="diffused")
    assert np.isinf(out["relaxed"]) and np.isfinite(out["exact"]) and np.isinf(out["excess"])


def test_corollary2_excess_sweep_draws_within_its_ranges():
    table = corollary2_excess_sweep(np.random.default_rng(3), 60, prior_range=(0.5, 10),
                                    n_range=(5, 50), scale_range=(0.1, 0.9), orders=(1.0, 2.0))
    assert len(table) == 60 and set(table.kind) <= {"diffused", "concentrated"}
    assert table.alpha0.between(0.5, 10).all() and table.beta0.between(0.5, 10).all()
    assert table.n.between(5, 50).all() and table.scale.between(0.1, 0.9).all()
    critical = 1 + np.minimum(table.alpha0, table.beta0) / table.scale
    assert ((table["lambda"] > 1) & (table["lambda"] < np.minimum(2.0, critical))).all()
    again = corollary2_excess_sweep(np.random.default_rng(3), 60, prior_range=(0.5, 10),
                                    n_range=(5, 50), scale_range=(0.1, 0.9), orders=(1.0, 2.0))
    assert table.equals(again)
    # from order 2 on the check equals the supremum on these draws
    above = corollary2_excess_sweep(np.random.default_rng(4), 30, prior_range=(2, 10),
                                    n_range=(5, 50), scale_range=(0.1, 0.9), orders=(2.0, 4.0))
    assert (above.excess == 0).all()


@pytest.mark.parametrize("call, match", [
    (lambda: heldout_neg_loglik(0.5, 50, 100, reading="pmf"), "reading"),
    (lambda: heldout_neg_loglik(0.5, 101, 100, reading="count"), "k must lie"),
    (lambda: renyi_natural([1.0, 0.5], [1.0, 3.0], 2.0), "eta_p"),
    (lambda: renyi_natural([1.0, 3.0], [1.0, 3.0], 1.0), "lam"),
    (lambda: pset_corners([1.0, 2.0, 3.0], 3), "length 2"),
    (lambda: pset_supremum([1.0, 3.0], 0, 1.0, 2.0), "n"),
    (lambda: corollary2_relaxation([1.0, 3.0], 5, -1.0, 2.0), "step"),
    (lambda: theorem12_critical_order([2.0, 1.0]), "eta0"),
    (lambda: corollary2_excess([6.0, 18.0], 10, 0.5, 1.5, kind="other"), "kind"),
    (lambda: corollary2_excess([6.0, 18.0], 10, 0.5, 30.0, kind="diffused"), "critical order"),
    (lambda: corollary2_excess([6.0, 18.0], 10, 0.0, 1.5, kind="diffused"), "scale"),
    (lambda: corollary2_excess([6.0, 5.0], 10, 0.5, 1.5, kind="diffused"), "eta0"),
    (lambda: corollary2_excess_sweep(np.random.default_rng(0), 0), "settings"),
    (lambda: corollary2_excess_sweep(0, 5), "rng"),
    (lambda: corollary2_excess_sweep(np.random.default_rng(0), 5, orders=(2.0, 1.5)), "orders"),
    (lambda: corollary2_excess_sweep(np.random.default_rng(0), 5, n_range=(0, 5)), "n_range"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
