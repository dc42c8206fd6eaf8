"""The smoothed-Hellinger exponential mechanism (lib.mechanisms.hellinger), its audit and its head-to-head."""

import inspect
import time
from math import comb

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from lib.experiments import hellinger as hx
from lib.mechanisms import hellinger as hm
from lib.theory import hellinger_audit as ha
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet
from lib import validation
from lib.mechanisms.protocol import ApproximateDP, PureDP

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


def _quick(func, exc, match):
    start = time.monotonic()
    with pytest.raises(exc, match=match):
        func()
    assert time.monotonic() - start < 5  # refused before the work starts


# ----------------------------------------------------------------------------- (a) zero probabilities


def _log(p):
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(p, dtype=float))


def test_audit_of_outputs_impossible_on_both_data_sets_is_exact():
    # The reproduction: the third output has probability 0 on both data sets.
    out = ha.audit(_log([[0.5, 0.5, 0.0], [0.1, 0.9, 0.0]]), np.array([[1], [0]]), [0.5], orders=[2.0])
    # By hand: pure eps = log(0.5 / 0.1); delta(0.5) = 0.5 - e^0.5 0.1 (the other terms are
    # clipped); D_2(P0 || P1) = log(0.5^2 / 0.1 + 0.5^2 / 0.9), larger than D_2(P1 || P0).
    assert out.pure_epsilon == pytest.approx(np.log(5.0), rel=1e-14)
    assert out.delta[0] == pytest.approx(0.5 - np.exp(0.5) * 0.1, rel=1e-14)
    assert out.renyi[0] == pytest.approx(np.log(0.25 / 0.1 + 0.25 / 0.9), rel=1e-14)
    assert out.pure_worst_pair == (0, 1) and out.worst_pair == (0, 1)


def test_audit_of_an_output_possible_on_one_side_only_is_infinite():
    out = ha.audit(_log([[0.5, 0.5], [1.0, 0.0]]), np.array([[1], [0]]), [0.0, 3.0], orders=[2.0, 8.0])
    assert out.pure_epsilon == np.inf and out.pure_worst_pair == (0, 1)
    assert np.all(out.renyi == np.inf)
    # delta(eps) >= P_0(second output) = 0.5 at every eps; at eps = 0 it is the TV distance 0.5
    np.testing.assert_allclose(out.delta, [0.5, 0.5], rtol=1e-15)


def test_audit_checks_both_directions_of_a_pair_listed_once():
    # P0 = (0.5, 0.5), P1 = (0.9, 0.1); only the pair 1 -> 0 is listed.
    lp = _log([[0.5, 0.5], [0.9, 0.1]])
    out = ha.audit(lp, np.array([[-1], [0]]), [0.5])
    forward = 0.5 - np.exp(0.5) * 0.1  # P0 against P1, the larger direction
    assert out.delta[0] == pytest.approx(forward, rel=1e-14)
    assert out.worst_pair == (0, 1)
    assert out.pure_epsilon == pytest.approx(np.log(5.0), rel=1e-14)


# ----------------------------------------------------------------------------- (b) the worst pairs


def test_the_reported_pair_attains_the_pure_epsilon():
    # The setting: before the fix the audit printed pair (0, 1), which spends 0.50 eps,
    # while pair (2, 3) spends 0.855 eps.
    eps = 20.0
    mech = hm.SmoothedHellinger((0.05, 0.05), 300, eps, 1e-2)
    out = ha.audit(mech.log_pmf, mech.neighbours, [eps])
    lp = mech.log_pmf
    spend = np.array([np.abs(lp[a] - lp[a + 1]).max() for a in range(300)])  # by definition
    a = int(np.argmax(spend))
    assert (a, spend[a] / eps) == (2, pytest.approx(0.8547, abs=1e-4))
    assert sorted(out.pure_worst_pair) == [2, 3]
    x, y = out.pure_worst_pair
    assert (lp[x] - lp[y]).max() == pytest.approx(out.pure_epsilon, rel=1e-14)
    assert out.pure_epsilon == pytest.approx(spend.max(), rel=1e-14)
    assert out.delta[0] == 0.0 and out.worst_pair is None  # no pair is worst for delta


def test_audit_counts_reports_pairs_as_counts():
    eps = 20.0
    out = ha.audit_counts((0.05, 0.05), 300, eps, 1e-2, [150, 2, 40])
    assert sorted(out.pure_worst_pair) == [2, 3]  # the counts, not rows of the internal table
    assert out.pure_epsilon / eps == pytest.approx(0.8547, abs=1e-4)


