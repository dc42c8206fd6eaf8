"""The smoothed-Hellinger exponential mechanism (lib.mechanisms.hellinger), its audit and its head-to-head."""

from math import comb

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from lib.experiments import hellinger as hx
from lib.mechanisms import hellinger as hm
from lib.theory import hellinger_audit as ha
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet

PRIORS = [(1.0, 1.0), (0.5, 0.5), (2.0, 8.0)]


def test_candidates_count_and_content():
    for n, k in [(1, 2), (7, 2), (5, 3), (4, 4)]:
        cand = hm.candidates(n, k)
        assert cand.shape == (comb(n + k - 1, k - 1), k) == (hm.n_candidates(n, k), k)
        assert np.all(cand.sum(axis=1) == n) and np.all(cand >= 0)
        assert len({tuple(r) for r in cand.tolist()}) == cand.shape[0]
    assert hm.candidates(4)[:, 0].tolist() == [0, 1, 2, 3, 4]


def test_smoothing_parameter_is_the_formula_of_the_note():
    eps, delta, n = 0.7, 1e-5, 40
    gamma = np.log(1 - eps / (2 * np.log(delta / (2 * (n + 1)))))
    assert hm.smoothing_parameter(eps, delta, n + 1) == pytest.approx(gamma, rel=1e-14)
    with pytest.raises(ValueError, match="delta"):
        hm.smoothing_parameter(1.0, 1.5, 10)


def test_hellinger_of_betas_against_quadrature():
    u, v = [3.0, 5.0], [4.5, 2.0]
    bc = integrate.quad(lambda t: np.sqrt(stats.beta.pdf(t, *u) * stats.beta.pdf(t, *v)), 0, 1,
                        epsabs=0, epsrel=1e-12)[0]
    assert hellinger_dirichlet(u, v) == pytest.approx(np.sqrt(1 - bc), rel=1e-9)


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("n", [1, 2, 7])
def test_fast_local_sensitivity_equals_brute_force_over_all_candidates(prior, n):
    cand = hm.candidates(n)
    hmat = hm.hellinger_matrix(prior, cand)
    brute = ha.local_sensitivity_brute(hmat, hm.neighbour_index(cand))
    # Both are maxima of the same rounded distances: equal to rounding (1e-14 absolute).
    np.testing.assert_allclose(hm.local_sensitivity_beta(prior, n), brute, rtol=0, atol=1e-14)
    np.testing.assert_allclose(hm.local_sensitivity(prior, cand), brute, rtol=0, atol=1e-14)


def test_fast_local_sensitivity_dirichlet_equals_brute_force():
    prior = (0.5, 1.0, 2.0)
    cand = hm.candidates(5, 3)
    nb = hm.neighbour_index(cand)
    brute = ha.local_sensitivity_brute(hm.hellinger_matrix(prior, cand), nb)
    np.testing.assert_allclose(hm.local_sensitivity(prior, cand, nb), brute, rtol=0, atol=1e-14)


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("n, gamma", [(4, 0.05), (9, 0.3), (10, 2.0)])
def test_fast_smooth_sensitivity_equals_brute_force_over_all_data_sets(prior, n, gamma):
    brute, counts = ha.smooth_sensitivity_brute_beta(prior, n, gamma)
    fast = hm.smooth_sensitivity_beta(hm.local_sensitivity_beta(prior, n), gamma)
    np.testing.assert_allclose(fast[counts], brute, rtol=1e-13)
    dense = hm.smooth_sensitivity(hm.local_sensitivity_beta(prior, n), hm.candidates(n), gamma)
    np.testing.assert_allclose(fast, dense, rtol=1e-13)


def test_smooth_sensitivity_is_gamma_smooth_and_above_local():
    ls = hm.local_sensitivity_beta((1.0, 1.0), 200)
    s = hm.smooth_sensitivity_beta(ls, 0.02)
    assert np.all(s >= ls * (1 - 1e-14))  # equal where LS itself is the maximum (rounding)
    assert np.all(np.abs(np.diff(np.log(s))) <= 0.02 + 1e-12)


