"""Mixed naive Bayes: categorical attributes as counts, numerical ones as Gaussians.

Four ways to fit it, all from the same sufficient statistics:

``"nonprivate"``
    Counts plus Laplace smoothing, per-class means and (population) standard
    deviations; with ``var_smoothing`` as in scikit-learn's ``GaussianNB``.
``"zc"``
    Zafarani and Clifton's Algorithm 1: Laplace noise on every count, Cauchy
    noise scaled to the smooth sensitivity of the per-class mean (Theorem 4)
    and standard deviation (line 17; :func:`lib.smooth_sensitivity.smooth_sensitivity_std`),
    calibrated by their Theorem 2 (``calibration="theorem2"``) or by the
    constants printed in Algorithm 1 (``calibration="printed"``, a labelled
    variant).
``"vaidya"``
    Vaidya et al. (2013): Laplace noise scaled to the global sensitivities of
    the mean :math:`(U-L)/n` and the standard deviation :math:`(U-L)\\sqrt{n-1}/n`.
``"bun_steinke"``
    As Zafarani and Clifton describe Bun and Steinke's estimator (their
    Sections 5 and 7): trimmed means of :math:`x` and :math:`x^2` with Cauchy
    noise scaled to their smooth sensitivity, projected to the range, and
    :math:`\\sigma^2 = E[X^2] - E[X]^2`.

Budget (Algorithm 1, line 3, and their Appendix 10.1): with weights
``allocation = (w_num, w_cat)`` (their "2:1" is ``(2, 1)``),
:math:`\\varepsilon' = \\varepsilon / (w_{num}\\,J_{num} + w_{cat}\\,J_{cat} + 1)`;
the class counts get :math:`\\varepsilon'`, each categorical table
:math:`w_{cat}\\varepsilon'`, each numerical attribute :math:`w_{num}\\varepsilon'`
split equally between its two releases (mean and standard deviation, or the
two moments). Per class the rows are disjoint, so the releases of one
attribute for different classes compose in parallel.

Neighbours and what the guarantee covers: replace-one, as in the rest of the
book, so a count table has :math:`\\ell_1`-sensitivity 2 (Algorithm 1 prints 1,
the add/remove value; ``count_sensitivity`` sets it). The numerical releases,
as in both papers, treat each class's sample size as fixed: a neighbour that
changes a row's *label* moves one value between two classes' samples, which no
theorem of either paper covers. See the chapter for this finding.

Post-processing (free in DP): noisy counts are clipped at 0 and smoothed by
``alpha``; means are clipped into :math:`[L, U]`, standard deviations into
:math:`[\\text{sd\\_floor}\\,(U-L), (U-L)/2]` (Algorithm 1 truncates at 0, which
leaves a zero deviation and an infinite density).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, logsumexp

from . import _validate
from . import smooth_sensitivity as ss

METHODS = ("nonprivate", "zc", "vaidya", "bun_steinke")
LIKELIHOODS = ("gaussian", "truncnorm")


def _check_data(X_cat, X_num, y, n_values, n_classes, bounds):
    X_cat = np.asarray(X_cat, dtype=np.int64).reshape(len(y), -1)
    X_num = np.asarray(X_num, dtype=float).reshape(len(y), -1)
    y = np.asarray(y, dtype=np.int64)
    n_values = np.asarray(n_values, dtype=np.int64).reshape(-1)
    bounds = np.asarray(bounds, dtype=float).reshape(-1, 2)
    if n_values.size != X_cat.shape[1]:
        raise ValueError(f"n_values must have one entry per categorical column ({X_cat.shape[1]})")
    if bounds.shape[0] != X_num.shape[1]:
        raise ValueError(f"bounds must have one (lower, upper) row per numerical column ({X_num.shape[1]})")
    if np.any(bounds[:, 1] <= bounds[:, 0]) or not np.all(np.isfinite(bounds)):
        raise ValueError("bounds must be finite with upper > lower in every row")
    n_classes = _validate.integer(n_classes, "n_classes", 2)
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y must hold class codes in [0, {n_classes - 1}]")
    if X_cat.size and (X_cat.min() < 0 or np.any(X_cat.max(axis=0) >= n_values)):
        raise ValueError("X_cat must hold codes in [0, n_values[j] - 1] in column j")
    if not np.all(np.isfinite(X_num)):
        raise ValueError("X_num must be finite")
    return X_cat, np.clip(X_num, bounds[:, 0], bounds[:, 1]), y, n_values, n_classes, bounds


def budget(epsilon, n_numerical, n_categorical, allocation=(2.0, 1.0)):
    """:math:`\\varepsilon'` of Algorithm 1, line 3, for the weights ``allocation = (w_num, w_cat)``.

    Examples
    --------
    >>> budget(1.3, 5, 8)   # Adult: 1.3 / (2*5 + 8 + 1)
    0.06842105263157895
    """
    epsilon = _validate.scalar(_validate.positive(epsilon, "epsilon"), "epsilon")
    w = _validate.positive(allocation, "allocation")
    if w.shape != (2,):
        raise ValueError("allocation must be a pair (w_num, w_cat)")
    return float(epsilon / (w[0] * n_numerical + w[1] * n_categorical + 1.0))


def _numeric_release(x, lower, upper, method, eps_each, calibration, trim, resolution, max_distance, cache, key):
    """(value, noise scale) of the two numerical releases of one class and attribute."""
    n = x.size
    width = upper - lower
    if n < 2:     # a class with < 2 rows (its size is treated as public): release the range's centre
        return (lower + width / 2, 0.0), (width / 2, 0.0)
    if method == "vaidya":
        return ((float(x.mean()), ss.global_sensitivity_mean(n, lower, upper) / eps_each),
                (float(x.std()), ss.global_sensitivity_std(n, lower, upper) / eps_each))
    beta, mult = ss.calibrate(eps_each, calibration)
    if method == "zc":
        m = int(np.floor(trim * n))
        t = np.sort(x)[m:n - m]
        s_mean = ss.smooth_sensitivity_mean(t, lower, upper, beta)
        s_sd, cache[key] = ss.smooth_sensitivity_std_profile(t, lower, upper, beta, cache.get(key),
                                                             resolution=resolution, max_distance=max_distance)
        return (float(t.mean()), mult * s_mean), (float(t.std()), mult * s_sd)
    # bun_steinke: trimmed means of x and x^2
    m = min(int(np.ceil(trim * n)), (n - 1) // 2)
    lo2 = 0.0 if lower <= 0.0 <= upper else min(lower**2, upper**2)
    hi2 = max(lower**2, upper**2)
    x2 = np.clip(x * x, lo2, hi2)
    ks = np.arange(m + 2)    # A^(k) reaches its maximum (U - L)/(n - 2m) by k = m + 1
    for tag, v, a, b in (("m1", x, lower, upper), ("m2", np.sort(x2), lo2, hi2)):
        if key + (tag,) not in cache:
            cache[key + (tag,)] = ss.trimmed_mean_sensitivity_at_distance(v, a, b, m, ks)
    s1, s2 = (float(np.max(np.exp(-beta * ks) * cache[key + (tag,)])) for tag in ("m1", "m2"))
    return (ss.trimmed_mean(x, m), mult * s1), (ss.trimmed_mean(x2, m), mult * s2)


def fit_statistics(X_cat, X_num, y, n_values, n_classes, bounds, *, method="zc", epsilon=1.0,
                   allocation=(2.0, 1.0), calibration="theorem2", count_sensitivity=2.0, trim=None,
                   resolution=4096, max_distance=None, var_smoothing=1e-9, cache=None):
    """Exact statistics and the scale of the noise each one gets (the data-dependent part of a fit).

    Parameters
    ----------
    X_cat : array_like of int, shape (n, J_cat)
        Category codes (public domains ``n_values``).
    X_num : array_like of float, shape (n, J_num)
        Raw numerical values; clipped into ``bounds``.
    y : array_like of int, shape (n,)
    n_values : array_like of int, shape (J_cat,)
    n_classes : int
    bounds : array_like, shape (J_num, 2)
        Public ranges (:mod:`lib.public_bounds`).
    method : {"nonprivate", "zc", "vaidya", "bun_steinke"}
    epsilon : float
        Total pure-DP budget :math:`\\varepsilon` (ignored by ``"nonprivate"``).
    allocation : (float, float)
        Budget weights (numerical, categorical); Algorithm 1 is (2, 1).
    calibration : {"theorem2", "printed"}
        Cauchy calibration (:func:`lib.smooth_sensitivity.calibrate`); ``"printed"``
        also uses Algorithm 1's count sensitivity 1 and Cauchy class counts.
    count_sensitivity : float
        :math:`\\ell_1`-sensitivity of a count table (2 for replace-one).
    trim : float, optional
        Share trimmed at each end: 0 for ``"zc"`` (Algorithm 1 leaves
        :math:`m` open), 0.05 for ``"bun_steinke"`` by default.
    resolution, max_distance
        Passed to :func:`lib.smooth_sensitivity.smooth_sensitivity_std`.
    var_smoothing : float
        Non-private only: scikit-learn's additive variance, a share of the
        largest attribute variance.
    cache : dict, optional
        Smooth-sensitivity profiles of an earlier call on the SAME training
        data and options (another epsilon); filled in place.

    Returns
    -------
    dict
        ``class``/``tables``/``mu``/``sd`` (or ``m1``/``m2``) values, their noise
        scales and distributions; input of :func:`draw`.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    if calibration not in ss.RULES:
        raise ValueError(f"calibration must be one of {ss.RULES}; got {calibration!r}")
    X_cat, X_num, y, n_values, n_classes, bounds = _check_data(X_cat, X_num, y, n_values, n_classes, bounds)
    if trim is None:
        trim = 0.05 if method == "bun_steinke" else 0.0
    trim = float(_validate.in_range(trim, "trim", 0.0, 0.5, open_low=False))
    J_num, J_cat = X_num.shape[1], X_cat.shape[1]
    class_counts = np.bincount(y, minlength=n_classes).astype(float)
    tables = [np.bincount(y * k + X_cat[:, j], minlength=n_classes * k).reshape(n_classes, k).astype(float)
              for j, k in enumerate(n_values)]
    out = {"method": method, "bounds": bounds, "n_values": n_values, "n_classes": n_classes,
           "class": class_counts, "tables": tables}
    if method == "nonprivate":
        mu = np.stack([X_num[y == c].mean(axis=0) if np.any(y == c) else bounds.mean(axis=1)
                       for c in range(n_classes)])
        var = np.stack([X_num[y == c].var(axis=0) if np.any(y == c) else np.zeros(J_num)
                        for c in range(n_classes)])
        var = var + var_smoothing * (X_num.var(axis=0).max() if J_num else 0.0)
        out.update(mu=mu, sd=np.sqrt(var), scales=None)
        return out
    eps1 = budget(epsilon, J_num, J_cat, allocation)
    printed = calibration == "printed"
    sens = 1.0 if printed else _validate.scalar(_validate.positive(count_sensitivity, "count_sensitivity"),
                                                "count_sensitivity")
    eps_each = allocation[0] * eps1 / 2.0
    first = np.zeros((n_classes, J_num, 2))
    second = np.zeros((n_classes, J_num, 2))
    for c in range(n_classes):
        xc = X_num[y == c]
        for j in range(J_num):
            first[c, j], second[c, j] = _numeric_release(np.sort(xc[:, j]), bounds[j, 0], bounds[j, 1], method,
                                                         eps_each, calibration, trim, resolution, max_distance,
                                                         {} if cache is None else cache, (c, j, trim))
    num_dist = "laplace" if method == "vaidya" else "cauchy"
    out.update(scales={
        "class": (("cauchy", np.sqrt(2.0) / eps1) if printed else ("laplace", sens / eps1)),
        "tables": ("laplace", sens / (allocation[1] * eps1)),
        "first": (num_dist, first[..., 1]), "second": (num_dist, second[..., 1])},
        first=first[..., 0], second=second[..., 0], epsilon_prime=eps1)
    return out


