"""The Hellinger distance of two Dirichlet distributions by the note's Beta-function formula, in multiprecision.

The note (``papers/smoothed-hellinger-exponential-mechanism.md``) writes
:math:`\\mathcal H(u, v) = \\sqrt{1 - B(\\tfrac{u+v}{2})/\\sqrt{B(u)B(v)}}`. In double precision
the ratio of Beta functions loses about :math:`\\log_{10} n` digits between neighbouring
posteriors of :math:`n` records, which is why the library evaluates
:func:`lib.mechanisms.dirichlet.divergence.hellinger_dirichlet` from the Rényi divergence of
order 1/2 instead; :func:`hellinger_beta_formula` evaluates the printed formula with mpmath at
enough digits to serve as its reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mpmath as mp

from lib import validation

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def _log_beta(a):
    return mp.fsum(mp.loggamma(x) for x in a) - mp.loggamma(mp.fsum(a))


def hellinger_beta_formula(u: ArrayLike, v: ArrayLike, *, dps: int = 80) -> float:
    """:math:`\\sqrt{-\\operatorname{expm1}(\\log B(\\tfrac{u+v}{2}) - \\tfrac12(\\log B(u) + \\log B(v)))}` at ``dps`` digits.

    The note's formula for the Hellinger distance of :math:`\\mathrm{Dir}(u)` and
    :math:`\\mathrm{Dir}(v)` (its Section 2; the ratio is the Bhattacharyya coefficient
    :math:`\\int\\sqrt{p_u p_v}`), with the multivariate Beta function
    :math:`B(a) = \\prod_i\\Gamma(a_i)/\\Gamma(\\sum_i a_i)` and every operation in mpmath.

    Parameters
    ----------
    u, v : array_like (d,)
        Positive Dirichlet parameters, ``d >= 2``, the same length.
    dps : int, optional
        Decimal digits of the working precision, at least 15.

    Returns
    -------
    float
        The distance, in ``[0, 1]``, rounded once to double precision.
    """
    u = validation.vectors(u, "u", positive_entries=True)
    v = validation.vectors(v, "v", positive_entries=True)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"u and v must be two vectors of the same length d >= 2; got shapes {u.shape} and {v.shape}")
    dps = validation.integer(dps, "dps", 15)
    with mp.workdps(dps):
        uu, vv = [mp.mpf(float(x)) for x in u], [mp.mpf(float(x)) for x in v]
        mid = [(x + y) / 2 for x, y in zip(uu, vv)]
        return float(mp.sqrt(-mp.expm1(_log_beta(mid) - (_log_beta(uu) + _log_beta(vv)) / 2)))
