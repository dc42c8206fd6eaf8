"""The bridges to dp-accounting and OpenDP agree with lib's own accountant (to 1e-9)."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from lib import DirichletMechanism
from lib.mechanisms.dirichlet.curve import DirichletCurve
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism, laplace_rdp
from lib.privacy.accountant import Accountant
from lib.privacy.guarantees import ApproximateDP, PureDP, RenyiDP, ZeroConcentratedDP

DELTA = 1e-5
#: A coarser grid than the accountant's default for the OpenDP tests (each order is one call
#: through OpenDP's map into Python); both sides account at exactly these orders.
OPENDP_ORDERS = 1.0 + np.geomspace(1e-2, 1e3, 151)


# ----------------------------------------------------------------------------- dp-accounting

def _extra(module, bridge, what):
    """The third-party ``module`` and lib's ``bridge`` to it; the test is skipped without the interop extra."""
    pytest.importorskip(module.partition(".")[0], reason=f"{what} (the interop extra) is not installed")
    return importlib.import_module(module), importlib.import_module(f"lib.interop.{bridge}")


@pytest.fixture(scope="module")
def dpa():
    return _extra("dp_accounting", "dp_accounting", "dp-accounting")


def test_dirichlet_and_gaussian_compose_in_dp_accounting_as_in_lib(dpa):
    dp_accounting, bridge = dpa
    dirichlet, gauss = DirichletMechanism(0.5, 4.0), GaussianMechanism(0.4, 6.0)
    acc = bridge.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    # the Gaussian enters with lib's own curve (not dp-accounting's event, whose reading under
    # replace-one is a convention of each of its accountants)
    acc.compose(bridge.dp_event(dirichlet), 2).compose(bridge.dp_event(gauss))
    theirs, order = acc.get_epsilon_and_optimal_order(DELTA)
    ours = Accountant(acc.orders).add(dirichlet.guarantee, 2).add(gauss.guarantee).epsilon(DELTA)
    assert ours.epsilon == pytest.approx(theirs, rel=1e-9, abs=1e-9) and ours.order == order
    np.testing.assert_allclose(acc.rdp, Accountant(acc.orders).add(dirichlet.guarantee, 2).add(gauss.guarantee)
                               .curve(acc.orders), rtol=1e-12)
    assert isinstance(bridge.dp_event(gauss), bridge.RenyiCurveDpEvent)


@pytest.mark.parametrize("sigma", [0.8, 2.0, 6.0])
def test_the_gaussian_agrees_with_dp_accountings_rdp_and_pld_accountants(dpa, sigma):
    """Issue 39: independent of how dp-accounting reads its own Gaussian under replace-one."""
    dp_accounting, bridge = dpa
    from dp_accounting.pld import PLDAccountant
    from dp_accounting.rdp import RdpAccountant as TheirRdp

    from lib.mechanisms.noise.calibration import analytic_gaussian_delta

    rel = dp_accounting.NeighboringRelation
    gauss = GaussianMechanism.from_sigma(sigma)      # one histogram release: l2-sensitivity sqrt 2
    ours = bridge.RdpAccountant(neighboring_relation=rel.REPLACE_ONE).compose(bridge.dp_event(gauss), 3)
    event, relation = bridge.gaussian_event(gauss)
    assert relation is rel.ADD_OR_REMOVE_ONE and event == dp_accounting.GaussianDpEvent(sigma / math.sqrt(2))
    theirs = TheirRdp(orders=ours.orders, neighboring_relation=relation).compose(event, 3)
    np.testing.assert_allclose(ours.rdp, theirs.rdp, rtol=1e-12)
    assert ours.get_epsilon(DELTA) == pytest.approx(theirs.get_epsilon(DELTA), rel=1e-12)
    # the PLD accountant with the same event and relation: the exact (analytic) Gaussian profile of
    # three releases (one Gaussian of sensitivity sqrt 6), to its discretisation
    pld = PLDAccountant(relation).compose(event, 3).get_epsilon(DELTA)
    exact_delta = analytic_gaussian_delta(sigma, pld, math.sqrt(6.0))
    assert exact_delta <= DELTA * (1 + 1e-6) and analytic_gaussian_delta(sigma, pld - 0.02, math.sqrt(6.0)) > DELTA
    # what the former bridge did (dp-accounting's event under REPLACE_ONE with multiplier sigma / sqrt 2)
    # is read by the PLD accountant as twice the sensitivity: far above the exact epsilon
    wrong = PLDAccountant(rel.REPLACE_ONE).compose(event, 3).get_epsilon(DELTA)
    assert wrong > 1.5 * pld


