"""Appendix B: the RDP to approximate-DP conversion, eq. (13)-(14)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from dp_accounting.rdp import rdp_privacy_accountant

from lib import calibrate, rdp_epsilon, rdp_to_dp

#: The order search's documented accuracy (lib.privacy.accounting.search_order_many): the chosen
#: objective is within about 1e-4 (relative) of the minimum; it trades the last digits of
#: a flat minimum for a choice that is the same on every CPU (issue 29).
ORDER_LOSS_RTOL = 1e-4


def _grid():
    rng = np.random.default_rng(20230214)
    eps = np.exp(rng.uniform(np.log(1e-3), np.log(100), 400))
    lam = np.exp(rng.uniform(np.log(1.02), np.log(1e3), 400))
    delta = np.exp(rng.uniform(np.log(1e-12), np.log(0.1), 400))
    return zip(eps, lam, delta)


def test_matches_dp_accounting_single_order():
    compared = 0
    for eps, lam, delta in _grid():
        expected, order = rdp_privacy_accountant.compute_epsilon([lam], [eps], delta)
        # dp-accounting answers 0 from a KL shortcut when delta^2 > 1 - exp(-eps);
        # eq. (14) is the comparison only outside that shortcut.
        if delta**2 + math.expm1(-eps) > 0 or expected == 0:
            continue
        assert order == lam
        assert rdp_to_dp(eps, lam, delta) == pytest.approx(expected, rel=1e-12)
        compared += 1
    assert compared > 300


def test_eq_13_holds_at_the_returned_epsilon_hat():
    eps, lam, delta = 0.7, 12.0, 1e-5
    eps_hat = rdp_to_dp(eps, lam, delta)
    recovered = math.exp((lam - 1) * (eps - eps_hat)) / (lam - 1) * (1 - 1 / lam) ** lam
    assert recovered == pytest.approx(delta, rel=1e-12)


def test_eq_14_with_algorithm_1():
    # eq. (14): eps_hat = rdp_epsilon(r) + log(lam - 1) - (log delta + lam log lam)/(lam - 1).
    lam, delta = 10.0, 1e-5
    r = calibrate(2.0, lam).r
    literal = rdp_epsilon(r, lam) + math.log(lam - 1) - (math.log(delta) + lam * math.log(lam)) / (lam - 1)
    assert rdp_to_dp(rdp_epsilon(r, lam), lam, delta) == pytest.approx(literal, rel=1e-12)


def test_broadcasts_and_clips_at_zero():
    out = rdp_to_dp(np.array([1e-3, 1.0]), np.array([[2.0], [50.0]]), 0.5)
    assert out.shape == (2, 2)
    # A negative value of eq. (14) means (0, delta)-DP.
    assert rdp_to_dp(1e-3, 2.0, 0.5) == 0.0


def test_an_infinite_level_converts_to_infinity():
    """An exact curve is +inf from its order limit on: eq. (14) of +inf is +inf, beside finite levels (issue 39)."""
    from lib.mechanisms.dirichlet.curve import DirichletCurve

    curve = DirichletCurve(0.5, 9.0)
    orders = np.array([4.0, curve.limit, 2 * curve.limit])
    out = rdp_to_dp(curve(orders), orders, 1e-5)
    assert np.isfinite(out[0]) and np.all(np.isposinf(out[1:]))
    assert out[0] == rdp_to_dp(float(curve(4.0)), 4.0, 1e-5)
    assert rdp_to_dp(np.inf, 2.0, 1e-5) == np.inf


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0, 2.0, 1e-5), r"epsilon must be in \(0, inf\)"),
        ((np.nan, 2.0, 1e-5), "epsilon must be finite"),
        ((-1.0, 2.0, 1e-5), r"epsilon must be in \(0, inf\)"),
        (([np.inf, np.nan], 2.0, 1e-5), r"epsilon must be in \(0, inf\] .*got nan at index 1"),
        (([np.inf, 0.0], 2.0, 1e-5), r"epsilon must be in \(0, inf\] .*got 0.0 at index 1"),
        (([np.inf, -np.inf], 2.0, 1e-5), r"epsilon must be in \(0, inf\]"),
        ((1.0, 1.0, 1e-5), r"lam must be in \(1, inf\)"),
        ((1.0, np.nan, 1e-5), "lam must be finite"),
        ((1.0, 2.0, 0.0), r"delta must be in \(0, 1\)"),
        ((1.0, 2.0, 1.0), r"delta must be in \(0, 1\)"),
        (([1.0, 2.0], [2.0, 3.0, 4.0], 1e-5), "broadcast"),
    ],
)
def test_bad_input_raises(args, match):
    with pytest.raises(ValueError, match=match):
        rdp_to_dp(*args)


# --- Inverse direction, the order of a target, and the choice of order -------------

from scipy import special  # noqa: E402

from lib.mechanisms.dirichlet.moments import expected_kl_loss  # noqa: E402
from lib.mechanisms.dirichlet.order import fixed_order, optimal_order  # noqa: E402
from lib.privacy.accounting import dp_to_rdp, min_order  # noqa: E402

PAPER_COUNTS = np.array([119, 74, 618, 272, 13, 187])


@pytest.mark.parametrize("n_releases", [1, 3, 50])
def test_dp_to_rdp_inverts_rdp_to_dp(n_releases):
    rng = np.random.default_rng(4)
    eps_hat = np.exp(rng.uniform(np.log(1e-3), np.log(100), 300))
    delta = np.exp(rng.uniform(np.log(1e-12), np.log(0.1), 300))
    lam = min_order_vec(eps_hat, delta) * np.exp(rng.uniform(0.01, 3, 300))
    eps = dp_to_rdp(eps_hat, lam, delta, n_releases=n_releases)
    assert np.all(eps > 0)
    back = rdp_to_dp(n_releases * eps, lam, delta)
    np.testing.assert_allclose(back, eps_hat, rtol=1e-9, atol=1e-12)


def min_order_vec(eps_hat, delta):
    return np.array([min_order(e, d) for e, d in zip(eps_hat, delta)])


def test_dp_to_rdp_rises_to_one_over_delta_then_falls():
    delta = 1e-5
    below = np.logspace(np.log10(1.001), np.log10(1 / delta), 2000)
    above = np.logspace(np.log10(1 / delta), 9, 500)
    assert np.all(np.diff(dp_to_rdp(1.0, below, delta)) > 0)
    values_above = dp_to_rdp(1.0, above, delta)
    assert np.all(np.diff(values_above) < 0) and np.all(values_above > 1.0)


@pytest.mark.parametrize("eps_hat, delta", [(1e-3, 1e-5), (1.0, 1e-5), (50.0, 1e-10), (0.5, 0.7)])
def test_min_order_is_the_feasibility_boundary(eps_hat, delta):
    lam0 = min_order(eps_hat, delta)
    assert 1 < lam0 < max(1 / delta, 2.0)
    assert dp_to_rdp(eps_hat, lam0 * (1 + 1e-9), delta) > 0
    assert dp_to_rdp(eps_hat, 1 + (lam0 - 1) * (1 - 1e-9), delta) < 0
    assert abs(dp_to_rdp(eps_hat, lam0, delta)) < 1e-9


def test_expected_kl_loss_matches_monte_carlo():
    rng = np.random.default_rng(11)
    r, alpha = 0.3, 5.0
    draws = rng.dirichlet(r * PAPER_COUNTS + alpha, size=200_000)
    share = PAPER_COUNTS / PAPER_COUNTS.sum()
    losses = (share * (np.log(share) - np.log(draws))).sum(axis=1)
    standard_error = losses.std() / np.sqrt(losses.size)
    assert abs(expected_kl_loss(PAPER_COUNTS, r, alpha) - losses.mean()) < 5 * standard_error


def test_expected_kl_loss_broadcasts_and_handles_empty_bins():
    counts = np.array([[3.0, 0.0, 5.0], [1.0, 1.0, 1.0]])
    out = expected_kl_loss(counts, np.array([[0.5], [2.0]]), 1.0)
    assert out.shape == (2, 2) and np.all(out > 0)
    # the exact formula term by term for the first histogram
    a = 0.5 * counts[0] + 1.0
    share = counts[0] / 8
    literal = special.xlogy(share, share).sum() - (share * special.digamma(a)).sum() + special.digamma(a.sum())
    assert out[0, 0] == pytest.approx(literal, rel=1e-13)


@pytest.mark.parametrize("eps_hat", [1e-3, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("n_releases", [1, 7])
def test_fixed_order_is_the_author_rule(eps_hat, n_releases):
    delta = 1e-5
    choice = fixed_order(eps_hat, delta, n_releases=n_releases)
    assert choice.lam == pytest.approx(1 + 1 / choice.epsilon, rel=1e-14)
    # the author's formula: eps + log(lam - 1) - (log delta + lam log lam) / (lam - 1)
    lam, eps = choice.lam, n_releases * choice.epsilon
    literal = eps + math.log(lam - 1) - (math.log(delta) + lam * math.log(lam)) / (lam - 1)
    assert literal == pytest.approx(eps_hat, rel=1e-9)
    assert choice.r == pytest.approx(calibrate(choice.epsilon, lam).r, rel=1e-14)
    assert math.isnan(choice.expected_kl)
    with_loss = fixed_order(eps_hat, delta, n_releases=n_releases, counts=PAPER_COUNTS)
    assert with_loss.expected_kl == expected_kl_loss(PAPER_COUNTS, choice.r, choice.alpha)


def _dense_grid_minimum(eps_hat, delta, counts, n_releases, size=20_000):
    lam0 = min_order(eps_hat, delta)
    lam = lam0 + np.logspace(np.log10(1e-9 * lam0), np.log10(1 / delta - lam0), size)
    r, alpha = calibrate(dp_to_rdp(eps_hat, lam, delta, n_releases=n_releases), lam)
    loss = expected_kl_loss(counts, r, alpha)
    best = int(np.argmin(loss))
    return lam[best], loss[best]


@pytest.mark.parametrize("eps_hat", [1e-3, 0.05, 1.0, 30.0])
@pytest.mark.parametrize("counts", [PAPER_COUNTS, np.array([11, 8, 65, 25, 38, 1]), np.full(20, 3)])
def test_optimal_order_beats_a_dense_grid(eps_hat, counts):
    delta = 1e-5
    choice = optimal_order(eps_hat, delta, counts)
    lam_grid, loss_grid = _dense_grid_minimum(eps_hat, delta, counts, 1)
    assert choice.expected_kl <= loss_grid * (1 + ORDER_LOSS_RTOL)
    # near-ties (1e-6 relative) go to the smaller order (issue 29): on a flat minimum the order
    # is a few percent from the dense grid's argmin, at the same loss
    assert choice.lam == pytest.approx(lam_grid, rel=5e-2)
    assert rdp_to_dp(choice.epsilon, choice.lam, delta) == pytest.approx(eps_hat, rel=1e-9)
    r, alpha = calibrate(choice.epsilon, choice.lam)
    assert (choice.r, choice.alpha) == (pytest.approx(r, rel=1e-14), pytest.approx(alpha, rel=1e-14))
    assert choice.expected_kl <= expected_kl_loss(counts, *fixed_order(eps_hat, delta)[1:3]) * (1 + 1e-12)


def test_optimal_order_with_composed_releases():
    delta, eps_hat = 1e-5, 1.0
    choices = [optimal_order(eps_hat, delta, PAPER_COUNTS, n_releases=n) for n in (1, 4, 16)]
    for n, choice in zip((1, 4, 16), choices):
        # n releases at (lam, epsilon)-RDP compose to (lam, n epsilon)-RDP, which meets the target
        total = n * choice.epsilon
        assert rdp_to_dp(total, choice.lam, delta) == pytest.approx(eps_hat, rel=1e-9)
        expected, order = rdp_privacy_accountant.compute_epsilon([choice.lam], [total], delta)
        assert order == choice.lam and expected == pytest.approx(eps_hat, rel=1e-9)
        lam_grid, loss_grid = _dense_grid_minimum(eps_hat, delta, PAPER_COUNTS, n)
        assert choice.expected_kl <= loss_grid * (1 + ORDER_LOSS_RTOL)
    assert choices[0].r > choices[1].r > choices[2].r
    assert choices[0].expected_kl < choices[1].expected_kl < choices[2].expected_kl


def test_optimal_order_respects_lam_max_and_raises_when_infeasible():
    delta, eps_hat = 1e-5, 1.0
    lam0 = min_order(eps_hat, delta)
    choice = optimal_order(eps_hat, delta, PAPER_COUNTS, lam_max=lam0 + 0.1)
    assert lam0 < choice.lam <= lam0 + 0.1
    with pytest.raises(ValueError, match="no order in"):
        optimal_order(eps_hat, delta, PAPER_COUNTS, lam_max=0.9 * lam0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: dp_to_rdp(1.0, 2.0, 1e-5, n_releases=0), r"n_releases must be an integer in \[1, 9007199254740992\]"),
        (lambda: dp_to_rdp(1.0, 2.0, 1e-5, n_releases=1.5), "n_releases"),
        (lambda: dp_to_rdp(1.0, 2.0, 1e-5, n_releases=True), "n_releases"),
        (lambda: dp_to_rdp(0.0, 2.0, 1e-5), r"epsilon_hat must be in \(0, inf\)"),
        (lambda: dp_to_rdp(1.0, 1.0, 1e-5), r"lam must be in \(1, inf\)"),
        (lambda: min_order(1.0, 1.0), r"delta must be in \(0, 1\)"),
        (lambda: min_order([1.0, 2.0], 1e-5), "epsilon_hat must be a scalar"),
        (lambda: fixed_order(-1.0, 1e-5), "epsilon_hat"),
        (lambda: fixed_order(1.0, 1e-5, counts=[0, 0]), "positive total"),
        (lambda: optimal_order(1.0, 1e-5, [0, 0, 0]), "positive total"),
        (lambda: optimal_order(1.0, 1e-5, [[1, 2], [3, 4]]), r"shape \(d,\)"),
        (lambda: optimal_order(1.0, 1e-5, [1, -2]), r"counts must be in \[0, inf\)"),
        (lambda: optimal_order(1.0, 1e-5, [1, 2], grid_size=3), "grid_size"),
        (lambda: optimal_order(1.0, 1e-5, [1, 2], lam_max=1.0), r"lam_max must be in \(1, inf\)"),
        (lambda: optimal_order(1.0, 1e-5, [1, 2], l2_sq=0.0), "l2_sq"),
        (lambda: expected_kl_loss([0, 0], 1.0, 1.0), "positive total"),
        (lambda: expected_kl_loss([1, 2], 0.0, 1.0), r"r must be in \(0, inf\)"),
        (lambda: expected_kl_loss([1, 2], 1.0, np.nan), "alpha must be finite"),
    ],
)
def test_order_choice_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ vectorised order search (issue 17)


def _kl_like_loss(lam, e):
    """An expected-KL-like trade-off with its minimum inside the range, flat near it."""
    return np.log(lam) / e + 1.0 / np.sqrt(lam)


def test_search_order_ignores_last_bit_differences():
    """Issue 29: objectives that differ by a few ulps (another CPU's exp/log) give the same order, bitwise."""
    from lib.privacy.accounting import search_order

    rng = np.random.default_rng(29)
    for e in (0.01, 0.3, 2.0, 9.0, 40.0):
        lam, _ = search_order(e, 1e-5, lambda x: _kl_like_loss(x, e))
        for _ in range(20):
            noise = rng.integers(-4, 5)

            def nudged(x, e=e, k=noise):  # every value moved by k ulps
                v = _kl_like_loss(x, e)
                return v + k * np.spacing(v)

            assert search_order(e, 1e-5, nudged)[0] == lam


def test_search_order_is_near_the_true_minimum():
    """The grid's choice is within the documented 1e-4 (relative) of a tight minimisation of the objective."""
    from scipy import optimize

    from lib.privacy.accounting import min_order, search_order

    for e in (0.01, 0.3, 2.0, 9.0):
        lam, value = search_order(e, 1e-5, lambda x: _kl_like_loss(x, e))
        lam0 = min_order(e, 1e-5)
        ref = optimize.minimize_scalar(lambda u: _kl_like_loss(lam0 + np.exp(u), e),
                                       bounds=(np.log(1e-9 * lam0), np.log(1e5 - lam0)),
                                       method="bounded", options={"xatol": 1e-12})
        assert value <= ref.fun * (1 + ORDER_LOSS_RTOL)


def test_search_order_breaks_ties_at_the_smallest_order():
    """A flat objective (every order equally good) gets the smallest grid order, on every machine."""
    from lib.privacy.accounting import min_order, search_order

    lam, value = search_order(1.0, 1e-5, lambda x: np.ones_like(x))
    assert value == 1.0 and lam == pytest.approx(min_order(1.0, 1e-5) * (1 + 1e-9), rel=1e-12)


def test_search_order_many_equals_search_order():
    from lib.privacy.accounting import search_order, search_order_many

    eps = np.array([0.01, 0.3, 2.0, 9.0])

    lam, value = search_order_many(eps, 1e-5, lambda lam, which: _kl_like_loss(lam, eps[which].reshape(
        (-1,) + (1,) * (np.ndim(lam) - 1))))
    for i, e in enumerate(eps):
        assert (lam[i], value[i]) == search_order(e, 1e-5, lambda x: _kl_like_loss(x, e))


@settings(max_examples=80, deadline=None)
@given(log_eps=st.floats(-300, 300), delta=st.one_of(st.floats(1e-300, 0.5), st.floats(0.5, 1 - 1e-16)))
def test_min_order_returns_a_feasibility_boundary_for_every_target(log_eps, delta):
    eps_hat = 10.0**log_eps
    lam0 = min_order(eps_hat, delta)  # NaN in brentq before the fix (eps_hat large, delta near 1)
    assert np.isfinite(lam0) and lam0 > 1
    above = lam0 + max(1e-6 * (lam0 - 1), 4 * np.spacing(lam0))
    if above < 1 / delta:  # dp_to_rdp rises up to 1/delta: just above lam0 the target is feasible
        assert dp_to_rdp(eps_hat, above, delta) > -1e-9 * eps_hat
