"""The exact audit of the smoothed-Hellinger mechanism, and the note's bounds and lemmas checked against it.

:class:`lib.mechanisms.hellinger.SmoothedHellinger` has a finite output space, so its privacy is
computed exactly for every pair of neighbouring data sets (:func:`audit`, :func:`audit_counts`);
:func:`audited_guarantee` states pure :math:`\\varepsilon`-DP where the exact audit of a setting
shows it. The rest checks the seed note (``papers/smoothed-hellinger-exponential-mechanism.md``,
*the note*) on the mechanism's own output distribution: the tail bounds of its Section 4.2
(:func:`tail_exact`, :func:`tail_bounds`), the sliding and dilation lemmas of its Section 3.1
(:func:`score_atoms`, :func:`lemma_violation`, :func:`lemma_violations`) and the :math:`\\delta` of Lemma 3.3's chain
(:func:`proof_delta`). :func:`local_sensitivity_brute` and :func:`smooth_sensitivity_brute_beta`
compute the sensitivities by their definitions, against the mechanism's fast forms.
:func:`beta_hockey_stick` is the exact :math:`\\delta` of a pair of Beta distributions, used to
calibrate the Dirichlet mechanism at :math:`d = 2` without Appendix B
(:func:`dirichlet_exact_scale`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from lib import validation
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet
from lib.mechanisms.hellinger import (HellingerExponential, MAX_CANDIDATES, SmoothedHellinger, posteriors)
from lib.privacy.guarantees import ApproximateDP, Guarantee, PureDP

MAX_EXACT_CANDIDATES = 2_001
"""Largest candidate set that :func:`audited_guarantee` audits exactly (``n <= 2000`` for ``k = 2``: about
ten seconds; the cost grows as the square)."""

MAX_AUDIT_CELLS = 10**7
"""Largest number of (row, candidate) cells that :func:`log_pmf_rows_beta` and :func:`audit_counts`
compute (``2 len(counts) (n + 1)`` for an audit; about 40 s at the limit)."""

MAX_EXACT_N = 10**6
"""Largest ``n`` of the exact Dirichlet calibration at ``d = 2`` (:func:`dirichlet_worst_delta`,
:func:`dirichlet_exact_scale`): every pass checks all ``n`` pairs (about 7 s at the limit)."""

LOG_PMF_TOLERANCE = 1e-9
"""How far :math:`\\log\\sum_r P(r)` of a row given to :func:`audit` may be from 0 (rounding)."""

_AUDIT_ROUNDING = 1e-9
"""Relative margin by which an audited pure epsilon must be below the nominal one for
:func:`audited_guarantee` to state pure DP (the audit is exact up to the rounding of the log pmf)."""

_BISECTION_STEPS = 200
_CHUNK = 256  # rows per block in the chunked computations


def _counts_1d(counts, name: str, low: int, high: int) -> np.ndarray:
    """A non-empty 1-D int64 array of counts in ``[low, high]`` (floats are refused, not truncated)."""
    arr = np.atleast_1d(validation.integer_array(counts, name))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of integers in [{low}, {high}]; got shape {arr.shape}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < low or hi > high:
        bad = lo if lo < low else hi
        raise ValueError(f"{name} must hold integers in [{low}, {high}]; got {bad} at index {int(np.argmax(arr == bad))}")
    return arr



# --- Sensitivities by their definitions --------------------------------------------------

def local_sensitivity_brute(hmat: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """Local sensitivity by definition: max over neighbours and over every candidate ``r``.

    Parameters
    ----------
    hmat : ndarray (C, C)
        :func:`lib.mechanisms.hellinger.hellinger_matrix` (finite, non-negative), at most :data:`lib.mechanisms.hellinger.MAX_CANDIDATES` rows.
    neighbours : ndarray of int (C, m)
        Neighbour indices in ``[0, C - 1]``, ``-1`` for none.
    """
    hmat = validation.nonnegative(hmat, "hmat")
    if hmat.ndim != 2 or hmat.shape[0] != hmat.shape[1] or hmat.shape[0] == 0:
        raise ValueError(f"hmat must be a non-empty square matrix; got shape {hmat.shape}")
    if hmat.shape[0] > MAX_CANDIDATES:
        raise ValueError(f"hmat has {hmat.shape[0]} rows; at most {MAX_CANDIDATES}")
    neighbours = validation.integer_array(neighbours, "neighbours")
    if neighbours.ndim != 2 or neighbours.shape[0] != hmat.shape[0]:
        raise ValueError(f"neighbours must have shape ({hmat.shape[0]}, m); got {neighbours.shape}")
    if neighbours.size and (neighbours.min() < -1 or neighbours.max() >= hmat.shape[0]):
        raise ValueError(f"neighbours must hold indices in [-1, {hmat.shape[0] - 1}]")
    out = np.zeros(hmat.shape[0])
    for m in range(neighbours.shape[1]):
        ok = neighbours[:, m] >= 0
        diff = np.abs(hmat[ok] - hmat[neighbours[ok, m]]).max(axis=1)
        out[ok] = np.maximum(out[ok], diff)
    return out



def smooth_sensitivity_brute_beta(prior: ArrayLike, n: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (1) by definition over all :math:`2^n` binary data sets (tests only, ``n <= 14``).

    Returns S indexed by data set (rows of ``itertools.product`` order) together with each
    data set's count, so that the caller can check that S depends on the count only.
    """
    n = validation.integer(n, "n", 1)
    if n > 14:
        raise ValueError(f"n must be at most 14 for the brute force over 2^n data sets; got {n}")
    gamma = validation.scalar(validation.positive(gamma, "gamma"), "gamma")
    ids = np.arange(2**n)
    data = ((ids[:, None] >> np.arange(n)) & 1).astype(np.int64)
    counts = data.sum(axis=1)
    post = posteriors(prior, np.stack([counts, n - counts], axis=1))
    # LS(x') by definition: flip each bit in turn, distance between the two posteriors
    # (the triangle-inequality reduction of local_sensitivity is checked separately).
    flipped = counts[:, None] + 1 - 2 * data
    other = posteriors(prior, np.stack([flipped, n - flipped], axis=-1))
    ls = hellinger_dirichlet(np.broadcast_to(post[:, None, :], other.shape), other).max(axis=1)
    # Hamming distance of data sets i and j: the bits set in i XOR j; blocks of rows keep the
    # memory at 256 x 2^n (a dense 2^n x 2^n x n comparison would need gigabytes at n = 14).
    decay = np.exp(-gamma * np.arange(n + 1))
    smooth = np.empty(ids.size)
    for start in range(0, ids.size, _CHUNK):
        hamming = np.bitwise_count(ids[start:start + _CHUNK, None] ^ ids[None, :])
        smooth[start:start + _CHUNK] = (ls[None, :] * decay[hamming]).max(axis=1)
    return smooth, counts



