"""Categorical naive Bayes with privately released parameters (Section 5.1).

The model of eq. (10): a class prior :math:`\\pi_j = \\Pr[y = j]` and, for every
attribute :math:`k` and class :math:`j`, a distribution
:math:`\\theta^k_{j\\cdot} = \\Pr[x_k = \\cdot \\mid y = j]` over the values of that
attribute, so that

.. math::
    \\Pr[y = j \\mid x_1, \\dots, x_K] \\propto \\pi_j \\prod_{k=1}^K \\theta^k_{j x_k}.

A mechanism releases :math:`\\pi` from the class counts :math:`N_j` and each row
:math:`\\theta^k_{j\\cdot}` from the counts :math:`N^k_{jc}`, :math:`c \\in \\mathcal X_k`
(one release per attribute, all class rows at once). The privacy target of the
whole model is met by the mechanism class's calibration
(:meth:`lib.mechanisms.protocol.Mechanism.calibrate`), which splits a Renyi DP
budget by :meth:`lib.privacy.guarantees.Guarantee.split`, the one budget split
of the book: :math:`\\varepsilon/(K+1)` per release (Proposition 7.1).

Everything is vectorised over a batch of independent releases (``n_draws``), so
that an experiment draws all its repetitions at once. Scoring the released
models (:func:`log_proba`, :func:`scores`, :func:`cross_entropy`,
:func:`accuracy`) is in :mod:`lib.models.naive_bayes.scoring`; those four functions are
importable from here too.
"""

from __future__ import annotations

import numpy as np

from lib import validation
# Scoring lives in lib.models.naive_bayes.scoring; its public functions stay importable from here.
from lib.models.naive_bayes.scoring import (_chunks, _class_scores, _joint, _model, _one_log_proba, _one_model,  # noqa: F401
                                  accuracy, cross_entropy, log_proba, scores)
from lib.mechanisms.protocol import ModelCalibration, NotPrivate, ReleaseSpec, get, release_class
from lib.models.estimator import ClassifierProtocol, not_fitted


