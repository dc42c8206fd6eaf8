"""lib.gaussian_naive_bayes against scikit-learn and against its own privacy bookkeeping."""

import numpy as np
import pytest
from scipy import integrate
from sklearn.naive_bayes import CategoricalNB, GaussianNB

from lib import gaussian_naive_bayes as gnb
from lib import smooth_sensitivity as ss


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X_num = np.column_stack([rng.normal(10 + 3 * y, 2), rng.uniform(0, 5, n) + y]).clip(0, 30)
    X_cat = np.column_stack([(y + rng.integers(0, 2, n)) % 4, rng.integers(0, 3, n)])
    return X_cat, X_num, y


BOUNDS = np.array([[0.0, 30.0], [0.0, 30.0]])


def test_nonprivate_numeric_equals_sklearn_gaussiannb():
    _, X_num, y = _data()
    stats = gnb.fit_statistics(np.zeros((len(y), 0), int), X_num, y, [], 3, BOUNDS, method="nonprivate")
    lp = gnb.log_proba(gnb.draw(stats), np.zeros((len(y), 0), int), X_num)[0]
    ref = GaussianNB().fit(X_num, y).predict_log_proba(X_num)
    assert np.max(np.abs(lp - ref)) < 1e-9   # same formulas; only summation order differs


def test_nonprivate_categorical_equals_sklearn_categoricalnb():
    X_cat, _, y = _data()
    stats = gnb.fit_statistics(X_cat, np.zeros((len(y), 0)), y, [4, 3], 3, np.zeros((0, 2)), method="nonprivate")
    lp = gnb.log_proba(gnb.draw(stats), X_cat, np.zeros((len(y), 0)))[0]
    ref = CategoricalNB(alpha=1.0, min_categories=[4, 3]).fit(X_cat, y).predict_log_proba(X_cat)
    assert np.max(np.abs(lp - ref)) < 1e-9


def test_estimator_wraps_the_functions():
    X_cat, X_num, y = _data()
    X = np.column_stack([X_cat, X_num])
    nb = gnb.MixedNaiveBayes("nonprivate", categorical=[True, True, False, False], n_values=[4, 3],
                             bounds=BOUNDS).fit(X, y)
    assert nb.predict_proba(X).sum(axis=1) == pytest.approx(np.ones(len(y)))
    assert (nb.predict(X) == y).mean() > 0.8


def test_budget_adds_up():
    # class counts + categorical tables + two releases per numerical attribute = epsilon.
    for alloc in [(2.0, 1.0), (1.0, 2.0), (1.0, 1.0)]:
        e1 = gnb.budget(0.7, 5, 8, alloc)
        assert e1 * (1 + 8 * alloc[1] + 5 * alloc[0]) == pytest.approx(0.7, rel=1e-14)


@pytest.mark.parametrize("method", ["zc", "vaidya", "bun_steinke"])
def test_private_noise_scales(method):
    X_cat, X_num, y = _data()
    eps = 2.0
    st = gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method=method, epsilon=eps)
    e1 = gnb.budget(eps, 2, 2)
    assert st["scales"]["tables"] == ("laplace", pytest.approx(2.0 / e1))
    assert st["scales"]["class"] == ("laplace", pytest.approx(2.0 / e1))
    x = np.sort(X_num[y == 1, 0])
    dist, scale = st["scales"]["second"]
    if method == "vaidya":
        assert dist == "laplace"
        assert scale[1, 0] == pytest.approx(ss.global_sensitivity_std(x.size, 0, 30) / e1)
    elif method == "zc":
        beta, mult = ss.calibrate(e1, "theorem2")
        assert dist == "cauchy"
        assert scale[1, 0] == pytest.approx(mult * ss.smooth_sensitivity_std(x, 0, 30, beta, resolution=4096))
        # and the smooth scale is below what global sensitivity with the same Cauchy calibration would give
        assert scale[1, 0] < mult * ss.global_sensitivity_std(x.size, 0, 30)
    else:   # bun_steinke: trimmed mean of x with Bun-Steinke's smooth sensitivity, Theorem 2 calibration
        beta, mult = ss.calibrate(e1, "theorem2")
        m = int(np.ceil(0.05 * x.size))
        dist, first = st["scales"]["first"]
        assert dist == "cauchy"
        assert first[1, 0] == pytest.approx(mult * ss.smooth_sensitivity_trimmed_mean(x, 0, 30, m, beta))
        assert st["first"][1, 0] == pytest.approx(ss.trimmed_mean(x, m))


