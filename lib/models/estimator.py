"""The scikit-learn estimator protocol without a dependency on scikit-learn.

:class:`lib.models.naive_bayes.PrivateNaiveBayes` and
:class:`lib.models.mixed_naive_bayes.MixedNaiveBayes` follow scikit-learn's
conventions (``get_params``/``set_params``, ``score``, ``__sklearn_tags__``,
``classes_``, ``n_features_in_``, ``fit`` returning ``self``), so ``clone``,
``Pipeline``, ``cross_val_score``, ``GridSearchCV`` and ``check_estimator``
work with them. The numeric core depends on numpy and scipy only, so the
protocol is implemented here by duck typing (scikit-learn's ``clone`` needs only
``get_params``); scikit-learn is imported only inside ``__sklearn_tags__``,
which only scikit-learn calls. ``pip install dirichlet-mechanism-book[sklearn]``
installs it.
"""

from __future__ import annotations

import inspect

import numpy as np


class ClassifierProtocol:
    """``get_params``, ``set_params``, ``score`` and the tags of a classifier (scikit-learn's contract).

    Every ``__init__`` parameter is stored unchanged under its own name, and
    ``fit`` never changes it (scikit-learn's "fit does not change parameters").
    """

    _estimator_type = "classifier"

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep=True):
        """The ``__init__`` parameters, ``{name: value}`` (``deep`` is accepted for scikit-learn)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set ``__init__`` parameters by name; returns ``self``. An unknown name is a ValueError."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{name!r} is not a parameter of {type(self).__name__}; "
                                 f"the parameters are {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on ``(X, y)`` (weighted by ``sample_weight`` if given)."""
        y = np.asarray(y)
        hits = np.asarray(self.predict(X) == y, dtype=float)
        if hits.shape != y.shape:
            raise ValueError(f"y must have one label per row of X; got shape {y.shape} for {hits.shape[0]} rows")
        if sample_weight is None:
            return float(hits.mean())
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != y.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("sample_weight must be finite, non-negative, not all 0, one per row of X")
        return float(np.average(hits, weights=w))

    def __sklearn_is_fitted__(self):
        return hasattr(self, "classes_")

    #: scikit-learn checks (``check_estimator``) this estimator is known to fail, and why. Pass it as
    #: ``check_estimator(model, expected_failed_checks=model._expected_failed_checks())``.
    _EXPECTED_FAILED_CHECKS: dict = {}

    def _expected_failed_checks(self):
        """``{check name: reason}`` of the declared exceptions to scikit-learn's conventions."""
        return dict(self._EXPECTED_FAILED_CHECKS)

    def _tags(self, tags):
        """Adjust scikit-learn's default classifier tags (subclasses override)."""
        return tags

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        tags = Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(), input_tags=InputTags())
        return self._tags(tags)

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        shown = []
        for name in self._get_param_names():
            if name in ("random_state", "rng"):   # a seed is a secret (like a key): never in a log
                continue
            value = getattr(self, name)
            default = defaults.get(name, inspect.Parameter.empty)
            same = value is default or (type(value) is type(default) and _equal(value, default))
            if not same:
                shown.append(f"{name}={getattr(value, 'name', value) if name == 'mechanism' else value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def not_fitted(name: str) -> Exception:
    """The error of a method called before ``fit``: scikit-learn's ``NotFittedError`` when scikit-learn
    is already loaded (it subclasses ValueError and AttributeError), else a ValueError; never an import."""
    import sys

    message = f"this {name} is not fitted yet; call fit first"
    exceptions = sys.modules.get("sklearn.exceptions")
    return exceptions.NotFittedError(message) if exceptions is not None else ValueError(message)
