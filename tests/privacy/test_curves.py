"""The exact Renyi curves the guarantees carry, against brute force and against the theorems.

The Dirichlet mechanism's curve (:mod:`lib.mechanisms.dirichlet.curve`) is checked at random
settings and random orders, inside and beyond Theorem 1's domain, against the largest divergence
over every neighbouring pair of small histograms (:func:`lib.privacy.neighbours.all_neighbours`,
divergences both ways from :func:`lib.theory.audit.divergence_both_ways`): never below it, equal
at the pair that attains it; and against Theorem 1 (never above its level at the calibrated
order). The calibration against the exact curve is audited the same way.
"""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest

from lib import DirichletMechanism, calibrate
from lib.mechanisms.dirichlet.curve import (DirichletCurve, ExactCalibration, calibrate_exact, calibrate_exact_many,
                                            exact_curve, exact_epsilon_hat, exact_scale, order_limit)
from lib.mechanisms.noise import GaussianMechanism
from lib.privacy.accountant import Accountant, pure_dp_to_rdp
from lib.privacy.accounting import dp_to_rdp, rdp_to_dp
from lib.privacy.guarantees import RenyiDP
from lib.privacy.neighbours import all_neighbours
from lib.theory.audit import divergence_both_ways, renyi_divergence_by_quadrature
from tests._reference import exact_level_by_bisection

RTOL = 1e-9
SETTINGS = np.random.default_rng(26).uniform(size=(8, 4))  # (epsilon, lam, order, d) draws, fixed


def setting(k):
    """Algorithm 1 at a random (epsilon, lam), an order in (1, limit), and a number of bins."""
    eps = float(10 ** (-2 + 3 * SETTINGS[k, 0]))            # 0.01 .. 10
    lam = float(1.2 + 30 * SETTINGS[k, 1] ** 2)             # 1.2 .. 31.2
    r, alpha = calibrate(eps, lam)
    limit = float(order_limit(r, alpha))
    order = float(1 + (limit - 1) * (0.05 + 0.9 * SETTINGS[k, 2]))   # anywhere below the limit
    d = 2 + int(3 * SETTINGS[k, 3])                          # 2 .. 4
    return eps, lam, r, alpha, order, d


def brute_force(r, alpha, lam, d, max_count=2):
    """The largest divergence (both ways) over every histogram in {0..max_count}^d and its neighbours."""
    best, pair = 0.0, None
    for counts in itertools.product(range(max_count + 1), repeat=d):
        f = np.array(counts, float)
        g = all_neighbours(f)
        div = divergence_both_ways(r * f + alpha, r * g + alpha, lam)
        i = int(np.argmax(div))
        if div[i] > best:
            best, pair = float(div[i]), (f, g[i])
    return best, pair


def mp_dirichlet_renyi(a, b, lam):
    """D_lam(Dir(a) || Dir(b)) from the log-Beta closed form, in mpmath at 50 digits."""
    with mp.workdps(50):
        a, b = [mp.mpf(float(v)) for v in a], [mp.mpf(float(v)) for v in b]
        lam = mp.mpf(float(lam))
        mix = [lam * u + (1 - lam) * v for u, v in zip(a, b)]

        def log_beta(x):
            return mp.fsum(mp.loggamma(v) for v in x) - mp.loggamma(mp.fsum(x))

        return float((log_beta(mix) - lam * log_beta(a) - (1 - lam) * log_beta(b)) / (lam - 1))


@pytest.mark.parametrize("k", range(len(SETTINGS)))
def test_exact_curve_is_the_brute_force_worst_case(k):
    eps, lam, r, alpha, order, d = setting(k)
    curve = DirichletMechanism(eps, lam).guarantee.curve
    for at in (order, lam, 1 + (order - 1) / 3):
        exhaustive, (f, g) = brute_force(r, alpha, at, d)
        stated = float(curve(at))
        assert exhaustive <= stated * (1 + RTOL), (k, at, exhaustive, stated)
        assert exhaustive == pytest.approx(stated, rel=RTOL)    # equal: the worst pair is among them
        # the attaining pair moves the only record of a bin into an empty bin
        changed = f != g
        assert changed.sum() == 2 and sorted(f[changed]) == [0.0, 1.0] and sorted(g[changed]) == [0.0, 1.0]
        reference = max(mp_dirichlet_renyi(r * f + alpha, r * g + alpha, at),
                        mp_dirichlet_renyi(r * g + alpha, r * f + alpha, at))
        assert reference == pytest.approx(stated, rel=1e-8)


