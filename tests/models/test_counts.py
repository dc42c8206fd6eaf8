"""Counts from any engine (issue 27): the SQL of lib.models.counts in DuckDB equals numpy's count, and the
model released from them equals the model fitted on the rows (the example at 1e5 rows)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lib.privacy.guarantees import RenyiDP
from lib.models.counts import as_text, counts_sql, tables_from_rows
from lib.models.naive_bayes import PrivateNaiveBayes, count

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("duckdb_counts", ROOT / "examples" / "duckdb_counts.py")
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


def test_the_example_at_1e5_rows_equals_the_in_memory_fit(tmp_path):
    pytest.importorskip("duckdb")
    n = 100_000
    path = tmp_path / "t.parquet"
    example.write_parquet(path, n, seed=3, chunk=30_000)        # chunks of uneven size on purpose
    rows = example.count_with_duckdb(path)
    X = np.concatenate([x for x, _ in example.chunks(n, 3, 30_000)]).astype(np.int64)
    y = np.concatenate([y for _, y in example.chunks(n, 3, 30_000)]).astype(np.int64)
    N, Nk = count(X, y, list(example.N_VALUES), 2)
    N2, Nk2 = tables_from_rows(rows, [range(v) for v in example.N_VALUES], example.CLASSES)
    np.testing.assert_array_equal(N, N2)
    for a, b in zip(Nk, Nk2):
        np.testing.assert_array_equal(a, b)
    assert N.sum() == n and (N > 0).all()
    fitted = example.release(rows, epsilon=1.0, random_state=8)
    direct = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=8).fit(
        X, y, n_values=list(example.N_VALUES), n_classes=2)
    np.testing.assert_array_equal(fitted.class_log_prior_, direct.class_log_prior_)
    for a, b in zip(fitted.feature_log_prob_, direct.feature_log_prob_):
        np.testing.assert_array_equal(a, b)
    assert fitted.classes_.tolist() == list(example.CLASSES)


def test_the_data_do_not_depend_on_the_chunk_size():
    a = np.concatenate([x for x, _ in example.chunks(5000, 1, 5000)])
    b = np.concatenate([x for x, _ in example.chunks(5000, 1, 1000)])
    # chunk-wise seeds: the same chunking gives the same table (a different chunking is another table)
    assert a.shape == b.shape == (5000, 4)
    np.testing.assert_array_equal(a, np.concatenate([x for x, _ in example.chunks(5000, 1, 5000)]))


def test_tables_from_rows_refuse_what_the_public_domain_does_not_hold():
    cats, classes = [range(2), ["a", "b", "c"]], ["n", "y"]
    rows = [(0, "n", 0, 2), (0, "y", 1, 3), (1, "n", "a", 2), (1, "y", "c", 3)]
    N, (t0, t1) = tables_from_rows(rows, cats, classes)
    assert N.tolist() == [2, 3] and t1.tolist() == [[2, 0, 0], [0, 0, 3]]   # unseen cells are 0
    text = [(f, str(label), str(value), n) for f, label, value, n in rows]   # what the query's casts return
    assert [t.tolist() for t in tables_from_rows(text, cats, classes)[1]] == [t0.tolist(), t1.tolist()]
    with pytest.raises(ValueError, match="value of attribute 1 is not among"):
        tables_from_rows(rows + [(1, "n", "d", 0)], cats, classes)
    with pytest.raises(ValueError, match="label of attribute 0's rows is not among"):
        tables_from_rows(rows + [(0, "m", 0, 1)], cats, classes)
    with pytest.raises(ValueError, match="appears twice"):
        tables_from_rows(rows + [(0, "n", 0, 1)], cats, classes)
    with pytest.raises(ValueError, match="every row must have every attribute"):
        tables_from_rows(rows[:-1], cats, classes)
    with pytest.raises(ValueError, match="whole number"):
        tables_from_rows([(0, "n", 0, 2.5)] + rows[1:], cats, classes)
    with pytest.raises(ValueError, match="NULLs"):
        tables_from_rows(rows + [(1, "n", None, 4)], cats, classes)
    with pytest.raises(ValueError, match="same text"):
        tables_from_rows(rows, [[1, "1"], ["a", "b", "c"]], classes)


def test_the_sql_is_built_from_quoted_identifiers_in_each_dialect():
    q = counts_sql("my_table", ["a b", "select", "order", "marital-status"], "class")
    assert 'FROM "my_table"' in q and 'CAST("a b" AS TEXT)' in q and q.count("UNION ALL") == 3
    assert 'GROUP BY "class", "select"' in q and 'CAST("marital-status" AS TEXT)' in q
    spark = counts_sql("census.adult", ["marital-status", "order"], "income", dialect="spark")
    assert "FROM `census`.`adult`" in spark and "CAST(`marital-status` AS STRING)" in spark
    assert '"' not in spark and "GROUP BY `income`, `order`" in spark    # no double quotes: string literals there
    assert "`weird name`.`t-1`" in counts_sql(("weird name", "t-1"), ["a"], "y", dialect="bigquery")
    for bad in ["t GROUP BY y, a; DROP TABLE victim; --(", "read_parquet('x.parquet')", "t;", "a..b", "",
                "a.b.c.d", "t -- comment"]:
        with pytest.raises(ValueError, match="relation"):
            counts_sql(bad, ["a"], "y")
    with pytest.raises(TypeError, match="relation"):
        counts_sql(3, ["a"], "y")
    with pytest.raises(ValueError, match="at least one"):
        counts_sql("t", [], "y")
    with pytest.raises(ValueError, match="dialect"):
        counts_sql("t", ["a"], "y", dialect="no-such-sql")
    with pytest.raises(ValueError, match="features"):
        counts_sql("t", "a", "y")


def test_a_column_name_cannot_inject_sql():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER, y VARCHAR)")
    con.execute("CREATE TABLE victim (v INTEGER)")
    con.execute("INSERT INTO t VALUES (0, 'n'), (1, 'y')")
    evil = 'a" FROM t; DROP TABLE victim; --'
    with pytest.raises(duckdb.Error):    # a column of that name does not exist: nothing else runs
        con.sql(counts_sql("t", [evil], "y")).fetchall()
    assert con.sql("SELECT count(*) FROM victim").fetchall() == [(0,)]
    injected = "t GROUP BY y, a; DROP TABLE victim; --("
    with pytest.raises(ValueError):
        counts_sql(injected, ["a"], "y")
    assert con.sql("SELECT count(*) FROM victim").fetchall() == [(0,)]


def test_duckdb_counts_adult_columns_of_mixed_types_as_numpy_does():
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("pandas")
    import pandas as pd
    import sqlglot

    rng = np.random.default_rng(4)
    n = 5000
    sex = np.array(["Male", "Female"], dtype=object)
    marital = np.array(["Married-civ-spouse", "Never-married", "Divorced"], dtype=object)
    codes = np.column_stack([rng.integers(2, size=n), rng.integers(3, size=n), rng.integers(4, size=n),
                             rng.integers(5, size=n)])
    y = rng.integers(2, size=n)
    frame = pd.DataFrame({"sex": sex[codes[:, 0]], "marital-status": marital[codes[:, 1]],
                          "select": codes[:, 2].astype(np.int64), "order": codes[:, 3].astype(np.int16) + 17,
                          "income": np.array(["<=50K", ">50K"], dtype=object)[y]})
    con = duckdb.connect()
    con.register("adult rows", frame)
    categories = [list(sex), list(marital), list(range(4)), list(range(17, 22))]
    features = ["sex", "marital-status", "select", "order"]
    rows = con.sql(counts_sql(("adult rows",), features, "income")).fetchall()
    assert all(isinstance(r[1], str) and isinstance(r[2], str) for r in rows)   # one text column in the UNION
    N, Nk = tables_from_rows(rows, categories, ["<=50K", ">50K"])
    want_N, want_Nk = count(codes, y, [2, 3, 4, 5], 2)
    np.testing.assert_array_equal(N, want_N)
    for a, b in zip(Nk, want_Nk):
        np.testing.assert_array_equal(a, b)
    # a parsed relation (a sqlglot Select) is a subquery, not pasted text
    parsed = sqlglot.parse_one('SELECT * FROM "adult rows" WHERE "order" >= 17', read="duckdb")
    assert con.sql(counts_sql(parsed, features, "income")).fetchall() == rows or sorted(
        con.sql(counts_sql(parsed, features, "income")).fetchall()) == sorted(rows)


def test_as_text_is_the_engines_cast():
    duckdb = pytest.importorskip("duckdb")
    values = [3, -2, 2.5, 3.0, "Male", True, False, np.int8(4), np.float64(0.5)]
    cast = duckdb.sql("SELECT " + ", ".join(
        f"CAST({'TRUE' if v is True else 'FALSE' if v is False else repr(str(v)) if isinstance(v, str) else v} AS TEXT)"
        for v in values)).fetchall()[0]
    assert list(cast) == [as_text(v) for v in values]
