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

:class:`SharedBudget` is the one accountant that every fit inside a model
selection charges (``GridSearchCV``, ``cross_val_score``): it survives
``clone``, so the total of a search is known at its end.
"""

from __future__ import annotations

import inspect
import os
import threading
from typing import Any

import numpy as np

from lib.privacy.accountant import Accountant, Spent
from lib.privacy.guarantees import Guarantee, compose


class ClassifierProtocol:
    """``get_params``, ``set_params``, ``score`` and the tags of a classifier (scikit-learn's contract).

    Every ``__init__`` parameter is stored unchanged under its own name, and
    ``fit`` never changes it (scikit-learn's "fit does not change parameters").
    """

    _estimator_type = "classifier"

    @classmethod
    def _get_param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The ``__init__`` parameters, ``{name: value}`` (``deep`` is accepted for scikit-learn)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> "ClassifierProtocol":
        """Set ``__init__`` parameters by name; returns ``self``. An unknown name is a ValueError."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{name!r} is not a parameter of {type(self).__name__}; "
                                 f"the parameters are {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
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

    def __sklearn_is_fitted__(self) -> bool:
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


class SharedBudget:
    """One accountant charged by every fit of the estimators that hold it, through ``clone`` and model selection.

    Give the same object to an estimator's ``budget`` parameter; every
    :meth:`charge` (each ``fit`` of a private model calls it with the
    guarantee of its release) composes on one
    :class:`lib.privacy.accountant.Accountant`. scikit-learn's ``clone``
    deep-copies a parameter that is not an estimator; this object's copy *is*
    the object (``__copy__`` and ``__deepcopy__`` return it), so the clones
    that ``GridSearchCV`` or ``cross_val_score`` fit all charge here, and the
    total of the search is :meth:`spent` at the end (46 fits of a 23-candidate,
    2-fold search and the refit: 47 releases).

    A copy that crossed into another process (``n_jobs > 1`` with a process
    backend pickles the estimators) would charge an accountant nobody reads:
    its :meth:`charge` raises instead, naming the fix (``n_jobs=1`` or
    ``joblib.parallel_backend("threading")``). Charges from threads are
    serialised by a lock.

    Parameters
    ----------
    orders : array_like, optional
        The accountant's Renyi orders (:class:`lib.privacy.accountant.Accountant`).

    Examples
    --------
    >>> from lib.privacy.guarantees import RenyiDP
    >>> budget = SharedBudget()
    >>> import copy; copy.deepcopy(budget) is budget
    True
    >>> budget.charge(RenyiDP(5.0, 1.0)).charge(RenyiDP(5.0, 1.0)).releases
    2
    >>> budget.total()
    RenyiDP(lam=5.0, epsilon=2.0)
    """

    def __init__(self, orders: Any = None) -> None:
        self.accountant = Accountant(orders)
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def __copy__(self) -> "SharedBudget":
        return self

    def __deepcopy__(self, memo: dict) -> "SharedBudget":
        return self

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def charge(self, guarantee: Guarantee, count: int = 1) -> "SharedBudget":
        """Compose ``count`` releases that meet ``guarantee``; returns the budget.

        Raises
        ------
        RuntimeError
            In another process than the one that made the budget (a pickled
            copy: its charges would be lost).
        ValueError
            If the accountant cannot compose ``guarantee``.
        """
        if os.getpid() != self._pid:
            raise RuntimeError("this SharedBudget was copied into another process (n_jobs > 1 with a process "
                               "backend), where its charges would be lost: run the model selection with "
                               "n_jobs=1 or inside joblib.parallel_backend('threading')")
        with self._lock:
            self.accountant.add(guarantee, count)
        return self

    @property
    def releases(self) -> int:
        """The number of releases charged so far."""
        return sum(count for _, count in self.accountant.guarantees)

    def total(self) -> Guarantee:
        """The composition of every charge as one guarantee of :mod:`lib.privacy.guarantees`
        (:func:`lib.privacy.guarantees.compose`: Renyi levels add at one order; a ValueError for charges
        of mixed types, whose total is :meth:`spent`)."""
        entries = self.accountant.guarantees
        if not entries:
            raise ValueError("nothing has been charged to this SharedBudget yet")
        return compose([g for g, count in entries for _ in range(count)])

    def spent(self, delta: float) -> Spent:
        """The :math:`(\\hat\\varepsilon, \\delta)` of every charge together (eq. (14) at the best order)."""
        return self.accountant.epsilon(delta)

    def __repr__(self) -> str:
        return f"SharedBudget(releases={self.releases})"


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
