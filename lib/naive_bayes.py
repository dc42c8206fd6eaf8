"""Categorical naive Bayes with privately released parameters (Section 5.1).

The model of eq. (10): a class prior :math:`\\pi_j = \\Pr[y = j]` and, for every
attribute :math:`k` and class :math:`j`, a distribution
:math:`\\theta^k_{j\\cdot} = \\Pr[x_k = \\cdot \\mid y = j]` over the values of that
attribute, so that

.. math::
    \\Pr[y = j \\mid x_1, \\dots, x_K] \\propto \\pi_j \\prod_{k=1}^K \\theta^k_{j x_k}.

A mechanism releases :math:`\\pi` from the class counts :math:`N_j` and each row
:math:`\\theta^k_{j\\cdot}` from the counts :math:`N^k_{jc}`, :math:`c \\in \\mathcal X_k`
(one release per attribute, all class rows at once). The privacy budget is split
by :func:`release_budget`, the one place where the accounting lives.

Everything is vectorised over a batch of independent releases (``n_draws``), so
that an experiment draws all its repetitions at once. Scoring the released
models (:func:`log_proba`, :func:`scores`, :func:`cross_entropy`,
:func:`accuracy`) is in :mod:`lib.naive_bayes_scoring`; those four functions are
importable from here too.
"""

from __future__ import annotations

import numpy as np

from . import _validate
from .baselines import _NoiseMechanism
from .mechanism import DirichletMechanism
# Scoring lives in lib.naive_bayes_scoring; its public functions stay importable from here.
from .naive_bayes_scoring import _chunks, _joint, _model, accuracy, cross_entropy, log_proba, scores  # noqa: F401
from .protocol import ModelCalibration, ReleaseSpec, get

def release_budget(epsilon, n_attributes):
    """RDP level of each release of a private naive Bayes model (Proposition 7.1).

    A model with :math:`K` attributes makes :math:`K + 1` releases: the class
    counts, and one table of counts per attribute. If each is
    :math:`(\\lambda, \\varepsilon/(K+1))`-RDP, their composition (Lemma 1, basic
    composition of RDP) is :math:`(\\lambda, \\varepsilon)`-RDP.

    Parameters
    ----------
    epsilon : array_like
        The total RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    n_attributes : int
        The number of attributes :math:`K \\ge 1`.

    Returns
    -------
    ndarray or float
        :math:`\\varepsilon / (K + 1)`.

    Examples
    --------
    >>> release_budget(1.0, n_attributes=9)
    0.1
    """
    epsilon = _validate.positive(epsilon, "epsilon")
    n_attributes = _validate.integer(n_attributes, "n_attributes")
    out = epsilon / (int(n_attributes) + 1)
    return float(out) if out.ndim == 0 else out


def _domain(n_values, n_columns, n_classes):
    """Validate public domain sizes and the number of classes; refuse absurd model sizes."""
    n_values = np.asarray(n_values)
    if (n_values.shape != (n_columns,) or not np.issubdtype(n_values.dtype, np.integer)
            or np.any(n_values < 2)):
        raise ValueError(
            f"n_values must hold one integer in [2, inf) per column of X ({n_columns}); got {n_values!r}"
        )
    n_classes = _validate.integer(n_classes, "n_classes", 2)
    # exact Python integers: a sum of huge int64 values must not wrap around
    _validate.cells(n_classes * sum(int(v) for v in n_values),
                    f"a naive Bayes model with n_classes = {n_classes} and sum(n_values) = "
                    f"{sum(int(v) for v in n_values)}", MAX_CELLS)
    return n_values.astype(np.int64), int(n_classes)


