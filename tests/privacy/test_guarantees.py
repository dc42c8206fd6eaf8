"""Every registered mechanism's stated guarantee against an independent worst case (issue 23).

For each mechanism of the registry, at random settings, the object a calibration returns states
a guarantee (:class:`lib.mechanisms.protocol.RenyiDP` at one order and/or a curve, :class:`PureDP`,
:class:`ApproximateDP`, :class:`NotPrivate`). Here that statement is compared with a worst case
computed without the code under test: closed forms evaluated with mpmath (Dirichlet and Gaussian
Rényi divergences, the exact Gaussian delta), numerical integration, and a brute force over every
pair of replace-one neighbours of small histograms. The statement must never be below the worst
case (a relative 1e-9 covers the double-precision rounding of the calibration). A mechanism whose
statement cannot be checked exactly says so here, with what checks it instead.
"""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest

from lib.mechanisms.protocol import (ApproximateDP, NotPrivate, PureDP, ReleaseSpec, RenyiDP, ZeroConcentratedDP, get,
                                     names)

RTOL = 1e-9
SETTINGS = np.random.default_rng(2023).uniform(size=(6, 2))  # (budget, order) draws, fixed


def histograms(n: int, d: int):
    """Every histogram of ``n`` records in ``d`` bins."""
    for cut in itertools.combinations(range(n + d - 1), d - 1):
        edges = (-1,) + cut + (n + d - 1,)
        yield np.array([edges[i + 1] - edges[i] - 1 for i in range(d)], float)


def neighbours(x: np.ndarray):
    """Every replace-one neighbour of ``x``: one record leaves bin i for bin j."""
    for i, j in itertools.permutations(range(x.size), 2):
        if x[i] > 0:
            y = x.copy()
            y[i] -= 1
            y[j] += 1
            yield y


def log_beta(a) -> mp.mpf:
    return mp.fsum(mp.loggamma(v) for v in a) - mp.loggamma(mp.fsum(a))


def dirichlet_renyi(a, b, lam) -> float:
    """D_lam(Dir(a) || Dir(b)) from the exponential-family closed form, in mpmath (50 digits)."""
    with mp.workdps(50):
        a = [mp.mpf(float(v)) for v in a]
        b = [mp.mpf(float(v)) for v in b]
        lam = mp.mpf(float(lam))
        mix = [lam * u + (1 - lam) * v for u, v in zip(a, b)]
        if min(mix) <= 0:
            return float("inf")
        return float((log_beta(mix) - lam * log_beta(a) - (1 - lam) * log_beta(b)) / (lam - 1))


def worst_dirichlet(r: float, alpha: float, lam: float, n: int, d: int) -> float:
    """The largest D_lam between the releases of neighbouring histograms of n records in d bins."""
    worst = 0.0
    for x in histograms(n, d):
        for y in neighbours(x):
            worst = max(worst, dirichlet_renyi(r * x + alpha, r * y + alpha, lam))
    return worst


def gaussian_renyi_quadrature(shift: float, sigma: float, lam: float) -> float:
    """D_lam(N(0, s^2) || N(shift, s^2)) by numerical integration (the product over coordinates
    reduces to one dimension along the difference of the means)."""
    with mp.workdps(30):
        s, m, L = mp.mpf(sigma), mp.mpf(shift), mp.mpf(lam)

        def integrand(t):
            return mp.npdf(t, 0, s) ** L * mp.npdf(t, m, s) ** (1 - L)

        value = mp.quad(integrand, [-mp.inf, m / 2, mp.inf])
        return float(mp.log(value) / (L - 1))


