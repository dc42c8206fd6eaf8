"""The tempered logistic posterior: its log density, its mode and the sampler (Geumlek et al. 2017, eq. (6)).

:func:`log_likelihood` in row blocks, :func:`mode` by Newton's method along decreasing
:math:`n\\beta / \\rho` (batched over settings), and :func:`sample`: many chains for
many settings (:class:`Settings`) at once, independence Metropolis-Hastings with the
Laplace approximation at the mode as proposal, optionally interleaved with MALA steps.
The sampler is approximate; the privacy theorems are about exact samples.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg, special

from lib import validation
from lib.validation import SeedLike


#: Largest number of margins (rows x settings x chains) that :func:`sample` holds at once
#: (several float64 arrays of this size; the paper's full run of chapter 11 needs 1.6e8).
MAX_MARGINS = 2 * 10**8
#: Largest amount of work of :func:`sample`: margins x sweeps x (kernel steps per sweep).
MAX_SAMPLER_WORK = 10**11
#: Largest number of Newton iterations of :func:`mode` (Newton converges in tens).
MAX_NEWTON = 10**4
#: Relative slack on :math:`\|x_i\| \le c` in :func:`sample`: the rounding of a normalisation.
NORM_SLACK = 1e-12


# ----------------------------------------------------------------------------- the posteriors of Figure 3


class Settings(NamedTuple):
    """One posterior per entry: :math:`p_{\\beta,\\rho}` truncated to :math:`\\|w\\| \\le` ``radius``.

    Attributes
    ----------
    beta, rho, radius : ndarray, shape (S,)
        Prior precision per row, likelihood temperature, support radius (inf: none).
    """

    beta: np.ndarray
    rho: np.ndarray
    radius: np.ndarray


# ----------------------------------------------------------------------------- log density


def checked_data(X: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` checked: ``X`` finite of shape (n, d) with n, d >= 1; ``y`` of shape (n,) with labels 0 and 1.

    Labels may be integers, booleans or floats equal to 0 or 1; anything else
    (2, -1, 0.5, NaN) is refused rather than read as a class.
    """
    X = validation.in_range(X, "X", -np.inf, open_low=True)
    y_arr = validation.as_float(y, "y") if np.asarray(y).dtype.kind != "b" else np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1 or y_arr.shape != (X.shape[0],):
        raise ValueError(f"X must have shape (n, d) with n, d >= 1 and y shape (n,); got {X.shape} and {y_arr.shape}")
    if not np.isin(y_arr, (0, 1)).all():
        bad = y_arr[~np.isin(y_arr, (0, 1))][0]
        raise ValueError(f"y must hold labels 0 and 1; got {bad!r}")
    return X, np.asarray(y)


def _signed(X, y):
    X, y = checked_data(X, y)
    return X * (2.0 * y - 1.0)[:, None]


def checked_weights(W: ArrayLike, d: int) -> np.ndarray:
    """``W`` as a finite float array whose last axis has length ``d``."""
    W = validation.in_range(W, "W", -np.inf, open_low=True)
    if W.ndim < 1 or W.shape[-1] != d:
        raise ValueError(f"W must have shape (..., {d}) (the columns of X); got {W.shape}")
    return W


def log_likelihood(W: ArrayLike, X: ArrayLike, y: ArrayLike) -> np.ndarray | float:
    """:math:`\\sum_i \\log p(y_i \\mid w, x_i)` for every row ``w`` of ``W`` (shape (..., d)).

    ``X`` finite of shape (n, d), ``y`` labels 0 and 1 of shape (n,), ``W`` finite.
    """
    Z = _signed(X, y)
    W = checked_weights(W, Z.shape[1])
    ll, _ = _data_terms(W.reshape(-1, Z.shape[1]), Z)
    return ll.reshape(W.shape[:-1])[()]


#: Margins, and bytes of rows of ``Z``, per block of the passes over the rows in
#: :func:`_data_terms` and :func:`_data_hessian`: a block of margins and its rows stay
#: in the CPU's cache while they are used (for the gradient, a second product with the
#: same rows), instead of all margins being written out and read back.
_BLOCK_MARGINS = 2**16
_BLOCK_BYTES = 2**19


