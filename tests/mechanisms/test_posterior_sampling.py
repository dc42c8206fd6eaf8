"""Tests of lib.mechanisms.posterior_sampling: Geumlek et al.'s posterior samplers, exact worst cases, calibration."""

import mpmath
import numpy as np
import pytest

from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib.mechanisms import protocol
from lib.privacy.accounting import rdp_to_dp
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.mechanisms.posterior_sampling import (ConcentratedPosterior, DiffusedPosterior, TruePosterior, add_divergence,
                                    brute_force_worst_case, calibrate_scale, critical_order, gaussian_sigma,
                                    geumlek_bound, move_divergence, remove_divergence, worst_case)
from lib.mechanisms.protocol import ReleaseSpec

KINDS = ("diffused", "concentrated")


def _random_case(rng, kind, max_cells=6):
    d = int(rng.integers(2, 4))
    rows = int(rng.integers(1, 3))
    n = int(rng.integers(1, 5 if rows * d > 4 else 7))
    a = rng.uniform(0.3, 4, size=d)
    s = float(rng.uniform(0.05, 1))
    lam = float(rng.uniform(1.1, min(0.95 * critical_order(a, s), 30)))
    return a, s, lam, n, rows


@pytest.mark.parametrize("kind", KINDS)
def test_one_row_worst_case_equals_brute_force(kind):
    """One vector with a public total: the vertex formula is the exact maximum over every data set."""
    rng = np.random.default_rng(11)
    for _ in range(15):
        a, s, lam, n, _ = _random_case(rng, kind)
        exact = brute_force_worst_case(a, s, lam, n, rows=1, kind=kind)
        # both sides evaluate the same closed form: agreement to rounding
        assert worst_case(a, s, lam, n, rows=1, kind=kind) == pytest.approx(exact, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("kind", KINDS)
def test_table_worst_case_bounds_brute_force(kind):
    """Several rows with private totals: an upper bound, at most 6% above the exact maximum."""
    rng = np.random.default_rng(12)
    ratios = []
    for _ in range(15):
        a, s, lam, n, _ = _random_case(rng, kind)
        exact = brute_force_worst_case(a, s, lam, n, rows=2, kind=kind)
        ratios.append(worst_case(a, s, lam, n, rows=2, kind=kind) / exact)
    assert min(ratios) >= 1 - 1e-9  # never below the truth (rounding only)
    assert max(ratios) <= 1.06  # the sum of separate maxima ignores n_p + n_q <= N: a few per cent


def test_vertices_attain_the_maximum_over_each_triangle():
    """The move, addition and removal divergences peak at a vertex of their reachable triangle (N = 200)."""
    rng = np.random.default_rng(13)
    n = 200
    x, y = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
    for _ in range(15):
        ai, aj = rng.uniform(0.3, 5, 2)
        total = ai + aj + rng.uniform(0, 5)
        s = float(rng.uniform(0.02, 1))
        lam = float(rng.uniform(1.1, min(0.97 * (1 + min(ai, aj) / s), 50)))
        m = (x >= 1) & (x + y <= n)
        full = move_divergence(ai, aj, x[m], y[m], s, lam).max()
        vert = move_divergence(ai, aj, np.array([1, n, 1]), np.array([0, 0, n - 1]), s, lam).max()
        assert vert == pytest.approx(full, rel=1e-12)
        m = x <= y  # (c, n): 0 <= c <= n
        full = add_divergence(aj, total, x[m], y[m], s, lam).max()
        vert = add_divergence(aj, total, np.array([0, 0, n]), np.array([0, n, n]), s, lam).max()
        assert vert == pytest.approx(full, rel=1e-12)
        m = (x >= 1) & (x <= y)
        full = remove_divergence(ai, total, x[m], y[m], s, lam).max()
        vert = remove_divergence(ai, total, np.array([1, 1, n]), np.array([1, n, n]), s, lam).max()
        assert vert == pytest.approx(full, rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rows", (1, 3))
def test_worst_case_increases_with_the_scale(kind, rows):
    """The property the bisection needs: strictly increasing in r (or m) wherever finite."""
    scales = np.geomspace(1e-6, 1, 150)
    for lam in (1.5, 3.0, 10.0, 100.0):
        w = worst_case([1.0, 2.0, 0.7], scales, lam, 1000, rows=rows, kind=kind)
        finite = np.isfinite(w)
        assert finite[0] and np.all(np.diff(w[finite]) > 0)
        first_inf = finite.sum()  # once infinite, infinite for all larger scales
        assert np.all(finite[:first_inf]) and not np.any(finite[first_inf:])


def _beta_renyi_mpmath(p, q, lam):
    """D_lam(Beta(p) || Beta(q)) by numerical integration at 30 digits."""
    with mpmath.workdps(30):
        def logpdf(t, a, b):
            return (a - 1) * mpmath.log(t) + (b - 1) * mpmath.log(1 - t) - mpmath.log(mpmath.beta(a, b))
        f = lambda t: mpmath.exp(lam * logpdf(t, *p) + (1 - lam) * logpdf(t, *q))  # noqa: E731
        return float(mpmath.log(mpmath.quad(f, [0, 0.5, 1])) / (lam - 1))


def test_candidate_divergences_against_mpmath():
    """The Beta reductions of a move, an addition and a removal against direct integration."""
    cases = [(move_divergence, (6.0, 12.0, 1, 0, 0.5, 3.0), ((6.5, 12.0), (6.0, 12.5), 3.0)),
             (add_divergence, (2.0, 5.0, 0, 0, 0.3, 4.0), ((2.0, 3.0), (2.3, 3.0), 4.0)),
             (remove_divergence, (1.5, 4.0, 3, 10, 0.2, 2.5), ((2.1, 3.9), (1.9, 3.9), 2.5))]
    for fn, args, (p, q, lam) in cases:
        assert fn(*args) == pytest.approx(_beta_renyi_mpmath(p, q, lam), rel=1e-8)


def test_move_reduces_to_two_coordinates():
    """The Dirichlet divergence of a move equals the Beta divergence of the two coordinates involved."""
    u = np.array([3.0, 1.5, 7.0, 2.2])
    v = u + 0.4 * (np.eye(4)[1] - np.eye(4)[2])
    assert renyi_divergence_dirichlet(u, v, 3.0) == pytest.approx(move_divergence(u[2], u[1], 0, 0, 0.4, 3.0),
                                                                  rel=1e-12)


def test_critical_order_is_corollary_1():
    """Beta(6, 12): the true posterior is RDP exactly below 1 + min(6, 12) = 7."""
    a = [6.0, 12.0]
    assert critical_order(a, 1.0) == 7.0
    assert np.isfinite(worst_case(a, 1.0, 7 - 1e-9, 100))
    assert np.isinf(worst_case(a, 1.0, 7.0, 100)) and np.isinf(worst_case(a, 1.0, 8.0, 100))
    assert np.isfinite(worst_case(a, 0.5, 12.9, 100)) and np.isinf(worst_case(a, 0.5, 13.0, 100))


@pytest.mark.parametrize("kind", KINDS)
def test_calibration_is_solved_to_rounding(kind):
    eps = np.array([1e-4, 0.01, 0.3, 2.0])
    for rows, lam in ((1, 2.0), (2, 5.0), (1, 15.0)):
        s = calibrate_scale(eps, lam, [6.0, 12.0], 100, rows=rows, kind=kind)
        below = worst_case([6.0, 12.0], s, lam, 100, rows=rows, kind=kind)
        above = worst_case([6.0, 12.0], s * (1 + 1e-9), lam, 100, rows=rows, kind=kind)
        assert np.all(below <= eps)
        # a scale larger by 1e-9 (relative) is infeasible unless s = 1: the root is exact to
        # far below the divergence's own accuracy (about 1e-10 relative)
        assert np.all((s == 1) | (above > eps))


def test_calibration_returns_one_when_the_true_posterior_suffices():
    assert calibrate_scale(0.2, 2.0, [6.0, 12.0], 100) == 1.0  # true posterior: 0.1913 at lam = 2
    assert calibrate_scale(0.19, 2.0, [6.0, 12.0], 100) < 1.0


def test_geumlek_bound_and_the_unscaled_corners():
    """Their relaxation matches the exact case for Beta-Bernoulli; corners at n (not rn) under-estimate."""
    a = [6.0, 12.0]
    for r in (0.1, 0.5, 0.9):
        exact = worst_case(a, r, 5.0, 100)
        assert geumlek_bound(a, r, 5.0, 100) == pytest.approx(exact, rel=1e-12)
        assert geumlek_bound(a, r, 5.0, 100, scale_corners=False) < exact
    # d = 3: the relaxation moves records out of empty bins and over-estimates
    assert geumlek_bound([2.0, 3.0, 4.0], 1.0, 1.5, 50) > 1.2 * worst_case([2.0, 3.0, 4.0], 1.0, 1.5, 50)


def test_gaussian_constants():
    """Mironov's exact Gaussian RDP, by integration, and the factor 2 in Geumlek et al.'s printed constant."""
    sigma = gaussian_sigma(0.5, 4.0)
    with mpmath.workdps(30):
        f = lambda t: mpmath.npdf(t, 0, sigma) ** 4 * mpmath.npdf(t, 1, sigma) ** (-3)  # noqa: E731
        exact = float(mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf])) / 3)
    assert exact == pytest.approx(0.5, rel=1e-10)
    assert gaussian_sigma(0.5, 4.0, printed=True) / sigma == pytest.approx(np.sqrt(2), rel=1e-14)