@pytest.mark.parametrize("k", range(len(SETTINGS)))
def test_exact_curve_is_never_above_theorem_1_at_the_calibrated_order(k):
    eps, lam, r, alpha, _, _ = setting(k)
    g = DirichletMechanism(eps, lam).guarantee
    assert isinstance(g, RenyiDP) and (g.lam, g.epsilon) == (lam, eps)
    assert float(g.curve(lam)) <= eps * (1 + 1e-12)


def test_exact_curve_is_vectorised_and_non_decreasing_in_the_order():
    curve = DirichletCurve(0.5, 9.0)
    orders = np.linspace(1.0, 25.0, 97)
    values = curve(orders)
    assert values.shape == orders.shape
    np.testing.assert_array_equal(values, [float(curve(v)) for v in orders])
    finite = values[np.isfinite(values)]
    assert np.all(np.diff(finite) >= 0) and finite[0] > 0   # order 1: the worst-case KL divergence
    assert np.all(np.isinf(values[orders >= curve.limit])) and np.all(np.isfinite(values[orders < curve.limit]))


def test_order_limit_is_one_plus_alpha_over_r_not_theorem_1s_domain():
    """The divergence is finite up to 1 + alpha/r; Theorem 1 covers orders up to 1 + (alpha - 1)/r only."""
    r, alpha = 0.8, 2.5
    limit = float(order_limit(r, alpha))
    assert limit == pytest.approx(1 + alpha / r, rel=1e-15)
    theorem_domain = 1 + (alpha - 1) / r
    between = 0.5 * (theorem_domain + limit)
    u, v = np.array([alpha + r, alpha]), np.array([alpha, alpha + r])   # f = (1, 0), f' = (0, 1)
    quadrature = renyi_divergence_by_quadrature(u, v, between)
    assert np.isfinite(quadrature) and quadrature == pytest.approx(float(DirichletCurve(r, alpha)(between)), rel=1e-6)
    assert np.isinf(DirichletCurve(r, alpha)(limit)) and np.isfinite(DirichletCurve(r, alpha)(limit * (1 - 1e-9)))
    assert float(order_limit(r, alpha, linf=2.0)) == pytest.approx(1 + alpha / (2 * r), rel=1e-15)


@pytest.mark.parametrize("k", range(3))
def test_add_remove_and_weighted_records(k):
    eps, lam, _, _, order, d = setting(k)
    r, alpha = calibrate(eps, lam, l2_sq=1.0)
    curve = exact_curve(r, alpha, l2_sq=1.0, linf=1.0)
    assert curve.relation == "add-remove"
    assert float(curve(lam)) <= eps * (1 + 1e-12)
    # records of weight w: the curve of r w over unit counts, checked on weighted histograms
    w = 2.5
    r_w, alpha_w = calibrate(eps, lam, l2_sq=2 * w**2, linf=w)
    weighted = exact_curve(r_w, alpha_w, l2_sq=2 * w**2, linf=w)
    at = 1 + (weighted.limit - 1) / 2
    exhaustive, _ = brute_force(r_w * w, alpha_w, at, d)
    assert exhaustive == pytest.approx(float(weighted(at)), rel=RTOL)
    assert exact_curve(r, alpha, l2_sq=3.0, linf=1.0) is None
    assert DirichletMechanism(eps, lam, l2_sq=3.0).guarantee.curve is None


def test_dirichlet_curve_validates_its_arguments():
    with pytest.raises(ValueError, match="r must be"):
        DirichletCurve(0.0, 1.0)
    with pytest.raises(ValueError, match="alpha must be"):
        DirichletCurve(1.0, -1.0)
    with pytest.raises(ValueError, match="relation must be one of"):
        DirichletCurve(1.0, 1.0, "swap")
    with pytest.raises(ValueError, match="lam must be in"):
        DirichletCurve(1.0, 1.0)(0.5)


def test_other_curves_gaussian_and_pure_dp():
    gauss = GaussianMechanism(0.5, 4.0).guarantee
    orders = np.array([1.5, 4.0, 30.0])
    np.testing.assert_allclose(gauss.curve(orders), orders * 0.5 / 4.0, rtol=1e-14)
    # pure DP: the divergence of randomised response with ratio e^eps, computed directly
    eps = 0.7
    p, q = np.exp(eps) / (1 + np.exp(eps)), 1 / (1 + np.exp(eps))
    direct = np.log(p**orders * q ** (1 - orders) + q**orders * p ** (1 - orders)) / (orders - 1)
    np.testing.assert_allclose(pure_dp_to_rdp(eps, orders), direct, rtol=1e-13)
    assert np.all(pure_dp_to_rdp(eps, orders) <= np.minimum(eps, orders * eps**2 / 2))