def _domain(n_values, n_columns, n_classes):
    """Validate public domain sizes and the number of classes; refuse absurd model sizes."""
    n_values = np.asarray(n_values)
    if (n_values.shape != (n_columns,) or not np.issubdtype(n_values.dtype, np.integer)
            or np.any(n_values < 2)):
        raise ValueError(
            f"n_values must hold one integer in [2, inf) per column of X ({n_columns}); got {n_values!r}"
        )
    n_classes = validation.integer(n_classes, "n_classes", 2)
    # exact Python integers: a sum of huge int64 values must not wrap around
    validation.cells(n_classes * sum(int(v) for v in n_values),
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
    X = validation.codes(X, "X", n_values)
    y = validation.labels(y, "y", n_classes)
    return X, y, n_values, n_classes


#: Largest number of cells of a model (classes times the summed domain sizes);
#: the same cap as :data:`lib.models.bayesian_network.MAX_CELLS`.
MAX_CELLS = validation.MAX_CELLS


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
    n_total = validation.integer(n_total, "n_total", 0)
    return ReleaseSpec(((1, int(d)),) + tuple((int(d), int(v)) for v in n_values), int(n_total), (0,))


def releases_of(mechanism, n_releases):
    """The per-release objects of a :class:`lib.mechanisms.protocol.ModelCalibration` or a sequence of objects."""
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
    fixes the random stream). The objects' closest common class releases them
    (:meth:`lib.mechanisms.protocol.Mechanism.log_release_tables`: table by table
    by default, all tables in one buffer for the Dirichlet and noise
    mechanisms, with the same draws and arithmetic, bit for bit). Every output
    must be a finite log-distribution of the table's shape. The tables must be
    validated finite non-negative float arrays (the callers,
    :func:`release_parameters` and :func:`lib.models.bayesian_network.release_tables`,
    check them).
    """
    return release_class(objects).log_release_tables(objects, tables, n_draws, rng)


def release_parameters(class_counts, feature_counts, mechanism, *, n_draws=1, rng=None):
    """Release the log-parameters of the model, ``n_draws`` independent times.

    ``mechanism`` holds one object per release (a
    :class:`lib.mechanisms.protocol.ModelCalibration`, e.g. from
    ``DirichletMechanism.calibrate(RenyiDP(lam, epsilon), model_spec(...))``, or a
    sequence of :math:`K + 1` objects): the class counts first, then attribute
    :math:`k` with object :math:`k + 1`, each row of a table released as a
    distribution over the values of the attribute. The accounting of the whole
    model is the calibration's (:meth:`lib.mechanisms.protocol.Mechanism.calibrate`
    splits an RDP budget equally by :meth:`lib.privacy.guarantees.Guarantee.split`,
    :math:`\\varepsilon/(K+1)` per release, Proposition 7.1).

    Returns
    -------
    log_prior : ndarray, shape (n_draws, d)
    log_feature : list of ndarray, shape (n_draws, d, n_k)
        Natural logarithms of released probabilities; all finite.
    """
    objects = releases_of(mechanism, len(feature_counts) + 1)
    n_draws = validation.integer(n_draws, "n_draws")
    rng = validation.generator(rng)
    names = ["class_counts"] + [f"feature_counts[{k}]" for k in range(len(feature_counts))]
    counts = [validation._as_float(t, name) for t, name in zip([class_counts, *feature_counts], names)]
    # one check of all the tables at once; table by table only to name the one that fails
    if not _nonnegative_finite(counts):
        for t, name in zip(counts, names):
            validation.nonnegative(t, name)
    logs = log_releases(objects, counts, n_draws, rng)
    return logs[0], logs[1:]


def _nonnegative_finite(arrays):
    """Whether every entry of the float arrays is finite and non-negative (two reductions in all)."""
    flat = np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.empty(0)
    return not flat.size or bool(flat.min() >= 0 and np.isfinite(flat.max()))


def _category_list(values, name):
    """One public list of labels: 1-D, at least two, distinct."""
    try:
        arr = np.asarray(values)
        if arr.dtype.kind == "O" or arr.ndim != 1:
            arr = np.array(list(values), dtype=object)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of labels; got {type(values).__name__}") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must list at least 2 labels; got {np.asarray(values, dtype=object).tolist()!r:.80}")
    if len(set(arr.tolist())) != arr.size:
        raise ValueError(f"{name} must list distinct labels; got {arr.tolist()!r:.80}")
    return arr


def _categories(categories, name):
    """The public categories of every column: a list of label lists (see :func:`_category_list`)."""
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__"):
        raise ValueError(f"{name} must be a list with one list of labels per column; got {categories!r:.60}")
    return [_category_list(c, f"{name}[{j}]") for j, c in enumerate(categories)]


def _lookup(arr, categories, name="X"):
    """Integer codes of the labels in ``arr`` (2-D, one column per entry of ``categories``).

    A label not among its column's categories is a ValueError naming the column,
    the label and the first row holding it (never a silent code).
    """
    arr = np.asarray(arr)
    if arr.ndim != 2 or arr.shape[1] != len(categories):
        raise ValueError(f"{name} must be a 2-D array with {len(categories)} columns (one per entry of the "
                         f"categories); got shape {arr.shape}")
    out = np.empty(arr.shape, dtype=np.int64)
    for j, cats in enumerate(categories):
        index = {v: i for i, v in enumerate(cats.tolist())}
        column = arr[:, j]
        if column.dtype.kind in "iub":   # numbers: look up the distinct values only
            values, inverse = np.unique(column, return_inverse=True)
            codes = np.array([index.get(v, -1) for v in values.tolist()], dtype=np.int64)[np.ravel(inverse)]
        else:   # labels (strings, objects): one hash look-up per row, no sort
            codes = np.fromiter((index.get(v, -1) for v in column.tolist()), dtype=np.int64, count=column.size)
        if np.any(codes < 0):
            row = int(np.argmax(codes < 0))
            bad = column[row].item() if hasattr(column[row], "item") else column[row]
            where = f"column {j}" if name == "X" else name
            raise ValueError(f"{name} holds {bad!r} in {where} (row {row}), which is not among the public "
                             f"{'categories' if name == 'X' else 'classes'} {cats.tolist()!r:.120}")
        out[:, j] = codes
    return out


class PrivateNaiveBayes(ClassifierProtocol):
    """Categorical naive Bayes whose parameters are released by a mechanism.

    Giving the domain in ``__init__`` lets scikit-learn's ``clone``,
    ``Pipeline``, ``cross_val_score`` and ``GridSearchCV`` fit the model
    without extra arguments. A private mechanism refuses to read its domain off
    the data; only the non-private ``"mle"`` (and other ``private = False``
    classes) infer it, as scikit-learn's estimators do.

    Parameters
    ----------
    mechanism : str or lib.mechanisms.protocol.Mechanism subclass, default "dirichlet"
        The mechanism class (or its registry name, :func:`lib.mechanisms.protocol.names`)
        that releases the :math:`K + 1` tables (see :func:`release_parameters`).
    privacy : Guarantee, optional
        What the whole model must meet, e.g. ``RenyiDP(5.0, 1.0)`` (Section 5.1
        uses the order 5) or ``ApproximateDP(1.0, 1e-5)``; required by the
        private mechanisms, which refuse a type of target they do not meet.
        Default for a non-private mechanism: :class:`lib.privacy.guarantees.NotPrivate`.
        :meth:`lib.mechanisms.protocol.Mechanism.calibrate` meets it; a Renyi DP
        target gives each of the :math:`K+1` releases :math:`\\varepsilon/(K+1)`.
    random_state : int, numpy.random.Generator, SeedSequence, BitGenerator or None
        Source of the mechanism's noise, as ``numpy.random.default_rng`` takes
        it. :meth:`fit` builds its generator from it and never changes it
        (scikit-learn's convention): an integer seed gives the same release on
        every fit and every ``clone``, None fresh entropy on each fit. **A seed
        is a secret, like a key**: whoever holds it (and the model) can replay
        the noise from each candidate data set and tell the true one. So a
        fitted model that is pickled, dumped or deep-copied carries
        ``random_state=None`` (see ``__getstate__``), and ``repr`` never shows
        it. For a model you publish use None, or a seed you keep secret and
        never reuse: fits on overlapping data with one seed (cross-validation
        folds, a grid search) share their noise, so their releases do not
        compose as independent ones.
    n_values : array_like of int, shape (K,), optional
        The public domain sizes of integer-coded columns (may also be given to
        :meth:`fit`).
    n_classes : int, optional
        The public number of classes of integer class codes ``0..d-1``.
    categories : list of K sequences, optional
        The public values of each column (strings, numbers, anything hashable).
        With it, ``X`` may hold labels (a DataFrame of strings, say); a value
        outside its column's categories is a ValueError. Implies ``n_values``.
    classes : sequence, optional
        The public class labels; ``y`` holds them and :meth:`predict` returns
        them (``classes_``). Implies ``n_classes``.

    Attributes
    ----------
    calibration_ : lib.mechanisms.protocol.ModelCalibration
        The per-release mechanisms and the guarantee they meet (public: a
        function of ``privacy``, the domain and the number of rows).
    guarantee_ : Guarantee
        The guarantee of the whole release: the composition
        (:func:`lib.privacy.guarantees.compose`) of the :math:`K + 1` releases'
        guarantees, or the statement their calibration proves jointly.
    n_values_ : ndarray of int, shape (K,)
        The public domain sizes.
    n_classes_ : int
        The public number of classes.
    classes_ : ndarray, shape (d,)
        The class labels (``classes``, or the codes ``0..d-1``).
    categories_ : list of ndarray
        The public values of each column, when labels were encoded.
    n_features_in_ : int
        The number of columns of ``X`` (K).
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
    clipped at a positive floor (:func:`lib.mechanisms.noise.clip_and_normalise`). A
    Dirichlet draw is a vector of independent Gamma variables divided by their sum,
    with every shape parameter at least :math:`\\alpha \\ge 1`; such a variable is
    below :math:`t` with probability at most :math:`t`, so a probability that
    underflows double precision has chance below :math:`10^{-300}`. The release
    raises rather than return :math:`-\\infty`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, 1], [1, 0], [0, 0]]); y = np.array([0, 0, 1, 1])
    >>> from lib.privacy.guarantees import RenyiDP
    >>> model = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=0)
    >>> model.fit(X, y, n_values=[2, 2], n_classes=2).predict_proba(X).shape
    (4, 2)
    >>> model.guarantee_
    RenyiDP(lam=5.0, epsilon=1.0)
    """

    def __init__(self, mechanism="dirichlet", privacy=None, random_state=None, *,
                 n_values=None, n_classes=None, categories=None, classes=None):
        self.mechanism = mechanism
        self.privacy = privacy
        self.random_state = random_state
        self.n_values = n_values
        self.n_classes = n_classes
        self.categories = categories
        self.classes = classes

    def __repr__(self) -> str:
        name = getattr(self.mechanism, "name", self.mechanism)
        return f"PrivateNaiveBayes(mechanism={name!r}, privacy={self.privacy!r})"

    #: scikit-learn's checks that the non-private model fails by design (``check_estimator(model,
    #: expected_failed_checks=model._expected_failed_checks())``); every other check passes.
    _EXPECTED_FAILED_CHECKS = {
        "check_estimators_dtypes": "X holds category codes: float input is refused (is 2.0 a code or a "
                                   "measurement?) rather than rounded; give integer codes or categories",
        "check_estimators_nan_inf": "float input (and so NaN/inf) is refused as not a code, with a "
                                    "message that names the dtype rather than NaN",
        "check_dtype_object": "object columns of whole numbers are codes (that part passes); an object "
                              "column holding a dict is refused by a ValueError naming the column "
                              "instead of the TypeError the check expects",
        "check_supervised_y_2d": "y of shape (n, 1) is refused, not ravelled with a warning: a label "
                                 "column of the wrong shape is a usage error in a private release",
    }

    def _tags(self, tags):
        # integer codes of categories (scikit-learn's checks then feed whole, non-negative numbers)
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        tags.input_tags.string = self.categories is not None
        # a private release without a seed is a fresh draw on every fit
        try:
            private = bool(getattr(get(self.mechanism), "private", True))
        except (TypeError, ValueError):   # an unknown mechanism: fit says so; tags stay conservative
            private = True
        tags.non_deterministic = private and self.random_state is None
        return tags

    def __getstate__(self):
        # A fitted model handed on (pickle, joblib.dump, copy.deepcopy) carries no seed and no generator:
        # with either, the release could be replayed from each candidate data set (see the class Notes).
        state = dict(self.__dict__)
        if "class_log_prior_" in state:
            state["random_state"] = None
        return state

    # ------------------------------------------------------------------ the public domain

    def _declared(self, n_values, n_classes, schema):
        """The public domain from every place it may be given; all that are given must agree."""
        sources_v, sources_c = [], []
        if schema is not None:
            sources_v.append(("schema.n_values", schema.n_values))
            sources_c.append(("schema.n_classes", schema.n_classes))
        for label, value, into in (("n_values", n_values, sources_v), ("n_classes", n_classes, sources_c),
                                   ("the parameter n_values", self.n_values, sources_v),
                                   ("the parameter n_classes", self.n_classes, sources_c)):
            if value is not None:
                into.append((label, value))
        if self.categories is not None:
            cats = _categories(self.categories, "categories")
            sources_v.append(("the lengths of categories", [len(c) for c in cats]))
        if self.classes is not None:
            sources_c.append(("the length of classes", len(_category_list(self.classes, "classes"))))
        out = []
        for sources, what in ((sources_v, "n_values"), (sources_c, "n_classes")):
            if not sources:
                out.append(None)
                continue
            first_label, first = sources[0]
            for label, value in sources[1:]:
                same = (np.array_equal(np.asarray(value, dtype=np.int64), np.asarray(first, dtype=np.int64))
                        if what == "n_values" else int(value) == int(first))
                if not same:
                    raise ValueError(f"{label} must agree with {first_label} when both are given; got "
                                     f"{np.asarray(value).tolist()} and {np.asarray(first).tolist()}")
            out.append(np.asarray(first, dtype=np.int64) if what == "n_values" else first)
        return out

    def _encode_X(self, X, *, fitting, private=True, n_values=None):
        """Codes of ``X``: looked up in the public categories, or integer codes as given."""
        if fitting and hasattr(X, "columns"):
            names = np.asarray(X.columns, dtype=object)
            if all(isinstance(c, str) for c in names):
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        if hasattr(X, "tocsr") or type(X).__module__.startswith("scipy.sparse"):
            raise TypeError("sparse input is not supported: X must be a dense 2-D array of codes or labels")
        arr = np.asarray(X)
        if arr.dtype.kind == "c":
            raise ValueError(f"Complex data not supported: X must hold codes or labels; got {arr.dtype}")
        if arr.ndim == 1:
            raise ValueError(f"X must be a 2-D array (rows x columns); got shape {arr.shape}. Reshape your "
                             "data with X.reshape(-1, 1) for one column, or X.reshape(1, -1) for one row")
        if arr.ndim == 2 and arr.shape[1] == 0:
            raise ValueError(f"X must be a 2-D array with at least one column: 0 feature(s) "
                             f"(shape={arr.shape}) while a minimum of 1 is required.")
        if arr.dtype.kind == "O" and arr.size and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in arr.flat):
            arr = arr.astype(np.int64)   # an object array of whole numbers is integer codes
        cats = self.categories_ if not fitting and hasattr(self, "categories_") else None
        if fitting:
            if self.categories is not None:
                cats = _categories(self.categories, "categories")
            elif arr.dtype.kind in "OUS" and arr.ndim == 2:
                if private or n_values is not None:
                    raise ValueError(
                        "X holds labels, not integer codes: give the public categories "
                        "(PrivateNaiveBayes(..., categories=[values of column 0, ...])); a private "
                        "model does not read its domain off the data")
                cats = []
                for j in range(arr.shape[1]):   # the non-private estimate may infer them
                    try:
                        cats.append(np.unique(arr[:, j]))
                    except TypeError:
                        raise ValueError(f"X column {j} mixes values that cannot be sorted; give categories") from None
            if cats is not None:
                self.categories_ = cats
            elif hasattr(self, "categories_"):
                del self.categories_
        if cats is None:
            return arr
        return _lookup(arr, cats)

    # ------------------------------------------------------------------ fit

    def fit(self, X, y, n_values=None, n_classes=None, *, schema=None):
        """Count, then release the parameters once.

        Parameters
        ----------
        X : array_like, shape (n, K)
            Integer codes (column :math:`k` in :math:`[0, n_k)`), or any labels
            (strings, a pandas DataFrame) when the public ``categories`` are given.
        y : array_like, shape (n,)
            Integer class codes in :math:`[0, d)`, or labels listed in ``classes``.
        n_values : array_like of int, shape (K,), optional
            The public domain sizes (also accepted as an ``__init__`` parameter,
            or through ``categories`` or ``schema``). Required for a private
            mechanism: a domain read off ``X`` would make the shape of the
            release reveal a private maximum. Only the non-private estimate
            (``cls.private`` false) may infer ``X.max(axis=0) + 1`` (or the
            categories from label columns).
        n_classes : int, optional
            The public number of classes; required like ``n_values`` (inferred,
            as the sorted distinct labels of ``y``, only for the non-private estimate).
        schema : object with ``n_values`` and ``n_classes``, optional
            A public schema (e.g. :class:`lib.experiments.preprocessing.Split`
            built by ``binning="public"``) that supplies both.

        Every domain that is given (here, in ``__init__`` or by ``schema``)
        must agree with the others.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If a private mechanism is given no domain, or two given domains disagree.
        """
        cls = get(self.mechanism)
        n_values, n_classes = self._declared(n_values, n_classes, schema)
        if y is None:
            raise ValueError("PrivateNaiveBayes requires y to be passed, but the target y is None")
        X_arr = self._encode_X(X, fitting=True, private=cls.private, n_values=n_values)
        y_arr = np.asarray(y)
        if self.classes is not None:
            classes = _category_list(self.classes, "classes")
            if y_arr.ndim != 1:
                raise ValueError(f"y must be a 1-D array of labels; got shape {y_arr.shape}")
            y_arr = _lookup(y_arr[:, None], [classes], "y")[:, 0]
        elif n_classes is None and not cls.private and y_arr.ndim == 1 and y_arr.size:
            # the non-private estimate may take its classes from the data, as scikit-learn's do
            if y_arr.dtype.kind in "fc" and not np.array_equal(y_arr, np.round(y_arr)):
                raise ValueError("Unknown label type: continuous y (non-whole numbers); a classifier needs "
                                 "class labels")
            try:
                classes, y_arr = np.unique(y_arr, return_inverse=True)
            except TypeError:
                raise ValueError("y mixes labels that cannot be sorted; give classes") from None
            if classes.size < 2:
                raise ValueError(f"y must hold at least 2 classes to fit a classifier; got 1 class, "
                                 f"{classes.tolist()}")
            n_classes = classes.size
        else:
            classes = None
        if y_arr.ndim == 1 and y_arr.dtype.kind in "OUSb" and classes is None:
            raise ValueError("y holds labels, not integer class codes: give the public classes "
                             "(PrivateNaiveBayes(..., classes=[...]))")
        missing = " and ".join(n for n, v in (("n_values", n_values), ("n_classes", n_classes)) if v is None)
        if n_values is None and X_arr.ndim == 2 and np.issubdtype(X_arr.dtype, np.integer) and X_arr.size:
            if X_arr.min() < 0:
                raise ValueError(f"Negative values in data: X must hold codes in [0, inf) to infer n_values; "
                                 f"got {int(X_arr.min())}")
            n_values = np.maximum(X_arr.max(axis=0) + 1, 2)
            # an inferred domain is refused before anything is allocated for it
            validation.cells(sum(int(v) for v in n_values),
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
                absent = np.setdiff1d(np.arange(present[-1] + 1), present)
                raise ValueError(
                    f"y must hold the class codes 0..K-1 when n_classes is inferred; classes "
                    f"{absent[:10].tolist()} are absent, which would make empty classes (relabel y, "
                    "or pass n_classes to declare a public domain with empty classes)")
        elif n_classes is None:
            n_classes = 2
        validation.generator(self.random_state)   # a bad random_state is refused before anything else
        # the exact counts stay local to fit: they are never stored (see the class Notes)
        class_counts, feature_counts = count(X_arr, y_arr, n_values, n_classes)
        calibration = self._calibrate(cls, n_values, n_classes, len(y_arr))
        if cls.private and missing:
            raise ValueError(
                f"{missing} must be given (or a public schema) for the private {cls.name!r} mechanism: "
                "a domain inferred from the training data is a function of the private data and "
                "is not covered by the mechanism's guarantee")
        self._release(calibration, class_counts, feature_counts, n_values, n_classes, classes)
        self.n_features_in_ = int(X_arr.shape[1])
        return self

    def fit_counts(self, class_counts, feature_counts):
        """Release the model from its sufficient statistics, counted elsewhere (a database, Spark, ...).

        The counts are what :func:`count` returns for the training data: the rows
        per class, and per attribute :math:`k` the table :math:`N^k_{jc}` of rows
        of class :math:`j` with value :math:`c`, over the *whole public domain*
        (a cell no row reaches is 0, not missing). :mod:`lib.models.counts` builds them
        from the result of one SQL ``GROUP BY`` and shows the query. The release,
        its guarantee and the fitted attributes are exactly those of :meth:`fit`
        on the rows (the same seed gives the same model).

        The domain must be declared in ``__init__`` (``n_values``/``categories``
        and ``n_classes``/``classes``) for a private mechanism; the shapes of the
        tables are checked against it. Each table's rows must sum to the class
        counts (every row has a value for every attribute).

        Returns
        -------
        self
        """
        cls = get(self.mechanism)
        n_values, n_classes = self._declared(None, None, None)
        names = ["class_counts"] + [f"feature_counts[{k}]" for k in range(len(feature_counts))]
        tables = [validation.nonnegative(validation._as_float(t, name), name)
                  for t, name in zip([class_counts, *feature_counts], names)]
        class_counts, feature_counts = tables[0], tables[1:]
        if not feature_counts or class_counts.ndim != 1 or any(t.ndim != 2 for t in feature_counts):
            raise ValueError("class_counts must be 1-D (one count per class) and feature_counts a non-empty "
                             "list of 2-D tables (classes x values)")
        if cls.private and (n_values is None or n_classes is None):
            raise ValueError(
                f"the public domain (n_values or categories, and n_classes or classes) must be given in "
                f"__init__ for the private {cls.name!r} mechanism: the shape of counted tables may show "
                "which values occur in the data")
        if n_classes is None:
            n_classes = class_counts.size
        if n_values is None:
            n_values = np.array([t.shape[1] for t in feature_counts], dtype=np.int64)
        shapes = [(int(n_classes), int(v)) for v in n_values]
        if class_counts.shape != (int(n_classes),) or [t.shape for t in feature_counts] != shapes:
            raise ValueError(f"the counts must have the shapes of the declared domain: class_counts "
                             f"({int(n_classes)},) and feature_counts {shapes}; got {class_counts.shape} and "
                             f"{[t.shape for t in feature_counts]}")
        if not all(np.array_equal(t, np.round(t)) for t in tables):
            raise ValueError("the counts must be whole numbers")
        for k, t in enumerate(feature_counts):
            if not np.array_equal(t.sum(axis=1), class_counts):
                raise ValueError(f"feature_counts[{k}] must sum over its values to class_counts (every row "
                                 f"has a value of attribute {k}); got row sums {t.sum(axis=1).tolist()} and "
                                 f"class counts {class_counts.tolist()}")
        validation.generator(self.random_state)
        classes = _category_list(self.classes, "classes") if self.classes is not None else None
        calibration = self._calibrate(cls, n_values, n_classes, int(class_counts.sum()))
        self._release(calibration, class_counts, feature_counts, n_values, n_classes, classes)
        if self.categories is not None:
            self.categories_ = _categories(self.categories, "categories")
        elif hasattr(self, "categories_"):
            del self.categories_
        self.n_features_in_ = len(feature_counts)
        return self

    def _calibrate(self, cls, n_values, n_classes, n_rows):
        spec = model_spec(np.asarray(n_values, dtype=np.int64), int(n_classes), n_rows)
        target = self.privacy
        if target is None:
            if cls.private:
                raise ValueError(f"privacy (a target such as RenyiDP(5.0, 1.0)) is required for the private "
                                 f"{cls.name!r} mechanism")
            target = NotPrivate()
        calibration = cls.calibrate(target, spec)
        if not calibration.attained:
            raise ValueError(f"the {cls.name!r} mechanism cannot meet {target!r} for this model: "
                             f"{calibration.parameters.get('reason', '')}")
        return calibration

    def _release(self, calibration, class_counts, feature_counts, n_values, n_classes, classes):
        n_values = np.asarray(n_values, dtype=np.int64)
        # A Generator built afresh from the seed: the parameter is not changed (scikit-learn's
        # convention), and nothing fitted refers to the generator (see the class Notes).
        rng = validation.generator(self.random_state)
        prior, tables = release_parameters(class_counts, feature_counts, calibration, n_draws=1, rng=rng)
        self.calibration_ = calibration
        self.guarantee_ = calibration.guarantee
        self.n_values_ = n_values
        self.n_classes_ = int(n_classes)
        self.classes_ = np.arange(self.n_classes_) if classes is None else np.asarray(classes)
        self.class_log_prior_ = prior[0]
        self.feature_log_prob_ = [t[0] for t in tables]

    def _check_X(self, X):
        if not hasattr(self, "class_log_prior_"):
            raise not_fitted("PrivateNaiveBayes")
        arr = self._encode_X(X, fitting=False)
        n_features = getattr(self, "n_features_in_", len(self.n_values_))
        if arr.ndim == 2 and arr.shape[1] != n_features:
            raise ValueError(f"X has {arr.shape[1]} features, but PrivateNaiveBayes is expecting "
                             f"{n_features} features as input (columns of X)")
        return validation.codes(arr, "X", self.n_values_)

    def predict_log_proba(self, X):
        """Log posterior class probabilities, shape (n, d)."""
        X = self._check_X(X)  # the codes validated once; log_proba's values, bit for bit (flat lookups)
        return _one_log_proba(X, self.class_log_prior_, self.feature_log_prob_, self.n_values_)

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
            rng = validation.generator(rng)
        if uninformative:
            return self.classes_[rng.integers(self.n_classes_, size=X.shape[0])]
        # the unnormalised scores order the classes as the posterior does (_joint's sums, bit for bit)
        prior, table = _one_model(self.class_log_prior_, self.feature_log_prob_)
        return self.classes_[np.argmax(_class_scores(X, prior, table, self.n_values_), axis=-1)]
