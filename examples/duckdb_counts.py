"""Release a private naive Bayes model from counts that DuckDB computes on a Parquet file.

The data never enter Python as rows: the script writes a synthetic table of
``--rows`` rows (default 1e8; seeded, in chunks of 1e6) to Parquet, counts it
with one SQL query in DuckDB (:func:`lib.models.counts.counts_sql`), builds the tables
over the public domain (:func:`lib.models.counts.tables_from_rows`) and releases the
model with :meth:`lib.models.naive_bayes.PrivateNaiveBayes.fit_counts`.

    python examples/duckdb_counts.py --rows 100000000 --out /tmp/nb.parquet

The same query, written for Spark (``counts_sql(..., dialect="spark")``), runs
there on a view of the same file (``spark.sql(query).collect()`` gives the same
rows; tests/models/test_counts_spark.py checks it). Needs ``pip install "dirichlet-mechanism-book[counts]"``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from lib.models.counts import counts_sql, tables_from_rows
from lib.models.naive_bayes import PrivateNaiveBayes
from lib.privacy.guarantees import RenyiDP

#: The public domain of the synthetic table: 4 attributes and a binary class.
N_VALUES = (3, 5, 8, 12)
CLASSES = ("no", "yes")
FEATURES = tuple(f"x{k}" for k in range(len(N_VALUES)))
CHUNK = 1_000_000


def chunks(n_rows, seed=0, chunk=CHUNK):
    """The table, ``chunk`` rows at a time: ``(X codes (m, 4) int8, y codes (m,) int8)``.

    Each class has its own distribution per attribute (so the model has something
    to learn); one SeedSequence per chunk makes the data independent of ``chunk``
    boundaries' processing order.
    """
    root = np.random.SeedSequence(seed)
    profile_rng = np.random.default_rng(root.spawn(1)[0])
    profiles = [profile_rng.dirichlet(np.ones(v), size=len(CLASSES)) for v in N_VALUES]
    cdfs = [np.cumsum(p, axis=1) for p in profiles]
    for index, start in enumerate(range(0, n_rows, chunk)):
        m = min(chunk, n_rows - start)
        rng = np.random.default_rng([seed, 1, index])
        y = (rng.random(m) < 0.3).astype(np.int8)
        X = np.empty((m, len(N_VALUES)), dtype=np.int8)
        for k, cdf in enumerate(cdfs):
            u = rng.random(m)
            X[:, k] = np.minimum((u[:, None] > cdf[y]).sum(axis=1), N_VALUES[k] - 1)
        yield X, y


def write_parquet(path, n_rows, seed=0, chunk=CHUNK):
    """Write the table to ``path`` (columns x0..x3 as int8 codes, y as the class label string)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([*(pa.field(f, pa.int8()) for f in FEATURES), pa.field("y", pa.string())])
    labels = np.array(CLASSES, dtype=object)
    with pq.ParquetWriter(str(path), schema) as writer:
        for X, y in chunks(n_rows, seed, chunk):
            columns = [pa.array(X[:, k]) for k in range(X.shape[1])] + [pa.array(labels[y], pa.string())]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))


def count_with_duckdb(path, threads=None):
    """The rows of :func:`lib.models.counts.counts_sql` over the Parquet file, computed by DuckDB."""
    import duckdb

    con = duckdb.connect()
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    con.read_parquet(Path(path).as_posix()).create_view("rows_to_count")   # the file as a named relation
    query = counts_sql("rows_to_count", FEATURES, "y", dialect="duckdb")
    return con.sql(query).fetchall()


def release(rows, epsilon=1.0, random_state=None):
    """The private model from DuckDB's rows (public domain: N_VALUES, CLASSES)."""
    class_counts, tables = tables_from_rows(rows, [range(v) for v in N_VALUES], CLASSES)
    model = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, epsilon), n_values=list(N_VALUES), classes=list(CLASSES),
                              random_state=random_state)
    return model.fit_counts(class_counts, tables)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=float, default=1e8, help="rows of the synthetic table (default: 1e8)")
    p.add_argument("--out", type=Path, default=Path("nb_counts.parquet"), help="the Parquet file to write")
    p.add_argument("--epsilon", type=float, default=1.0, help="RDP budget of the whole model (default: 1.0)")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default: 0)")
    args = p.parse_args(argv)
    n_rows = int(args.rows)
    t0 = time.perf_counter()
    if not args.out.exists():
        write_parquet(args.out, n_rows, args.seed)
    t1 = time.perf_counter()
    rows = count_with_duckdb(args.out)
    t2 = time.perf_counter()
    model = release(rows, args.epsilon)   # fresh noise: a published model uses no fixed seed
    t3 = time.perf_counter()
    print(counts_sql(f"read_parquet('{args.out}')", FEATURES, "y"))
    print(f"rows: {n_rows:,}; write {t1 - t0:.1f} s, DuckDB count {t2 - t1:.2f} s, release {t3 - t2:.3f} s")
    print("released class prior:", np.round(np.exp(model.class_log_prior_), 4).tolist())


if __name__ == "__main__":
    main()