# ----------------------------------------------------------------------------- calibration


REFERENCE = np.array([119.0, 74.0, 618.0, 272.0, 13.0, 187.0])   # the histogram of the paper's Figure 3


@pytest.mark.parametrize("eps_hat, n", [(1.0, 1), (1.0, 4), (5.0, 1)])
def test_exact_calibration_meets_the_target_and_spends_more_than_the_paper(eps_hat, n):
    lam = 10.0
    cal = calibrate_exact(eps_hat, 1e-5, lam, n_releases=n)
    assert isinstance(cal, ExactCalibration)
    assert cal.paper_epsilon == pytest.approx(float(dp_to_rdp(eps_hat, lam, 1e-5, n_releases=n)), rel=1e-15)
    assert cal.epsilon > cal.paper_epsilon and cal.epsilon_hat <= eps_hat
    assert cal.epsilon_hat == pytest.approx(eps_hat, rel=1e-6)           # the target is used up
    assert (cal.r, cal.alpha) == tuple(float(v) for v in calibrate(cal.epsilon, lam))
    # an exact audit of the composed releases: brute force at the chosen order, eq. (14) there
    exhaustive, _ = brute_force(cal.r, cal.alpha, cal.order, 3)
    assert float(rdp_to_dp(n * exhaustive, cal.order, 1e-5)) <= eps_hat * (1 + 1e-9)
    # the paper's calibration at the same order leaves budget unused
    r0, alpha0 = calibrate(cal.paper_epsilon, lam)
    assert exact_epsilon_hat(r0, alpha0, 1e-5, n_releases=n).epsilon < eps_hat


def test_exact_calibration_saving_at_the_chapter_04_setting():
    """The paper's calibration of one release to (1, 1e-5) meets a smaller epsilon-hat; the exact one uses it up."""
    from lib.mechanisms.dirichlet.order import optimal_order
    from lib.mechanisms.dirichlet.moments import expected_kl_loss

    paper = optimal_order(1.0, 1e-5, REFERENCE)
    met = exact_epsilon_hat(paper.r, paper.alpha, 1e-5).epsilon
    assert 0.55 < met < 0.65
    exact = calibrate_exact(1.0, 1e-5, paper.lam)
    assert exact.r > 2 * paper.r
    assert expected_kl_loss(REFERENCE, exact.r, exact.alpha) < expected_kl_loss(REFERENCE, paper.r, paper.alpha)


def test_exact_calibration_errors():
    with pytest.raises(ValueError, match="epsilon_hat"):
        calibrate_exact(0.0, 1e-5, 10.0)
    with pytest.raises(ValueError, match="delta"):
        calibrate_exact(1.0, 1.0, 10.0)
    with pytest.raises(ValueError, match="lam must be"):
        calibrate_exact(1.0, 1e-5, 1.0)
    with pytest.raises(ValueError, match="not histogram sensitivities"):
        calibrate_exact(1.0, 1e-5, 10.0, l2_sq=3.0)


def test_accountant_of_exact_curves_meets_its_own_composition():
    r, alpha = calibrate(0.5, 4.0)
    one = Accountant().add(DirichletMechanism(0.5, 4.0).guarantee, 2).epsilon(1e-5)
    assert one == exact_epsilon_hat(r, alpha, 1e-5, n_releases=2)