def test_log_pmf_is_normalised_and_survives_underflow():
    # At eps = 200, n = 2000 the plain weights exp(-eps H / 2S) underflow to 0 for most r.
    post = hm.posteriors((1.0, 1.0), hm.candidates(2000))
    h = hellinger_dirichlet(post[700], post)
    lp = hm.log_pmf(h, 1e-3, 200.0)
    assert np.all(np.isfinite(lp))
    assert np.exp(lp).sum() == pytest.approx(1.0, rel=1e-12)
    assert np.argmax(lp) == 700


def test_release_matches_the_exact_distribution():
    prior, n, count, eps, delta = (1.0, 1.0), 30, 11, 1.0, 1e-6
    mech = hm.SmoothedHellinger(prior, n, eps, delta)
    draws = mech.released_counts(np.broadcast_to((count, n - count), (40_000, 2)), rng=5)[:, 0]
    freq = np.bincount(draws, minlength=n + 1) / draws.size
    p = np.exp(mech.log_pmf[count])
    # Chi-square goodness of fit: a correct sampler fails at level 1e-4 only 1 time in 10^4.
    expected = p * draws.size
    keep = expected > 5
    chi2 = (((freq * draws.size)[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4
    rows = ha.log_pmf_rows_beta(prior, n, eps, delta, [count])
    np.testing.assert_allclose(rows[0], mech.log_pmf[count], rtol=0, atol=1e-12)


def test_audit_of_a_known_mechanism():
    # Randomised response on {0, 1}: P_x(x) = e^e / (1 + e^e); exactly e-DP, and
    # delta(e') = (e^e - e^e') / (1 + e^e) for e' < e.
    e = 1.3
    lp = np.log(np.array([[np.exp(e), 1.0], [1.0, np.exp(e)]]) / (1 + np.exp(e)))
    nb = np.array([[1], [0]])
    out = ha.audit(lp, nb, [0.5, e], orders=[2.0])
    assert out.pure_epsilon == pytest.approx(e, rel=1e-12)
    assert out.delta[0] == pytest.approx((np.exp(e) - np.exp(0.5)) / (1 + np.exp(e)), rel=1e-12)
    assert out.delta[1] == pytest.approx(0.0, abs=1e-15)
    p = np.exp(lp)
    renyi = np.log(np.sum(p[0] ** 2 / p[1]))
    assert out.renyi[0] == pytest.approx(renyi, rel=1e-12)


def test_audit_counts_agrees_with_the_dense_audit():
    prior, n, eps, delta = (2.0, 8.0), 40, 2.0, 1e-3
    mech = hm.SmoothedHellinger(prior, n, eps, delta)
    dense = ha.audit(mech.log_pmf, mech.neighbours, [eps, 0.5 * eps], orders=[2.0, 8.0])
    rows = ha.audit_counts(prior, n, eps, delta, np.arange(n), [eps, 0.5 * eps], orders=[2.0, 8.0])
    assert rows.pure_epsilon == pytest.approx(dense.pure_epsilon, rel=1e-10)
    np.testing.assert_allclose(rows.delta, dense.delta, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(rows.renyi, dense.renyi, rtol=1e-9)


def test_plain_exponential_mechanism_is_pure_dp():
    # McSherry-Talwar: weights exp(-eps H / (2 GS)) are eps-DP; the audit must confirm it.
    for prior in PRIORS:
        mech = hm.HellingerExponential(prior, 25, 1.0)
        assert ha.audit(mech.log_pmf, mech.neighbours, [1.0]).pure_epsilon <= 1.0 + 1e-12


def test_tail_bounds_consistent_and_loose_hold():
    prior, n, eps = (1.0, 1.0), 60, 1.0
    mech = hm.SmoothedHellinger(prior, n, eps, 1e-6)
    c = np.linspace(0, 1, 41)
    for x in (0, 17, 30):
        exact = ha.tail_exact(mech.log_pmf[x], mech.hellinger[x], c)
        bounds = ha.tail_bounds(mech.hellinger[x], mech.smooth[x], eps, c)
        assert np.all(exact <= bounds["consistent"] * (1 + 1e-12))
        assert np.all(bounds["consistent"] <= bounds["loose"] * (1 + 1e-12))


@pytest.mark.parametrize("u, v, eps", [([3.0, 5.0], [4.0, 4.0], 0.3), ([4.0, 4.0], [3.0, 5.0], 0.0),
                                       ([20.5, 3.5], [21.0, 3.0], 0.05), ([1.2, 7.0], [2.2, 6.0], 1.0)])
def test_beta_hockey_stick_against_quadrature(u, v, eps):
    # The hockey-stick divergence by integrating (p - e^eps q)_+ directly.
    def f(t):
        return max(stats.beta.pdf(t, *u) - np.exp(eps) * stats.beta.pdf(t, *v), 0.0)
    ref = integrate.quad(f, 0, 1, limit=400, epsabs=1e-13, epsrel=1e-10)[0]
    assert ha.beta_hockey_stick(u, v, eps) == pytest.approx(ref, rel=1e-7, abs=1e-12)


def test_beta_hockey_stick_rejects_unequal_totals():
    with pytest.raises(ValueError, match="equal totals"):
        ha.beta_hockey_stick([1.0, 2.0], [1.0, 3.0], 0.5)


def test_dirichlet_exact_scale_meets_delta_and_is_the_largest():
    alpha, n, eps, delta = 5.0, 50, 1.0, 1e-5
    r = ha.dirichlet_exact_scale(alpha, n, eps, delta)
    assert ha.dirichlet_worst_delta(r, alpha, n, eps) <= delta
    assert ha.dirichlet_worst_delta(r * (1 + 1e-6), alpha, n, eps) > delta


def test_bad_input_raises():
    with pytest.raises(ValueError, match="n must be an integer"):
        hm.candidates(0)
    with pytest.raises(ValueError, match="prior"):
        hm.posteriors((1.0, 1.0, 1.0), hm.candidates(3))
    with pytest.raises(ValueError, match="total the public n = 4"):
        hm.SmoothedHellinger((1.0, 1.0), 4, 1.0, 1e-6).release((5, 0))
    with pytest.raises(ValueError, match="at most 14"):
        ha.smooth_sensitivity_brute_beta((1.0, 1.0), 15, 0.1)
    with pytest.raises(ValueError, match="gamma"):
        hm.smooth_sensitivity_beta([0.1, 0.2], 0.0)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, inf\)"):
        ha.dirichlet_exact_scale(0.0, 10, 1.0, 1e-6)


def test_score_atoms_merge_ties_and_sum_to_one():
    # uniform prior, data set at the centre: every score but the true one is shared by two candidates
    mech = hm.SmoothedHellinger((1.0, 1.0), 20, 1.0, 1e-6)
    scores, probs = ha.score_atoms(mech.log_pmf[10], mech.hellinger[10])
    assert scores.size == 11 and scores[-1] == 0.0 and np.isclose(probs.sum(), 1.0, rtol=0, atol=1e-12)
    p = np.exp(mech.log_pmf[10])
    assert np.isclose(probs[-1], p[10], rtol=1e-14) and np.isclose(probs[0], p[0] + p[20], rtol=1e-14)
    # off centre no two candidates share a score
    assert ha.score_atoms(mech.log_pmf[3], mech.hellinger[3])[0].size == 21


def test_lemma_violation_on_a_hand_made_law():
    scores, probs = np.array([-2.0, -1.0, 0.0]), np.array([0.2, 0.3, 0.5])
    # a shift that maps -1 onto 0 and 0 onto nothing: the atom at 0 is compared with nothing
    out = ha.lemma_violation(scores, probs, 2.0, 0.1, shift=1.0)
    assert out["matched"] == 2 and out["score"] == 0.0 and np.isclose(out["violation"], 0.5 - 0.05)
    assert np.isclose(out["gap"], 1.0)
    # a generic shift matches nothing: the violation is the largest atom minus delta / 2
    out = ha.lemma_violation(scores, probs, 2.0, 0.1, shift=0.37)
    assert out["matched"] == 0 and np.isclose(out["violation"], 0.45) and np.isclose(out["gap"], 0.37)
    # dilation by e^lambda maps 0 to 0 and -1 to -2 when lambda = ln 2: only -2 is compared with nothing
    out = ha.lemma_violation(scores, probs, 0.0, 0.0, log_dilation=np.log(2.0))
    assert out["matched"] == 2 and out["score"] == -2.0 and np.isclose(out["violation"], 0.2)
    # a law with an atom at every image: the inequality holds
    assert ha.lemma_violation(np.array([-1.0, 0.0]), np.array([0.5, 0.5]), 0.0, 0.0, shift=0.0)["violation"] <= 0


def test_proof_delta_threshold_is_two_ln_two():
    import sympy as sp
    eps = sp.symbols("epsilon", positive=True)
    (root,) = sp.solve(sp.Eq(sp.exp(eps / 2) / 2, 1), eps)
    assert sp.simplify(root - 2 * sp.log(2)) == 0
    t = float(root)
    below, above = ha.proof_delta(t * (1 - 1e-6), 1e-3), ha.proof_delta(t * (1 + 1e-6), 1e-3)
    assert below["as_written"] < 1e-3 < above["as_written"]
    assert (ha.proof_delta(np.array([1e-6, 0.5, 5.0]), 1e-3)["both_terms"] > 1e-3).all()


def test_head_to_head_calibration_is_memoised_and_unchanged():
    hx._order_for.cache_clear()
    hx._exact_scale_for.cache_clear()
    ref = np.array([30.0, 70.0])
    first = hx.head_to_head((1.0, 1.0), (40, 60), 1.0, 1e-6, reference=ref, repeats=50, rng=1)["_calibration"]
    assert hx._order_for.cache_info().misses == 1
    again = hx.head_to_head((1.0, 1.0), (20, 80), 1.0, 1e-6, reference=ref, repeats=50, rng=2)["_calibration"]
    assert hx._order_for.cache_info().hits == 1 and hx._exact_scale_for.cache_info().hits == 1
    assert first == again
    from lib.mechanisms.dirichlet.order import optimal_order
    direct = optimal_order(1.0, 1e-6, ref)
    assert first["r_app_b"] == direct.r and first["alpha"] == direct.alpha
    assert first["r_exact"] == ha.dirichlet_exact_scale(direct.alpha, 100, 1.0, 1e-6)


FAMILY = {"smoothed_hellinger": hm.SmoothedHellinger, "hellinger_em": hm.HellingerExponential,
          "count_laplace": hm.CountLaplace, "count_gaussian": hm.CountGaussian}


@pytest.mark.parametrize("name", list(FAMILY))
def test_registered_hellinger_family_pickles_releases_on_the_simplex_and_states_a_guarantee(name):
    import pickle

    from lib.mechanisms.protocol import ApproximateDP, PureDP, ReleaseSpec, RenyiDP, get

    cls = get(name)
    assert cls is FAMILY[name]
    spec = ReleaseSpec(((1, 2), (1, 2)), 30)  # two vectors of public total 30
    cal = cls.calibrate(ApproximateDP(2.0, 1e-4), spec)
    share = (1.0, 5e-5)
    for mech in cal.releases:
        g = mech.guarantee
        assert isinstance(g, (PureDP, ApproximateDP)) and g.epsilon == share[0]
        if isinstance(g, ApproximateDP):
            assert g.delta == share[1]
        counts = np.array([[0, 30], [13, 17], [30, 0]])
        copy = pickle.loads(pickle.dumps(mech))
        y = copy.release(counts, rng=np.random.default_rng(4))
        assert np.array_equal(y, mech.release(counts, rng=np.random.default_rng(4)))
        assert y.shape == (3, 2) and np.all(y > 0) and np.allclose(y.sum(axis=-1), 1.0)  # even at empty cells
    assert cal.guarantee.epsilon == 2.0
    with pytest.raises(ValueError, match="cannot meet a RenyiDP target"):
        cls.calibrate(RenyiDP(2.0, 1.0), spec)
    with pytest.raises(ValueError, match="public total n"):  # rows of a table have private totals
        cls.calibrate(ApproximateDP(2.0, 1e-4), ReleaseSpec(((3, 2),), 30))


def test_count_noise_statements_hold():
    # Laplace on a count of sensitivity 1: the density ratio of neighbours is at most e^eps everywhere
    lap = hm.CountLaplace(0.7, 50)
    t = np.linspace(-20, 70, 2001)
    log_ratio = (-np.abs(t - 20) + np.abs(t - 21)) / lap.noise_scale
    assert log_ratio.max() <= lap.guarantee.epsilon * (1 + 1e-12)
    # the analytic Gaussian's exact delta (Balle and Wang 2018, Theorem 8) in mpmath, at sensitivity 1
    gau = hm.CountGaussian(0.7, 1e-5, 50)
    s, e = mp.mpf(gau.noise_scale), mp.mpf(0.7)
    exact = mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)
    assert float(exact) <= gau.guarantee.delta * (1 + 1e-9)


def test_smoothed_hellinger_release_is_the_posterior_mean_of_the_released_count():
    mech = hm.SmoothedHellinger((1.0, 1.0), 40, 2.0, 1e-6)
    counts = np.broadcast_to((11, 29), (500, 2))
    c = mech.released_counts(counts, rng=9)
    y = mech.release(counts, rng=9)
    np.testing.assert_array_equal(y, (c + 1.0) / 42.0)
    three = hm.SmoothedHellinger((0.5, 1.0, 2.0), 6, 1.0, 1e-3)
    assert np.array_equal(three.index(three.cand), np.arange(three.cand.shape[0]))


# --- The memoised and batched paths against the plain computations ---------------------------

def _plain_log_pmf_rows(mech, counts):
    """Definition 2.1 row by row, written out: distances to every candidate, then the exponential mechanism."""
    post = mech.prior + mech.cand
    rows = [hellinger_dirichlet(post[int(a)][None, :], post) for a in np.asarray(counts)[..., 0].reshape(-1)]
    idx = np.asarray(counts)[..., 0]
    return hm.log_pmf(np.array(rows).reshape(idx.shape + (post.shape[0],)), mech.smooth[idx], mech.epsilon)


@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.05, 0.05), (2.0, 8.0)])
def test_memoised_local_sensitivity_and_rows_equal_the_plain_computation(prior, monkeypatch):
    # Each distance is the same elementwise function of the same two posteriors, whether computed
    # alone, in a batch or taken from the memo: the values must agree exactly (not to a tolerance).
    n = 57
    hm.sensitivity._beta_local_sensitivity_memo.cache_clear()
    hm.sensitivity._beta_hellinger_rows_memo.cache_clear()
    for eps, delta in [(1.0, 1e-6), (5.0, 1e-2)]:
        mech = hm.SmoothedHellinger(prior, n, eps, delta)
        np.testing.assert_array_equal(mech.ls, hm.local_sensitivity_beta(prior, n))
        assert not mech.ls.flags.writeable  # shared by every mechanism of (prior, n)
        for counts in [(3, 54), np.array([[0, 57], [57, 0], [20, 37], [20, 37]]),
                       np.stack([np.arange(6).reshape(2, 3), 57 - np.arange(6).reshape(2, 3)], axis=-1)]:
            for _ in range(2):  # the second call reads the memo
                np.testing.assert_array_equal(mech.log_pmf_rows(counts), _plain_log_pmf_rows(mech, counts))
        # the dense matrix (another path through the same distances) agrees row by row
        np.testing.assert_array_equal(mech.log_pmf_rows(mech.cand), mech.log_pmf)
    assert hm.sensitivity._beta_local_sensitivity_memo.cache_info().hits >= 1
    assert hm.sensitivity._beta_hellinger_rows_memo.cache_info().hits >= 6
    # beyond the memo's size the rows are computed afresh, with the same values
    monkeypatch.setattr(hm.sensitivity, "MEMO_CELLS", 10)
    fresh = hm.SmoothedHellinger(prior, n, 1.0, 1e-6)
    assert fresh.ls.flags.writeable
    np.testing.assert_array_equal(fresh.log_pmf_rows((3, 54)), _plain_log_pmf_rows(fresh, (3, 54)))
    em = hm.HellingerExponential(prior, n, 1.0)
    np.testing.assert_array_equal(em.log_pmf_rows((3, 54)), _plain_log_pmf_rows(em, (3, 54)))


