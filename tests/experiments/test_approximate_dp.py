"""lib.experiments.approximate_dp: the measurements of chapter 9 against their definitions."""

import numpy as np
import pytest

from lib.experiments import approximate_dp as adp
from lib.mechanisms.dirichlet.approximate_dp import model_order_many, total_expected_kl
from lib.mechanisms.noise.calibration import (analytic_gaussian_delta, analytic_gaussian_sigma,
                                              classical_gaussian_sigma, laplace_dp_scale)
from lib.models.naive_bayes import model_spec

DELTA = 1e-5


@pytest.mark.parametrize("eps", [0.01, 1.0, 10.0])
def test_multiprecision_delta_is_the_analytic_one(eps):
    sens = np.sqrt(28)
    s = analytic_gaussian_sigma(eps, DELTA, sens)
    assert adp.gaussian_delta_multiprecision(s, eps, sens) == pytest.approx(DELTA, rel=1e-8)
    assert adp.gaussian_delta_multiprecision(s, eps, sens) == pytest.approx(analytic_gaussian_delta(s, eps, sens),
                                                                            rel=1e-9)
    with pytest.raises(ValueError, match="sigma"):
        adp.gaussian_delta_multiprecision(0.0, eps, sens)
    with pytest.raises(ValueError, match="dps"):
        adp.gaussian_delta_multiprecision(s, eps, sens, dps=5)


def test_classical_sigma_breaks_where_its_delta_is_the_target():
    b = adp.classical_gaussian_breaks(DELTA)
    assert 8 < b < 9
    assert analytic_gaussian_delta(classical_gaussian_sigma(b, DELTA, 1.0), b, 1.0) == pytest.approx(DELTA, rel=1e-8)
    assert analytic_gaussian_delta(classical_gaussian_sigma(1.0, DELTA, 1.0), 1.0, 1.0) < DELTA
    with pytest.raises(ValueError, match="delta"):
        adp.classical_gaussian_breaks(1.5)


def test_noise_scales_cross_where_they_are_equal():
    row = adp.noise_scales(14, DELTA)
    assert row["m"] == 14 and row["Laplace sd (1)"] == pytest.approx(np.sqrt(2) * 28)
    e = row["equal at eps_hat"]
    assert np.sqrt(2) * laplace_dp_scale(e, 14) == pytest.approx(analytic_gaussian_sigma(e, DELTA, np.sqrt(28)),
                                                                 rel=1e-9)
    assert row["Laplace sd / sigma (1)"] == pytest.approx(row["Laplace sd (1)"] / row["sigma (1)"])


def test_flat_price_is_one_for_a_row_and_below_for_a_table():
    spec = model_spec([3, 5], 2, 500)
    price = adp.flat_price(spec, DELTA)
    assert price.shape == (3,) and price[0] == 1.0 and (price[1:] < 1).all()


def test_order_costs_are_at_least_the_oracle_s():
    rng = np.random.default_rng(0)
    tables = [rng.integers(0, 50, size=(1, 2)), rng.integers(0, 30, size=(2, 4))]
    spec = model_spec([4], 2, int(tables[0].sum()))
    rows = adp.order_costs("x", tables, spec, [0.5, 5.0], DELTA, cache={})
    assert [r["eps_hat"] for r in rows] == [0.5, 5.0]
    assert all(r["cost public"] >= 1 - 1e-4 and r["cost fixed"] >= 1 - 1e-4 for r in rows)
    oracle = model_order_many([5.0], DELTA, tables, n_releases=2)[0]
    assert oracle.expected_kl == pytest.approx(total_expected_kl(tables, oracle.r, oracle.alpha), rel=1e-9)