def _noise(rng, dist, scale, shape):
    scale = np.asarray(scale, dtype=float)
    z = rng.standard_cauchy(shape) if dist == "cauchy" else rng.laplace(0.0, 1.0, shape)
    return z * scale


def draw(stats, n_draws=1, rng=None, *, alpha=1.0, sd_floor=1e-3):
    """Released parameters of ``n_draws`` independent private fits (or the non-private fit repeated).

    Returns
    -------
    dict
        ``log_prior`` (B, C), ``log_tables`` list of (B, C, n_j), ``mu`` and
        ``sd`` (B, C, J_num).
    """
    rng = _validate.generator(rng)
    n_draws = _validate.integer(n_draws, "n_draws")
    C = stats["n_classes"]
    lo, hi = stats["bounds"][:, 0], stats["bounds"][:, 1]
    width = hi - lo
    sc = stats["scales"]
    B = (n_draws,)
    cls = np.broadcast_to(stats["class"], B + (C,)).copy()
    tables = [np.broadcast_to(t, B + t.shape).copy() for t in stats["tables"]]
    if sc is None:
        mu = np.broadcast_to(stats["mu"], B + stats["mu"].shape).copy()
        sd = np.broadcast_to(stats["sd"], B + stats["sd"].shape).copy()
        prior = cls / cls.sum(axis=-1, keepdims=True)
    else:
        cls += _noise(rng, *sc["class"], cls.shape)
        for t in tables:
            t += _noise(rng, *sc["tables"], t.shape)
        first = stats["first"] + _noise(rng, sc["first"][0], sc["first"][1], B + stats["first"].shape)
        second = stats["second"] + _noise(rng, sc["second"][0], sc["second"][1], B + stats["second"].shape)
        mu = np.clip(first, lo, hi)
        if stats["method"] == "bun_steinke":
            var = second - mu**2
            sd = np.sqrt(np.clip(var, (sd_floor * width) ** 2, (width / 2) ** 2))
        else:
            sd = second
        sd = np.clip(sd, sd_floor * width, width / 2)
        prior = np.maximum(cls, 0.0) + 1.0
        prior /= prior.sum(axis=-1, keepdims=True)
    log_tables = []
    for t in tables:
        t = np.maximum(t, 0.0) + alpha
        log_tables.append(np.log(t / t.sum(axis=-1, keepdims=True)))
    return {"log_prior": np.log(prior), "log_tables": log_tables, "mu": mu, "sd": sd, "bounds": stats["bounds"]}