def test_an_epsilon_delta_release_is_refused_saying_why(dpa):
    dp_accounting, bridge = dpa
    with pytest.raises(ValueError, match="states no Renyi curve, and an RDP accountant composes curves"):
        bridge.RenyiCurveDpEvent(ApproximateDP(1.0, 1e-6), dp_accounting.NeighboringRelation.REPLACE_ONE)
    class Stated:
        guarantee = ApproximateDP(1.0, 1e-6)

    with pytest.raises(ValueError, match="basic composition"):
        bridge.dp_event(Stated())
    with pytest.raises(TypeError, match="guarantee must be"):
        bridge.RenyiCurveDpEvent("RenyiDP(2, 1)")
    with pytest.raises(TypeError, match="GaussianMechanism"):
        bridge.gaussian_event(DirichletMechanism(0.5, 4.0))


def test_a_hundred_releases_self_composed(dpa):
    dp_accounting, bridge = dpa
    dirichlet = DirichletMechanism(0.5, 4.0)
    acc = bridge.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.SelfComposedDpEvent(bridge.dp_event(dirichlet), 100))
    ours = Accountant(acc.orders).add(dirichlet.guarantee, 100).epsilon(DELTA)
    assert ours.epsilon == pytest.approx(acc.get_epsilon(DELTA), rel=1e-9)
    assert round(ours.epsilon) == 28       # against 53.1 at the one calibrated order (test_accountant)


def test_dp_accounting_relations(dpa):
    dp_accounting, bridge = dpa
    event = bridge.DirichletDpEvent(0.5, 9.0)
    rel = dp_accounting.NeighboringRelation
    add_remove = bridge.RdpAccountant(neighboring_relation=rel.ADD_OR_REMOVE_ONE).compose(event)
    np.testing.assert_allclose(add_remove.rdp, DirichletCurve(0.5, 9.0, "add-remove")(add_remove.orders), rtol=1e-15)
    special = bridge.RdpAccountant(neighboring_relation=rel.REPLACE_SPECIAL)
    assert not special.supports(event)
    with pytest.raises(dp_accounting.UnsupportedEventError):
        special.compose(event)
    # a lib guarantee is stated for replace-one; another relation refuses it
    curve_event = bridge.RenyiCurveDpEvent(ZeroConcentratedDP(0.1))
    assert not bridge.RdpAccountant().supports(curve_event)                  # add/remove by default
    with pytest.raises(ValueError, match="no Renyi curve"):   # refused where it is made, saying why
        bridge.RenyiCurveDpEvent(ApproximateDP(1.0, 1e-6), rel.REPLACE_ONE)


def test_any_guarantee_and_laplace(dpa):
    dp_accounting, bridge = dpa
    rel = dp_accounting.NeighboringRelation.REPLACE_ONE
    for laplace in (LaplaceMechanism(0.5, 5.0), LaplaceMechanism.from_scale(28.0)):
        event = bridge.dp_event(laplace)     # lib's exact curve of l1-sensitivity 2, not dp-accounting's event
        assert isinstance(event, bridge.RenyiCurveDpEvent)
        acc = bridge.RdpAccountant(orders=[2.0, 5.0, 9.0], neighboring_relation=rel).compose(event)
        np.testing.assert_allclose(acc.rdp, laplace_rdp(laplace.scale, [2.0, 5.0, 9.0], 2.0), rtol=1e-12)
    guarantees = [RenyiDP(3.0, 0.2), ZeroConcentratedDP(0.02), PureDP(0.3)]
    acc = bridge.RdpAccountant(neighboring_relation=rel)
    for g in guarantees:
        acc.compose(bridge.RenyiCurveDpEvent(g))
    ours = Accountant(acc.orders)
    for g in guarantees:
        ours.add(g)
    assert ours.curve(acc.orders) == pytest.approx(acc.rdp, rel=1e-15)
    with pytest.raises(ValueError, match="states no guarantee"):
        bridge.dp_event(object())
    with pytest.raises(ValueError, match="not replace-one histogram sensitivities"):
        bridge.dp_event(DirichletMechanism(0.5, 4.0, l2_sq=1.0))


