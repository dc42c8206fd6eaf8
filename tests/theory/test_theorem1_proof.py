"""lib.theory.theorem1_proof against independent computations."""

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from lib.theory.theorem1_proof import dirichlet_kl_closed_form, lagrange_slack


def _intermediate_point(u, delta, lam):
    """xi with H = (lam-1) delta psi(u) + (lam-1)^2 delta^2 psi'(xi) / 2, found by bisection on psi'."""
    with mp.workdps(40):
        u, delta, lam = mp.mpf(u), mp.mpf(delta), mp.mpf(lam)
        h = mp.loggamma(u + (lam - 1) * delta) - mp.loggamma(u)
        need = (h - (lam - 1) * delta * mp.digamma(u)) / ((lam - 1)**2 * delta**2 / 2)
        end = u + (lam - 1) * delta
        lo, hi = sorted([u, end])
        return mp.findroot(lambda x: mp.psi(1, x) - need, (lo, hi), solver="bisect"), lo, hi


@pytest.mark.parametrize("u, delta, lam", [(2.5, 0.5, 2.0), (30.0, -0.9, 1.5), (1.0, 0.01, 20.0)])
def test_slack_positive_where_the_mean_value_point_exists(u, delta, lam):
    xi, lo, hi = _intermediate_point(u, delta, lam)
    assert lo < xi < hi
    assert lagrange_slack(u, delta, lam) > 0


def test_slack_is_the_distance_to_the_interval_ends():
    """For H alone, the slack is at most min(need - psi'(hi), psi'(lo) - need)."""
    u, delta, lam = 2.5, 0.5, 2.0
    with mp.workdps(40):
        h = mp.loggamma(u + (lam - 1) * delta) - mp.loggamma(u)
        need_h = (h - (lam - 1) * delta * mp.digamma(u)) / ((lam - 1)**2 * delta**2 / 2)
        own = min(need_h - mp.psi(1, u + (lam - 1) * delta), mp.psi(1, u) - need_h)
    assert lagrange_slack(u, delta, lam) <= own


def test_slack_refuses_bad_input():
    with pytest.raises(ValueError, match="delta"):
        lagrange_slack(2.0, 0.0, 2.0)
    with pytest.raises(ValueError, match="lam"):
        lagrange_slack(2.0, 0.5, 1.0)
    with pytest.raises(ValueError, match="infinite"):
        lagrange_slack(1.0, 2.0, 2.0)


@pytest.mark.parametrize("u, v", [([1.4, 1.0], [1.0, 1.4]), ([2.0, 7.5], [3.0, 6.5])])
def test_kl_closed_form_matches_quadrature(u, v):
    """d = 2: the KL divergence of the two Beta laws of the first coordinate, integrated."""
    u, v = np.array(u), np.array(v)
    p, q = stats.beta(u[0], u[1]), stats.beta(v[0], v[1])
    value, _ = integrate.quad(lambda x: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)), 0, 1,
                              epsabs=0, epsrel=1e-12, limit=200)
    assert dirichlet_kl_closed_form(u, v) == pytest.approx(value, rel=1e-9)


def test_kl_closed_form_matches_monte_carlo_d3():
    u, v = np.array([2.0, 3.0, 4.0]), np.array([2.0, 2.0, 5.0])
    y = np.random.default_rng(7).dirichlet(u, size=400_000)
    samples = stats.dirichlet.logpdf(y.T, u) - stats.dirichlet.logpdf(y.T, v)
    se = samples.std() / np.sqrt(samples.size)
    assert abs(dirichlet_kl_closed_form(u, v) - samples.mean()) < 5 * se


def test_kl_closed_form_refuses_bad_input():
    with pytest.raises(ValueError, match="same length"):
        dirichlet_kl_closed_form([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="u"):
        dirichlet_kl_closed_form([0.0, 2.0], [1.0, 2.0])