def test_audit_counts_in_blocks_equals_one_dense_audit():
    # More pairs than one block (128): the merged maxima and pairs equal the dense audit's.
    prior, n, eps, delta = (0.5, 0.5), 300, 5.0, 1e-2
    mech = hm.SmoothedHellinger(prior, n, eps, delta)
    dense = ha.audit(mech.log_pmf, mech.neighbours, [eps, 0.3], orders=[2.0])
    rows = ha.audit_counts(prior, n, eps, delta, np.arange(n), [eps, 0.3], orders=[2.0])
    assert rows.pure_epsilon == pytest.approx(dense.pure_epsilon, rel=1e-10)
    assert rows.pure_worst_pair == dense.pure_worst_pair
    np.testing.assert_allclose(rows.delta, dense.delta, rtol=1e-9, atol=1e-15)
    assert rows.worst_pair == dense.worst_pair
    np.testing.assert_allclose(rows.renyi, dense.renyi, rtol=1e-9)


# ----------------------------------------------------------------------------- (c) the guarantee


def _mp_pair(prior, n, eps, delta, a, dps=40):
    """Pure epsilon and delta(eps) of the pair (a, a + 1) of M_H, from the definitions, in mpmath.

    Independent of lib: Hellinger distances from the note's Beta-function formula, LS from the
    neighbouring posteriors (the chapter's proposition), S from eq. (1) over all counts, the
    note's gamma, and the two output distributions of Definition 2.1.
    """
    with mp.workdps(dps):
        al, be = mp.mpf(prior[0]), mp.mpf(prior[1])

        def log_b(x, y):
            return mp.loggamma(x) + mp.loggamma(y) - mp.loggamma(x + y)

        def post(c):
            return al + c, be + n - c

        def hel(c, d):
            (u1, u2), (v1, v2) = post(c), post(d)
            bc = log_b((u1 + v1) / 2, (u2 + v2) / 2) - (log_b(u1, u2) + log_b(v1, v2)) / 2
            return mp.sqrt(-mp.expm1(bc))

        h = [hel(c, c + 1) for c in range(n)]
        ls = [h[0]] + [max(h[c - 1], h[c]) for c in range(1, n)] + [h[n - 1]]
        gamma = mp.log(1 - mp.mpf(eps) / (2 * mp.log(mp.mpf(delta) / (2 * (n + 1)))))

        def row(c):
            s = max(ls[j] * mp.exp(-gamma * abs(c - j)) for j in range(n + 1))
            logw = [-mp.mpf(eps) * hel(c, r) / (2 * s) for r in range(n + 1)]
            top = max(logw)
            norm = top + mp.log(mp.fsum(mp.exp(w - top) for w in logw))
            return [w - norm for w in logw]

        px, py = row(a), row(a + 1)
        pure = max(abs(p - q) for p, q in zip(px, py))
        e = mp.exp(mp.mpf(eps))
        dlt = max(mp.fsum(max(mp.exp(p) - e * mp.exp(q), 0) for p, q in zip(px, py)),
                  mp.fsum(max(mp.exp(q) - e * mp.exp(p), 0) for p, q in zip(px, py)))
        return float(pure), float(dlt)


def test_smoothed_hellinger_is_not_pure_dp_outside_the_grid():
    prior, n, eps, delta = (1e-8, 1e8), 150, 40.0, 1e-6
    out = ha.audit_counts(prior, n, eps, delta, np.arange(n))
    assert sorted(out.pure_worst_pair) == [2, 3]
    pure_mp, delta_mp = _mp_pair(prior, n, eps, delta, 2)
    assert pure_mp / eps == pytest.approx(1.0288, abs=1e-4)  # above the nominal eps: not eps-DP
    assert out.pure_epsilon == pytest.approx(pure_mp, rel=1e-9)
    assert delta_mp < 1e-15 and out.delta[0] < 1e-15  # (eps, delta) holds there, with delta(eps) ~ 2e-16
    # So the stated guarantee is the note's (eps, delta), even when audited:
    mech = hm.SmoothedHellinger(prior, n, eps, delta)
    assert mech.guarantee == ApproximateDP(eps, delta)
    assert ha.audited_guarantee(mech) == ApproximateDP(eps, delta)


def test_guarantee_is_pure_only_where_the_exact_audit_shows_it():
    prior, n, eps, delta = (1.0, 1.0), 40, 1.0, 1e-6
    mech = hm.SmoothedHellinger(prior, n, eps, delta)
    assert mech.guarantee == ApproximateDP(eps, delta)  # never pure unaudited
    spend = max(np.abs(mech.log_pmf[a] - mech.log_pmf[a + 1]).max() for a in range(n))
    assert spend < eps  # measured here, by definition
    assert ha.audited_guarantee(mech) == PureDP(eps)
    em = hm.HellingerExponential(prior, n, eps, delta)
    assert em.guarantee == PureDP(eps) == ha.audited_guarantee(em)  # McSherry-Talwar


