"""Naive Bayes fit and predict against scikit-learn's CategoricalNB, from 10^4 to 10^7 rows: time, memory, scaling.

Each measurement runs in a fresh subprocess (so that its peak resident set is
its own): draw ``n`` rows of ``K = 20`` attributes with 10 values each and two
classes (int64 codes, the same seeded data for both), then fit and
predict_proba on the same rows: ``PrivateNaiveBayes`` (the Dirichlet mechanism
at RDP (5, 1)) and scikit-learn's ``CategoricalNB`` (the non-private peer). The
child reports the time of fit + predict_proba and its peak RSS
(``resource.getrusage``, which includes the data, 8 n K bytes), and the peak RSS
after drawing the data alone, so that the model's own memory is the
difference. The two libraries are measured interleaved, size by size; the
ratio ours / sklearn is printed per size (1 is parity with the peer). The
scaling exponent is the slope of log time against log n from 10^5 to the
largest size (1 is linear, the limit of one pass over the rows).

Run with ``python benchmarks/bench_naive_bayes.py [--max-rows 10000000] [--quick]``
(``--quick``: up to 10^6 rows). The 10^7-row run needs about 3-6 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np

K, VALUES = 20, 10

CHILD = r"""
import json, resource, sys, time
import numpy as np
which, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.integers({values}, size=(n, {k}))
y = (X[:, 0] + rng.integers(3, size=n) > 5).astype(np.int64)
if which == "ours":
    from lib.models.naive_bayes import PrivateNaiveBayes
    from lib.privacy.guarantees import RenyiDP
    model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0)
    fit = lambda: model.fit(X, y, n_values=np.full({k}, {values}), n_classes=2)
else:
    from sklearn.naive_bayes import CategoricalNB
    model = CategoricalNB(min_categories={values})
    fit = lambda: model.fit(X, y)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
fit()
p = model.predict_proba(X)
elapsed = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": elapsed, "peak_mb": peak / 1024, "data_mb": base / 1024,
                   "checksum": float(p[:, 1].sum())}}))
""".format(k=K, values=VALUES)


def measure(which, n):
    out = subprocess.run([sys.executable, "-c", CHILD, which, str(n)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-rows", type=int, default=10_000_000)
    p.add_argument("--repeats", type=int, default=1, help="runs per size (the fastest kept)")
    p.add_argument("--quick", action="store_true", help="up to 10^6 rows")
    args = p.parse_args(argv)
    if args.quick:
        args.max_rows = min(args.max_rows, 1_000_000)
    sizes = [n for n in (10_000, 100_000, 1_000_000, 10_000_000) if n <= args.max_rows]
    print(f"fit + predict_proba, {K} attributes x {VALUES} values, 2 classes; time (best of "
          f"{args.repeats}) and peak RSS (MB) of a fresh process, data included")
    print(f"{'rows':>10s} {'ours s':>8s} {'sklearn s':>9s} {'time ratio':>10s} {'ours MB':>8s} "
          f"{'sklearn MB':>10s} {'data MB':>8s}")
    times = {"ours": [], "sklearn": []}
    for n in sizes:
        runs = {w: [measure(w, n) for _ in range(args.repeats)] for w in ("ours", "sklearn")}
        r = {w: min(v, key=lambda x: x["seconds"]) for w, v in runs.items()}
        peak = {w: max(x["peak_mb"] for x in v) for w, v in runs.items()}
        for w in times:
            times[w].append(r[w]["seconds"])
        print(f"{n:10d} {r['ours']['seconds']:8.3f} {r['sklearn']['seconds']:9.3f} "
              f"{r['ours']['seconds'] / r['sklearn']['seconds']:9.2f}x {peak['ours']:8.0f} "
              f"{peak['sklearn']:10.0f} {r['ours']['data_mb']:8.0f}")
    big = [i for i, n in enumerate(sizes) if n >= 100_000]
    if len(big) >= 2:
        x = np.log([sizes[i] for i in big])
        for w in times:
            k = np.polyfit(x, np.log([times[w][i] for i in big]), 1)[0]
            print(f"scaling exponent of {w} from {sizes[big[0]]:.0e} to {sizes[big[-1]]:.0e} rows: k = {k:.3f}")


if __name__ == "__main__":
    main()