def _codes(X, y, n_values, n_classes):
    """Validate integer codes and the public domains they index."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] < 1 or not np.issubdtype(X.dtype, np.integer):
        raise ValueError(f"X must be a 2-D integer array with at least one column; got {X.dtype} {X.shape}")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"y must be a 1-D integer array with one entry per row of X; got {y.dtype} {y.shape}"
        )
    n_values, n_classes = _domain(n_values, X.shape[1], n_classes)
    X = _validate.codes(X, "X", n_values)
    y = _validate.labels(y, "y", n_classes)
    return X, y, n_values, n_classes


#: Largest number of cells of a model (classes times the summed domain sizes);
#: the same cap as :data:`lib.bayesian_network.MAX_CELLS`.
MAX_CELLS = _validate.MAX_CELLS


def count(X, y, n_values, n_classes):
    """The sufficient statistics of eq. (10): class counts and attribute-class counts.

    Parameters
    ----------
    X : array_like of int, shape (n, K)
        Attribute codes, column :math:`k` in :math:`[0, n_k)`.
    y : array_like of int, shape (n,)
        Class codes in :math:`[0, d)`.
    n_values : array_like of int, shape (K,)
        The domain sizes :math:`n_k = |\\mathcal X_k| \\ge 2` (public).
    n_classes : int
        The number of classes :math:`d \\ge 2`.

    Returns
    -------
    class_counts : ndarray, shape (d,)
        :math:`N_j`, the number of rows of class :math:`j`.
    feature_counts : list of ndarray, shape (d, n_k)
        :math:`N^k_{jc}`, the number of rows of class :math:`j` with :math:`x_k = c`.
        One histogram of all :math:`n` rows per attribute, so that replacing one
        row moves at most two of its cells, by one each.

    Examples
    --------
    >>> N, Nk = count([[0, 1], [1, 1], [1, 0]], [0, 0, 1], n_values=[2, 3], n_classes=2)
    >>> N, Nk[1]
    (array([2., 1.]), array([[0., 2., 0.],
           [1., 0., 0.]]))
    """
    X, y, n_values, n_classes = _codes(X, y, n_values, n_classes)
    offsets = np.concatenate([[0], np.cumsum(n_values)])
    total = int(offsets[-1])
    # One bincount for all attributes: cell (class, offset_k + value) of a (d, D) table,
    # one chunk of rows at a time (integer counts: the sum over chunks is exact).
    table = np.zeros(n_classes * total, dtype=np.int64)
    for a, b in _chunks(X.shape[0], X.shape[1]):
        flat = (y[a:b, None] * total + offsets[:-1] + X[a:b]).ravel()
        table += np.bincount(flat, minlength=n_classes * total)
    table = table.reshape(n_classes, total).astype(float)
    class_counts = np.bincount(y, minlength=n_classes).astype(float)
    feature_counts = [table[:, offsets[k]:offsets[k + 1]] for k in range(len(n_values))]
    return class_counts, feature_counts


def model_spec(n_values, n_classes, n_total) -> ReleaseSpec:
    """The public shapes of a naive Bayes model's :math:`K + 1` releases.

    Release 0 is the class counts (one row of ``n_classes`` cells, a class
    prior), release :math:`k` the table of attribute :math:`k` (``n_classes``
    rows of ``n_values[k]`` cells).

    Examples
    --------
    >>> model_spec([2, 3], 2, 100).shapes
    ((1, 2), (2, 2), (2, 3))
    """
    n_values, d = _domain(n_values, np.size(n_values), n_classes)
    n_total = _validate.integer(n_total, "n_total", 0)
    return ReleaseSpec(((1, int(d)),) + tuple((int(d), int(v)) for v in n_values), int(n_total), (0,))


def releases_of(mechanism, n_releases):
    """The per-release objects of a :class:`lib.protocol.ModelCalibration` or a sequence of objects."""
    if isinstance(mechanism, ModelCalibration):
        if not mechanism.attained:
            raise ValueError(f"the {mechanism.mechanism!r} calibration did not attain its target: "
                             f"{mechanism.parameters.get('reason', '')}")
        mechanism = mechanism.releases
    try:
        objects = tuple(mechanism)
    except TypeError:
        objects = None
    if objects is None or len(objects) != n_releases or not all(
            callable(getattr(m, "release", None)) for m in objects):
        raise ValueError(
            f"mechanism must be a ModelCalibration or a sequence of {n_releases} objects with a "
            f"release(counts, rng) method, one per release in release order; got {mechanism!r}")
    return objects


def log_releases(objects, tables, n_draws, rng):
    """``n_draws`` independent releases of every table by its object, as log-probabilities.

    Release :math:`i` draws from ``rng`` after release :math:`i - 1` (the order
    fixes the random stream). Each object's ``log_release`` is used where it
    has one (exact logs of a non-private estimate), else the log of ``release``.
    Every output must be a finite log-distribution of the table's shape.
    The tables must be validated finite non-negative float arrays (the callers,
    :func:`release_parameters` and :func:`lib.bayesian_network.release_tables`,
    check them). When every object is an unmodified Dirichlet or noise
    mechanism, the tables are released together (:func:`_batched_logs`): the
    same draws from the same stream and the same arithmetic, bit for bit.
    """
    batched = _batched_logs(objects, tables, n_draws, rng)
    if batched is not None:
        return batched
    out = []
    for k, (mech, t) in enumerate(zip(objects, tables)):
        batch = np.broadcast_to(t, (n_draws,) + t.shape)
        if hasattr(mech, "log_release"):
            logs = np.asarray(mech.log_release(batch, rng), dtype=float)
        else:
            logs = np.log(np.asarray(mech.release(batch, rng), dtype=float))
        if logs.shape != batch.shape:
            raise ValueError(f"mechanism {k} returned shape {logs.shape}; expected {batch.shape}")
        if not np.isfinite(logs).all():
            raise ValueError(f"mechanism {k} returned a probability that is zero or not finite")
        out.append(logs)
    return out


def _stock(objects, base, methods):
    """Whether every object is a ``base`` whose class keeps ``base``'s ``methods``, without ``log_release``."""
    return (all(issubclass(cls, base) and not hasattr(cls, "log_release")
                and all(getattr(cls, name) is getattr(base, name) for name in methods)
                for cls in {type(m) for m in objects})
            and not any("log_release" in getattr(m, "__dict__", ()) for m in objects))