# --- Exact audit --------------------------------------------------------------------------

class Audit(NamedTuple):
    """Exact privacy of a finite-output mechanism over all neighbouring pairs.

    Attributes
    ----------
    delta : ndarray
        Largest hockey-stick divergence :math:`\\max_{x \\sim y}\\sum_r (P_x(r) - e^{\\varepsilon}P_y(r))_+`
        at each requested :math:`\\varepsilon`.
    pure_epsilon : float
        Smallest :math:`\\varepsilon` with :math:`\\delta = 0`: :math:`\\max_{x \\sim y}\\max_r
        (\\log P_x(r) - \\log P_y(r))` over both directions of every pair; ``inf`` when some
        output has probability 0 on one data set and not on its neighbour.
    renyi : ndarray
        Largest Renyi divergence :math:`D_\\lambda(P_x \\| P_y)` at each requested order (``inf``
        where :math:`P_x` is not absolutely continuous with respect to :math:`P_y`).
    worst_pair : tuple or None
        ``(x, y)`` attaining ``delta[0]``; None when no pair has a positive :math:`\\delta` at
        the first :math:`\\varepsilon` (every pair is then equally "worst").
    pure_worst_pair : tuple
        ``(x, y)`` attaining ``pure_epsilon``: :math:`\\log P_x(r) - \\log P_y(r)` is largest there.

    Ties are broken towards the smallest ``x``, then the smallest ``y``.
    """

    delta: np.ndarray
    pure_epsilon: float
    renyi: np.ndarray
    worst_pair: tuple | None
    pure_worst_pair: tuple


def _log_pmf_matrix(value, name: str) -> np.ndarray:
    """A 2-D array of log probabilities: rows normalised, no NaN, no +inf (-inf is probability 0)."""
    arr = validation.as_float(value, name)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (data sets x outputs); got shape {arr.shape}")
    for start in range(0, arr.shape[0], _CHUNK):  # blocks of rows: no temporary of the full size
        block = arr[start:start + _CHUNK]
        bad = np.isnan(block) | (block > LOG_PMF_TOLERANCE)
        if bad.any():
            i, j = np.unravel_index(int(np.argmax(bad)), block.shape)
            raise ValueError(f"{name} must hold log probabilities in [-inf, 0]; got {block[i, j]} at index "
                             f"({start + i}, {j})")
        total = special.logsumexp(block, axis=1)
        off = np.abs(total) > LOG_PMF_TOLERANCE
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(f"every row of {name} must be a normalised log pmf (log of the sum within "
                             f"{LOG_PMF_TOLERANCE:g} of 0); row {start + i} sums to exp({total[i]:.6g})")
    return arr


def _pairs(neighbours, n_rows: int):
    """Both directions of every pair listed in ``neighbours``, each once, sorted by (x, y)."""
    nb = validation.integer_array(neighbours, "neighbours")
    if nb.ndim != 2 or nb.shape[0] != n_rows:
        raise ValueError(f"neighbours must have shape ({n_rows}, m), one row per data set; got {nb.shape}")
    if nb.size and (nb.min() < -1 or nb.max() >= n_rows):
        bad = int(nb.min()) if nb.min() < -1 else int(nb.max())
        raise ValueError(f"neighbours must hold row indices in [0, {n_rows - 1}] or -1 for none; got {bad}")
    rows, cols = np.nonzero(nb >= 0)
    if rows.size == 0:
        raise ValueError("neighbours lists no pair (every entry is -1); there is nothing to audit")
    x = np.concatenate([rows, nb[rows, cols]])
    y = np.concatenate([nb[rows, cols], rows])
    key = np.unique(x * np.int64(n_rows) + y)
    return key // n_rows, key % n_rows


