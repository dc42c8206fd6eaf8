"""One (eps_hat, delta) target for m histogram releases: the Dirichlet mechanism's calibration
(lib.mechanisms.dirichlet.approximate_dp), the Gaussian and Laplace solvers (lib.mechanisms.noise.calibration)
and Gohari et al.'s composition (lib.mechanisms.gohari.mechanism)."""

from typing import NamedTuple

import mpmath
import numpy as np
import pytest

from lib.privacy.accounting import dp_to_rdp, min_order, rdp_to_dp
from lib.mechanisms.dirichlet.order import fixed_order
from lib.mechanisms.dirichlet.approximate_dp import dirichlet_order, model_order, public_reference, total_expected_kl
from lib.mechanisms.gohari import mechanism as gohari_mechanism
from lib.mechanisms.gohari.mechanism import GOHARI_LAM, GohariMechanism, gohari_prefill, gohari_releases
from lib.mechanisms.noise.calibration import (analytic_gaussian_delta, analytic_gaussian_sigma, author_laplace_scale,
                                              classical_gaussian_sigma, laplace_dp_scale, rdp_gaussian_sigma)
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism
from lib.mechanisms.protocol import ApproximateDP, ReleaseSpec, RenyiDP, get, names
from lib import DirichletMechanism, calibrate, optimal_order
from lib.mechanisms.dirichlet.moments import expected_kl_loss
from lib import validation
from tests._reference import refused_quickly as _quick

DELTA = 1e-5


def _mp_delta(sigma, eps, sens):
    with mpmath.workdps(50):  # local precision: other tests rely on the default
        s, e, D = mpmath.mpf(sigma), mpmath.mpf(eps), mpmath.mpf(sens)
        return float(mpmath.ncdf(D / (2 * s) - e * s / D)
                     - mpmath.exp(e) * mpmath.ncdf(-D / (2 * s) - e * s / D))


# ------------------------------------------------------------------ Gaussian


@pytest.mark.parametrize("sigma, eps, sens", [(1.0, 0.5, 1.0), (30.0, 0.1, 5.3), (2.6, 10.0, 5.3),
                                              (0.2, 50.0, 1.0), (4000.0, 0.01, 11.2)])
def test_analytic_delta_matches_mpmath(sigma, eps, sens):
    assert analytic_gaussian_delta(sigma, eps, sens) == pytest.approx(_mp_delta(sigma, eps, sens), rel=1e-9)


@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0, 10.0, 100.0])
@pytest.mark.parametrize("m", [1, 14, 63])
def test_analytic_sigma_is_tight(eps, m):
    sens = np.sqrt(2 * m)
    sigma = analytic_gaussian_sigma(eps, DELTA, sens)
    assert _mp_delta(sigma, eps, sens) == pytest.approx(DELTA, rel=1e-8)
    assert _mp_delta(sigma * (1 - 1e-6), eps, sens) > DELTA  # no smaller sigma works


@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 5.0, 30.0])
def test_rdp_composition_gives_a_larger_sigma(eps):
    m = 14
    sens = np.sqrt(2 * m)
    exact = analytic_gaussian_sigma(eps, DELTA, sens)
    rdp = rdp_gaussian_sigma(eps, DELTA, sens)
    assert rdp > exact
    # the RDP sigma is valid: at its best order it meets the target through eq. (14)
    lams = min_order(eps, DELTA) * np.logspace(1e-9, 6, 20000)
    levels = lams * sens**2 / (2 * rdp**2)  # Mironov 2017, Cor. 3, all m releases at once
    # the minimum over orders is flat: a grid with steps of 0.07 % in lam finds it to 1e-5
    assert rdp_to_dp(levels, lams, DELTA).min() <= eps * (1 + 1e-5)