def test_head_to_head_exact_expectations_equal_the_plain_computation():
    hx._candidate_utility_memo.cache_clear()
    ref = np.array([9.0, 21.0])
    res = hx.head_to_head((1.0, 1.0), (7, 23), 1.0, 1e-6, reference=ref, repeats=20, rng=3)
    again = hx.head_to_head((1.0, 1.0), (7, 23), 1.0, 1e-6, reference=ref, repeats=20, rng=3)
    assert hx._candidate_utility_memo.cache_info().hits >= 2 and res == again
    post = hm.posteriors((1.0, 1.0), hm.candidates(30))
    for display, cls in [("M_H", hm.SmoothedHellinger), ("EM (global sens.)", hm.HellingerExponential)]:
        p = np.exp(_plain_log_pmf_rows(cls((1.0, 1.0), 30, 1.0, 1e-6), (7, 23)))
        util = hx.posterior_utility(np.broadcast_to(post[7], post.shape), post)
        assert res[display] == {key: (float(p @ value), 0.0) for key, value in util.items()}
    with pytest.raises(ValueError, match="prior must be in"):
        hx.head_to_head((1.0, -1.0), (7, 23), 1.0, 1e-6, reference=ref, repeats=20, rng=3)


def test_hellinger_rows_beta_equal_the_distances_one_by_one():
    hm.sensitivity._beta_hellinger_rows_memo.cache_clear()
    post = hm.posteriors((0.5, 2.0), hm.candidates(12))
    counts = np.array([[[3, 9], [0, 12]], [[12, 0], [3, 9]]])
    rows = hm.hellinger_rows_beta((0.5, 2.0), counts)
    assert rows.shape == (2, 2, 13) and not rows.flags.writeable
    for i in np.ndindex(2, 2):
        a = counts[i][0]
        np.testing.assert_array_equal(rows[i], [hellinger_dirichlet(post[a], post[j]) for j in range(13)])
    np.testing.assert_array_equal(hm.hellinger_rows_beta((0.5, 2.0), (3, 9)), rows[0, 0])
    util = hx.posterior_utility(np.broadcast_to(post[3], post.shape), post, hellinger=rows[0, 0])
    plain = hx.posterior_utility(np.broadcast_to(post[3], post.shape), post)
    assert util.keys() == plain.keys() and all(np.array_equal(util[key], plain[key]) for key in util)