def test_printed_variant_is_4_2_times_less_noise():
    X_cat, X_num, y = _data()
    a = gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method="zc", epsilon=1.0)
    b = gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method="zc", epsilon=1.0, calibration="printed")
    ratio = a["scales"]["first"][1] / b["scales"]["first"][1]
    assert np.allclose(ratio, 6 / np.sqrt(2))
    assert b["scales"]["class"][0] == "cauchy"


def test_released_noise_has_the_stated_scale():
    # Median of |Cauchy(0, s)| is s: over 4000 draws the sample median has relative standard error
    # about pi/2 / sqrt(4000) ~ 2.5 %, so 10 % is four standard errors.
    X_cat, X_num, y = _data()
    st = gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method="zc", epsilon=50.0)
    st["bounds"] = np.array([[-1e9, 1e9]] * 2)   # no clipping, to see the raw noise
    p = gnb.draw(st, 4000, rng=1)
    noise = p["mu"][:, 0, 0] - st["first"][0, 0]
    assert np.median(np.abs(noise)) == pytest.approx(st["scales"]["first"][1][0, 0], rel=0.10)


@pytest.mark.parametrize("method", ["zc", "vaidya", "bun_steinke"])
def test_large_epsilon_recovers_nonprivate_accuracy(method):
    # At epsilon = 1e5 the noise is negligible; accuracy within 2 points of the non-private model
    # (bun_steinke trims 5 % and uses E[X^2] - E[X]^2, so it is not identical).
    X_cat, X_num, y = _data(3000)
    ref = gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method="nonprivate")
    acc_ref = (gnb.log_proba(gnb.draw(ref), X_cat, X_num)[0].argmax(-1) == y).mean()
    st = gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method=method, epsilon=1e5)
    acc = (gnb.log_proba(gnb.draw(st, 5, rng=0), X_cat, X_num).argmax(-1) == y).mean(axis=-1)
    assert np.all(np.abs(acc - acc_ref) < 0.02)


def test_truncnorm_density_integrates_to_one():
    params = {"log_prior": np.zeros((1, 1)), "log_tables": [], "mu": np.array([[[2.0]]]),
              "sd": np.array([[[1.5]]]), "bounds": np.array([[0.0, 3.0]])}
    # log_proba normalises over classes; read the class score through a two-class trick instead:
    params2 = dict(params, log_prior=np.log([[0.5, 0.5]]), mu=np.array([[[2.0], [1.5]]]),
                   sd=np.array([[[1.5], [1e6]]]))   # class 1: nearly flat, density ~ 1/3 on [0, 3]
    x = np.linspace(0, 3, 3001)[:, None]
    lp = gnb.log_proba(params2, np.zeros((len(x), 0), int), x, "truncnorm")[0]
    dens0 = np.exp(lp[:, 0] - lp[:, 1]) / 3.0   # p0(x) / p1(x) * p1(x), with p1 = 1/3 to 1e-12
    assert integrate.trapezoid(dens0, x[:, 0]) == pytest.approx(1.0, abs=1e-6)


def test_validation():
    X_cat, X_num, y = _data(50)
    with pytest.raises(ValueError, match="method"):
        gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, method="other")
    with pytest.raises(ValueError, match="bounds"):
        gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS[:1])
    with pytest.raises(ValueError, match="epsilon"):
        gnb.fit_statistics(X_cat, X_num, y, [4, 3], 3, BOUNDS, epsilon=0.0)
    with pytest.raises(ValueError, match="bounds must be given"):
        gnb.MixedNaiveBayes("zc").fit(X_num, y)