# ----------------------------------------------------------------------------- OpenDP

@pytest.fixture(scope="module")
def opendp():
    return _extra("opendp.prelude", "opendp", "OpenDP")


def test_dirichlet_releases_compose_in_opendp_as_in_lib(opendp):
    dp, bridge = opendp
    rng = np.random.default_rng(5)
    dirichlet, gauss = DirichletMechanism(0.5, 4.0), GaussianMechanism(0.4, 6.0)
    measurements = [bridge.make_histogram_measurement(m, 4, rng=rng) for m in (dirichlet, dirichlet, gauss)]
    composed = dp.c.make_composition(measurements)
    assert composed.input_metric == dp.change_one_distance()
    ours = Accountant(OPENDP_ORDERS).add(dirichlet.guarantee, 2).add(gauss.guarantee).epsilon(DELTA)
    theirs = bridge.opendp_epsilon(composed, DELTA, orders=OPENDP_ORDERS)
    assert theirs.epsilon == pytest.approx(ours.epsilon, rel=1e-9) and theirs.order == ours.order
    # the map at one changed record is the sum of the curves, at any order
    for order in (1.5, 3.0, 9.0):
        expected = 2 * float(dirichlet.guarantee.curve(order)) + float(gauss.guarantee.curve(order))
        assert composed.map(1)(order) == pytest.approx(min(expected, math.inf), rel=1e-12)
    # OpenDP refuses numpy integers; records() casts them; every release is a point of the simplex
    codes = np.array([0, 1, 1, 3, 2, 3], dtype=np.int64)
    with pytest.raises(TypeError, match="expected i32"):
        composed(list(codes))
    releases = composed(bridge.records(codes, 4))
    assert len(releases) == 3 and all(abs(sum(y) - 1) < 1e-12 and min(y) > 0 for y in releases)


def test_opendp_adaptive_composition_and_the_map(opendp):
    dp, bridge = opendp
    dirichlet = DirichletMechanism(0.5, 4.0)
    m = bridge.make_histogram_measurement(dirichlet, 3, rng=0)
    assert m.map(0)(2.0) == 0.0
    with pytest.raises(Exception, match="covers one changed record"):
        m.map(2)(2.0)
    # an odometer: releases chosen one after the other, the privacy loss so far as a curve
    odometer = dp.c.make_fully_adaptive_composition(m.input_domain, m.input_metric, m.output_measure)
    queryable = odometer(bridge.records([0, 1, 2, 2]))
    assert len(queryable(m)) == 3 and len(queryable(m)) == 3
    assert queryable.privacy_loss(1)(3.0) == pytest.approx(2 * float(dirichlet.guarantee.curve(3.0)), rel=1e-12)
    with pytest.raises(Exception, match="codes must be in"):
        m([0, 3])
    with pytest.raises(ValueError, match="codes must be in"):
        bridge.records([0, 3], 3)
    with pytest.raises(ValueError, match="whole numbers"):
        bridge.records([0.5])


def test_opendp_epsilon_needs_the_renyi_measure(opendp):
    dp, bridge = opendp
    dp.enable_features("contrib")
    gaussian = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float), 1.0)
    with pytest.raises(ValueError, match="renyi_divergence"):
        bridge.opendp_epsilon(gaussian, DELTA)
    with pytest.raises(ValueError, match="states no guarantee"):
        bridge.make_histogram_measurement(object(), 3)


