"""lib.theory.hellinger_pairs against independent computations: Hellinger distances by quadrature
(mpmath), per-pair spends by a plain loop and by the exact audit, labels by hand."""

import mpmath as mp
import numpy as np
import pytest

from lib.mechanisms import hellinger as hm
from lib.theory import hellinger_audit as ha
from lib.theory.hellinger_pairs import pair_label, pair_spend, spend_by_label, tied_score_pairs


def _hellinger_quad(u, v):
    """H(beta(u), beta(v)) = sqrt(1 - int sqrt(p_u p_v)) by quadrature, at 30 digits."""
    with mp.workdps(30):
        def log_pdf(t, a):
            return (a[0] - 1) * mp.log(t) + (a[1] - 1) * mp.log(1 - t) - mp.log(mp.beta(a[0], a[1]))
        bc = mp.quad(lambda t: mp.exp((log_pdf(t, u) + log_pdf(t, v)) / 2), [0, 0.5, 1])
        return float(mp.sqrt(max(1 - bc, 0)))


def _ties_by_quadrature(prior, n, a):
    h = sorted(_hellinger_quad((prior[0] + a, prior[1] + n - a), (prior[0] + j, prior[1] + n - j))
               for j in range(n + 1) if j != a)
    return sum(abs(x - y) < 1e-9 for x, y in zip(h[1:], h[:-1])), h


@pytest.mark.parametrize("prior,n,a", [((1.0, 1.0), 6, 3), ((1.0, 1.0), 6, 1), ((2.0, 8.0), 6, 3),
                                       ((0.5, 0.5), 8, 4)])
def test_tied_pairs_match_quadrature(prior, n, a):
    expected, h = _ties_by_quadrature(prior, n, a)
    # no near-ties that a tolerance could decide either way
    gaps = np.diff(h)
    assert ((gaps < 1e-12) | (gaps > 1e-6)).all()
    assert tied_score_pairs(prior, n, a) == expected


def test_centre_of_a_symmetric_prior_pairs_every_candidate():
    assert tied_score_pairs((1.0, 1.0), 40, 20) == 20
    assert tied_score_pairs((1.0, 1.0), 40, 13) == 0


def test_pair_label_by_hand():
    assert pair_label((1.0, 1.0), 10, (8, 9)) == (1, 2)      # mirror image of (1, 2)
    assert pair_label((1.0, 1.0), 10, (3, 2)) == (2, 3)      # either order
    assert pair_label((1.0, 2.0), 10, (8, 9)) == (8, 9)      # asymmetric prior: no folding
    assert pair_label((0.5, 0.5), 9, (4, 5)) == (4, 5)       # the centre pair is its own mirror image


@pytest.mark.parametrize("bad", [(2, 4), (3, 3), (10, 11), (-1, 0)])
def test_pair_label_refuses_non_neighbours(bad):
    with pytest.raises(ValueError, match="pair"):
        pair_label((1.0, 1.0), 10, bad)


def test_pair_spend_against_a_loop_and_the_audit():
    mech = hm.SmoothedHellinger((0.05, 0.05), 30, 5.0, 1e-2)
    lp = mech.log_pmf
    loop = [max(abs(x - y) for x, y in zip(lp[a], lp[a + 1])) / 5.0 for a in range(30)]
    spend = pair_spend(lp, 5.0)
    assert spend.shape == (30,) and np.array_equal(spend, np.array(loop))
    res = ha.audit(lp, mech.neighbours, [5.0])
    assert spend.max() == pytest.approx(res.pure_epsilon / 5.0, rel=1e-12)


def test_spend_by_label_combines_mirror_images():
    mech = hm.SmoothedHellinger((1.0, 1.0), 20, 2.0, 1e-6)
    spend = pair_spend(mech.log_pmf, 2.0)
    by_label = spend_by_label((1.0, 1.0), mech.log_pmf, 2.0)
    assert list(by_label) == [(a, a + 1) for a in range(10)]
    for (a, _), s in by_label.items():
        assert s == max(spend[a], spend[19 - a])
    # an asymmetric prior keeps every pair
    lopsided = hm.SmoothedHellinger((1.0, 3.0), 20, 2.0, 1e-6)
    assert len(spend_by_label((1.0, 3.0), lopsided.log_pmf, 2.0)) == 20


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="prior"):
        tied_score_pairs((1.0, 0.0), 10, 3)
    with pytest.raises(ValueError, match="a must"):
        tied_score_pairs((1.0, 1.0), 10, 11)
    with pytest.raises(ValueError, match="epsilon"):
        pair_spend(np.zeros((3, 3)), 0.0)
    with pytest.raises(ValueError, match="log_pmf"):
        pair_spend(np.zeros(3), 1.0)
