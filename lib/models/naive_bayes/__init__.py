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
that an experiment draws all its repetitions at once. The package's modules,
each importable from here:

* :mod:`lib.models.naive_bayes.model`: the counts (:func:`count`), the public
  shapes of the releases (:func:`model_spec`) and the releases
  (:func:`release_parameters`);
* :mod:`lib.models.naive_bayes.domain`: the declared public domain and the
  checks of private data against it (messages without private values);
* :mod:`lib.models.naive_bayes.classifier`: :class:`PrivateNaiveBayes`, the
  scikit-learn estimator;
* :mod:`lib.models.naive_bayes.binning`: :class:`PublicBins`, binning with
  public bounds for a Pipeline;
* :mod:`lib.models.naive_bayes.scoring`: scoring released models
  (:func:`log_proba`, :func:`scores`, :func:`cross_entropy`, :func:`accuracy`).
"""

from lib.models.naive_bayes.binning import PublicBins, PublicCodes  # noqa: F401
from lib.models.naive_bayes.classifier import PrivateNaiveBayes  # noqa: F401
from lib.models.naive_bayes.domain import MAX_CELLS  # noqa: F401
from lib.models.naive_bayes.model import count, log_releases, model_spec, release_parameters, releases_of  # noqa: F401
from lib.models.naive_bayes.scoring import accuracy, cross_entropy, log_proba, scores  # noqa: F401
