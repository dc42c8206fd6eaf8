"""Chapter 12's experiments with the smoothed-Hellinger mechanism: the head-to-head and the full-size audit.

:func:`head_to_head` compares, on one beta-binomial data set at one
:math:`(\\hat\\varepsilon, \\delta)`, the registered mechanisms of :data:`ENTRIES`: the
smoothed-Hellinger mechanism, the exponential mechanism with the global sensitivity, the
Dirichlet mechanism calibrated by Appendix B and by its exact :math:`\\delta`, and Laplace and
Gaussian noise on the count of ones, by the utility of the released posterior
(:func:`posterior_utility`); a histogram of ``k > 2`` categories runs the entries of
:data:`K_ENTRIES`. :func:`full_audit` runs the chapter's exact audit at full size
(``python -m lib.experiments.hellinger [--quick | --sweep]``; outside the book's CI budget), and
``python -m lib.experiments.hellinger --store`` stores the summaries (:func:`audit_summary`) of the
runs of :data:`RUNS` in ``hellinger_audits.json`` beside this module (:func:`store_audits`), which chapter
12 reads (:func:`load_audits`) and checks by rerunning a part (:func:`subset`, :func:`within`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike

from lib import validation
from lib.validation import SeedLike
from lib.mechanisms.dirichlet.divergence import hellinger_dirichlet, renyi_divergence_dirichlet
from lib.mechanisms.dirichlet.order import optimal_order
from lib.mechanisms.hellinger import (MEMO_CELLS, MAX_CANDIDATES, SmoothedHellinger, candidates, geometry,
                                      hellinger_rows_beta, posteriors)
from lib.mechanisms.protocol import get
from lib.theory.hellinger_audit import MAX_AUDIT_CELLS, audit, audit_counts, dirichlet_exact_scale


# --- Utility of a released Beta/Dirichlet posterior ----------------------------------------

def posterior_utility(true_post: ArrayLike, released_post: ArrayLike, *,
                      hellinger: ArrayLike | None = None) -> dict:
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

K_ENTRIES = ("M_H", "Dirichlet (App. B)")
"""The entries of :data:`ENTRIES` that :func:`head_to_head` draws for a histogram of ``k > 2``
categories (the others release a count of ones, or need ``d = 2``)."""
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


def _candidate_utility_k(prior, counts) -> dict:
    """:func:`posterior_utility` of ``prior + counts`` against every candidate of :func:`candidates` ``(n, k)``."""
    cand_post = posteriors(prior, candidates(int(counts.sum()), counts.size))
    return posterior_utility(np.broadcast_to(posteriors(prior, counts), cand_post.shape), cand_post)


def _candidate_utility(prior, counts) -> dict:
    """:func:`posterior_utility` of the true posterior ``prior + counts`` against every beta-binomial candidate.

    The candidates are :func:`lib.mechanisms.hellinger.candidates` ``(n, 2)``, the outputs of the
    finite-output mechanisms of :data:`ENTRIES`; the distances are their scores,
    :func:`lib.mechanisms.hellinger.hellinger_rows_beta` (computed once for both). Memoised on
    ``(prior, counts)`` (read-only arrays): the same data set is scored at every target and by both
    exponential mechanisms.
    """
    prior, counts = np.asarray(prior, dtype=float), np.asarray(counts)
    if counts.size > 2:
        return _candidate_utility_k(prior, counts)
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


def head_to_head(prior: ArrayLike, counts: ArrayLike, epsilon_hat: float, delta: float, *, reference: ArrayLike,
                 repeats: int = 2000, rng: SeedLike = None, exact_dirichlet: bool = True) -> dict:
    """Utility of every mechanism of :data:`ENTRIES` on one data set at :math:`(\\hat\\varepsilon, \\delta)`.

    Parameters
    ----------
    prior : array_like, shape (k,)
        The Beta prior :math:`(\\alpha, \\beta)` (``k = 2``) or Dirichlet prior, positive.
    counts : array_like of int, shape (k,)
        ``(ones, zeros)`` for ``k = 2``, else a histogram of ``k`` categories; non-negative with a
        positive total :math:`n` (public).
    epsilon_hat, delta : float
        The common target :math:`(\\hat\\varepsilon, \\delta)`.
    reference : array_like, shape (k,)
        A public histogram of ``k`` positive counts for Appendix B's order.
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
        ``"_calibration"`` with the Dirichlet parameters and the Gaussian ``sigma``. With ``k > 2``
        categories only the entries of :data:`K_ENTRIES` are drawn (in the order of
        :data:`ENTRIES`; the Dirichlet extension :math:`\\mathcal M^D_{\\mathcal H}` with its
        exact expectation over the :math:`\\binom{n+k-1}{k-1}` candidates, and Appendix B's
        Dirichlet mechanism), and there is no ``sigma`` or ``r_exact``.

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
    if counts.ndim != 1 or counts.size < 2 or counts.min() < 0 or counts.sum() < 1:
        raise ValueError(f"counts must be a pair (ones, zeros), or a histogram of k > 2 categories, of non-negative "
                         f"integers with a positive total; got {counts.tolist()}")
    k = counts.size
    repeats = validation.integer(repeats, "repeats", 2)
    validation.cells(repeats, "repeats")
    if not isinstance(exact_dirichlet, (bool, np.bool_)):
        raise validation.ArgumentTypeError(f"exact_dirichlet must be True or False; got "
                                          f"{type(exact_dirichlet).__name__} {exact_dirichlet!r:.60}")
    rng = validation.generator(rng)
    n = int(counts.sum())
    true_post = posteriors(prior, counts)
    reference = validation.positive(reference, "reference")
    if reference.shape != (k,):
        raise ValueError(f"reference must be a public histogram of {k} positive counts; got shape {reference.shape}")
    choice = _order_for(float(epsilon_hat), float(delta), tuple(float(v) for v in reference))
    calib = {"lam": choice.lam, "r_app_b": choice.r, "alpha": choice.alpha}
    if exact_dirichlet and k == 2:
        calib["r_exact"] = _exact_scale_for(float(choice.alpha), n, float(epsilon_hat), float(delta))
    setting = _Setting(np.asarray(prior, dtype=float), n, epsilon_hat, delta, choice.alpha, choice.r,
                       calib.get("r_exact"))
    batch = np.broadcast_to(counts, (repeats, k))
    out, built = {}, {}
    for display, name, build in ENTRIES:
        if k > 2 and display not in K_ENTRIES:
            continue
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
    if "Gaussian" in built:
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


