"""Chapter 12's experiments with the smoothed-Hellinger mechanism: the head-to-head and the full-size audit.

:func:`head_to_head` compares, on one beta-binomial data set at one
:math:`(\\hat\\varepsilon, \\delta)`, the registered mechanisms of :data:`ENTRIES`: the
smoothed-Hellinger mechanism, the exponential mechanism with the global sensitivity, the
Dirichlet mechanism calibrated by Appendix B and by its exact :math:`\\delta`, and Laplace and
Gaussian noise on the count of ones, by the utility of the released posterior
(:func:`posterior_utility`). :func:`full_audit` runs the chapter's exact audit at full size
(``python -m lib.experiments.hellinger [--quick | --sweep]``; outside the book's CI budget).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from lib import validation
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet, renyi_divergence_dirichlet
from lib.mechanisms.dirichlet.order import optimal_order
from lib.mechanisms.hellinger import (MEMO_CELLS, MAX_CANDIDATES, SmoothedHellinger, candidates, geometry,
                                      hellinger_rows_beta, posteriors)
from lib.mechanisms.protocol import get
from lib.theory.hellinger_audit import MAX_AUDIT_CELLS, audit, audit_counts, dirichlet_exact_scale


# --- Utility of a released Beta/Dirichlet posterior ----------------------------------------

def posterior_utility(true_post, released_post, *, hellinger=None) -> dict:
    """Hellinger distance, :math:`KL(\\text{true} \\| \\text{released})` and posterior-mean error (L1 over categories / 2).

    Both arguments are positive Dirichlet parameters (``(..., k)``, ``k >= 2``) that broadcast together.
    ``hellinger``, if given, is :func:`lib.mechanisms.dirichlet.divergence.hellinger_dirichlet` of the
    two, already computed (a finite-output mechanism's scores): finite, non-negative, of the shape of
    the broadcast leading axes; it is returned as the distance, not recomputed.
    """
    true_post = validation.vectors(true_post, "true_post", positive_entries=True)
    released_post = validation.vectors(released_post, "released_post", positive_entries=True)
    true_post, released_post = validation.broadcast(true_post=true_post, released_post=released_post)
    if hellinger is None:
        hellinger = hellinger_dirichlet(true_post, released_post)
    else:
        hellinger = validation.nonnegative(hellinger, "hellinger")
        if hellinger.shape != true_post.shape[:-1]:
            raise ValueError(f"hellinger must have the shape of the leading axes, {true_post.shape[:-1]}; "
                             f"got {hellinger.shape}")
    mean_true = true_post / true_post.sum(axis=-1, keepdims=True)
    mean_rel = released_post / released_post.sum(axis=-1, keepdims=True)
    return {
        "hellinger": hellinger,
        "kl": renyi_divergence_dirichlet(true_post, released_post, 1.0),
        "mean_error": np.abs(mean_true - mean_rel).sum(axis=-1) / 2,
    }




# --- Head to head: one data set, every mechanism at the same (epsilon-hat, delta) -----------

class _Setting(NamedTuple):
    """The public values that the head-to-head's mechanisms are built from."""

    prior: np.ndarray
    n: int
    epsilon_hat: float
    delta: float
    alpha: float
    r_app_b: float
    r_exact: float | None


def _note(cls, s):
    return cls(s.prior, s.n, s.epsilon_hat, s.delta)


def _app_b(cls, s):
    return cls.from_concentration(s.r_app_b, s.alpha)


def _exact(cls, s):
    return None if s.r_exact is None else cls.from_concentration(s.r_exact, s.alpha)


def _laplace(cls, s):
    return cls(s.epsilon_hat, s.n, s.prior)


def _gaussian(cls, s):
    return cls(s.epsilon_hat, s.delta, s.n, s.prior)


ENTRIES = (("M_H", "smoothed_hellinger", _note), ("EM (global sens.)", "hellinger_em", _note),
           ("Dirichlet (App. B)", "dirichlet", _app_b), ("Dirichlet (exact d=2)", "dirichlet", _exact),
           ("Laplace", "count_laplace", _laplace), ("Gaussian", "count_gaussian", _gaussian))
"""The mechanisms of :func:`head_to_head`, in the order they draw: (display name, registry name,
builder ``(class, setting) -> object``, None to skip)."""

MECHANISMS = tuple(entry[0] for entry in ENTRIES)
"""The display names of :data:`ENTRIES`, the keys of :func:`head_to_head`'s result."""


@lru_cache(maxsize=8)
def _candidate_utility_memo(prior: tuple, counts: tuple) -> dict:
    util = _candidate_utility_plain(np.array(prior), np.array(counts))
    for value in util.values():
        value.flags.writeable = False
    return util


def _candidate_utility_plain(prior, counts):
    n = int(counts.sum())
    cand_post = posteriors(prior, candidates(n, 2))
    return posterior_utility(np.broadcast_to(posteriors(prior, counts), cand_post.shape), cand_post,
                             hellinger=hellinger_rows_beta(prior, counts))


def _candidate_utility(prior, counts) -> dict:
    """:func:`posterior_utility` of the true posterior ``prior + counts`` against every beta-binomial candidate.

    The candidates are :func:`lib.mechanisms.hellinger.candidates` ``(n, 2)``, the outputs of the
    finite-output mechanisms of :data:`ENTRIES`; the distances are their scores,
    :func:`lib.mechanisms.hellinger.hellinger_rows_beta` (computed once for both). Memoised on
    ``(prior, counts)`` (read-only arrays): the same data set is scored at every target and by both
    exponential mechanisms.
    """
    prior, counts = np.asarray(prior, dtype=float), np.asarray(counts)
    if int(counts.sum()) + 1 > MEMO_CELLS:
        return _candidate_utility_plain(prior, counts)
    return _candidate_utility_memo(tuple(prior.tolist()), tuple(counts.tolist()))


def _expected(log_p, util):
    """Exact expected utility of a finite-output mechanism (standard error 0): ``util`` at each output, weighted."""
    p = np.exp(log_p)
    return {key: (float(p @ value), 0.0) for key, value in util.items()}


def _monte_carlo(true_post, released_post):
    util = posterior_utility(np.broadcast_to(true_post, released_post.shape), released_post)
    m = released_post.shape[0]
    return {key: (float(v.mean()), float(v.std(ddof=1) / np.sqrt(m))) for key, v in util.items()}


@lru_cache(maxsize=256)
def _order_for(epsilon_hat: float, delta: float, reference: tuple):
    """:func:`lib.mechanisms.dirichlet.order.optimal_order`, memoised: a calibration depends on public values only."""
    return optimal_order(epsilon_hat, delta, np.array(reference))


@lru_cache(maxsize=256)
def _exact_scale_for(alpha: float, n: int, epsilon_hat: float, delta: float) -> float:
    """:func:`lib.theory.hellinger_audit.dirichlet_exact_scale`, memoised (data sets of one size share it)."""
    return dirichlet_exact_scale(alpha, n, epsilon_hat, delta)


def head_to_head(prior, counts, epsilon_hat, delta, *, reference, repeats=2000, rng=None, exact_dirichlet=True):
    """Utility of every mechanism of :data:`ENTRIES` on one data set at :math:`(\\hat\\varepsilon, \\delta)`.

    Parameters
    ----------
    prior : array_like, shape (2,)
        The Beta prior :math:`(\\alpha, \\beta)`, positive.
    counts : array_like of int, shape (2,)
        ``(ones, zeros)``, non-negative with a positive total :math:`n` (public).
    epsilon_hat, delta : float
        The common target :math:`(\\hat\\varepsilon, \\delta)`.
    reference : array_like, shape (2,)
        A public histogram of 2 positive counts for Appendix B's order.
    repeats : int, default 2000
        Draws of each Monte Carlo mechanism (at least 2).
    rng : numpy.random.Generator or int or None
        Source of randomness.
    exact_dirichlet : bool, default True
        Include ``Dirichlet (exact d=2)`` (a bisection over all ``n`` pairs).

    Returns
    -------
    dict
        ``{display name: {"hellinger" | "kl" | "mean_error": (mean, standard error)}}`` plus
        ``"_calibration"`` with the Dirichlet parameters and the Gaussian ``sigma``.

    Notes
    -----
    * ``M_H`` (:class:`lib.mechanisms.hellinger.SmoothedHellinger`): the note's mechanism at the
      note's :math:`(\\varepsilon, \\delta) = (\\hat\\varepsilon, \\delta)`; ``EM (global sens.)``
      (:class:`lib.mechanisms.hellinger.HellingerExponential`): the same scores with the global
      sensitivity, :math:`\\hat\\varepsilon`-DP. Both exact expectations over the finite output
      set (O(n) per data set).
    * ``Dirichlet (App. B)`` (:class:`lib.mechanisms.dirichlet.mechanism.DirichletMechanism`):
      Algorithm 1 at the order of :func:`lib.mechanisms.dirichlet.order.optimal_order` for the
      public ``reference`` histogram (Appendix B, eq. (14)); ``Dirichlet (exact d=2)``: the same
      :math:`\\alpha` with the largest :math:`r` whose exact :math:`\\delta` is at most ``delta``
      (:func:`lib.theory.hellinger_audit.dirichlet_exact_scale`). A draw :math:`y` becomes the
      posterior :math:`\\mathrm{prior} + n y` (post-processing).
    * ``Laplace`` (:class:`lib.mechanisms.hellinger.CountLaplace`): the count of ones plus
      :math:`\\mathrm{Lap}(1/\\hat\\varepsilon)`; ``Gaussian``
      (:class:`lib.mechanisms.hellinger.CountGaussian`): the analytic Gaussian mechanism (Balle
      and Wang 2018). The noisy count is clipped to :math:`[0, n]` and gives
      :math:`\\mathrm{beta}(\\alpha + \\tilde a, \\beta + n - \\tilde a)`.
    """
    counts = validation.integer_array(counts, "counts")
    if counts.shape != (2,) or counts.min() < 0 or counts.sum() < 1:
        raise ValueError(f"counts must be a pair (ones, zeros) of non-negative integers with a positive total; "
                         f"got {counts.tolist()}")
    repeats = validation.integer(repeats, "repeats", 2)
    validation.cells(repeats, "repeats")
    if not isinstance(exact_dirichlet, (bool, np.bool_)):
        raise validation.ArgumentTypeError(f"exact_dirichlet must be True or False; got "
                                          f"{type(exact_dirichlet).__name__} {exact_dirichlet!r:.60}")
    rng = validation.generator(rng)
    n = int(counts.sum())
    true_post = posteriors(prior, counts)
    reference = validation.positive(reference, "reference")
    if reference.shape != (2,):
        raise ValueError(f"reference must be a public histogram of 2 positive counts; got shape {reference.shape}")
    choice = _order_for(float(epsilon_hat), float(delta), tuple(float(v) for v in reference))
    calib = {"lam": choice.lam, "r_app_b": choice.r, "alpha": choice.alpha}
    if exact_dirichlet:
        calib["r_exact"] = _exact_scale_for(float(choice.alpha), n, float(epsilon_hat), float(delta))
    setting = _Setting(np.asarray(prior, dtype=float), n, epsilon_hat, delta, choice.alpha, choice.r,
                       calib.get("r_exact"))
    batch = np.broadcast_to(counts, (repeats, 2))
    out, built = {}, {}
    for display, name, build in ENTRIES:
        mech = build(get(name), setting)
        if mech is None:
            continue
        if hasattr(mech, "log_pmf_rows"):  # a finite output set: the exact expectation
            out[display] = _expected(mech.log_pmf_rows(counts), _candidate_utility(prior, counts))
        elif hasattr(mech, "released_posterior"):
            out[display] = _monte_carlo(true_post, mech.released_posterior(batch, rng))
        else:  # a point y of the simplex: the posterior prior + n y (post-processing)
            out[display] = _monte_carlo(true_post, prior + n * mech.release(batch, rng))
        built[display] = mech
    calib["sigma"] = built["Gaussian"].noise_scale
    out["_calibration"] = calib
    return out


# --- Full-size runs (outside the book's CI budget) -----------------------------------------

FULL_PRIORS = ((1.0, 1.0), (0.5, 0.5), (2.0, 8.0), (50.0, 50.0), (0.05, 0.05), (1.0, 200.0))

_SWEEP_VALUES = (1e-8, 1e-4, 1e-2, 0.05, 0.5, 1.0, 2.0, 10.0, 1e3, 1e8)

SWEEP = dict(ns=(1, 2, 3, 5, 10, 30, 100, 150, 300), epsilons=(0.01, 0.1, 1.0, 5.0, 20.0, 40.0, 100.0),
             deltas=(1e-12, 1e-6, 1e-2, 0.5, 0.9),
             priors=tuple((a, b) for a in _SWEEP_VALUES for b in _SWEEP_VALUES if a <= b), spot_n=())
"""Arguments of :func:`full_audit` for the sweep beyond the chapter's grid (17 325 dense audits, 55
priors from 1e-8 to 1e8; a prior and its mirror image give the same mechanism). About a minute:
42 settings spend more than the nominal epsilon on some pair, none has delta(epsilon) > delta."""


def _beta_prior(prior) -> tuple:
    p = validation.positive(prior, "priors")
    if p.shape != (2,):
        raise ValueError(f"priors must hold Beta priors of 2 positive parameters; got shape {p.shape}")
    return tuple(p.tolist())


def full_audit(ns=(10, 30, 100, 300, 1000), epsilons=(0.1, 1.0, 5.0, 20.0, 50.0),
               deltas=(1e-6, 1e-2, 0.5), priors=FULL_PRIORS, spot_n=(10**4, 10**5), spot_pairs=41):
    """The chapter's audit at full size: dense for ``ns``, ``spot_pairs`` evenly spaced pairs at ``spot_n``.

    Parameters
    ----------
    ns : sequence of int
        Data set sizes audited over every pair, up to ``MAX_CANDIDATES - 1``.
    epsilons, deltas : sequence of float
        Targets, :math:`\\varepsilon > 0` and :math:`\\delta \\in (0, 1)` (at least one).
    priors : sequence of (float, float)
        Beta priors.
    spot_n : sequence of int
        Sizes audited on ``spot_pairs`` pairs at the first ``delta``, within
        :data:`lib.theory.hellinger_audit.MAX_AUDIT_CELLS`.
    spot_pairs : int
        Pairs per spot check.

    Returns
    -------
    list of dict
        Prior, n, epsilon, delta, exact delta at epsilon, pure epsilon / epsilon, the pair
        attaining it, dense or spot. Takes about ten minutes on one core with the defaults.

    Raises
    ------
    ValueError
        For an argument out of range (every argument is checked before the run starts).
    """
    ns = [validation.integer(n, "ns", 1, MAX_CANDIDATES - 1) for n in ns]
    spot_n = [validation.integer(n, "spot_n", 2) for n in spot_n]
    spot_pairs = validation.integer(spot_pairs, "spot_pairs", 1)
    epsilons = [validation.scalar(validation.positive(e, "epsilons"), "epsilons") for e in epsilons]
    deltas = [validation.scalar(validation.open_unit(d, "deltas"), "deltas") for d in deltas]
    if not deltas:
        raise ValueError("deltas must hold at least one value in (0, 1)")
    priors = [_beta_prior(p) for p in priors]
    for n in spot_n:
        validation.cells(2 * min(spot_pairs, n) * (n + 1), f"full_audit spot check at n = {n}", MAX_AUDIT_CELLS)
    out = []
    for prior in priors:
        for n in ns:
            geom = geometry(prior, n)
            for delta in deltas:
                for eps in epsilons:
                    res = audit(SmoothedHellinger(prior, n, eps, delta, geom=geom).log_pmf, geom.neighbours, [eps])
                    out.append(dict(prior=prior, n=n, epsilon=eps, delta=delta, exact_delta=res.delta[0],
                                    pure_ratio=res.pure_epsilon / eps, pure_pair=res.pure_worst_pair, kind="dense"))
        for n in spot_n:
            pairs = np.unique(np.linspace(0, n - 1, spot_pairs).astype(np.int64))
            for eps in epsilons:
                res = audit_counts(prior, n, eps, deltas[0], pairs)
                out.append(dict(prior=prior, n=n, epsilon=eps, delta=deltas[0], exact_delta=res.delta[0],
                                pure_ratio=res.pure_epsilon / eps, pure_pair=res.pure_worst_pair, kind="spot"))
    return out


def _main(argv=None) -> None:
    """``python -m lib.experiments.hellinger [--quick | --sweep]``: :func:`full_audit`, summarised."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if "--sweep" in argv:  # SWEEP instead of the full run
        rows = full_audit(**SWEEP)
    elif "--quick" in argv:
        rows = full_audit(ns=(10, 100), spot_n=(10**3,), priors=FULL_PRIORS[:2])
    else:
        rows = full_audit()
    worst = max(rows, key=lambda r: r["pure_ratio"])
    print(f"{len(rows)} audits; largest exact delta at epsilon: {max(r['exact_delta'] for r in rows):.3g}; "
          f"above delta: {sum(r['exact_delta'] > r['delta'] for r in rows)}")
    print(f"pure epsilon above epsilon: {sum(r['pure_ratio'] > 1 for r in rows)}; "
          f"largest pure epsilon / epsilon: {worst['pure_ratio']:.4f} at {worst}")


if __name__ == "__main__":  # pragma: no cover
    _main()
