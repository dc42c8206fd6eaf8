"""lib.theory.cauchy_densities against the closed forms of the two extreme cases: a pure shift
(2 asinh(s/2), reached at z = -s/2 +- sqrt(1 + s^2/4)) and a pure change of scale (beta, at z = 0)."""

import numpy as np
import pytest

from lib.theory.cauchy_densities import cauchy_density_loss


@pytest.mark.parametrize("s", [0.05, 0.5, 2.0, 10.0])
def test_shift_only(s):
    closed = 2 * np.arcsinh(s / 2)
    loss = cauchy_density_loss(s, 0.0)
    assert loss <= closed + 1e-12 and loss > closed - 1e-3


@pytest.mark.parametrize("beta", [0.01, 0.3, 2.0])
def test_scale_only(beta):
    # log(p_1(z) / p_b(z)) = log b + log((1 + z^2) / (b^2 + z^2)) ... at z = 0 it is log b = beta
    assert cauchy_density_loss(0.0, beta) == pytest.approx(beta, rel=1e-12)


def test_both_bounded_by_the_sum():
    for s, beta in [(0.3, 0.05), (1.0, 1.0)]:
        loss = cauchy_density_loss(s, beta)
        # the grid holds r = 0 (a pure shift) and d = 0 (a pure change of scale, beta at z = 0)
        assert loss >= max(cauchy_density_loss(s, 0.0), beta - 1e-12)
        assert loss <= 2 * np.arcsinh(s / 2) + beta + 1e-12


def test_bad_input():
    with pytest.raises(ValueError, match="slide"):
        cauchy_density_loss(-1.0, 0.1)
    with pytest.raises(ValueError, match="beta"):
        cauchy_density_loss(1.0, np.nan)
