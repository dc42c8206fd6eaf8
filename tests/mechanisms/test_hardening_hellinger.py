"""lib.mechanisms.hellinger and lib.theory.hellinger_audit: the exact audit, its worst pairs, the stated guarantee,
hostile input.

* The audit of a finite-output mechanism handles outputs of probability 0 exactly (before the
  fix, ``-inf - -inf`` gave NaN and ``max(0.0, nan)`` reported a leaky mechanism as 0-DP), checks
  both directions of every pair listed, and reports the pair that attains the pure epsilon (before,
  the "worst pair" was the first pair whenever delta was 0).
* The smoothed-Hellinger mechanism is not pure epsilon-DP in general: its stated guarantee is the
  note's (epsilon, delta), pure only where the exact audit of that setting shows it. The
  counterexample is recomputed here with mpmath, independently of the library.
* Every public function validates its input as the core does (``lib.validation``): a ValueError or
  TypeError naming the argument, no NaN, no silent truncation, sizes refused up front.
"""

import inspect
import time

import mpmath as mp
import numpy as np
import pytest

from lib import validation
from lib.experiments import hellinger as hx
from lib.mechanisms import hellinger as hm
from lib.theory import hellinger_audit as ha
from lib.mechanisms.protocol import ApproximateDP, PureDP


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