def audit(log_pmf_matrix: np.ndarray, neighbours: np.ndarray, epsilons: ArrayLike, orders: ArrayLike = ()) -> Audit:
    """Exact :math:`\\delta(\\varepsilon)`, pure :math:`\\varepsilon` and Renyi curve of a mechanism.

    Outputs of probability 0 (log ``-inf``) are handled exactly: an output impossible on both
    data sets of a pair contributes nothing, one possible on ``x`` only makes the pure
    :math:`\\varepsilon` and the Renyi divergences from ``x`` infinite and adds
    :math:`P_x(r)` to :math:`\\delta`.

    Parameters
    ----------
    log_pmf_matrix : ndarray (C, R)
        Row ``i`` is the log output distribution on data set ``i``: entries in
        ``[-inf, 0]``, no NaN, each row normalised (:data:`LOG_PMF_TOLERANCE`).
    neighbours : ndarray of int (C, m)
        Neighbour indices (``-1`` for none); both directions of every pair listed are checked,
        whether the pair is listed once or twice.
    epsilons : array_like
        At least one :math:`\\varepsilon \\ge 0` for the hockey-stick divergence.
    orders : array_like
        Renyi orders :math:`\\lambda > 1` (finite).

    Raises
    ------
    ValueError
        On a matrix that is not a log pmf per row, neighbour indices out of range, no pair, or
        bad ``epsilons`` or ``orders``.
    """
    lp = _log_pmf_matrix(log_pmf_matrix, "log_pmf_matrix")
    epsilons = validation.nonnegative(np.atleast_1d(epsilons), "epsilons")
    if epsilons.ndim != 1 or epsilons.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-D array of values >= 0; got shape {epsilons.shape}")
    orders = validation.as_float(orders, "orders").reshape(-1)
    if orders.size:
        validation.order(orders, "orders", strict=True)
    x, y = _pairs(neighbours, lp.shape[0])
    delta = np.zeros(epsilons.shape)
    worst = None
    pure, pure_pair = -np.inf, (int(x[0]), int(y[0]))
    renyi = np.full(orders.shape, -np.inf)
    for start in range(0, x.size, _CHUNK):  # chunks keep memory at 256 x R
        px, py = lp[x[start:start + _CHUNK]], lp[y[start:start + _CHUNK]]
        with np.errstate(invalid="ignore"):
            ratio = px - py
        # -inf - (-inf): an output impossible on both data sets; it bounds nothing
        ratio[np.isneginf(px)] = -np.inf
        per_pair = ratio.max(axis=1)
        j = int(np.argmax(per_pair))
        if per_pair[j] > pure:
            pure, pure_pair = float(per_pair[j]), (int(x[start + j]), int(y[start + j]))
        for i, eps in enumerate(epsilons):
            # sum_r P_x(r) (1 - e^{eps - log ratio})_+ , each term without cancellation
            terms = np.exp(px) * -np.expm1(np.minimum(eps - ratio, 0.0))
            per_pair = terms.sum(axis=1)
            j = int(np.argmax(per_pair))
            if per_pair[j] > delta[i]:
                delta[i] = per_pair[j]
                if i == 0:
                    worst = (int(x[start + j]), int(y[start + j]))
        for i, lam in enumerate(orders):
            with np.errstate(invalid="ignore"):
                expo = lam * px + (1 - lam) * py
            expo[np.isneginf(px)] = -np.inf  # P_x(r) = 0: the term P_x^lam P_y^(1-lam) is 0
            infinite = np.isposinf(expo).any(axis=1)  # P_x(r) > 0 = P_y(r)
            value = np.full(expo.shape[0], np.inf)
            if not infinite.all():
                value[~infinite] = special.logsumexp(expo[~infinite], axis=1) / (lam - 1)
            renyi[i] = max(renyi[i], float(value.max()))
    # A pair of identical rows has divergence 0; so does every pair when the chunks above
    # found nothing larger (max over r of a ratio of two normalised pmfs is >= 0).
    return Audit(delta, max(pure, 0.0), np.maximum(renyi, 0.0), worst, pure_pair)



def _beta_mechanism(prior, n, epsilon, delta, global_sensitivity) -> SmoothedHellinger:
    """The beta-binomial mechanism (smoothed, or with the global sensitivity), O(n)."""
    if not isinstance(global_sensitivity, (bool, np.bool_)):
        raise validation.ArgumentTypeError(f"global_sensitivity must be True or False; got "
                                          f"{type(global_sensitivity).__name__} {global_sensitivity!r:.60}")
    cls = HellingerExponential if global_sensitivity else SmoothedHellinger
    return cls(prior, n, epsilon, delta)


def _vectors(counts, n):
    return np.stack([counts, n - counts], axis=1)


