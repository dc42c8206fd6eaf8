"""The student edition's autograder: one check per exercise label.

A check cell of the student edition imports the checker itself, so no name the chapter binds can
shadow it::

    from tools.student.checks import check_exercise
    check_exercise("ex-01-density", globals())

Why the book's own checker and not otter-grader or nbgrader: a check here is an ordinary function
over the student's namespace, runs in the book's own environment with `lib`, needs no grading
server and no extra dependency; `make grade` (tools/student/grade.py) runs whole submitted notebooks
with it, and tests/book/test_student.py runs every student notebook end to end with the book's
solutions and with wrong answers.

Each check declares its answers (tools/student/answers.py: name, type and shape, meaning and
units); the answer cell of the student edition states exactly these, and the check reads exactly
these names, converted to the type it expects. It recomputes what it needs INDEPENDENTLY of the
chapter's solution code (a closed form in place of the library's search, a brute force, an exact
value, a reduced rerun of an experiment with a tolerance from its standard error) and checks the
setting the exercise asks about, not only agreement between two of the student's own values. It
raises AssertionError with a message that says what is wrong (a wrong type: AnswerTypeError, a
TypeError naming the answer).

The one exercise without an automatic check (an essay) is in NO_CHECK with its rubric, which its
student cell and the grading report show.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import numpy as np
from scipy import special, stats

from tools.student.answers import Answer, AnswerTypeError

__all__ = ["Check", "CHECKS", "NO_CHECK", "check_exercise", "Answer", "AnswerTypeError"]


@dataclass(frozen=True)
class Check:
    answers: tuple[Answer, ...]
    verify: Callable[[SimpleNamespace], None]
    note: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.answers)


CHECKS: dict[str, Check] = {}
#: label -> (reason there is no automatic check, rubric the instructor grades by)
NO_CHECK: dict[str, tuple[str, str]] = {}


def register(label: str, *answers: Answer, note: str = ""):
    def deco(fn):
        CHECKS[label] = Check(tuple(answers), fn, note)
        return fn
    return deco


def real(name, meaning):
    """A float answer."""
    return Answer(name, "float", meaning)


def count(name, meaning):
    """An integer answer."""
    return Answer(name, "int", meaning)


def vector(name, shape, meaning):
    """A float array answer of ``shape`` (None: any length on that axis)."""
    return Answer(name, "array", meaning, shape=shape)


def check_exercise(label: str, namespace: dict) -> bool:
    """Verify the student's answer to exercise ``label``.

    Returns True when every check passes; raises AssertionError with a hint when the answer is
    wrong or missing, and AnswerTypeError (a TypeError) naming the answer when it has the wrong
    type or shape. An exercise without an automatic check prints its rubric and returns False.
    """
    if not isinstance(label, str) or not isinstance(namespace, dict):
        raise TypeError("check_exercise(label, namespace): label is an exercise label (str) and namespace "
                        "the notebook's globals() (dict)")
    if label not in CHECKS:
        if label in NO_CHECK:
            reason, rubric = NO_CHECK[label]
            print(f"{label}: no automatic check ({reason}). Rubric: {rubric}")
            return False
        raise KeyError(f"unknown exercise label {label!r}")
    spec = CHECKS[label]
    missing = [n for n in spec.names if n not in namespace]
    assert not missing, f"{label}: define {', '.join(missing)} (the names this exercise asks for)"
    values = SimpleNamespace(**{a.name: a.read(namespace, label) for a in spec.answers})
    try:
        spec.verify(values)
    except AssertionError as exc:  # every message names the exercise
        raise AssertionError(f"{label}: {exc}") from None
    print(f"{label}: all checks passed")
    return True


def _close(value, expected, what, rtol, atol=0.0):
    value = np.asarray(value, dtype=float)
    assert value.shape == np.shape(expected) or np.ndim(value) == 0, \
        f"{what}: shape {value.shape}, expected {np.shape(expected)}"
    assert np.allclose(value, expected, rtol=rtol, atol=atol), \
        f"{what}: got {np.round(value, 8)}, expected {np.round(expected, 8)} (relative tolerance {rtol:g})"


def _balle_budget(eps_hat, lam, delta, n_releases=1):
    """Per-release RDP budget that the RDP -> DP conversion eq. (14) turns into (eps_hat, delta),
    written out here from the formula eps_hat = n rho + log(1 - 1/lam) - (log delta + log lam)/(lam - 1)."""
    return (eps_hat - np.log1p(-1 / lam) + (np.log(delta) + np.log(lam)) / (lam - 1)) / n_releases


def _agree(mean, se, ref_mean, ref_se, what, k=4.0):
    """Two independent Monte Carlo means agree within k combined standard errors."""
    tol = k * np.hypot(se, ref_se)
    assert abs(mean - ref_mean) <= tol, \
        f"{what}: {mean:.6g} differs from an independent rerun's {ref_mean:.6g} by more than {k:g} standard " \
        f"errors ({tol:.3g})"


# ---- chapter 1 -----------------------------------------------------------------------------
@register("ex-01-density",
          vector("gap", (1000,), "log Dirichlet(r f + 1) density minus the score -r N_f KL(f/N_f || y) at 1,000 "
                            "points y of the simplex (nats)"),
          real("constant", "the constant that gap equals, in closed form (nats)"))
def _(a):
    f, r = np.array([6.0, 3.0, 1.0]), 2.5
    n = f.sum()
    b = r * f + 1
    # constant = -r N H(f/N) - log B(r f + 1), with log B written out from gammaln
    expected = -r * n * stats.entropy(f / n) - (special.gammaln(b).sum() - special.gammaln(b.sum()))
    _close(a.constant, expected, "constant", 1e-10)  # a closed form: rounding only
    # values of size ~10 in double precision: rounding is far below 1e-8
    assert np.ptp(a.gap) < 1e-8, "gap: the difference is not constant in y"
    _close(a.gap, np.full(a.gap.shape, expected), "gap", 1e-9)


@register("ex-01-bias-limit",
          real("r_needed", "the smallest scale r at which every coordinate's bias is at most 0.01 (alpha = 1)"),
          real("limit", "the limit of the largest absolute bias as eps -> infinity at lambda = 2 (a probability)"))
def _(a):
    f = np.array([50.0, 30.0, 15.0, 5.0])
    n, d = f.sum(), f.size
    bias = lambda r, alpha: np.abs(alpha * (1 - d * f / n) / (r * n + d * alpha)).max()
    r = a.r_needed
    assert r > 0, f"r_needed = {r}: a scale is positive"
    # the bias is 0.01 at r_needed (up to rounding) and above 0.01 just below it
    assert bias(r, 1.0) <= 0.01 * (1 + 1e-9), f"r_needed = {r}: the largest bias {bias(r, 1.0):.6f} exceeds 0.01"
    assert bias(0.999 * r, 1.0) > 0.01, f"r_needed = {r} is not the smallest such r"
    # exact: max |1 - 4 f_i/100| = 1 (f_1 = 50), c = 4 (lambda - 1) = 4, limit = c / (N + d c) = 4 / 116
    _close(a.limit, 4 / 116, "limit", 1e-12)


# ---- chapter 2 -----------------------------------------------------------------------------
_CAL = ("r", "alpha")


@register("ex-02-add-remove",
          Answer("replace", "fields", "Algorithm 1 at (lambda, eps) = (2, 1) for the histogram's sensitivities "
                                      "(calibrate(...); r and alpha are the Dirichlet scale and pseudo-count)",
                 keys=_CAL),
          Answer("add_remove", "fields", "the same calibration with l2_sq = 1 and linf = 1 (add or remove one record)",
                 keys=_CAL))
def _(a):
    from lib.theory.audit import worst_case_divergence
    from lib.mechanisms.dirichlet.calibration import rdp_epsilon
    rep, ar = a.replace, a.add_remove
    for name, c, kw in (("replace", rep, {}), ("add_remove", ar, {"l2_sq": 1.0, "linf": 1.0})):
        assert c.r > 0, f"{name}.r = {c.r}: a scale is positive"
        # Line 2: alpha = 1 + 4 (lambda - 1) r (Delta_inf = 1), read off the paper rather than the library
        _close(c.alpha, 1 + 4 * (2.0 - 1) * c.r, f"{name}.alpha (Line 2 at lambda = 2)", 1e-12)
        # Line 1 with the relation's sensitivities evaluated forward at r: eps = 1 (a root, to rounding)
        _close(rdp_epsilon(c.r, 2.0, **kw), 1.0, f"Line 1's eps at {name}.r", 1e-9)
    at = float(worst_case_divergence(ar.r, ar.alpha, 2.0, relation="add-remove"))
    assert at <= 1.0 * (1 + 1e-12), f"add_remove: exact worst case {at:.6f} > 1 (not private at eps = 1)"
    assert ar.r > rep.r, "add_remove.r should exceed replace.r (a smaller sensitivity)"


@register("ex-02-line1",
          real("worst_gap", "the largest relative gap |r_brentq / r_calibrate - 1| over the nine settings "
                         "(dimensionless)"))
def _(a):
    from scipy.optimize import brentq
    from lib.mechanisms.dirichlet.calibration import calibrate, rdp_epsilon
    gaps = [abs(brentq(lambda r_: rdp_epsilon(r_, lam) - eps, 1e-12, 1e6, xtol=1e-14, rtol=1e-13)
                / float(calibrate(eps, lam).r) - 1)
            for lam in (1.5, 4.0, 30.0) for eps in (0.01, 1.0, 50.0)]
    # both solve Line 1 to rounding: the true gap is ~1e-13; a root off by more than 1e-10 is a wrong root
    assert 0 <= a.worst_gap < 1e-10, \
        f"worst_gap = {a.worst_gap:.3g}: brentq and calibrate agree to {max(gaps):.1e} when both solve Line 1 " \
        "(check the bracket and the tolerances)"


# ---- chapter 3 -----------------------------------------------------------------------------
@register("ex-03-new-settings",
          Answer("cal", "fields", "the calibration at (lambda, eps) = (3, 0.5) used for the brute force", keys=_CAL),
          vector("brute", (None,), "the Renyi divergences of order 3 (nats), the larger direction, one per neighbour "
                              "of (0, 2, 5)"))
def _(a):
    from lib.mechanisms.dirichlet.calibration import calibrate
    from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
    ref = calibrate(0.5, 3.0)
    _close([a.cal.r, a.cal.alpha], [float(ref.r), float(ref.alpha)], "cal (r, alpha) at (lambda, eps) = (3, 0.5)", 1e-9)
    x = np.array([0.0, 2.0, 5.0])
    # neighbours enumerated here: add, remove or move one record (non-negative counts)
    nbrs = {tuple(x + e) for e in np.eye(3)} | {tuple(x - e) for e in np.eye(3)}
    nbrs |= {tuple(x + np.eye(3)[i] - np.eye(3)[j]) for i in range(3) for j in range(3) if i != j}
    v = np.array([y for y in nbrs if min(y) >= 0 and y != tuple(x)])
    u, v = a.cal.r * x + a.cal.alpha, a.cal.r * v + a.cal.alpha
    worst = np.maximum(renyi_divergence_dirichlet(u, v, 3.0), renyi_divergence_dirichlet(v, u, 3.0)).max()
    assert a.brute.size >= 1, "brute: one divergence per neighbour"
    _close(np.max(a.brute), worst, "the largest divergence over the neighbours of (0, 2, 5)", 1e-10)
    assert worst <= 0.5 * (1 + 1e-12), f"cal: the neighbours' divergence {worst:.6f} exceeds eps = 0.5"


@register("ex-03-quadrature",
          vector("u_ex", (2,), "the concentration r x + alpha of the release of (1, 0) at r = 0.5, alpha = 3"),
          vector("v_ex", (2,), "the concentration of the neighbour (0, 1)"),
          real("numeric", "the Renyi divergence D_5(u_ex || v_ex) by quadrature (nats; the last order, lambda = 5)"))
def _(a):
    _close(a.u_ex, [3.5, 3.0], "u_ex (0.5 * (1, 0) + 3)", 1e-12)
    _close(a.v_ex, [3.0, 3.5], "v_ex (0.5 * (0, 1) + 3)", 1e-12)
    # eq. (16) written out for d = 2: log B(lam u + (1 - lam) v) - lam log B(u) + (lam - 1) log B(v), / (lam - 1)
    lam, u, v = 5.0, np.array([3.5, 3.0]), np.array([3.0, 3.5])
    logb = lambda w: special.gammaln(w).sum() - special.gammaln(w.sum())
    closed = (logb(lam * u + (1 - lam) * v) - lam * logb(u) + (lam - 1) * logb(v)) / (lam - 1)
    # quad's default tolerance is ~1.5e-8 relative; 1e-7 leaves room
    _close(a.numeric, closed, "numeric (D_5 by quadrature)", 1e-7)


# ---- chapter 4 -----------------------------------------------------------------------------
@register("ex-04-best-order",
          Answer("best", "fields", "optimal_order(1, 1e-6, (40, 25, 20, 10, 5)): .lam the Renyi order, "
                                   ".expected_kl the expected KL loss (nats) there", keys=("lam", "expected_kl")))
def _(a):
    from lib.privacy.accounting import dp_to_rdp
    from lib.mechanisms.dirichlet.calibration import calibrate
    from lib.mechanisms.dirichlet.moments import expected_kl_loss
    counts = np.array([40.0, 25.0, 20.0, 10.0, 5.0])
    lam0 = 1 + np.exp(np.linspace(np.log(1e-3), np.log(1e4), 3000))
    ok = _balle_budget(1.0, lam0, 1e-6) > 0
    lams = lam0[ok]
    cal = calibrate(dp_to_rdp(1.0, lams, 1e-6), lams)
    loss = expected_kl_loss(counts, cal.r, cal.alpha)
    best = a.best
    assert best.lam > 1, f"best.lam = {best.lam}: an order above 1"
    budget = float(dp_to_rdp(1.0, best.lam, 1e-6))
    assert budget > 0, f"best.lam = {best.lam:.4g}: eq. (14) leaves no RDP budget there for (1, 1e-6)"
    # the student's loss is the loss at the student's order (not any small number)
    cal_at = calibrate(budget, best.lam)
    at = float(expected_kl_loss(counts, cal_at.r, cal_at.alpha))
    _close(best.expected_kl, at, "best.expected_kl (the expected KL at best.lam)", 1e-6)
    # a grid of 3000 log-spaced orders; the loss is flat at its minimum, so 1e-4 relative is ample
    assert best.expected_kl <= loss.min() * (1 + 1e-4), \
        f"best.expected_kl = {best.expected_kl:.6g} is above the grid's minimum {loss.min():.6g}"
    assert abs(np.log(best.lam / lams[loss.argmin()])) < 0.05, \
        f"best.lam = {best.lam:.4g}, but the grid's best order is {lams[loss.argmin()]:.4g}"


@register("ex-04-composition",
          real("at_two", "the per-release RDP level for (eps_hat, delta) = (2, 1e-6) over ten releases at lambda = 2"))
def _(a):
    expected = _balle_budget(2.0, 2.0, 1e-6, n_releases=10)  # -1.04: not positive
    _close(a.at_two, expected, "at_two", 1e-10)
    assert a.at_two <= 0


# ---- chapter 5 -----------------------------------------------------------------------------
@register("ex-05-new-p",
          real("beta_ex", "the last beta of the exercise, 60"),
          count("hits", "the number of the 100,000 draws at beta = 60 with KL(p || q) > eta = 0.5"),
          real("chernoff", "the exact Chernoff bound of eq. (20) at beta = 60 (a probability)"),
          real("theorem", "Theorem 2's bound at beta = 60 (a probability)"))
def _(a):
    from lib.theory.utility import clopper_pearson_lower, exact_chernoff_bound, sample_kl, theorem2_bound
    p, eta = np.array([0.5, 0.3, 0.15, 0.05]), 0.5
    _close(a.beta_ex, 60.0, "beta_ex", 0)
    _close(a.chernoff, float(exact_chernoff_bound(p, 1.0, 60.0, eta)), "chernoff", 1e-9)
    _close(a.theorem, float(theorem2_bound(4, 1.0, 60.0, eta)), "theorem", 1e-9)
    assert 0 <= a.hits <= 100_000, f"hits = {a.hits}: a count out of 100,000 draws"
    # an independent simulation (its own seed): the two counts agree within 4 binomial standard errors
    ref = int((sample_kl(p, 1.0, 60.0, 100_000, rng=np.random.default_rng(2805)) > eta).sum())
    se = np.sqrt(max(ref, 1) * (1 - ref / 100_000)) / 100_000
    _agree(a.hits / 100_000, se, ref / 100_000, se, "hits / 100,000 (the tail at beta = 60)")
    assert clopper_pearson_lower(a.hits, 100_000) <= a.chernoff <= a.theorem, \
        "the tail, the Chernoff bound and Theorem 2 are not in that order"


@register("ex-05-sample-complexity",
          real("n_needed", "the smallest total count N_f (records) of Theorem 2 at (lambda, eps) = (2, 1), d = 10, "
                        "eta = 0.1, delta = 0.05"),
          real("bound", "Theorem 2's bound at beta = r N_f (a probability)"),
          count("hits", "the number of the 20,000 simulated releases with KL > 0.1"))
def _(a):
    from lib.mechanisms.dirichlet.calibration import calibrate
    from lib.theory.utility import clopper_pearson_lower, min_beta, sample_kl, theorem2_bound
    cal = calibrate(1.0, 2.0)
    n = a.n_needed
    assert n > 0, f"n_needed = {n}: a positive count"
    # the tail constraint binds: Theorem 2's bound equals 0.05 at beta = r N_f, and exceeds it below
    _close(theorem2_bound(10, cal.alpha, cal.r * n, 0.1), 0.05, "Theorem 2's bound at n_needed", 1e-8)
    assert theorem2_bound(10, cal.alpha, cal.r * 0.99 * n, 0.1) > 0.05, "n_needed is not the smallest N_f"
    assert cal.r * n >= min_beta(10, cal.alpha, 0.1), "n_needed: Theorem 2's requirement on beta fails"
    _close(a.bound, 0.05, "bound", 1e-8)
    assert 0 <= a.hits <= 20_000 and clopper_pearson_lower(a.hits, 20_000) <= 0.05, \
        f"hits = {a.hits}: the simulated tail is significantly above 0.05"
    ref = int((sample_kl(np.arange(1, 11) / 55, cal.alpha, float(cal.r) * n, 20_000,
                         rng=np.random.default_rng(2806)) > 0.1).sum())
    se = np.sqrt(max(ref, 1) * (1 - ref / 20_000)) / 20_000
    _agree(a.hits / 20_000, se, ref / 20_000, se, "hits / 20,000 (the tail at f ~ (1, ..., 10))")


# ---- chapter 6 -----------------------------------------------------------------------------
_F6 = np.array([119, 74, 618, 272, 13, 187], dtype=float)


@register("ex-06-calibrate-lam2",
          real("budget", "the per-release RDP budget that eq. (14) leaves at lambda = 2 for (1, 1e-6)"),
          Answer("g_ex", "fields", "gohari_calibrate(1, 1e-6, lam=2, n_total=1283, d=6): .r the scale, "
                                   ".epsilon_hat the guarantee it meets", keys=("r", "epsilon_hat")))
def _(a):
    from lib.mechanisms.gohari import gohari_epsilon
    _close(a.budget, _balle_budget(1.0, 2.0, 1e-6), "budget", 1e-10)
    assert a.budget <= 0, "budget: eq. (14) leaves no RDP budget at lambda = 2"
    g = a.g_ex
    n, d = 1283, 6
    assert g.r > 0, f"g_ex.r = {g.r}: a scale is positive"
    assert 1 - 1e-9 <= g.epsilon_hat <= 1.0, f"g_ex.epsilon_hat = {g.epsilon_hat}: should be 1 (to 1e-9)"
    above = gohari_epsilon(1.01 * g.r, 1e-6, lam=2, n_total=n, d=d).epsilon_hat
    at = gohari_epsilon(g.r, 1e-6, lam=2, n_total=n, d=d).epsilon_hat
    assert at <= 1.0 < above, "g_ex.r is not the largest scale at eps_hat = 1"


_T6 = ("Gohari et al. (best order)", "Algorithm 1 (optimal_order)")


@register("ex-06-delta-1e-6",
          Answer("table_ex", "table", "the expected KL loss (nats) on f of each calibration at delta = 1e-6, "
                                      "one row per eps_hat", keys=(0.1, 1.0, 10.0), columns=_T6))
def _(a):
    from lib.mechanisms.dirichlet.calibration import calibrate
    from lib.mechanisms.dirichlet.moments import expected_kl_loss
    from lib.mechanisms.dirichlet.order import optimal_order
    from lib.mechanisms.gohari import gohari_calibrate
    n = int(_F6.sum())
    reference = n * np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])  # the chapter's public guess
    expected = []
    for eps_hat in (0.1, 1.0, 10.0):
        gohari = min(float(expected_kl_loss(_F6, g.r, g.alpha))
                     for g in (gohari_calibrate(eps_hat, 1e-6, lam=lam, n_total=n, d=6) for lam in (2, 5, 20, 200)))
        choice = optimal_order(eps_hat, 1e-6, reference)
        cal = calibrate(choice.epsilon, choice.lam)
        expected.append([gohari, float(expected_kl_loss(_F6, cal.r, cal.alpha))])
    # exact expected losses (closed forms) after root searches solved to ~1e-10: 1e-6 relative
    _close(a.table_ex, np.array(expected), "table_ex", 1e-6)
    assert (a.table_ex[:, 1] < a.table_ex[:, 0]).all(), "Algorithm 1 should have the smaller loss at every budget"


# ---- chapter 7 -----------------------------------------------------------------------------
_MOVED_ROWS = ("edges of amount moved", "test rows coded differently", "training rows coded differently")


def _german_neighbour():
    """GermanCredit and its neighbour of ex-07: the training row with the smallest amount replaced by a copy
    whose amount is the upper end of its public range."""
    from lib.experiments import public_bounds
    from lib.experiments.preprocessing import frame
    german = frame("GermanCredit")
    n = len(german)
    train = np.sort(np.random.default_rng(1).permutation(n)[int(np.ceil(0.3 * n)):])
    row = train[np.argmin(german["amount"].to_numpy()[train])]
    changed = german.copy()
    changed.loc[changed.index[row], "amount"] = public_bounds.BOUNDS["GermanCredit"]["amount"].upper
    return german, changed


@register("ex-07-neighbour",
          Answer("moved", "table", "counts: edges of amount that differ, test rows and training rows whose codes "
                                   "differ between GermanCredit and its neighbour, per pipeline",
                 keys=_MOVED_ROWS, columns=("public", "quantile")))
def _(a):
    from lib.experiments.preprocessing import encode_dataset
    german, changed = _german_neighbour()
    expected = {}
    for binning in ("public", "quantile"):
        (s1, i1), (s2, i2) = (encode_dataset(f, "GermanCredit", binning=binning) for f in (german, changed))
        e1, e2 = np.asarray(i1.loc["amount", "edges"], float), np.asarray(i2.loc["amount", "edges"], float)
        expected[binning] = [int((e1 != e2).sum()) if e1.shape == e2.shape else max(e1.size, e2.size),
                             int((s1.X_test != s2.X_test).any(axis=1).sum()),
                             int((s1.X_train != s2.X_train).any(axis=1).sum())]
    exp = np.array([expected["public"], expected["quantile"]]).T
    # public bins: only the replaced (training) row changes code; exact counts
    assert a.moved[:, 0].tolist() == [0, 0, 1], \
        f"moved['public'] = {a.moved[:, 0].tolist()}: with public bins only the replaced row changes"
    _close(a.moved, exp, "moved (counts, both pipelines)", 0)
    assert a.moved[0, 1] > 0 and a.moved[1, 1] > 0, "moved['quantile']: the quantile edges and test codes should move"


_NB_DATASETS = ("CreditCard", "Thyroid", "Shopper", "Digit", "GermanCredit", "Bank", "Spam", "Adult")


def _within_se_budgets():
    """ex-07-within-se recomputed: the chapter's grid cells of the Dirichlet and non-private models (same seed,
    so the same releases), per pipeline, the smallest eps from which on Dirichlet is never behind by > 1 se."""
    from lib.experiments import run
    from lib.experiments.data import DATASETS
    from lib.experiments.preprocessing import prepare
    from lib.privacy.guarantees import RenyiDP
    epsilons = np.logspace(-3, 1, 10)
    out = {}
    for binning in ("public", "quantile"):
        data = {name: prepare(name, binning=binning) for name in DATASETS}
        res = run("naive-bayes", ("dirichlet", "mle"), epsilons, data=data, n_repeats=10,
                  target=RenyiDP(5.0, 1.0), seed=20230201)
        for name in DATASETS:
            acc = {m: res[(res.model == m) & (res.dataset == name)].groupby("epsilon").accuracy
                   for m in ("dirichlet", "mle")}
            g = acc["dirichlet"]
            behind = (acc["mle"].mean() - g.mean() > g.std(ddof=1) / np.sqrt(g.count())).reindex(epsilons).to_numpy()
            out[name, binning] = epsilons[0] if not behind.any() else (
                epsilons[np.flatnonzero(behind).max() + 1] if np.flatnonzero(behind).max() + 1 < epsilons.size
                else np.inf)
    return out, tuple(DATASETS)


@register("ex-07-within-se",
          Answer("budget_ex", "table", "per dataset, the smallest eps of the grid from which on the Dirichlet "
                                       "accuracy is never more than one se below the non-private one (inf: never)",
                 keys=_NB_DATASETS, columns=("public", "quantile")),
          count("later", "the number of datasets where the public pipeline needs a larger eps"))
def _(a):
    expected, names = _within_se_budgets()
    assert set(names) == set(_NB_DATASETS), "the chapter's datasets changed: update the check"
    exp = np.array([[expected[n, b] for b in ("public", "quantile")] for n in _NB_DATASETS])
    # grid points (or inf), recomputed from the same seeded releases: exact
    assert np.array_equal(np.isinf(a.budget_ex), np.isinf(exp)), "budget_ex: 'never' (inf) in the wrong cells"
    _close(np.where(np.isinf(exp), 0, a.budget_ex), np.where(np.isinf(exp), 0, exp), "budget_ex", 1e-9)
    assert a.later == int((exp[:, 0] > exp[:, 1]).sum()), f"later = {a.later}: count the rows where public > quantile"


# ---- chapter 8 -----------------------------------------------------------------------------
def _network_ll(net, c):
    """Test log-likelihood of eq. (11) with every table estimated as (N_jc + c) / (N_c + c n_k),
    counted here with numpy (not lib.models.bayesian_network's count_tables / log_likelihood)."""
    train, test = np.asarray(net.train), np.asarray(net.test)
    total = 0.0
    for k, parents in enumerate(net.parents):
        parents = list(parents)
        dims = [int(net.n_values[j]) for j in parents]
        n_k = int(net.n_values[k])
        config = lambda codes: np.ravel_multi_index(codes[:, parents].T, dims) if parents \
            else np.zeros(len(codes), dtype=int)
        counts = np.zeros((int(np.prod(dims)), n_k))
        np.add.at(counts, (config(train), train[:, k]), 1)
        theta = (counts + c) / (counts.sum(1, keepdims=True) + c * n_k)
        total += np.log(theta[config(test), test[:, k]]).sum()
    return total


@register("ex-08-crossing",
          Answer("z_ex", "series", "z of (LL Dirichlet - LL Gaussian) on Adult at the eight budgets, indexed by eps"),
          real("cross_ex", "the smallest of the eight eps with z < -3 (total RDP eps at lambda = 5)"))
def _(a):
    from lib.experiments.engine import evaluate
    from lib.experiments.tasks import BayesianNetwork as NetworkTask
    from lib.experiments.verdicts import cell_z as compare
    from lib.experiments.networks import prepare_network
    epsilons = np.logspace(-3, 1, 10)
    grid = np.geomspace(epsilons[7], epsilons[8], 8)
    _close(np.sort(a.z_ex.index.to_numpy()), grid, "z_ex's index (eight eps between the two grid points)", 1e-12)
    k = int(np.argmin(np.abs(grid - a.cross_ex)))
    _close(a.cross_ex, grid[k], "cross_ex (one of the eight budgets)", 1e-12)
    assert 0 < k, "cross_ex: the Dirichlet network wins at the first budget, so the crossing is later"
    # a reduced rerun: the two budgets around the student's crossing only (the grid's seed: the same releases)
    task = NetworkTask(prepare_network("Adult", binning="public"))
    import pandas as pd
    res = pd.concat([evaluate(task, m, grid[[k - 1, k]], 10, seed=20230201, dataset="Adult")
                     for m in ("dirichlet", "gaussian")])
    z = compare(res, "dirichlet", "gaussian", "log_likelihood").z.droplevel("dataset")
    assert z.iloc[1] < -3, f"cross_ex = {a.cross_ex:.4g}: the Gaussian network is not significantly better there " \
                           f"(z = {z.iloc[1]:.1f})"
    assert z.iloc[0] >= -3, f"cross_ex = {a.cross_ex:.4g}: not the smallest (z = {z.iloc[0]:.1f} at {grid[k - 1]:.4g})"
    student = a.z_ex.sort_index().to_numpy()[[k - 1, k]]
    _close(student, z.to_numpy(), "z_ex at the two budgets around the crossing", 1e-6, 1e-6)


@register("ex-08-pseudo-count",
          Answer("loss_ex", "table", "relative loss (LL_{alpha/r} - LL_{0.1}) / |LL_{0.1}| of the smoothed model, "
                                     "per network and pipeline (dimensionless)",
                 keys=("Adult", "Bank", "GermanCredit"), columns=("public", "quantile")))
def _(a):
    from lib.mechanisms.dirichlet.calibration import calibrate
    from lib.privacy.guarantees import RenyiDP
    from lib.experiments.networks import NETWORKS, prepare_network
    assert set(NETWORKS) == {"Adult", "Bank", "GermanCredit"}, "the chapter's networks changed: update the check"
    for i, name in enumerate(("Adult", "Bank", "GermanCredit")):
        cal = calibrate(RenyiDP(5.0, 10.0).split(len(NETWORKS[name])).epsilon, 5.0)
        for j, binning in enumerate(("public", "quantile")):
            net = prepare_network(name, binning=binning)
            ll_a, ll_01 = _network_ll(net, cal.alpha / cal.r), _network_ll(net, 0.1)
            # sums of ~1e4 logs: 1e-9 relative is rounding
            _close(a.loss_ex[i, j], (ll_a - ll_01) / abs(ll_01), f"loss_ex[{name}, {binning}]", 1e-9)
    assert (a.loss_ex[:, 0] < a.loss_ex[:, 1]).all(), "the public bins should lose less to the pseudo-count"


# ---- chapter 9 -----------------------------------------------------------------------------
@register("ex-09-neighbour-edges",
          Answer("base_enc", "encoding", "the encodings of GermanCredit", keys=("public", "quantile")),
          Answer("moved_enc", "encoding", "the encodings of its neighbour (the first record in the training split "
                                          "replaced by the record with the largest amount)", keys=("public", "quantile")))
def _(a):
    from lib.experiments.preprocessing import encode_dataset, frame
    from tools.student.answers import array
    edges = lambda enc, b, what: array(np.asarray(enc[b].loc["amount", "edges"]), f"{what}[{b!r}] edges of amount",
                                       (None,))
    german = frame("GermanCredit")
    largest = german.loc[german["amount"].idxmax()]
    base = {b: encode_dataset(german, "GermanCredit", binning=b)[1] for b in ("public", "quantile")}
    for b in ("public", "quantile"):
        _close(edges(a.base_enc, b, "base_enc"), edges(base, b, "base"), f"base_enc[{b!r}] edges of amount "
               "(GermanCredit itself)", 1e-12)
    for i in range(10):  # the neighbour of the exercise: the first record whose replacement moves the edges
        neighbour = german.copy()
        neighbour.loc[neighbour.index[i]] = largest
        moved = {b: encode_dataset(neighbour, "GermanCredit", binning=b)[1] for b in ("public", "quantile")}
        if not np.array_equal(edges(moved, "quantile", "m"), edges(base, "quantile", "b")):
            break
    e_student = edges(a.moved_enc, "quantile", "moved_enc")
    assert e_student.shape == edges(moved, "quantile", "m").shape and \
        np.allclose(e_student, edges(moved, "quantile", "m"), rtol=1e-12), \
        f"moved_enc['quantile']: not the encoding of the neighbour with record {i} replaced"
    assert not np.array_equal(e_student, edges(a.base_enc, "quantile", "base_enc")), \
        "the quantile edges of amount did not move: replace a training record with the largest one"
    assert all(a.base_enc["public"][c].map(repr).equals(a.moved_enc["public"][c].map(repr))
               for c in a.base_enc["public"].columns), "the public encoding changed: it must not depend on the records"


@register("ex-09-flat-price",
          Answer("worst_ratio", "mapping", "the smallest ratio r(flattened) / r(row length) over GermanCredit's "
                                           "tables, at each eps_hat", keys=(0.1, 1.0, 10.0)))
def _(a):
    from lib.experiments.networks import prepare_network
    from lib.mechanisms.gohari import gohari_calibrate
    from lib.models.bayesian_network import network_spec
    net = prepare_network("GermanCredit", binning="public")
    spec = network_spec(net.n_values, net.parents, net.train.shape[0])
    m = spec.n_releases
    for eps_hat in (0.1, 1.0, 10.0):
        r = lambda d: gohari_calibrate(eps_hat / m, 1e-5 / m, lam=5.0, n_total=spec.n_total, d=d).r
        expected = min(r(rows * d) / r(d) for rows, d in spec.shapes)
        # two root searches solved to ~1e-10 relative
        _close(a.worst_ratio[eps_hat], expected, f"worst_ratio[{eps_hat:g}]", 1e-8)


# ---- chapter 15 ----------------------------------------------------------------------------
@register("ex-15-witness",
          vector("y_ex", (5,), "the witness: a point of the simplex"),
          real("ratio", "the log density ratio log p_x(y_ex) - log p_x'(y_ex) (nats)"))
def _(a):
    y = a.y_ex
    assert np.all(y > 0) and abs(y.sum() - 1) < 1e-9, "y_ex must be a point of the simplex"
    from lib import DirichletMechanism
    mech = DirichletMechanism(0.5, 10.0)
    p = mech.r * np.array([0, 0, 1, 0, 0]) + mech.alpha
    q = mech.r * np.array([1, 0, 0, 0, 0]) + mech.alpha
    # the ratio recomputed with scipy's Dirichlet log density (values ~100: 1e-8 relative is rounding)
    direct = stats.dirichlet.logpdf(y, p) - stats.dirichlet.logpdf(y, q)
    _close(a.ratio, direct, "ratio", 1e-8)
    assert direct > 100, f"the log density ratio at y_ex is {direct:.3f}, not above 100"


_ROOM = ("eps_hat (Lemma 3)", "exact delta / 1e-5", "eps_hat / eps needed")


@register("ex-15-room",
          Answer("room", "table", "per eps: Lemma 3's eps_hat at lambda = 10, delta = 1e-5; the exact delta it "
                                  "spends / 1e-5; eps_hat / the exact eps the pair needs", keys=(0.1, 1.0),
                 columns=_ROOM))
def _(a):
    from lib import DirichletMechanism
    from lib.theory.counterexample import exact_delta, exact_epsilon
    expected = []
    for eps in (0.1, 1.0):
        mech = DirichletMechanism(eps, 10.0)
        p, q = mech.concentration([0, 1, 0]), mech.concentration([1, 0, 0])
        # eq. (14) written out: eps_hat = eps + log(1 - 1/lam) - (log delta + log lam) / (lam - 1)
        eps_hat = eps + np.log1p(-1 / 10) - (np.log(1e-5) + np.log(10.0)) / 9
        spent = max(exact_delta(p, q, eps_hat), exact_delta(q, p, eps_hat))
        needed = max(exact_epsilon(p, q, 1e-5), exact_epsilon(q, p, 1e-5))
        expected.append([eps_hat, spent / 1e-5, eps_hat / needed])
    # exact deltas and epsilons by quadrature and root search: 1e-6 relative
    _close(a.room, np.array(expected), "room", 1e-6)
    assert (a.room[:, 1] <= 1).all(), "Lemma 3 holds: the exact delta is at most 1e-5"


# ---- chapter 10 ----------------------------------------------------------------------------
@register("ex-10-calibrate",
          real("r_ex", "the diffused posterior's largest scale r at (lambda, eps) = (4, 1), prior 1 over 3 cells, N = 50"))
def _(a):
    from lib.mechanisms.posterior_sampling import worst_case
    r = a.r_ex
    assert r > 0, f"r_ex = {r}: a scale is positive"
    at, above = worst_case(np.ones(3), r, 4.0, 50), worst_case(np.ones(3), 1.001 * r, 4.0, 50)
    assert at <= 1.0 * (1 + 1e-12), f"r_ex = {r}: the worst case {at:.6f} exceeds eps = 1"
    assert above > 1.0, f"r_ex = {r}: not the largest scale (at 1.001 r the worst case is {above:.6f})"


@register("ex-10-brute-force",
          real("exact", "worst_case of the diffused posterior, two-row table, prior 1 over 3 cells, r = 0.3, "
                     "lambda = 4, N = 4 (nats; the exercise's last setting)"),
          real("brute", "brute_force_worst_case at the same setting (nats)"))
def _(a):
    from itertools import product
    # the setting asked about, recomputed here by enumeration: two rows of three cells, N = 4 records, the
    # diffused posterior Dir(prior + r x) per row; neighbours move one record (within or across rows)
    r, lam, prior = 0.3, 4.0, np.ones(3)
    tables = [np.array(c).reshape(2, 3) for c in product(range(5), repeat=6) if sum(c) == 4]

    def logb(w):
        return special.gammaln(w).sum(-1) - special.gammaln(w.sum(-1))

    def renyi(x, y):
        u, v = prior + r * x, prior + r * y
        return float((logb(lam * u + (1 - lam) * v) - lam * logb(u) + (lam - 1) * logb(v)).sum() / (lam - 1))

    worst = 0.0
    cells = [(i, j) for i in range(2) for j in range(3)]
    for x in tables:
        for s in cells:
            if x[s] == 0:
                continue
            for t in cells:
                if t != s:
                    y = x.copy()
                    y[s] -= 1
                    y[t] += 1
                    worst = max(worst, renyi(x, y))
    assert worst > 0
    # sums of log-Gamma values ~10: 1e-9 relative is rounding
    _close(a.exact, worst, "exact (the closed form at the exercise's diffused two-row setting)", 1e-9)
    _close(a.brute, worst, "brute (the brute force at the same setting)", 1e-9)


# ---- chapter 11 ----------------------------------------------------------------------------
def _renyi_1d(n, beta, rho, lam, rng, n_pairs, c=2.0):
    """Largest Renyi divergence of order lam between the tempered 1-d logistic posteriors of random
    neighbouring data sets (x in [-c, c], the last record moved from c to -c), on a grid of 20,001 points."""
    from lib.models import logistic_regression as gp
    w = np.linspace(-25, 25, 20001)  # the widest posterior here has sd 1/sqrt(n beta0) = 1.6
    worst = 0.0
    for _ in range(n_pairs):
        x, y = rng.uniform(-c, c, n), rng.integers(0, 2, n)
        x[-1] = c                      # the replaced record moves from c to -c with its label kept:
        x2, y2 = x.copy(), y.copy()    # the largest change of the likelihood's gradient, 2 c
        x2[-1] = -c
        lp = rho * gp.log_likelihood(w[:, None], x[:, None], y) - 0.5 * n * beta * w**2
        lq = rho * gp.log_likelihood(w[:, None], x2[:, None], y2) - 0.5 * n * beta * w**2
        lp, lq = lp - special.logsumexp(lp), lq - special.logsumexp(lq)
        worst = max(worst, special.logsumexp(lam * lp + (1 - lam) * lq) / (lam - 1))
    return worst


@register("ex-11-bound",
          real("beta_4", "Algorithm 4's prior precision beta for n = 8, c = 2, beta0 = 0.05, (lambda, eps) = (4, 0.5)"),
          real("rho_5", "Algorithm 5's temperature rho in (0, 1] at the same setting"))
def _(a):
    from lib.models import logistic_regression as gp
    _close(a.beta_4, float(gp.concentrated_beta(0.5, 4.0, 8, 0.05, c=2.0)), "beta_4 (Algorithm 4 at c = 2)", 1e-9)
    _close(a.rho_5, float(gp.diffuse_rho(0.5, 4.0, 8, 0.05, c=2.0)), "rho_5 (Algorithm 5 at c = 2)", 1e-9)
    # the exercise's setting: n = 8, c = 2, beta0 = 0.05, lambda = 4, eps = 0.5; own neighbours and seed
    rng = np.random.default_rng(2812)
    # Theorems 16/17 bound the divergence by eps; in one dimension by eps / 4 (see the chapter);
    # 1e-9 is quadrature rounding on a grid 40 sd wide
    for name, beta, rho in (("beta_4", a.beta_4, 1.0), ("rho_5", 0.05, a.rho_5)):
        div = _renyi_1d(8, beta, rho, 4.0, rng, n_pairs=10)
        assert div <= 0.5 / 4 + 1e-9, f"{name}: a neighbouring pair has divergence {div:.4f} > eps / 4 = 0.125"


@register("ex-11-rows",
          count("n_min", "the smallest number of rows at which the non-private posterior (beta0 = 1e-3, c = 1) is "
                     "(1, 1e-5)-DP"),
          real("rho_adult", "Algorithm 5's temperature on Adult's training set at (1, 1e-5)"))
def _(a):
    from lib.models import logistic_regression as gp
    from lib.experiments.preprocessing import prepare

    def eps_hat(n):  # the non-private posterior is (lambda, 2 lambda / (n beta0))-RDP (c = 1);
        lam = 1 + np.exp(np.linspace(np.log(1e-3), np.log(1e5), 400_001))  # eq. (14) minimised on a grid
        return float((2 * lam / (n * gp.BETA0) - _balle_budget(0.0, lam, 1e-5)).min())

    n = a.n_min
    assert n > 1, f"n_min = {n}: a number of rows"
    # eps_hat moves by ~1e-5 per row here and the grid's minimum is within ~1e-8 of the true one
    assert eps_hat(n) < 1.0, f"n_min = {n}: the non-private posterior is not (1, 1e-5)-DP at n_min rows"
    assert eps_hat(n - 1) > 1.0, f"n_min = {n}: not the smallest such n (n_min - 1 rows suffice)"
    n_adult = len(prepare("Adult", binning="public").y_train)
    expected = float(gp.DiffuseLogistic.settings(gp.rdp_slope_for_dp(1.0, 1e-5), 1.0, n_adult).rho[0])
    _close(a.rho_adult, expected, "rho_adult (Algorithm 5 on Adult)", 1e-9)
    assert a.rho_adult < 1.0, "rho_adult: Adult has fewer rows than n_min, so Algorithm 5 tempers"


@register("ex-11-ops",
          vector("err_ops2", (None,), "the test error rate (a fraction) of each OPS release with ops_factor = 2 at "
                                 "eps_hat = 3 on Adult (N_REPEATS releases, N_SWEEPS sweeps)"),
          real("z_ops2", "z of (mean error of OPS - Algorithm 5's error in the head-to-head table)"))
def _(a):
    from lib.experiments.tasks import logistic_regression as glm_data
    from lib.models import logistic_regression as gp
    err = a.err_ops2
    assert err.size >= 2 and ((0 <= err) & (err <= 1)).all(), "err_ops2: error rates in [0, 1], one per release"
    adult = glm_data.adult()
    n = len(adult.y_train)
    # a reduced rerun with its own seed: 10 releases of OPS (constant 2) and of Algorithm 5, 4 sweeps
    ref = {}
    for name, setting in (("ops", gp.OPSLogistic.settings(3.0, 1.0, n, ops_factor=2.0)),
                          ("alg5", gp.DiffuseLogistic.settings(3.0, 1.0, n))):
        e = gp.error_rate(gp.sample(adult.X_train, adult.y_train, setting, 10, 4, rng=2811).w[0],
                          adult.X_test, adult.y_test)
        ref[name] = (e.mean(), e.std(ddof=1) / np.sqrt(e.size))
    _agree(err.mean(), err.std(ddof=1) / np.sqrt(err.size), *ref["ops"], "err_ops2's mean (OPS, constant 2)")
    z_ref = (ref["ops"][0] - ref["alg5"][0]) / np.hypot(ref["ops"][1], ref["alg5"][1])
    assert z_ref > 3, f"the rerun does not separate OPS from Algorithm 5 (z = {z_ref:.1f})"
    assert a.z_ops2 > 3, f"z_ops2 = {a.z_ops2:.1f}: OPS with the constant 2 is still clearly behind Algorithm 5 " \
                         f"(a rerun gives z = {z_ref:.1f})"


# ---- chapter 12 ----------------------------------------------------------------------------
@register("ex-12-gamma",
          Answer("mech_ex", "fields", "hm.SmoothedHellinger((0.5, 0.5), 10, 2.0, 0.1); .gamma its smoothing "
                                      "parameter", keys=("gamma",)),
          vector("pmf_ex", (11,), "the output distribution over the released counts 0..10 on a data set with 3 ones, "
                             "from Definition 2.1 (probabilities)"))
def _(a):
    from lib.mechanisms import hellinger as hm
    n, eps, delta, ones = 10, 2.0, 0.1, 3
    # the note's printed gamma, written out here
    _close(a.mech_ex.gamma, np.log(1 - eps / (2 * np.log(delta / (2 * (n + 1))))), "mech_ex.gamma", 1e-12)
    pmf = a.pmf_ex
    assert abs(pmf.sum() - 1) < 1e-12 and (pmf >= 0).all(), "pmf_ex: a distribution over 0..10"
    assert int(np.argmax(pmf)) == ones, "pmf_ex: the true count 3 should be the most likely release"
    _close(pmf, np.exp(hm.SmoothedHellinger((0.5, 0.5), n, eps, delta).log_pmf[ones]),
           "pmf_ex (the mechanism's distribution on 3 ones)", 1e-9, 1e-15)


@register("ex-12-sparse",
          vector("fractions", (3,), "the largest fraction of epsilon spent by a pair of neighbouring counts, one per prior "
                               "(1e-2, 1e-3, 1e-4), in that order"))
def _(a):
    from lib.mechanisms import hellinger as hm
    for f, p in zip(a.fractions, (1e-2, 1e-3, 1e-4)):
        mech = hm.SmoothedHellinger((p, p), 300, 50.0, 0.5)
        lp = mech.log_pmf
        # the pure epsilon spent, by brute force over the neighbouring counts (a, a + 1)
        spend = max(np.abs(lp[b] - lp[b + 1]).max() for b in range(300)) / 50.0
        _close(f, spend, f"the fraction of epsilon spent at prior ({p:g}, {p:g})", 1e-9)
    fr = a.fractions.tolist()
    assert max(fr) < 1.0 and fr == sorted(fr), "the fractions should grow with sparser priors and stay below 1"


_H2H = ("M_H", "Laplace", "Dirichlet (exact d=2)")


@register("ex-12-crossover",
          Answer("cross", "mean_se", "the expected Hellinger distance of each mechanism's released posterior on "
                                     "Adult's label and its standard error, per eps_hat (as hx.head_to_head returns "
                                     "them; delta = 1e-6, uniform prior, 2000 draws)",
                 keys=(4.0, 5.0), columns=_H2H))
def _(a):
    import lib.experiments.hellinger as hx
    from lib.experiments.preprocessing import prepare
    y = np.asarray(prepare("Adult", binning="public").y_train)
    ones, n = int(y.sum()), int(y.size)
    for i, eps_hat in enumerate((4.0, 5.0)):
        # a rerun with its own seed: M_H's expectation is exact, the others agree within 4 standard errors
        ref = hx.head_to_head((1.0, 1.0), (ones, n - ones), eps_hat, 1e-6, reference=np.array([0.3 * n, 0.7 * n]),
                              repeats=2000, rng=np.random.default_rng([2812, i]))
        for j, name in enumerate(_H2H):
            (mean, se), (ref_mean, ref_se) = a.cross[i, j], ref[name]["hellinger"]
            what = f"cross[{eps_hat:g}][{name!r}]"
            if ref_se == 0:
                _close(mean, ref_mean, f"{what} mean (an exact expectation)", 1e-9)
                continue
            # the standard error of a 2000-draw mean is itself known to ~2%: a factor 1.5 either way is wrong
            assert ref_se / 1.5 <= se <= 1.5 * ref_se, f"{what}: standard error {se:.3g}, a 2000-draw mean has {ref_se:.3g}"
            _agree(mean, se, ref_mean, ref_se, f"{what} mean")
    mh, lap = a.cross[:, 0, 0], a.cross[:, 1, :]
    assert mh[0] - lap[0, 0] > 3 * lap[0, 1], "at eps_hat = 4 Laplace should be ahead of M_H by 3 standard errors"
    assert lap[1, 0] - mh[1] > 3 * lap[1, 1], "at eps_hat = 5 M_H should be ahead of Laplace by 3 standard errors"


# ---- chapter 13 ----------------------------------------------------------------------------
@register("ex-13-mean",
          vector("x_ex", (40,), "the 40 values drawn from [0.2, 0.8]"),
          real("local", "the local sensitivity LS(x_ex) of the mean on [0, 1]"),
          real("global_", "the global sensitivity (U - L) / n"),
          vector("betas", (None,), "the smoothing parameters beta, from 1e-4 to 10 (any spacing)"),
          vector("smooth", (None,), "smooth_sensitivity_mean at each beta of betas"))
def _(a):
    x, n = a.x_ex, a.x_ex.size
    assert (x >= 0.2).all() and (x <= 0.8).all(), "x_ex: 40 values in [0.2, 0.8]"
    # replacing one record of x in [0, 1] moves the mean by at most max(x_i, 1 - x_i) / n (brute force)
    local = max(max(xi, 1 - xi) for xi in x) / n
    _close(a.local, local, "local", 1e-12)
    _close(a.global_, 1 / n, "global_", 1e-12)
    b = a.betas
    assert b.size >= 2 and np.isclose(b.min(), 1e-4, rtol=1e-9) and np.isclose(b.max(), 10, rtol=1e-9), \
        f"betas: from 1e-4 to 10 (got {b.min():.3g} .. {b.max():.3g} with {b.size} values)"
    assert a.smooth.shape == b.shape, f"smooth: one value per beta ({b.size}), got {a.smooth.size}"
    _close(a.smooth, np.maximum(local, np.exp(-b) / n), "smooth (at your betas)", 1e-10)


# ---- chapter 14 ----------------------------------------------------------------------------
def _flip_z(n_rows, eps, seed, draws=20_000):
    """z of (mean KL of the Dirichlet release - mean KL of the Laplace release) for the first n_rows
    training rows' class counts of Adult, with fresh random numbers (not the chapter's seeds)."""
    from lib.experiments.preprocessing import prepare
    from lib.mechanisms.protocol import ApproximateDP, ReleaseSpec, get
    adult = prepare("Adult", binning="public")
    counts = np.bincount(adult.y_train[:n_rows], minlength=adult.n_classes)
    p = counts / n_rows
    spec = ReleaseSpec.of([counts], n_rows)
    kls = []
    for k, name in enumerate(("dirichlet", "laplace")):
        y = get(name).calibrate(ApproximateDP(eps, 1e-5), spec).releases[0].release(
            np.broadcast_to(counts, (draws, counts.size)), np.random.default_rng([2815, seed, n_rows, k]))
        with np.errstate(divide="ignore", invalid="ignore"):
            kls.append(np.where(p > 0, p * np.log(p / y), 0.0).sum(-1))
    return (kls[0].mean() - kls[1].mean()) / np.hypot(*(v.std(ddof=1) / np.sqrt(draws) for v in kls))


_FLIP_GRID = [0.1, 0.25, 0.5, 1.0, 2.0, 4.0]


@register("ex-14-flip",
          Answer("flip", "mapping", "for the first 30 and 100 rows, the smallest eps_hat of the grid "
                                    "(0.1, 0.25, 0.5, 1, 2, 4) at which Laplace has the lower expected KL",
                 keys=(30, 100)))
def _(a):
    for n_rows in (30, 100):
        e = a.flip[n_rows]
        assert e in _FLIP_GRID[1:], f"flip[{n_rows}] = {e}: one of the grid's budgets (after the first)"
        before = _FLIP_GRID[_FLIP_GRID.index(e) - 1]
        # fresh draws: Laplace must lose at the budget before the flip and win at it, each by |z| > 3
        # (20,000 draws: on the book's answer the z are -31 / 8.9 (N = 30) and -6.7 / 53 (N = 100),
        # at 4,000 one was 3.2, too close to the threshold)
        z_before, z_at = _flip_z(n_rows, before, 0), _flip_z(n_rows, e, 1)
        assert z_before < -3, f"flip[{n_rows}] = {e}: Laplace is not clearly worse at {before} (z = {z_before:.1f})"
        assert z_at > 3, f"flip[{n_rows}] = {e}: Laplace is not clearly better there (z = {z_at:.1f})"


@register("ex-14-author-order",
          Answer("placed", "table", "log-likelihood lost against the non-private network, nats per test record, "
                                    "mean of the releases on the book's split (R_GRID each)",
                 keys=("Adult", "Bank", "GermanCredit"), columns=("dirichlet", "dirichlet_fixed")),
          Answer("z_fixed", "series", "z of (LL author's order - LL chapter's order) per network",
                 keys=("Adult", "Bank", "GermanCredit")))
def _(a):
    from lib.experiments.engine import run
    from lib.experiments.verdicts import cell_z as compare
    from lib.experiments.defaults import DEFAULT_SEED
    from lib.experiments.networks import prepare_network
    from lib.mechanisms.protocol import ApproximateDP, get

    class Fixed(get("dirichlet").configured(order_rule="fixed")):
        name, label = "dirichlet_fixed_check", "Dirichlet, fixed order (check)"

    names = ("Adult", "Bank", "GermanCredit")
    nets = {name: prepare_network(name, seed=1, binning="public") for name in names}
    # a rerun with its own seed (20 releases per network and mechanism)
    res = run("bayesian-network", ("mle", "dirichlet", Fixed), [1.0], target=ApproximateDP(1.0, 1e-5), data=nets,
              n_repeats=20, seed=DEFAULT_SEED + 2811)
    z_ref = compare(res, "dirichlet_fixed_check", "dirichlet", "log_likelihood").z.droplevel(1).reindex(names)
    verdict = lambda z: np.sign(z) * (np.abs(z) > 3)
    assert (np.abs(z_ref) > 3).all(), "the rerun is not decisive on every network: update the check"
    assert verdict(a.z_fixed).tolist() == verdict(z_ref.to_numpy()).tolist(), \
        f"z_fixed = {np.round(a.z_fixed, 1).tolist()}: the rerun decides {verdict(z_ref.to_numpy()).tolist()} " \
        "(+1 ahead, -1 behind, 0 undecided) on " + ", ".join(names)
    g = res.groupby(["dataset", "model"]).log_likelihood
    mean, se = g.mean().unstack("model"), (g.std(ddof=1) / np.sqrt(g.count())).unstack("model")
    for i, name in enumerate(names):
        n_test = nets[name].test.shape[0]
        for j, model in enumerate(("dirichlet", "dirichlet_fixed_check")):
            ref = (mean.loc[name, "mle"] - mean.loc[name, model]) / n_test
            _agree(a.placed[i, j], se.loc[name, model] / n_test, ref, se.loc[name, model] / n_test,
                   f"placed[{name}, {('dirichlet', 'dirichlet_fixed')[j]}]")


NO_CHECK.update({
    "ex-13-printed": (
        "an essay: the answer is an argument about which smoothing makes the printed multiplier private",
        "full marks for (1) the additive bound at beta = eps/2 exceeding eps at eps = 0.1 and 1; (2) the exact "
        "loss (cauchy_exact_loss) and the densities (cauchy_density_loss) both below eps there, so the bound, not the "
        "multiplier, fails: the printed multiplier is eps-DP at beta = eps/2; (3) at beta = eps/6 the ordering "
        "tight < additive-bound multiplier < printed sqrt(2)/eps < Theorem 2's, with the numbers; "
        "(4) the conclusion stated in words. Deduct for a verdict taken from the additive bound alone."),
})
