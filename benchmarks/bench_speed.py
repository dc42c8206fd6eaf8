"""Issue 30: where the book's time went, each as a ratio old path / new path measured in this run.

1. Posterior-sampling calibration. The grid's RDP path (``grid.calibrate_many``)
   against the path before issue 30 (``calibrate`` budget by budget, one
   search per table shape, each worst case through ``_evaluate`` and
   ``renyi_divergence_dirichlet``: ``posterior_sampling.mechanism._search(...,
   reference=True)``), and the (eps_hat, delta) calibration (48 orders) against the same
   reference search shape by shape. The scales are asserted identical.
2. ``PrivateNaiveBayes.predict_proba`` (one model, flat lookups, codes
   validated once) against the batched ``log_proba`` it used before (the codes
   validated twice); fit + predict_proba against scikit-learn's CategoricalNB.
   The probabilities are asserted identical.
3. Import time, fresh interpreters: ``import lib.experiments`` (names imported
   on first use) against the modules the package imported eagerly before
   (``lib.experiments.analysis`` and ``.grid``: pandas, the data loaders).
4. Chapter start-up: the first ``myst_nb.glue`` call of a fresh interpreter,
   which imports nbformat -> jsonschema -> every optional format checker
   jsonschema finds, against the same with ``rfc3987_syntax`` absent (a Lark
   grammar built at import; no schema of nbformat or jupyter_events uses the
   "iri" formats it checks). This one measures an environment change the
   book does not make itself (see the issue's note).
5. The chapters' grids over splits (chapter 10's replicates, chapter 14's splits): ``grid.run``
   over four splits of GermanCredit with one shared ``cache`` (calibrations stored under
   ``grid._calibration_key``: the spec is public and equal on every split) against one fresh
   cache per split; the posterior samplers' batched draws
   (``_PosteriorSampler.log_release_tables``) against the protocol's table-by-table loop; and
   Gohari et al.'s mpmath reference ``delta_reference`` with ``mpmath.betainc`` against the
   continued fraction it evaluated before. Frames, draws and references are asserted equal.

6. Chapter 11's logistic posterior modes on Adult (the solve along decreasing
   ``n beta / rho`` with batched fixed-Hessian steps) against plain double-precision Newton
   setting by setting (the reference of ``tests/test_glm_posterior.py``), and chapter 12's
   ``head_to_head`` over five budgets with its memos (local sensitivities, distance rows,
   exact utilities) shared against the same with the memos cleared before each budget.

Run with ``python benchmarks/bench_speed.py [--rows 1000000] [--repeats 3]``.
Data: the UCI files (``DIRICHLET_DATA_DIR``) for Adult's and GermanCredit's
table shapes; without them the shapes are Adult's, typed in below.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from _timing import best_with_result as best
from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib.mechanisms import posterior_sampling as ps
from lib.experiments import grid
from lib.models.naive_bayes import PrivateNaiveBayes, log_proba, model_spec
from lib.mechanisms.protocol import ReleaseSpec, get

#: Adult's naive Bayes shapes and training size, used when the data files are not available.
ADULT = ReleaseSpec(((1, 2),) + ((2, 10), (2, 9), (2, 17), (2, 10), (2, 8), (2, 15), (2, 7), (2, 6), (2, 3),
                                 (2, 10), (2, 10), (2, 10), (2, 42)), 34189)


def specs():
    try:
        from lib.experiments.preprocessing import prepare

        out = {}
        for name in ("Adult", "GermanCredit"):
            s = prepare(name)
            out[name] = model_spec(s.n_values, s.n_classes, len(s.y_train))
        return out
    except Exception as exc:  # noqa: BLE001 - the benchmark runs without the data too
        print(f"(UCI data not available: {type(exc).__name__}; Adult's shapes typed in)")
        return {"Adult": ADULT}


def reference_scales(cls, eps, lam, spec):
    """{shape: scales} of the search before issue 30: shape by shape, the reference evaluator."""
    eps, lam = np.broadcast_arrays(np.asarray(eps, float), np.asarray(lam, float))
    return {sh: ps.mechanism._search([ps.Candidates(ps.prior_vector(cls.prior, sh[1]), spec.n_total, sh[0])],
                           np.zeros(eps.size, int), eps.ravel().copy(), lam.ravel().copy(), cls.kind,
                           reference=True)
            for sh in sorted(set(spec.shapes))}


def bench_calibration(repeats):
    print("1. posterior-sampling calibration (old: one search per budget and shape, reference evaluator)")
    budgets = grid.DEFAULT_EPSILONS
    totals = {"grid": [0.0, 0.0], "dp": [0.0, 0.0]}
    for data, spec in specs().items():
        m = len(spec.shapes)
        for name in ("geumlek_diffused", "geumlek_concentrated"):
            cls = get(name)

            def old_grid():
                return [reference_scales(cls, e / m, 5.0, spec) for e in budgets]

            t_old, ref = best(old_grid, repeats)
            targets = [grid.RDP_TARGET.with_level(e) for e in budgets]
            t_new, cals = best(lambda: grid.calibrate_many(cls, targets, spec), repeats)
            for r, cal in zip(ref, cals):
                assert [o.scale for o in cal.releases] == [float(r[sh][0]) for sh in spec.shapes]
            # the (eps_hat, delta) calibration's order grid, as in lib.mechanisms.posterior_sampling (the scales compared at every order)
            from lib.privacy.accounting import dp_to_rdp, min_order

            lam0 = min_order(1.0, grid.DP_DELTA)
            lams = lam0 + np.geomspace(1e-3 * lam0, min(1 / grid.DP_DELTA, 1e4) - lam0, 48)
            eps = dp_to_rdp(1.0, lams, grid.DP_DELTA, n_releases=m)
            d_old, ref = best(lambda: reference_scales(cls, eps, lams, spec), repeats)
            d_new, got = best(lambda: ps.mechanism._calibrate_shapes(eps, lams, cls.prior, spec.n_total,
                                                           sorted(set(spec.shapes)), cls.kind), repeats)
            assert all(np.array_equal(ref[sh], got[sh]) for sh in ref)
            t_dp, _ = best(lambda: cls.calibrate(ApproximateDP(1.0, grid.DP_DELTA), spec), repeats)
            print(f"   {data:12s} {name:21s} grid RDP ({len(budgets)} budgets): {t_old:6.3f} s -> {t_new:6.3f} s "
                  f"= {t_old / t_new:5.1f}x;  48-order search: {d_old:6.3f} s -> {d_new:6.3f} s = "
                  f"{d_old / d_new:5.1f}x ((eps_hat, delta) calibration {t_dp:.3f} s); scales identical")
            totals["grid"][0] += t_old
            totals["grid"][1] += t_new
            totals["dp"][0] += d_old
            totals["dp"][1] += d_new
    for k, (a, b) in totals.items():
        print(f"   total {k:4s}: {a:.3f} s -> {b:.3f} s = {a / b:.1f}x")


def bench_prediction(rows, repeats):
    print(f"2. naive Bayes prediction, {rows} rows x 20 attributes x 10 values, 2 classes")
    rng = np.random.default_rng(0)
    X = rng.integers(10, size=(rows, 20))
    y = (X[:, 0] + rng.integers(3, size=rows) > 5).astype(np.int64)
    n_values = np.full(20, 10)
    model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0)
    t_fit, _ = best(lambda: model.fit(X, y, n_values=n_values, n_classes=2), repeats)

    def old():
        Xc = model._check_X(X)  # validated here and again in log_proba (_model), as before
        out = log_proba(Xc, model.class_log_prior_[None], [t[None] for t in model.feature_log_prob_],
                        model.n_values_)[0]
        return np.exp(out, out=out)

    t_old, p_old = best(old, repeats)
    t_new, p_new = best(lambda: model.predict_proba(X), repeats)
    assert np.array_equal(p_old, p_new)
    print(f"   predict_proba: {t_old:.3f} s -> {t_new:.3f} s = {t_old / t_new:.1f}x (probabilities identical)")
    try:
        from sklearn.naive_bayes import CategoricalNB
    except ImportError:
        print("   (scikit-learn not installed: no CategoricalNB comparison)")
        return
    sk = CategoricalNB(min_categories=10)
    t_sk, _ = best(lambda: (sk.fit(X, y), sk.predict_proba(X)), repeats)
    ours = t_fit + t_new
    print(f"   fit + predict_proba: ours {ours:.3f} s (old path {t_fit + t_old:.3f} s), CategoricalNB "
          f"{t_sk:.3f} s: ours / sklearn = {ours / t_sk:.2f}x (old path {(t_fit + t_old) / t_sk:.2f}x)")


def fresh(code, repeats, env=None):
    """Fastest wall time of ``python -c code`` in a fresh interpreter, started in an empty folder (so that
    ``lib`` is the installed package, not a folder of the working directory)."""
    times = []
    with tempfile.TemporaryDirectory() as empty:
        for _ in range(repeats):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, cwd=empty, env=env, capture_output=True)
            times.append(time.perf_counter() - t)
    return min(times)


def bench_imports(repeats):
    print("3. import time (fresh interpreters, best of %d)" % repeats)
    empty = fresh("pass", repeats)
    base = fresh("import lib", repeats)
    old = fresh("import lib.experiments, lib.experiments.analysis, lib.experiments.grid", repeats)
    new = fresh("import lib.experiments", repeats)
    print(f"   python alone {empty:.3f} s; import lib {base:.3f} s")
    print(f"   import lib.experiments: {old:.3f} s -> {new:.3f} s = {old / new:.1f}x "
          f"(above import lib: {old - base:.3f} s -> {new - base:.3f} s)")
    code = ("import runpy, sys; sys.argv = ['lib.experiments', 'run', '--help']; "
            "runpy.run_module('lib.experiments', run_name='__main__')")
    try:
        t = fresh(code, repeats)
    except subprocess.CalledProcessError:  # --help exits 0; anything else is a failure of the command line
        t = float("nan")
    print(f"   python -m lib.experiments run --help: {t:.3f} s (depends on lib/experiments/cli.py's imports)")
    opt = fresh("import sys, lib.experiments.grid, lib.models.naive_bayes; assert 'scipy.optimize' not in sys.modules", 1)
    print(f"   the grid module imports no scipy.optimize ({opt:.3f} s)")


def bench_startup(repeats):
    print("4. chapter start-up: the first myst_nb glue() of a fresh interpreter")
    code = "from myst_nb import glue; glue('x', 1.0, display=False)"
    old = fresh(code, repeats)
    new = fresh("import sys; sys.modules['rfc3987_syntax'] = None; " + code, repeats)
    print(f"   with jsonschema's optional rfc3987_syntax: {old:.3f} s; without it: {new:.3f} s = {old / new:.1f}x "
          f"({old - new:.2f} s per chapter; an environment change, not made by the book)")


def bench_splits(repeats):
    print("5. grids over splits, batched posterior draws, the mpmath reference of chapter 6")
    import mpmath

    from lib.experiments.preprocessing import prepare
    from lib.mechanisms.gohari import reference
    from lib.mechanisms.protocol import Mechanism

    try:
        splits = [{"GermanCredit": prepare("GermanCredit", seed=k, binning="public")} for k in range(1, 5)]
    except Exception as exc:  # noqa: BLE001 - needs the data
        print(f"   (UCI data not available: {type(exc).__name__}; grids over splits skipped)")
    else:
        mechs = ["dirichlet", "geumlek_diffused", "geumlek_concentrated"]
        for privacy, budgets in ((grid.RDP_TARGET, [0.01, 0.1, 1.0, 10.0]),
                                 (ApproximateDP(1.0, grid.DP_DELTA), [0.1, 1.0, 10.0])):
            def each(shared):
                cache = {} if shared else None
                return [grid.run("naive-bayes", mechs, budgets, privacy=privacy, data=d, n_repeats=10, seed=k,
                                 cache=cache if shared else {}) for k, d in enumerate(splits)]

            t_old, old = best(lambda: each(False), repeats)
            t_new, new = best(lambda: each(True), repeats)
            assert all(a.equals(b) for a, b in zip(old, new))
            print(f"   {type(privacy).__name__:13s} 4 splits x {len(mechs)} mechanisms: {t_old:.3f} s -> {t_new:.3f} s "
                  f"= {t_old / t_new:.1f}x (frames identical)")
    rng = np.random.default_rng(0)
    tables = [rng.multinomial(3000, np.ones(2) / 2).astype(float)]
    tables += [rng.multinomial(1500, np.ones(2 * d) / (2 * d)).reshape(2, d).astype(float) for d in (10, 9, 17, 42)]
    spec = ReleaseSpec(((1, 2), (2, 10), (2, 9), (2, 17), (2, 42)), 3000)
    cls = get("geumlek_diffused")
    objects = cls.calibrate(RenyiDP(5.0, 1.0), spec).releases
    t_old, a = best(lambda: Mechanism.log_release_tables.__func__(cls, objects, tables, 40,
                                                                  np.random.default_rng(1)), repeats * 10)
    t_new, b = best(lambda: cls.log_release_tables(objects, tables, 40, np.random.default_rng(1)), repeats * 10)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    print(f"   posterior draws (5 tables x 40 draws): {t_old * 1e3:.2f} ms -> {t_new * 1e3:.2f} ms = "
          f"{t_old / t_new:.1f}x (draws identical)")

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests.test_gohari import _lentz_lower_tail  # the continued fraction of the reference before

    three, gamma = [4.88, 4.88, 137.1], 0.05
    saved = reference._mp_lower_tail
    try:
        reference._mp_lower_tail = lambda mp, x, a, b: _lentz_lower_tail(x, a, b)
        t_old, old = best(lambda: reference.delta_reference(gamma, three, method="inclusion_exclusion"), repeats)
    finally:
        reference._mp_lower_tail = saved
    t_new, new = best(lambda: reference.delta_reference(gamma, three, method="inclusion_exclusion"), repeats)
    with mpmath.workdps(50):
        err = abs(new / old - 1)
    print(f"   delta_reference (50 digits, inclusion-exclusion): {t_old:.3f} s -> {t_new:.3f} s = "
          f"{t_old / t_new:.1f}x (relative difference {mpmath.nstr(err, 3)})")


def bench_chapters(repeats):
    print("6. chapters 11 and 12: logistic posterior modes, smoothed-Hellinger head-to-head")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests.test_glm_posterior import _plain_newton  # full double-precision Newton, setting by setting
    from lib.experiments import glm as glm_data, hellinger as hx
    from lib.mechanisms import hellinger as hm
    from lib.models import logistic_regression as gp

    data = glm_data.adult()
    n = len(data.y_train)
    beta = gp.concentrated_beta(np.exp(np.arange(-5, 4.0)), 10.0, n)  # Figure 3's budgets at lambda = 10
    rho = np.ones_like(beta)
    Z = data.X_train * (2 * data.y_train - 1)[:, None]
    t_old, old = best(lambda: [_plain_newton(Z, b, 1.0, tol=1e-9)[0] for b in beta], 1)
    t_new, (w, _) = best(lambda: gp.mode(data.X_train, data.y_train, beta, rho), repeats)
    err = max(np.abs(w[i] - old[i]).max() / (1 + np.abs(old[i]).max()) for i in range(beta.size))
    print(f"   logistic posterior modes, Adult, {beta.size} settings: plain Newton per setting {t_old:.3f} s -> "
          f"{t_new:.3f} s = {t_old / t_new:.1f}x (largest relative difference of the modes {err:.1e})")

    def clear():
        for memo in (hm.sensitivity._beta_local_sensitivity_memo, hm.sensitivity._beta_hellinger_rows_memo, hx._candidate_utility_memo):
            memo.cache_clear()

    def h2h(fresh):
        out = []
        for k, eps in enumerate((0.1, 0.3, 1.0, 3.0, 10.0)):
            if fresh:
                clear()
            out.append(hx.head_to_head((1.0, 1.0), (8200, 25989), eps, 1e-6,
                                       reference=np.array([0.3 * 34189, 0.7 * 34189]), repeats=1000,
                                       rng=np.random.default_rng(k)))
        return out

    t_old, a = best(lambda: h2h(True), repeats)
    clear()
    t_new, b = best(lambda: h2h(False), repeats)
    assert repr(a) == repr(b)
    print(f"   head_to_head, Adult label (n = 34189), 5 budgets: memos cleared before each budget {t_old:.3f} s -> shared "
          f"{t_new:.3f} s = {t_old / t_new:.1f}x (results identical)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    bench_calibration(args.repeats)
    bench_prediction(args.rows, args.repeats)
    bench_imports(args.repeats)
    bench_startup(args.repeats)
    bench_splits(args.repeats)
    bench_chapters(args.repeats)


if __name__ == "__main__":
    main()