def test_classical_formula_fails_above_one():
    # delta(sigma) depends on sensitivity / sigma only; at delta = 1e-5 the classical
    # sigma stays valid up to eps_hat = 8.42 and fails beyond
    sens = np.sqrt(2 * 14)
    for eps in (10.0, 20.0, 100.0):
        sigma = classical_gaussian_sigma(eps, DELTA, sens)
        assert _mp_delta(sigma, eps, sens) > 2 * DELTA  # the exact delta exceeds the target
        assert sigma < analytic_gaussian_sigma(eps, DELTA, sens)
    assert _mp_delta(classical_gaussian_sigma(8.4, DELTA, sens), 8.4, sens) < DELTA
    assert _mp_delta(classical_gaussian_sigma(8.45, DELTA, sens), 8.45, sens) > DELTA
    for eps in (0.01, 0.1, 0.9):  # where it is proved, it is valid (and loose)
        assert analytic_gaussian_delta(classical_gaussian_sigma(eps, DELTA, sens), eps, sens) < DELTA


@pytest.mark.parametrize("args, match", [
    ((0.0, DELTA, 1.0), r"epsilon_hat must be in \(0, inf\)"),
    ((1.0, 1.0, 1.0), r"delta must be in \(0, 1\)"),
    ((1.0, DELTA, -1.0), r"sensitivity must be in \(0, inf\)"),
])
def test_gaussian_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        analytic_gaussian_sigma(*args)


# ------------------------------------------------------------------ Laplace


def test_laplace_basic_composition():
    assert laplace_dp_scale(2.0, 14) == pytest.approx(14.0)
    # each release is eps_hat/m-DP (l1 = 2): m of them compose to eps_hat
    m, eps = 21, 0.7
    assert m * 2.0 / laplace_dp_scale(eps, m) == pytest.approx(eps)
    assert author_laplace_scale(1.0, DELTA) == pytest.approx(2 * np.sqrt(np.log(5e4) / np.log(1e5)))
    with pytest.raises(ValueError, match="n_releases"):
        laplace_dp_scale(1.0, 0)


# ------------------------------------------------------------------ Dirichlet


def test_public_reference_uses_only_public_quantities():
    tables = public_reference(1000.0, [2, 4], [1, 2])
    assert [t.shape for t in tables] == [(1, 2), (2, 4)]
    assert tables[0].sum() == pytest.approx(1000) and tables[1].sum(axis=1) == pytest.approx([500, 500])
    assert np.all(np.diff(tables[1], axis=1) < 0)  # skewed, not uniform
    flat = public_reference(10.0, [3], [1], exponent=0.0)[0]
    assert np.allclose(flat, 10 / 3)
    with pytest.raises(ValueError, match="n_rows"):
        public_reference(10.0, [3, 3], [1])