def _batched_logs(objects, tables, n_draws, rng):
    """:func:`log_releases` of stock Dirichlet or noise mechanisms in a few array operations, else None.

    The mechanism class releases all tables into one buffer
    (:meth:`lib.DirichletMechanism._release_tables`,
    :meth:`lib.baselines._NoiseMechanism._release_tables`: the draws and the
    arithmetic of its ``release``, bit for bit); the logs are taken and
    checked together. None (nothing
    drawn) where the objects are of other or mixed kinds, a table has fewer
    than two columns, or a Dirichlet batch needs the rare paths of ``release``
    (shape parameters below 1 or overflowing): the caller then releases table
    by table.
    """
    if not objects or not all(isinstance(t, np.ndarray) and t.ndim and t.shape[-1] >= 2 for t in tables):
        return None
    for base, methods in ((DirichletMechanism, ("release", "concentration")),
                          (_NoiseMechanism, ("release", "noisy_counts"))):
        if _stock(objects, base, methods):
            flat, views = _buffer(tables, n_draws)
            if not base._release_tables(objects, tables, views, flat, rng):
                return None
            break
    else:
        return None
    np.log(flat, out=flat)
    if not np.isfinite(flat).all():
        k = next(k for k, v in enumerate(views) if not np.isfinite(v).all())
        raise ValueError(f"mechanism {k} returned a probability that is zero or not finite")
    return views


def _buffer(tables, n_draws):
    """One float buffer for ``n_draws`` releases of every table, and its (n_draws, rows, d) views in order."""
    sizes = [n_draws * t.size for t in tables]
    flat = np.empty(sum(sizes))
    ends = np.cumsum(sizes).tolist()
    views = [flat[e - s:e].reshape((n_draws,) + t.shape) for s, e, t in zip(sizes, ends, tables)]
    return flat, views