def gaussian_delta(eps: float, sigma: float, sensitivity: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism (Balle and Wang 2018, Theorem 8), in mpmath."""
    with mp.workdps(40):
        s, D, e = mp.mpf(sigma), mp.mpf(sensitivity), mp.mpf(eps)
        return float(mp.ncdf(D / (2 * s) - e * s / D) - mp.exp(e) * mp.ncdf(-D / (2 * s) - e * s / D))


def spec(d: int = 3, n: int = 5) -> ReleaseSpec:
    return ReleaseSpec(((1, d),), n)


def calibrated(name: str, how: str, rdp_budget: tuple):
    """The one release object of ``name`` calibrated at ``rdp_budget`` = (eps, lam), or at (1, 1e-5)-DP."""
    mech_cls = get(name)
    eps, lam = rdp_budget
    cal = mech_cls.calibrate(RenyiDP(lam, eps) if how == "rdp" else ApproximateDP(1.0, 1e-5), spec())
    (mech,) = cal.releases
    return mech


def test_every_registered_mechanism_is_covered_here():
    """A new registry entry must get a check in this module (or an entry below saying where).

    ``geumlek_diffused`` and ``geumlek_concentrated`` (and the true posterior) are checked by
    ``tests/mechanisms/test_posterior_sampling.py::test_stated_curves_are_at_least_the_brute_force_worst_case``:
    every object a user can build, every table it accepts and every neighbour, divergences from
    its own log-Beta formula with the top pairs recomputed in mpmath.
    """
    from tests.mechanisms import test_posterior_sampling

    assert callable(test_posterior_sampling.test_stated_curves_are_at_least_the_brute_force_worst_case)
    covered = {"dirichlet", "gaussian", "laplace", "gaussian_classical", "gohari", "random", "mle",
               "geumlek_diffused", "geumlek_concentrated", "geumlek_true",
               # the exact-curve calibration: tests/privacy/test_curves.py (the curve against brute force at random
               # settings, and the composed curves of a calibrated model against its target)
               "dirichlet_exact",
               # moments of a bounded sample: tests/models/test_mixed_naive_bayes.py::test_moment_mechanism_guarantees
               "zc", "vaidya", "bun_steinke", "sample_moments",
               # logistic regression: tests/mechanisms/test_logistic_posterior.py::test_sampler_guarantees
               "lr_concentrated", "lr_diffuse", "lr_ops", "lr_posterior",
               # the smoothed-Hellinger family: tests/mechanisms/test_hellinger.py::test_count_noise_statements_hold and the
               # exact audits of tests/mechanisms/test_hellinger.py (every pair of neighbours)
               "smoothed_hellinger", "hellinger_em", "count_laplace", "count_gaussian"}
    assert set(names()) <= covered, f"no guarantee check for {set(names()) - covered}"


@pytest.mark.parametrize("k", range(4))
def test_dirichlet_rdp_statement_covers_every_pair_of_neighbours(k):
    eps = float(10 ** (-1 + 2 * SETTINGS[k, 0]))        # 0.1 .. 10
    lam = float(1.5 + 8 * SETTINGS[k, 1])                # 1.5 .. 9.5
    (mech,) = get("dirichlet").calibrate(RenyiDP(lam, eps), spec()).releases
    g = mech.guarantee
    assert isinstance(g, RenyiDP) and g.lam == lam
    for n, d in ((1, 2), (4, 2), (3, 3), (5, 3)):
        exact = worst_dirichlet(mech.r, mech.alpha, lam, n, d)
        assert exact <= g.epsilon * (1 + RTOL), (n, d, exact, g.epsilon)
        if g.curve is not None:
            for order in (1.5, 2.0, lam, 2 * lam):
                assert worst_dirichlet(mech.r, mech.alpha, order, n, d) <= g.curve(order) * (1 + RTOL)


@pytest.mark.parametrize("k", range(2))
def test_dirichlet_dp_calibration_states_an_rdp_level_that_holds(k):
    eps_hat = float(10 ** (-0.5 + 1.5 * SETTINGS[k, 0]))
    (mech,) = get("dirichlet").calibrate(ApproximateDP(eps_hat, 1e-5), spec()).releases
    g = mech.guarantee
    assert isinstance(g, RenyiDP)
    assert worst_dirichlet(mech.r, mech.alpha, g.lam, 4, 3) <= g.epsilon * (1 + RTOL)


@pytest.mark.parametrize("how", ["rdp", "dp"])
def test_gaussian_curve_covers_the_integrated_divergence(how):
    mech = calibrated("gaussian", how, (0.7, 4.0))
    g = mech.guarantee
    # at its order with the curve (RDP target); as rho-zCDP, the same curve, for a sigma without an order
    assert isinstance(g, (RenyiDP, ZeroConcentratedDP)) and g.curve is not None
    # every replace-one move changes two counts by one: the means differ by sqrt(2)
    for order in (1.5, 2.0, 4.0, 16.0):
        exact = gaussian_renyi_quadrature(np.sqrt(2.0), mech.sigma, order)
        assert exact <= g.curve(order) * (1 + RTOL)
    if isinstance(g, RenyiDP):
        assert gaussian_renyi_quadrature(np.sqrt(2.0), mech.sigma, g.lam) <= g.epsilon * (1 + RTOL)


@pytest.mark.parametrize("how", ["rdp", "dp"])
def test_laplace_pure_statement_covers_the_log_density_ratio(how):
    mech = calibrated("laplace", how, (0.8, 3.0))
    # an (eps_hat, delta) calibration states the pure level; an RDP one its order and curve, below the pure level
    g = mech.guarantee if how == "dp" else PureDP(mech.pure_epsilon)
    assert isinstance(g, PureDP)
    if how == "rdp":
        assert mech.guarantee == RenyiDP(3.0, 0.8) and mech.guarantee.curve(3.0) == pytest.approx(0.8, rel=1e-12)
    x = np.array([3.0, 1.0, 1.0])
    worst = 0.0
    grid = np.linspace(-20, 20, 4001)
    for y in neighbours(x):
        # the log density ratio of the noisy counts at every output on a grid around both means
        for out in itertools.product(grid[::400], repeat=3):
            out = np.asarray(out)
            ratio = (np.abs(out - y).sum() - np.abs(out - x).sum()) / mech.scale
            worst = max(worst, ratio)
    assert worst <= g.epsilon * (1 + RTOL)
    assert worst >= g.epsilon * (1 - 1e-6)                # and the statement is tight


def test_classical_gaussian_meets_its_approximate_dp_target_where_it_claims_to():
    """The classical bound sigma = sqrt(2 log(1.25/delta)) Delta/eps holds only for eps < 1."""
    mech_cls = get("gaussian_classical")
    for eps_hat in (0.1, 0.5, 0.9, 2.0, 20.0):
        cal = mech_cls.calibrate(ApproximateDP(eps_hat, 1e-5), spec())
        if not cal.attained:
            assert eps_hat >= 1
            continue
        (mech,) = cal.releases
        # one release (m = 1): the whole target is the release's
        assert gaussian_delta(eps_hat, mech.sigma, np.sqrt(2.0)) <= 1e-5 * (1 + RTOL), eps_hat


def test_gohari_statement_by_monte_carlo_on_the_worst_neighbours():
    """Gohari et al.'s (eps, delta) has no closed form to check; chapter 06 brute-forces its
    ingredient (the lower bound eta over all neighbouring pairs of a small domain). Here the
    delta itself, at a target large enough for simulation: for the pair that moves one record out
    of a singleton bin, E_P[(1 - e^(eps - L))_+] by 400,000 draws must be below the target delta
    (plus four standard errors)."""
    eps_hat, delta = 1.0, 0.05
    (mech,) = get("gohari").calibrate(ApproximateDP(eps_hat, delta), spec(3, 6)).releases
    g = mech.guarantee
    assert isinstance(g, ApproximateDP) and (g.epsilon, g.delta) == (eps_hat, delta)
    rng = np.random.default_rng(7)
    worst = 0.0
    for x, y in (([1.0, 0.0, 5.0], [0.0, 1.0, 5.0]), ([6.0, 0.0, 0.0], [5.0, 1.0, 0.0])):
        a = mech.r * np.asarray(x) + mech.alpha
        b = mech.r * np.asarray(y) + mech.alpha
        for p, q in ((a, b), (b, a)):
            draws = rng.dirichlet(p, size=400_000)
            loss = ((p - q) * np.log(draws)).sum(axis=1) - float(log_beta(p) - log_beta(q))
            terms = np.clip(1 - np.exp(eps_hat - loss), 0, None)
            estimate = terms.mean() + 4 * terms.std(ddof=1) / np.sqrt(terms.size)
            worst = max(worst, estimate)
    assert worst <= delta


def test_uninformative_and_non_private_objects():
    """`random` releases the uniform distribution whatever the data (0-DP); `mle` states no privacy."""
    uniform = get("random").calibrate(PureDP(1.0), spec()).releases[0]
    assert uniform.guarantee == PureDP(0.0)
    a = uniform.release(np.array([5.0, 0.0, 0.0]), rng=np.random.default_rng(1))
    b = uniform.release(np.array([4.0, 1.0, 0.0]), rng=np.random.default_rng(1))
    assert np.array_equal(a, b)
    assert isinstance(get("mle").calibrate(NotPrivate(), spec()).releases[0].guarantee, NotPrivate)