def test_guarantee_refuses_a_setting_whose_exact_delta_exceeds_the_target(monkeypatch):
    # No such setting is known; the branch is exercised with a stand-in audit.
    fake = ha.Audit(np.array([0.5]), 3.0, np.array([]), (0, 1), (0, 1))
    monkeypatch.setattr(ha, "audit", lambda *a, **k: fake)
    with pytest.raises(ValueError, match="does not hold at this setting"):
        ha.audited_guarantee(hm.SmoothedHellinger((1.0, 1.0), 10, 1.0, 1e-6))


def test_guarantee_refuses_an_exact_audit_beyond_its_size_limit():
    _quick(lambda: ha.audited_guarantee(hm.SmoothedHellinger((1.0, 1.0), ha.MAX_EXACT_CANDIDATES, 1.0, 1e-6)),
           ValueError, "the exact audit allows at most")


# ----------------------------------------------------------------------------- (d) hostile input

PRIOR = (1.0, 1.0)


def _mech():
    return hm.SmoothedHellinger(PRIOR, 6, 1.0, 1e-6)


# (call, exception, the start of the message: the argument's name)
CASES = {
    # audit
    "audit NaN": (lambda: ha.audit(np.array([[np.nan, 0.0], [0.0, -np.inf]]), [[1], [0]], [1.0]),
                  ValueError, "log_pmf_matrix must hold log probabilities"),
    "audit +inf": (lambda: ha.audit(np.array([[np.inf, 0.0], [0.0, -np.inf]]), [[1], [0]], [1.0]),
                   ValueError, "log_pmf_matrix must hold log probabilities"),
    "audit unnormalised": (lambda: ha.audit(_log([[0.5, 0.6], [0.5, 0.5]]), [[1], [0]], [1.0]),
                           ValueError, "every row of log_pmf_matrix"),
    "audit 1-D": (lambda: ha.audit(_log([0.5, 0.5]), [[1], [0]], [1.0]), ValueError, "log_pmf_matrix must"),
    "audit string": (lambda: ha.audit("x", [[1], [0]], [1.0]), TypeError, "log_pmf_matrix"),
    "audit neighbour out of range": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[2], [0]], [1.0]),
                                     ValueError, "neighbours must hold row indices"),
    "audit float neighbours": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[1.0], [0.0]], [1.0]),
                               TypeError, "neighbours"),
    "audit no pair": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[-1], [-1]], [1.0]),
                      ValueError, "neighbours lists no pair"),
    "audit neighbour rows": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[1]], [1.0]),
                             ValueError, "neighbours must have shape"),
    "audit no epsilon": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[1], [0]], []),
                         ValueError, "epsilons must be a non-empty"),
    "audit NaN epsilon": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[1], [0]], [np.nan]),
                          ValueError, "epsilons must be finite"),
    "audit order 1": (lambda: ha.audit(_log([[0.5, 0.5], [0.5, 0.5]]), [[1], [0]], [1.0], [1.0]),
                      ValueError, "orders must be in"),
    # candidates and neighbours
    "candidates huge n": (lambda: hm.candidates(10**9), ValueError, r"candidates\(n = 1000000000, k = 2\)"),
    "n_candidates float": (lambda: hm.n_candidates(2.0), TypeError, "n must be an integer"),
    "neighbour_index floats": (lambda: hm.neighbour_index(hm.candidates(3).astype(float)), TypeError, "cand"),
    "neighbour_index partial": (lambda: hm.neighbour_index(hm.candidates(4, 3)[:-1]), ValueError,
                                "cand must hold every count vector"),
    "neighbour_index totals": (lambda: hm.neighbour_index(np.array([[0, 2], [1, 0], [2, 0]])), ValueError,
                               "cand must hold count vectors of one total"),
    "neighbour_index order": (lambda: hm.neighbour_index(hm.candidates(3)[::-1]), ValueError,
                              r"cand must be candidates\(n, 2\)"),
    "local_sensitivity partial": (lambda: hm.local_sensitivity(PRIOR, hm.candidates(5)[:3]), ValueError,
                                  "cand must hold every count vector"),
    "local_sensitivity wrong neighbours": (
        lambda: hm.local_sensitivity((1.0, 2.0, 3.0), hm.candidates(3, 3),
                                     np.roll(hm.neighbour_index(hm.candidates(3, 3)), 1, axis=0)),
        ValueError, "neighbours are not the neighbours of cand"),
    "local_sensitivity_beta huge prior": (lambda: hm.local_sensitivity_beta((1e300, 1e300), 3), ValueError,
                                     "prior = .* is so large"),
    "local_sensitivity_brute NaN": (lambda: ha.local_sensitivity_brute(np.full((2, 2), np.nan), [[1], [0]]),
                                    ValueError, "hmat must be finite"),
    "local_sensitivity_brute neighbours": (lambda: ha.local_sensitivity_brute(np.zeros((2, 2)), [[5], [0]]),
                                           ValueError, "neighbours must hold indices"),
    "local_sensitivity_brute not square": (lambda: ha.local_sensitivity_brute(np.zeros((2, 3)), [[1], [0]]),
                                           ValueError, "hmat must be a non-empty square"),
    # sensitivities
    "smooth_sensitivity_beta scalar ls": (lambda: hm.smooth_sensitivity_beta(0.1, 0.1), ValueError,
                                          "ls must be a 1-D array"),
    "smooth_sensitivity_beta NaN": (lambda: hm.smooth_sensitivity_beta([0.1, np.nan], 0.1), ValueError,
                                    "ls must be finite"),
    "smooth_sensitivity partial cand": (lambda: hm.smooth_sensitivity([0.1, 0.2], hm.candidates(3)[:2], 0.1),
                                        ValueError, "cand must hold every count vector"),
    "smooth_sensitivity ls shape": (lambda: hm.smooth_sensitivity([0.1, 0.2], hm.candidates(3), 0.1),
                                    ValueError, "ls must have one entry per row"),
    "smooth_sensitivity_brute_beta NaN gamma": (lambda: ha.smooth_sensitivity_brute_beta(PRIOR, 4, np.nan),
                                                ValueError, "gamma must be finite"),
    "smooth_sensitivity_brute_beta negative gamma": (lambda: ha.smooth_sensitivity_brute_beta(PRIOR, 4, -1.0),
                                                     ValueError, "gamma must be in"),
    "smooth_sensitivity_brute_beta n": (lambda: ha.smooth_sensitivity_brute_beta(PRIOR, 15, 0.1),
                                        ValueError, "n must be at most 14"),
    "smoothing_parameter delta": (lambda: hm.smoothing_parameter(1.0, 0.0, 10), ValueError, "delta must be in"),
    "posteriors negative": (lambda: hm.posteriors(PRIOR, [[-1, 2]]), ValueError, "counts must be in"),
    "hellinger_matrix 1-D": (lambda: hm.hellinger_matrix(PRIOR, [1, 2]), ValueError, "cand must be a 2-D"),
    # the mechanism
    "log_pmf NaN": (lambda: hm.log_pmf([0.0, np.nan], 0.1, 1.0), ValueError, "hellinger must be finite"),
    "log_pmf overflow": (lambda: hm.log_pmf([0.5, 0.7], 1e-300, 1e300), ValueError, "epsilon = 1e.300 times"),
    "log_pmf shapes": (lambda: hm.log_pmf(np.zeros((3, 4)), np.ones(2), 1.0), ValueError,
                       r"scale \(shape \(2,\)\) must broadcast"),
    "log_pmf scalar": (lambda: hm.log_pmf(0.3, 0.1, 1.0), ValueError, "hellinger must have the candidates"),
    "geometry k": (lambda: hm.geometry(PRIOR, 3, 1), ValueError, "k must be an integer"),
    "geometry_for tuple": (lambda: hm.geometry_for(tuple(hm.geometry(PRIOR, 6)), np.asarray(PRIOR), 6, 2), TypeError,
                           "geom must be a Geometry"),
    "prior_vector length": (lambda: hm.prior_vector((1.0, 1.0, 1.0), 2), ValueError, "prior must be a vector of 2"),
    "prior_vector NaN": (lambda: hm.prior_vector((np.nan, 1.0), 2), ValueError, "prior"),
    "public_total_counts total": (lambda: hm.public_total_counts([[2, 3]], 6, 2), ValueError,
                                  "total the public n = 6"),
    "public_total_counts negative": (lambda: hm.public_total_counts([[-1, 7]], 6, 2), ValueError,
                                     "counts must be non-negative"),
    "SmoothedHellinger geom of another prior": (
        lambda: hm.SmoothedHellinger((0.5, 0.5), 6, 1.0, 1e-6, geom=hm.geometry(PRIOR, 6)),
        ValueError, "geom was built for prior"),
    "SmoothedHellinger geom of another n": (
        lambda: hm.SmoothedHellinger(PRIOR, 7, 1.0, 1e-6, geom=hm.geometry(PRIOR, 6)),
        ValueError, "geom was built for n = 6"),
    "SmoothedHellinger geom tuple": (
        lambda: hm.SmoothedHellinger(PRIOR, 6, 1.0, 1e-6, geom=tuple(hm.geometry(PRIOR, 6))[:4]),
        TypeError, "geom must be a Geometry"),
    "SmoothedHellinger epsilon": (lambda: hm.SmoothedHellinger(PRIOR, 6, np.inf, 1e-6), ValueError,
                                  "epsilon must be finite"),
    "SmoothedHellinger delta": (lambda: hm.SmoothedHellinger(PRIOR, 5, 1.0, 1.0), ValueError, "delta must be in"),
    "SmoothedHellinger no delta": (lambda: hm.SmoothedHellinger(PRIOR, 5, 1.0), ValueError, "delta must be in"),
    "SmoothedHellinger prior": (lambda: hm.SmoothedHellinger(np.ones((2, 2)), 5, 1.0, 1e-6), ValueError,
                                "prior must be a vector"),
    "SmoothedHellinger huge release": (
        lambda: _mech().release(np.broadcast_to((2, 4), (10**5, 10**5, 2))), ValueError, "counts would need"),
    "SmoothedHellinger float counts": (lambda: _mech().release((2.5, 3.5)), TypeError, "counts must be an array"),
    "SmoothedHellinger NaN counts": (lambda: _mech().release((np.nan, 6.0)), TypeError, "counts must be an array"),
    "SmoothedHellinger counts total": (lambda: _mech().release((7, 0)), ValueError, "total the public n = 6"),
    "SmoothedHellinger counts length": (lambda: _mech().release((2, 2, 2)), ValueError, "count vectors of length 2"),
    "SmoothedHellinger rng": (lambda: _mech().release((2, 4), rng=-1), ValueError, "rng must be"),
    "HellingerExponential epsilon": (lambda: hm.HellingerExponential(PRIOR, 6, 0.0), ValueError,
                                     "epsilon must be in"),
    "CountLaplace n": (lambda: hm.CountLaplace(1.0, 0), ValueError, "n must be an integer"),
    "CountLaplace counts total": (lambda: hm.CountLaplace(1.0, 6).release((2, 3)), ValueError,
                                  "total the public n = 6"),
    "CountGaussian delta": (lambda: hm.CountGaussian(1.0, 0.0, 6), ValueError, "delta must be in"),
    "CountGaussian prior": (lambda: hm.CountGaussian(1.0, 1e-6, 6, (1.0, 1.0, 1.0)), ValueError,
                            "prior must be a vector of 2"),
    # rows and spot audits
    "log_pmf_rows_beta float counts": (lambda: ha.log_pmf_rows_beta(PRIOR, 6, 1.0, 1e-6, [2.7]), TypeError,
                                       "counts must be an array of integers"),
    "log_pmf_rows_beta empty": (lambda: ha.log_pmf_rows_beta(PRIOR, 6, 1.0, 1e-6, np.array([], dtype=int)),
                                ValueError, "counts must be a non-empty"),
    "log_pmf_rows_beta range": (lambda: ha.log_pmf_rows_beta(PRIOR, 6, 1.0, 1e-6, [7]), ValueError,
                                r"counts must hold integers in \[0, 6\]"),
    "log_pmf_rows_beta size": (lambda: ha.log_pmf_rows_beta(PRIOR, 10**7, 1.0, 1e-6, [0, 1]), ValueError,
                               "would need"),
    "audit_counts float counts": (lambda: ha.audit_counts(PRIOR, 6, 1.0, 1e-6, [2.7]), TypeError,
                                  "counts must be an array of integers"),
    "audit_counts range": (lambda: ha.audit_counts(PRIOR, 6, 1.0, 1e-6, [6]), ValueError,
                           r"counts must hold integers in \[0, 5\]"),
    "audit_counts size": (lambda: ha.audit_counts(PRIOR, 10**5, 1.0, 1e-6, np.arange(10**5)), ValueError,
                          "would need"),
    "audit_counts n": (lambda: ha.audit_counts(PRIOR, 0, 1.0, 1e-6, [0]), ValueError, "n must be an integer"),
    # accuracy
    "tail_exact NaN c": (lambda: ha.tail_exact(_mech().log_pmf[2], _mech().hellinger[2], [np.nan]), ValueError,
                         "c must be finite"),
    "tail_exact shapes": (lambda: ha.tail_exact(_mech().log_pmf[2], _mech().hellinger[2][:3], [0.1]), ValueError,
                          "hellinger_row must have the shape"),
    "tail_exact unnormalised": (lambda: ha.tail_exact(np.zeros(7), _mech().hellinger[2], [0.1]), ValueError,
                                "every row of log_pmf_row"),
    "tail_bounds scale": (lambda: ha.tail_bounds(_mech().hellinger[2], -1.0, 1.0, [0.1]), ValueError,
                          "scale must be in"),
    "tail_bounds negative c": (lambda: ha.tail_bounds(_mech().hellinger[2], 0.1, 1.0, [-1.0]), ValueError,
                               "c must be in"),
    # the Dirichlet mechanism at d = 2
    "beta_hockey_stick shapes": (lambda: ha.beta_hockey_stick(np.ones((2, 2)), np.ones((3, 2)), 0.1), ValueError,
                                 "the shapes of u"),
    "beta_hockey_stick NaN": (lambda: ha.beta_hockey_stick([1.0, np.nan], [1.0, 1.0], 0.1), ValueError,
                              "u must be finite"),
    "dirichlet_worst_delta r": (lambda: ha.dirichlet_worst_delta(-1.0, 1.0, 5, 1.0), ValueError, "r must be in"),
    "dirichlet_worst_delta n": (lambda: ha.dirichlet_worst_delta(1.0, 1.0, ha.MAX_EXACT_N + 1, 1.0), ValueError,
                                "n must be an integer in"),
    "dirichlet_worst_delta counts": (lambda: ha.dirichlet_worst_delta(1.0, 1.0, 5, 1.0, counts=[1.5]), TypeError,
                                     "counts must be an array of integers"),
    "dirichlet_exact_scale n": (lambda: ha.dirichlet_exact_scale(5.0, 10**9, 1.0, 1e-6), ValueError,
                                "n must be an integer in"),
    # utility and the head to head
    "posterior_utility hellinger shape": (lambda: hx.posterior_utility(np.ones((3, 2)), np.ones((3, 2)),
                                                                       hellinger=np.zeros(2)),
                                          ValueError, "hellinger must have the shape"),
    "posterior_utility hellinger NaN": (lambda: hx.posterior_utility(np.ones((3, 2)), np.ones((3, 2)),
                                                                     hellinger=np.full(3, np.nan)),
                                        ValueError, "hellinger must be"),
    "hellinger_rows_beta totals": (lambda: hm.hellinger_rows_beta((1.0, 1.0), [[1, 2], [2, 2]]), ValueError,
                                   "public n = 3"),
    "hellinger_rows_beta floats": (lambda: hm.hellinger_rows_beta((1.0, 1.0), [1.5, 2.5]), TypeError, "counts"),
    "hellinger_rows_beta shape": (lambda: hm.hellinger_rows_beta((1.0, 1.0), [1, 2, 3]), ValueError,
                                  "count vectors"),
    "hellinger_rows_beta empty": (lambda: hm.hellinger_rows_beta((1.0, 1.0), [0, 0]), ValueError,
                                  "total of counts"),
    "hellinger_rows_beta prior": (lambda: hm.hellinger_rows_beta((1.0, 1.0, 1.0), [1, 2]), ValueError,
                                  "prior must be a vector of 2"),
    "posterior_utility NaN": (lambda: hx.posterior_utility([1.0, np.nan], [1.0, 2.0]), ValueError,
                              "true_post must be finite"),
    "posterior_utility shapes": (lambda: hx.posterior_utility(np.ones((2, 2)), np.ones((3, 2))), ValueError,
                                 "the shapes of true_post"),
    "head_to_head float counts": (lambda: hx.head_to_head(PRIOR, [2.5, 3.5], 1.0, 1e-6, reference=np.ones(2)),
                                  TypeError, "counts must be an array of integers"),
    "head_to_head negative counts": (lambda: hx.head_to_head(PRIOR, [-1, 3], 1.0, 1e-6, reference=np.ones(2)),
                                     ValueError, "counts must be a pair"),
    "head_to_head repeats": (lambda: hx.head_to_head(PRIOR, [2, 3], 1.0, 1e-6, reference=np.ones(2), repeats=1),
                             ValueError, "repeats must be an integer"),
    "head_to_head flag": (lambda: hx.head_to_head(PRIOR, [2, 3], 1.0, 1e-6, reference=np.ones(2),
                                                  exact_dirichlet="yes"), TypeError, "exact_dirichlet"),
    "head_to_head reference": (lambda: hx.head_to_head(PRIOR, [2, 3], 1.0, 1e-6, reference=np.ones(3)),
                               ValueError, "reference must be a public histogram"),
    # the proof's lemmas
    "score_atoms shapes": (lambda: ha.score_atoms(_mech().log_pmf[2], _mech().hellinger[2][:3]), ValueError,
                           "hellinger_row must have the shape"),
    "score_atoms atol": (lambda: ha.score_atoms(_mech().log_pmf[2], _mech().hellinger[2], atol=0.1), ValueError,
                         "atol must be in"),
    "lemma_violation unsorted": (lambda: ha.lemma_violation([0.0, -1.0], [0.5, 0.5], 1.0, 1e-6), ValueError,
                                 "scores must be a non-empty increasing"),
    "lemma_violation probs": (lambda: ha.lemma_violation([-1.0, 0.0], [0.5, 1.5], 1.0, 1e-6), ValueError,
                              "probs must be in"),
    "lemma_violation NaN shift": (lambda: ha.lemma_violation([-1.0, 0.0], [0.5, 0.5], 1.0, 1e-6, shift=np.nan),
                                  ValueError, "shift must be finite"),
    "lemma_violations dilation": (lambda: ha.lemma_violations([-1.0, 0.0], [0.5, 0.5], 1.0, 1e-6,
                                                               log_dilation=np.array([0.1, np.inf])),
                                  ValueError, "log_dilation must be"),
    "lemma_violations shapes": (lambda: ha.lemma_violations([-1.0, 0.0], [0.5, 0.5], 1.0, 1e-6, shift=np.ones(3),
                                                            log_dilation=np.ones(2)), ValueError, "do not broadcast"),
    "proof_delta delta": (lambda: ha.proof_delta(1.0, 0.0), ValueError, "delta must be in"),
    "full_audit ns": (lambda: hx.full_audit(ns=(0,)), ValueError, "ns must be an integer"),
    "full_audit deltas": (lambda: hx.full_audit(ns=(3,), deltas=(1.5,)), ValueError, "deltas must be in"),
    "full_audit spot size": (lambda: hx.full_audit(ns=(3,), spot_n=(10**7,)), ValueError, "would need"),
    "audit_summary empty": (lambda: hx.audit_summary([]), ValueError, "rows must hold at least one audit"),
    "store_audits names": (lambda: hx.store_audits(["nothing"], path="/nonexistent/a.json"), ValueError,
                           "names must be among"),
    "load_audits missing": (lambda: hx.load_audits("/nonexistent/a.json"), FileNotFoundError, "no stored audits"),
    "subset value": (lambda: hx.subset(hx.SWEEP, epsilons=(3.0,)), ValueError, "part of the run's values"),
    "within summary": (lambda: hx.within({}, hx.SWEEP), ValueError, "summary must be an audit_summary"),
    "audited_guarantee type": (lambda: ha.audited_guarantee(hm.CountLaplace(1.0, 6)), TypeError,
                               "mech must be a SmoothedHellinger"),
    "log_pmf_rows_beta flag": (lambda: ha.log_pmf_rows_beta(PRIOR, 6, 1.0, 1e-6, [2], global_sensitivity="no"),
                               TypeError, "global_sensitivity must be True or False"),
}