def _lemma_by_loop(scores, probs, epsilon, delta, shift, log_dilation, atol):
    """The lemma's inequality atom by atom, with the matching atom found by a plain scan."""
    excess, gaps, matched = [], [], 0
    for s, p in zip(scores, probs):
        image = (s + shift) * np.exp(log_dilation)
        dist = [abs(t - image) for t in scores]
        j = int(np.argmin(dist))
        if dist[j] <= atol:
            matched += 1
            excess.append(p - np.exp(epsilon / 2) * probs[j] - delta / 2)
        else:
            gaps.append(dist[j])
            excess.append(p - delta / 2)
    worst = int(np.argmax(excess))
    return {"violation": excess[worst], "score": scores[worst], "gap": min(gaps, default=np.inf), "matched": matched}


def test_lemma_violations_equal_the_loop_over_transforms():
    mech = hm.SmoothedHellinger((0.5, 0.5), 40, 2.0, 1e-2)
    laws = [ha.score_atoms(mech.log_pmf[a], mech.hellinger[a]) for a in (0, 4, 20)]
    laws.append((np.array([-2.0, -1.0, 0.0]), np.array([0.2, 0.3, 0.5])))
    laws.append((np.array([-0.5]), np.array([1.0])))
    for scores, probs in laws:
        shifts = np.concatenate([[0.0, 1.0], mech.smooth[4] * np.arange(1, 21) / 20])
        dilations = np.concatenate([[0.0, np.log(2.0)], mech.gamma * np.arange(1, 21) / 20])
        for kw, values in [("shift", shifts), ("log_dilation", dilations)]:
            for atol in (1e-12, 1e-8):
                batch = ha.lemma_violations(scores, probs, 2.0, 1e-2, **{kw: values}, atol=atol)
                assert {key: v.shape for key, v in batch.items()} == dict.fromkeys(batch, values.shape)
                for i, value in enumerate(values):
                    loop = _lemma_by_loop(scores, probs, 2.0, 1e-2, value if kw == "shift" else 0.0,
                                          value if kw == "log_dilation" else 0.0, atol)
                    one = ha.lemma_violation(scores, probs, 2.0, 1e-2, **{kw: value}, atol=atol)
                    assert one == {key: v[i] for key, v in batch.items()}
                    assert one["matched"] == loop["matched"] and one["score"] == loop["score"]
                    assert one["violation"] == pytest.approx(loop["violation"], rel=1e-12, abs=1e-15)
                    assert one["gap"] == pytest.approx(loop["gap"], rel=1e-12, abs=1e-15)
    both = ha.lemma_violations(*laws[0], 2.0, 1e-2, shift=shifts[:3, None], log_dilation=dilations[:4])
    assert both["violation"].shape == (3, 4)
    assert both["violation"][2, 3] == ha.lemma_violation(*laws[0], 2.0, 1e-2, shift=shifts[2],
                                                         log_dilation=dilations[3])["violation"]
    with pytest.raises(ValueError, match="log_dilation must be in"):
        ha.lemma_violations(*laws[0], 2.0, 1e-2, log_dilation=np.array([0.1, 60.0]))
    with pytest.raises(ValueError, match="do not broadcast"):
        ha.lemma_violations(*laws[0], 2.0, 1e-2, shift=np.ones(3), log_dilation=np.ones(4))