def release_parameters(class_counts, feature_counts, mechanism, *, n_draws=1, rng=None):
    """Release the log-parameters of the model, ``n_draws`` independent times.

    ``mechanism`` holds one object per release (a
    :class:`lib.protocol.ModelCalibration`, e.g. from
    ``DirichletMechanism.calibrate_rdp(epsilon, lam, model_spec(...))``, or a
    sequence of :math:`K + 1` objects): the class counts first, then attribute
    :math:`k` with object :math:`k + 1`, each row of a table released as a
    distribution over the values of the attribute. The accounting of the whole
    model is the calibration's (:meth:`lib.protocol.Mechanism.calibrate_rdp`
    splits an RDP budget equally, :math:`\\varepsilon/(K+1)` per release,
    Proposition 7.1).

    Returns
    -------
    log_prior : ndarray, shape (n_draws, d)
    log_feature : list of ndarray, shape (n_draws, d, n_k)
        Natural logarithms of released probabilities; all finite.
    """
    objects = releases_of(mechanism, len(feature_counts) + 1)
    n_draws = _validate.integer(n_draws, "n_draws")
    rng = _validate.generator(rng)
    names = ["class_counts"] + [f"feature_counts[{k}]" for k in range(len(feature_counts))]
    counts = [_validate._as_float(t, name) for t, name in zip([class_counts, *feature_counts], names)]
    # one check of all the tables at once; table by table only to name the one that fails
    if not _nonnegative_finite(counts):
        for t, name in zip(counts, names):
            _validate.nonnegative(t, name)
    logs = log_releases(objects, counts, n_draws, rng)
    return logs[0], logs[1:]


def _nonnegative_finite(arrays):
    """Whether every entry of the float arrays is finite and non-negative (two reductions in all)."""
    flat = np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.empty(0)
    return not flat.size or bool(flat.min() >= 0 and np.isfinite(flat.max()))


