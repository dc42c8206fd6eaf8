"""The scikit-learn estimator of categorical naive Bayes with a privately released model.

:class:`PrivateNaiveBayes` counts (:func:`lib.models.naive_bayes.model.count`),
calibrates the mechanism to the declared public domain and releases the
model once (:func:`lib.models.naive_bayes.model.release_parameters`). It
follows scikit-learn's conventions without importing scikit-learn
(:class:`lib.models.estimator.ClassifierProtocol`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from lib import validation
from lib.mechanisms.protocol import NotPrivate, get
from lib.models.estimator import ClassifierProtocol, SharedBudget, not_fitted
from lib.models.naive_bayes.domain import (MAX_CELLS, as_codes, category_list, category_lists,
                                           check_codes, encode_labels, integer_sizes, whole_number)
from lib.models.naive_bayes.model import count, model_spec, nonnegative_counts, release_parameters
from lib.models.naive_bayes.scoring import class_scores, model_log_proba, stacked_model

__all__ = ["PrivateNaiveBayes"]


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
        every fit and every ``clone`` in this process, None fresh entropy on
        each fit. **A seed is a secret, like a key**: whoever holds it (and the
        model) can replay the noise from each candidate data set and tell the
        true one. So a private model that is pickled, dumped or deep-copied,
        fitted *or not*, carries ``random_state=None`` (see ``__getstate__``):
        the unfitted template of a pickled ``GridSearchCV`` or ``Pipeline``
        cannot replay the release of its ``best_estimator_`` either (the
        workers of ``n_jobs > 1`` with a process backend therefore draw fresh
        noise). ``repr`` never shows it. For a model you publish use None, or a
        seed you keep secret and never reuse: fits on overlapping data with one
        seed (cross-validation folds, a grid search) share their noise, so their
        releases do not compose as independent ones.
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
    budget : lib.models.estimator.SharedBudget, optional
        Charged with the guarantee of every release :meth:`fit` and
        :meth:`fit_counts` make, across ``clone`` (so across every fit of a
        ``GridSearchCV`` or ``cross_val_score``); its ``spent(delta)`` is the
        total of a model selection.

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
    feature_names_in_ : ndarray of str
        The column names of ``X`` at :meth:`fit`, when it had string names.
    class_log_prior_ : ndarray, shape (d,)
        Log of the released class prior.
    feature_log_prob_ : list of ndarray, shape (d, n_k)
        Log of the released :math:`\\theta^k_{jc}`; row :math:`j` is a distribution
        over the values of attribute :math:`k`.

    Notes
    -----
    A float ``X`` (scikit-learn's encoders output float64) is accepted when
    every entry is a whole number; a non-integral one is refused with a
    message naming the fix (an encoder, or :class:`PublicBins` for a numeric
    column with public bounds). ``X`` with column names (a DataFrame) must
    have the names seen by :meth:`fit`, in the same order, when predicting
    (scikit-learn's check of ``feature_names_in_``).

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

    def __init__(self, mechanism: Any = "dirichlet", privacy: Any = None, random_state: Any = None, *,
                 n_values: Any = None, n_classes: Any = None, categories: Any = None, classes: Any = None,
                 budget: SharedBudget | None = None) -> None:
        self.mechanism = mechanism
        self.privacy = privacy
        self.random_state = random_state
        self.n_values = n_values
        self.n_classes = n_classes
        self.categories = categories
        self.classes = classes
        self.budget = budget

    def __repr__(self) -> str:
        name = getattr(self.mechanism, "name", self.mechanism)
        return f"PrivateNaiveBayes(mechanism={name!r}, privacy={self.privacy!r})"

    #: scikit-learn's checks that the non-private model fails by design (``check_estimator(model,
    #: expected_failed_checks=model._expected_failed_checks())``); every other check passes.
    _EXPECTED_FAILED_CHECKS = {
        "check_estimators_nan_inf": "NaN/inf are refused as not codes, with a message that names the fix "
                                    "(an encoder) rather than the words scikit-learn looks for",
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

    def __getstate__(self) -> dict:
        # A private model handed on (pickle, joblib.dump, copy.deepcopy), fitted or an unfitted template
        # (GridSearchCV.estimator, a Pipeline's step), carries no seed and no generator: with either, the
        # release could be replayed from each candidate data set (see the class Notes). clone keeps it
        # (get_params), so a search in this process stays reproducible.
        state = dict(self.__dict__)
        try:
            private = bool(getattr(get(self.mechanism), "private", True))
        except (TypeError, ValueError):   # an unknown mechanism: treated as private
            private = True
        if private or "class_log_prior_" in state:
            state["random_state"] = None
        return state

    # ------------------------------------------------------------------ the public domain

    def _declared(self, n_values, n_classes, schema, X=None):
        """The public domain from every place it may be given; all that are given must agree.

        Sizes are validated as integers where they are given (never cast: ``2.7`` or ``'2'`` is
        refused). ``X`` may declare its columns' domain itself (``public_n_values``, the output of
        :class:`lib.models.naive_bayes.PublicBins`).
        """
        sources_v, sources_c = [], []
        if schema is not None:
            sources_v.append(("schema.n_values", schema.n_values))
            sources_c.append(("schema.n_classes", schema.n_classes))
        for label, value, into in (("n_values", n_values, sources_v), ("n_classes", n_classes, sources_c),
                                   ("the parameter n_values", self.n_values, sources_v),
                                   ("the parameter n_classes", self.n_classes, sources_c),
                                   ("the public_n_values of X", getattr(X, "public_n_values", None), sources_v)):
            if value is not None:
                into.append((label, value))
        if self.categories is not None:
            cats = category_lists(self.categories, "categories")
            sources_v.append(("the lengths of categories", [len(c) for c in cats]))
        if self.classes is not None:
            sources_c.append(("the length of classes", len(category_list(self.classes, "classes"))))
        sources_v = [(label, integer_sizes(value, label)) for label, value in sources_v]
        sources_c = [(label, whole_number(value, label)) for label, value in sources_c]
        out = []
        for sources, what in ((sources_v, "n_values"), (sources_c, "n_classes")):
            if not sources:
                out.append(None)
                continue
            first_label, first = sources[0]
            for label, value in sources[1:]:
                same = np.array_equal(value, first) if what == "n_values" else value == first
                if not same:
                    raise ValueError(f"{label} must agree with {first_label} when both are given; got "
                                     f"{np.asarray(value).tolist()} and {np.asarray(first).tolist()}")
            out.append(first)
        return out

    def _encode_X(self, X, *, fitting, private=True, n_values=None):
        """Codes of ``X``: looked up in the public categories, or integer codes as given."""
        if fitting and hasattr(X, "columns"):
            names = np.asarray(X.columns, dtype=object)
            if all(isinstance(c, str) for c in names):
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif fitting and hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if not fitting:
            self._check_feature_names(X)
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
                cats = category_lists(self.categories, "categories")
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
            return as_codes(arr, "X", private=fitting)
        return encode_labels(arr, cats, private=fitting)

    def _check_feature_names(self, X):
        """scikit-learn's rule: the names seen by fit, in the same order, or a ValueError (a warning when
        only one of fit and predict had names)."""
        fitted = getattr(self, "feature_names_in_", None)
        names = None
        if hasattr(X, "columns"):
            columns = np.asarray(X.columns, dtype=object)
            if all(isinstance(c, str) for c in columns):
                names = columns
        if fitted is None and names is None:
            return
        if fitted is None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without feature names",
                          UserWarning, stacklevel=4)
            return
        if names is None:
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was fitted with "
                          "feature names", UserWarning, stacklevel=4)
            return
        if len(names) != len(fitted) or np.any(names != fitted):
            raise ValueError(f"The feature names should match those that were passed during fit, in the same "
                             f"order: fit saw {fitted.tolist()!r:.200}, X has {names.tolist()!r:.200}")

    # ------------------------------------------------------------------ fit

    def fit(self, X: Any, y: Any, n_values: Any = None, n_classes: Any = None, *,
            schema: Any = None) -> "PrivateNaiveBayes":
        """Count, then release the parameters once.

        Parameters
        ----------
        X : array_like, shape (n, K)
            Integer codes (column :math:`k` in :math:`[0, n_k)`; whole-valued
            floats are accepted as codes), or any labels (strings, a pandas
            DataFrame) when the public ``categories`` are given.
        y : array_like, shape (n,)
            Integer class codes in :math:`[0, d)`, or labels listed in ``classes``.
        n_values : array_like of int, shape (K,), optional
            The public domain sizes (also accepted as an ``__init__`` parameter,
            or through ``categories``, ``schema``, or the ``public_n_values`` of
            ``X`` that :class:`lib.models.naive_bayes.PublicBins` outputs).
            Required for a private mechanism: a domain read off ``X`` would
            make the shape of the release reveal a private maximum. Only the
            non-private estimate (``cls.private`` false) may infer
            ``X.max(axis=0) + 1`` (or the categories from label columns).
        n_classes : int, optional
            The public number of classes; required like ``n_values`` (inferred,
            as the sorted distinct labels of ``y``, only for the non-private estimate).
        schema : object with ``n_values`` and ``n_classes``, optional
            A public schema (e.g. :class:`lib.experiments.preprocessing.Split`
            built by ``binning="public"``) that supplies both.

        Every domain that is given (here, in ``__init__``, by ``schema`` or by
        ``X``) must agree with the others. An error on the private data names
        the column and its public range, never a value, a row or a count.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If a private mechanism is given no domain, or two given domains disagree.
        """
        cls = get(self.mechanism)
        n_values, n_classes = self._declared(n_values, n_classes, schema, X)
        if y is None:
            raise ValueError("PrivateNaiveBayes requires y to be passed, but the target y is None")
        if cls.private:
            missing = " and ".join(n for n, v in (("n_values (or the public categories of label columns)", n_values),
                                                  ("n_classes (or the public classes of labels)", n_classes))
                                   if v is None)
            if missing:
                raise ValueError(
                    f"{missing} must be given (or a public schema) for the private {cls.name!r} mechanism: "
                    "a domain inferred from the training data is a function of the private data and "
                    "is not covered by the mechanism's guarantee")
        validation.generator(self.random_state)   # a bad random_state is refused before anything else
        X_arr = self._encode_X(X, fitting=True, private=cls.private, n_values=n_values)
        y_arr = np.asarray(y)
        if self.classes is not None:
            classes = category_list(self.classes, "classes")
            if y_arr.ndim != 1:
                raise ValueError(f"y must be a 1-D array of labels; got shape {y_arr.shape}")
            y_arr = encode_labels(y_arr[:, None], [classes], "y")[:, 0]
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
            if y_arr.ndim == 1 and y_arr.dtype.kind == "f":
                y_arr = as_codes(y_arr, "y")
        if y_arr.ndim == 1 and y_arr.dtype.kind in "OUSb" and classes is None:
            raise ValueError("y holds labels, not integer class codes: give the public classes "
                             "(PrivateNaiveBayes(..., classes=[...]))")
        if n_values is None and X_arr.ndim == 2 and np.issubdtype(X_arr.dtype, np.integer) and X_arr.size:
            # only the non-private estimate reaches here (a private one was refused above)
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
        if n_classes is None:   # y empty or not 1-D: count() names the problem
            n_classes = 2
        # the exact counts stay local to fit: they are never stored (see the class Notes)
        class_counts, feature_counts = count(X_arr, y_arr, n_values, n_classes)
        calibration = self._calibrate(cls, n_values, n_classes, len(y_arr))
        self._release(calibration, class_counts, feature_counts, n_values, n_classes, classes)
        self.n_features_in_ = int(X_arr.shape[1])
        return self

    def fit_counts(self, class_counts: Any, feature_counts: Any) -> "PrivateNaiveBayes":
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
        counts (every row has a value for every attribute). The counts are
        private: an error names the table, never a count.

        Returns
        -------
        self
        """
        cls = get(self.mechanism)
        n_values, n_classes = self._declared(None, None, None)
        if cls.private and (n_values is None or n_classes is None):
            raise ValueError(
                f"the public domain (n_values or categories, and n_classes or classes) must be given in "
                f"__init__ for the private {cls.name!r} mechanism: the shape of counted tables may show "
                "which values occur in the data")
        if isinstance(feature_counts, np.ndarray) or not hasattr(feature_counts, "__len__"):
            raise ValueError("feature_counts must be a list of 2-D tables (classes x values), one per attribute")
        names = ["class_counts"] + [f"feature_counts[{k}]" for k in range(len(feature_counts))]
        tables = [nonnegative_counts(t, name) for t, name in zip([class_counts, *feature_counts], names)]
        class_counts, feature_counts = tables[0], tables[1:]
        if not feature_counts or class_counts.ndim != 1 or any(t.ndim != 2 for t in feature_counts):
            raise ValueError("class_counts must be 1-D (one count per class) and feature_counts a non-empty "
                             "list of 2-D tables (classes x values)")
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
                                 f"has a value of attribute {k}); it does not (the counts are private and "
                                 "not shown)")
        validation.generator(self.random_state)
        classes = category_list(self.classes, "classes") if self.classes is not None else None
        calibration = self._calibrate(cls, n_values, n_classes, int(class_counts.sum()))
        self._release(calibration, class_counts, feature_counts, n_values, n_classes, classes)
        if self.categories is not None:
            self.categories_ = category_lists(self.categories, "categories")
        elif hasattr(self, "categories_"):
            del self.categories_
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
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
        if self.budget is not None and not isinstance(self.budget, SharedBudget):
            raise TypeError(f"budget must be a lib.models.estimator.SharedBudget or None; got "
                            f"{type(self.budget).__name__}")
        n_values = np.asarray(n_values, dtype=np.int64)
        # A Generator built afresh from the seed: the parameter is not changed (scikit-learn's
        # convention), and nothing fitted refers to the generator (see the class Notes).
        rng = validation.generator(self.random_state)
        prior, tables = release_parameters(class_counts, feature_counts, calibration, n_draws=1, rng=rng)
        if self.budget is not None:
            self.budget.charge(calibration.guarantee)
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
        return check_codes(arr, "X", self.n_values_, private=False)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log posterior class probabilities, shape (n, d)."""
        X = self._check_X(X)  # the codes validated once; log_proba's values, bit for bit (flat lookups)
        return model_log_proba(X, self.class_log_prior_, self.feature_log_prob_, self.n_values_)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Posterior class probabilities, shape (n, d)."""
        out = self.predict_log_proba(X)
        return np.exp(out, out=out)

    def predict(self, X: Any, rng: Any = None) -> np.ndarray:
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
        # the unnormalised scores order the classes as the posterior does (scoring's sums, bit for bit)
        prior, table = stacked_model(self.class_log_prior_, self.feature_log_prob_)
        return self.classes_[np.argmax(class_scores(X, prior, table, self.n_values_), axis=-1)]
