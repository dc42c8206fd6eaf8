"""Counts on Spark and on DuckDB give one table and one released model (issue 39, problems 2 and 3).

A Parquet file of 1e6 rows with Adult's column names (hyphens, the reserved words ``select`` and
``order``, string columns beside integer-coded ones) is counted by the query of
lib.models.counts.counts_sql on a local[2] Spark session and in DuckDB; both give the tables numpy
counts from the rows, and fit_counts releases the same model bit for bit from either (the same
seed). The released model then scores the file inside Spark (mapInPandas) with the probabilities
of local predictions.

Marked ``spark`` (a JVM start, about a minute on an idle 2-core machine): `make spark` runs it, and
.ci/run calls that target after installing a Java runtime where none is found. Outside CI a missing
pyspark or Java skips it; in CI (CI set) it fails instead.
"""

import os
import shutil
import sys

import numpy as np
import pytest

from lib.models.counts import counts_sql, tables_from_rows
from lib.models.naive_bayes import PrivateNaiveBayes, count
from lib.privacy.guarantees import RenyiDP

pytestmark = pytest.mark.spark

N_ROWS = 1_000_000
CLASSES = ["<=50K", ">50K"]
#: Adult's names: strings, integer codes, hyphens, and two reserved words of SQL
COLUMNS = {
    "age": list(range(8)),                                  # integer codes (binned ages)
    "workclass": ["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "Federal-gov"],
    "marital-status": ["Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed"],
    "select": list(range(4)),
    "order": list(range(3)),
    "sex": ["Male", "Female"],
    "hours-per-week": list(range(5)),
}
FEATURES = list(COLUMNS)


def _requirements():
    missing = [name for name, ok in (("pyspark", _importable("pyspark")), ("java", shutil.which("java") is not None),
                                     ("duckdb", _importable("duckdb")), ("pyarrow", _importable("pyarrow")))
               if not ok]
    if missing:
        message = f"the Spark counting test needs {', '.join(missing)} (.ci/run installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _rows(n, seed=39):
    """Codes of every column (class-dependent categoricals) and the class codes."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.24).astype(np.int64)
    codes = []
    for k, values in enumerate(COLUMNS.values()):
        profiles = np.random.default_rng([seed, k]).dirichlet(np.ones(len(values)), size=2)
        cdf = np.cumsum(profiles, axis=1)[y]
        u = rng.random(n)
        codes.append(np.minimum((u[:, None] > cdf).sum(axis=1), len(values) - 1))
    return np.column_stack(codes), y


def _write_parquet(path, X, y):
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays, fields = [pa.array(np.arange(len(y), dtype=np.int64))], [pa.field("id", pa.int64())]
    for k, (name, values) in enumerate(COLUMNS.items()):
        if isinstance(values[0], str):
            arrays.append(pa.DictionaryArray.from_arrays(pa.array(X[:, k].astype(np.int32)), pa.array(values))
                          .cast(pa.string()))
            fields.append(pa.field(name, pa.string()))
        else:
            arrays.append(pa.array(X[:, k].astype(np.int32)))
            fields.append(pa.field(name, pa.int32()))
    arrays.append(pa.DictionaryArray.from_arrays(pa.array(y.astype(np.int32)), pa.array(CLASSES)).cast(pa.string()))
    fields.append(pa.field("income", pa.string()))
    pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), str(path), row_group_size=250_000)


@pytest.fixture(scope="module")
def spark():
    _requirements()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)   # the workers run this interpreter (pyarrow, lib)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("dirichlet-counts-test")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_and_duckdb_count_adult_columns_into_one_table_and_one_model(spark, tmp_path):
    import duckdb

    X, y = _rows(N_ROWS)
    path = tmp_path / "adult.parquet"
    _write_parquet(path, X, y)
    categories = list(COLUMNS.values())

    con = duckdb.connect()
    con.read_parquet(path.as_posix()).create_view("adult")
    duck_rows = con.sql(counts_sql("adult", FEATURES, "income", dialect="duckdb")).fetchall()

    spark.read.parquet(path.as_posix()).createOrReplaceTempView("adult")
    query = counts_sql("adult", FEATURES, "income", dialect="spark")
    assert "`marital-status`" in query and "`select`" in query and '"' not in query
    spark_rows = [tuple(r) for r in spark.sql(query).collect()]

    assert sorted(duck_rows) == sorted(spark_rows)            # the same result rows, as text
    want_N, want_Nk = count(X, y, [len(v) for v in categories], 2)
    models = []
    for rows in (duck_rows, spark_rows):
        N, Nk = tables_from_rows(rows, categories, CLASSES)
        np.testing.assert_array_equal(N, want_N)
        for a, b in zip(Nk, want_Nk):
            np.testing.assert_array_equal(a, b)
        models.append(PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 1.0), random_state=2024, categories=categories,
                                        classes=CLASSES).fit_counts(N, Nk))
    duck, sparked = models
    np.testing.assert_array_equal(duck.class_log_prior_, sparked.class_log_prior_)
    for a, b in zip(duck.feature_log_prob_, sparked.feature_log_prob_):
        np.testing.assert_array_equal(a, b)
    assert duck.guarantee_ == sparked.guarantee_

    # scoring inside Spark: the released model travels to the workers (without its seed) and scores
    # each batch of rows there; every 50th row's probability equals the local prediction bit for bit
    model = duck

    def score(batches):
        import pandas as pd

        for frame in batches:
            p = model.predict_proba(frame[FEATURES].to_numpy(dtype=object))
            yield pd.DataFrame({"id": frame["id"].to_numpy(), "p_high": p[:, 1],
                                "prediction": np.asarray(model.classes_)[np.argmax(p, axis=1)]})

    scored = spark.read.parquet(path.as_posix()).mapInPandas(score, "id long, p_high double, prediction string")
    scored = scored.cache()   # scored once on the executors, read by both checks below
    totals = dict(tuple(r) for r in scored.groupBy("prediction").count().collect())
    sample = sorted((r["id"], r["p_high"]) for r in scored.where("id % 50 = 0").collect())
    ids = np.array([i for i, _ in sample])
    labels = np.empty(X.shape, dtype=object)
    for k, values in enumerate(categories):
        labels[:, k] = np.asarray(values, dtype=object)[X[:, k]]
    local = model.predict_proba(labels[ids])[:, 1]
    assert ids.tolist() == list(range(0, N_ROWS, 50))
    np.testing.assert_array_equal(np.array([p for _, p in sample]), local)
    local_all = np.bincount(np.argmax(model.predict_proba(labels), axis=1),
                            minlength=2)
    assert [totals.get(c, 0) for c in CLASSES] == local_all.tolist()