def test_total_expected_kl_sums_rows_and_skips_empty_ones():
    a = np.array([[3.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    b = np.array([5.0, 2.0])
    got = total_expected_kl([a, b], 0.5, 3.0)
    want = expected_kl_loss(a[0], 0.5, 3.0) + expected_kl_loss(b, 0.5, 3.0)
    assert got == pytest.approx(want, rel=1e-13)
    assert total_expected_kl([a, b], np.array([0.5, 1.0]), 3.0).shape == (2,)


def test_model_order_meets_the_target_and_beats_a_grid():
    rng = np.random.default_rng(3)
    tables = [rng.integers(0, 50, size=(2, 5)).astype(float), rng.integers(0, 50, size=(1, 3)).astype(float)]
    m, eps = 2, 1.0
    choice = model_order(eps, DELTA, tables, n_releases=m)
    assert rdp_to_dp(m * choice.epsilon, choice.lam, DELTA) == pytest.approx(eps, rel=1e-9)
    lam0 = min_order(eps, DELTA)
    lams = lam0 + np.logspace(-6, 5, 2000)
    r, alpha = calibrate(dp_to_rdp(eps, lams, DELTA, n_releases=m), lams)
    # within the order search's stated accuracy, 1e-4 (lib.privacy.accounting.search_order_many, issue 29)
    assert choice.expected_kl <= total_expected_kl(tables, r, alpha).min() * (1 + 1e-4)


def test_dirichlet_order_rules():
    ref = public_reference(2000.0, [2, 6, 6], [1, 2, 2])
    opt = dirichlet_order(1.0, DELTA, 3, reference=ref)
    fix = dirichlet_order(1.0, DELTA, 3, reference=ref, rule="fixed")
    assert fix.lam == pytest.approx(fixed_order(1.0, DELTA, n_releases=3).lam)
    assert opt.expected_kl <= fix.expected_kl
    with pytest.raises(ValueError, match="reference is required"):
        dirichlet_order(1.0, DELTA, 3)
    with pytest.raises(ValueError, match="rule"):
        dirichlet_order(1.0, DELTA, 3, reference=ref, rule="best")


def spec_of(sizes, rows=None, n_total=500):
    """A ReleaseSpec of one row per release unless ``rows`` says otherwise."""
    rows = rows or [1] * len(sizes)
    return ReleaseSpec(tuple(zip(rows, sizes)), n_total)


def test_dirichlet_calibrate_dp_composes_to_the_target():
    sizes, rows = [2, 4, 4, 7], [1, 2, 2, 2]
    cal = get("dirichlet").calibrate(ApproximateDP(0.5, DELTA), spec_of(sizes, rows))
    assert cal.attained and len(cal.releases) == 4
    mech = cal.releases[0]
    assert isinstance(mech, DirichletMechanism) and mech.lam == cal.parameters["lam"]
    # the order is the one chosen on the public reference of the same shapes
    ref = public_reference(500.0, sizes, rows)
    assert mech.lam == pytest.approx(dirichlet_order(0.5, DELTA, 4, reference=ref).lam, rel=1e-12)
    # m releases at (lam, eps) compose to (lam, m eps); eq. (14) gives the target
    assert rdp_to_dp(4 * mech.epsilon, mech.lam, DELTA) == pytest.approx(0.5, rel=1e-9)


def test_noise_mechanisms_calibrate_dp():
    spec = spec_of([2, 3, 5])
    g = get("gaussian").calibrate(ApproximateDP(2.0, DELTA), spec)
    assert isinstance(g.releases[0], GaussianMechanism)
    assert g.parameters["sigma"] == pytest.approx(analytic_gaussian_sigma(2.0, DELTA, np.sqrt(6)))
    assert analytic_gaussian_delta(g.parameters["sigma"], 2.0, np.sqrt(6)) == pytest.approx(DELTA, rel=1e-9)
    classical = get("gaussian_classical")
    assert classical.calibrate(ApproximateDP(2.0, DELTA), spec).parameters["sigma"] > g.parameters["sigma"]
    assert (classical.calibrate(ApproximateDP(10.0, DELTA), spec).parameters["sigma"]
            < get("gaussian").calibrate(ApproximateDP(10.0, DELTA), spec).parameters["sigma"])
    la = LaplaceMechanism.configured(clip_floor=1.0).calibrate(ApproximateDP(2.0, DELTA), spec)
    assert isinstance(la.releases[2], LaplaceMechanism) and la.releases[2].scale == 3.0
    assert la.releases[2].floor == 1.0
    counts = np.array([[5.0, 0.0, 1.0]] * 4)
    out = la.releases[1].release(counts, rng=np.random.default_rng(0))
    assert out.shape == counts.shape and np.allclose(out.sum(axis=1), 1) and (out > 0).all()


@pytest.mark.parametrize("name, eps, match", [
    ("exponential", 1.0, "mechanism must be one of"),
    ("laplace", -1.0, "epsilon"),
    ("gaussian", 0.0, "epsilon_hat"),
])
def test_calibrate_dp_rejects_bad_input(name, eps, match):
    with pytest.raises(ValueError, match=match):
        get(name).calibrate(ApproximateDP(eps, DELTA), spec_of([2]))


def test_release_spec_rejects_bad_tables():
    with pytest.raises(ValueError, match="d >= 2"):
        ReleaseSpec.of([np.zeros(1)], 10)


# ------------------------------------------------------------------ Gohari (composition logic)


class _Guarantee(NamedTuple):
    epsilon_hat: float
    gamma: float
    r: float
    alpha: float


@pytest.fixture
def fake_gohari(monkeypatch):
    """A stand-in gohari_calibrate: r grows with the per-release epsilon, fails below a floor."""
    calls = []

    def gohari_calibrate(epsilon_hat, delta, *, lam, n_total, d):
        calls.append((epsilon_hat, delta, lam, n_total, d))
        if epsilon_hat < 0.05 * d:
            raise ValueError(f"delta floor too high for d = {d}")
        r = epsilon_hat / d
        return _Guarantee(epsilon_hat, 1e-3, r, 1 + 4 * (lam - 1) * r)

    monkeypatch.setattr(gohari_mechanism, "gohari_calibrate", gohari_calibrate)
    return calls


def test_gohari_basic_composition_and_cache(fake_gohari):
    cache = {}
    spec = spec_of([2, 5, 5, 2], n_total=100)
    cal = get("gohari").calibrate(ApproximateDP(4.0, DELTA), spec, cache=cache)
    assert cal.attained
    # equal shares (eps_hat/m, delta/m), one call per distinct domain size
    assert sorted(c[4] for c in fake_gohari) == [2, 5]
    assert all(c[0] == 1.0 and c[1] == DELTA / 4 and c[2] == 5.0 and c[3] == 100 for c in fake_gohari)
    assert [m.r for m in cal.releases] == [0.5, 0.2, 0.2, 0.5]
    assert cal.releases[1].alpha == pytest.approx(1 + 16 * 0.2)
    assert cal.releases[0].guarantee.epsilon == 1.0 and cal.releases[0].guarantee.delta == DELTA / 4
    get("gohari").calibrate(ApproximateDP(4.0, DELTA), spec, cache=cache)
    assert len(fake_gohari) == 2  # served from the cache


def test_gohari_not_attained_is_explicit(fake_gohari):
    cal = get("gohari").calibrate(ApproximateDP(0.4, DELTA), spec_of([2, 10], n_total=100))
    assert not cal.attained and cal.releases == ()
    assert "d = 10" in cal.parameters["reason"]
    with pytest.raises(ValueError, match="cannot reach"):
        gohari_releases(0.4, DELTA, [2, 10], n_total=100)
    with pytest.raises(ValueError, match="cannot meet a RenyiDP target"):
        get("gohari").calibrate(RenyiDP(5.0, 1.0), spec_of([2, 10]))


def test_gohari_objects_state_their_share_and_the_model_the_target():
    import pickle

    target = ApproximateDP(5.0, DELTA)
    cal = GohariMechanism.calibrate(target, spec_of([2, 3], n_total=2000))
    assert cal.guarantee == target
    assert all(m.guarantee == target.split(2) for m in cal.releases)
    again = pickle.loads(pickle.dumps(cal.releases[1]))
    assert (again.r, again.alpha, again.guarantee) == (cal.releases[1].r, cal.releases[1].alpha, target.split(2))
    with pytest.raises(ValueError, match="ApproximateDP"):
        GohariMechanism(0.5, 3.0, RenyiDP(5.0, 1.0))


def test_every_dp_mechanism_is_registered():
    assert {"dirichlet", "gohari", "gaussian", "laplace", "gaussian_classical"} <= set(names(notion=ApproximateDP))


def test_real_gohari():
    from lib.mechanisms import gohari

    cal = get("gohari").calibrate(ApproximateDP(5.0, DELTA), spec_of([2, 3], n_total=2000))
    assert cal.attained
    for mech, d in zip(cal.releases, (2, 3)):
        g = gohari.gohari_epsilon(mech.r, DELTA / 2, lam=5.0, n_total=2000, d=d)
        assert g.epsilon_hat <= 2.5 * (1 + 1e-6)


# ------------------------------------------------------------------ many targets at once (issue 17)

EPS_MANY = np.array([0.05, 0.7, 6.0])


def test_model_order_many_equals_model_order():
    """The lockstep order search gives each target model_order's choice (equal to the last bits)."""
    from lib.mechanisms.dirichlet.approximate_dp import model_order_many

    ref = public_reference(3934, [2, 17, 5], [1, 2, 2])
    for got, eps in zip(model_order_many(EPS_MANY, DELTA, ref, n_releases=3), EPS_MANY):
        np.testing.assert_allclose(tuple(got), tuple(model_order(eps, DELTA, ref, n_releases=3)), rtol=1e-12)


@pytest.mark.parametrize("name", ["dirichlet", "gohari", "gaussian", "laplace"])
def test_calibrate_dp_many_equals_calibrate_dp(name):
    spec = ReleaseSpec(((1, 2), (2, 6), (2, 3)), 2000)
    cache = {}
    many = get(name).calibrate_many([ApproximateDP(e, DELTA) for e in EPS_MANY], spec, cache=cache)
    for cal, eps in zip(many, EPS_MANY):
        one = get(name).calibrate(ApproximateDP(eps, DELTA), spec)  # no cache: solved afresh
        assert cal.attained == one.attained and len(cal.releases) == spec.n_releases
        for a, b in zip(cal.releases, one.releases):
            for attr in ("r", "alpha", "sigma", "scale"):
                if hasattr(b, attr):
                    assert getattr(a, attr) == pytest.approx(getattr(b, attr), rel=1e-12)
    # a second pass reads every search from the cache
    again = get(name).calibrate_many([ApproximateDP(e, DELTA) for e in EPS_MANY], spec, cache=cache)
    assert [c.parameters for c in again] == [c.parameters for c in many]


def test_gohari_prefill_leaves_nothing_to_solve(fake_gohari):
    """After the lockstep prefill, calibrate finds every search in the cache (the stand-in is never called)."""
    spec = spec_of([2, 5, 5], n_total=500)
    cache = gohari_prefill(EPS_MANY, DELTA, GohariMechanism.flat_sizes(spec), n_total=500, lam=GOHARI_LAM,
                           cache={})
    cals = [GohariMechanism.calibrate(ApproximateDP(e, DELTA), spec, cache=cache) for e in EPS_MANY]
    assert fake_gohari == [] and all(c.attained for c in cals)


@pytest.mark.parametrize("rule", ["optimal", "fixed"])
def test_dirichlet_calibrate_dp_objects_equal_the_constructors(rule):
    """The objects built from the order choice are those Algorithm 1's constructor builds (not solved twice)."""
    cls = DirichletMechanism.configured(order_rule=rule)
    spec = ReleaseSpec(((1, 2), (2, 6)), 900)
    for cal in cls.calibrate_many([ApproximateDP(e, DELTA) for e in EPS_MANY], spec):
        mech = cal.releases[0]
        ref = DirichletMechanism(mech.epsilon, mech.lam)
        assert (mech.r, mech.alpha, mech.l2_sq, mech.linf) == (ref.r, ref.alpha, ref.l2_sq, ref.linf)



def test_public_reference_and_gohari_releases_refuse_absurd_domains():
    from lib.mechanisms.dirichlet import approximate_dp as adp
    _quick(lambda: adp.public_reference(1000.0, [10**12], [1]), "cells")
    _quick(lambda: adp.public_reference(1000.0, [10**5], [10**4]), "public reference tables")


def test_order_search_unchanged_by_grouping_the_rows_once(monkeypatch):
    """model_order groups the reference rows once; its choice equals the validated per-step path exactly."""
    from lib.mechanisms.dirichlet import approximate_dp as adp

    reference = adp.public_reference(3000, [2, 5, 7, 7], [1, 2, 2, 2])
    fast = [adp.model_order(e, 1e-5, reference, n_releases=4) for e in (0.05, 1.0, 8.0)]
    def before(histograms, r, alpha):  # the per-step path before issue 17: validate, regroup, sum
        r, alpha = validation.broadcast(r=validation.positive(r, "r"), alpha=validation.positive(alpha, "alpha"))
        total = np.zeros(r.shape)
        for rows in adp._rows(histograms):
            total = total + expected_kl_loss(rows, r[..., None], alpha[..., None]).sum(axis=-1)
        return total[()]

    monkeypatch.setattr(adp, "_summed_kl", before)
    slow = [adp.model_order(e, 1e-5, reference, n_releases=4) for e in (0.05, 1.0, 8.0)]
    assert fast == slow


# Errors blame the target, not an inner Rényi level.

def test_order_search_blames_the_dp_target_not_an_inner_rdp_level():
    with pytest.raises(ValueError, match=r"^epsilon_hat = 1e\+300 with delta = 1e-05 cannot be calibrated"):
        optimal_order(1e300, 1e-5, [10, 20, 30], grid_size=16)
    with pytest.raises(ValueError, match=r"^epsilon_hat = 1e\+300"):
        model_order(1e300, 1e-5, [np.array([10.0, 20.0])], n_releases=1, grid_size=16)