@pytest.mark.parametrize("cls", (DiffusedPosterior, ConcentratedPosterior))
def test_mechanism_protocol(cls):
    spec = ReleaseSpec(((1, 2), (2, 5)), 500)
    mech = cls._renyi_release(RenyiDP(5.0, 0.3), spec, 1)
    assert mech.guarantee.lam == 5.0 and mech.guarantee.epsilon == 0.3
    assert mech.guarantee.curve(5.0) <= 0.3 and mech.guarantee.curve(3.0) < 0.3
    y = mech.release(np.zeros((7, 2, 5)), rng=1)
    assert y.shape == (7, 2, 5) and np.all(y > 0) and np.allclose(y.sum(-1), 1)
    assert protocol.get(cls.name) is cls
    cal = cls.calibrate(RenyiDP(5.0, 1.0), spec)
    assert len(cal.releases) == 2
    assert all(m.guarantee.curve(5.0) <= 0.5 * (1 + 1e-12) for m in cal.releases)


@pytest.mark.parametrize("cls", (DiffusedPosterior, ConcentratedPosterior))
def test_calibrate_dp_meets_the_target(cls):
    spec = ReleaseSpec(((1, 2), (2, 10), (2, 4)), 5000)
    cache = {}
    cal = cls.calibrate(ApproximateDP(1.0, 1e-5), spec, cache=cache)
    assert cal.attained and cls.calibrate(ApproximateDP(1.0, 1e-5), spec, cache=cache).releases is cal.releases
    lam = cal.parameters["lam"]
    spent = sum(m.guarantee.curve(lam) for m in cal.releases)
    assert rdp_to_dp(spent, lam, 1e-5) <= 1.0 + 1e-9