@pytest.mark.parametrize("epsilon_hat", [0.3, 1.0, 5.0])
def test_the_exact_curve_calibration_of_a_model_meets_its_target_with_less_loss(epsilon_hat):
    """ExactCurveDirichlet: its own order, a lower expected loss of the public tables, the target still met."""
    from lib.mechanisms.dirichlet.approximate_dp import public_reference, total_expected_kl
    from lib.mechanisms.dirichlet.mechanism import DirichletMechanism, ExactCurveDirichlet
    from lib.mechanisms.protocol import ReleaseSpec
    from lib.privacy.accountant import Accountant
    from lib.privacy.guarantees import ApproximateDP

    spec = ReleaseSpec(((1, 2), (2, 10), (2, 5), (2, 8)), 30_000)
    target = ApproximateDP(epsilon_hat, 1e-5)
    paper = DirichletMechanism.calibrate(target, spec)
    exact = ExactCurveDirichlet.calibrate(target, spec)
    assert exact.guarantee == target
    reference = public_reference(spec.n_total, [d for _, d in spec.shapes], [k for k, _ in spec.shapes])
    loss = [float(total_expected_kl(reference, c.releases[0].r, c.releases[0].alpha)) for c in (paper, exact)]
    assert loss[1] < loss[0]
    # at the paper's order the exact level is larger than Theorem 1's: at the best order the loss is lower still
    at_paper_order = calibrate_exact(epsilon_hat, 1e-5, paper.parameters["lam"], n_releases=spec.n_releases)
    assert at_paper_order.epsilon > paper.parameters["epsilon_rdp"]
    assert loss[1] <= float(total_expected_kl(reference, at_paper_order.r, at_paper_order.alpha))
    accountant = Accountant()
    for mech in exact.releases:
        accountant.add(mech.guarantee)                           # the exact curves, composed
    assert accountant.epsilon(1e-5).epsilon <= epsilon_hat
    assert accountant.epsilon(1e-5).epsilon == exact.parameters["epsilon_hat_met"]
    # all targets together: the values of one at a time
    many = ExactCurveDirichlet.calibrate_many([target, ApproximateDP(2 * epsilon_hat, 1e-5)], spec)
    assert many[0].parameters == exact.parameters


# ----------------------------------------------------------------------------- the best order (issue 40)


plain_bisection = exact_level_by_bisection


def test_best_order_at_the_chapter_04_setting():
    """The audit's numbers: order about 4.6, level about 0.15, expected KL 0.0091 against the paper's 0.0216."""
    from lib.mechanisms.dirichlet.moments import expected_kl_loss
    from lib.mechanisms.dirichlet.order import optimal_order

    paper = optimal_order(1.0, 1e-5, REFERENCE)
    best = calibrate_exact(1.0, 1e-5, counts=REFERENCE)
    assert (round(best.lam, 1), round(best.epsilon, 3)) == (4.6, 0.149)
    kl = float(expected_kl_loss(REFERENCE, best.r, best.alpha))
    assert (round(kl, 4), round(paper.expected_kl, 4)) == (0.0091, 0.0216)
    assert 1 - 1e-9 < best.epsilon_hat <= 1.0
    # eq. (14) at Theorem 1's level is infeasible at this order: only the exact curve reaches it
    assert best.paper_epsilon <= 0
    # the chosen order beats the exact calibration at the paper's order, and its neighbours on a fine grid
    at_paper = calibrate_exact(1.0, 1e-5, paper.lam)
    assert kl < float(expected_kl_loss(REFERENCE, at_paper.r, at_paper.alpha))
    for lam in best.lam * np.array([0.9, 0.97, 1.03, 1.1]):
        other = calibrate_exact(1.0, 1e-5, lam)
        assert kl < float(expected_kl_loss(REFERENCE, other.r, other.alpha))


@pytest.mark.parametrize("eps_hat, n", [(1.0, 1), (0.5, 3)])
def test_fast_scale_equals_a_plain_bisection(eps_hat, n):
    """At the chosen order and at others: the scale of a plain bisection on the accountant, to 1e-9."""
    best = calibrate_exact(eps_hat, 1e-5, counts=REFERENCE, n_releases=n)
    for lam in (best.lam, 1.5, 10.0, 40.0):
        fast = calibrate_exact(eps_hat, 1e-5, lam, n_releases=n)
        plain = plain_bisection(eps_hat, 1e-5, lam, n)
        assert fast.epsilon == pytest.approx(plain, rel=1e-9)
        assert fast.r == pytest.approx(float(calibrate(plain, lam).r), rel=1e-9)
        # the largest: a level 1e-8 above it misses the target
        over = Accountant().add(DirichletMechanism(fast.epsilon * (1 + 1e-8), lam).guarantee, n).epsilon(1e-5)
        assert over.epsilon > eps_hat


@pytest.mark.parametrize("eps_hat, n", [(1.0, 1), (0.5, 3)])
def test_best_order_guarantee_by_exact_audit(eps_hat, n):
    """Brute force over every histogram of {0, 1, 2}^4 and its neighbours, both ways, at the chosen order and others."""
    best = calibrate_exact(eps_hat, 1e-5, counts=REFERENCE, n_releases=n)
    curve = DirichletMechanism(best.epsilon, best.lam).guarantee.curve
    for order in (1.5, best.order, 0.5 * (best.order + curve.limit), 2.0 * best.lam):
        if order >= curve.limit:
            assert np.isinf(curve(order))
            continue
        worst, _ = brute_force(best.r, best.alpha, order, 4)
        assert worst == pytest.approx(float(curve(order)), rel=RTOL)     # the curve is the worst case
        if order == best.order:
            assert float(rdp_to_dp(n * worst, order, 1e-5)) <= eps_hat * (1 + 1e-12)