def log_pmf_rows_beta(prior: ArrayLike, n: int, epsilon: float, delta: float, counts: ArrayLike, *,
                      global_sensitivity: bool = False) -> np.ndarray:
    """Rows of :math:`\\log\\Pr[\\mathcal M_{\\mathcal H}(x) = r]` for the data sets with the given ``counts``.

    O(n) memory per row, so pairs of neighbouring data sets can be audited exactly at sizes
    ``n`` whose dense matrix (``(n+1)^2`` entries) does not fit (:func:`audit_counts`).
    ``counts`` are integers in ``[0, n]`` (floats are refused, not truncated); at most
    :data:`MAX_AUDIT_CELLS` cells ``len(counts) (n + 1)``. The rows are
    :meth:`lib.mechanisms.hellinger.SmoothedHellinger.log_pmf_rows` (with ``global_sensitivity``,
    :class:`lib.mechanisms.hellinger.HellingerExponential`'s).
    """
    n = validation.integer(n, "n", 1)
    counts = _counts_1d(counts, "counts", 0, n)
    validation.cells(counts.size * (n + 1), f"log_pmf_rows_beta ({counts.size} rows of n + 1 = {n + 1})",
                    MAX_AUDIT_CELLS)
    return _beta_mechanism(prior, n, epsilon, delta, global_sensitivity).log_pmf_rows(_vectors(counts, n))