def _row_blocks(n, width, d):
    """``slice`` objects covering ``range(n)``: blocks of rows of ``width`` margins and ``d`` doubles each."""
    b = max(64, min(_BLOCK_MARGINS // max(int(width), 1), _BLOCK_BYTES // (8 * max(int(d), 1))))
    return [slice(i, min(i + b, n)) for i in range(0, n, b)]


def _data_terms(W, Z, *, value=True, grad=False):
    """:math:`\\sum_i \\log\\sigma(z_i^\\top w)` and :math:`\\sum_i \\sigma(-z_i^\\top w) z_i` for each row ``w`` of ``W``.

    The log-likelihood of the signed rows ``Z`` (n, d) and its gradient, for
    ``W`` of shape (k, d), in one pass over blocks of rows: a block's margins,
    their :math:`\\log\\sigma` and :math:`\\sigma(-m)` are used while they are
    in cache. Both come from one :math:`e = \\exp(-|m|)`:
    :math:`-\\log\\sigma(m) = \\max(-m, 0) + \\log(1 + e)` and
    :math:`\\sigma(-m) = e/(1 + e)` for :math:`m \\ge 0`, :math:`1/(1 + e)` otherwise.
    The sums run block by block, so they equal sums over all rows at once up to rounding.

    Returns
    -------
    ll : ndarray, shape (k,), or None (``value=False``)
    G : ndarray, shape (k, d), or None (``grad=False``)
    """
    k, d = W.shape
    ll = np.zeros(k) if value else None
    G = np.zeros((k, d)) if grad else None
    for rows in _row_blocks(Z.shape[0], k, d):
        M = Z[rows] @ W.T  # (b, k)
        e = np.abs(M)
        np.negative(e, out=e)
        np.exp(e, out=e)
        if grad:
            s = np.where(M >= 0, e, 1.0)
            s /= 1.0 + e
            G += s.T @ Z[rows]
        if value:  # log(1 + e) + max(-m, 0), in place
            np.log1p(e, out=e)
            e -= np.minimum(M, 0.0, out=M)
            ll -= e.sum(axis=0)
    return ll, G


def _logpost(W, Z, n_beta, rho, radius, *, grad=False):
    """Unnormalised log density of (S, K, d) points (-inf outside the support), and its gradient if ``grad``.

    Returns
    -------
    lp : ndarray, shape (S, K)
    G : ndarray, shape (S, K, d), or None
        :math:`\\rho Z^\\top \\sigma(-Z w) - n\\beta w` (the gradient inside the support).
    """
    S, K, d = W.shape
    ll, G = _data_terms(W.reshape(-1, d), Z, grad=grad)
    sq = np.einsum("skd,skd->sk", W, W)
    out = rho[:, None] * ll.reshape(S, K) - 0.5 * n_beta[:, None] * sq
    lp = np.where(sq <= radius[:, None] ** 2, out, -np.inf)
    if grad:
        G = rho[:, None, None] * G.reshape(S, K, d) - n_beta[:, None, None] * W
    return lp, G


def _data_hessian(Z, Z32, w, *, grad=False):
    """:math:`D(w) = \\sum_i \\sigma(m_i)(1 - \\sigma(m_i)) z_i z_i^\\top`, and :math:`Z^\\top\\sigma(-Zw)` if ``grad``.

    One pass over blocks of rows: the margins :math:`m = Zw` and the gradient in
    double precision; :math:`D` as symmetric rank-k products of each block in
    single precision (``Z32``, the rows scaled by :math:`\\sqrt{\\sigma(m)(1-\\sigma(m))}`),
    summed over the blocks in double precision.

    Returns
    -------
    D : ndarray, shape (d, d)
    g : ndarray, shape (d,), or None
    """
    n, d = Z.shape
    D = np.zeros((d, d))
    g = np.zeros(d) if grad else None
    for rows in _row_blocks(n, 1, d):
        Zb = Z[rows]
        m = Zb @ w
        if grad:
            g += Zb.T @ special.expit(-m)
        p = special.expit(m)
        A = Z32[rows] * np.sqrt(p * (1 - p)).astype(np.float32)[:, None]
        D += A.T @ A
    return D, g


#: Steps after the stopping rule (stage 4 of :func:`mode`), at most: each shrinks the
#: error by the single-precision Hessian's factor (about 1e-7) until rounding stops it.
_POLISH_STEPS = 8
#: Relative step below which :func:`mode` leaves the path of Newton steps for
#: steps with a fixed Hessian (the error is then about its square).
_COARSE = 1e-3


def _small(step, w, tol):
    """Is each row of ``step`` below ``tol`` relative to the matching row of ``w`` (max norm)?"""
    return np.abs(step).max(axis=-1) < tol * (1 + np.abs(w).max(axis=-1))


def _newton(Z, Z32, w, r, nb, tol, max_iter, setting):
    """Newton's method for one setting from ``w`` until a step is below ``tol``: ``(w, H, step)``.

    ``H`` is the Hessian at the last iterate, from which the step to ``w`` is below ``tol``.
    """
    eye = np.eye(Z.shape[1])
    for _ in range(max_iter):
        D, g = _data_hessian(Z, Z32, w, grad=True)
        H = r * D + nb * eye
        step = linalg.solve(H, r * g - nb * w, assume_a="pos")
        w = w + step
        if _small(step, w, tol):
            return w, H, step
    raise ValueError(f"Newton's method did not converge in max_iter={max_iter} iterations "
                     f"(beta={setting[0]:g}, rho={setting[1]:g}, tol={tol:g})")


def _fixed_hessian_steps(Z, W, H, r, nb, first, n_steps, tol=None):
    """Steps :math:`w \\leftarrow w + H^{-1}\\nabla` for all settings at once while each shrinks by half.

    ``W`` (k, d) the points, ``H`` (k, d, d) their fixed Hessians, ``first``
    (k,) the size of each setting's previous step (inf: none). The gradients
    of all settings are computed in one pass over the rows (:func:`_data_terms`).
    With ``tol``, a setting also stops after a step below ``tol`` (relative).
    Returns the points and the size of each setting's last step taken.
    """
    L = np.linalg.cholesky(H)
    W, previous = W.copy(), np.array(first, dtype=float)
    going = np.ones(W.shape[0], dtype=bool)
    for _ in range(n_steps):
        if not going.any():
            break
        i = np.flatnonzero(going)
        _, g = _data_terms(W[i], Z, value=False, grad=True)
        g = r[i, None] * g - nb[i, None] * W[i]
        step = np.stack([linalg.cho_solve((L[j], True), g[t]) for t, j in enumerate(i)])
        size = np.abs(step).max(axis=1)
        take = size < 0.5 * previous[i]
        W[i[take]] += step[take]
        previous[i[take]] = size[take]
        going[i[~take]] = False
        if tol is not None:
            going[i[take & _small(step, W[i], tol)]] = False
    return W, previous


def mode(X: ArrayLike, y: ArrayLike, beta: ArrayLike, rho: ArrayLike, *, tol: float = 1e-9,
         max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Mode :math:`\\hat w` and Hessian :math:`H` of :math:`-\\log p_{\\beta,\\rho}` for each setting.

    The mode solves :math:`\\rho\\sum_i \\sigma(-w^\\top z_i) z_i = n\\beta w`, so it
    depends on the setting only through :math:`\\kappa = n\\beta/\\rho`; the
    Hessian is :math:`\\rho(D(w) + \\kappa I)`, :math:`D` its data part, which is
    summed in single precision (it only scales the steps; the gradient and the
    stopping rules are in double precision). The settings are solved in four stages:

    1. In decreasing :math:`\\kappa` (a path of modes, from the one nearest 0,
       where the first setting starts), Newton's method (the objective is
       :math:`n\\beta`-strongly convex) until a step is below ``1e-3``
       (relative), started from the previous mode by one Newton step for the
       new :math:`\\kappa` with the previous data Hessian (the gradient there is
       :math:`\\rho(\\kappa_{\\rm prev} - \\kappa)w`, so that step needs no pass
       over the data). A setting whose step is already below ``tol`` is done.
    2. All other settings at once: steps with the last Hessian fixed while they
       shrink, until a step is below ``tol``.
    3. The Hessian at that point; the Newton step from it must be below ``tol``.
    4. Steps with that Hessian while they shrink (at most 8): the mode is exact
       to rounding on every CPU. Stopped at a tolerance, it would depend on where
       the last step landed, and that moves with the last bits of ``expit``.

    A setting for which stage 2 or 3 fails (the steps do not shrink) is solved by
    Newton's method from where it stands. Raises ValueError if a setting does not
    converge in ``max_iter`` Newton iterations.

    Returns
    -------
    w_hat : ndarray, shape (S, d)
    hessian : ndarray, shape (S, d, d)
        At a point from which the Newton step (to ``w_hat``, before the
        steps of stage 4) is below ``tol``; symmetric positive definite (at least
        :math:`n\\beta I`).
    """
    Z = _signed(X, y)
    n, d = Z.shape
    beta = np.atleast_1d(validation.positive(beta, "beta"))
    rho = np.atleast_1d(validation.in_range(rho, "rho", 0.0, 1.0, open_low=True, open_high=False))
    beta, rho = validation.broadcast(beta=beta, rho=rho)
    if beta.ndim != 1:
        raise ValueError(f"beta and rho must be scalars or 1-D (one entry per setting); got shape {beta.shape}")
    tol = validation.scalar(validation.open_unit(tol, "tol"), "tol")
    max_iter = validation.integer(max_iter, "max_iter", 1, MAX_NEWTON)
    with np.errstate(over="ignore"):
        n_beta_finite = np.all(np.isfinite(n * beta))
    if not n_beta_finite:
        raise ValueError(f"n * beta overflows (n = {n} rows); beta must be at most {np.finfo(float).max / n:.3g}")
    validation.cells(beta.size * d * d, "the Hessians (settings x d x d)")
    Z32 = Z.astype(np.float32)
    S = beta.size
    nb = n * beta
    with np.errstate(over="ignore"):
        kappa = nb / rho
    W, H, last = np.zeros((S, d)), np.zeros((S, d, d)), np.full(S, np.inf)
    done = np.zeros(S, dtype=bool)
    eye = np.eye(d)
    # 1. the path, coarsely
    w, D, kappa_prev = np.zeros(d), None, None
    for s in np.argsort(-kappa, kind="stable"):
        r, kap = rho[s], kappa[s]
        if D is not None and np.isfinite(kap) and np.isfinite(kappa_prev) and kap != kappa_prev:
            w = w + linalg.solve(D + kap * eye, (kappa_prev - kap) * w, assume_a="pos")
        for _ in range(max_iter):
            D, g = _data_hessian(Z, Z32, w, grad=True)
            H[s] = r * D + nb[s] * eye
            step = linalg.solve(H[s], r * g - nb[s] * w, assume_a="pos")
            w = w + step
            if _small(step, w, _COARSE):
                break
        else:
            raise ValueError(f"Newton's method did not converge in max_iter={max_iter} iterations "
                             f"(beta={beta[s]:g}, rho={r:g}, tol={tol:g})")
        W[s], last[s], done[s], kappa_prev = w, np.abs(step).max(), _small(step, w, tol), kap
    # 2. the other settings with their Hessians fixed, to tol
    todo = np.flatnonzero(~done)
    if todo.size:
        W[todo], size = _fixed_hessian_steps(Z, W[todo], H[todo], rho[todo], nb[todo], last[todo], max_iter, tol)
        ok = size < tol * (1 + np.abs(W[todo]).max(axis=1))
        # 3. the Hessian there, and the Newton step from it
        fresh = todo[ok]
        if fresh.size:
            for s in fresh:
                H[s] = rho[s] * _data_hessian(Z, Z32, W[s])[0] + nb[s] * eye
            _, g = _data_terms(W[fresh], Z, value=False, grad=True)
            g = rho[fresh, None] * g - nb[fresh, None] * W[fresh]
            step = np.stack([linalg.solve(H[s], g[t], assume_a="pos") for t, s in enumerate(fresh)])
            W[fresh] += step
            last[fresh] = np.abs(step).max(axis=1)
            done[fresh[_small(step, W[fresh], tol)]] = True
        # a setting whose steps did not shrink: Newton's method from where it stands
        for s in np.flatnonzero(~done):
            W[s], H[s], step = _newton(Z, Z32, W[s], rho[s], nb[s], tol, max_iter, (beta[s], rho[s]))
            last[s] = np.abs(step).max()
    # 4. polish: steps with the final Hessians while they shrink
    W, _ = _fixed_hessian_steps(Z, W, H, rho, nb, last, _POLISH_STEPS)
    return W, H


# ----------------------------------------------------------------------------- the sampler


class Samples(NamedTuple):
    """Output of :func:`sample`.

    Attributes
    ----------
    w : ndarray, shape (S, K, d)
        The last state of each of K chains for each of S settings: one release each.
    acceptance_independence, acceptance_mala : ndarray, shape (S,)
        Share of accepted proposals of each kernel.
    trace : ndarray, shape (S, K, T // thin) + probe.shape[1:], or None
        ``w @ probe`` every ``thin`` sweeps (for effective sample sizes).
    w_hat : ndarray, shape (S, d)
        The modes.
    """

    w: np.ndarray
    acceptance_independence: np.ndarray
    acceptance_mala: np.ndarray
    trace: np.ndarray | None
    w_hat: np.ndarray


def _setting(setting):
    """``(beta, rho, radius)`` of a :class:`Settings`, checked and broadcast to one 1-D shape."""
    if not isinstance(setting, tuple) or len(setting) != 3:
        raise validation.ArgumentTypeError(f"setting must be a Settings (beta, rho, radius); got "
                                          f"{type(setting).__name__} {setting!r:.60}")
    beta = np.atleast_1d(validation.positive(setting[0], "setting.beta"))
    rho = np.atleast_1d(validation.in_range(setting[1], "setting.rho", 0.0, 1.0, open_low=True, open_high=False))
    radius = np.atleast_1d(validation.as_float(setting[2], "setting.radius"))
    if not np.all(radius > 0):  # NaN fails too; inf (no truncation) is allowed
        raise ValueError("setting.radius must be in (0, inf] (inf: no truncation)")
    beta, rho, radius = validation.broadcast(**{"setting.beta": beta, "setting.rho": rho, "setting.radius": radius})
    if beta.ndim != 1 or beta.size == 0:
        raise ValueError(f"setting's fields must be 1-D with one entry per setting; got shape {beta.shape}")
    return beta, rho, radius


def _mode_cache(mode_cache, S, d):
    """``(w_hat, hessian)`` of shapes (S, d) and (S, d, d), finite."""
    if not isinstance(mode_cache, tuple) or len(mode_cache) != 2:
        raise validation.ArgumentTypeError(f"mode_cache must be the pair (w_hat, hessian) of mode(); got "
                                          f"{type(mode_cache).__name__}")
    w_hat = validation.in_range(mode_cache[0], "mode_cache w_hat", -np.inf, open_low=True)
    H = validation.in_range(mode_cache[1], "mode_cache hessian", -np.inf, open_low=True)
    if w_hat.shape != (S, d) or H.shape != (S, d, d):
        raise ValueError(f"mode_cache must hold arrays of shapes ({S}, {d}) and ({S}, {d}, {d}) (the settings and "
                         f"the columns of X); got {w_hat.shape} and {H.shape}")
    return w_hat, H


def sample(X: ArrayLike, y: ArrayLike, setting: Settings, n_chains: int, n_sweeps: int, rng: SeedLike = None, *,
           mala_steps: int = 0, mala_step: float = 0.5, independence: bool = True, probe: ArrayLike | None = None,
           thin: int = 1, mode_cache: tuple[np.ndarray, np.ndarray] | None = None, c: float = 1.0) -> Samples:
    """Approximate draws from :math:`p_{\\beta,\\rho}(w \\mid D)` for every setting, many chains at once.

    Each chain starts from a draw of the Laplace approximation
    :math:`N(\\hat w, H^{-1})` and makes ``n_sweeps`` sweeps; a sweep is one
    independence Metropolis-Hastings step with that Gaussian as proposal
    followed by ``mala_steps`` Metropolis-adjusted Langevin steps preconditioned
    by :math:`H^{-1}` (step size ``mala_step``). Both kernels leave the posterior
    invariant (the truncation of OPS included: a proposal outside the ball is
    rejected), so the chains converge to it; the last state of each chain is
    one release.

    Parameters
    ----------
    X : ndarray, shape (n, d)
    y : ndarray of {0, 1}, shape (n,)
    setting : Settings
        S posteriors (:func:`settings`).
    n_chains : int
        K chains per setting.
    n_sweeps : int
        Sweeps per chain (>= 1).
    rng : Generator or int or None
    mala_steps : int
        MALA steps per sweep (>= 0).
    mala_step : float
        MALA step :math:`h` in units of :math:`H^{-1}`: proposal
        :math:`w + \\tfrac{h^2}{2}H^{-1}\\nabla\\log p + h H^{-1/2}\\xi`.
    independence : bool
        False: no independence steps, and every chain starts at the mode (a
        MALA-only reference run, a different kernel from the default one).
    probe : ndarray, shape (d,) or (d, p), optional
        Directions whose projections ``w @ probe`` are recorded every ``thin`` sweeps.
    thin : int
        Record the probe every ``thin``-th sweep.
    mode_cache : tuple (w_hat, hessian), optional
        Precomputed :func:`mode` for these settings.
    c : float, default 1.0
        The bound :math:`\\|x_i\\| \\le c` of Assumption 1 that the settings were
        computed with (:func:`settings`); a row of ``X`` of larger norm (beyond
        the rounding of a normalisation, :data:`NORM_SLACK`) is a ValueError, since
        no privacy statement of this module holds for it.

    Returns
    -------
    Samples

    Raises
    ------
    ValueError
        For invalid input, for more than :data:`MAX_MARGINS` margins (rows x
        settings x chains) or more than :data:`MAX_SAMPLER_WORK` margin evaluations
        (times sweeps and kernel steps), and when Newton's method does not converge
        (:func:`mode`).
    """
    rng = validation.generator(rng)
    K = validation.integer(n_chains, "n_chains")
    T = validation.integer(n_sweeps, "n_sweeps")
    mala_steps = validation.integer(mala_steps, "mala_steps", 0)
    h = validation.scalar(validation.positive(mala_step, "mala_step"), "mala_step")
    if not isinstance(independence, (bool, np.bool_)):
        raise validation.ArgumentTypeError(f"independence must be a bool; got {type(independence).__name__}")
    Z = _signed(X, y)
    n, d = Z.shape
    c = validation.scalar(validation.positive(c, "c"), "c")
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    if not np.all(norms <= c * (1 + NORM_SLACK)):
        i = int(np.argmax(norms))
        raise ValueError(f"X must have rows of Euclidean norm at most c = {c:g} (Assumption 1, on which every "
                         f"privacy statement rests); row {i} has norm {norms[i]:.6g}")
    beta, rho, radius = _setting(setting)
    S = beta.size
    if S * K > validation.MAX_CELLS // d or n * S * K > MAX_MARGINS:
        raise ValueError(f"n_chains = {K} for {S} settings of {n} rows and {d} columns would need {n * S * K} "
                         f"margins; at most {MAX_MARGINS} (and {validation.MAX_CELLS} chain coordinates) are allowed")
    work = n * S * K * T * (int(bool(independence)) + mala_steps)
    if work > MAX_SAMPLER_WORK:
        raise ValueError(f"n_sweeps = {T} with mala_steps = {mala_steps} would evaluate {work:.3g} margins; at most "
                         f"{MAX_SAMPLER_WORK:.0e} are allowed")
    thin = validation.integer(thin, "thin")
    if probe is not None:
        probe = validation.in_range(probe, "probe", -np.inf, open_low=True)
        if probe.ndim not in (1, 2) or probe.shape[0] != d:
            raise ValueError(f"probe must have shape ({d},) or ({d}, p); got {probe.shape}")
        thin = validation.integer(thin, "thin", 1, T)
        validation.cells(S * K * (T // thin) * (probe.shape[1] if probe.ndim == 2 else 1), "the trace")
    n_beta = n * beta
    if mode_cache is None:
        w_hat, H = mode(X, y, beta, rho)
    else:
        w_hat, H = _mode_cache(mode_cache, S, d)
    # H = L L^T; a draw of N(0, H^{-1}) is L^{-T} xi, and H^{-1} g = L^{-T} L^{-1} g.
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError as exc:
        raise ValueError("mode_cache's Hessians must be symmetric positive definite") from exc
    Linv = np.linalg.inv(L)  # (S, d, d), lower triangular

    def gauss(shape_k):  # N(0, H^{-1}) draws (S, K, d) and their whitened norms
        xi = rng.standard_normal((S, shape_k, d))
        return np.einsum("sji,skj->ski", Linv, xi), xi

    def log_q(W):  # log N(w_hat, H^{-1}) up to a constant
        u = np.einsum("sij,skj->ski", L.transpose(0, 2, 1), W - w_hat[:, None, :])
        return -0.5 * np.einsum("ski,ski->sk", u, u)

    def precond(G):  # H^{-1} G
        u = np.einsum("sij,skj->ski", Linv, G)
        return np.einsum("sji,skj->ski", Linv, u)

    if not (independence or mala_steps):
        raise ValueError("at least one kernel is needed: independence=True or mala_steps >= 1")
    dw, _ = gauss(K)
    W = w_hat[:, None, :] + (dw if independence else 0.0)
    lp, grad = _logpost(W, Z, n_beta, rho, radius, grad=bool(mala_steps))
    if not np.isfinite(lp).all():  # a start outside the ball: start at the mode instead
        W = np.where(np.isfinite(lp)[..., None], W, w_hat[:, None, :])
        lp, grad = _logpost(W, Z, n_beta, rho, radius, grad=bool(mala_steps))
    lq = log_q(W)
    acc_i = np.zeros(S)
    acc_m = np.zeros(S)
    trace = None if probe is None else np.empty((S, K, T // thin) + np.shape(probe)[1:])
    for t in range(T):
        if not independence:
            ok = np.zeros((S, K), dtype=bool)
        if independence:  # independence MH
            dw, _ = gauss(K)
            P = w_hat[:, None, :] + dw
            lp_p, g_p = _logpost(P, Z, n_beta, rho, radius, grad=bool(mala_steps))
            lq_p = log_q(P)
            log_a = (lp_p - lp) - (lq_p - lq)
            ok = np.log(rng.random((S, K))) < log_a
            W = np.where(ok[..., None], P, W)
            lp, lq = np.where(ok, lp_p, lp), np.where(ok, lq_p, lq)
            if mala_steps:
                grad = np.where(ok[..., None], g_p, grad)
        acc_i += ok.mean(axis=1)
        # preconditioned MALA
        for _ in range(mala_steps):
            noise, xi = gauss(K)
            mean = W + 0.5 * h**2 * precond(grad)
            P = mean + h * noise
            lp_p, g_p = _logpost(P, Z, n_beta, rho, radius, grad=True)
            fin = np.isfinite(lp_p)
            mean_back = P + 0.5 * h**2 * precond(g_p)

            def lk(a, b):  # log N(a; b, h^2 H^{-1}) up to a constant
                u = np.einsum("sij,skj->ski", L.transpose(0, 2, 1), a - b)
                return -0.5 * np.einsum("ski,ski->sk", u, u) / h**2

            with np.errstate(invalid="ignore"):
                log_a = np.where(fin, lp_p - lp + lk(W, mean_back) - lk(P, mean), -np.inf)
            ok = np.log(rng.random((S, K))) < log_a
            W = np.where(ok[..., None], P, W)
            lp = np.where(ok, lp_p, lp)
            lq = np.where(ok, log_q(P), lq)
            grad = np.where(ok[..., None], g_p, grad)
            acc_m += ok.mean(axis=1)
        if trace is not None and (t + 1) % thin == 0 and (t + 1) // thin <= trace.shape[2]:
            trace[:, :, (t + 1) // thin - 1] = W @ probe
    return Samples(W, acc_i / T, acc_m / max(T * mala_steps, 1), trace, w_hat)