def full_audit(ns: Sequence[int] = (10, 30, 100, 300, 1000),
               epsilons: Sequence[float] = (0.1, 1.0, 5.0, 20.0, 50.0), deltas: Sequence[float] = (1e-6, 1e-2, 0.5),
               priors: Sequence[tuple[float, float]] = FULL_PRIORS, spot_n: Sequence[int] = (10**4, 10**5),
               spot_pairs: int = 41) -> list[dict]:
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


#: Where :func:`store_audits` keeps the summaries of the full-size runs (a small JSON file shipped
#: with the package, read by chapter 12): ``hellinger_audits.json`` beside this module.
AUDIT_RESULTS = Path(__file__).resolve().with_name("hellinger_audits.json")

#: The runs :func:`store_audits` knows: name -> the arguments of :func:`full_audit`.
RUNS = {"full": {}, "sweep": SWEEP}

#: The decimals a stored ratio keeps: far more than any verdict needs, far fewer than the last bits
#: of ``exp`` and ``log`` that differ between CPUs.
_DIGITS = 6


def _rounded(value: float) -> float:
    return float(f"{float(value):.{_DIGITS}g}")


def audit_summary(rows: Sequence[dict]) -> dict:
    """What a run of :func:`full_audit` found, small enough to store: counts, extremes and the exceptions.

    Parameters
    ----------
    rows : list of dict
        The rows of :func:`full_audit`.

    Returns
    -------
    dict
        ``audits`` (settings audited), ``dense`` and ``spot`` (how), ``priors`` (distinct Beta
        priors), ``max_n`` (largest :math:`n` of a dense audit), ``max_spot_n``, ``spot_pairs``
        (largest number of pairs of a spot check), ``epsilons``, ``deltas`` (the ranges, as
        ``[min, max]``), ``above_delta`` (settings whose exact :math:`\\delta(\\varepsilon)`
        exceeds :math:`\\delta`: the note's claim fails there), ``largest_delta_ratio``
        (:math:`\\max \\delta(\\varepsilon)/\\delta`), ``above_epsilon`` (settings where a pair
        spends more than the nominal :math:`\\varepsilon`: not pure DP), ``largest_pure_ratio``
        and ``exceeding`` (those settings: prior, n, epsilon, delta, pure_ratio, pair; ratios to
        six significant digits).

    Raises
    ------
    ValueError
        If ``rows`` is empty.
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows must hold at least one audit of full_audit")
    dense = [r for r in rows if r["kind"] == "dense"]
    spot = [r for r in rows if r["kind"] == "spot"]
    exceeding = sorted((r for r in rows if r["pure_ratio"] > 1),
                       key=lambda r: (r["prior"], r["n"], r["epsilon"], r["delta"]))
    return {
        "audits": len(rows), "dense": len(dense), "spot": len(spot),
        "priors": len({tuple(r["prior"]) for r in rows}),
        "max_n": max((r["n"] for r in dense), default=0), "max_spot_n": max((r["n"] for r in spot), default=0),
        "epsilons": [min(r["epsilon"] for r in rows), max(r["epsilon"] for r in rows)],
        "deltas": [min(r["delta"] for r in rows), max(r["delta"] for r in rows)],
        "above_delta": int(sum(bool(r["exact_delta"] > r["delta"]) for r in rows)),
        "largest_delta_ratio": _rounded(max(r["exact_delta"] / r["delta"] for r in rows)),
        "above_epsilon": len(exceeding),
        "largest_pure_ratio": _rounded(max(r["pure_ratio"] for r in rows)),
        "exceeding": [{"prior": list(r["prior"]), "n": int(r["n"]), "epsilon": float(r["epsilon"]),
                       "delta": float(r["delta"]), "pure_ratio": _rounded(r["pure_ratio"]),
                       "pair": [int(v) for v in r["pure_pair"]], "kind": r["kind"]} for r in exceeding],
    }


def store_audits(names: Iterable[str] = tuple(RUNS), path: str | Path = AUDIT_RESULTS) -> dict:
    """Run :func:`full_audit` for each run of :data:`RUNS` in ``names`` and store the summaries as JSON.

    Each run is stored with its arguments and its :func:`audit_summary` under its name; the
    other runs already in ``path`` are kept. Takes about ten minutes (``"full"``) and one
    (``"sweep"``) on one core. Returns what :func:`load_audits` then reads (lists for tuples).
    """
    import inspect
    import json

    names = [names] if isinstance(names, str) else list(names)
    bad = [n for n in names if n not in RUNS]
    if bad or not names:
        raise ValueError(f"names must be among {tuple(RUNS)}; got {names!r:.80}")
    path = Path(path)
    stored = json.loads(path.read_text()) if path.exists() else {}
    for name in names:
        bound = inspect.signature(full_audit).bind(**RUNS[name])
        bound.apply_defaults()
        stored[name] = {"arguments": dict(bound.arguments), "summary": audit_summary(full_audit(**RUNS[name]))}
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(stored, indent=1, sort_keys=True) + "\n"
    path.write_text(text)
    return json.loads(text)


def load_audits(path: str | Path = AUDIT_RESULTS) -> dict:
    """The summaries stored by :func:`store_audits`: run name -> ``{"arguments", "summary"}``.

    Raises
    ------
    FileNotFoundError
        If nothing is stored at ``path`` (run ``python -m lib.experiments.hellinger --store``).
    """
    import json

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no stored audits at {path}; run python -m lib.experiments.hellinger --store")
    return json.loads(path.read_text())


def subset(arguments: dict, **restrict: Sequence) -> dict:
    """The arguments of :func:`full_audit` ``arguments`` with some of their lists cut to the values of ``restrict``.

    Every restricted value must be one of the run's (a reduced run is a part of the stored one),
    e.g. ``subset(SWEEP, ns=(100, 150))``.

    Raises
    ------
    ValueError
        If a key is not an argument of the run or a value is not among the run's.
    """
    out = dict(arguments)
    for key, values in restrict.items():
        if key not in arguments:
            raise ValueError(f"restrict: {key!r} is not an argument of the run; allowed {tuple(arguments)}")
        have = [tuple(v) if isinstance(v, (list, tuple)) else v for v in arguments[key]]
        values = [tuple(v) if isinstance(v, (list, tuple)) else v for v in values]
        missing = [v for v in values if v not in have]
        if missing or not values:
            raise ValueError(f"restrict: {key} must be a non-empty part of the run's values; {missing!r:.80} are not")
        out[key] = tuple(values)
    return out


def within(summary: dict, arguments: dict) -> list:
    """The stored ``exceeding`` settings of ``summary`` that a run with ``arguments`` audits densely.

    Raises
    ------
    ValueError
        If ``summary`` is not an :func:`audit_summary` or ``arguments`` lack the lists of :func:`full_audit`.
    """
    missing = [k for k in ("priors", "ns", "epsilons", "deltas") if k not in arguments]
    if "exceeding" not in summary or missing:
        raise ValueError(f"summary must be an audit_summary (with 'exceeding') and arguments the arguments of a "
                         f"full_audit run; missing {(['exceeding'] if 'exceeding' not in summary else []) + missing}")
    priors = {tuple(float(v) for v in p) for p in arguments["priors"]}
    return [r for r in summary["exceeding"] if r["kind"] == "dense" and tuple(r["prior"]) in priors
            and r["n"] in arguments["ns"] and r["epsilon"] in arguments["epsilons"]
            and r["delta"] in arguments["deltas"]]


def _main(argv=None) -> None:
    """``python -m lib.experiments.hellinger [--quick | --sweep | --store [run ...]]``: :func:`full_audit`.

    ``--store`` runs the named runs of :data:`RUNS` (default all) and stores their summaries in
    :data:`AUDIT_RESULTS` (:func:`store_audits`); the others print a summary.
    """
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if "--store" in argv:
        names = [a for a in argv if not a.startswith("--")] or list(RUNS)
        stored = store_audits(names)
        for name in names:
            s = stored[name]["summary"]
            print(f"{name}: {s['audits']} audits, {s['above_epsilon']} above epsilon, {s['above_delta']} above delta")
        return
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