def test_release_matches_the_posterior_mean():
    """Mean of 20000 draws within 5 standard errors of (b + s c) / total."""
    counts = np.array([30.0, 5.0, 0.0])
    for mech, conc in ((DiffusedPosterior(0.2, 1.0), 1 + 0.2 * counts),
                       (ConcentratedPosterior(0.5, 1.0), 2 + counts)):
        y = mech.release(np.broadcast_to(counts, (20000, 3)), rng=np.random.default_rng(5))
        se = y.std(axis=0) / np.sqrt(len(y))
        assert np.all(np.abs(y.mean(axis=0) - conc / conc.sum()) < 5 * se)


def test_true_posterior_refuses_an_unreachable_target():
    spec = ReleaseSpec(((1, 2),), 100)
    with pytest.raises(ValueError, match="above epsilon"):
        TruePosterior._renyi_release(RenyiDP(2.0, 0.1), spec, 0)
    assert TruePosterior._renyi_release(RenyiDP(1.5, 10.0), spec, 0).scale == 1.0


@pytest.mark.parametrize("bad", [
    dict(prior=[1.0, -1.0]), dict(prior=[[1.0, 1.0]]), dict(lam=1.0), dict(kind="other"), dict(n_total=0),
    dict(scale=0.0),
])
def test_validation(bad):
    args = dict(prior=[1.0, 2.0], scale=0.5, lam=2.0, n_total=10, kind="diffused") | bad
    with pytest.raises(ValueError):
        worst_case(args["prior"], args["scale"], args["lam"], args["n_total"], kind=args["kind"])