@pytest.mark.parametrize("case", list(CASES), ids=str)
def test_hostile_input_raises_naming_the_argument(case):
    func, exc, match = CASES[case]
    _quick(func, exc, match)


def test_type_errors_are_also_value_errors():
    for func, exc, _ in CASES.values():
        if exc is TypeError:
            with pytest.raises(validation.ArgumentTypeError):
                func()


def test_every_public_function_has_a_hostile_case():
    # The functions named ``*_unchecked`` are the mechanisms' memoised fast paths: their contract is arguments
    # already checked by the public function or class that calls them (each of those has its cases).
    modules = (hm.sensitivity, hm.mechanism, ha, hx)
    public = {name for module in modules for name, f in inspect.getmembers(module, inspect.isfunction)
              if f.__module__ == module.__name__ and not name.startswith("_") and not name.endswith("_unchecked")}
    public |= {name for name, c in inspect.getmembers(hm.mechanism, inspect.isclass)
               if c.__module__ == hm.mechanism.__name__ and not name.startswith("_")}
    assert {"candidates", "log_pmf", "SmoothedHellinger", "audit"} <= public
    covered = {case.split()[0] for case in CASES}
    assert public - covered == set()


# ----------------------------------------------------------------------------- no NaN, no hang


def test_beta_hockey_stick_beyond_the_range_of_exp_is_zero_not_nan():
    # e^eps overflows past eps = 709; delta(eps) is 0 there (the half line has P mass 0)
    with np.errstate(all="raise"):
        out = ha.beta_hockey_stick([[3.0, 5.0], [4.0, 4.0], [4.0, 4.0]], [[4.0, 4.0], [3.0, 5.0], [4.0, 4.0]],
                                   [1000.0, 1e300, 1000.0])
    assert np.array_equal(out, np.zeros(3))