def test_beta_hockey_stick_evaluates_each_tail_once_with_the_same_values():
    from scipy import special
    rng = np.random.default_rng(5)
    u = np.stack([rng.uniform(0.1, 50, 200), rng.uniform(0.1, 50, 200)], axis=1)
    v = np.stack([u[:, 0] + rng.choice([-1.0, 0.0, 0.5, 2.0], 200), u[:, 1]], axis=1)
    v[:, 1] = u.sum(axis=1) - v[:, 0]
    keep = (v > 0).all(axis=1)
    u, v = u[keep], v[keep]
    eps = np.array([[0.0], [0.3], [2.0]])  # broadcast against the pairs
    # the two tails of both distributions at the threshold, then the choice (the former code)
    s = u[:, 0] - v[:, 0]
    k = special.betaln(v[:, 0], v[:, 1]) - special.betaln(u[:, 0], u[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = special.expit((eps - k) / s)
    pa = np.where(s > 0, special.betaincc(u[:, 0], u[:, 1], t), special.betainc(u[:, 0], u[:, 1], t))
    qa = np.where(s > 0, special.betaincc(v[:, 0], v[:, 1], t), special.betainc(v[:, 0], v[:, 1], t))
    plain = np.where(s == 0, np.maximum(-np.expm1(np.minimum(eps, 1.0)), 0.0),
                     np.maximum(pa - np.exp(eps) * qa, 0.0))
    np.testing.assert_array_equal(ha.beta_hockey_stick(u, v, eps), plain)
    assert ha.beta_hockey_stick(u[0], v[0], 0.3) == plain[1, 0]