def audit_counts(prior: ArrayLike, n: int, epsilon: float, delta: float, counts: ArrayLike,
                 epsilons: ArrayLike | None = None, orders: ArrayLike = ()) -> Audit:
    """:func:`audit` restricted to the pairs ``(a, a + 1)`` for ``a`` in ``counts`` (both directions).

    Exact for those pairs; a violation found here is a violation of the claim, while a pass
    covers only the pairs given. The pairs of the result (``worst_pair``, ``pure_worst_pair``)
    are the *counts* of the two data sets. ``counts`` are integers in ``[0, n - 1]``; at most
    :data:`MAX_AUDIT_CELLS` cells ``2 len(counts) (n + 1)``, computed in blocks of pairs.
    """
    n = validation.integer(n, "n", 1)
    counts = np.unique(_counts_1d(counts, "counts", 0, n - 1))
    validation.cells(2 * counts.size * (n + 1), f"audit_counts ({counts.size} pairs at n = {n})", MAX_AUDIT_CELLS)
    mech = _beta_mechanism(prior, n, epsilon, delta, False)
    epsilons = [epsilon] if epsilons is None else epsilons
    merged = None
    for start in range(0, counts.size, _CHUNK // 2):
        block = counts[start:start + _CHUNK // 2]
        m = block.size
        label = np.concatenate([block, block + 1])  # row -> count of its data set
        rows = mech.log_pmf_rows(_vectors(label, n))
        res = audit(rows, np.concatenate([np.arange(m, 2 * m), np.full(m, -1)])[:, None], epsilons, orders)
        res = res._replace(worst_pair=None if res.worst_pair is None else tuple(int(label[i]) for i in res.worst_pair),
                           pure_worst_pair=tuple(int(label[i]) for i in res.pure_worst_pair))
        merged = res if merged is None else _merge(merged, res)
    return merged


def _merge(a: Audit, b: Audit) -> Audit:
    """The audit of the union of two sets of pairs (maxima; ties keep ``a``, the earlier pairs)."""
    worst = a.worst_pair if b.delta[0] <= a.delta[0] else b.worst_pair
    pure_pair = a.pure_worst_pair if b.pure_epsilon <= a.pure_epsilon else b.pure_worst_pair
    return Audit(np.maximum(a.delta, b.delta), max(a.pure_epsilon, b.pure_epsilon),
                 np.maximum(a.renyi, b.renyi), worst, pure_pair)


def audited_guarantee(mech: SmoothedHellinger) -> Guarantee:
    """The privacy statement of one setting of :math:`\\mathcal M_{\\mathcal H}`, after its exact audit.

    Parameters
    ----------
    mech : lib.mechanisms.hellinger.SmoothedHellinger
        The mechanism, with at most :data:`MAX_EXACT_CANDIDATES` candidates (``n <= 2000``
        for ``k = 2``); every pair of neighbouring data sets is audited.

    Returns
    -------
    lib.privacy.guarantees.PureDP or lib.privacy.guarantees.ApproximateDP
        * :class:`lib.mechanisms.hellinger.HellingerExponential`: ``PureDP(epsilon)``
          (McSherry and Talwar; proved, not audited).
        * ``PureDP(epsilon)`` if every pair meets pure ``epsilon`` (below it by the rounding
          margin), else ``ApproximateDP(epsilon, delta)`` if the exact
          :math:`\\delta(\\varepsilon)` is at most ``delta``.

    Raises
    ------
    ValueError
        When the exact audit finds :math:`\\delta(\\varepsilon) > \\delta` (the note's claim
        fails at this setting), or the setting has more than :data:`MAX_EXACT_CANDIDATES`
        candidates.

    Notes
    -----
    :attr:`lib.mechanisms.hellinger.SmoothedHellinger.guarantee` states the note's
    :math:`(\\varepsilon, \\delta)` without an audit. It is *not* pure DP in general: at prior
    ``(1e-8, 1e8)``, ``n = 150``, ``epsilon = 40``, ``delta = 1e-6`` one pair spends 1.029
    epsilon.

    Examples
    --------
    >>> audited_guarantee(SmoothedHellinger((1.0, 1.0), 50, 1.0, 1e-6))
    PureDP(epsilon=1.0)
    >>> audited_guarantee(SmoothedHellinger((1e-8, 1e8), 150, 40.0, 1e-6))
    ApproximateDP(epsilon=40.0, delta=1e-06)
    """
    if not isinstance(mech, SmoothedHellinger):
        raise validation.ArgumentTypeError(f"mech must be a SmoothedHellinger; got {type(mech).__name__}")
    if mech.global_sensitivity:
        return PureDP(mech.epsilon)
    size = mech.cand.shape[0]
    if size > MAX_EXACT_CANDIDATES:
        raise ValueError(f"n = {mech.n}, k = {mech.cand.shape[1]} give {size} candidates; the exact audit allows at "
                         f"most {MAX_EXACT_CANDIDATES} (mech.guarantee states the note's (epsilon, delta))")
    res = audit(mech.log_pmf, mech.neighbours, [mech.epsilon])
    if res.pure_epsilon <= mech.epsilon * (1 - _AUDIT_ROUNDING):
        return PureDP(mech.epsilon)
    if res.delta[0] <= mech.delta:
        return ApproximateDP(mech.epsilon, mech.delta)
    raise ValueError(f"the exact audit finds delta(epsilon = {mech.epsilon:g}) = {res.delta[0]:.3g} > delta = "
                     f"{mech.delta:g} at pair {res.worst_pair}: the note's guarantee does not hold at this setting")


# --- Accuracy (note, Section 4.2) -----------------------------------------------------------

def _row_and_distances(log_pmf_row, hellinger_row):
    """One normalised log output distribution (1-D) and the distances of its outputs, validated:
    ``(log_pmf as a 1-row matrix, distances)``."""
    lp = _log_pmf_matrix(np.atleast_2d(log_pmf_row), "log_pmf_row")
    if np.ndim(log_pmf_row) != 1:
        raise ValueError(f"log_pmf_row must be 1-D; got shape {np.shape(log_pmf_row)}")
    h = validation.nonnegative(hellinger_row, "hellinger_row")
    if h.shape != lp[0].shape:
        raise ValueError(f"hellinger_row must have the shape of log_pmf_row, {lp[0].shape}; got {h.shape}")
    return lp, h


def tail_exact(log_pmf_row: np.ndarray, hellinger_row: np.ndarray, c: ArrayLike) -> np.ndarray:
    """The note's first, exact tail: :math:`\\Pr[\\mathcal H(\\mathrm{BI}(x), z) \\ge c]` at each ``c``.

    ``log_pmf_row`` is one normalised log output distribution, ``hellinger_row`` the distance of
    each output to the true posterior (same length, finite, non-negative) and ``c`` finite
    thresholds (at most ``lib.validation.MAX_CELLS``). Sorted once, O((R + len(c)) log R).
    """
    lp, h = _row_and_distances(log_pmf_row, hellinger_row)
    c = np.atleast_1d(validation.in_range(c, "c", -np.inf, open_low=True))
    validation.cells(c.size, "c")
    order = np.argsort(h, kind="stable")
    h_sorted = h[order]
    # tail[i] = sum of p over the outputs from the i-th smallest distance on
    tail = np.concatenate([np.cumsum(np.exp(lp[0][order])[::-1])[::-1], [0.0]])
    return tail[np.searchsorted(h_sorted, c.reshape(-1), side="left")].reshape(c.shape)


def tail_bounds(hellinger_row: np.ndarray, scale: float, epsilon: float, c: ArrayLike) -> dict:
    """The tail bounds of the note's Section 4.2 at thresholds ``c``, in the mechanism's own scale.

    ``as_written`` is the second bound with the exponent printed in the note,
    :math:`|R| e^{-\\varepsilon c / S} / NL_x`, where :math:`NL_x` is the normaliser of
    Definition 2.1 (exponent :math:`-\\varepsilon\\mathcal H/(2S)`); ``consistent`` is the same bound
    with the factor 2 of Definition 2.1, :math:`|R| e^{-\\varepsilon c/(2S)} / NL_x`; ``loose`` is
    the last one, :math:`|R| e^{-\\varepsilon c/(2S)}` (:math:`NL_x \\ge 1`, the true posterior
    having weight 1). The third bound, with an unknown :math:`N(n)`, is not specified by the note.

    ``hellinger_row`` is a finite non-negative 1-D array, ``scale`` and ``epsilon`` positive
    scalars and ``c`` thresholds in ``[0, inf)``.
    """
    h = validation.nonnegative(hellinger_row, "hellinger_row")
    if h.ndim != 1 or h.size == 0:
        raise ValueError(f"hellinger_row must be a non-empty 1-D array; got shape {h.shape}")
    scale = validation.scalar(validation.positive(scale, "scale"), "scale")
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    c = np.atleast_1d(validation.nonnegative(c, "c"))
    r = h.shape[0]
    log_nl = special.logsumexp(-epsilon * h / (2 * scale))
    return {
        "as_written": r * np.exp(-epsilon * c / scale - log_nl),
        "consistent": r * np.exp(-epsilon * c / (2 * scale) - log_nl),
        "loose": r * np.exp(-epsilon * c / (2 * scale)),
    }


# --- The proof's lemmas on a discrete output (note, Section 3.1) ---------------------------

def score_atoms(log_pmf_row: np.ndarray, hellinger_row: np.ndarray,
                atol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """The law of the score :math:`u = -\\mathcal H(\\mathrm{BI}(x), z)` of one output distribution.

    Candidates whose distances agree to ``atol`` are one atom (the note's ties). Returns
    ``(scores, probabilities)``: the distinct scores, increasing, and :math:`\\Pr[u = s]` for each.
    ``log_pmf_row`` is a normalised log output distribution, ``hellinger_row`` the distance of each
    output to the true posterior (same shape) and ``atol`` a tolerance in ``[0, 1e-6]``.
    """
    lp, h = _row_and_distances(log_pmf_row, hellinger_row)
    atol = validation.scalar(validation.in_range(atol, "atol", 0.0, 1e-6, open_low=False, open_high=False), "atol")
    order = np.argsort(-h, kind="stable")  # increasing score -h
    score, p = -h[order], np.exp(lp[0][order])
    new_atom = np.concatenate([[True], np.diff(score) > atol])
    ids = np.cumsum(new_atom) - 1
    return score[new_atom], np.bincount(ids, weights=p)


def lemma_violation(scores: np.ndarray, probs: np.ndarray, epsilon: float, delta: float, *, shift: float = 0.0,
                    log_dilation: float = 0.0, atol: float = 1e-12) -> dict[str, float]:
    """How far the note's sliding (Lemma 3.1) or dilation (Lemma 3.2) inequality fails on a discrete score law.

    For every atom :math:`s` the lemma claims :math:`\\Pr[u = s] \\le e^{\\varepsilon/2}\\Pr[u = T(s)] +
    \\delta/2` with :math:`T(s) = s + \\Delta` (``shift``) or :math:`T(s) = e^{\\lambda}s`
    (``log_dilation``); both may be given (dilation after the shift). :math:`\\Pr[u = T(s)]` is the
    probability of the atom within ``atol`` of :math:`T(s)`, and 0 if there is none: for a
    continuous noise density the lemmas compare densities, for a finite candidate set they compare
    point masses, and almost every :math:`T(s)` is not a score at all. One transform;
    :func:`lemma_violations` evaluates many at once.

    Returns
    -------
    dict
        ``violation``: :math:`\\max_s \\Pr[u = s] - e^{\\varepsilon/2}\\Pr[u = T(s)] - \\delta/2` (the lemma
        holds iff it is <= 0); ``score``: the atom attaining it; ``gap``: the smallest distance
        from a mapped score :math:`T(s)` that matched no atom to the nearest atom (how far the
        unmatched images are from being matched: compare with ``atol``); ``matched``: how many
        :math:`T(s)` matched an atom.
    """
    shift = validation.scalar(validation.in_range(shift, "shift", -np.inf, open_low=True), "shift")
    log_dilation = validation.scalar(validation.in_range(log_dilation, "log_dilation", -50.0, 50.0,
                                                       open_low=False, open_high=False), "log_dilation")
    out = lemma_violations(scores, probs, epsilon, delta, shift=shift, log_dilation=log_dilation, atol=atol)
    return {"violation": float(out["violation"]), "score": float(out["score"]), "gap": float(out["gap"]),
            "matched": int(out["matched"])}


def lemma_violations(scores: np.ndarray, probs: np.ndarray, epsilon: float, delta: float, *, shift: ArrayLike = 0.0,
                     log_dilation: ArrayLike = 0.0, atol: float = 1e-12) -> dict[str, np.ndarray]:
    """:func:`lemma_violation` for many transforms at once: ``shift`` and ``log_dilation`` are arrays that broadcast.

    Transform ``i`` is :math:`T_i(s) = (s + \\Delta_i) e^{\\lambda_i}`; every atom's image under
    every transform is matched against the atoms in one sorted search.

    Returns
    -------
    dict
        ``violation``, ``score``, ``gap`` (float arrays) and ``matched`` (int array), each of the
        broadcast shape of ``shift`` and ``log_dilation``, entry ``i`` being :func:`lemma_violation`
        of transform ``i``.

    Raises
    ------
    ValueError
        For scores that are not increasing, probabilities outside [0, 1], a non-finite shift, a
        log dilation outside [-50, 50], ``atol`` outside [0, 1e-6], or more than
        ``lib.validation.MAX_CELLS`` (transform, atom) cells.
    """
    s = validation.in_range(scores, "scores", -np.inf, open_low=True)
    p = validation.in_range(probs, "probs", 0.0, 1.0, open_low=False, open_high=False)
    if s.ndim != 1 or s.shape != p.shape or s.size == 0 or np.any(np.diff(s) <= 0):
        raise ValueError("scores must be a non-empty increasing 1-D array and probs the same shape (score_atoms)")
    epsilon = validation.scalar(validation.nonnegative(epsilon, "epsilon"), "epsilon")
    delta = validation.scalar(validation.in_range(delta, "delta", 0.0, 1.0, open_low=False, open_high=False), "delta")
    shift = validation.in_range(shift, "shift", -np.inf, open_low=True)
    log_dilation = validation.in_range(log_dilation, "log_dilation", -50.0, 50.0, open_low=False, open_high=False)
    atol = validation.scalar(validation.in_range(atol, "atol", 0.0, 1e-6, open_low=False, open_high=False), "atol")
    shift, log_dilation = validation.broadcast(shift=shift, log_dilation=log_dilation)
    validation.cells(shift.size * s.size, "lemma_violations (transforms x atoms)")
    image = (s + shift[..., None]) * np.exp(log_dilation)[..., None]
    j = np.clip(np.searchsorted(s, image), 1, s.size - 1) if s.size > 1 else np.zeros(image.shape, dtype=np.int64)
    near = np.where(np.abs(s[j - 1] - image) < np.abs(s[j] - image), j - 1, j) if s.size > 1 else j
    dist = np.abs(s[near] - image)
    hit = dist <= atol
    p_image = np.where(hit, p[near], 0.0)
    excess = p - np.exp(epsilon / 2) * p_image - delta / 2
    worst = np.argmax(excess, axis=-1)[..., None]
    return {"violation": np.take_along_axis(excess, worst, axis=-1)[..., 0], "score": s[worst[..., 0]],
            "gap": np.where(hit, np.inf, dist).min(axis=-1), "matched": hit.sum(axis=-1)}


def proof_delta(epsilon: ArrayLike, delta: ArrayLike) -> dict[str, np.ndarray | float]:
    """The :math:`\\delta` that the chain of the note's Lemma 3.3 carries, in units of ``delta``.

    ``as_written``: the chain keeps only the dilation's term, :math:`e^{\\varepsilon/2}\\delta/2` (the
    sliding step's :math:`\\delta/2` is dropped); ``both_terms``: the two lemmas' terms composed as in
    Nissim, Raskhodnikova and Smith, :math:`\\delta/2 + e^{\\varepsilon/2}\\delta/2`. The note concludes
    :math:`+\\delta`; the step is sound only where the value is at most ``delta``.
    """
    epsilon = validation.nonnegative(epsilon, "epsilon")
    delta = validation.open_unit(delta, "delta")
    half = np.exp(epsilon / 2) * delta / 2
    return {"as_written": half[()], "both_terms": (half + delta / 2)[()]}


# --- The Dirichlet mechanism at d = 2, exactly ----------------------------------------------

def beta_hockey_stick(u: ArrayLike, v: ArrayLike, epsilon: ArrayLike) -> np.ndarray:
    """Exact :math:`\\delta = \\sup_A P(A) - e^{\\varepsilon}Q(A)` for :math:`P = \\mathrm{Beta}(u)`, :math:`Q = \\mathrm{Beta}(v)`.

    For parameters with equal totals, :math:`u_1 + u_2 = v_1 + v_2` (the Dirichlet mechanism on
    replacement neighbours), :math:`\\log(p/q)(\\theta) = s\\,\\mathrm{logit}\\,\\theta + K` with
    :math:`s = u_1 - v_1` and :math:`K = \\log B(v) - \\log B(u)`: monotone, so the optimal set
    is a half line :math:`\\{\\theta > t\\}` (or :math:`<`) with :math:`\\mathrm{logit}\\,t =
    (\\varepsilon - K)/s`, and :math:`\\delta = P(A) - e^{\\varepsilon}Q(A)` in regularised
    incomplete Beta functions. No numerical integration or root finding is needed.

    Parameters
    ----------
    u, v : array_like, shape (..., 2)
        Positive Beta parameters with equal totals; leading axes broadcast.
    epsilon : array_like
        :math:`\\varepsilon \\ge 0`, broadcast against the leading axes.
    """
    u = validation.vectors(u, "u", positive_entries=True)
    v = validation.vectors(v, "v", positive_entries=True)
    if u.shape[-1] != 2 or v.shape[-1] != 2:
        raise ValueError("u and v must be Beta parameters (length 2 along the last axis)")
    u, v = validation.broadcast(u=u, v=v)
    if not np.allclose(u.sum(axis=-1), v.sum(axis=-1), rtol=1e-12, atol=0):
        raise ValueError("u and v must have equal totals u1 + u2 = v1 + v2 (replacement neighbours)")
    epsilon = validation.nonnegative(epsilon, "epsilon")
    s = u[..., 0] - v[..., 0]
    log_b = special.betaln
    k = log_b(v[..., 0], v[..., 1]) - log_b(u[..., 0], u[..., 1])
    s, k, epsilon = validation.broadcast(s=s, k=k, epsilon=epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = special.expit((epsilon - k) / s)
    up = s > 0  # p/q increasing in theta: A = {theta > t}
    pa = _beta_tail(up, u[..., 0], u[..., 1], t)
    qa = _beta_tail(up, v[..., 0], v[..., 1], t)
    with np.errstate(over="ignore"):  # e^eps = inf beyond eps = 709: then only Q(A) = 0 leaves a term
        eq = np.where(qa > 0, np.exp(epsilon) * np.where(qa > 0, qa, 1.0), 0.0)
        out = np.where(s == 0, np.maximum(-np.expm1(np.minimum(epsilon, 1.0)), 0.0), np.maximum(pa - eq, 0.0))
    return out[()]


def _beta_tail(up, a, b, t):
    """``betaincc(a, b, t)`` where ``up`` (the mass above ``t``), ``betainc(a, b, t)`` elsewhere.

    Each entry is evaluated by the one function it needs (not both and a choice), element by
    element, so the values are those of ``np.where(up, betaincc(a, b, t), betainc(a, b, t))``.
    """
    a, b = np.broadcast_to(a, t.shape), np.broadcast_to(b, t.shape)
    out = np.empty(t.shape)
    out[up] = special.betaincc(a[up], b[up], t[up])
    low = ~up
    out[low] = special.betainc(a[low], b[low], t[low])
    return out


def _pair_deltas(r, alpha, n, epsilon, a):
    u = np.stack([r * a + alpha, r * (n - a) + alpha], axis=1)
    v = np.stack([r * (a + 1) + alpha, r * (n - a - 1) + alpha], axis=1)
    return np.maximum(beta_hockey_stick(u, v, epsilon), beta_hockey_stick(v, u, epsilon))


def dirichlet_worst_delta(r: float, alpha: float, n: int, epsilon: float, *, counts: ArrayLike | None = None) -> float:
    """Exact worst-case :math:`\\delta` of the Dirichlet mechanism :math:`\\mathrm{Beta}(r c + \\alpha)` over all neighbours of total ``n``.

    The pairs are ``(a, a + 1)`` for ``a`` in ``counts`` (default: all ``0 .. n - 1``), both directions.
    ``r`` and ``alpha`` are positive scalars, ``epsilon`` a non-negative scalar, ``n`` at most
    :data:`MAX_EXACT_N`, ``counts`` integers in ``[0, n - 1]``.
    """
    r = validation.scalar(validation.positive(r, "r"), "r")
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    n = validation.integer(n, "n", 1, MAX_EXACT_N)
    epsilon = validation.scalar(validation.nonnegative(epsilon, "epsilon"), "epsilon")
    a = np.arange(n) if counts is None else _counts_1d(counts, "counts", 0, n - 1)
    return float(_pair_deltas(r, alpha, n, epsilon, a).max())


def dirichlet_exact_scale(alpha: float, n: int, epsilon: float, delta: float) -> float:
    """Largest scale :math:`r` with exact worst-case :math:`\\delta` at most ``delta`` (bisection in log r).

    Raises
    ------
    ValueError
        When no ``r`` in [1e-8, 1e3] meets the target, the bisection does not converge, or
        ``n`` exceeds :data:`MAX_EXACT_N`.
    """
    alpha = validation.scalar(validation.positive(alpha, "alpha"), "alpha")
    n = validation.integer(n, "n", 1, MAX_EXACT_N)
    epsilon = validation.scalar(validation.positive(epsilon, "epsilon"), "epsilon")
    delta = validation.scalar(validation.open_unit(delta, "delta"), "delta")
    # Cutting planes: bisect on a few pairs (the two ends), then check every pair at the
    # result; a violating pair joins the set and the bisection restarts. Exact, and at
    # large n far cheaper than bisecting over all n pairs.
    active = {0, n - 1}
    for _ in range(_BISECTION_STEPS):
        counts = np.array(sorted(active))
        lo, hi = np.log(1e-8), np.log(1e3)
        if dirichlet_worst_delta(np.exp(lo), alpha, n, epsilon) > delta:
            raise ValueError(f"no scale r >= 1e-8 meets delta = {delta:g} at epsilon = {epsilon:g} "
                             f"with alpha = {alpha:g}")
        if dirichlet_worst_delta(np.exp(hi), alpha, n, epsilon, counts=counts) > delta:
            for _ in range(_BISECTION_STEPS):
                mid = (lo + hi) / 2
                if dirichlet_worst_delta(np.exp(mid), alpha, n, epsilon, counts=counts) <= delta:
                    lo = mid
                else:
                    hi = mid
                if hi - lo < 1e-10:
                    break
            else:  # pragma: no cover
                raise ValueError("dirichlet_exact_scale: bisection did not converge")
        else:
            lo = hi
        every = _pair_deltas(np.exp(lo), alpha, n, epsilon, np.arange(n))
        worst = int(np.argmax(every))
        if every[worst] <= delta:
            return float(np.exp(lo))
        active.add(worst)
    raise ValueError("dirichlet_exact_scale: cutting planes did not converge")  # pragma: no cover

