"""lib.theory.gohari_comparison against independent computations."""

import numpy as np
import pytest
from scipy import special, stats

from lib.mechanisms.gohari.reference import delta_by_fixed_rule
from lib.theory.gohari_comparison import (fixed_rule_delta, limiting_kl_loss,
                                          sampled_kl_losses, worst_log_beta_ratio)


def _log_b(u):
    return special.gammaln(u).sum() - special.gammaln(u.sum())


def test_worst_log_beta_ratio_two_bins_by_hand():
    """d = 2: moves go (k, N - k) -> (k - 1, N - k + 1); the worst is the largest of N terms."""
    n_total, r, lam = 4, 0.6, 3.0
    alpha = 1 + 4 * (lam - 1) * r
    ratios = []
    for k in range(n_total + 1):
        f = np.array([k, n_total - k], dtype=float)
        for g in (f + [-1, 1], f + [1, -1]):
            if g.min() >= 0:
                ratios.append(_log_b(r * g + alpha) - _log_b(r * f + alpha))
    assert worst_log_beta_ratio(n_total, 2, r, lam) == pytest.approx(max(ratios), rel=1e-12)


def test_worst_log_beta_ratio_is_the_emptying_move():
    """The worst move takes the only record of a bin to a bin with all the others."""
    n_total, d, r, lam = 5, 3, 0.7, 2.0
    alpha = 1 + 4 * (lam - 1) * r
    f = np.array([1.0, 4.0, 0.0])
    g = np.array([0.0, 5.0, 0.0])
    expected = _log_b(r * g + alpha) - _log_b(r * f + alpha)
    assert worst_log_beta_ratio(n_total, d, r, lam) == pytest.approx(expected, rel=1e-12)


def test_worst_log_beta_ratio_refuses_a_huge_enumeration():
    with pytest.raises(ValueError, match="cells"):
        worst_log_beta_ratio(100, 10, 1.0, 2.0)


def test_fixed_rule_delta_is_the_largest_vertex():
    gammas = np.array([1e-3, 1e-2])
    vertices = [np.array([2.0, 3.0, 10.0]), np.array([2.0, 8.0, 5.0])]
    each = [delta_by_fixed_rule(gammas, v, 20) for v in vertices]
    assert np.array_equal(fixed_rule_delta(gammas, vertices, 20), np.maximum(*each))
    with pytest.raises(ValueError, match="vertex"):
        fixed_rule_delta(gammas, [], 20)


def test_sampled_kl_losses_mean_matches_the_expected_loss():
    """The mean of the losses against E[KL] by the Dirichlet moments of log y."""
    f = np.array([30.0, 12.0, 5.0, 3.0])
    r, alpha = 0.9, 1.4
    losses = sampled_kl_losses(f, r, alpha, 200_000, np.random.default_rng(4))
    a = r * f + alpha
    p = f / f.sum()
    expected = (p * np.log(p)).sum() - (p * (special.digamma(a) - special.digamma(a.sum()))).sum()
    se = losses.std() / np.sqrt(losses.size)
    assert abs(losses.mean() - expected) < 5 * se
    with pytest.raises(TypeError, match="Generator"):
        sampled_kl_losses(f, r, alpha, 10, 3)


def test_limiting_kl_loss_is_the_limit_of_the_mean():
    f = np.array([119.0, 74.0, 618.0, 272.0, 13.0, 187.0])
    lam, r = 20.0, 1e9
    alpha = 1 + 4 * (lam - 1) * r
    mean = stats.dirichlet.mean(r * f + alpha)
    p = f / f.sum()
    direct = (p * np.log(p / mean)).sum()
    assert limiting_kl_loss(f, lam) == pytest.approx(direct, rel=1e-6)
    assert limiting_kl_loss(f, 1.0) == 0.0