def test_three_hundred_releases_compose_through_opendp_in_a_few_calls(opendp):
    """Issue 39: each release's curve cached per order, OpenDP asked at a handful of orders (the map was
    called once per release and order of a 1,401-order grid: minutes for 300 releases)."""
    dp, bridge = opendp
    import time

    dirichlet, gauss = DirichletMechanism(0.5, 4.0), GaussianMechanism(0.4, 6.0)
    measurements = [bridge.make_histogram_measurement(m, 4, rng=0) for m in [dirichlet] * 290 + [gauss] * 10]
    composed = dp.c.make_composition(measurements)
    calls = []
    real = composed.map

    class Counting:   # counts the orders OpenDP is asked at
        output_measure = composed.output_measure

        def map(self, d_in):
            inner = real(d_in)

            def at(order):
                calls.append(order)
                return inner(order)
            return at

    start = time.perf_counter()
    got = bridge.opendp_epsilon(Counting(), DELTA)
    seconds = time.perf_counter() - start
    want = Accountant().add(dirichlet.guarantee, 290).add(gauss.guarantee, 10).epsilon(DELTA)
    assert got.epsilon == pytest.approx(want.epsilon, rel=1e-9) and got.order == want.order
    assert len(calls) <= 8, len(calls)          # the first order, the finite end, the best order and its neighbours
    assert seconds < 5.0, seconds                # about 0.1 s on an idle machine; minutes before the cache
    # the same on the book's coarser grid, asked one order at a time (the former path) for comparison
    full = Accountant(OPENDP_ORDERS).add(dirichlet.guarantee, 290).add(gauss.guarantee, 10).epsilon(DELTA)
    assert bridge.opendp_epsilon(composed, DELTA, orders=OPENDP_ORDERS) == pytest.approx(full, rel=1e-9)


def test_a_release_of_another_origin_falls_back_to_the_grid_search(opendp):
    """A user measurement whose map is not of this module: no prediction, the grid is searched, and the
    result is still the whole grid's best order."""
    dp, bridge = opendp
    dirichlet = DirichletMechanism(0.5, 4.0)
    stranger = dp.m.make_user_measurement(dp.vector_domain(dp.atom_domain(T=int)), dp.change_one_distance(),
                                          dp.renyi_divergence(), lambda x: 0.0,
                                          lambda d_in: (lambda alpha: 0.01 * alpha))   # rho = 0.01 zCDP
    composed = dp.c.make_composition([bridge.make_histogram_measurement(dirichlet, 3, rng=0)] * 3 + [stranger])
    want = Accountant(OPENDP_ORDERS).add(dirichlet.guarantee, 3).add(ZeroConcentratedDP(0.01)).epsilon(DELTA)
    got = bridge.opendp_epsilon(composed, DELTA, orders=OPENDP_ORDERS)
    assert got.epsilon == pytest.approx(want.epsilon, rel=1e-9) and got.order == want.order


def test_opendp_errors_keep_the_librarys_message(opendp):
    dp, bridge = opendp

    def failing(d_in):
        def at(alpha):
            raise ValueError("the curve of this release is undefined here")
        return at

    broken = dp.m.make_user_measurement(dp.vector_domain(dp.atom_domain(T=int)), dp.change_one_distance(),
                                        dp.renyi_divergence(), lambda x: 0.0, failing)
    with pytest.raises(ValueError, match="the curve of this release is undefined here"):
        bridge.opendp_epsilon(broken, DELTA)


@pytest.mark.parametrize("codes, error", [
    (np.array([True, False, True]), TypeError), ([True, 0, 1], TypeError), (np.array([[0, 1], [1, 2]]), ValueError),
    (np.array(["0", "1"]), TypeError), ([0.5, 1], ValueError), ([0, 7], ValueError), (np.array([np.nan]), ValueError),
])
def test_records_refuse_booleans_and_tables(opendp, codes, error):
    _, bridge = opendp
    with pytest.raises(error):
        bridge.records(codes, 4)
