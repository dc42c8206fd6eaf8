"""Gohari et al. (2021)'s :math:`(\\hat\\varepsilon, \\delta)` guarantee for a Dirichlet release (Section 2.4 of the paper).

The sub-package:

* :mod:`lib.mechanisms.gohari.guarantee`: the guarantee of one release
  (:func:`~lib.mechanisms.gohari.guarantee.gohari_delta`,
  :func:`~lib.mechanisms.gohari.guarantee.gohari_epsilon`,
  :func:`~lib.mechanisms.gohari.guarantee.gohari_calibrate`, ...);
* :mod:`lib.mechanisms.gohari.batch`: many calibrations at once
  (:func:`~lib.mechanisms.gohari.batch.gohari_calibrate_many` runs the searches
  of many releases and targets in lockstep, each taking the steps of its scalar
  search, so the results are those of
  :func:`~lib.mechanisms.gohari.guarantee.gohari_calibrate`), for the
  experiment grids, which need some hundred of them;
* :mod:`lib.mechanisms.gohari.mechanism`: the registered mechanism
  (:class:`~lib.mechanisms.gohari.mechanism.GohariMechanism`) and the
  calibration of a whole model by basic composition;
* :mod:`lib.mechanisms.gohari.reference`: the high-precision mpmath references
  and the original code's fixed quadrature rule, against which these functions
  are checked;
* :mod:`lib.mechanisms.gohari.core`: the double-precision pieces the others share.

The names of the guarantee of one release, its types and limits are re-exported here.
"""

from __future__ import annotations

from lib.mechanisms.gohari.core import (DELTA_FLOOR, EPSILON_HAT_MAX, GAMMA_RTOL, MAX_STEPS, N_TOTAL_MAX, R_MAX, R_RTOL,
                                         W_CHANGED, GohariGuarantee, GohariParameters)
from lib.mechanisms.gohari.guarantee import (gohari_calibrate, gohari_delta, gohari_epsilon, gohari_epsilon_at,
                                              gohari_parameters, min_part_cdf)

#: Documented here: the two types whose public home is this package (``__module__`` says so, for pickles too).
__all__ = ["GohariParameters", "GohariGuarantee"]