class PrivateNaiveBayes:
    """Categorical naive Bayes whose parameters are released by a mechanism.

    Parameters
    ----------
    mechanism : str or lib.protocol.Mechanism subclass, default "dirichlet"
        The mechanism class (or its registry name, :func:`lib.protocol.names`)
        that releases the :math:`K + 1` tables (see :func:`release_parameters`).
    epsilon : float, optional
        Total RDP level :math:`\\varepsilon` of the whole model (required by the
        private mechanisms); :meth:`lib.protocol.Mechanism.calibrate_rdp` gives
        each of the :math:`K+1` releases :math:`\\varepsilon/(K+1)`.
    lam : float, default 5.0
        Renyi order :math:`\\lambda` (Section 5.1 uses 5).
    random_state : int, numpy.random.Generator or None
        Source of the mechanism's noise. Consumed by :meth:`fit`: the release
        draws from it once and ``random_state`` is then set to None, so that a
        fitted model (in memory or pickled) holds no seed and no generator from
        which its noise could be replayed (see Notes). A generator passed here
        stays the caller's, and so does the duty to keep it secret.

    Attributes
    ----------
    calibration_ : lib.protocol.ModelCalibration
        The per-release mechanisms and the guarantee they meet (public: a
        function of ``epsilon``, ``lam``, the domain and the number of rows).
    n_values_ : ndarray of int, shape (K,)
        The public domain sizes.
    n_classes_ : int
        The public number of classes.
    classes_ : ndarray, shape (d,)
    class_log_prior_ : ndarray, shape (d,)
        Log of the released class prior.
    feature_log_prob_ : list of ndarray, shape (d, n_k)
        Log of the released :math:`\\theta^k_{jc}`; row :math:`j` is a distribution
        over the values of attribute :math:`k`.

    Notes
    -----
    A fitted model stores only what was released (the two attributes above
    ending in ``log_prior_`` and ``log_prob_``), the public domain and the
    calibration: no exact count and no generator state survive :meth:`fit`.
    Either would undo the guarantee. The exact counts are the data's
    sufficient statistics, and with the generator (or its seed) rewound, the
    release can be replayed from each candidate data set, and only the true one
    reproduces it bit for bit.

    Released log-probabilities are finite. The Gaussian and Laplace outputs are
    clipped at a positive floor (:func:`lib.baselines.clip_and_normalise`). A
    Dirichlet draw is a vector of independent Gamma variables divided by their sum,
    with every shape parameter at least :math:`\\alpha \\ge 1`; such a variable is
    below :math:`t` with probability at most :math:`t`, so a probability that
    underflows double precision has chance below :math:`10^{-300}`. The release
    raises rather than return :math:`-\\infty`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, 1], [1, 0], [0, 0]]); y = np.array([0, 0, 1, 1])
    >>> model = PrivateNaiveBayes("dirichlet", epsilon=1.0, random_state=0)
    >>> model.fit(X, y, n_values=[2, 2], n_classes=2).predict_proba(X).shape
    (4, 2)
    """

    def __init__(self, mechanism="dirichlet", epsilon=None, lam=5.0, random_state=None):
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.lam = lam
        self.random_state = random_state

    def __repr__(self) -> str:
        name = getattr(self.mechanism, "name", self.mechanism)
        return f"PrivateNaiveBayes(mechanism={name!r}, epsilon={self.epsilon!r}, lam={self.lam!r})"

    def fit(self, X, y, n_values=None, n_classes=None, *, schema=None):
        """Count, then release the parameters once.

        Parameters
        ----------
        X : array_like of int, shape (n, K)
        y : array_like of int, shape (n,)
        n_values : array_like of int, shape (K,), optional
            The public domain sizes. Required for a private mechanism (or give
            ``schema``): a domain read off ``X`` would make the shape of the
            release reveal a private maximum. Only the non-private estimate
            (``cls.private`` false) may infer ``X.max(axis=0) + 1``.
        n_classes : int, optional
            The public number of classes; required like ``n_values`` (inferred
            as ``y.max() + 1`` only for the non-private estimate).
        schema : object with ``n_values`` and ``n_classes``, optional
            A public schema (e.g. :class:`lib.experiments.preprocessing.Split`
            built by ``binning="public"``) that supplies both; an explicit
            ``n_values`` or ``n_classes`` must agree with it.

        Raises
        ------
        ValueError
            If a private mechanism is given no domain, or ``schema`` disagrees
            with an explicit domain.
        """
        cls = get(self.mechanism)
        X_arr, y_arr = np.asarray(X), np.asarray(y)
        if schema is not None:
            s_values = np.asarray(schema.n_values, dtype=np.int64)
            s_classes = int(schema.n_classes)
            if n_values is not None and not np.array_equal(np.asarray(n_values, dtype=np.int64), s_values):
                raise ValueError("n_values must agree with schema.n_values when both are given")
            if n_classes is not None and int(n_classes) != s_classes:
                raise ValueError(f"n_classes must agree with schema.n_classes = {s_classes}; got {n_classes!r}")
            n_values, n_classes = s_values, s_classes
        # Checked after the arguments are validated and before anything is released.
        missing = " and ".join(n for n, v in (("n_values", n_values), ("n_classes", n_classes)) if v is None)
        if n_values is None and X_arr.ndim == 2 and np.issubdtype(X_arr.dtype, np.integer) and X_arr.size:
            if X_arr.min() < 0:
                raise ValueError(f"X must hold codes in [0, inf) to infer n_values; got {int(X_arr.min())}")
            n_values = np.maximum(X_arr.max(axis=0) + 1, 2)
            # an inferred domain is refused before anything is allocated for it
            _validate.cells(sum(int(v) for v in n_values),
                            f"the domain inferred from X (largest code {int(X_arr.max())})", MAX_CELLS,
                            "; check X or pass the public domain as n_values")
        elif n_values is None:
            n_values = X_arr.shape[1:]
        if n_classes is None and y_arr.ndim == 1 and np.issubdtype(y_arr.dtype, np.integer) and y_arr.size:
            present = np.unique(y_arr)
            if present[0] < 0 or present[-1] >= MAX_CELLS:
                raise ValueError(f"y must hold class codes in [0, {MAX_CELLS - 1}] to infer n_classes; got "
                                 f"{int(present[0] if present[0] < 0 else present[-1])}")
            n_classes = int(max(present[-1] + 1, 2))
            if present.size != present[-1] + 1:
                missing = np.setdiff1d(np.arange(present[-1] + 1), present)
                raise ValueError(
                    f"y must hold the class codes 0..K-1 when n_classes is inferred; classes "
                    f"{missing[:10].tolist()} are absent, which would make empty classes (relabel y, "
                    "or pass n_classes to declare a public domain with empty classes)")
        elif n_classes is None:
            n_classes = 2
        _validate.generator(self.random_state)   # a bad random_state is refused before anything else
        # the exact counts stay local to fit: they are never stored (see the class Notes)
        class_counts, feature_counts = count(X, y, n_values, n_classes)
        n_values = np.asarray(n_values, dtype=np.int64)
        spec = model_spec(n_values, int(n_classes), len(y_arr))
        if cls.private and self.epsilon is None:
            raise ValueError(f"epsilon is required for the {cls.name!r} mechanism")
        calibration = cls.calibrate_rdp(self.epsilon if cls.private else 1.0, self.lam, spec)
        if cls.private and missing:
            raise ValueError(
                f"{missing} must be given (or a public schema) for the private {cls.name!r} mechanism: "
                "a domain inferred from the training data is a function of the private data and "
                "is not covered by the mechanism's guarantee")
        # the seed or generator is consumed here: the fitted model keeps no generator state
        rng, self.random_state = _validate.generator(self.random_state), None
        prior, tables = release_parameters(class_counts, feature_counts, calibration, n_draws=1, rng=rng)
        self.calibration_ = calibration
        self.n_values_ = n_values
        self.n_classes_ = int(n_classes)
        self.classes_ = np.arange(self.n_classes_)
        self.class_log_prior_ = prior[0]
        self.feature_log_prob_ = [t[0] for t in tables]
        return self

    def _check_X(self, X):
        if not hasattr(self, "class_log_prior_"):
            raise ValueError("this PrivateNaiveBayes is not fitted yet; call fit first")
        return _validate.codes(X, "X", self.n_values_)

    def predict_log_proba(self, X):
        """Log posterior class probabilities, shape (n, d)."""
        X = self._check_X(X)
        return log_proba(X, self.class_log_prior_[None], [t[None] for t in self.feature_log_prob_],
                         self.n_values_)[0]

    def predict_proba(self, X):
        """Posterior class probabilities, shape (n, d)."""
        out = self.predict_log_proba(X)
        return np.exp(out, out=out)

    def predict(self, X, rng=None):
        """The most probable class, the first one on ties.

        Parameters
        ----------
        X : array_like of int, shape (n, K)
        rng : int, numpy.random.Generator or None
            Used only by a model whose mechanism releases uniform tables
            (``uninformative``, the "Random" model). Its posterior is uniform, so
            the tie rule would always answer 0. It guesses a class uniformly at
            random for every row instead, drawn from ``rng`` (None: fresh
            entropy; a seed makes the guesses reproducible). The fitted model keeps
            no generator, so the guesses come from the caller. Every other model
            predicts deterministically (the non-private ``"mle"`` included).

        Returns
        -------
        ndarray of int, shape (n,)
        """
        X = self._check_X(X)
        uninformative = getattr(get(self.mechanism), "uninformative", False)
        if rng is not None or uninformative:   # a bad rng is refused whatever the model
            rng = _validate.generator(rng)
        if uninformative:
            return rng.integers(self.n_classes_, size=X.shape[0])
        # the unnormalised scores order the classes as the posterior does; one chunk at a time
        X, prior, weights, n_values = _model(X, self.class_log_prior_[None],
                                             [t[None] for t in self.feature_log_prob_], self.n_values_)
        out = np.empty(X.shape[0], dtype=np.int64)
        for a, b in _chunks(X.shape[0], prior.size):
            out[a:b] = np.argmax(_joint(X[a:b], prior, weights, n_values)[:, 0], axis=-1)
        return out
