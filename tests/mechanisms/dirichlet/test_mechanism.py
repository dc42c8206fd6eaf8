"""Algorithm 1: calibration (Lines 1-2, Lemma 2, Remarks 1-2) and release (Line 3)."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import DirichletMechanism, all_neighbours, calibrate, rdp_epsilon, renyi_divergence_dirichlet

from tests._reference import neighbour
from lib import fixed_order, optimal_order

EPSILONS = np.logspace(-6, 4, 201)
LAMS = [1.0, 1.0 + 1e-12, 1.0 + 1e-9, 1.001, 1.5, 2.0, 5.0, 20.0, 200.0, 1e4]
SENSITIVITIES = [(2.0, 1.0), (1.0, 1.0), (0.02, 0.1), (50.0, 7.0), (1e-8, 1e8), (1e8, 1e-8)]


def _mp_solve_r(eps, lam, l2_sq, linf):
    """Line 1 solved with mpmath at 40 digits (bisection in log r)."""
    with mp.workdps(40):
        eps, lam, l2_sq, linf = (mp.mpf(float(x)) for x in (eps, lam, l2_sq, linf))

        def excess(log_r):
            r = mp.exp(log_r)
            return mp.log(lam * l2_sq / 2) + 2 * log_r + mp.log(mp.psi(1, 1 + 3 * (lam - 1) * r * linf)) - mp.log(eps)

        lo, hi = mp.mpf(-60), mp.mpf(60)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
        return float(mp.exp((lo + hi) / 2))


@pytest.mark.parametrize("l2_sq, linf", SENSITIVITIES)
@pytest.mark.parametrize("lam", LAMS)
def test_round_trip_on_a_log_grid(lam, l2_sq, linf):
    r = calibrate(EPSILONS, lam, l2_sq, linf).r
    np.testing.assert_allclose(rdp_epsilon(r, lam, l2_sq, linf), EPSILONS, rtol=1e-12)


@pytest.mark.parametrize(
    "eps, lam, l2_sq, linf",
    [(1e-6, 1.0, 2.0, 1.0), (1e-6, 1e4, 2.0, 1.0), (1e4, 1e4, 2.0, 1.0), (1e4, 1.0, 2.0, 1.0),
     (0.3, 1.0001, 2.0, 1.0), (3.0, 7.0, 0.5, 3.0), (50.0, 200.0, 1e-3, 1e-2), (1e-3, 2.0, 1e3, 1e2)],
)
def test_r_relative_error_below_1e_9_against_mpmath(eps, lam, l2_sq, linf):
    r = calibrate(eps, lam, l2_sq, linf).r
    assert abs(r / _mp_solve_r(eps, lam, l2_sq, linf) - 1) < 1e-9


@pytest.mark.parametrize("lam", LAMS)
def test_r_strictly_increases_with_epsilon(lam):
    # Lemma 2: the right side of Line 1 is strictly increasing in r, so its inverse is too.
    r = calibrate(np.logspace(-6, 4, 2001), lam).r
    assert np.all(np.diff(r) > 0)


def test_alpha_is_line_2():
    eps, lam = np.logspace(-3, 2, 7), 7.5
    r, alpha = calibrate(eps, lam, linf=2.0)
    np.testing.assert_allclose(alpha, 1 + 4 * (lam - 1) * r * 2.0, rtol=1e-15)


def test_lam_one_and_g_zero_give_the_closed_form_of_remark_1():
    eps = np.logspace(-4, 3, 9)
    closed = np.sqrt(2 * eps / (2.0 * 2.0 * np.pi**2 / 6))
    np.testing.assert_allclose(calibrate(eps, 2.0, g_factor=0.0).r, closed, rtol=1e-15)
    np.testing.assert_allclose(calibrate(eps, 1.0).r, np.sqrt(2 * eps / (2.0 * np.pi**2 / 6)), rtol=1e-15)
    assert np.all(calibrate(eps, 1.0).alpha == 1.0)


@pytest.mark.parametrize("g_factor, count_floor", [(0.0, 1e-3), (10.0, 0.0), (3.0, 100.0)])
def test_round_trip_with_other_g_and_floors(g_factor, count_floor):
    for lam in (1.0, 1.0 + 1e-12, 2.0, 1e4):
        r = calibrate(EPSILONS, lam, g_factor=g_factor, count_floor=count_floor).r
        eps = rdp_epsilon(r, lam, g_factor=g_factor, count_floor=count_floor)
        np.testing.assert_allclose(eps, EPSILONS, rtol=1e-12)


def test_count_floor_of_remark_2_gives_a_larger_r():
    eps = np.logspace(-3, 2, 11)
    assert np.all(calibrate(eps, 3.0, count_floor=2.0).r > calibrate(eps, 3.0).r)


def test_calibrate_broadcasts():
    cal = calibrate(np.logspace(-2, 1, 3)[:, None], np.array([1.0, 2.0, 20.0, 200.0]))
    assert cal.r.shape == cal.alpha.shape == (3, 4)
    assert isinstance(calibrate(1.0, 2.0).r, float)


def test_release_shapes_and_simplex():
    mech = DirichletMechanism(1.0, 2.0)
    y = mech.release(np.arange(60).reshape(5, 3, 4), rng=1)
    assert y.shape == (5, 3, 4)
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-14)
    assert np.all(y > 0)


def test_release_is_reproducible_and_rows_are_independent():
    mech = DirichletMechanism(2.0, 3.0)
    counts = np.tile([5.0, 0.0, 9.0], (4, 1))
    a = mech.release(counts, rng=np.random.default_rng(7))
    b = mech.release(counts, rng=7)
    np.testing.assert_array_equal(a, b)
    assert len({tuple(row) for row in a}) == 4  # identical inputs, distinct draws


def test_release_is_normalised_gamma_draws_of_line_3():
    # Line 3 as a Dirichlet draw: independent Gamma(r f_i + alpha) variables, normalised.
    mech = DirichletMechanism(1.5, 4.0)
    counts = np.array([[3.0, 0.0, 7.0], [10.0, 20.0, 30.0]])
    g = np.random.default_rng(5).standard_gamma(mech.r * counts + mech.alpha)
    expected = g / g.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(mech.release(counts, rng=5), expected, rtol=1e-15)


def test_release_accepts_views_of_any_layout():
    mech = DirichletMechanism(1.0, 2.0)
    counts = np.arange(12.0).reshape(3, 4)
    for view in (np.broadcast_to(counts[0], (5, 4)), counts.T, np.asfortranarray(counts), counts[:, ::2]):
        y = mech.release(view, rng=0)
        assert y.shape == view.shape
        np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(mech.release(np.asfortranarray(counts), rng=3), mech.release(counts, rng=3))


def test_release_mean_matches_the_dirichlet_mean():
    mech = DirichletMechanism(0.5, 2.0)
    counts = np.array([3.0, 0.0, 12.0, 30.0])
    n = 200_000
    y = mech.release(np.broadcast_to(counts, (n, 4)), rng=np.random.default_rng(11))
    a = mech.concentration(counts)
    mean, var = a / a.sum(), a * (a.sum() - a) / (a.sum() ** 2 * (a.sum() + 1))
    # Five standard errors: a false alarm has probability below 1e-5 per coordinate.
    assert np.all(np.abs(y.mean(axis=0) - mean) < 5 * np.sqrt(var / n))


def test_worst_neighbour_is_the_maximum_over_all_neighbours_and_directions():
    mech = DirichletMechanism(1.0, 2.0)
    counts = np.array([4.0, 0.0, 9.0])
    spent, worst = mech.worst_neighbour(counts)
    u = mech.concentration(counts)
    divergences = [max(renyi_divergence_dirichlet(u, mech.concentration(n), 2.0),
                       renyi_divergence_dirichlet(mech.concentration(n), u, 2.0))
                   for n in all_neighbours(counts)]
    assert spent == max(divergences) and spent < mech.epsilon
    assert renyi_divergence_dirichlet(mech.concentration(worst), u, 2.0) == spent or \
        renyi_divergence_dirichlet(u, mech.concentration(worst), 2.0) == spent


def test_repr_names_the_calibration():
    assert "r=" in repr(DirichletMechanism(1.0, 2.0)) and "alpha=" in repr(DirichletMechanism(1.0, 2.0))


@given(
    data=st.data(),
    d=st.integers(2, 12),
    lam=st.floats(1.0, 500.0, exclude_min=True),
    log_eps=st.floats(np.log(1e-4), np.log(100.0)),
)
@settings(max_examples=400, deadline=None)
def test_theorem_1_exact_divergence_never_exceeds_epsilon(data, d, lam, log_eps):
    # Empty bins are where the bound of Theorem 1 is nearly attained: draw them often.
    count = st.one_of(st.just(0), st.integers(1, 10), st.integers(0, 10_000))
    counts = np.array(data.draw(st.lists(count, min_size=d, max_size=d)), dtype=float)
    kind = data.draw(st.sampled_from(["add", "remove", "replace"]))
    nonempty = np.flatnonzero(counts > 0)
    if kind != "add" and nonempty.size == 0:
        kind = "add"
    i = data.draw(st.sampled_from(list(range(d)) if kind == "add" else list(nonempty)))
    j = data.draw(st.sampled_from([k for k in range(d) if k != i]))
    other = neighbour(counts, kind, i, j)
    eps = float(np.exp(log_eps))
    mech = DirichletMechanism(eps, lam)
    u, v = mech.concentration(counts), mech.concentration(other)
    for a, b in ((u, v), (v, u)):
        assert renyi_divergence_dirichlet(a, b, lam) < eps


BAD_CALLS = [
    (lambda: calibrate(0.0, 2.0), r"epsilon must be in \(0, inf\)"),
    (lambda: calibrate(-1.0, 2.0), r"epsilon must be in \(0, inf\)"),
    (lambda: calibrate(np.nan, 2.0), "epsilon must be finite"),
    (lambda: calibrate(np.inf, 2.0), "epsilon must be finite"),
    (lambda: calibrate(1.0, 0.5), r"lam must be in \[1, inf\)"),
    (lambda: calibrate(1.0, np.nan), "lam must be finite"),
    (lambda: calibrate(1.0, 2.0, l2_sq=0.0), r"l2_sq must be in \(0, inf\)"),
    (lambda: calibrate(1.0, 2.0, linf=-1.0), r"linf must be in \(0, inf\)"),
    (lambda: calibrate(1.0, 2.0, g_factor=-1.0), r"g_factor must be in \[0, inf\)"),
    (lambda: calibrate(1.0, 2.0, count_floor=-0.5), r"count_floor must be in \[0, inf\)"),
    (lambda: calibrate([1.0, 2.0], [2.0, 3.0, 4.0]), "do not broadcast"),
    (lambda: calibrate("one", 2.0), "epsilon must be a real number"),
    (lambda: calibrate(1e4, 3.0, l2_sq=1e-150, linf=1e150), "beyond double precision"),
    (lambda: rdp_epsilon(0.0, 2.0), r"r must be in \(0, inf\)"),
    (lambda: rdp_epsilon(1.0, 0.9), r"lam must be in \[1, inf\)"),
    # issue 41: a level beyond the double range is an error, never inf (nor 0 below it)
    (lambda: rdp_epsilon(1e200, 1.0), r"the RDP level at r = 1e\+200, lam = 1 overflows double precision"),
    (lambda: rdp_epsilon(1e155, 1.0), "overflows double precision"),
    (lambda: rdp_epsilon([1.0, 1e200], [2.0, 1.0]), r"at r = 1e\+200, lam = 1 overflows"),
    (lambda: rdp_epsilon(1e-200, 1.0), r"the RDP level at r = 1e-200, lam = 1 underflows double precision"),
    (lambda: rdp_epsilon(np.inf, 2.0), "r must be finite"),
    (lambda: DirichletMechanism(0.0, 2.0), r"epsilon must be in \(0, inf\)"),
    (lambda: DirichletMechanism([1.0, 2.0], 2.0), "epsilon must be a scalar"),
    (lambda: DirichletMechanism(1.0, 0.0), r"lam must be in \[1, inf\)"),
    (lambda: DirichletMechanism(1.0, 2.0, l2_sq=-2.0), r"l2_sq must be in \(0, inf\)"),
    (lambda: DirichletMechanism(1.0, 2.0).release([1.0, -1.0]), r"counts must be in \[0, inf\)"),
    (lambda: DirichletMechanism(1.0, 2.0).release([1.0, np.nan]), "counts must be finite"),
    (lambda: DirichletMechanism(1.0, 2.0).release([4.0]), "at least two entries"),
    (lambda: DirichletMechanism(1.0, 2.0).release(3.0), "at least two entries"),
    (lambda: DirichletMechanism(1.0, 2.0).release([1.0, 2.0], rng="seed"), "rng must be"),
    (lambda: DirichletMechanism(1.0, 2.0).release([1.0, 2.0], rng=-3), "rng must be"),
]


@pytest.mark.parametrize("call, match", BAD_CALLS)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_from_concentration():
    ref = DirichletMechanism(1.0, 5.0)
    mech = DirichletMechanism.from_concentration(ref.r, ref.alpha)
    assert mech.epsilon is None and mech.lam is None and (mech.r, mech.alpha) == (ref.r, ref.alpha)
    counts = np.array([[119, 74, 618, 272, 13, 187]] * 3, dtype=float)
    np.testing.assert_array_equal(mech.release(counts, rng=5), ref.release(counts, rng=5))
    np.testing.assert_array_equal(mech.concentration(counts), ref.concentration(counts))
    with pytest.raises(ValueError, match="RDP order"):
        mech.worst_neighbour([1, 2, 3])
    with pytest.raises(ValueError, match=r"r must be in \(0, inf\)"):
        DirichletMechanism.from_concentration(0.0, 1.0)
    with pytest.raises(ValueError, match="alpha must be finite"):
        DirichletMechanism.from_concentration(1.0, np.nan)


@pytest.mark.parametrize("r, lam, want", [
    (1e154, 1.0, 1.6449340668482264e308),    # the largest levels still in range: r^2 psi'(1), psi'(1) = pi^2/6
    (1e-150, 1.0, 1.6449340668482264e-300),  # and the smallest
    (1e200, 1e300, 1e200 / 3),               # c r overflows: K r^2 psi'(1 + c r) = K r / c = r / 3 here
    (1e10, 1e300, 1e10 / 3),
])
def test_rdp_epsilon_near_the_double_range(r, lam, want):
    """The neighbours of issue 41's rdp_epsilon(1e200, 1.0): finite levels, correct to rounding (0 and NaN before)."""
    assert float(rdp_epsilon(r, lam)) == pytest.approx(want, rel=1e-12)


