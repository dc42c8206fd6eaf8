"""Counts from an engine (DuckDB) against the in-memory fit (numpy, pandas): time and peak memory.

Writes the synthetic table of ``examples/duckdb_counts.py`` (``--rows``, default 1e7)
to Parquet once, then runs each path in its own fresh process, so that each
process's peak resident memory (``ru_maxrss``) is that path's alone:

* ``duckdb``: one SQL ``GROUP BY`` in DuckDB on the Parquet file, then
  ``PrivateNaiveBayes.fit_counts`` (no row enters Python);
* ``numpy``: every row read into numpy (pyarrow), integer codes, ``PrivateNaiveBayes.fit``;
* ``pandas``: every row read into a DataFrame with the label as strings, ``fit`` with the
  public ``categories``/``classes`` (the scikit-learn-style call).

Printed per path: wall time (read + count + release), the peak resident memory
(``VmHWM``) and
its excess over a process that imported the same modules and did nothing else
(the baseline), and, in a second run of the path (tracemalloc slows every allocation),
the Python-heap peak of tracemalloc (numpy's arrays included; DuckDB's own memory is
outside the Python heap, so only ``ru_maxrss`` sees it).
All three release the same model (checked: equal tables from the same seed).

    python benchmarks/bench_counts.py --rows 1e7     (``make benchmark``: --rows 1e6)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def peak_rss_kib():
    """This process's peak resident memory in KiB: ``VmHWM`` of /proc (Linux), else ``ru_maxrss``.

    ``ru_maxrss`` survives ``exec`` on Linux: a child started by a parent that once
    held a large table would report the parent's peak. ``VmHWM`` belongs to the
    process's own address space.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(mode, path, trace):
    # every path imports the same modules first, so that the baseline is the same for all
    import duckdb  # noqa: F401
    import numpy as np
    import pandas  # noqa: F401
    import pyarrow.parquet as pq

    import duckdb_counts as ex
    from lib.models.naive_bayes import PrivateNaiveBayes
    from lib.privacy.guarantees import RenyiDP

    if mode == "write":
        ex.write_parquet(path, int(trace), seed=0)
        return {}
    if mode == "baseline":
        return {"seconds": 0.0, "tracemalloc_peak": 0, "checksum": None,
                "maxrss_kib": peak_rss_kib()}
    if trace:   # tracemalloc slows every allocation (each string of a label column): a run of its own
        tracemalloc.start()
    t0 = time.perf_counter()
    if mode == "duckdb":
        model = ex.release(ex.count_with_duckdb(path), epsilon=1.0, random_state=5)
    elif mode == "numpy":
        table = pq.read_table(path)
        X = np.column_stack([table.column(f).to_numpy() for f in ex.FEATURES])
        y = (table.column("y").to_numpy(zero_copy_only=False) == "yes").astype(np.int64)
        del table
        model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), n_values=list(ex.N_VALUES), classes=None,
                                  n_classes=2, random_state=5).fit(X.astype(np.int64), y)
    elif mode == "pandas":
        frame = pq.read_table(path).to_pandas()
        model = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), categories=[list(range(v)) for v in ex.N_VALUES],
                                  classes=list(ex.CLASSES), random_state=5)
        model.fit(frame[list(ex.FEATURES)], frame["y"])
    else:
        raise ValueError(mode)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] if trace else None
    return {"seconds": seconds, "tracemalloc_peak": peak,
            "maxrss_kib": peak_rss_kib(),
            "checksum": float(model.class_log_prior_.sum() + sum(t.sum() for t in model.feature_log_prob_))}


def main(argv=None):
    p = argparse.ArgumentParser(description="DuckDB counts vs the in-memory fit")
    p.add_argument("--rows", type=float, default=1e7)
    p.add_argument("--child", default=None)
    p.add_argument("--path", type=Path, default=None)
    p.add_argument("--trace", action="store_true")
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.path, int(args.rows) if args.child == "write" else args.trace)))
        return
    n = int(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.parquet"
        t0 = time.perf_counter()
        # written by a child process too: the parent stays small
        subprocess.run([sys.executable, __file__, "--child", "write", "--path", str(path), "--rows", str(n)],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        print(f"{n:,} rows written to Parquet ({path.stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - t0:.1f} s")
        results = {}
        for mode in ("baseline", "duckdb", "numpy", "pandas"):
            def measure(*extra):
                done = subprocess.run([sys.executable, __file__, "--child", mode, "--path", str(path), *extra],
                                      capture_output=True, text=True, check=True, cwd=ROOT)
                return json.loads(done.stdout.strip().splitlines()[-1])
            results[mode] = measure()
            if mode != "baseline":
                results[mode]["tracemalloc_peak"] = measure("--trace")["tracemalloc_peak"]
    base = results["baseline"]["maxrss_kib"] / 1024
    print(f"{'path':8} {'seconds':>8} {'peak RSS MiB':>13} {'over baseline':>14} {'tracemalloc MiB':>16}")
    for mode in ("duckdb", "numpy", "pandas"):
        r = results[mode]
        rss = r["maxrss_kib"] / 1024
        print(f"{mode:8} {r['seconds']:8.2f} {rss:13.0f} {rss - base:14.0f} {r['tracemalloc_peak'] / 2**20:16.1f}")
    print(f"baseline process (imports only): {base:.0f} MiB")
    duck_extra = results["duckdb"]["maxrss_kib"] / 1024 - base
    for mode in ("numpy", "pandas"):
        extra = results[mode]["maxrss_kib"] / 1024 - base
        memory = (f"memory over baseline {extra / duck_extra:.1f}x" if duck_extra >= 1 else
                  f"memory over baseline {extra:.0f} MiB against DuckDB's < 1 MiB")
        print(f"in-memory ({mode}) / DuckDB: time {results[mode]['seconds'] / results['duckdb']['seconds']:.1f}x, "
              + memory)
    sums = {m: results[m]["checksum"] for m in ("duckdb", "numpy", "pandas")}
    assert len(set(sums.values())) == 1, f"the three paths released different models: {sums}"
    print("the three paths released the same model (same seed, equal tables)")


if __name__ == "__main__":
    main()
