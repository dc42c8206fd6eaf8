"""lib.theory.hellinger_multiprecision against the Bhattacharyya integral by quadrature and the
library's double-precision Hellinger distance."""

import mpmath as mp
import numpy as np
import pytest

from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet
from lib.theory.hellinger_multiprecision import hellinger_beta_formula


def _quad(u, v):
    with mp.workdps(30):
        def pdf(t, a):
            return t ** (a[0] - 1) * (1 - t) ** (a[1] - 1) / mp.beta(a[0], a[1])
        return float(mp.sqrt(1 - mp.quad(lambda t: mp.sqrt(pdf(t, u) * pdf(t, v)), [0, 0.5, 1])))


@pytest.mark.parametrize("u,v", [((2.0, 3.0), (3.0, 2.0)), ((1.0, 1.0), (5.0, 2.0)), ((10.5, 4.0), (11.5, 3.0))])
def test_formula_equals_the_integral(u, v):
    assert hellinger_beta_formula(u, v) == pytest.approx(_quad(u, v), rel=1e-12)


def test_agrees_with_the_library_where_double_precision_is_well_conditioned():
    u, v = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.5])
    assert hellinger_beta_formula(u, v) == pytest.approx(float(hellinger_dirichlet(u, v)), rel=1e-13)
    assert hellinger_beta_formula(u, u) == 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="same length"):
        hellinger_beta_formula([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="u"):
        hellinger_beta_formula([1.0, -2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="dps"):
        hellinger_beta_formula([1.0, 2.0], [1.0, 2.0], dps=5)
