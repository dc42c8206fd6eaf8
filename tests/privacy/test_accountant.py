"""The composition accountant: curves add order by order, eq. (14) at the best order, budgets left."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from lib import DirichletMechanism
from lib.mechanisms.dirichlet.curve import DirichletCurve
from lib.mechanisms.noise import GaussianMechanism, LaplaceMechanism
from lib.privacy.accountant import (DEFAULT_ORDERS, Accountant, Budget, Spent, account, pure_dp_to_rdp,
                                    release_guarantee, renyi_curve)
from lib.privacy.accounting import dp_to_rdp, rdp_to_dp
from lib.privacy.guarantees import ApproximateDP, Guarantee, NotPrivate, PureDP, RenyiDP, ZeroConcentratedDP, compose

DELTA = 1e-5


def converted(levels, orders, delta=DELTA):
    """eq. (14) at every order, minimum: the reference the accountant must reproduce."""
    levels, orders = np.asarray(levels, float), np.asarray(orders, float)
    values = levels + np.log1p(-1 / orders) - np.log(delta * orders) / (orders - 1)
    return float(max(np.nanmin(np.where(np.isfinite(values), values, np.inf)), 0.0))


def test_one_order_is_eq_14_and_the_issue_numbers():
    """Two and 100 releases, each (4, 0.5)-RDP: one order against the exact curve."""
    one_order = Accountant().add(RenyiDP(4.0, 0.5), count=2).epsilon(DELTA)
    assert one_order.order == 4.0
    assert one_order.epsilon == pytest.approx(float(rdp_to_dp(1.0, 4.0, DELTA)), rel=1e-14)
    exact = Accountant().add(DirichletMechanism(0.5, 4.0).guarantee, count=2).epsilon(DELTA)
    assert round(one_order.epsilon, 2) == 4.09 and round(exact.epsilon, 2) == 2.76
    hundred = Accountant().add(DirichletMechanism(0.5, 4.0).guarantee, count=100).epsilon(DELTA)
    assert round(float(rdp_to_dp(50.0, 4.0, DELTA)), 1) == 53.1 and round(hundred.epsilon, 1) == 28.3


def test_curves_add_order_by_order():
    dirichlet = DirichletMechanism(0.5, 4.0).guarantee
    gauss = GaussianMechanism(0.3, 8.0).guarantee
    acc = Accountant().add(dirichlet, 3).add(gauss)
    orders = acc.orders
    total = 3 * np.minimum(dirichlet.curve(orders), np.where(orders <= 4.0, 0.5, np.inf)) + gauss.curve(orders)
    np.testing.assert_allclose(acc.curve(), total, rtol=1e-14)
    assert acc.epsilon(DELTA).epsilon == pytest.approx(converted(acc.curve(), orders), rel=1e-15)
    assert {4.0, 8.0} <= set(acc.orders)   # the stated orders join the grid
    assert acc.guarantees == ((dirichlet, 3), (gauss, 1))


def test_single_order_statements_hold_at_lower_orders_only():
    curve = renyi_curve(RenyiDP(4.0, 0.5))
    np.testing.assert_array_equal(curve([1.5, 4.0, 4.5]), [0.5, 0.5, np.inf])
    # two statements at different orders compose where both hold: below the smaller order
    acc = Accountant().add(RenyiDP(4.0, 0.5)).add(RenyiDP(10.0, 0.2))
    assert acc.epsilon(DELTA).order == 4.0
    assert acc.epsilon(DELTA).epsilon == pytest.approx(float(rdp_to_dp(0.7, 4.0, DELTA)), rel=1e-14)


def test_zcdp_and_pure_dp_enter_through_their_curves():
    acc = Accountant().add(ZeroConcentratedDP(0.01), count=100)
    orders = acc.orders
    assert acc.epsilon(DELTA).epsilon == pytest.approx(converted(orders * 1.0, orders), rel=1e-14)
    # many small pure-DP releases: the RDP route beats basic composition
    many = Accountant().add(PureDP(0.05), count=400)
    assert many.epsilon(DELTA).epsilon == pytest.approx(converted(400 * pure_dp_to_rdp(0.05, orders), orders),
                                                       rel=1e-14)
    assert many.epsilon(DELTA).epsilon < 400 * 0.05
    # one pure-DP release: basic composition (epsilon itself, delta unused) is better
    single = Accountant().add(PureDP(0.5)).epsilon(DELTA)
    assert single == Spent(0.5, DELTA, single.order) and math.isnan(single.order)


def test_approximate_dp_by_basic_composition():
    acc = Accountant().add(ZeroConcentratedDP(0.05)).add(ApproximateDP(0.3, 4e-6))
    left = DELTA - 4e-6
    orders = acc.orders
    expected = converted(0.05 * orders, orders, delta=left) + 0.3
    assert acc.epsilon(DELTA).epsilon == pytest.approx(expected, rel=1e-14)
    with pytest.raises(ValueError, match="must exceed the composed ApproximateDP deltas"):
        acc.epsilon(3e-6)
    with pytest.raises(ValueError, match="no Renyi curve"):
        acc.curve()
    assert Accountant().add(ApproximateDP(0.3, 4e-6), 2).epsilon(DELTA).epsilon == pytest.approx(0.6)


def test_not_private_and_bad_inputs():
    acc = Accountant().add(NotPrivate())
    assert acc.epsilon(DELTA).epsilon == math.inf
    with pytest.raises(ValueError, match="meets no"):
        acc.guarantee(DELTA)
    with pytest.raises(ValueError, match="must be a lib.privacy.guarantees.Guarantee"):
        Accountant().add(None)
    class Custom(Guarantee):
        level_name = None

    with pytest.raises(ValueError, match="Custom has no Renyi curve"):
        Accountant().add(Custom())
    with pytest.raises(ValueError, match="count must be an integer"):
        Accountant().add(PureDP(1.0), count=0)
    with pytest.raises(ValueError, match="count must be an integer"):
        Accountant().add(PureDP(1.0), count=1.5)
    with pytest.raises(ValueError, match="orders must be in"):
        Accountant(orders=[0.5, 2.0])
    with pytest.raises(ValueError, match="delta must be in"):
        Accountant().epsilon(0.0)
    with pytest.raises(ValueError, match="no Renyi curve"):
        renyi_curve(ApproximateDP(1.0, 1e-5))
    with pytest.raises(ValueError, match="target must be an ApproximateDP"):
        Accountant().remaining(PureDP(1.0))
    assert Accountant().epsilon(DELTA).epsilon == 0.0     # nothing composed, nothing spent


def test_budget_left_and_releases_that_still_fit():
    target = ApproximateDP(5.0, DELTA)
    g = DirichletMechanism(0.5, 4.0).guarantee
    acc = Accountant().add(g, 2)
    budget = acc.remaining(target)
    assert isinstance(budget, Budget) and budget.target == target
    assert budget.left == pytest.approx(5.0 - acc.epsilon(DELTA).epsilon, rel=1e-15) and budget.left > 0
    k = acc.fits(g, target)
    assert k >= 1
    assert Accountant().add(g, 2 + k).epsilon(DELTA).epsilon <= 5.0
    assert Accountant().add(g, 3 + k).epsilon(DELTA).epsilon > 5.0
    assert Accountant().add(g, 100).fits(g, target) == 0
    assert Accountant().fits(PureDP(0.0), target, limit=50) == 50


def test_a_whole_release_through_release_guarantee():
    releases = [DirichletMechanism(0.25, 6.0)] * 4 + [GaussianMechanism(0.2, 6.0), LaplaceMechanism(0.2, 6.0)]
    g = release_guarantee(releases, DELTA)
    acc = account([m.guarantee for m in releases])
    assert g == ApproximateDP(acc.epsilon(DELTA).epsilon, DELTA)
    # never above composing at the one common order (Theorem 1 and eq. (14)), where all levels are known
    one_order = float(rdp_to_dp(4 * 0.25 + 0.2 + float(pure_dp_to_rdp(LaplaceMechanism(0.2, 6.0).guarantee.epsilon,
                                                                        6.0)), 6.0, DELTA))
    assert g.epsilon <= one_order
    with pytest.raises(ValueError, match="states no guarantee"):
        release_guarantee([object()], DELTA)


def test_matches_dp_accountings_conversion_on_the_same_orders():
    """lib's eq. (14) minimum is dp-accounting's compute_epsilon where its KL shortcut does not apply."""
    acc = Accountant(orders=rdp_privacy_accountant.DEFAULT_RDP_ORDERS)
    acc.add(DirichletMechanism(0.5, 4.0).guarantee, 5).add(GaussianMechanism(0.5, 4.0).guarantee, 2)
    orders = acc.orders
    theirs, order = rdp_privacy_accountant.compute_epsilon(orders, acc.curve(), DELTA)
    ours = acc.epsilon(DELTA)
    assert ours.epsilon == pytest.approx(theirs, rel=1e-12) and ours.order == order


def test_a_curve_for_one_order_at_a_time_is_evaluated_per_order():
    scalar_only = RenyiDP(3.0, 0.3, curve=lambda lam: float(0.1 * lam))
    np.testing.assert_allclose(renyi_curve(scalar_only)([1.5, 3.0, 6.0]), [0.15, 0.3, 0.6], rtol=1e-15)


def test_default_orders():
    assert DEFAULT_ORDERS[0] == pytest.approx(1.001) and DEFAULT_ORDERS[-1] == pytest.approx(10001.0)
    assert np.all(np.diff(np.log(DEFAULT_ORDERS - 1)) > 0)
    # a grid that does not reach a curve's finite part gives no guarantee, never a wrong one
    curve = DirichletCurve(1.0, 0.001)      # finite below order 1.001 only
    acc = Accountant(orders=[2.0, 3.0]).add(RenyiDP(1.0005, float(curve(1.0005)), curve=curve))
    assert acc.epsilon(DELTA).order == 1.0005    # the stated order is accounted at


# ----------------------------------------------------------------------------- issue 41: hostile input

def _level_curve(value):
    """A curve that gives ``value`` at every order (arrays in, arrays out)."""
    return lambda orders: np.full(np.shape(orders), value)


#: Issue 41, guarantees and the accountant: a count or split of 10**400 (an OverflowError before), a curve
#: that is negative or NaN (eps-hat = 0 before), and their neighbours. Each ends in an error naming the argument
#: and its range, or in the correct result (``None``: accepted).
HOSTILE_ACCOUNTING = {
    "split 10**400": (lambda: RenyiDP(5.0, 1.0).split(10**400), ValueError, r"m must be an integer in \[1, 9007199254740992\]"),
    "pure split 10**400": (lambda: PureDP(1.0).split(10**400), ValueError, r"m must be an integer in \[1, 9007"),
    "approximate split 10**400": (lambda: ApproximateDP(1.0, 1e-5).split(10**400), ValueError, r"m must be an integer"),
    "zcdp split 10**400": (lambda: ZeroConcentratedDP(0.5).split(10**400), ValueError, r"m must be an integer"),
    "split 2**53 + 1": (lambda: RenyiDP(5.0, 1.0).split(2**53 + 1), ValueError, r"m must be an integer in \[1, 9007"),
    "split 2**53": (lambda: RenyiDP(5.0, 1.0).split(2**53), None, None),
    "split 0": (lambda: RenyiDP(5.0, 1.0).split(0), ValueError, r"m must be an integer in \[1"),
    "split 2.0": (lambda: RenyiDP(5.0, 1.0).split(2.0), TypeError, r"m must be an integer"),
    "split True": (lambda: PureDP(1.0).split(True), TypeError, r"m must be an integer"),
    "count 10**400": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=10**400), ValueError,
                      r"count must be an integer in \[1, 9007199254740992\]"),
    "count 2**53 + 1": (lambda: Accountant().add(PureDP(1.0), count=2**53 + 1), ValueError, r"count must be an integer"),
    "count 2**53": (lambda: Accountant().add(PureDP(1.0), count=2**53), None, None),
    "count 1e400": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=float("inf")), ValueError,
                    r"count must be an integer in \[1, 9007199254740992\]; got inf"),
    "count NaN": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=float("nan")), ValueError, r"count must be an integer"),
    "count 2.5": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=2.5), ValueError, r"count must be an integer"),
    "count 0": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=0), ValueError, r"count must be an integer in \[1"),
    "count '3'": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count="3"), TypeError, r"count must be an integer .* str"),
    "count True": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=True), TypeError, r"count must be an integer"),
    "count None": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=None), TypeError, r"count must be an integer"),
    "count 3.0": (lambda: Accountant().add(RenyiDP(5.0, 1.0), count=3.0), None, None),
    "negative curve": (lambda: Accountant().add(RenyiDP(5.0, 1.0, curve=_level_curve(-1.0))).epsilon(DELTA),
                       ValueError, r"the curve of RenyiDP\(lam=5.0, epsilon=1.0\) must give a level in \[0, inf\] "
                                   r"\(finite or \+inf, non-negative\) at every order; got -1.0 at order"),
    "NaN curve": (lambda: Accountant().add(RenyiDP(5.0, 1.0, curve=_level_curve(np.nan))).epsilon(DELTA),
                  ValueError, r"must give a level in \[0, inf\].*got nan"),
    "-inf curve": (lambda: Accountant().add(RenyiDP(5.0, 1.0, curve=_level_curve(-np.inf))).curve([2.0]),
                   ValueError, r"must give a level in \[0, inf\].*got -inf"),
    "curve negative at one order": (
        lambda: renyi_curve(RenyiDP(5.0, 1.0, curve=lambda lam: 1.0 - np.asarray(lam) / 4))([2.0, 3.0, 8.0]),
        ValueError, r"got -1.0 at order 8"),
    "curve not callable": (lambda: RenyiDP(5.0, 1.0, curve=3.0), TypeError,
                           r"curve must be a function of the order .* or None; got float 3.0"),
    "+inf curve": (lambda: Accountant().add(RenyiDP(5.0, 1.0, curve=_level_curve(np.inf))).epsilon(DELTA), None, None),
    "zero curve": (lambda: renyi_curve(RenyiDP(5.0, 1.0, curve=_level_curve(0.0)))([2.0]), None, None),
    "RenyiDP epsilon 10**400": (lambda: RenyiDP(5.0, 10**400), ValueError,
                                r"epsilon must lie within the double range .*an integer of 401 digits"),
    "RenyiDP lam 10**400": (lambda: RenyiDP(10**400, 1.0), ValueError, r"lam must lie within the double range"),
    "ApproximateDP delta 10**400": (lambda: ApproximateDP(1.0, 10**400), ValueError, r"delta must lie within"),
    "PureDP -10**400": (lambda: PureDP(-10**400), ValueError, r"epsilon must lie within the double range"),
    "orders with 10**400": (lambda: Accountant([2.0, 10**400]), ValueError, r"orders must lie within the double range"),
    "epsilon at delta 10**400": (lambda: Accountant().add(PureDP(1.0)).epsilon(10**400), ValueError, r"delta must lie"),
    "fits limit 10**400": (lambda: Accountant().fits(PureDP(0.1), ApproximateDP(1.0, DELTA), limit=10**400), ValueError,
                           r"limit must be an integer in \[1, 9007199254740992\]"),
    "dp_to_rdp n_releases 10**400": (lambda: dp_to_rdp(1.0, 5.0, DELTA, n_releases=10**400), ValueError,
                                     r"n_releases must be an integer in \[1, 9007199254740992\]"),
    "compose None": (lambda: compose(None), TypeError, r"guarantees must be a sequence; got NoneType"),
    "compose one guarantee": (lambda: compose(RenyiDP(5.0, 1.0)), TypeError, r"guarantees must be a sequence; got RenyiDP"),
    "account 5": (lambda: account(5), TypeError, r"guarantees must be a sequence; got int 5"),
    "release_guarantee None": (lambda: release_guarantee(None, DELTA), TypeError, r"releases must be a sequence"),
    "curve of another shape": (lambda: Accountant().add(RenyiDP(5.0, 1.0, curve=lambda o: np.ones(3))).epsilon(DELTA),
                               ValueError, r"the curve of RenyiDP\(lam=5.0, epsilon=1.0\) must map an array of orders"),
    "curve of strings": (lambda: Accountant().add(RenyiDP(5.0, 1.0, curve=lambda o: "x")).epsilon(DELTA),
                         ValueError, r"must map an array of orders to an array of levels"),
    "release_guarantee with a negative curve": (
        lambda: release_guarantee([SimpleNamespace(guarantee=RenyiDP(5.0, 1.0, curve=_level_curve(-2.0)))], DELTA),
        ValueError,
        r"must give a level in \[0, inf\]"),
}


@pytest.mark.parametrize("case", HOSTILE_ACCOUNTING)
def test_hostile_counts_splits_and_curves_end_in_a_named_error_or_a_result(case):
    call, error, match = HOSTILE_ACCOUNTING[case]
    if error is None:
        out = call()
        if isinstance(out, Spent):  # an infinite curve above the stated order: eq. (14) at the order itself
            assert out.epsilon == pytest.approx(rdp_to_dp(1.0, 5.0, DELTA), rel=1e-12) and out.order == 5.0
        return
    with pytest.raises(error, match=match):
        call()