def test_tail_exact_equals_the_definition():
    mech = hm.SmoothedHellinger((0.5, 0.5), 40, 2.0, 1e-3)
    c = np.concatenate([np.linspace(-0.5, 1.5, 61), mech.hellinger[7]])  # thresholds on the distances too
    p = np.exp(mech.log_pmf[7])
    ref = np.array([p[mech.hellinger[7] >= t].sum() for t in c])
    np.testing.assert_allclose(ha.tail_exact(mech.log_pmf[7], mech.hellinger[7], c), ref, rtol=1e-12, atol=1e-300)


def test_dense_smooth_sensitivity_in_blocks_equals_the_definition():
    prior, n = (0.5, 1.0, 2.0), 20  # 231 candidates: one block boundary is not enough, use 2 rows of blocks
    cand = hm.candidates(n, 3)
    ls = hm.local_sensitivity(prior, cand)
    gamma = 0.07
    dist = np.abs(cand[:, None, :] - cand[None, :, :]).sum(-1) / 2
    ref = (ls[None, :] * np.exp(-gamma * dist)).max(axis=1)
    np.testing.assert_allclose(hm.smooth_sensitivity(ls, cand, gamma), ref, rtol=1e-13)
    big = hm.candidates(30, 3)  # 496 rows: two blocks of 256
    ls_big = hm.local_sensitivity(prior, big)
    dist = np.abs(big[:, None, :] - big[None, :, :]).sum(-1) / 2
    ref = (ls_big[None, :] * np.exp(-gamma * dist)).max(axis=1)
    np.testing.assert_allclose(hm.smooth_sensitivity(ls_big, big, gamma), ref, rtol=1e-13)