def test_scale_must_be_in_unit_interval():
    with pytest.raises(ValueError, match="scale"):
        DiffusedPosterior(1.5)


@pytest.mark.parametrize("cls", (DiffusedPosterior, ConcentratedPosterior))
def test_grid_calibration_matches_one_at_a_time(cls):
    spec = ReleaseSpec(((1, 2), (2, 10), (2, 4), (2, 10)), 5000)
    grid = cls.calibrate_many([RenyiDP(5.0, 0.1), RenyiDP(5.0, 2.0)], spec)
    one = cls.calibrate(RenyiDP(5.0, 2.0), spec)
    assert [m.scale for m in grid[1].releases] == [m.scale for m in one.releases]
    assert one.releases[1] is one.releases[3] and one.releases[1] is not one.releases[2]


def test_gaussian_kl_converges_and_vanishes_without_noise():
    from lib.mechanisms.posterior_sampling import gaussian_posterior_kl
    for sigma in (0.5, 30.0, 300.0):
        coarse, atoms = gaussian_posterior_kl(38, 100, [6.0, 12.0], sigma)
        fine, _ = gaussian_posterior_kl(38, 100, [6.0, 12.0], sigma, nodes=800)
        assert coarse == pytest.approx(fine, rel=1e-8, abs=1e-12)  # quadrature converged
    assert gaussian_posterior_kl(38, 100, [6.0, 12.0], 0.01)[0] < 1e-10  # no noise: A = P
    assert atoms > 0.8  # huge noise: the clamp puts most mass on S = 0 and S = n


@pytest.mark.parametrize("cls", [TruePosterior, DiffusedPosterior, ConcentratedPosterior], ids=lambda c: c.name)
def test_registered_samplers_pickle_release_on_the_simplex_and_state_a_guarantee(cls):
    import pickle

    assert protocol.get(cls.name) is cls
    spec = ReleaseSpec(((1, 3), (2, 3)), 40)
    (first, second) = cls.calibrate(RenyiDP(1.5, 4.0), spec).releases
    for mech, counts in ((first, np.array([[10, 20, 10], [0, 0, 40]])), (second, np.array([[3, 0, 7], [5, 5, 20]]))):
        g = mech.guarantee
        assert isinstance(g, RenyiDP) and (g.lam, g.epsilon) == (1.5, 2.0)
        assert g.curve(1.5) <= g.epsilon  # the worst case at the order stated
        copy = pickle.loads(pickle.dumps(mech))
        y = copy.release(counts, rng=np.random.default_rng(3))
        assert np.array_equal(y, mech.release(counts, rng=np.random.default_rng(3)))
        assert y.shape == counts.shape and np.all(y > 0) and np.allclose(y.sum(axis=-1), 1.0)
    # the true posterior above its critical order 1 + min(prior) = 2 states no finite level: refused
    if cls is TruePosterior:
        with pytest.raises(ValueError, match="true posterior is"):
            cls.calibrate(RenyiDP(2.5, 100.0), spec)