def log_proba(params, X_cat, X_num, likelihood="gaussian"):
    """Log posterior class probabilities, shape (B, n, C), of a batch of released models.

    ``likelihood="truncnorm"`` uses the normal truncated to the public range,
    :math:`\\phi((x-\\mu)/\\sigma) / (\\sigma[\\Phi((b-\\mu)/\\sigma) - \\Phi((a-\\mu)/\\sigma)])`.
    """
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}; got {likelihood!r}")
    bounds = params["bounds"]
    X_num = np.clip(np.asarray(X_num, dtype=float), bounds[:, 0], bounds[:, 1])
    X_cat = np.asarray(X_cat, dtype=np.int64).reshape(X_num.shape[0], -1)
    scores = np.broadcast_to(params["log_prior"][:, None, :],
                             (params["log_prior"].shape[0], X_num.shape[0], params["log_prior"].shape[1])).copy()
    for j, lt in enumerate(params["log_tables"]):
        scores += np.moveaxis(lt[:, :, X_cat[:, j]], 1, 2)
    mu, sd = params["mu"], params["sd"]                      # (B, C, J)
    for j in range(X_num.shape[1]):
        m, s = mu[:, None, :, j], sd[:, None, :, j]          # (B, 1, C)
        z = (X_num[None, :, j, None] - m) / s
        ll = -0.5 * z * z - np.log(s) - 0.5 * np.log(2 * np.pi)
        if likelihood == "truncnorm":
            hi = log_ndtr((bounds[j, 1] - m) / s)
            lo = log_ndtr((bounds[j, 0] - m) / s)
            ll = ll - (hi + np.log1p(-np.exp(np.minimum(lo - hi, -1e-300))))
        scores += ll
    return scores - logsumexp(scores, axis=-1, keepdims=True)