def _on_simplex(y):
    assert np.all(np.isfinite(y)) and np.all(y > 0)
    # a sum of d doubles each rounded once: a few units of 1e-16
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_dirichlet_rows_whose_concentration_overflows_are_refused_naming_counts():
    mech = DirichletMechanism(5.0, 2.0)  # r > 1
    with pytest.raises(ValueError, match=r"counts must be at most .*r \* counts \+ alpha overflows"):
        mech.release([1.7e308, 1.0], rng=0)


def test_normal_releases_are_unchanged():
    """Regression guard: for alpha >= 1 the release is still one Gamma draw per cell, normalised."""
    mech = DirichletMechanism(1.0, 2.0)
    counts = np.array([[119, 74, 618, 272, 13, 187], [0, 0, 1, 2, 3, 4]], dtype=float)
    gamma = np.random.default_rng(7).standard_gamma(mech.r * counts + mech.alpha)
    np.testing.assert_array_equal(mech.release(counts, rng=7), gamma / gamma.sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("r, alpha", [(1e-3, 1e-3), (1e-3, 1e-5), (1e-6, 1e-200)])
def test_tiny_concentrations_give_positive_finite_rows(r, alpha):
    y = DirichletMechanism.from_concentration(r, alpha).release(np.zeros((2000, 5)), rng=1)
    _on_simplex(y)  # exact zeros and NaN rows before the fix


def test_tiny_concentrations_have_the_dirichlet_mean():
    """The log-space draw is Dirichlet(a): its mean a / a0, checked by a z-score over 40000 rows."""
    a = np.array([0.05, 0.3, 0.8])
    mech = DirichletMechanism.from_concentration(1.0, 0.05)
    y = mech.release(np.broadcast_to(a - 0.05, (40_000, 3)), rng=3)
    se = y.std(axis=0, ddof=1) / np.sqrt(len(y))
    z = (y.mean(axis=0) - a / a.sum()) / se
    assert np.all(np.abs(z) < 5)  # 5 standard errors: a false alarm has probability below 2e-6 per cell
    # and the variance a_i (a0 - a_i) / (a0^2 (a0 + 1)), within 10% (relative SE of a variance here < 2%)
    var = a * (a.sum() - a) / (a.sum() ** 2 * (a.sum() + 1))
    np.testing.assert_allclose(y.var(axis=0, ddof=1), var, rtol=0.1)


@settings(max_examples=60, deadline=None)
@given(log_eps=st.floats(-300, 300), log_lam=st.floats(-300, 300), log_l2=st.floats(-40, 40))
def test_calibrate_is_exact_or_refuses(log_eps, log_lam, log_l2):
    eps, lam, l2 = 10.0**log_eps, 1 + 10.0**log_lam, 10.0**log_l2
    try:
        r, alpha = calibrate(eps, lam, l2)
    except ValueError as exc:
        assert "double precision" in str(exc)
        return
    assert np.isfinite(r) and r > 0 and np.isfinite(alpha) and alpha >= 1
    # rdp_epsilon in logs where r^2 underflows; Newton in log r stops at 1e-13 (or a few ulp of log r)
    assert float(rdp_epsilon(r, lam, l2)) == pytest.approx(eps, rel=1e-9)


def test_calibrate_tiny_ratio_found_the_wrong_root_before():
    args = (1.8232633548240378e-293, 1.0000000000638334, 1.8673501729880208e-32, 1.4558794922160418e+47)
    r, _ = calibrate(*args)
    assert float(rdp_epsilon(r, *args[1:])) == pytest.approx(args[0], rel=1e-9)


LEAKS = ("did not converge", "NaN", "solver cannot continue", "nan")


def _clean(exc):
    message = str(exc)
    assert not any(leak in message for leak in LEAKS), message
    return message


@settings(max_examples=60, deadline=None)
@given(log_eps=st.floats(-300, 300), log_delta=st.floats(-300, -1e-3), n=st.integers(1, 100))
def test_fixed_order_returns_a_valid_choice_or_names_the_range(log_eps, log_delta, n):
    try:
        choice = fixed_order(10.0**log_eps, 10.0**log_delta, n_releases=n)
    except ValueError as exc:
        assert "epsilon_hat" in _clean(exc)
        return
    assert choice.lam > 1 and np.isfinite(choice.r) and choice.r > 0


@pytest.mark.parametrize("eps_hat, delta", [(1e300, 1e-5), (1e-300, 1e-5), (1e3, 1 - 1e-16), (1.0, 1e-300)])
def test_optimal_order_at_extreme_targets(eps_hat, delta):
    try:
        choice = optimal_order(eps_hat, delta, [10, 20, 30], grid_size=16)
    except ValueError as exc:
        assert "epsilon_hat" in _clean(exc) or "lam_max" in str(exc)
        return
    assert choice.lam > 1 and np.isfinite(choice.expected_kl)


def test_batched_calibrate_names_the_bad_element_and_the_range():
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\); got -1 at index 2"):
        calibrate([1.0, 2.0, -1.0], 2.0)
    with pytest.raises(ValueError, match=r"lam must be finite \(got NaN or infinity: nan at index 1\)"):
        calibrate(1.0, [2.0, np.nan])
    with pytest.raises(ValueError, match="epsilon = 1e\\+300.*beyond double precision"):
        calibrate([1.0, 1e300], 2.0)


