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
    # dp-accounting's own Gaussian event: noise multiplier sigma / l2-sensitivity (sqrt 2, replace-one)
    acc.compose(bridge.dp_event(dirichlet), 2).compose(dp_accounting.GaussianDpEvent(gauss.sigma / math.sqrt(2)))
    theirs, order = acc.get_epsilon_and_optimal_order(DELTA)
    ours = Accountant(acc.orders).add(dirichlet.guarantee, 2).add(gauss.guarantee).epsilon(DELTA)
    assert ours.epsilon == pytest.approx(theirs, rel=1e-9, abs=1e-9) and ours.order == order
    np.testing.assert_allclose(acc.rdp, Accountant(acc.orders).add(dirichlet.guarantee, 2).add(gauss.guarantee)
                               .curve(acc.orders), rtol=1e-12)
    assert bridge.dp_event(gauss) == dp_accounting.GaussianDpEvent(gauss.sigma / math.sqrt(2))


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
    assert not bridge.RdpAccountant(neighboring_relation=rel.REPLACE_ONE).supports(
        bridge.RenyiCurveDpEvent(ApproximateDP(1.0, 1e-6), rel.REPLACE_ONE))   # no Renyi curve


def test_any_guarantee_and_laplace(dpa):
    dp_accounting, bridge = dpa
    rel = dp_accounting.NeighboringRelation.REPLACE_ONE
    laplace = LaplaceMechanism(0.5, 5.0)
    event = bridge.dp_event(laplace)
    assert isinstance(event, dp_accounting.LaplaceDpEvent)
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