class MixedNaiveBayes:
    """Scikit-learn-style estimator over :func:`fit_statistics`, :func:`draw` and :func:`log_proba`.

    ``fit(X, y)`` takes one 2-D array whose columns ``categorical`` (a boolean
    mask) hold integer codes and whose other columns hold raw numbers.

    Examples
    --------
    >>> X = np.array([[0, 1.0], [0, 2.0], [1, 8.0], [1, 9.0]])
    >>> nb = MixedNaiveBayes("nonprivate", categorical=[True, False], n_values=[2],
    ...                      bounds=[[0.0, 10.0]]).fit(X, [0, 0, 1, 1])
    >>> nb.predict([[0, 1.5], [1, 8.5]]).tolist()
    [0, 1]
    """

    def __init__(self, method="zc", epsilon=1.0, *, categorical=None, n_values=None, bounds=None, n_classes=None,
                 allocation=(2.0, 1.0), calibration="theorem2", likelihood="gaussian", trim=None,
                 resolution=4096, max_distance=None, rng=None):
        self.method, self.epsilon, self.categorical = method, epsilon, categorical
        self.n_values, self.bounds, self.n_classes = n_values, bounds, n_classes
        self.allocation, self.calibration, self.likelihood, self.trim = allocation, calibration, likelihood, trim
        self.resolution, self.max_distance, self.rng = resolution, max_distance, rng

    def _split(self, X):
        X = np.asarray(X, dtype=float)
        mask = np.zeros(X.shape[1], bool) if self.categorical is None else np.asarray(self.categorical, bool)
        return X[:, mask].astype(np.int64), X[:, ~mask]

    def fit(self, X, y):
        y = np.asarray(y, dtype=np.int64)
        X_cat, X_num = self._split(X)
        n_classes = int(y.max()) + 1 if self.n_classes is None else self.n_classes
        n_values = (X_cat.max(axis=0) + 1 if self.n_values is None else self.n_values)
        bounds = (np.column_stack([X_num.min(axis=0), X_num.max(axis=0)]) if self.bounds is None else self.bounds)
        if self.bounds is None and self.method != "nonprivate":
            raise ValueError("bounds must be given (public ranges) for a private method")
        self.stats_ = fit_statistics(X_cat, X_num, y, n_values, max(n_classes, 2), bounds, method=self.method,
                                     epsilon=self.epsilon, allocation=self.allocation, calibration=self.calibration,
                                     trim=self.trim, resolution=self.resolution, max_distance=self.max_distance)
        self.params_ = draw(self.stats_, 1, self.rng)
        self.classes_ = np.arange(self.stats_["n_classes"])
        return self

    def predict_log_proba(self, X):
        X_cat, X_num = self._split(X)
        return log_proba(self.params_, X_cat, X_num, self.likelihood)[0]

    def predict_proba(self, X):
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        return np.argmax(self.predict_log_proba(X), axis=-1)