# --- the stored full-size runs (lib.experiments.hellinger.store_audits) --------------------------

def test_audit_summary_counts_the_rows_of_full_audit():
    rows = hx.full_audit(ns=(3, 10), epsilons=(1.0, 40.0), deltas=(1e-6,), priors=((1.0, 1.0), (1e-8, 1e8)),
                         spot_n=(30,), spot_pairs=5)
    s = hx.audit_summary(rows)
    assert s["audits"] == len(rows) == 2 * (2 * 2 + 2) and s["dense"] == 8 and s["spot"] == 4
    assert s["priors"] == 2 and s["max_n"] == 10 and s["max_spot_n"] == 30
    assert s["epsilons"] == [1.0, 40.0] and s["deltas"] == [1e-6, 1e-6]
    over = [r for r in rows if r["pure_ratio"] > 1]
    assert s["above_epsilon"] == len(over) == len(s["exceeding"])
    assert s["above_delta"] == sum(r["exact_delta"] > r["delta"] for r in rows)
    assert s["largest_pure_ratio"] == pytest.approx(max(r["pure_ratio"] for r in rows), rel=1e-5)
    with pytest.raises(ValueError, match="rows must hold at least one audit"):
        hx.audit_summary([])


def test_stored_audits_round_trip_and_a_rerun_part_finds_the_stored_exceptions(tmp_path, monkeypatch):
    """store_audits writes what load_audits reads; a subset of the run, rerun, finds exactly the
    stored exceptions that lie in it (within)."""
    tiny = dict(ns=(100,), epsilons=(1.0, 20.0), deltas=(1e-2,), priors=((1e-8, 1e-8), (1.0, 1.0)), spot_n=())
    monkeypatch.setitem(hx.RUNS, "tiny", tiny)
    path = tmp_path / "audits.json"
    stored = hx.store_audits("tiny", path=path)
    assert hx.load_audits(path) == stored and stored["tiny"]["arguments"]["spot_pairs"] == 41
    summary = stored["tiny"]["summary"]
    assert summary["above_epsilon"] >= 1   # the sparse prior at n = 100, epsilon = 20 (chapter 12)
    part = hx.subset(stored["tiny"]["arguments"], epsilons=(20.0,))
    rerun = hx.audit_summary(hx.full_audit(**part))
    key = [(tuple(r["prior"]), r["n"], r["epsilon"], r["delta"]) for r in rerun["exceeding"]]
    assert key == [(tuple(r["prior"]), r["n"], r["epsilon"], r["delta"]) for r in hx.within(summary, part)]
    assert hx.within(summary, hx.subset(part, priors=((1.0, 1.0),))) == []
    with pytest.raises(ValueError, match="names must be among"):
        hx.store_audits("nothing", path=path)
    with pytest.raises(FileNotFoundError, match="--store"):
        hx.load_audits(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="is not an argument of the run"):
        hx.subset(tiny, orders=(2.0,))
    with pytest.raises(ValueError, match="part of the run's values"):
        hx.subset(tiny, ns=(300,))