def test_line1_non_convergence_is_a_value_error():
    # the case that ran out of Newton steps (the stopping rule was below one ulp of log r)
    r, alpha = calibrate(5.47931925e-143, 9.8494608e141, 2.0)  # K = lam, c = 3 (lam - 1)
    assert np.isfinite(r) and r > 0


def test_the_guarantee_at_order_one_is_the_exact_curve():
    """Issue 39: DirichletMechanism(epsilon=1, lam=1).guarantee raised; Theorem 1 states nothing at order 1.

    The guarantee is the exact worst case over neighbours (finite below 1 + alpha / r), checked
    here by brute force over every neighbouring pair of small histograms at orders 1 (KL) to the limit.
    """
    import itertools

    from lib.mechanisms.dirichlet.curve import order_limit, worst_case_divergence
    from lib.privacy.accountant import Accountant
    from lib.privacy.guarantees import NotPrivate, RenyiDP
    from lib.privacy.neighbours import all_neighbours
    from lib.theory.audit import divergence_both_ways

    mech = DirichletMechanism(epsilon=1, lam=1)
    assert mech.alpha == 1.0
    g = mech.guarantee
    limit = float(order_limit(mech.r, mech.alpha))
    assert isinstance(g, RenyiDP) and g.lam == pytest.approx(1 + (limit - 1) / 2, rel=1e-15)
    for order in (1.0, 1.3, g.lam, 1 + 0.99 * (limit - 1)):
        worst = 0.0
        for cells in itertools.product(range(3), repeat=3):
            f = np.array(cells, float)
            worst = max(worst, float(divergence_both_ways(mech.r * f + mech.alpha,
                                                          mech.r * all_neighbours(f) + mech.alpha, order).max()))
        assert worst == pytest.approx(float(worst_case_divergence(mech.r, mech.alpha, order)), rel=1e-9)
        if order > 1:
            assert worst == pytest.approx(float(g.curve(order)), rel=1e-9)
    assert np.isinf(g.curve(limit))
    assert np.isfinite(Accountant().add(g, 3).epsilon(1e-5).epsilon)
    # sensitivities with no exact curve: no statement at order 1 (none from Theorem 1 either)
    assert isinstance(DirichletMechanism(1.0, 1.0, l2_sq=3.0).guarantee, NotPrivate)
    assert DirichletMechanism(1.0, 2.0).guarantee.lam == 2.0


# Errors blame the argument that caused them, not a downstream symptom.

def test_dirichlet_overflow_blames_counts_and_r():
    with pytest.raises(ValueError, match=r"counts must be at most .*\(r = "):
        DirichletMechanism(50.0, 2.0).release([1e308, 1.0], rng=0)


def test_calibrate_overflow_names_the_element():
    with pytest.raises(ValueError, match=r"epsilon = 1e\+300 \(element 1"):
        calibrate([1.0, 1e300], 2.0)
