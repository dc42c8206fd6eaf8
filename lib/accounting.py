"""Privacy accounting: from Renyi DP to approximate DP (Appendix B)."""

from __future__ import annotations

import numpy as np

from . import _validate


def rdp_to_dp(epsilon, lam, delta):
    """Convert :math:`(\\lambda, \\varepsilon)`-RDP to :math:`(\\hat\\varepsilon, \\delta)`-DP.

    Lemma 3 (Canonne, Kamath and Steinke 2020, Proposition 12) solved for
    :math:`\\hat\\varepsilon` as in Appendix B:

    .. math::
        \\hat\\varepsilon = \\varepsilon + \\log(\\lambda - 1)
        - \\frac{\\log\\delta + \\lambda\\log\\lambda}{\\lambda - 1},

    eq. (14) with the RDP level of Algorithm 1 in place of :math:`\\varepsilon`.
    It is evaluated as :math:`\\varepsilon + \\log(1 - 1/\\lambda) -
    \\log(\\delta\\lambda)/(\\lambda - 1)`, the same quantity without the
    cancellation between :math:`\\log(\\lambda-1)` and
    :math:`\\lambda\\log\\lambda/(\\lambda-1)` at large :math:`\\lambda`.
    A negative value means the guarantee holds with :math:`\\hat\\varepsilon = 0`
    (since :math:`e^{\\hat\\varepsilon} < 1`), so the result is clipped at 0.

    Parameters
    ----------
    epsilon : array_like
        RDP level :math:`\\varepsilon \\in (0, \\infty)`.
    lam : array_like
        Order :math:`\\lambda \\in (1, \\infty)`.
    delta : array_like
        :math:`\\delta \\in (0, 1)`.

    Returns
    -------
    ndarray or float
        :math:`\\hat\\varepsilon \\ge 0`, broadcast over the inputs.
    """
    epsilon = _validate.positive(epsilon, "epsilon")
    lam = _validate.order(lam, "lam", strict=True)
    delta = _validate.open_unit(delta, "delta")
    epsilon, lam, delta = _validate.broadcast(epsilon=epsilon, lam=lam, delta=delta)
    eps_hat = epsilon + np.log1p(-1 / lam) - np.log(delta * lam) / (lam - 1)
    return np.maximum(eps_hat, 0.0)[()]