def test_best_order_many_equals_one_at_a_time():
    targets = [0.3, 1.0, 4.0]
    many = calibrate_exact_many(targets, 1e-5, REFERENCE, n_releases=2)
    for e, cal in zip(targets, many):
        assert cal == calibrate_exact(e, 1e-5, counts=REFERENCE, n_releases=2)


def test_exact_scale_is_the_largest_that_meets_the_target():
    """exact_scale against the accountant over every order of its grid (the stride search is not trusted)."""
    lam = np.array([1.0 + 1e-6, 1.3, 4.6, 25.0, 300.0, 5e4])
    for n, eps_hat in ((1, 1.0), (7, 0.2), (1, 8.0)):
        scale = exact_scale(lam, eps_hat, 1e-5, n_releases=n)
        for l, s in zip(lam, scale):
            alpha = 1 + 4 * (l - 1) * s
            # met to the solver's rounding (plain log-Gamma differences below alpha = 64); calibrate_exact
            # then checks the target exactly, as the accountant computes it (tests above)
            assert exact_epsilon_hat(s, alpha, 1e-5, n_releases=n).epsilon <= eps_hat * (1 + 1e-12)
            bigger = s * (1 + 1e-9)
            assert exact_epsilon_hat(bigger, 1 + 4 * (l - 1) * bigger, 1e-5, n_releases=n).epsilon > eps_hat


def test_best_order_errors():
    with pytest.raises(ValueError, match="counts"):
        calibrate_exact(1.0, 1e-5)
    with pytest.raises(ValueError, match="counts"):
        calibrate_exact(1.0, 1e-5, counts=[0.0, 0.0])
    with pytest.raises(ValueError, match="epsilon_hats"):
        calibrate_exact_many([1.0, -1.0], 1e-5, REFERENCE)
    with pytest.raises(ValueError, match="relation"):
        exact_scale(2.0, 1.0, 1e-5, relation="swap")
    assert calibrate_exact_many([], 1e-5, REFERENCE) == []


def test_best_order_does_not_hinge_on_the_solver_tolerance(monkeypatch):
    """The chosen orders are the same when the scales of the search are solved 10^4 times more tightly."""
    import lib.mechanisms.dirichlet.curve as curve_module

    targets = np.geomspace(0.05, 20.0, 8)
    loose = calibrate_exact_many(targets, 1e-5, REFERENCE, n_releases=3)
    monkeypatch.setattr(curve_module, "_SEARCH_TOL", 1e-9)
    tight = calibrate_exact_many(targets, 1e-5, REFERENCE, n_releases=3)
    assert [c.lam for c in loose] == [c.lam for c in tight]
    np.testing.assert_allclose([c.epsilon for c in loose], [c.epsilon for c in tight], rtol=1e-11)


def test_a_target_below_the_exact_floor_is_refused_or_not_attained():
    """No scale meets an (eps_hat, delta) target at or below the conversion's own cost on the
    accountant's orders: exact_scale and calibrate_exact refuse it by name, and the registered
    mechanism reports it not attained with that reason (it looped to its step limit before)."""
    from lib.mechanisms.dirichlet.curve import calibrate_exact, exact_floor, exact_scale
    from lib.mechanisms.protocol import ReleaseSpec, get
    from lib.privacy.accountant import DEFAULT_ORDERS
    from lib.privacy.guarantees import ApproximateDP

    floor = exact_floor(1e-5)
    a = np.asarray(DEFAULT_ORDERS, float)
    assert floor == pytest.approx(float((np.log1p(-1 / a) - np.log(1e-5 * a) / (a - 1)).min()), rel=1e-12)
    for call in (lambda: exact_scale(3.0, floor / 2, 1e-5), lambda: calibrate_exact(floor, 1e-5, counts=[5, 3])):
        with pytest.raises(ValueError, match="epsilon_hat must exceed"):
            call()
    assert exact_scale(3.0, 2 * floor, 1e-5) > 0
    spec = ReleaseSpec(((1, 2), (2, 3)), 100)
    low, high = get("dirichlet_exact").calibrate_many([ApproximateDP(1e-6, 1e-5), ApproximateDP(1.0, 1e-5)], spec)
    assert not low.attained and "epsilon_hat must exceed" in low.parameters["reason"] and high.attained
